/* A program written as a user of an installed cnc would: only <cnc.h> and -lcnc. Solves a small
 * tridiagonal system whose exact solution is known (x_i = 1 + i) and checks it. */
#include <cnc.h>
#include <math.h>
#include <stdio.h>

int main(void) {
  enum { N = 50 };
  CNCcontext ctx = cncNewContext();
  if (!ctx || cncMakeCurrent(ctx) != CNC_OK) return 1;
  cncSolverParameteri(CNC_NB_VARIABLES, N);
  cncSolverParameterd(CNC_THRESHOLD, 1e-12);
  cncBegin(CNC_SYSTEM);
  cncBegin(CNC_MATRIX);
  for (int i = 0; i < N; ++i) {
    /* A = tridiag(-1, 3, -1); b = A * (1, 2, ..., N). */
    double b = 3.0 * (1 + i);
    cncAddIJCoefficient((CNCuint)i, (CNCuint)i, 3.0);
    if (i > 0) cncAddIJCoefficient((CNCuint)i, (CNCuint)i - 1, -1.0), b -= i;
    if (i + 1 < N) cncAddIJCoefficient((CNCuint)i, (CNCuint)i + 1, -1.0), b -= i + 2;
    cncAddIRightHandSide((CNCuint)i, b);
  }
  cncEnd(CNC_MATRIX);
  cncEnd(CNC_SYSTEM);
  if (cncSolve() != CNC_OK || cncGetError() != CNC_OK) {
    fprintf(stderr, "consumer: %s\n", cncGetErrorMessage());
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < N; ++i) {
    double x = 0;
    cncGetVariable((CNCuint)i, &x);
    if (fabs(x - (1 + i)) > worst) worst = fabs(x - (1 + i));
  }
  int ma, mi, pa;
  cncGetVersion(&ma, &mi, &pa);
  printf("consumer: cnc %s (header %d.%d.%d), max error %.3e\n", cncVersionString(),
         CNC_VERSION_MAJOR, CNC_VERSION_MINOR, CNC_VERSION_PATCH, worst);
  cncDeleteContext(ctx);
  return (worst < 1e-8 && ma == CNC_VERSION_MAJOR) ? 0 : 1;
}
