/* Honest numerics at the edges of double: systems scaled by 1e-170 ... 1e+160 (whose squared
 * norms leave double's range) are solved, not reported "converged" at x = 0 or "not finite"; a
 * subnormal diagonal entry is counted and preconditioned with 1, not turned into Inf; a stop on an
 * indefinite matrix leaves the last iterate, which an independent CG in this file reproduces.
 * References: the known solution x* (b = A x* computed here) and the test's own CG. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h> /* after the headers it needs */

#include "cnc.h"
#include "test_support.h"

/* max |x - y| / max |y|, immune to the magnitudes (no squares). */
static double max_rel(size_t n, const double* x, const double* y) {
  double d = 0, m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = fabs(x[i] - y[i]);
    if (!(e <= d)) d = e; /* NaN propagates */
    if (fabs(y[i]) > m) m = fabs(y[i]);
  }
  return d / m;
}

typedef struct {
  CNCint reason, iters, zero_diag;
  double error;
} outcome;

/* cncSolveCSR of (a scaled by `s`) x = b in a fresh context; x in/out. */
static outcome solve_csr(const ts_csr* a, double s, const double* b, double* x, int nsys,
                         CNCenum precond, double threshold) {
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, threshold), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 20000), CNC_OK);
  if (precond) assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, (CNCint)precond), CNC_OK);
  const int64_t nnz = a->row_ptr[a->n];
  double* v = malloc(sizeof(double) * (size_t)nnz);
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)nnz);
  assert_non_null(v);
  assert_non_null(col);
  for (int64_t e = 0; e < nnz; ++e) v[e] = s * a->val[e], col[e] = (CNCuint)a->col[e];
  const CNCstatus st = cncSolveCSR((CNCuint)a->n, a->row_ptr, col, v, 0, (CNCuint)nsys, b, x);
  if (st != CNC_OK) fail_msg("cncSolveCSR: %s", cncGetErrorMessage());
  outcome o;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &o.reason), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &o.iters), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_ZERO_DIAGONALS, &o.zero_diag), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_ERROR, &o.error), CNC_OK);
  cncDeleteContext(c);
  free(v);
  free(col);
  return o;
}

/* x* with entries of magnitude ~xs, and b = (s A) x* computed as s (A x*). */
static void make_problem(const ts_csr* a, double s, double xs, double* xstar, double* b) {
  ts_rng r;
  ts_rng_seed(&r, 7);
  for (int32_t i = 0; i < a->n; ++i) xstar[i] = xs * (0.5 + ts_rng_uniform(&r));
  ts_csr_spmv(a, xstar, b);
  for (int32_t i = 0; i < a->n; ++i) b[i] *= s;
}

static void check_scaled(int32_t m, double s, double xs) {
  ts_csr a = ts_laplacian_2d(m, m);
  const size_t n = (size_t)a.n;
  double* xstar = malloc(sizeof(double) * n);
  double* b = malloc(sizeof(double) * n);
  double* x = calloc(n, sizeof(double));
  assert_non_null(xstar);
  assert_non_null(b);
  assert_non_null(x);
  make_problem(&a, s, xs, xstar, b);
  const outcome o = solve_csr(&a, s, b, x, 1, 0, 1e-10);
  if (o.reason != CNC_REASON_CONVERGED || !(max_rel(n, x, xstar) < 1e-7) || o.iters == 0)
    fail_msg(
        "A scaled by %g, x* ~ %g (n=%zu): reason 0x%x after %d iterations, error %g, "
        "max |x - x*| / max |x*| = %g",
        s, xs, n, (unsigned)o.reason, o.iters, o.error, max_rel(n, x, xstar));
  free(xstar);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* A and b tiny or huge together (x* ~ 1): b's squared norm under- or overflows. */
static void test_scaled_matrix(void** state) {
  (void)state;
  const double scales[] = {1e-170, 1e-160, 1e-100, 1.0, 1e100, 1e160, 1e200};
  for (size_t k = 0; k < sizeof scales / sizeof scales[0]; ++k) check_scaled(20, scales[k], 1.0);
  /* Large enough for a GPU backend where one is present (AUTO). */
  check_scaled(128, 1e-170, 1.0);
  check_scaled(128, 1e160, 1.0);
}

/* A of magnitude 1 with a tiny or huge solution (b ~ x*). */
static void test_extreme_right_hand_side(void** state) {
  (void)state;
  const double xs[] = {1e-300, 1e-200, 1e-160, 1e160, 1e250, 1e300};
  for (size_t k = 0; k < sizeof xs / sizeof xs[0]; ++k) check_scaled(20, 1.0, xs[k]);
}

/* Two systems, one normal and one tiny: each solved to its own threshold. */
static void test_mixed_systems(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(16, 16);
  const size_t n = (size_t)a.n;
  double* xstar = malloc(sizeof(double) * 2 * n);
  double* b = malloc(sizeof(double) * 2 * n);
  double* x = calloc(2 * n, sizeof(double));
  assert_non_null(xstar);
  assert_non_null(b);
  assert_non_null(x);
  make_problem(&a, 1.0, 1.0, xstar, b);
  make_problem(&a, 1.0, 1e-250, xstar + n, b + n);
  const outcome o = solve_csr(&a, 1.0, b, x, 2, 0, 1e-10);
  assert_int_equal(o.reason, CNC_REASON_CONVERGED);
  assert_true(max_rel(n, x, xstar) < 1e-7);
  assert_true(max_rel(n, x + n, xstar + n) < 1e-7);
  free(xstar);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* A diagonal entry 1e-310 (subnormal: 1/a_ii is Inf): Jacobi uses 1 there, counted; the solve
 * converges instead of ending "not finite" at iteration 0. */
static void test_subnormal_diagonal(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(12, 12);
  const size_t n = (size_t)a.n;
  /* Row and column 0 decoupled, diagonal 1e-310: x_0 = b_0 / 1e-310. */
  for (int64_t e = a.row_ptr[0]; e < a.row_ptr[1]; ++e) a.val[e] = a.col[e] == 0 ? 1e-310 : 0.0;
  for (int32_t i = 1; i < a.n; ++i)
    for (int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
      if (a.col[e] == 0) a.val[e] = 0.0;
  double* b = malloc(sizeof(double) * n);
  double* x = calloc(n, sizeof(double));
  assert_non_null(b);
  assert_non_null(x);
  for (size_t i = 0; i < n; ++i) b[i] = 1.0;
  b[0] = 0.0;
  const outcome o = solve_csr(&a, 1.0, b, x, 1, 0, 1e-10);
  assert_int_equal(o.zero_diag, 1);
  if (o.reason != CNC_REASON_CONVERGED)
    fail_msg("reason 0x%x after %d iterations", (unsigned)o.reason, o.iters);
  assert_true(ts_rel_residual(&a, x, b) < 1e-9);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* The test's own CG (no preconditioner), stopping as cnc.h says: at the first pᵀAp <= 0, with x
 * the last iterate. Returns the iterations done. */
static int reference_cg(const ts_csr* a, const double* b, double* x, int max_iter) {
  const size_t n = (size_t)a->n;
  double* r = malloc(sizeof(double) * n);
  double* p = malloc(sizeof(double) * n);
  double* q = malloc(sizeof(double) * n);
  assert_non_null(r);
  assert_non_null(p);
  assert_non_null(q);
  memset(x, 0, sizeof(double) * n);
  memcpy(r, b, sizeof(double) * n);
  memcpy(p, b, sizeof(double) * n);
  double rr = 0;
  for (size_t i = 0; i < n; ++i) rr += r[i] * r[i];
  int it = 0;
  for (; it < max_iter; ++it) {
    ts_csr_spmv(a, p, q);
    double pq = 0;
    for (size_t i = 0; i < n; ++i) pq += p[i] * q[i];
    if (!(pq > 0)) break;
    const double alpha = rr / pq;
    double rr1 = 0;
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr1 += r[i] * r[i];
    }
    for (size_t i = 0; i < n; ++i) p[i] = r[i] + rr1 / rr * p[i];
    rr = rr1;
  }
  free(r);
  free(p);
  free(q);
  return it;
}

/* A symmetric indefinite matrix (1D Laplacian shifted by -0.5): cnc stops at the first pᵀAp <= 0
 * and leaves the last iterate, the reference CG's after the same number of iterations. */
static void test_indefinite_keeps_last_iterate(void** state) {
  (void)state;
  const int32_t n = 60;
  int32_t* ri = malloc(sizeof(int32_t) * 3 * (size_t)n);
  int32_t* ci = malloc(sizeof(int32_t) * 3 * (size_t)n);
  double* vi = malloc(sizeof(double) * 3 * (size_t)n);
  assert_non_null(ri);
  assert_non_null(ci);
  assert_non_null(vi);
  int64_t nnz = 0;
  for (int32_t i = 0; i < n; ++i) {
    ri[nnz] = i, ci[nnz] = i, vi[nnz++] = 2.0 - 0.5;
    if (i > 0) ri[nnz] = i, ci[nnz] = i - 1, vi[nnz++] = -1.0;
    if (i + 1 < n) ri[nnz] = i, ci[nnz] = i + 1, vi[nnz++] = -1.0;
  }
  ts_csr a = ts_csr_from_coo(n, nnz, ri, ci, vi);
  double* b = malloc(sizeof(double) * (size_t)n);
  double* x = calloc((size_t)n, sizeof(double));
  double* xr = malloc(sizeof(double) * (size_t)n);
  assert_non_null(b);
  assert_non_null(x);
  assert_non_null(xr);
  ts_rng r;
  ts_rng_seed(&r, 11);
  for (int32_t i = 0; i < n; ++i) b[i] = ts_rng_uniform(&r) - 0.25;
  const outcome o = solve_csr(&a, 1.0, b, x, 1, CNC_PRECOND_NONE, 1e-12);
  assert_int_equal(o.reason, CNC_REASON_INDEFINITE_MATRIX);
  assert_true(o.iters > 0);
  const int it = reference_cg(&a, b, xr, 1000);
  assert_int_equal(it, o.iters);
  if (!(max_rel((size_t)n, x, xr) < 1e-9))
    fail_msg("x differs from the last iterate by %g (relative)", max_rel((size_t)n, x, xr));
  free(ri);
  free(ci);
  free(vi);
  free(b);
  free(x);
  free(xr);
  ts_csr_free(&a);
}

/* b near 1e308 with A = diag(0.5): the solution (2e308) does not fit in double. Every method
 * must end "not finite", not "converged" with x = Inf. */
static void test_solution_overflow_not_converged(void** state) {
  (void)state;
  const CNCint64 rp[3] = {0, 1, 2};
  const CNCuint ci[2] = {0, 1};
  const double v[2] = {0.5, 0.5}, b[2] = {1e308, 1e308};
  const CNCenum solvers[] = {CNC_CG, CNC_BICGSTAB, CNC_GMRES};
  for (size_t s = 0; s < sizeof solvers / sizeof solvers[0]; ++s) {
    double x[2] = {0, 0};
    CNCcontext c = cncNewContext();
    assert_non_null(c);
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)solvers[s]), CNC_OK);
    assert_int_equal(cncSolveCSR(2, rp, ci, v, 0, 1, b, x), CNC_OK);
    CNCint reason = 0;
    assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
    if (reason == CNC_REASON_CONVERGED)
      fail_msg("solver 0x%x: converged with x = (%g, %g)", (unsigned)solvers[s], x[0], x[1]);
    assert_int_equal(reason, CNC_REASON_NOT_FINITE);
    cncDeleteContext(c);
  }
}

static char g_log[2048];
static void keep_log(int level, const char* message, void* user) {
  (void)user;
  if (level == CNC_LOG_WARNING && strlen(g_log) + strlen(message) + 2 < sizeof g_log) {
    strcat(g_log, message);
    strcat(g_log, "\n");
  }
}

/* Entries (or right-hand sides) whose sum overflows: the solve ends "not finite" and the log says
 * where and why. */
static void check_overflow(int in_matrix) {
  g_log[0] = 0;
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSetLogCallback(keep_log, NULL), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 3), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (CNCuint i = 0; i < 3; ++i) {
    assert_int_equal(cncAddIJCoefficient(i, i, 2.0), CNC_OK);
    assert_int_equal(cncAddIRightHandSide(i, 1.0), CNC_OK);
  }
  for (int twice = 0; twice < 2; ++twice) {
    if (in_matrix)
      assert_int_equal(cncAddIJCoefficient(1, 1, 1.5e308), CNC_OK); /* each one finite */
    else
      assert_int_equal(cncAddIRightHandSide(2, 1.5e308), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_NOT_FINITE);
  const char* want = in_matrix ? "at row 1, column 1" : "right-hand side 0 holds inf at row 2";
  if (!strstr(g_log, want) || !strstr(g_log, "overflowed"))
    fail_msg("the log does not say \"%s\": %s", want, g_log);
  cncDeleteContext(c);
}

static void test_assembly_overflow_explained(void** state) {
  (void)state;
  check_overflow(1);
  check_overflow(0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scaled_matrix),
      cmocka_unit_test(test_extreme_right_hand_side),
      cmocka_unit_test(test_mixed_systems),
      cmocka_unit_test(test_subnormal_diagonal),
      cmocka_unit_test(test_indefinite_keeps_last_iterate),
      cmocka_unit_test(test_assembly_overflow_explained),
      cmocka_unit_test(test_solution_overflow_not_converged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
