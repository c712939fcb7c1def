/* Shared by the OpenNL-style tests: a double comparison that prints both values on failure
 * (this cmocka's assert_float_equal works in single precision). Include after cmocka.h. */
#ifndef NL_TEST_UTIL_H
#define NL_TEST_UTIL_H
#include <math.h>

static void assert_near_(double a, double b, double tol, const char* file, int line) {
  if (!(fabs(a - b) <= tol)) {
    print_error("%.17g != %.17g (tolerance %g)\n", a, b, tol);
    _fail(file, line);
  }
}
#define assert_double_equal(a, b, tol) assert_near_((a), (b), (tol), __FILE__, __LINE__)
#endif
