/* Block CG (CNC_BLOCK_CG) through the public API: k right-hand sides of Poisson problems checked
 * against dense Cholesky solves (k = 1, 4, 8), linearly dependent right-hand sides, systems that
 * converge at different iterations (b = 0, b an eigenvector), fewer iterations than CG with
 * k = 8, per-system statistics (cncGetSystemIntegerv / Doublev), locked variables, the matrix
 * operator path, and the parameters it refuses. On the CPU backend, and on OpenCL and CUDA when
 * present (skipped otherwise). */
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
#include "solve_support.h"
#include "test_support.h"

static const double pi = 3.14159265358979323846;

/* Solves with cncSolveCSR on `backend` in the current context; returns the status. */
static CNCstatus solve_csr(const ts_csr* a, CNCenum solver, CNCenum backend, int k, double thr,
                           const double* b, double* x) {
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)solver), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)backend), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, thr), CNC_OK);
  return cncSolveCSR((CNCuint)a->n, a->row_ptr, (const CNCuint*)a->col, a->val, 0, (CNCuint)k, b,
                     x);
}

/* Column j of x against the dense Cholesky solution, and each system's statistics. */
static void check_columns(const ts_csr* a, int k, const double* b, const double* x, double thr,
                          double tol, const char* what) {
  double* dense = ts_csr_to_dense(a);
  double* refs = malloc(sizeof(double) * (size_t)a->n * (size_t)k);
  assert_int_equal(ts_cholesky_solve_many(a->n, dense, k, b, refs), 0);
  for (int j = 0; j < k; ++j) {
    const double* bj = b + (size_t)j * a->n;
    const double* xj = x + (size_t)j * a->n;
    const double* ref = refs + (size_t)j * a->n;
    const double bn = ts_norm2((size_t)a->n, bj);
    CNCint reason = 0, iters = -1;
    double true_error = -1;
    assert_int_equal(cncGetSystemIntegerv((CNCuint)j, CNC_REASON, &reason), CNC_OK);
    assert_int_equal(cncGetSystemIntegerv((CNCuint)j, CNC_USED_ITERATIONS, &iters), CNC_OK);
    assert_int_equal(cncGetSystemDoublev((CNCuint)j, CNC_TRUE_ERROR, &true_error), CNC_OK);
    if (reason != CNC_REASON_CONVERGED) fail_msg("%s: system %d reason 0x%x", what, j, reason);
    if (bn == 0) {
      for (int32_t i = 0; i < a->n; ++i) assert_true(xj[i] == 0.0);
      assert_int_equal(iters, 0);
      continue;
    }
    const double d = ts_rel_diff((size_t)a->n, xj, ref);
    const double res = ts_rel_residual(a, xj, bj);
    if (d > tol || res > 2 * thr || fabs(true_error - res) > 1e-3 * res + 1e-15)
      fail_msg("%s: system %d: distance %.3e, residual %.3e (reported %.3e)", what, j, d, res,
               true_error);
  }
  free(refs);
  free(dense);
}

static void check_backend_solves(CNCenum backend, const char* name) {
  ts_csr a = ts_laplacian_2d(18, 17);
  const int ks[] = {1, 4, 8};
  for (int t = 0; t < 3; ++t) {
    const int k = ks[t];
    double* b = random_vector((size_t)a.n * k, 11 + (uint64_t)k);
    double* x = calloc((size_t)a.n * k, sizeof(double));
    assert_int_equal(solve_csr(&a, CNC_BLOCK_CG, backend, k, 1e-10, b, x), CNC_OK);
    const stats s = read_stats();
    assert_int_equal(s.solver_used, CNC_BLOCK_CG);
    assert_int_equal(s.backend_used, (CNCint)backend);
    char what[64];
    snprintf(what, sizeof what, "%s, k = %d", name, k);
    check_columns(&a, k, b, x, 1e-10, 1e-7, what);
    free(b);
    free(x);
  }
  ts_csr_free(&a);
}

static void poisson_against_cholesky_cpu(void** state) {
  (void)state;
  check_backend_solves(CNC_BACKEND_CPU, "cpu");
}

/* OpenCL and CUDA when present: the same checks (skipped without either). */
static void poisson_against_cholesky_gpu(void** state) {
  (void)state;
  int ran = 0;
  if (backend_present(CNC_BACKEND_OPENCL)) {
    check_backend_solves(CNC_BACKEND_OPENCL, "opencl");
    ran = 1;
  }
  if (backend_present(CNC_BACKEND_CUDA)) {
    check_backend_solves(CNC_BACKEND_CUDA, "cuda");
    ran = 1;
  }
  if (!ran) skip();
}

/* Single and mixed precision (float vectors, resp. float matrix values): the recursive residual
 * is checked against the double true residual (restarts), every system converges. */
static void reduced_precisions(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(20, 18);
  const int k = 4;
  double* b = random_vector((size_t)a.n * k, 17);
  b[(size_t)a.n * 3 + 5] += 1.0;
  const CNCenum precisions[] = {CNC_SINGLE, CNC_MIXED};
  for (int p = 0; p < 2; ++p) {
    double* x = calloc((size_t)a.n * k, sizeof(double));
    assert_int_equal(cncSolverParameteri(CNC_PRECISION, (CNCint)precisions[p]), CNC_OK);
    assert_int_equal(solve_csr(&a, CNC_BLOCK_CG, CNC_BACKEND_CPU, k, 1e-6, b, x), CNC_OK);
    check_columns(&a, k, b, x, 1e-6, 1e-4, p == 0 ? "single" : "mixed");
    free(x);
  }
  free(b);
  ts_csr_free(&a);
}

/* b1 = 2 b0, b3 = b0 + b2, b4 = b1 - b3 (= b0 - b2): the block has rank 2 of 5. */
static void dependent_right_hand_sides(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(16, 16);
  const size_t n = (size_t)a.n;
  const int k = 5;
  double* b = random_vector(n * k, 5);
  for (size_t i = 0; i < n; ++i) {
    b[n + i] = 2 * b[i];
    b[3 * n + i] = b[i] + b[2 * n + i];
    b[4 * n + i] = b[n + i] - b[3 * n + i];
  }
  const CNCenum precond[] = {CNC_PRECOND_JACOBI, CNC_PRECOND_NONE};
  for (int p = 0; p < 2; ++p) {
    double* x = calloc(n * k, sizeof(double));
    assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, (CNCint)precond[p]), CNC_OK);
    assert_int_equal(solve_csr(&a, CNC_BLOCK_CG, CNC_BACKEND_CPU, k, 1e-10, b, x), CNC_OK);
    check_columns(&a, k, b, x, 1e-10, 1e-7, "dependent");
    free(x);
  }
  free(b);
  ts_csr_free(&a);
}

/* b0 = 0 (converged before the first iteration), b1 an eigenvector of the 2D Laplacian (one
 * iteration), b2 random: each stops at its own iteration, the others go on. */
static void systems_converge_at_different_iterations(void** state) {
  (void)state;
  const int32_t nx = 20, ny = 20;
  ts_csr a = ts_laplacian_2d(nx, ny);
  const size_t n = (size_t)a.n;
  const int k = 3;
  double* b = random_vector(n * k, 7);
  for (size_t i = 0; i < n; ++i) b[i] = 0.0;
  for (int32_t iy = 0; iy < ny; ++iy)
    for (int32_t ix = 0; ix < nx; ++ix)
      b[n + (size_t)iy * nx + (size_t)ix] =
          sin(pi * 2 * (ix + 1) / (nx + 1)) * sin(pi * 3 * (iy + 1) / (ny + 1));
  double* x = calloc(n * k, sizeof(double));
  assert_int_equal(solve_csr(&a, CNC_BLOCK_CG, CNC_BACKEND_CPU, k, 1e-10, b, x), CNC_OK);
  check_columns(&a, k, b, x, 1e-10, 1e-7, "different iterations");
  CNCint it[3], total = 0;
  for (int j = 0; j < k; ++j)
    assert_int_equal(cncGetSystemIntegerv((CNCuint)j, CNC_USED_ITERATIONS, &it[j]), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &total), CNC_OK);
  print_message("iterations per system: %d %d %d (solve %d)\n", it[0], it[1], it[2], total);
  assert_int_equal(it[0], 0);
  assert_in_range(it[1], 1, 2);
  assert_true(it[2] > it[1] + 5);
  assert_int_equal(total, it[2]);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* 3D Poisson, k = 8 random right-hand sides: the shared Krylov space takes clearly fewer
 * iterations than CG on each (lock-step CNC_CG with the same k). */
static void fewer_iterations_than_cg(void** state) {
  (void)state;
  ts_csr a = ts_poisson_3d(16);
  const size_t n = (size_t)a.n;
  const int k = 8;
  double* b = random_vector(n * k, 3);
  double* x = calloc(n * k, sizeof(double));
  assert_int_equal(solve_csr(&a, CNC_CG, CNC_BACKEND_CPU, k, 1e-8, b, x), CNC_OK);
  const stats cg = read_stats();
  assert_int_equal(cg.reason, CNC_REASON_CONVERGED);
  memset(x, 0, sizeof(double) * n * k);
  assert_int_equal(solve_csr(&a, CNC_BLOCK_CG, CNC_BACKEND_CPU, k, 1e-8, b, x), CNC_OK);
  const stats bl = read_stats();
  check_columns(&a, k, b, x, 1e-8, 1e-5, "3D Poisson k = 8");
  print_message("3D Poisson 16^3, k = 8: CG %d iterations, block CG %d\n", cg.iters, bl.iters);
  assert_true(bl.iters <= 0.8 * cg.iters);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* cncSolve with locked variables and 3 systems: the same answer as lock-step CG. */
static void locked_variables(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(12, 12);
  const int32_t n = a.n;
  const int k = 3;
  double* b = random_vector((size_t)n * k, 9);
  double* ref = calloc((size_t)n * k, sizeof(double));
  double* x = calloc((size_t)n * k, sizeof(double));
  const CNCenum solvers[] = {CNC_CG, CNC_BLOCK_CG};
  for (int t = 0; t < 2; ++t) {
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_NB_SYSTEMS, k), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)solvers[t]), CNC_OK);
    assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-11), CNC_OK);
    assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
    for (int32_t i = 0; i < n; i += 7) {
      for (int s = 0; s < k; ++s)
        assert_int_equal(cncMultiSetVariable((CNCuint)i, (CNCuint)s, 0.5 + s + 0.01 * i), CNC_OK);
      assert_int_equal(cncLockVariable((CNCuint)i), CNC_OK);
    }
    assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
    for (int32_t i = 0; i < n; ++i)
      for (int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
        assert_int_equal(cncAddIJCoefficient((CNCuint)i, (CNCuint)a.col[e], a.val[e]), CNC_OK);
    for (int s = 0; s < k; ++s)
      for (int32_t i = 0; i < n; ++i)
        assert_int_equal(
            cncMultiAddIRightHandSide((CNCuint)i, (CNCuint)s, b[(size_t)s * (size_t)n + (size_t)i]),
            CNC_OK);
    assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSolve(), CNC_OK);
    CNCint used = 0, reason = 0;
    assert_int_equal(cncGetIntegerv(CNC_SOLVER_USED, &used), CNC_OK);
    assert_int_equal(used, (CNCint)solvers[t]);
    assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
    assert_int_equal(reason, CNC_REASON_CONVERGED);
    assert_int_equal(ts_read_x(n, k, t == 0 ? ref : x), CNC_OK);
    cncDeleteContext(c);
  }
  for (int s = 0; s < k; ++s) {
    const double d = ts_rel_diff((size_t)n, x + (size_t)s * n, ref + (size_t)s * n);
    if (d > 1e-8) fail_msg("system %d: block CG and CG differ by %.3e", s, d);
    for (int32_t i = 0; i < n; i += 7) assert_true(x[(size_t)s * n + i] == 0.5 + s + 0.01 * i);
  }
  free(b);
  free(ref);
  free(x);
  ts_csr_free(&a);
}

static const ts_csr* op_matrix;
static int apply_matrix(const double* x, double* y, CNCuint n, void* data) {
  (void)n, (void)data;
  ts_csr_spmv(op_matrix, x, y);
  return 0;
}

/* A matrix operator (cncSolveOperator) runs block CG on the host, without preconditioner. */
static void matrix_operator(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(15, 15);
  op_matrix = &a;
  const int k = 4;
  double* b = random_vector((size_t)a.n * k, 13);
  double* x = calloc((size_t)a.n * k, sizeof(double));
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, NULL), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_BLOCK_CG), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncSolveOperator((CNCuint)a.n, (CNCuint)k, b, x), CNC_OK);
  check_columns(&a, k, b, x, 1e-10, 1e-7, "matrix operator");
  const stats s = read_stats();
  assert_int_equal(s.solver_used, CNC_BLOCK_CG);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* Parameters block CG cannot honour: refused with a clear status, x unchanged. */
static void refused(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(8, 8);
  const int k = 2;
  double* b = random_vector((size_t)a.n * k, 1);
  double* x = calloc((size_t)a.n * k, sizeof(double));
  for (size_t i = 0; i < (size_t)a.n * k; ++i) x[i] = 42.0;
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_SSOR), CNC_OK);
  assert_int_equal(solve_csr(&a, CNC_BLOCK_CG, CNC_BACKEND_CPU, k, 1e-8, b, x),
                   CNC_ERR_UNSUPPORTED);
  const char* m = cncGetLastErrorMessage();
  assert_non_null(strstr(m, "CNC_BLOCK_CG"));
  for (size_t i = 0; i < (size_t)a.n * k; ++i) assert_true(x[i] == 42.0);
  cncClearError();
  /* Per-system statistics: an index past the last solve's systems, a wrong name. */
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_JACOBI), CNC_OK);
  assert_int_equal(solve_csr(&a, CNC_BLOCK_CG, CNC_BACKEND_CPU, k, 1e-8, b, x), CNC_OK);
  CNCint v = 0;
  double d = 0;
  assert_int_equal(cncGetSystemIntegerv((CNCuint)k, CNC_REASON, &v), CNC_ERR_INDEX_OUT_OF_RANGE);
  assert_int_equal(cncGetSystemDoublev(0, CNC_REASON, &d), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncGetSystemIntegerv(0, CNC_REASON, NULL), CNC_ERR_NULL_POINTER);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, 0x208), CNC_ERR_INVALID_ENUM);
  cncClearError();
  free(b);
  free(x);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(poisson_against_cholesky_cpu, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(poisson_against_cholesky_gpu, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(dependent_right_hand_sides, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(systems_converge_at_different_iterations, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(fewer_iterations_than_cg, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(reduced_precisions, ts_setup_context, ts_teardown_context),
      cmocka_unit_test(locked_variables),
      cmocka_unit_test_setup_teardown(matrix_operator, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(refused, ts_setup_context, ts_teardown_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
