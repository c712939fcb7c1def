/* Helpers shared by the test_bad_input_* suites (see bad_input_support.h). */
#define _POSIX_C_SOURCE 200809L
#include "bad_input_support.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_support.h"

void tiny_system(double* a, double* b, double* x_ref) {
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
void solve_tiny_and_check(void) {
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
void expect(CNCstatus got, CNCstatus want, const char* call, int line) {
  if (got != want)
    fail_msg("line %d: %s returned %d (%s), expected %d (%s)", line, call, got,
             cncStatusString(got), want, cncStatusString(want));
  if (!strstr(cncGetLastErrorMessage(), call))
    fail_msg("line %d: message '%s' does not name %s", line, cncGetLastErrorMessage(), call);
}
