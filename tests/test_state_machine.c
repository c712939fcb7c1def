/* The context state machine of cnc.h: every call made in a state that does not allow it returns
 * CNC_ERR_STATE, leaves the state unchanged and the context usable (a correct sequence afterwards
 * still solves, checked against a dense Cholesky solve). Also: no current context, the sticky
 * first error, cncClearError, messages naming the call, status strings, versions. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cnc.h"
#include "test_support.h"

enum { N = 6 };

/* The tridiagonal system used throughout, and its solution by dense Cholesky. */
static void tiny_system(double* a_dense, double* b, double* x_ref) {
  memset(a_dense, 0, sizeof(double) * N * N);
  for (int i = 0; i < N; ++i) {
    a_dense[i * N + i] = 3.0;
    if (i > 0) a_dense[i * N + i - 1] = -1.0;
    if (i + 1 < N) a_dense[i * N + i + 1] = -1.0;
    b[i] = 1.0 + i;
  }
  assert_int_equal(ts_cholesky_solve(N, a_dense, b, x_ref), 0);
}

static void add_tiny_matrix(void) {
  double a[N * N], b[N], x[N];
  tiny_system(a, b, x);
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j)
      if (a[i * N + j] != 0) assert_int_equal(cncAddIJCoefficient(i, j, a[i * N + j]), CNC_OK);
    assert_int_equal(cncAddIRightHandSide(i, b[i]), CNC_OK);
  }
}

static void check_tiny_solution(void) {
  double a[N * N], b[N], x_ref[N], x[N];
  tiny_system(a, b, x_ref);
  for (int i = 0; i < N; ++i) assert_int_equal(cncGetVariable(i, &x[i]), CNC_OK);
  assert_true(ts_rel_diff(N, x, x_ref) < 1e-5);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
}

static CNCint state(void) {
  CNCint s = -1;
  assert_int_equal(cncGetIntegerv(CNC_STATE, &s), CNC_OK);
  return s;
}

/* Asserts that `status` is CNC_ERR_STATE, the state is still `expected`, and the last message
 * names `call`. */
static void expect_state_error(CNCstatus status, CNCint expected, const char* call, int line) {
  if (status != CNC_ERR_STATE)
    fail_msg("line %d: %s returned %d (%s), expected CNC_ERR_STATE", line, call, status,
             cncStatusString(status));
  if (state() != expected)
    fail_msg("line %d: %s changed the state to 0x%x (expected 0x%x)", line, call, state(),
             expected);
  const char* msg = cncGetLastErrorMessage();
  assert_non_null(msg);
  if (!strstr(msg, call)) fail_msg("line %d: message '%s' does not name %s", line, msg, call);
}
#define EXPECT_STATE(call_expr, st, name) expect_state_error((call_expr), (st), (name), __LINE__)

/* Walks through every state of a plain system, trying the forbidden calls in each. */
static void test_illegal_transitions_plain(void** unused) {
  (void)unused;
  CNCboolean locked;
  double v;
  assert_int_equal(state(), CNC_STATE_INITIAL);
  /* INITIAL */
  EXPECT_STATE(cncBegin(CNC_MATRIX), CNC_STATE_INITIAL, "cncBegin");
  EXPECT_STATE(cncBegin(CNC_ROW), CNC_STATE_INITIAL, "cncBegin");
  EXPECT_STATE(cncEnd(CNC_SYSTEM), CNC_STATE_INITIAL, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_MATRIX), CNC_STATE_INITIAL, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_ROW), CNC_STATE_INITIAL, "cncEnd");
  EXPECT_STATE(cncSolve(), CNC_STATE_INITIAL, "cncSolve");
  EXPECT_STATE(cncCoefficient(0, 1.0), CNC_STATE_INITIAL, "cncCoefficient");
  EXPECT_STATE(cncAddIJCoefficient(0, 0, 1.0), CNC_STATE_INITIAL, "cncAddIJCoefficient");
  EXPECT_STATE(cncSetVariable(0, 1.0), CNC_STATE_INITIAL, "cncSetVariable");
  EXPECT_STATE(cncLockVariable(0), CNC_STATE_INITIAL, "cncLockVariable");
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  /* The first error is sticky. */
  assert_int_equal(cncGetError(), CNC_ERR_STATE);
  assert_non_null(strstr(cncGetErrorMessage(), "cncBegin"));

  /* SYSTEM */
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(state(), CNC_STATE_SYSTEM);
  EXPECT_STATE(cncBegin(CNC_SYSTEM), CNC_STATE_SYSTEM, "cncBegin");
  EXPECT_STATE(cncBegin(CNC_ROW), CNC_STATE_SYSTEM, "cncBegin");
  EXPECT_STATE(cncEnd(CNC_MATRIX), CNC_STATE_SYSTEM, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_ROW), CNC_STATE_SYSTEM, "cncEnd");
  EXPECT_STATE(cncSolve(), CNC_STATE_SYSTEM, "cncSolve");
  EXPECT_STATE(cncCoefficient(0, 1.0), CNC_STATE_SYSTEM, "cncCoefficient");
  EXPECT_STATE(cncRightHandSide(1.0), CNC_STATE_SYSTEM, "cncRightHandSide");
  EXPECT_STATE(cncAddIJCoefficient(0, 0, 1.0), CNC_STATE_SYSTEM, "cncAddIJCoefficient");
  EXPECT_STATE(cncAddIRightHandSide(0, 1.0), CNC_STATE_SYSTEM, "cncAddIRightHandSide");
  EXPECT_STATE(cncSolverParameteri(CNC_NB_VARIABLES, 4), CNC_STATE_SYSTEM, "cncSolverParameteri");
  EXPECT_STATE(cncSolverParameteri(CNC_NB_SYSTEMS, 2), CNC_STATE_SYSTEM, "cncSolverParameteri");
  EXPECT_STATE(cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE), CNC_STATE_SYSTEM,
               "cncSolverParameteri");
  /* Variables and locks are allowed here; solver parameters too. */
  assert_int_equal(cncSetVariable(0, 0.0), CNC_OK);
  assert_int_equal(cncLockVariable(1), CNC_OK);
  assert_int_equal(cncVariableIsLocked(1, &locked), CNC_OK);
  assert_int_equal(locked, CNC_TRUE);
  assert_int_equal(cncUnlockVariable(1), CNC_OK);
  assert_int_equal(cncVariableIsLocked(1, &locked), CNC_OK);
  assert_int_equal(locked, CNC_FALSE);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  CNCint nv = 0;
  assert_int_equal(cncGetIntegerv(CNC_NB_VARIABLES, &nv), CNC_OK);
  assert_int_equal(nv, N); /* the refused change did not happen */

  /* MATRIX */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  assert_int_equal(state(), CNC_STATE_MATRIX);
  EXPECT_STATE(cncBegin(CNC_SYSTEM), CNC_STATE_MATRIX, "cncBegin");
  EXPECT_STATE(cncBegin(CNC_MATRIX), CNC_STATE_MATRIX, "cncBegin");
  EXPECT_STATE(cncEnd(CNC_SYSTEM), CNC_STATE_MATRIX, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_ROW), CNC_STATE_MATRIX, "cncEnd");
  EXPECT_STATE(cncSolve(), CNC_STATE_MATRIX, "cncSolve");
  EXPECT_STATE(cncCoefficient(0, 1.0), CNC_STATE_MATRIX, "cncCoefficient");
  EXPECT_STATE(cncRightHandSide(1.0), CNC_STATE_MATRIX, "cncRightHandSide");
  EXPECT_STATE(cncRowScaling(2.0), CNC_STATE_MATRIX, "cncRowScaling");
  EXPECT_STATE(cncLockVariable(0), CNC_STATE_MATRIX, "cncLockVariable");
  EXPECT_STATE(cncUnlockVariable(0), CNC_STATE_MATRIX, "cncUnlockVariable");
  EXPECT_STATE(cncSolverParameterd(CNC_THRESHOLD, 1e-8), CNC_STATE_MATRIX, "cncSolverParameterd");
  EXPECT_STATE(cncSolverParameteri(CNC_MAX_ITERATIONS, 10), CNC_STATE_MATRIX,
               "cncSolverParameteri");
  EXPECT_STATE(cncSolverParameteri(CNC_NB_VARIABLES, 3), CNC_STATE_MATRIX, "cncSolverParameteri");
  EXPECT_STATE(cncSetVariable(0, 1.0), CNC_STATE_MATRIX, "cncSetVariable");
  EXPECT_STATE(cncMultiSetVariable(0, 0, 1.0), CNC_STATE_MATRIX, "cncMultiSetVariable");
  /* Variables can be read in MATRIX state. */
  assert_int_equal(cncGetVariable(0, &v), CNC_OK);

  /* ROW: the system is assembled row-wise (row k is the equation of variable k); the forbidden
   * calls are tried inside the first row and must not disturb it. */
  double a[N * N], b[N], x_ref[N];
  tiny_system(a, b, x_ref);
  for (int i = 0; i < N; ++i) {
    assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
    assert_int_equal(state(), CNC_STATE_ROW);
    if (i == 0) {
      EXPECT_STATE(cncBegin(CNC_ROW), CNC_STATE_ROW, "cncBegin");
      EXPECT_STATE(cncBegin(CNC_MATRIX), CNC_STATE_ROW, "cncBegin");
      EXPECT_STATE(cncBegin(CNC_SYSTEM), CNC_STATE_ROW, "cncBegin");
      EXPECT_STATE(cncEnd(CNC_MATRIX), CNC_STATE_ROW, "cncEnd");
      EXPECT_STATE(cncEnd(CNC_SYSTEM), CNC_STATE_ROW, "cncEnd");
      EXPECT_STATE(cncSolve(), CNC_STATE_ROW, "cncSolve");
      EXPECT_STATE(cncAddIJCoefficient(0, 0, 1.0), CNC_STATE_ROW, "cncAddIJCoefficient");
      EXPECT_STATE(cncAddIRightHandSide(0, 1.0), CNC_STATE_ROW, "cncAddIRightHandSide");
      EXPECT_STATE(cncLockVariable(0), CNC_STATE_ROW, "cncLockVariable");
      EXPECT_STATE(cncSolverParameterd(CNC_THRESHOLD, 1e-8), CNC_STATE_ROW, "cncSolverParameterd");
      EXPECT_STATE(cncSolverParameteri(CNC_NB_SYSTEMS, 2), CNC_STATE_ROW, "cncSolverParameteri");
      EXPECT_STATE(cncSetVariable(0, 1.0), CNC_STATE_ROW, "cncSetVariable");
      assert_int_equal(cncGetVariable(0, &v), CNC_OK);
    }
    for (int j = 0; j < N; ++j)
      if (a[i * N + j] != 0) assert_int_equal(cncCoefficient(j, a[i * N + j]), CNC_OK);
    assert_int_equal(cncRightHandSide(b[i]), CNC_OK);
    assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
    assert_int_equal(state(), CNC_STATE_MATRIX);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  check_tiny_solution();
  assert_int_equal(cncGetError(), CNC_ERR_STATE);
  assert_non_null(strstr(cncGetErrorMessage(), "cncBegin"));
}

/* The later states: MATRIX_CONSTRUCTED, SYSTEM_CONSTRUCTED, SOLVED, and the ways out of SOLVED. */
static void test_illegal_transitions_after_matrix(void** unused) {
  (void)unused;
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  add_tiny_matrix();
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(state(), CNC_STATE_MATRIX_CONSTRUCTED);
  /* MATRIX_CONSTRUCTED */
  EXPECT_STATE(cncSolve(), CNC_STATE_MATRIX_CONSTRUCTED, "cncSolve");
  EXPECT_STATE(cncBegin(CNC_ROW), CNC_STATE_MATRIX_CONSTRUCTED, "cncBegin");
  EXPECT_STATE(cncBegin(CNC_MATRIX), CNC_STATE_MATRIX_CONSTRUCTED, "cncBegin");
  EXPECT_STATE(cncEnd(CNC_MATRIX), CNC_STATE_MATRIX_CONSTRUCTED, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_ROW), CNC_STATE_MATRIX_CONSTRUCTED, "cncEnd");
  EXPECT_STATE(cncAddIJCoefficient(0, 0, 1.0), CNC_STATE_MATRIX_CONSTRUCTED, "cncAddIJCoefficient");
  EXPECT_STATE(cncCoefficient(0, 1.0), CNC_STATE_MATRIX_CONSTRUCTED, "cncCoefficient");
  EXPECT_STATE(cncLockVariable(0), CNC_STATE_MATRIX_CONSTRUCTED, "cncLockVariable");
  EXPECT_STATE(cncSolverParameteri(CNC_NB_VARIABLES, 3), CNC_STATE_MATRIX_CONSTRUCTED,
               "cncSolverParameteri");
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(state(), CNC_STATE_SYSTEM_CONSTRUCTED);
  /* SYSTEM_CONSTRUCTED */
  EXPECT_STATE(cncBegin(CNC_ROW), CNC_STATE_SYSTEM_CONSTRUCTED, "cncBegin");
  EXPECT_STATE(cncEnd(CNC_SYSTEM), CNC_STATE_SYSTEM_CONSTRUCTED, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_MATRIX), CNC_STATE_SYSTEM_CONSTRUCTED, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_ROW), CNC_STATE_SYSTEM_CONSTRUCTED, "cncEnd");
  EXPECT_STATE(cncAddIJCoefficient(0, 0, 1.0), CNC_STATE_SYSTEM_CONSTRUCTED, "cncAddIJCoefficient");
  EXPECT_STATE(cncLockVariable(0), CNC_STATE_SYSTEM_CONSTRUCTED, "cncLockVariable");
  EXPECT_STATE(cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE), CNC_STATE_SYSTEM_CONSTRUCTED,
               "cncSolverParameteri");
  /* A solver parameter is fine here. */
  assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 1000), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(state(), CNC_STATE_SOLVED);
  check_tiny_solution();
  /* SOLVED */
  EXPECT_STATE(cncBegin(CNC_ROW), CNC_STATE_SOLVED, "cncBegin");
  EXPECT_STATE(cncEnd(CNC_SYSTEM), CNC_STATE_SOLVED, "cncEnd");
  EXPECT_STATE(cncEnd(CNC_MATRIX), CNC_STATE_SOLVED, "cncEnd");
  EXPECT_STATE(cncCoefficient(0, 1.0), CNC_STATE_SOLVED, "cncCoefficient");
  EXPECT_STATE(cncLockVariable(0), CNC_STATE_SOLVED, "cncLockVariable");
  EXPECT_STATE(cncSolverParameteri(CNC_NB_VARIABLES, 3), CNC_STATE_SOLVED, "cncSolverParameteri");
  /* Solving again is allowed and gives the same answer. */
  assert_int_equal(cncSolve(), CNC_OK);
  check_tiny_solution();
  /* Start over from SOLVED: a new system on the same variables still solves. */
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(state(), CNC_STATE_SYSTEM);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  add_tiny_matrix();
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  check_tiny_solution();
  /* And from SOLVED, Begin(MATRIX) assembles a new matrix for the same variables. */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  assert_int_equal(state(), CNC_STATE_MATRIX);
  add_tiny_matrix();
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  check_tiny_solution();
  assert_int_equal(cncGetError(), CNC_ERR_STATE); /* still the first error */
}

/* Row-wise plain assembly after errors inside ROW: the errors leave the row intact. */
static void test_row_errors_keep_row(void** unused) {
  (void)unused;
  double a[N * N], b[N], x_ref[N];
  tiny_system(a, b, x_ref);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int i = 0; i < N; ++i) {
    assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
    EXPECT_STATE(cncAddIJCoefficient(i, i, 100.0), CNC_STATE_ROW, "cncAddIJCoefficient");
    for (int j = 0; j < N; ++j)
      if (a[i * N + j] != 0) assert_int_equal(cncCoefficient(j, a[i * N + j]), CNC_OK);
    EXPECT_STATE(cncEnd(CNC_MATRIX), CNC_STATE_ROW, "cncEnd");
    assert_int_equal(cncRightHandSide(b[i]), CNC_OK);
    assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  check_tiny_solution();
}

static void test_sticky_error_and_clear(void** unused) {
  (void)unused;
  assert_int_equal(cncGetError(), CNC_OK);
  assert_string_equal(cncGetErrorMessage(), "");
  assert_string_equal(cncGetLastErrorMessage(), "");
  assert_int_equal(cncBegin(CNC_ROW), CNC_ERR_STATE);
  assert_int_equal(cncSolverParameteri(0x7777, 1), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncGetError(), CNC_ERR_STATE); /* first error stays */
  assert_non_null(strstr(cncGetErrorMessage(), "cncBegin"));
  /* The most recent failure is the other one. */
  assert_non_null(strstr(cncGetLastErrorMessage(), "cncSolverParameteri"));
  /* Successful calls do not clear it. */
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncGetError(), CNC_ERR_STATE);
  assert_int_equal(cncClearError(), CNC_OK);
  assert_int_equal(cncGetError(), CNC_OK);
  assert_string_equal(cncGetErrorMessage(), "");
  /* A new error after clearing becomes the sticky one. */
  assert_int_equal(cncSolverParameteri(0x7777, 1), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncGetError(), CNC_ERR_INVALID_ENUM);
  assert_non_null(strstr(cncGetErrorMessage(), "cncSolverParameteri"));
  /* The context still works. */
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  add_tiny_matrix();
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  check_tiny_solution();
}

/* Messages name the call and the offending values. */
static void test_messages_name_call_and_values(void** unused) {
  (void)unused;
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 20), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncAddIJCoefficient(12, 7, NAN), CNC_ERR_NOT_FINITE);
  const char* m = cncGetLastErrorMessage();
  assert_non_null(strstr(m, "cncAddIJCoefficient"));
  assert_non_null(strstr(m, "12"));
  assert_non_null(strstr(m, "7"));
  assert_non_null(strstr(m, "nan"));
  assert_int_equal(cncAddIJCoefficient(3, 4711, 1.0), CNC_ERR_INDEX_OUT_OF_RANGE);
  m = cncGetLastErrorMessage();
  assert_non_null(strstr(m, "cncAddIJCoefficient"));
  assert_non_null(strstr(m, "4711"));
  double v;
  assert_int_equal(cncGetVariable(999, &v), CNC_ERR_INDEX_OUT_OF_RANGE);
  m = cncGetLastErrorMessage();
  assert_non_null(strstr(m, "cncGetVariable"));
  assert_non_null(strstr(m, "999"));
  /* The sticky message is still the first one. */
  assert_non_null(strstr(cncGetErrorMessage(), "nan"));
}

static void test_no_context(void** unused) {
  (void)unused;
  CNCcontext mine = cncGetCurrent();
  assert_non_null(mine);
  assert_int_equal(cncMakeCurrent(NULL), CNC_OK);
  assert_null(cncGetCurrent());
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_ERR_NO_CONTEXT);
  const char* m = cncGetErrorMessage();
  assert_non_null(m);
  assert_true(strlen(m) > 0);
  assert_non_null(strstr(m, "cncBegin"));
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 3), CNC_ERR_NO_CONTEXT);
  assert_non_null(strstr(cncGetErrorMessage(), "cncSolverParameteri"));
  CNCint v;
  assert_int_equal(cncGetIntegerv(CNC_STATE, &v), CNC_ERR_NO_CONTEXT);
  assert_int_equal(cncSolve(), CNC_ERR_NO_CONTEXT);
  double x[2] = {0, 0}, b[2] = {1, 1}, val[2] = {1, 1};
  CNCint64 rp[3] = {0, 1, 2};
  CNCuint ci[2] = {0, 1};
  assert_int_equal(cncSolveCSR(2, rp, ci, val, 0, 1, b, x), CNC_ERR_NO_CONTEXT);
  assert_int_equal(cncClearError(), CNC_ERR_NO_CONTEXT);
  /* Back to the context: it is untouched and works. */
  assert_int_equal(cncMakeCurrent(mine), CNC_OK);
  assert_ptr_equal(cncGetCurrent(), mine);
  assert_int_equal(cncGetError(), CNC_OK);
  assert_int_equal(state(), CNC_STATE_INITIAL);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  add_tiny_matrix();
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  check_tiny_solution();
}

static void test_delete_current_clears_it(void** unused) {
  (void)unused;
  CNCcontext mine = cncGetCurrent();
  CNCcontext other = cncNewContext();
  assert_non_null(other);
  assert_ptr_not_equal(other, mine);
  assert_ptr_equal(cncGetCurrent(), mine); /* NewContext does not make it current */
  assert_int_equal(cncMakeCurrent(other), CNC_OK);
  assert_ptr_equal(cncGetCurrent(), other);
  cncDeleteContext(other);
  assert_null(cncGetCurrent());
  cncDeleteContext(NULL); /* ignored */
  assert_int_equal(cncMakeCurrent(mine), CNC_OK);
  /* Deleting a context that is not current keeps the current one. */
  CNCcontext third = cncNewContext();
  cncDeleteContext(third);
  assert_ptr_equal(cncGetCurrent(), mine);
}

/* 64-bit parameters read back exactly (not through a double): above 2^53 and at INT64_MAX. */
static void test_int64_parameters_exact(void** unused) {
  (void)unused;
  const CNCint64 values[] = {((CNCint64)1 << 53) + 1, INT64_MAX, 0};
  for (size_t k = 0; k < sizeof values / sizeof values[0]; ++k) {
    CNCint64 v = -1;
    assert_int_equal(cncSolverParameteri64(CNC_NNZ_HINT, values[k]), CNC_OK);
    assert_int_equal(cncGetInteger64v(CNC_NNZ_HINT, &v), CNC_OK);
    assert_true(v == values[k]);
    assert_int_equal(cncSolverParameteri64(CNC_MAX_ITERATIONS, values[k] > 0 ? values[k] : 1),
                     CNC_OK);
    assert_int_equal(cncGetInteger64v(CNC_MAX_ITERATIONS, &v), CNC_OK);
    assert_true(v == (values[k] > 0 ? values[k] : 1));
    CNCint i32 = 0;
    assert_int_equal(cncGetIntegerv(CNC_MAX_ITERATIONS, &i32), CNC_OK);
    assert_int_equal(i32,
                     values[k] > INT32_MAX ? INT32_MAX : (CNCint)(values[k] > 0 ? values[k] : 1));
  }
}

static void test_status_strings(void** unused) {
  (void)unused;
  static const struct {
    int code;
    const char* name;
  } codes[] = {
      {CNC_OK, "CNC_OK"},
      {CNC_ERR_STATE, "CNC_ERR_STATE"},
      {CNC_ERR_INVALID_ENUM, "CNC_ERR_INVALID_ENUM"},
      {CNC_ERR_INVALID_VALUE, "CNC_ERR_INVALID_VALUE"},
      {CNC_ERR_INDEX_OUT_OF_RANGE, "CNC_ERR_INDEX_OUT_OF_RANGE"},
      {CNC_ERR_NOT_FINITE, "CNC_ERR_NOT_FINITE"},
      {CNC_ERR_SIZE_MISMATCH, "CNC_ERR_SIZE_MISMATCH"},
      {CNC_ERR_OUT_OF_MEMORY, "CNC_ERR_OUT_OF_MEMORY"},
      {CNC_ERR_NO_CONTEXT, "CNC_ERR_NO_CONTEXT"},
      {CNC_ERR_BACKEND_UNAVAILABLE, "CNC_ERR_BACKEND_UNAVAILABLE"},
      {CNC_ERR_DEVICE, "CNC_ERR_DEVICE"},
      {CNC_ERR_UNSUPPORTED, "CNC_ERR_UNSUPPORTED"},
      {CNC_ERR_OVERFLOW, "CNC_ERR_OVERFLOW"},
      {CNC_ERR_NULL_POINTER, "CNC_ERR_NULL_POINTER"},
      {CNC_ERR_INTERNAL, "CNC_ERR_INTERNAL"},
      {CNC_ERR_NO_FP64, "CNC_ERR_NO_FP64"},
  };
  const size_t count = sizeof codes / sizeof codes[0];
  for (size_t i = 0; i < count; ++i) {
    const char* s = cncStatusString(codes[i].code);
    assert_non_null(s);
    /* The string starts with the code's name ("CNC_ERR_STATE: ..."); prefixes of longer names
     * (CNC_ERR_NO_CONTEXT vs CNC_ERR_NO_FP64) are told apart by the character after it. */
    size_t len = strlen(codes[i].name);
    if (strncmp(s, codes[i].name, len) != 0 || (s[len] != '\0' && s[len] != ':'))
      fail_msg("cncStatusString(%d) = '%s', expected to start with %s", codes[i].code, s,
               codes[i].name);
    for (size_t j = 0; j < i; ++j) assert_string_not_equal(s, cncStatusString(codes[j].code));
  }
  /* Unknown codes still give a string. */
  assert_non_null(cncStatusString(-999));
  assert_non_null(cncStatusString(42));
  assert_true(strlen(cncStatusString(-999)) > 0);
}

static void test_versions_and_strings(void** unused) {
  (void)unused;
  int ma = -1, mi = -1, pa = -1;
  cncGetVersion(&ma, &mi, &pa);
  assert_int_equal(ma, CNC_VERSION_MAJOR);
  assert_int_equal(mi, CNC_VERSION_MINOR);
  assert_int_equal(pa, CNC_VERSION_PATCH);
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", CNC_VERSION_MAJOR, CNC_VERSION_MINOR,
           CNC_VERSION_PATCH);
  assert_string_equal(cncVersionString(), expect);
  const char* s = NULL;
  assert_int_equal(cncGetString(CNC_VERSION_STRING, &s), CNC_OK);
  assert_string_equal(s, expect);
  /* Before the first solve: "" */
  assert_int_equal(cncGetString(CNC_BACKEND_NAME, &s), CNC_OK);
  assert_string_equal(s, "");
  assert_int_equal(cncGetString(CNC_FORMAT_NAME, &s), CNC_OK);
  assert_string_equal(s, "");
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_NONE);
  assert_int_equal(cncBackendAvailable(CNC_BACKEND_CPU), CNC_TRUE);
  assert_int_equal(cncBackendAvailable(0x1234), CNC_FALSE);
  /* Defaults documented in cnc.h. */
  double thr = 0;
  assert_int_equal(cncGetDoublev(CNC_THRESHOLD, &thr), CNC_OK);
  assert_true(fabs(thr - 1e-6) < 1e-20);
  CNCint v = 0;
  assert_int_equal(cncGetIntegerv(CNC_PRECISION, &v), CNC_OK);
  assert_int_equal(v, CNC_DOUBLE);
  assert_int_equal(cncGetIntegerv(CNC_MATRIX_FORMAT, &v), CNC_OK);
  assert_int_equal(v, CNC_FORMAT_AUTO);
  assert_int_equal(cncGetIntegerv(CNC_PRECONDITIONER, &v), CNC_OK);
  assert_int_equal(v, CNC_PRECOND_JACOBI);
  assert_int_equal(cncGetIntegerv(CNC_NB_SYSTEMS, &v), CNC_OK);
  assert_int_equal(v, 1);
  assert_int_equal(cncGetIntegerv(CNC_LEAST_SQUARES, &v), CNC_OK);
  assert_int_equal(v, CNC_FALSE);
  CNCboolean on = CNC_TRUE;
  assert_int_equal(cncIsEnabled(CNC_VERBOSE, &on), CNC_OK);
  assert_int_equal(on, CNC_FALSE);
  assert_int_equal(cncEnable(CNC_NORMALIZE_ROWS), CNC_OK);
  assert_int_equal(cncIsEnabled(CNC_NORMALIZE_ROWS, &on), CNC_OK);
  assert_int_equal(on, CNC_TRUE);
  assert_int_equal(cncDisable(CNC_NORMALIZE_ROWS), CNC_OK);
  assert_int_equal(cncIsEnabled(CNC_NORMALIZE_ROWS, &on), CNC_OK);
  assert_int_equal(on, CNC_FALSE);
  /* Parameters read back what was set. */
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 3.5e-9), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_THRESHOLD, &thr), CNC_OK);
  assert_true(thr == 3.5e-9);
  assert_int_equal(cncSolverParameterd(CNC_MAX_ITERATIONS, 77.0), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_MAX_ITERATIONS, &v), CNC_OK);
  assert_int_equal(v, 77);
  assert_int_equal(cncSolverParameteri64(CNC_NNZ_HINT, (CNCint64)1 << 33), CNC_OK);
  CNCint64 v64 = 0;
  assert_int_equal(cncGetInteger64v(CNC_NNZ_HINT, &v64), CNC_OK);
  assert_true(v64 == ((CNCint64)1 << 33));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_illegal_transitions_plain, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_illegal_transitions_after_matrix, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_row_errors_keep_row, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_sticky_error_and_clear, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_messages_name_call_and_values, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_no_context, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_delete_current_clears_it, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_int64_parameters_exact, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_status_strings, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_versions_and_strings, ts_setup_context,
                                      ts_teardown_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
