/* OpenNL 4's access to the constructed system (issue 12): nlGetCurrentMatrix returns the system's
 * matrix M over the free variables (least squares: AᵀA), owned by the context, checked by
 * multiplying it with nlMultMatrixVector against the program's own dense product of the matrix
 * it assembled; nlUpdateRightHandSide replaces b of the constructed system and nlSolve solves
 * again without assembling (iterative and direct), checked against the program's chosen answer.
 * Misuse fails with OpenNL's failure value (NULL, nothing done) and a message. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include <NL/nl.h>
#include <NL/nl_matrix.h>
#include <cnc.h>

#include "nl_messages.h"
#include "nl_test_util.h"

enum { kN = 7 };                                      /* variables */
static const int kLocked[kN] = {0, 0, 1, 0, 0, 1, 0}; /* variables 2 and 5 locked */
static const double kLockedValue[kN] = {0, 0, 3.0, 0, 0, -2.0, 0};

/* The program's matrix: row i is the equation of variable i, nonsymmetric and diagonally
 * dominant, a few entries a row. */
static double a_full(int i, int j) {
  if (i == j) return 10.0 + i;
  if (j == (i + 1) % kN) return -1.0 - 0.25 * i;
  if (j == (i + 3) % kN) return 0.5 + 0.125 * j;
  return 0.0;
}

/* The free variables in order (OpenNL's numbering of M's rows and columns). */
static int free_vars(int* f) {
  int n = 0;
  for (int i = 0; i < kN; ++i)
    if (!kLocked[i]) f[n++] = i;
  return n;
}

/* Plain mode: one row per free variable with a right-hand side rhs[i]. */
static void assemble(const double* rhs) {
  nlSolverParameteri(NL_NB_VARIABLES, kN);
  nlSolverParameterd(NL_THRESHOLD, 1e-13);
  nlSolverParameteri(NL_MAX_ITERATIONS, 500);
  nlBegin(NL_SYSTEM);
  for (int i = 0; i < kN; ++i) {
    nlSetVariable((NLuint)i, kLockedValue[i]);
    if (kLocked[i]) nlLockVariable((NLuint)i);
  }
  nlBegin(NL_MATRIX);
  for (int i = 0; i < kN; ++i) {
    if (kLocked[i]) continue;
    nlBegin(NL_ROW);
    for (int j = 0; j < kN; ++j)
      if (a_full(i, j) != 0.0) nlCoefficient((NLuint)j, a_full(i, j));
    nlRightHandSide(rhs[i]);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
}

static void test_current_matrix(void** state) {
  (void)state;
  int f[kN];
  const int nf = free_vars(f);
  NLContext ctx = nlNewContext();
  nl_capture();
  assert_null(nlGetCurrentMatrix()); /* before nlBegin(NL_SYSTEM): nothing yet */
  assert_non_null(strstr(nl_messages, "nlGetCurrentMatrix"));
  nl_release();
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_STATE);
  nlClearErrorCNC();
  double rhs[kN];
  for (int i = 0; i < kN; ++i) rhs[i] = 1.0 + i;
  assemble(rhs);
  NLMatrix M = nlGetCurrentMatrix();
  assert_non_null(M);
  assert_int_equal(M->type, NL_MATRIX_CRS);
  assert_int_equal(M->m, nf);
  assert_int_equal(M->n, nf);
  assert_ptr_equal(nlGetCurrentMatrix(), M); /* the context's, not a new one each call */
  /* M v against the program's dense product over the free rows and columns. */
  double v[kN], y[kN], ref[kN];
  int nnz = 0;
  for (int c = 0; c < nf; ++c) v[c] = 1.0 / (1.0 + c) - 0.3 * c;
  for (int r = 0; r < nf; ++r) {
    ref[r] = 0.0;
    for (int c = 0; c < nf; ++c) {
      ref[r] += a_full(f[r], f[c]) * v[c];
      nnz += a_full(f[r], f[c]) != 0.0;
    }
  }
  nlMultMatrixVector(M, v, y);
  for (int r = 0; r < nf; ++r) assert_double_equal(y[r], ref[r], 1e-14 * (1.0 + fabs(ref[r])));
  assert_int_equal(nlMatrixNNZ(M), nnz);
  /* Still there after the solve; the context deletes it (no nlDeleteMatrix here). */
  assert_true(nlSolve());
  assert_ptr_equal(nlGetCurrentMatrix(), M);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
}

/* Least squares: M = AᵀA of the rows given. */
static void test_current_matrix_least_squares(void** state) {
  (void)state;
  enum { kRows = 9, kCols = 3 };
  double a[kRows][kCols];
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) a[r][c] = (r + 1) * 0.5 + (c == r % kCols ? 2.0 : 0.0) - c;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, kCols);
  nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (int r = 0; r < kRows; ++r) {
    nlBegin(NL_ROW);
    for (int c = 0; c < kCols; ++c) nlCoefficient((NLuint)c, a[r][c]);
    nlRightHandSide(1.0);
    nlEnd(NL_ROW);
  }
  nl_capture();
  assert_null(nlGetCurrentMatrix()); /* inside nlBegin(NL_MATRIX): not assembled yet */
  nl_release();
  nlClearErrorCNC();
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  NLMatrix M = nlGetCurrentMatrix();
  assert_non_null(M);
  const double v[kCols] = {0.25, -1.0, 2.0};
  double y[kCols], ref[kCols];
  for (int i = 0; i < kCols; ++i) {
    ref[i] = 0.0;
    for (int j = 0; j < kCols; ++j) {
      double ata = 0.0;
      for (int r = 0; r < kRows; ++r) ata += a[r][i] * a[r][j];
      ref[i] += ata * v[j];
    }
  }
  nlMultMatrixVector(M, v, y);
  for (int i = 0; i < kCols; ++i) assert_double_equal(y[i], ref[i], 1e-12 * fabs(ref[i]));
  nlDeleteContext(ctx);
}

/* nlUpdateRightHandSide: b of the constructed system, over the free variables; nlSolve again. */
static void solve_twice(NLenum solver) {
  int f[kN];
  const int nf = free_vars(f);
  NLContext ctx = nlNewContext();
  if (solver != NL_SOLVER_DEFAULT) nlSolverParameteri(NL_SOLVER, (NLint)solver);
  double rhs[kN];
  for (int i = 0; i < kN; ++i) rhs[i] = 1.0 - 0.5 * i;
  assemble(rhs);
  assert_true(nlSolve());
  /* The program's answer for the second b: x_true on the free variables, b = A_ff x_true. */
  double x_true[kN], b2[kN];
  for (int r = 0; r < nf; ++r) x_true[r] = 0.5 * r - 1.25;
  for (int r = 0; r < nf; ++r) {
    b2[r] = 0.0;
    for (int c = 0; c < nf; ++c) b2[r] += a_full(f[r], f[c]) * x_true[c];
  }
  nlUpdateRightHandSide(b2);
  assert_int_equal(nlGetErrorCNC(), 0);
  assert_true(nlSolve());
  for (int r = 0; r < nf; ++r) assert_double_equal(nlGetVariable((NLuint)f[r]), x_true[r], 1e-10);
  for (int i = 0; i < kN; ++i)
    if (kLocked[i]) assert_double_equal(nlGetVariable((NLuint)i), kLockedValue[i], 0.0);
  /* A value that is not finite: refused, b unchanged (the same answer again). */
  double bad[kN];
  memcpy(bad, b2, sizeof bad);
  bad[1] = NAN;
  nl_capture();
  nlUpdateRightHandSide(bad);
  nl_release();
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_NOT_FINITE);
  nlClearErrorCNC();
  assert_true(nlSolve());
  for (int r = 0; r < nf; ++r) assert_double_equal(nlGetVariable((NLuint)f[r]), x_true[r], 1e-10);
  nlDeleteContext(ctx);
}

static void test_update_rhs_iterative(void** state) {
  (void)state;
  solve_twice(NL_SOLVER_DEFAULT); /* BiCGSTAB */
  solve_twice(NL_GMRES);
}

static void test_update_rhs_direct(void** state) {
  (void)state;
  if (!nlInitExtension("SUPERLU")) skip();
  solve_twice(NL_SUPERLU_EXT); /* the factorization is kept: only the triangular solves */
}

static void test_update_rhs_misuse(void** state) {
  (void)state;
  double values[kN] = {0};
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nl_capture();
  nlUpdateRightHandSide(values); /* nothing constructed */
  nl_release();
  assert_non_null(strstr(nl_messages, "nlUpdateRightHandSide"));
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_STATE);
  nlClearErrorCNC();
  nlDeleteContext(ctx);

  ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 1);
  nlSolverParameteri(NL_NB_SYSTEMS, 2); /* OpenNL asserts NL_NB_SYSTEMS == 1 */
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  nlAddIJCoefficient(0, 0, 2.0);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  nl_capture();
  nlUpdateRightHandSide(values);
  nl_release();
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INVALID_VALUE);
  nlClearErrorCNC();
  nl_capture();
  nlUpdateRightHandSide(NULL);
  nl_release();
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_NULL_POINTER);
  nlDeleteContext(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_current_matrix),
      cmocka_unit_test(test_current_matrix_least_squares),
      cmocka_unit_test(test_update_rhs_iterative),
      cmocka_unit_test(test_update_rhs_direct),
      cmocka_unit_test(test_update_rhs_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
