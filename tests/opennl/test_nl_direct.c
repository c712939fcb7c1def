/* OpenNL's direct solver extensions on cnc's CHOLMOD and SuperLU: nlInitExtension, NL_SOLVER =
 * NL_CHOLMOD_EXT / NL_SUPERLU_EXT / NL_PERM_SUPERLU_EXT / NL_SYMMETRIC_SUPERLU_EXT in nlSolve,
 * and nlMatrixFactorize, whose product applies A⁻¹ (checked by multiplying back with A); no
 * NL_FUNC_PROGRESS call from a direct solve (OpenNL's direct solvers make none). Skips
 * (77) when the libraries are not there. */
#include <cnc.h>
#include <cnc_nl.h>
#include <cnc_nl_matrix.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "nl_test_util.h"

enum { N = 30 };

static void test_extensions(void** state) {
  (void)state;
  assert_true(nlInitExtension("CHOLMOD"));
  assert_true(nlExtensionIsInitialized("CHOLMOD"));
  assert_true(nlInitExtension("superlu")); /* case-insensitive, as OpenNL's */
  assert_true(nlExtensionIsInitialized("SUPERLU"));
}

/* Least squares with both ends locked: min sum (x_i - x_{i+1})^2 is the straight line. */
/* NL_FUNC_PROGRESS: never called by a direct solve, as in OpenNL. */
static int progress_calls = 0;
static void on_progress(NLuint it, NLuint max_it, double err, double max_err) {
  (void)it, (void)max_it, (void)err, (void)max_err;
  ++progress_calls;
}

static void test_solve_least_squares(void** state) {
  (void)state;
  progress_calls = 0;
  const NLenum solvers[] = {NL_CHOLMOD_EXT, NL_SUPERLU_EXT, NL_PERM_SUPERLU_EXT,
                            NL_SYMMETRIC_SUPERLU_EXT};
  for (size_t s = 0; s < sizeof solvers / sizeof *solvers; ++s) {
    NLContext ctx = nlNewContext();
    nlSolverParameteri(NL_SOLVER, (NLint)solvers[s]);
    nlSolverParameteri(NL_NB_VARIABLES, N);
    nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);
    nlSetFunction(NL_FUNC_PROGRESS, (NLfunc)on_progress);
    nlBegin(NL_SYSTEM);
    nlSetVariable(0, 1.0);
    nlSetVariable(N - 1, 4.0);
    nlLockVariable(0);
    nlLockVariable(N - 1);
    nlBegin(NL_MATRIX);
    for (int i = 0; i + 1 < N; ++i) {
      nlBegin(NL_ROW);
      nlCoefficient((NLuint)i, 1.0);
      nlCoefficient((NLuint)i + 1, -1.0);
      nlEnd(NL_ROW);
    }
    nlEnd(NL_MATRIX);
    nlEnd(NL_SYSTEM);
    assert_true(nlSolve());
    assert_int_equal(nlGetErrorCNC(), CNC_OK);
    NLint used = 0, iters = -1;
    cncGetIntegerv(CNC_SOLVER_USED, &used);
    cncGetIntegerv(CNC_USED_ITERATIONS, &iters);
    assert_int_equal(used, solvers[s] == NL_CHOLMOD_EXT ? CNC_CHOLMOD : CNC_SUPERLU);
    assert_int_equal(iters, 0);
    for (int i = 0; i < N; ++i)
      assert_double_equal(nlGetVariable((NLuint)i), 1.0 + 3.0 * i / (N - 1.0), 1e-12);
    nlDeleteContext(ctx);
  }
  assert_int_equal(progress_calls, 0);
}

/* A nonsymmetric plain system through SuperLU: x = (1, 2, 3) exactly. */
static void test_solve_nonsymmetric(void** state) {
  (void)state;
  const double a[3][3] = {{4, 9, 0}, {1, 5, 7}, {0, 2, 6}}, x[3] = {1, 2, 3};
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_SOLVER, NL_SUPERLU_EXT);
  nlSolverParameteri(NL_NB_VARIABLES, 3);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (int i = 0; i < 3; ++i) {
    nlBegin(NL_ROW);
    double b = 0;
    for (int j = 0; j < 3; ++j) {
      if (a[i][j] != 0) nlCoefficient((NLuint)j, a[i][j]);
      b += a[i][j] * x[j];
    }
    nlRightHandSide(b);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  for (int i = 0; i < 3; ++i) assert_double_equal(nlGetVariable((NLuint)i), x[i], 1e-13);
  nlDeleteContext(ctx);
}

/* A 1D Laplacian (SPD) with a nonsymmetric perturbation when `nonsym`. */
static NLMatrix laplacian(NLenum storage, int nonsym) {
  NLMatrix S = nlSparseMatrixNew(N, N, storage);
  for (NLuint i = 0; i < N; ++i) {
    nlSparseMatrixAdd((NLSparseMatrix*)S, i, i, 2.5);
    if (i > 0) nlSparseMatrixAdd((NLSparseMatrix*)S, i, i - 1, nonsym ? -0.2 : -1.0);
    if (i + 1 < N) nlSparseMatrixAdd((NLSparseMatrix*)S, i, i + 1, -1.0);
  }
  return S;
}

/* F = nlMatrixFactorize(A): A (F x) = x. */
static void check_inverse(NLMatrix A, NLMatrix F) {
  double x[N], y[N], z[N];
  for (int i = 0; i < N; ++i) x[i] = sin(1.0 + i);
  nlMultMatrixVector(F, x, y);
  nlMultMatrixVector(A, y, z);
  for (int i = 0; i < N; ++i) assert_double_equal(z[i], x[i], 1e-12);
  /* Again with another vector: the kept factorization serves it too. */
  for (int i = 0; i < N; ++i) x[i] = cos(2.0 * i);
  nlMultMatrixVector(F, x, y);
  nlMultMatrixVector(A, y, z);
  for (int i = 0; i < N; ++i) assert_double_equal(z[i], x[i], 1e-12);
}

static void test_factorize(void** state) {
  (void)state;
  /* CHOLMOD on a symmetric storage (lower triangle) and on its compressed rows. */
  NLMatrix S = laplacian(NL_MATRIX_STORE_ROWS | NL_MATRIX_STORE_SYMMETRIC, 0);
  NLMatrix F = nlMatrixFactorize(S, NL_CHOLMOD_EXT);
  assert_non_null(F);
  assert_int_equal(F->type, NL_MATRIX_CHOLMOD_EXT);
  assert_int_equal(F->m, N);
  check_inverse(S, F);
  nlDeleteMatrix(F);
  NLMatrix C = nlCRSMatrixNewFromSparseMatrix((NLSparseMatrix*)S);
  F = nlMatrixFactorize(C, NL_CHOLMOD_EXT);
  assert_non_null(F);
  check_inverse(C, F);
  nlDeleteMatrix(F);
  nlDeleteMatrix(C);
  nlDeleteMatrix(S);
  /* SuperLU on a nonsymmetric matrix (rows, then columns stored). */
  const NLenum storages[] = {NL_MATRIX_STORE_ROWS, NL_MATRIX_STORE_COLUMNS};
  for (int t = 0; t < 2; ++t) {
    S = laplacian(storages[t], 1);
    F = nlMatrixFactorize(S, NL_PERM_SUPERLU_EXT);
    assert_non_null(F);
    assert_int_equal(F->type, NL_MATRIX_SUPERLU_EXT);
    check_inverse(S, F);
    nlDeleteMatrix(F);
    /* CHOLMOD refuses it (not symmetric): NULL. */
    assert_null(nlMatrixFactorize(S, NL_CHOLMOD_EXT));
    nlDeleteMatrix(S);
  }
  /* Not positive definite (CHOLMOD), singular (SuperLU): NULL. */
  S = nlSparseMatrixNew(2, 2, NL_MATRIX_STORE_ROWS);
  nlSparseMatrixAdd((NLSparseMatrix*)S, 0, 0, 1.0);
  nlSparseMatrixAdd((NLSparseMatrix*)S, 0, 1, 2.0);
  nlSparseMatrixAdd((NLSparseMatrix*)S, 1, 0, 2.0);
  nlSparseMatrixAdd((NLSparseMatrix*)S, 1, 1, 1.0);
  assert_null(nlMatrixFactorize(S, NL_CHOLMOD_EXT));
  F = nlMatrixFactorize(S, NL_SUPERLU_EXT); /* indefinite but not singular */
  assert_non_null(F);
  nlDeleteMatrix(F);
  nlSparseMatrixAdd((NLSparseMatrix*)S, 1, 1, 3.0); /* [[1 2] [2 4]]: singular */
  assert_null(nlMatrixFactorize(S, NL_SUPERLU_EXT));
  nlDeleteMatrix(S);
}

int main(void) {
  if (!cncDirectSolverAvailable(CNC_CHOLMOD) || !cncDirectSolverAvailable(CNC_SUPERLU)) {
    printf("SKIP: CHOLMOD or SuperLU not available: %s\n", cncGetLastErrorMessage());
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_extensions),
      cmocka_unit_test(test_solve_least_squares),
      cmocka_unit_test(test_solve_nonsymmetric),
      cmocka_unit_test(test_factorize),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
