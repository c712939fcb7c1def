/* Without a log callback, cnc's warnings reach stderr (a fallback or a zero diagonal is never
 * silent) and its informational messages do not (they need CNC_VERBOSE). CTest matches this
 * program's output: "cnc warning: ... zero or subnormal diagonal" must be there, "cnc info" must
 * not. A callback, once set, takes every message instead. */
#include <stdio.h>

#include "cnc.h"

static int seen = 0;
static void count(int level, const char* message, void* user) {
  (void)level, (void)message, (void)user;
  ++seen;
}

/* 2x2 SPD-looking system with a zero diagonal entry: Jacobi warns and uses 1 there. */
static CNCstatus solve(void) {
  const CNCint64 rp[3] = {0, 1, 3};
  const CNCuint col[3] = {0, 0, 1};
  const double val[3] = {0.0, 1.0, 2.0}, b[2] = {0.0, 1.0};
  double x[2] = {0, 0};
  return cncSolveCSR(2, rp, col, val, 0, 1, b, x);
}

int main(void) {
  CNCcontext c = cncNewContext();
  if (!c || cncMakeCurrent(c) != CNC_OK) return 1;
  cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
  if (solve() != CNC_OK) return 1; /* the warning goes to stderr */
  fflush(stderr);
  cncSetLogCallback(count, NULL);
  if (solve() != CNC_OK) return 1;
  if (seen == 0) {
    printf("FAIL: the callback saw no message\n");
    return 1;
  }
  printf("callback: %d message(s)\n", seen);
  cncDeleteContext(c);
  return 0;
}
