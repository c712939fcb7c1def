/* An OpenNL 3.x program (CNC_NL_LEGACY_3): nlRowParameterd(NL_RIGHT_HAND_SIDE) before the row,
 * plain-mode rows meaning sum a x + c = 0 (so x = -A^-1 c), nlGetIntergerv, the NL_CNC_* solver
 * ids; least-squares rows keep (a x - c)^2. References in closed form. */
#define CNC_NL_LEGACY_3
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

/* [4 1; 1 3] x + [1; 2] = 0  ->  x = -(1/11, 7/11). */
static void test_plain_sign(void** state) {
  (void)state;
  nlNewContext(); /* nlNewContextLegacy3 */
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nlSolverParameteri(NL_SOLVER, NL_CNC_DOUBLE_CRS);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  nlRowParameterd(NL_RIGHT_HAND_SIDE, 1.0);
  nlBegin(NL_ROW);
  nlCoefficient(0, 4.0);
  nlCoefficient(1, 1.0);
  nlEnd(NL_ROW);
  nlRowParameterd(NL_RIGHT_HAND_SIDE, 2.0);
  nlBegin(NL_ROW);
  nlCoefficient(0, 1.0);
  nlCoefficient(1, 3.0);
  nlEnd(NL_ROW);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  assert_double_equal(nlGetVariable(0), -1.0 / 11.0, 1e-9);
  assert_double_equal(nlGetVariable(1), -7.0 / 11.0, 1e-9);
  NLint it = 0, solver = 0;
  nlGetIntergerv(NL_USED_ITERATIONS, &it);
  nlGetIntergerv(NL_SOLVER, &solver);
  assert_true(it >= 1);
  assert_int_equal(solver, NL_CG);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(nlGetCurrent());
}

/* Least squares: mean of samples, rows "x = c_k" weighted by NL_ROW_SCALING. */
static void test_least_squares(void** state) {
  (void)state;
  nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 1);
  nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);
  nlSolverParameteri(NL_SOLVER, NL_CNC_FLOAT_CRS);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  const double c[3] = {1.0, 2.0, 6.0}, w[3] = {1.0, 1.0, 2.0};
  double num = 0.0, den = 0.0;
  for (int k = 0; k < 3; ++k) {
    nlRowParameterd(NL_ROW_SCALING, w[k]);
    nlRowParameterd(NL_RIGHT_HAND_SIDE, c[k]);
    nlBegin(NL_ROW);
    nlCoefficient(0, 1.0);
    nlEnd(NL_ROW);
    num += w[k] * w[k] * c[k];
    den += w[k] * w[k];
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  assert_double_equal(nlGetVariable(0), num / den, 1e-5); /* single precision */
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(nlGetCurrent());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_sign),
      cmocka_unit_test(test_least_squares),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
