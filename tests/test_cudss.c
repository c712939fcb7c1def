/* CNC_CUDSS (NVIDIA's cuDSS on a CUDA GPU) through the public API, against references the test
 * computes itself: dense Cholesky for a symmetric positive definite A with several right-hand
 * sides, dense LU for a nonsymmetric one (and not Aᵀ's solution), and its own residual; the
 * failures (symmetric but not positive definite, device arrays: x unchanged, a clear outcome); the
 * kept factorization; the memory estimate. Where cuDSS cannot run (no CUDA device, no libcudss,
 * a cnc built without its header), a solve must be refused with CNC_ERR_UNSUPPORTED and x
 * unchanged; the rest is then skipped, saying why. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cnc.h"
#include "solve_support.h"
#include "test_support.h"

static CNCstatus solve_cudss(const ts_csr* a, int nrhs, const double* b, double* x) {
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_CUDSS), CNC_OK);
  return cncSolveCSR((CNCuint)a->n, a->row_ptr, (const CNCuint*)a->col, a->val, 0, (CNCuint)nrhs, b,
                     x);
}

/* ---- Where cuDSS cannot run: refused, nothing changed ------------------------------------------
 */
static void test_refused(void** unused) {
  (void)unused;
  assert_int_equal(cncDirectSolverAvailable(CNC_CUDSS), CNC_FALSE);
  ts_csr a = ts_laplacian_2d(5, 5);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 31);
  double* x = (double*)malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; ++i) x[i] = 7.0;
  assert_int_equal(solve_cudss(&a, 1, b, x), CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "cuDSS is not available"));
  assert_true(all_equal(n, x, 7.0));
  /* The parameter itself is valid, and iterative methods still run. */
  CNCint v = 0;
  assert_int_equal(cncGetIntegerv(CNC_SOLVER, &v), CNC_OK);
  assert_int_equal(v, CNC_CUDSS);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_CG), CNC_OK);
  assert_int_equal(cncSolveCSR((CNCuint)a.n, a.row_ptr, (const CNCuint*)a.col, a.val, 0, 1, b, x),
                   CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
  free(b), free(x);
  ts_csr_free(&a);
}

/* ---- SPD: Cholesky on the GPU, three right-hand sides, against dense Cholesky ------------------
 */
static void test_spd(void** unused) {
  (void)unused;
  ts_csr a = ts_laplacian_2d(14, 11);
  const int n = a.n, k = 3;
  double* b = random_vector((size_t)n * k, 11);
  double* x = (double*)calloc((size_t)n * k, sizeof(double));
  double* ref = (double*)malloc(sizeof(double) * (size_t)n);
  double* dense = ts_csr_to_dense(&a);
  assert_int_equal(solve_cudss(&a, k, b, x), CNC_OK);
  stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_int_equal(s.solver_used, CNC_CUDSS);
  assert_int_equal(s.backend_used, CNC_BACKEND_CUDA);
  assert_int_equal(s.iters, 0);
  for (int j = 0; j < k; ++j) {
    assert_int_equal(ts_cholesky_solve(n, dense, b + (size_t)j * n, ref), 0);
    assert_true(ts_rel_diff((size_t)n, x + (size_t)j * n, ref) < 1e-10);
    assert_true(ts_rel_residual(&a, x + (size_t)j * n, b + (size_t)j * n) < 1e-12);
  }
  assert_true(s.true_error <= 1e-12);
  free(b), free(x), free(ref), free(dense);
  ts_csr_free(&a);
}

/* ---- Nonsymmetric: LU on the GPU, against dense LU of A (and unlike Aᵀ's solution) ------------
 */
static void test_nonsymmetric(void** unused) {
  (void)unused;
  ts_csr a = ts_nonsymmetric(90, 5);
  const int n = a.n, k = 2;
  double* b = random_vector((size_t)n * k, 12);
  double* x = (double*)calloc((size_t)n * k, sizeof(double));
  double* ref = (double*)malloc(sizeof(double) * (size_t)n);
  double* reft = (double*)malloc(sizeof(double) * (size_t)n);
  double* dense = ts_csr_to_dense(&a);
  double* dense_t = (double*)malloc(sizeof(double) * (size_t)n * (size_t)n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) dense_t[(size_t)j * n + i] = dense[(size_t)i * n + j];
  assert_int_equal(solve_cudss(&a, k, b, x), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
  for (int j = 0; j < k; ++j) {
    assert_int_equal(ts_lu_solve(n, dense, b + (size_t)j * n, ref), 0);
    assert_int_equal(ts_lu_solve(n, dense_t, b + (size_t)j * n, reft), 0);
    assert_true(ts_rel_diff((size_t)n, x + (size_t)j * n, ref) < 1e-10);
    assert_true(ts_rel_diff((size_t)n, x + (size_t)j * n, reft) > 1e-3);
  }
  free(b), free(x), free(ref), free(reft), free(dense), free(dense_t);
  ts_csr_free(&a);
}

/* ---- Symmetric, not positive definite: no factorization, x unchanged, the reason said ---------
 */
static void test_indefinite(void** unused) {
  (void)unused;
  indefinite_case t = indefinite_case_new(); /* test_direct's CHOLMOD case (solve_support.h) */
  check_indefinite(&t, solve_cudss(&t.a, 1, t.b, t.x));
  /* Device arrays: refused before anything is read. */
  assert_int_equal(cncSolveCSRDevice((CNCuint)t.n, t.a.row_ptr, (const CNCuint*)t.a.col, t.a.val, 0,
                                     1, t.b, t.x),
                   CNC_ERR_UNSUPPORTED);
  assert_true(all_equal(t.n, t.x, 7.0));
  indefinite_case_free(&t);
}

/* ---- The factorization is kept for the same arrays, made anew for changed values ------------- */
static void test_kept(void** unused) {
  (void)unused;
  ts_csr a = ts_laplacian_2d(20, 20);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 21);
  double* x = (double*)calloc(n, sizeof(double));
  assert_int_equal(cncEnable(CNC_KEEP_MATRIX), CNC_OK); /* the default, said */
  assert_int_equal(solve_cudss(&a, 1, b, x), CNC_OK);
  assert_non_null(strstr(choice_reason(), "factored for this matrix"));
  double* b2 = random_vector(n, 22);
  assert_int_equal(solve_cudss(&a, 1, b2, x), CNC_OK);
  assert_non_null(strstr(choice_reason(), "kept factorization"));
  assert_true(ts_rel_residual(&a, x, b2) < 1e-12);
  for (int64_t t = a.row_ptr[0]; t < a.row_ptr[1]; ++t)
    if (a.col[t] == 0) a.val[t] += 1.0; /* still SPD, another solution */
  assert_int_equal(solve_cudss(&a, 1, b2, x), CNC_OK);
  assert_non_null(strstr(choice_reason(), "factored for this matrix"));
  assert_true(ts_rel_residual(&a, x, b2) < 1e-12);
  free(b), free(b2), free(x);
  ts_csr_free(&a);
}

/* ---- cncEstimateMemory counts the factor on the device --------------------------------------- */
static void test_estimate(void** unused) {
  (void)unused;
  CNCint64 host = 0, device = 0;
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_CUDSS), CNC_OK);
  assert_int_equal(cncEstimateMemory(100000, 700000, &host, &device), CNC_OK);
  assert_true(device > 700000 * 12);
  assert_true(host > 0);
}

int main(void) {
  if (cncDirectSolverAvailable(CNC_CUDSS) != CNC_TRUE) {
    char why[512];
    snprintf(why, sizeof why, "%s", cncGetLastErrorMessage());
    /* The refusal is checked everywhere; the message says why cuDSS is missing here. */
    const struct CMUnitTest refused[] = {
        cmocka_unit_test_setup_teardown(test_refused, ts_setup_context, ts_teardown_context),
    };
    const int failed = cmocka_run_group_tests(refused, NULL, NULL);
    if (failed) return failed;
    printf("skipped: cuDSS cannot run here, its solves are not tested (%s)\n", why);
    return TS_SKIP;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_spd, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_nonsymmetric, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_indefinite, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_kept, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_estimate, ts_setup_context, ts_teardown_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
