/* The numerical outcomes of BiCGSTAB and GMRES: breakdown (and BiCGSTAB's restart on an exact
 * rho breakdown), not finite, max iterations, stopped by the progress callback, b = 0; and one
 * matrix kept across CG, BiCGSTAB and GMRES by cncSolveCSR, each answer right. */
/* cmocka.h needs the standard headers first. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "cnc.h"
#include "nonsymmetric_support.h"
#include "test_support.h"

/* ---- Numerical outcomes ---------------------------------------------------------------------- */
static ts_csr dense_csr(int32_t n, const double* d) {
  coo t = {0};
  for (int32_t i = 0; i < n; ++i)
    for (int32_t j = 0; j < n; ++j)
      if (d[i * n + j] != 0.0) coo_add(&t, i, j, d[i * n + j]);
  return coo_to_csr(n, &t);
}

static void test_breakdown(void** state) {
  (void)state;
  /* The permutation [[0,1],[1,0]] with b = e1: (r̂, A p) = 0 at the first step of BiCGSTAB. */
  const double perm[4] = {0, 1, 1, 0};
  ts_csr a = dense_csr(2, perm);
  const double b[2] = {1, 0};
  double x[2];
  opts o = {CNC_BICGSTAB, 0, CNC_BACKEND_CPU, 0, 0, 0, 0, 0, 0, 0};
  stats s = solve_with(&a, b, 1, &o, x);
  assert_int_equal(s.reason, CNC_REASON_BREAKDOWN);
  /* GMRES has no such breakdown: it solves it (x = e2). */
  o.solver = CNC_GMRES;
  s = solve_with(&a, b, 1, &o, x);
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_true(fabs(x[0]) < 1e-12 && fabs(x[1] - 1.0) < 1e-12);
  ts_csr_free(&a);
  /* A nonsingular 3x3 system where BiCGSTAB's second rho = (r^, r1) is exactly 0 with r1 != 0:
   * restarted from x (r^ = r1), it converges instead of reporting a breakdown. */
  const double lucky[9] = {3, 0, 0, -1, 3, 2, 0, 1, 2};
  ts_csr l3 = dense_csr(3, lucky);
  const double e1[3] = {1, 0, 0};
  double x3[3];
  o.solver = CNC_BICGSTAB;
  o.threshold = 1e-12;
  s = solve_with(&l3, e1, 1, &o, x3);
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  /* x = A^-1 e1 = (1/3, 1/6, -1/12) */
  assert_true(fabs(x3[0] - 1.0 / 3) < 1e-12 && fabs(x3[1] - 1.0 / 6) < 1e-12 &&
              fabs(x3[2] + 1.0 / 12) < 1e-12);
  ts_csr_free(&l3);
  o.threshold = 0;
  /* A singular on the Krylov space: A e1 = 0, b = e1. Both solvers report a breakdown. */
  const double sing[4] = {0, 0, 0, 1};
  a = dense_csr(2, sing);
  for (int k = 0; k < 2; ++k) {
    o.solver = solvers[k];
    s = solve_with(&a, b, 1, &o, x);
    assert_int_equal(s.reason, CNC_REASON_BREAKDOWN);
    CNCcontext c = cncNewContext();
    cncMakeCurrent(c);
    apply_opts(&o);
    assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
    const char* name = NULL;
    assert_int_equal(cncGetString(CNC_REASON_NAME, &name), CNC_OK);
    assert_string_equal(name, "breakdown");
    cncDeleteContext(c);
  }
  ts_csr_free(&a);
}

static void test_not_finite(void** state) {
  (void)state;
  /* Entries of 1e200 without preconditioner: |A p|² overflows to infinity. */
  const double big[4] = {1e200, 1e200, -1e200, 1e200};
  ts_csr a = dense_csr(2, big);
  const double b[2] = {1, 1};
  double x[2];
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, CNC_PRECOND_NONE, 0, 0, 0, 0, 0, 0};
    stats s = solve_with(&a, b, 1, &o, x);
    assert_int_equal(s.reason, CNC_REASON_NOT_FINITE);
  }
  ts_csr_free(&a);
  /* A singular A whose columns 2, 4 and 5 are empty (found by fuzz_solve_csr): BiCGSTAB with SSOR
   * brings b - A x under the threshold while x runs off to Inf and NaN where A does not see it.
   * Not "converged": NOT_FINITE, with a warning. */
  const CNCint64 rp[7] = {0, 2, 3, 6, 8, 9, 9};
  const CNCuint col[9] = {3, 1, 0, 0, 0, 0, 0, 0, 1};
  const double val[9] = {-3, 6, 1, -2, 2, -8, -8, -8, -8};
  const double b6[6] = {-3, -1, -4, -2, 3, 1};
  double x6[6] = {0};
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_THREADS, 1), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_BICGSTAB), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_SSOR), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_SSOR_OMEGA, 0.4), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 0.5), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 981), CNC_OK);
  assert_int_equal(cncSolveCSR(6, rp, col, val, 0, 1, b6, x6), CNC_OK);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  int finite = 1;
  for (int i = 0; i < 6; ++i) finite = finite && isfinite(x6[i]);
  printf("singular A, BiCGSTAB + SSOR: reason 0x%x, x %s\n", (unsigned)reason,
         finite ? "finite" : "not finite");
  assert_false(finite); /* the case this covers */
  assert_int_equal(reason, CNC_REASON_NOT_FINITE);
  cncDeleteContext(c);
}

static int stop_at_two(CNCint iteration, double residual, void* user) {
  (void)residual;
  ++*(int*)user;
  return iteration >= 2;
}

static void test_limits_and_stop(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 30, 0.45);
  double* b = random_vector((size_t)a.n, 61);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, 0, 1e-10, 3, 0, 0, 0, 0};
    stats s = solve_with(&a, b, 1, &o, x);
    assert_int_equal(s.reason, CNC_REASON_MAX_ITERATIONS);
    assert_int_equal(s.iters, 3);
    assert_true(s.true_error < 1.0); /* progress was kept */
    assert_true(fabs(s.true_error - ts_rel_residual(&a, x, b)) <= 1e-10);

    CNCcontext c = cncNewContext();
    cncMakeCurrent(c);
    o.max_iter = 0;
    apply_opts(&o);
    int calls = 0;
    assert_int_equal(cncSetProgressCallback(stop_at_two, &calls), CNC_OK);
    assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
    s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_STOPPED);
    assert_int_equal(s.iters, 2);
    assert_int_equal(calls, 3); /* iterations 0, 1, 2 */
    assert_true(ts_rel_residual(&a, x, b) < 1.0);
    cncDeleteContext(c);
  }
  free(b), free(x);
  ts_csr_free(&a);
}

/* One cncSolveCSR context, one matrix, the method changed between calls: the prepared matrix is
 * kept across CG, BiCGSTAB and GMRES (the methods share the device system; each sets its own
 * mask), and each answer is right. */
static int kept_logs;
static void count_kept(int level, const char* message, void* user) {
  (void)level, (void)user;
  if (strstr(message, "already holds this matrix")) ++kept_logs;
}

static void test_methods_share_the_kept_matrix(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(12, 12);
  double* b = random_vector((size_t)a.n * 2, 91);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n * 2);
  CNCuint* col = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)a.nnz);
  for (int64_t t = 0; t < a.nnz; ++t) col[t] = (CNCuint)a.col[t];
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncSetLogCallback(count_kept, NULL), CNC_OK);
  kept_logs = 0;
  const CNCenum order[4] = {CNC_GMRES, CNC_CG, CNC_BICGSTAB, CNC_GMRES};
  for (int m = 0; m < 4; ++m) {
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)order[m]), CNC_OK);
    memset(x, 0, sizeof(double) * (size_t)a.n * 2);
    assert_int_equal(cncSolveCSR((CNCuint)a.n, a.row_ptr, col, a.val, 0, 2, b, x), CNC_OK);
    stats s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    for (int k = 0; k < 2; ++k)
      assert_true(ts_rel_residual(&a, x + (size_t)k * a.n, b + (size_t)k * a.n) <= 2e-10);
  }
  assert_int_equal(kept_logs, 3);
  cncDeleteContext(c);
  free(col), free(b), free(x);
  ts_csr_free(&a);
}

static void test_zero_rhs(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 10, 0.45);
  const int nsys = 2;
  double* b = random_vector((size_t)a.n * nsys, 71);
  memset(b, 0, sizeof(double) * (size_t)a.n); /* system 0: b = 0 */
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, 0, 1e-10, 0, 0, 0, 1, 0};
    stats s = solve_with(&a, b, nsys, &o, x);
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    for (int i = 0; i < a.n; ++i) assert_true(x[i] == 0.0);
    assert_true(ts_rel_residual(&a, x + a.n, b + a.n) <= 2e-10);
    memset(b + a.n, 0, sizeof(double) * (size_t)a.n); /* now both zero */
    s = solve_with(&a, b, nsys, &o, x);
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    assert_int_equal(s.iters, 0);
    for (int i = 0; i < a.n * nsys; ++i) assert_true(x[i] == 0.0);
    free(b);
    b = random_vector((size_t)a.n * nsys, 72);
    memset(b, 0, sizeof(double) * (size_t)a.n);
  }
  free(b), free(x);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_breakdown),
      cmocka_unit_test(test_not_finite),
      cmocka_unit_test(test_limits_and_stop),
      cmocka_unit_test(test_zero_rhs),
      cmocka_unit_test(test_methods_share_the_kept_matrix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
