/* OpenNL-style least-squares programs against cnc_nl.h: a line fit (with and without a locked
 * variable), row scaling and NL_NORMALIZE_ROWS (weighted fits), and nlRowScaling placement.
 * References: the 2x2 (or 1x1) normal equations solved in closed form here. */
/* cmocka.h needs the standard headers first. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
/* clang-format on */

#include <cnc_nl.h>

#include "nl_test_util.h"

#define NPTS 12
static double X[NPTS], Y[NPTS];

static int setup(void** state) {
  (void)state;
  for (int k = 0; k < NPTS; ++k) { /* y = 2.5 x - 1 plus a deterministic wiggle */
    X[k] = 0.5 * k - 2.0;
    Y[k] = 2.5 * X[k] - 1.0 + 0.3 * sin(1.7 * k);
  }
  return 0;
}

/* Weighted fit y ~ a x + b: minimises sum w_k^2 (a x_k + b - y_k)^2. */
static void reference_fit(const double* w, double* a, double* b) {
  double sxx = 0, sx = 0, s1 = 0, sxy = 0, sy = 0;
  for (int k = 0; k < NPTS; ++k) {
    const double w2 = w[k] * w[k];
    sxx += w2 * X[k] * X[k];
    sx += w2 * X[k];
    s1 += w2;
    sxy += w2 * X[k] * Y[k];
    sy += w2 * Y[k];
  }
  const double det = sxx * s1 - sx * sx;
  *a = (sxy * s1 - sx * sy) / det;
  *b = (sxx * sy - sx * sxy) / det;
}

/* mode 0: plain rows; 1: nlRowScaling(w) before each row; 2: NL_NORMALIZE_ROWS. */
static void nl_fit(int mode, const double* w, double* a, double* b) {
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  if (mode == 2) nlEnable(NL_NORMALIZE_ROWS);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (int k = 0; k < NPTS; ++k) {
    if (mode == 1) nlRowScaling(w[k]); /* OpenNL: set before nlBegin(NL_ROW), for the next row */
    nlBegin(NL_ROW);
    nlCoefficient(0, X[k]);
    nlCoefficient(1, 1.0);
    nlRightHandSide(Y[k]);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  assert_int_equal(nlGetErrorCNC(), 0);
  *a = nlGetVariable(0);
  *b = nlGetVariable(1);
  nlDeleteContext(ctx);
}

static void test_line_fit(void** state) {
  (void)state;
  double ones[NPTS], a, b, ra, rb;
  for (int k = 0; k < NPTS; ++k) ones[k] = 1.0;
  reference_fit(ones, &ra, &rb);
  nl_fit(0, ones, &a, &b);
  assert_double_equal(a, ra, 1e-8);
  assert_double_equal(b, rb, 1e-8);
  assert_true(fabs(a - 2.5) < 0.2); /* sanity: the reference is the line we built */
}

static void test_row_scaling(void** state) {
  (void)state;
  double w[NPTS], a, b, ra, rb;
  for (int k = 0; k < NPTS; ++k) w[k] = 1.0 + (k % 3);
  reference_fit(w, &ra, &rb);
  nl_fit(1, w, &a, &b);
  assert_double_equal(a, ra, 1e-8);
  assert_double_equal(b, rb, 1e-8);
  double ones[NPTS], ua, ub;
  for (int k = 0; k < NPTS; ++k) ones[k] = 1.0;
  reference_fit(ones, &ua, &ub);
  assert_true(fabs(ra - ua) > 1e-6); /* the weights do change the answer */
}

static void test_normalize_rows(void** state) {
  (void)state;
  double w[NPTS], a, b, ra, rb;
  for (int k = 0; k < NPTS; ++k) w[k] = 1.0 / sqrt(X[k] * X[k] + 1.0); /* 1 / row length */
  reference_fit(w, &ra, &rb);
  nl_fit(2, w, &a, &b);
  assert_double_equal(a, ra, 1e-8);
  assert_double_equal(b, rb, 1e-8);
}

/* Same fit with a = 2 locked: b = mean(y - 2 x). */
static void test_line_fit_locked(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlLockVariable(0);
  nlSetVariable(0, 2.0);
  nlBegin(NL_MATRIX);
  for (int k = 0; k < NPTS; ++k) {
    nlBegin(NL_ROW);
    nlCoefficient(0, X[k]);
    nlCoefficient(1, 1.0);
    nlRightHandSide(Y[k]);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  double mean = 0.0;
  for (int k = 0; k < NPTS; ++k) mean += (Y[k] - 2.0 * X[k]) / NPTS;
  assert_double_equal(nlGetVariable(0), 2.0, 0.0);
  assert_double_equal(nlGetVariable(1), mean, 1e-9);
  NLint it = 0;
  nlGetIntegerv(NL_USED_ITERATIONS, &it);
  assert_true(it >= 1 && it <= 5); /* 1 free variable: OpenNL's limit is 5 */
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_line_fit),
      cmocka_unit_test(test_row_scaling),
      cmocka_unit_test(test_normalize_rows),
      cmocka_unit_test(test_line_fit_locked),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
