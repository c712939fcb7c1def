/* Bad arguments through the public API: unknown enums, out-of-range values and indices, NaN/Inf,
 * NULL pointers, malformed CSR arrays, absent backends. Every refused call must return its
 * documented status, and the same context must then still solve a system correctly (checked
 * against a dense Cholesky solve done here). */
#define _POSIX_C_SOURCE 200809L
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
#include "test_support.h"

enum { N = 7 };

static void tiny_system(double* a, double* b, double* x_ref) {
  memset(a, 0, sizeof(double) * N * N);
  for (int i = 0; i < N; ++i) {
    a[i * N + i] = 4.0 + i;
    if (i > 0) a[i * N + i - 1] = -1.0;
    if (i + 1 < N) a[i * N + i + 1] = -1.0;
    if (i + 3 < N) a[i * N + i + 3] = 0.5;
    if (i >= 3) a[i * N + i - 3] = 0.5;
    b[i] = 1.0 - 0.3 * i;
  }
  assert_int_equal(ts_cholesky_solve(N, a, b, x_ref), 0);
}

/* Assembles the tiny system in the current context (from INITIAL or SOLVED), solves it and
 * checks the answer: proves the context is still usable after the errors before. */
static void solve_tiny_and_check(void) {
  double a[N * N], b[N], x_ref[N], x[N];
  tiny_system(a, b, x_ref);
  CNCint st = 0;
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  if (st == CNC_STATE_INITIAL) assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  for (int i = 0; i < N; ++i) assert_int_equal(cncSetVariable(i, 0.0), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j)
      if (a[i * N + j] != 0) assert_int_equal(cncAddIJCoefficient(i, j, a[i * N + j]), CNC_OK);
    assert_int_equal(cncAddIRightHandSide(i, b[i]), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  for (int i = 0; i < N; ++i) assert_int_equal(cncGetVariable(i, &x[i]), CNC_OK);
  if (!(ts_rel_diff(N, x, x_ref) < 1e-7)) fail_msg("wrong solution after errors");
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
}

/* Checks a refused call: its status, and that its message names the call. */
static void expect(CNCstatus got, CNCstatus want, const char* call, int line) {
  if (got != want)
    fail_msg("line %d: %s returned %d (%s), expected %d (%s)", line, call, got,
             cncStatusString(got), want, cncStatusString(want));
  if (!strstr(cncGetLastErrorMessage(), call))
    fail_msg("line %d: message '%s' does not name %s", line, cncGetLastErrorMessage(), call);
}
#define EXPECT(expr, want, name) expect((expr), (want), (name), __LINE__)

/* Either of two statuses (where cnc.h does not say which of two codes applies). */
static void expect2(CNCstatus got, CNCstatus w1, CNCstatus w2, const char* what, int line) {
  if (got != w1 && got != w2)
    fail_msg("line %d: %s returned %d (%s), expected %s or %s", line, what, got,
             cncStatusString(got), cncStatusString(w1), cncStatusString(w2));
}
#define EXPECT2(expr, w1, w2) expect2((expr), (w1), (w2), #expr, __LINE__)

static void test_unknown_enums(void** unused) {
  (void)unused;
  CNCint iv;
  CNCint64 i64;
  double dv;
  const char* s;
  CNCboolean bv;
  EXPECT(cncSolverParameteri(0x7FFF, 1), CNC_ERR_INVALID_ENUM, "cncSolverParameteri");
  EXPECT(cncSolverParameterd(0x7FFF, 1.0), CNC_ERR_INVALID_ENUM, "cncSolverParameterd");
  EXPECT(cncSolverParameteri64(0x7FFF, 1), CNC_ERR_INVALID_ENUM, "cncSolverParameteri64");
  EXPECT(cncGetIntegerv(0x7FFF, &iv), CNC_ERR_INVALID_ENUM, "cncGetIntegerv");
  EXPECT(cncGetInteger64v(0x7FFF, &i64), CNC_ERR_INVALID_ENUM, "cncGetInteger64v");
  EXPECT(cncGetDoublev(0x7FFF, &dv), CNC_ERR_INVALID_ENUM, "cncGetDoublev");
  EXPECT(cncGetString(0x7FFF, &s), CNC_ERR_INVALID_ENUM, "cncGetString");
  EXPECT(cncGetString(CNC_NB_VARIABLES, &s), CNC_ERR_INVALID_ENUM, "cncGetString");
  EXPECT(cncEnable(0x7FFF), CNC_ERR_INVALID_ENUM, "cncEnable");
  EXPECT(cncDisable(CNC_NB_VARIABLES), CNC_ERR_INVALID_ENUM, "cncDisable");
  EXPECT(cncIsEnabled(0x7FFF, &bv), CNC_ERR_INVALID_ENUM, "cncIsEnabled");
  EXPECT(cncBegin(0x7FFF), CNC_ERR_INVALID_ENUM, "cncBegin");
  EXPECT(cncEnd(0x7FFF), CNC_ERR_INVALID_ENUM, "cncEnd");
  /* Read-only statistics cannot be set. */
  EXPECT(cncSolverParameteri(CNC_USED_ITERATIONS, 3), CNC_ERR_INVALID_ENUM, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_STATE, CNC_STATE_SOLVED), CNC_ERR_INVALID_ENUM,
         "cncSolverParameteri");
  /* Values of enum-valued parameters that are not among their documented values. */
  EXPECT2(cncSolverParameteri(CNC_PRECISION, 0x7FFF), CNC_ERR_INVALID_ENUM, CNC_ERR_INVALID_VALUE);
  EXPECT2(cncSolverParameteri(CNC_MATRIX_FORMAT, CNC_DOUBLE), CNC_ERR_INVALID_ENUM,
          CNC_ERR_INVALID_VALUE);
  EXPECT2(cncSolverParameteri(CNC_BACKEND, CNC_FORMAT_CSR), CNC_ERR_INVALID_ENUM,
          CNC_ERR_INVALID_VALUE);
  EXPECT2(cncSolverParameteri(CNC_SOLVER, 0x7FFF), CNC_ERR_INVALID_ENUM, CNC_ERR_INVALID_VALUE);
  EXPECT2(cncSolverParameteri(CNC_PRECONDITIONER, CNC_CG), CNC_ERR_INVALID_ENUM,
          CNC_ERR_INVALID_VALUE);
  /* None of the refused values was stored. */
  assert_int_equal(cncGetIntegerv(CNC_PRECISION, &iv), CNC_OK);
  assert_int_equal(iv, CNC_DOUBLE);
  assert_int_equal(cncGetIntegerv(CNC_MATRIX_FORMAT, &iv), CNC_OK);
  assert_int_equal(iv, CNC_FORMAT_AUTO);
  assert_int_equal(cncGetError(), CNC_ERR_INVALID_ENUM);
  solve_tiny_and_check();
}

static void test_invalid_values(void** unused) {
  (void)unused;
  CNCint nv0 = -1;
  assert_int_equal(cncGetIntegerv(CNC_NB_VARIABLES, &nv0), CNC_OK);
  EXPECT(cncSolverParameterd(CNC_THRESHOLD, -1e-6), CNC_ERR_INVALID_VALUE, "cncSolverParameterd");
  EXPECT(cncSolverParameterd(CNC_THRESHOLD, 0.0), CNC_ERR_INVALID_VALUE, "cncSolverParameterd");
  EXPECT2(cncSolverParameterd(CNC_THRESHOLD, NAN), CNC_ERR_INVALID_VALUE, CNC_ERR_NOT_FINITE);
  EXPECT(cncSolverParameteri(CNC_NB_VARIABLES, 0), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_NB_VARIABLES, -5), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_NB_SYSTEMS, 0), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_MAX_ITERATIONS, 0), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_MAX_ITERATIONS, -1), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_NB_THREADS, -1), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_DEVICE_INDEX, -2), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri(CNC_CHECK_INTERVAL, -1), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  EXPECT(cncSolverParameteri64(CNC_NNZ_HINT, -1), CNC_ERR_INVALID_VALUE, "cncSolverParameteri64");
  EXPECT(cncSolverParameteri(CNC_LEAST_SQUARES, 2), CNC_ERR_INVALID_VALUE, "cncSolverParameteri");
  /* An integer parameter given as a double must be integral. */
  EXPECT(cncSolverParameterd(CNC_NB_VARIABLES, 2.5), CNC_ERR_INVALID_VALUE, "cncSolverParameterd");
  /* Integer parameters given as int64 beyond int range. */
  EXPECT2(cncSolverParameteri64(CNC_NB_VARIABLES, (CNCint64)1 << 40), CNC_ERR_INVALID_VALUE,
          CNC_ERR_OVERFLOW);
  double thr = 0;
  assert_int_equal(cncGetDoublev(CNC_THRESHOLD, &thr), CNC_OK);
  assert_true(thr > 0);
  CNCint nv = -1;
  assert_int_equal(cncGetIntegerv(CNC_NB_VARIABLES, &nv), CNC_OK);
  assert_int_equal(nv, nv0); /* none of the refused values was stored */
  solve_tiny_and_check();
}

static void test_index_out_of_range(void** unused) {
  (void)unused;
  double v;
  CNCboolean locked;
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_SYSTEMS, 2), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  EXPECT(cncSetVariable(N, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSetVariable");
  EXPECT(cncGetVariable(N, &v), CNC_ERR_INDEX_OUT_OF_RANGE, "cncGetVariable");
  EXPECT(cncSetVariable(UINT32_MAX, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSetVariable");
  EXPECT(cncMultiSetVariable(0, 2, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncMultiSetVariable");
  EXPECT(cncMultiGetVariable(0, 2, &v), CNC_ERR_INDEX_OUT_OF_RANGE, "cncMultiGetVariable");
  EXPECT(cncMultiSetVariable(N, 0, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncMultiSetVariable");
  EXPECT(cncLockVariable(N), CNC_ERR_INDEX_OUT_OF_RANGE, "cncLockVariable");
  EXPECT(cncUnlockVariable(N + 10), CNC_ERR_INDEX_OUT_OF_RANGE, "cncUnlockVariable");
  EXPECT(cncVariableIsLocked(N, &locked), CNC_ERR_INDEX_OUT_OF_RANGE, "cncVariableIsLocked");
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  EXPECT(cncAddIJCoefficient(N, 0, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncAddIJCoefficient");
  EXPECT(cncAddIJCoefficient(0, N, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncAddIJCoefficient");
  EXPECT(cncAddIRightHandSide(N, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncAddIRightHandSide");
  EXPECT(cncMultiAddIRightHandSide(0, 2, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncMultiAddIRightHandSide");
  EXPECT(cncMultiAddIRightHandSide(N, 0, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncMultiAddIRightHandSide");
  /* Row-wise: a coefficient index and a system index out of range inside a row. */
  assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
  EXPECT(cncCoefficient(N, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncCoefficient");
  EXPECT(cncMultiRightHandSide(2, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncMultiRightHandSide");
  assert_int_equal(cncCoefficient(0, 1.0), CNC_OK);
  assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
  assert_int_equal(cncGetError(), CNC_ERR_INDEX_OUT_OF_RANGE);
  /* Refused entries were not added: the matrix is diag(1, 1, ...) over the rows given. */
  for (int i = 1; i < N; ++i) {
    assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
    assert_int_equal(cncCoefficient(i, 2.0), CNC_OK);
    assert_int_equal(cncRightHandSide(4.0), CNC_OK);
    assert_int_equal(cncMultiRightHandSide(1, 6.0), CNC_OK);
    assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  for (int i = 0; i < N; ++i) {
    double x0, x1;
    assert_int_equal(cncMultiGetVariable(i, 0, &x0), CNC_OK);
    assert_int_equal(cncMultiGetVariable(i, 1, &x1), CNC_OK);
    assert_true(fabs(x0 - (i == 0 ? 0.0 : 2.0)) < 1e-9);
    assert_true(fabs(x1 - (i == 0 ? 0.0 : 3.0)) < 1e-9);
  }
}

static void test_not_finite(void** unused) {
  (void)unused;
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  EXPECT(cncSetVariable(0, NAN), CNC_ERR_NOT_FINITE, "cncSetVariable");
  EXPECT(cncSetVariable(0, INFINITY), CNC_ERR_NOT_FINITE, "cncSetVariable");
  EXPECT(cncMultiSetVariable(1, 0, -INFINITY), CNC_ERR_NOT_FINITE, "cncMultiSetVariable");
  double v = -1;
  assert_int_equal(cncGetVariable(0, &v), CNC_OK);
  assert_true(isfinite(v));
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  EXPECT(cncAddIJCoefficient(1, 2, NAN), CNC_ERR_NOT_FINITE, "cncAddIJCoefficient");
  EXPECT(cncAddIJCoefficient(1, 1, INFINITY), CNC_ERR_NOT_FINITE, "cncAddIJCoefficient");
  EXPECT(cncAddIRightHandSide(1, NAN), CNC_ERR_NOT_FINITE, "cncAddIRightHandSide");
  EXPECT(cncMultiAddIRightHandSide(1, 0, -INFINITY), CNC_ERR_NOT_FINITE,
         "cncMultiAddIRightHandSide");
  assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
  EXPECT(cncCoefficient(0, NAN), CNC_ERR_NOT_FINITE, "cncCoefficient");
  EXPECT(cncRightHandSide(INFINITY), CNC_ERR_NOT_FINITE, "cncRightHandSide");
  EXPECT(cncMultiRightHandSide(0, NAN), CNC_ERR_NOT_FINITE, "cncMultiRightHandSide");
  EXPECT(cncRowScaling(NAN), CNC_ERR_NOT_FINITE, "cncRowScaling");
  EXPECT(cncRowScaling(INFINITY), CNC_ERR_NOT_FINITE, "cncRowScaling");
  assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncGetError(), CNC_ERR_NOT_FINITE);
  /* Start over on the same variables (from SYSTEM_CONSTRUCTED: solve, then Begin(SYSTEM)). */
  assert_int_equal(cncSolve(), CNC_OK); /* zero matrix and rhs: must not crash */
  solve_tiny_and_check();
}

static void test_null_pointers(void** unused) {
  (void)unused;
  EXPECT(cncGetIntegerv(CNC_NB_VARIABLES, NULL), CNC_ERR_NULL_POINTER, "cncGetIntegerv");
  EXPECT(cncGetInteger64v(CNC_NNZ, NULL), CNC_ERR_NULL_POINTER, "cncGetInteger64v");
  EXPECT(cncGetDoublev(CNC_THRESHOLD, NULL), CNC_ERR_NULL_POINTER, "cncGetDoublev");
  EXPECT(cncGetString(CNC_BACKEND_NAME, NULL), CNC_ERR_NULL_POINTER, "cncGetString");
  EXPECT(cncIsEnabled(CNC_VERBOSE, NULL), CNC_ERR_NULL_POINTER, "cncIsEnabled");
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  EXPECT(cncGetVariable(0, NULL), CNC_ERR_NULL_POINTER, "cncGetVariable");
  EXPECT(cncMultiGetVariable(0, 0, NULL), CNC_ERR_NULL_POINTER, "cncMultiGetVariable");
  EXPECT(cncVariableIsLocked(0, NULL), CNC_ERR_NULL_POINTER, "cncVariableIsLocked");
  double b[2] = {1, 1}, x[2] = {0, 0}, val[2] = {2, 2};
  CNCint64 rp[3] = {0, 1, 2};
  CNCuint ci[2] = {0, 1};
  EXPECT(cncSolveCSR(2, NULL, ci, val, 0, 1, b, x), CNC_ERR_NULL_POINTER, "cncSolveCSR");
  EXPECT(cncSolveCSR(2, rp, NULL, val, 0, 1, b, x), CNC_ERR_NULL_POINTER, "cncSolveCSR");
  EXPECT(cncSolveCSR(2, rp, ci, NULL, 0, 1, b, x), CNC_ERR_NULL_POINTER, "cncSolveCSR");
  EXPECT(cncSolveCSR(2, rp, ci, val, 0, 1, NULL, x), CNC_ERR_NULL_POINTER, "cncSolveCSR");
  EXPECT(cncSolveCSR(2, rp, ci, val, 0, 1, b, NULL), CNC_ERR_NULL_POINTER, "cncSolveCSR");
  assert_int_equal(cncGetError(), CNC_ERR_NULL_POINTER);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_ERR_STATE); /* still in SYSTEM, no matrix yet */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  solve_tiny_and_check();
}

/* A 4x4 SPD CSR and its solution, for cncSolveCSR. */
static const CNCint64 g_rp[5] = {0, 2, 5, 8, 10};
static const CNCuint g_ci[10] = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3};
static const double g_val[10] = {4, -1, -1, 4, -1, -1, 4, -1, -1, 4};
static const double g_b[4] = {1, 2, 3, 4};

static void check_good_csr_solve(void) {
  double x[4] = {0, 0, 0, 0}, x_ref[4], dense[16] = {0};
  for (int i = 0; i < 4; ++i)
    for (CNCint64 k = g_rp[i]; k < g_rp[i + 1]; ++k) dense[i * 4 + (int)g_ci[k]] = g_val[k];
  assert_int_equal(ts_cholesky_solve(4, dense, g_b, x_ref), 0);
  assert_int_equal(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_OK);
  assert_true(ts_rel_diff(4, x, x_ref) < 1e-5);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
}

static void test_bad_csr(void** unused) {
  (void)unused;
  double x[4] = {0, 0, 0, 0};
  CNCint64 rp[5];
  CNCuint ci[10];
  double val[10], b[4];
  memcpy(ci, g_ci, sizeof ci);
  memcpy(val, g_val, sizeof val);
  memcpy(b, g_b, sizeof b);
  check_good_csr_solve();
  /* Non-monotone row_ptr. */
  memcpy(rp, g_rp, sizeof rp);
  rp[2] = 1;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  check_good_csr_solve();
  /* row_ptr[0] != base. */
  memcpy(rp, g_rp, sizeof rp);
  EXPECT(cncSolveCSR(4, rp, ci, val, 1, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  rp[0] = 1;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  check_good_csr_solve();
  /* Base other than 0 and 1. */
  memcpy(rp, g_rp, sizeof rp);
  EXPECT(cncSolveCSR(4, rp, ci, val, 2, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  EXPECT(cncSolveCSR(4, rp, ci, val, -1, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  /* Column out of range (0-based: 4 is too large). */
  ci[9] = 4;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSolveCSR");
  /* 1-based: column 0 is out of range. */
  memcpy(ci, g_ci, sizeof ci);
  CNCint64 rp1[5];
  CNCuint ci1[10];
  for (int i = 0; i < 5; ++i) rp1[i] = g_rp[i] + 1;
  for (int k = 0; k < 10; ++k) ci1[k] = g_ci[k] + 1;
  ci1[0] = 0;
  EXPECT(cncSolveCSR(4, rp1, ci1, val, 1, 1, b, x), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSolveCSR");
  /* A correct 1-based call gives the same answer as the 0-based one. */
  ci1[0] = 1;
  double x1[4] = {0, 0, 0, 0}, x0[4] = {0, 0, 0, 0};
  assert_int_equal(cncSolveCSR(4, rp1, ci1, val, 1, 1, b, x1), CNC_OK);
  assert_int_equal(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x0), CNC_OK);
  assert_true(ts_rel_diff(4, x1, x0) < 1e-12);
  /* n = 0, nrhs = 0. */
  EXPECT(cncSolveCSR(0, rp, ci, val, 0, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 0, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  /* NaN in the values, the right-hand side, the initial guess. */
  val[3] = NAN;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_NOT_FINITE, "cncSolveCSR");
  val[3] = g_val[3];
  b[2] = INFINITY;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_NOT_FINITE, "cncSolveCSR");
  b[2] = g_b[2];
  x[1] = NAN;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_NOT_FINITE, "cncSolveCSR");
  check_good_csr_solve();
  /* cncSolveCSR is refused in MATRIX and ROW states. */
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  check_good_csr_solve(); /* allowed in SYSTEM */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  double xs[4] = {0, 0, 0, 0};
  EXPECT(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, xs), CNC_ERR_STATE, "cncSolveCSR");
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  solve_tiny_and_check();
  check_good_csr_solve();
}

/* Forcing a backend that is absent is an error, never a silent fallback. */
static void test_absent_backend(void** unused) {
  (void)unused;
  static const CNCenum gpus[] = {CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL};
  for (int g = 0; g < 2; ++g) {
    CNCenum be = gpus[g];
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    CNCstatus set = cncSolverParameteri(CNC_BACKEND, be);
    if (cncBackendAvailable(be)) {
      assert_int_equal(set, CNC_OK);
      solve_tiny_and_check();
      CNCint used = 0;
      assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &used), CNC_OK);
      assert_int_equal(used, be); /* forced, even for a tiny system */
      print_message("backend 0x%x available: solved on it\n", be);
    } else if (set == CNC_ERR_BACKEND_UNAVAILABLE) {
      assert_int_equal(cncGetError(), CNC_ERR_BACKEND_UNAVAILABLE);
      assert_true(strlen(cncGetErrorMessage()) > 0);
      solve_tiny_and_check();
    } else {
      /* Accepted as a parameter: the solve must then fail. */
      assert_int_equal(set, CNC_OK);
      assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
      assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
      assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
      for (int i = 0; i < N; ++i) assert_int_equal(cncAddIJCoefficient(i, i, 1.0), CNC_OK);
      assert_int_equal(cncAddIRightHandSide(0, 1.0), CNC_OK);
      assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
      assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
      EXPECT(cncSolve(), CNC_ERR_BACKEND_UNAVAILABLE, "cncSolve");
      double x[4] = {0, 0, 0, 0};
      EXPECT(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_BACKEND_UNAVAILABLE,
             "cncSolveCSR");
      /* Back to the CPU: the same context solves. */
      assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
      solve_tiny_and_check();
    }
    cncDeleteContext(c);
  }
}

/* The CNC_BACKEND environment variable, and an explicit parameter overriding it. */
static void test_backend_environment(void** unused) {
  (void)unused;
  setenv("CNC_BACKEND", "cpu", 1);
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  solve_tiny_and_check();
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_BACKEND_CPU);
  const char* name = NULL;
  assert_int_equal(cncGetString(CNC_BACKEND_NAME, &name), CNC_OK);
  assert_string_equal(name, "cpu");
  cncDeleteContext(c);
  if (!cncBackendAvailable(CNC_BACKEND_CUDA)) {
    /* An absent backend asked through the environment is an error too... */
    setenv("CNC_BACKEND", "cuda", 1);
    c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    double x[4] = {0, 0, 0, 0};
    EXPECT(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_BACKEND_UNAVAILABLE,
           "cncSolveCSR");
    /* ...unless an explicit API call overrides it. */
    assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
    check_good_csr_solve();
    cncDeleteContext(c);
  }
  unsetenv("CNC_BACKEND");
}

/* cncAddIJCoefficients: the same bits as one call per entry (a random SPD matrix in random
 * order, with duplicates), and a bad entry anywhere refuses the whole call and adds nothing. */
static void solve_entries(const ts_csr* a, const double* b, int bulk, int with_bad_calls,
                          double* x) {
  const int32_t n = a->n;
  uint32_t* ri = malloc(sizeof(uint32_t) * (size_t)(a->nnz * 2));
  uint32_t* ci = malloc(sizeof(uint32_t) * (size_t)(a->nnz * 2));
  double* vi = malloc(sizeof(double) * (size_t)(a->nnz * 2));
  int64_t m = 0;
  for (int32_t i = 0; i < n; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) { /* each entry in two parts */
      ri[m] = (uint32_t)i, ci[m] = (uint32_t)a->col[k], vi[m++] = a->val[k] * 0.3;
      ri[m] = (uint32_t)i, ci[m] = (uint32_t)a->col[k], vi[m++] = a->val[k] * 0.7;
    }
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  if (with_bad_calls) {
    uint32_t keep = ri[m / 2];
    ri[m / 2] = (uint32_t)n; /* one index out of range in the middle */
    assert_int_equal(cncAddIJCoefficients(m, ri, ci, vi), CNC_ERR_INDEX_OUT_OF_RANGE);
    ri[m / 2] = keep;
    double v = vi[m - 1];
    vi[m - 1] = NAN; /* one value not finite at the end */
    assert_int_equal(cncAddIJCoefficients(m, ri, ci, vi), CNC_ERR_NOT_FINITE);
    vi[m - 1] = v;
    assert_int_equal(cncAddIJCoefficients(-1, ri, ci, vi), CNC_ERR_INVALID_VALUE);
    assert_int_equal(cncAddIJCoefficients(m, NULL, ci, vi), CNC_ERR_NULL_POINTER);
    assert_int_equal(cncAddIJCoefficients(0, NULL, NULL, NULL), CNC_OK);
    assert_true(strstr(cncGetErrorMessage(), "entry") != NULL);
    cncClearError();
  }
  if (bulk) {
    assert_int_equal(cncAddIJCoefficients(m / 3, ri, ci, vi), CNC_OK);
    assert_int_equal(cncAddIJCoefficients(m - m / 3, ri + m / 3, ci + m / 3, vi + m / 3), CNC_OK);
  } else {
    for (int64_t t = 0; t < m; ++t)
      assert_int_equal(cncAddIJCoefficient(ri[t], ci[t], vi[t]), CNC_OK);
  }
  for (int32_t i = 0; i < n; ++i) assert_int_equal(cncAddIRightHandSide((CNCuint)i, b[i]), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(ts_read_x(n, 1, x), CNC_OK);
  free(ri), free(ci), free(vi);
}

static void test_bulk_coefficients(void** state) {
  (void)state;
  ts_csr a = ts_random_spd(3000, 6, 77);
  double* b = malloc(sizeof(double) * 3000);
  double *x1 = malloc(sizeof(double) * 3000), *x2 = malloc(sizeof(double) * 3000);
  for (int i = 0; i < 3000; ++i) b[i] = 1.0 + (i % 13) * 0.25;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  solve_entries(&a, b, 0, 0, x1);
  cncDeleteContext(c);
  c = cncNewContext();
  cncMakeCurrent(c);
  solve_entries(&a, b, 1, 1, x2);
  cncDeleteContext(c);
  assert_memory_equal(x1, x2, sizeof(double) * 3000);
  assert_true(ts_rel_residual(&a, x2, b) < 1e-9);
  /* Outside Begin/End(MATRIX): a state error. */
  c = cncNewContext();
  cncMakeCurrent(c);
  uint32_t zero = 0;
  double one = 1.0;
  assert_int_equal(cncAddIJCoefficients(1, &zero, &zero, &one), CNC_ERR_STATE);
  cncDeleteContext(c);
  ts_csr_free(&a);
  free(b), free(x1), free(x2);
}

/* Pattern-first assembly: every refused call of every new entry point answers with its status and
 * a message naming the call, and changes nothing: after all of them, the same context assembles
 * the tiny system through the pattern and solves it to the same bits as a clean per-entry run. */
static void pattern_lengths(const double* a, CNCuint* len) {
  for (int i = 0; i < N; ++i) {
    len[i] = 0;
    for (int j = 0; j < N; ++j) len[i] += a[i * N + j] != 0;
  }
}

/* Fills the tiny system through the pattern: row 0 (and row 1 unless plain adds filled it) by
 * row offsets, the other rows by global slot indices; right-hand sides too. */
static void fill_tiny_by_slots(const double* a, const double* b, const CNCuint* len,
                               int with_row1) {
  CNCint64 start = 0;
  for (int i = 0; i < N; ++i) {
    int slot = 0;
    for (int j = 0; j < N; ++j) {
      if (a[i * N + j] == 0) continue;
      if (i == 0 || (with_row1 && i == 1))
        assert_int_equal(
            cncSetIJCoefficientAtRowOffset((CNCuint)i, (CNCuint)j, a[i * N + j], (CNCuint)slot),
            CNC_OK);
      else if (i >= 2)
        assert_int_equal(cncAddIJCoefficientAt((CNCuint)i, (CNCuint)j, a[i * N + j], start + slot),
                         CNC_OK);
      ++slot;
    }
    start += len[i];
    assert_int_equal(cncAddIRightHandSide((CNCuint)i, b[i]), CNC_OK);
  }
}

/* Ends the matrix and the system, solves from x = 0: the solution must be x_clean, bit for bit
 * (the refused calls before changed nothing). */
static void finish_and_expect(const double* x_clean) {
  double x[N];
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  for (int i = 0; i < N; ++i) assert_int_equal(cncSetVariable((CNCuint)i, 0.0), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  for (int i = 0; i < N; ++i) assert_int_equal(cncGetVariable((CNCuint)i, &x[i]), CNC_OK);
  assert_memory_equal(x, x_clean, sizeof x);
}

static void test_pattern_bad_input(void** unused) {
  (void)unused;
  double a[N * N], b[N], x_ref[N], x_clean[N];
  tiny_system(a, b, x_ref);
  /* The clean run: one cncAddIJCoefficient per entry, no pattern. */
  CNCcontext clean = cncNewContext();
  cncMakeCurrent(clean);
  solve_tiny_and_check();
  for (int i = 0; i < N; ++i) assert_int_equal(cncGetVariable((CNCuint)i, &x_clean[i]), CNC_OK);
  cncDeleteContext(clean);

  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  CNCuint len[N];
  pattern_lengths(a, len);
  len[0] += 1; /* one spare slot in row 0 */
  CNCint st = 0;
  /* States: not in INITIAL, not twice, slot calls need a pattern in MATRIX. */
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncEnd(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncEnd");
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  EXPECT(cncSetRowLength(0, 3), CNC_ERR_STATE, "cncSetRowLength");
  EXPECT(cncSetRowLengths(len), CNC_ERR_STATE, "cncSetRowLengths");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, 0), CNC_ERR_STATE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncAddIJCoefficientAt(0, 0, 1.0, 0), CNC_ERR_STATE, "cncAddIJCoefficientAt");
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, 0), CNC_ERR_STATE,
         "cncSetIJCoefficientAtRowOffset"); /* no pattern */
  assert_true(strstr(cncGetLastErrorMessage(), "no pattern") != NULL);
  EXPECT(cncAddIJCoefficientAt(0, 0, 1.0, 0), CNC_ERR_STATE, "cncAddIJCoefficientAt");
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);

  /* Inside the pattern: bad rows, NULL, an overflowing sum (the pattern stays open). */
  assert_int_equal(cncBegin(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_MATRIX_PATTERN);
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncBegin(CNC_MATRIX), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncSolve(), CNC_ERR_STATE, "cncSolve");
  EXPECT(cncSetRowLength(N, 3), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSetRowLength");
  EXPECT(cncSetRowLengths(NULL), CNC_ERR_NULL_POINTER, "cncSetRowLengths");
  EXPECT(cncEnd(CNC_MATRIX), CNC_ERR_STATE, "cncEnd");
  assert_int_equal(cncSetRowLengths(len), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SYSTEM_CONSTRUCTED); /* back where it came from */
  EXPECT(cncSetRowLength(0, 3), CNC_ERR_STATE, "cncSetRowLength");

  /* In MATRIX with the pattern: each bad argument of each entry point. Row 0 holds columns
   * 0, 1 and 3 (3 slots + 1 spare); row 1 holds 0, 1, 2, 4. */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  const CNCint64 row1 = (CNCint64)len[0];
  EXPECT(cncSetIJCoefficientAtRowOffset(N, 0, 1.0, 0), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, N, 1.0, 0), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, NAN, 0), CNC_ERR_NOT_FINITE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, INFINITY, 0), CNC_ERR_NOT_FINITE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, len[0]), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, 0xFFFFFFFFu), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncAddIJCoefficientAt(N, 0, 1.0, 0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, row1 - 1), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncAddIJCoefficientAt"); /* row 0's last slot, not row 1's */
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, row1 + len[1]), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, -1), CNC_ERR_INDEX_OUT_OF_RANGE, "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, INT64_MAX), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, -INFINITY, row1), CNC_ERR_NOT_FINITE, "cncAddIJCoefficientAt");
  /* A slot that holds another column: set it, then try the others on it. */
  assert_int_equal(cncSetIJCoefficientAtRowOffset(0, 0, a[0], 0), CNC_OK);
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 1, 5.0, 0), CNC_ERR_INVALID_VALUE,
         "cncSetIJCoefficientAtRowOffset");
  assert_true(strstr(cncGetLastErrorMessage(), "holds column 0") != NULL);
  EXPECT(cncAddIJCoefficientAt(0, 3, 5.0, 0), CNC_ERR_INVALID_VALUE, "cncAddIJCoefficientAt");
  /* Plain adds fill row 1 (4 slots); a fifth column finds it full, alone or in a bulk call. */
  int filled = 0;
  for (int j = 0; j < N; ++j)
    if (a[1 * N + j] != 0)
      assert_int_equal(cncAddIJCoefficient(1, (CNCuint)j, a[1 * N + j]), CNC_OK), ++filled;
  assert_int_equal(filled, (int)len[1]);
  EXPECT(cncAddIJCoefficient(1, 6, 1.0), CNC_ERR_OVERFLOW, "cncAddIJCoefficient");
  assert_true(strstr(cncGetLastErrorMessage(), "full") != NULL);
  {
    const CNCuint bi[3] = {2, 2, 1}, bj[3] = {2, 3, 5};
    const double bv[3] = {100.0, 100.0, 100.0};
    EXPECT(cncAddIJCoefficients(3, bi, bj, bv), CNC_ERR_OVERFLOW, "cncAddIJCoefficients");
    assert_true(strstr(cncGetLastErrorMessage(), "entry 2") != NULL);
  }
  /* Finish the system: row 0 by offsets (column 0 is set again, same column: allowed), the
   * other rows by global indices, then solve: the refused calls above changed nothing. */
  fill_tiny_by_slots(a, b, len, 0);
  finish_and_expect(x_clean);

  /* The row-wise API with the pattern: a row with more columns than slots is refused and
   * dropped; the matrix assembled next to it is the same. */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
  for (int j = 0; j < N; ++j) assert_int_equal(cncCoefficient((CNCuint)j, 1.0), CNC_OK);
  assert_int_equal(cncRightHandSide(3.0), CNC_OK);
  EXPECT(cncEnd(CNC_ROW), CNC_ERR_OVERFLOW, "cncEnd");
  fill_tiny_by_slots(a, b, len, 1);
  finish_and_expect(x_clean);

  /* A new pattern from SOLVED: End(MATRIX_PATTERN) goes back to SOLVED, which still solves. */
  assert_int_equal(cncBegin(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncSetRowLengths(len), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SOLVED);
  assert_int_equal(cncSolve(), CNC_OK);
  cncDeleteContext(c);

  /* Row lengths adding up past 2^40: refused, the pattern stays open; zero lengths then discard
   * the pattern (hash assembly again, no row limits). */
  c = cncNewContext();
  cncMakeCurrent(c);
  enum { BIG = 300 };
  static CNCuint huge[BIG];
  for (int i = 0; i < BIG; ++i) huge[i] = 0xFFFFFFFFu; /* 300 * (2^32 - 1) > 2^40 */
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, BIG), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncSetRowLengths(huge), CNC_OK);
  EXPECT(cncEnd(CNC_MATRIX_PATTERN), CNC_ERR_OVERFLOW, "cncEnd");
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_MATRIX_PATTERN);
  for (int i = 0; i < BIG; ++i) assert_int_equal(cncSetRowLength((CNCuint)i, 0), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX_PATTERN), CNC_OK); /* all zero: no pattern */
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SYSTEM);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  EXPECT(cncAddIJCoefficientAt(0, 0, 1.0, 0), CNC_ERR_STATE, "cncAddIJCoefficientAt");
  for (CNCuint i = 0; i < BIG; ++i) assert_int_equal(cncAddIJCoefficient(i, i, 2.0), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  cncDeleteContext(c);

  /* Least squares has no pattern-first assembly. */
  c = cncNewContext();
  cncMakeCurrent(c);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 3), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  assert_true(strstr(cncGetLastErrorMessage(), "least-squares") != NULL);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SYSTEM);
  cncDeleteContext(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unknown_enums, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_invalid_values, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_index_out_of_range, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_not_finite, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_null_pointers, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_bad_csr, ts_setup_context, ts_teardown_context),
      cmocka_unit_test(test_absent_backend),
      cmocka_unit_test(test_bulk_coefficients),
      cmocka_unit_test(test_backend_environment),
      cmocka_unit_test(test_pattern_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
