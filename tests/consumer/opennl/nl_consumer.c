/* An OpenNL program built against an installed cnc, unchanged but for linking: it includes
 * OpenNL's <NL/nl.h> and links -lcnc_opennl. Two systems with known solutions:
 *   1. a least-squares line fit through points that lie exactly on y = 3 t + 1;
 *   2. a symmetric system, tridiag(-1, 4, -1) x = b with b = A (1, 2, ..., n), one locked
 *      variable (x_0 = 1) moved to the right-hand side.
 * Exits non-zero with a message when an answer is wrong. */
#include <NL/nl.h>
#include <math.h>
#include <stdio.h>

static int fit_line(void) {
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (int k = 0; k < 10; ++k) {
    nlBegin(NL_ROW);
    nlCoefficient(0, (NLdouble)k);
    nlCoefficient(1, 1.0);
    nlRightHandSide(3.0 * k + 1.0);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  NLboolean ok = nlSolve();
  double a = nlGetVariable(0), b = nlGetVariable(1);
  nlDeleteContext(ctx);
  printf("nl_consumer: least squares y = %.9f t + %.9f (expected 3 t + 1)\n", a, b);
  if (!ok || fabs(a - 3.0) > 1e-8 || fabs(b - 1.0) > 1e-8) {
    fprintf(stderr, "nl_consumer: FAILED: wrong least-squares fit\n");
    return 1;
  }
  return 0;
}

static int symmetric_system(void) {
  enum { N = 40 };
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, N);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlSetVariable(0, 1.0);
  nlLockVariable(0);
  nlBegin(NL_MATRIX);
  /* Plain (not least-squares) mode: the k-th row is the equation of the k-th free variable. */
  for (int i = 1; i < N; ++i) {
    double b = 4.0 * (i + 1);
    nlBegin(NL_ROW);
    nlCoefficient((NLuint)i - 1, -1.0);
    b -= i;
    nlCoefficient((NLuint)i, 4.0);
    if (i + 1 < N) {
      nlCoefficient((NLuint)i + 1, -1.0);
      b -= i + 2;
    }
    nlRightHandSide(b);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  NLboolean ok = nlSolve();
  double worst = 0;
  for (int i = 0; i < N; ++i) {
    double e = fabs(nlGetVariable((NLuint)i) - (i + 1));
    if (e > worst) worst = e;
  }
  NLint iterations = 0;
  nlGetIntegerv(NL_USED_ITERATIONS, &iterations);
  nlDeleteContext(ctx);
  printf("nl_consumer: symmetric system, %d iterations, max error %.3e\n", (int)iterations, worst);
  if (!ok || worst > 1e-8) {
    fprintf(stderr, "nl_consumer: FAILED: wrong solution of the symmetric system\n");
    return 1;
  }
  return 0;
}

int main(void) {
  int failures = fit_line() + symmetric_system();
  if (failures == 0) printf("nl_consumer: OK\n");
  return failures ? 1 : 0;
}
