/* The direct solvers (CNC_CHOLMOD, CNC_SUPERLU) through the public API, against references the
 * test computes itself: dense Cholesky, dense LU with partial pivoting, closed forms (locked
 * variables, a least-squares line), and its own residual. Also the failures (not positive
 * definite, singular, not symmetric, device arrays, a library that does not load: x unchanged),
 * and the kept factorization (a second solve of the same matrix is not factored again: said by
 * CNC_CHOICE_REASON, and a changed matrix is factored anew), and no progress callback call.
 * Run with the argument "unavailable" (CTest sets CNC_CHOLMOD_LIBRARY and CNC_SUPERLU_LIBRARY to
 * a missing file): both solvers must then be refused cleanly. */
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

static CNCstatus solve_csr(const ts_csr* a, CNCenum solver, int nrhs, const double* b, double* x) {
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)solver), CNC_OK);
  return cncSolveCSR((CNCuint)a->n, a->row_ptr, (const CNCuint*)a->col, a->val, 0, (CNCuint)nrhs, b,
                     x);
}

/* ---- Availability and refusals -------------------------------------------------------------- */
static void test_available(void** unused) {
  (void)unused;
  assert_int_equal(cncDirectSolverAvailable(CNC_CHOLMOD), CNC_TRUE);
  assert_int_equal(cncDirectSolverAvailable(CNC_SUPERLU), CNC_TRUE);
  assert_int_equal(cncDirectSolverAvailable(CNC_CG), CNC_FALSE);
  assert_int_equal(cncDirectSolverAvailable(0), CNC_FALSE);
  CNCint v = 0;
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_SUPERLU), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_SOLVER, &v), CNC_OK);
  assert_int_equal(v, CNC_SUPERLU);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_CUDSS + 1), CNC_ERR_INVALID_ENUM);
}

/* The progress callback: never called by a direct solve (cnc.h, CNCprogressCallback). */
static int progress_calls = 0;
static int count_progress(CNCint it, double res, void* data) {
  (void)it, (void)res, (void)data;
  ++progress_calls;
  return 0;
}

/* ---- CHOLMOD: SPD, several right-hand sides, against dense Cholesky -------------------------- */
static void test_cholmod_spd(void** unused) {
  (void)unused;
  progress_calls = 0;
  assert_int_equal(cncSetProgressCallback(count_progress, NULL), CNC_OK);
  ts_csr a = ts_laplacian_2d(12, 10);
  const int n = a.n, k = 3;
  double* b = random_vector((size_t)n * k, 11);
  double* x = (double*)calloc((size_t)n * k, sizeof(double));
  double* ref = (double*)malloc(sizeof(double) * (size_t)n);
  double* dense = ts_csr_to_dense(&a);
  assert_int_equal(solve_csr(&a, CNC_CHOLMOD, k, b, x), CNC_OK);
  stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_int_equal(s.solver_used, CNC_CHOLMOD);
  assert_int_equal(s.iters, 0);
  assert_int_equal(s.backend_used, CNC_BACKEND_CPU);
  double worst = 0;
  for (int j = 0; j < k; ++j) {
    assert_int_equal(ts_cholesky_solve(n, dense, b + (size_t)j * n, ref), 0);
    assert_true(ts_rel_diff((size_t)n, x + (size_t)j * n, ref) < 1e-10);
    const double r = ts_rel_residual(&a, x + (size_t)j * n, b + (size_t)j * n);
    worst = r > worst ? r : worst;
  }
  /* The reported residual is the true one (within rounding of two computations). */
  assert_true(s.true_error <= 1e-12 && fabs(s.true_error - worst) <= 1e-14 + 0.5 * worst);
  assert_int_equal(progress_calls, 0);
  free(b), free(x), free(ref), free(dense);
  ts_csr_free(&a);
}

/* ---- SuperLU: a nonsymmetric system, against dense LU (and not Aᵀ's solution) -----------------
 */
static void test_superlu_nonsymmetric(void** unused) {
  (void)unused;
  progress_calls = 0;
  assert_int_equal(cncSetProgressCallback(count_progress, NULL), CNC_OK);
  ts_csr a = ts_nonsymmetric(80, 5);
  const int n = a.n, k = 2;
  double* b = random_vector((size_t)n * k, 12);
  double* x = (double*)calloc((size_t)n * k, sizeof(double));
  double* ref = (double*)malloc(sizeof(double) * (size_t)n);
  double* reft = (double*)malloc(sizeof(double) * (size_t)n);
  double* dense = ts_csr_to_dense(&a);
  double* dense_t = (double*)malloc(sizeof(double) * (size_t)n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) dense_t[(size_t)j * n + i] = dense[(size_t)i * n + j];
  assert_int_equal(solve_csr(&a, CNC_SUPERLU, k, b, x), CNC_OK);
  stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_int_equal(s.solver_used, CNC_SUPERLU);
  for (int j = 0; j < k; ++j) {
    assert_int_equal(ts_lu_solve(n, dense, b + (size_t)j * n, ref), 0);
    assert_int_equal(ts_lu_solve(n, dense_t, b + (size_t)j * n, reft), 0);
    assert_true(ts_rel_diff((size_t)n, ref, reft) > 1e-2); /* the test can tell A from Aᵀ */
    assert_true(ts_rel_diff((size_t)n, x + (size_t)j * n, ref) < 1e-10);
    assert_true(ts_rel_residual(&a, x + (size_t)j * n, b + (size_t)j * n) < 1e-12);
  }
  /* The same system assembled (cncSolve, declared nonsymmetric). */
  double* xa = (double*)calloc((size_t)n, sizeof(double));
  assert_int_equal(cncSolverParameteri(CNC_SYMMETRIC, 0), CNC_OK);
  assert_int_equal(ts_assemble_solve(&a, b, 1, xa), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
  assert_int_equal(ts_lu_solve(n, dense, b, ref), 0);
  assert_true(ts_rel_diff((size_t)n, xa, ref) < 1e-10);
  assert_int_equal(progress_calls, 0); /* cncSolveCSR and cncSolve */
  free(b), free(x), free(ref), free(reft), free(dense), free(dense_t), free(xa);
  ts_csr_free(&a);
}

/* ---- Locked variables and several systems (cncSolve): a 1D Laplacian between two fixed ends
 * is a straight line, in each system its own ----------------------------------------------------
 */
static void test_locked_variables(void** unused) {
  (void)unused;
  const int n = 41, k = 2;
  const double ends[2][2] = {{1.0, 2.0}, {-3.0, 5.0}};
  for (int solver = 0; solver < 2; ++solver) {
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, solver ? CNC_SUPERLU : CNC_CHOLMOD), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_NB_SYSTEMS, k), CNC_OK);
    assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
    for (int s = 0; s < k; ++s) {
      assert_int_equal(cncMultiSetVariable(0, (CNCuint)s, ends[s][0]), CNC_OK);
      assert_int_equal(cncMultiSetVariable(n - 1, (CNCuint)s, ends[s][1]), CNC_OK);
    }
    assert_int_equal(cncLockVariable(0), CNC_OK);
    assert_int_equal(cncLockVariable(n - 1), CNC_OK);
    assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
    for (int i = 1; i < n - 1; ++i) {
      assert_int_equal(cncAddIJCoefficient((CNCuint)i, (CNCuint)i, 2.0), CNC_OK);
      assert_int_equal(cncAddIJCoefficient((CNCuint)i, (CNCuint)i - 1, -1.0), CNC_OK);
      assert_int_equal(cncAddIJCoefficient((CNCuint)i, (CNCuint)i + 1, -1.0), CNC_OK);
    }
    assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSolve(), CNC_OK);
    assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
    for (int s = 0; s < k; ++s)
      for (int i = 0; i < n; ++i) {
        double v = 0;
        assert_int_equal(cncMultiGetVariable((CNCuint)i, (CNCuint)s, &v), CNC_OK);
        const double line = ends[s][0] + (ends[s][1] - ends[s][0]) * i / (n - 1.0);
        assert_true(fabs(v - line) < 1e-12 * (1 + fabs(line)));
      }
    cncDeleteContext(c);
  }
}

/* ---- Least squares through CHOLMOD (AᵀA): the line through points of y = 3 - 2 t exactly ------
 */
static void test_least_squares(void** unused) {
  (void)unused;
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_CHOLMOD), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 2), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_LEAST_SQUARES, 1), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int p = 0; p < 7; ++p) {
    const double t = 0.5 * p;
    assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
    assert_int_equal(cncCoefficient(0, 1.0), CNC_OK);
    assert_int_equal(cncCoefficient(1, t), CNC_OK);
    assert_int_equal(cncRightHandSide(3.0 - 2.0 * t), CNC_OK);
    assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
  double c0 = 0, c1 = 0;
  assert_int_equal(cncGetVariable(0, &c0), CNC_OK);
  assert_int_equal(cncGetVariable(1, &c1), CNC_OK);
  assert_true(fabs(c0 - 3.0) < 1e-12 && fabs(c1 + 2.0) < 1e-12);
}

/* ---- Failures: x unchanged, a clear outcome ----------------------------------------------------
 */

static void test_cholmod_indefinite(void** unused) {
  (void)unused;
  indefinite_case t = indefinite_case_new();
  check_indefinite(&t, solve_csr(&t.a, CNC_CHOLMOD, 1, t.b, t.x));
  /* SuperLU solves the same (nonsingular) matrix. */
  assert_int_equal(solve_csr(&t.a, CNC_SUPERLU, 1, t.b, t.x), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
  assert_true(ts_rel_residual(&t.a, t.x, t.b) < 1e-12);
  indefinite_case_free(&t);
}

static void test_cholmod_not_symmetric(void** unused) {
  (void)unused;
  ts_csr a = ts_nonsymmetric(30, 7);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 14);
  double* x = (double*)malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; ++i) x[i] = 7.0;
  assert_int_equal(solve_csr(&a, CNC_CHOLMOD, 1, b, x), CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "symmetric"));
  assert_true(all_equal(n, x, 7.0));
  /* Device arrays: refused before anything is read. */
  assert_int_equal(
      cncSolveCSRDevice((CNCuint)n, a.row_ptr, (const CNCuint*)a.col, a.val, 0, 1, b, x),
      CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "direct"));
  assert_true(all_equal(n, x, 7.0));
  free(b), free(x);
  ts_csr_free(&a);
}

/* Off-diagonal entries that differ only by rounding noise beside the diagonal (what a
 * least-squares AᵀA gives where couplings cancel, LSCM's) are symmetric; a real difference of
 * that size between two small entries with a small diagonal is not. */
static void test_cholmod_rounding_noise(void** unused) {
  (void)unused;
  CNCint64 rp[4] = {0, 2, 5, 7};
  CNCuint ci[7] = {0, 1, 0, 1, 2, 1, 2};
  double v[7] = {4, 1e-17, -3e-17, 4, 1, 1, 4};
  double b[3] = {1, 2, 3}, x[3] = {0, 0, 0};
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_CHOLMOD), CNC_OK);
  assert_int_equal(cncSolveCSR(3, rp, ci, v, 0, 1, b, x), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
  assert_true(fabs(4 * x[0] - 1) < 1e-14 && fabs(x[1] + 4 * x[2] - 3) < 1e-14);
  double w[7] = {1e-16, 1e-17, -3e-17, 4, 1, 1, 4}; /* a_00 tiny: the difference counts */
  x[0] = x[1] = x[2] = 7.0;
  assert_int_equal(cncSolveCSR(3, rp, ci, w, 0, 1, b, x), CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "symmetric"));
  assert_true(all_equal(3, x, 7.0));
}

static void test_superlu_singular(void** unused) {
  (void)unused;
  /* Row 2 = row 0 + row 1: singular. */
  CNCint64 rp[4] = {0, 2, 4, 7};
  CNCuint ci[7] = {0, 1, 1, 2, 0, 1, 2};
  double v[7] = {2, 1, 3, 1, 2, 4, 1};
  double b[3] = {1, 2, 3}, x[3] = {7, 7, 7};
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_SUPERLU), CNC_OK);
  assert_int_equal(cncSolveCSR(3, rp, ci, v, 0, 1, b, x), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_BREAKDOWN);
  assert_true(all_equal(3, x, 7.0));
  assert_non_null(strstr(choice_reason(), "singular"));
  /* Structurally singular: a 2 x 2 matrix with one entry (an empty row and an empty column; SuperLU
   * 5.3 itself wrote out of bounds on it, found by fuzz_opennl). */
  CNCint64 rp1[3] = {0, 1, 1};
  CNCuint ci1[1] = {1};
  double v1[1] = {1e-202}, b1[2] = {1, 1}, x1[2] = {7, 7};
  assert_int_equal(cncSolveCSR(2, rp1, ci1, v1, 0, 1, b1, x1), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_BREAKDOWN);
  assert_true(all_equal(2, x1, 7.0));
  assert_non_null(strstr(choice_reason(), "holds no entry"));
}

/* Coefficients whose sum overflows double, assembled through the state machine (cncSolveCSR
 * refuses non-finite values itself): never handed to the library (SuperLU's pivot search wrote out
 * of bounds on such a matrix), reason NOT_FINITE, the variables as they were. */
static void test_overflowed_sum(void** unused) {
  (void)unused;
  const CNCenum solvers[2] = {CNC_CHOLMOD, CNC_SUPERLU};
  for (int s = 0; s < 2; ++s) {
    if (!cncDirectSolverAvailable(solvers[s])) continue;
    CNCcontext c = cncNewContext();
    CNCcontext prev = cncGetCurrent();
    cncMakeCurrent(c);
    assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 2), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, solvers[s]), CNC_OK);
    assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSetVariable(0, 7.0), CNC_OK);
    assert_int_equal(cncSetVariable(1, 7.0), CNC_OK);
    assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncAddIJCoefficient(0, 0, 1e308), CNC_OK);
    assert_int_equal(cncAddIJCoefficient(0, 0, 1e308), CNC_OK); /* the sum: not finite */
    assert_int_equal(cncAddIJCoefficient(0, 1, 1.0), CNC_OK);
    assert_int_equal(cncAddIJCoefficient(1, 0, 1.0), CNC_OK);
    assert_int_equal(cncAddIJCoefficient(1, 1, 2.0), CNC_OK);
    assert_int_equal(cncAddIRightHandSide(0, 1.0), CNC_OK);
    assert_int_equal(cncAddIRightHandSide(1, 1.0), CNC_OK);
    assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSolve(), CNC_OK);
    assert_int_equal(read_stats().reason, CNC_REASON_NOT_FINITE);
    double x0 = 0, x1 = 0;
    assert_int_equal(cncGetVariable(0, &x0), CNC_OK);
    assert_int_equal(cncGetVariable(1, &x1), CNC_OK);
    assert_true(x0 == 7.0 && x1 == 7.0);
    cncMakeCurrent(prev);
    cncDeleteContext(c);
  }
}

/* ---- The kept factorization ------------------------------------------------------------------ */
static void test_kept_factorization(void** unused) {
  (void)unused;
  for (int solver = 0; solver < 2; ++solver) {
    const CNCenum which = solver ? CNC_SUPERLU : CNC_CHOLMOD;
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    ts_csr a = ts_laplacian_2d(9, 7);
    const size_t n = (size_t)a.n;
    double* b1 = random_vector(n, 21);
    double* b2 = random_vector(n, 22);
    double* x = (double*)calloc(n, sizeof(double));
    /* cncSolveCSR: the same arrays with a new b are not factored again. */
    assert_int_equal(solve_csr(&a, which, 1, b1, x), CNC_OK);
    assert_non_null(strstr(choice_reason(), "factored for this matrix"));
    assert_int_equal(solve_csr(&a, which, 1, b2, x), CNC_OK);
    assert_non_null(strstr(choice_reason(), "kept factorization reused"));
    assert_true(ts_rel_residual(&a, x, b2) < 1e-12);
    /* New values in the same arrays (a larger diagonal, still SPD): factored anew, and the
     * answer is the new matrix's. */
    for (int32_t i = 0; i < a.n; ++i)
      for (int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t)
        if (a.col[t] == i) a.val[t] *= 1.5;
    assert_int_equal(solve_csr(&a, which, 1, b2, x), CNC_OK);
    assert_non_null(strstr(choice_reason(), "factored for this matrix"));
    assert_true(ts_rel_residual(&a, x, b2) < 1e-12);
    /* CNC_KEEP_MATRIX off: nothing kept. */
    assert_int_equal(cncDisable(CNC_KEEP_MATRIX), CNC_OK);
    assert_int_equal(solve_csr(&a, which, 1, b1, x), CNC_OK);
    assert_int_equal(solve_csr(&a, which, 1, b1, x), CNC_OK);
    assert_non_null(strstr(choice_reason(), "factored for this matrix"));
    assert_int_equal(cncEnable(CNC_KEEP_MATRIX), CNC_OK);
    /* cncSolve: a second solve of the assembled system uses the kept factorization. */
    assert_int_equal(ts_assemble_solve(&a, b1, 1, x), CNC_OK);
    assert_non_null(strstr(choice_reason(), "factored for this matrix"));
    assert_int_equal(cncSolve(), CNC_OK);
    assert_non_null(strstr(choice_reason(), "kept factorization reused"));
    assert_int_equal(ts_read_x(a.n, 1, x), CNC_OK);
    assert_true(ts_rel_residual(&a, x, b1) < 1e-12);
    free(b1), free(b2), free(x);
    ts_csr_free(&a);
    cncDeleteContext(c);
  }
}

/* ---- Without the libraries (CNC_*_LIBRARY naming a missing file) -------------------------------
 */
static void test_unavailable(void** unused) {
  (void)unused;
  assert_int_equal(cncDirectSolverAvailable(CNC_CHOLMOD), CNC_FALSE);
  assert_non_null(strstr(cncGetLastErrorMessage(), "CNC_CHOLMOD_LIBRARY"));
  assert_int_equal(cncDirectSolverAvailable(CNC_SUPERLU), CNC_FALSE);
  ts_csr a = ts_laplacian_2d(5, 5);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 31);
  double* x = (double*)malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; ++i) x[i] = 7.0;
  assert_int_equal(solve_csr(&a, CNC_CHOLMOD, 1, b, x), CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "CHOLMOD is not available"));
  assert_int_equal(solve_csr(&a, CNC_SUPERLU, 1, b, x), CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "SuperLU is not available"));
  assert_true(all_equal(n, x, 7.0));
  /* The iterative methods still run. */
  assert_int_equal(solve_csr(&a, CNC_CG, 1, b, x), CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_CONVERGED);
  free(b), free(x);
  ts_csr_free(&a);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "unavailable") == 0) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unavailable, ts_setup_context, ts_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
#ifndef CNC_TEST_DIRECT_BUILT
  printf("skipped: cnc was built without CHOLMOD's or SuperLU's header\n");
  return TS_SKIP;
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_available, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_cholmod_spd, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_superlu_nonsymmetric, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test(test_locked_variables),
      cmocka_unit_test_setup_teardown(test_least_squares, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_cholmod_indefinite, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_cholmod_not_symmetric, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_cholmod_rounding_noise, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_superlu_singular, ts_setup_context, ts_teardown_context),
      cmocka_unit_test(test_overflowed_sum),
      cmocka_unit_test(test_kept_factorization),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
