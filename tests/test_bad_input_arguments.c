/* Bad arguments through the public API: unknown enums, out-of-range values and indices, NaN/Inf,
 * NULL pointers. Every refused call must return its documented status, and the same context must
 * then still solve a system correctly (checked against a dense Cholesky solve done here). */
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

#include "bad_input_support.h"
#include "cnc.h"
#include "test_support.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unknown_enums, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_invalid_values, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_index_out_of_range, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_not_finite, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_null_pointers, ts_setup_context, ts_teardown_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
