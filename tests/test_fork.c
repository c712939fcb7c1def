/* A process that solved, then forked: the child solves too (Python's multiprocessing forks by
 * default). The host stages' thread pool must not wait in the child for workers that stayed in
 * the parent. The child's answer is checked against the parent's, bit for bit; an alarm turns a
 * hang into a failure. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cnc.h"

/* 1-D Laplacian plus a shift, n rows (large enough for parallel host stages); x into `x`. */
static int solve(int n, double* x) {
  int64_t* rp = malloc(sizeof(int64_t) * ((size_t)n + 1));
  CNCuint* ci = malloc(sizeof(CNCuint) * 3 * (size_t)n);
  double* v = malloc(sizeof(double) * 3 * (size_t)n);
  double* b = malloc(sizeof(double) * (size_t)n);
  if (!rp || !ci || !v || !b) return -1;
  int64_t k = 0;
  for (int i = 0; i < n; ++i) {
    rp[i] = k;
    if (i > 0) ci[k] = (CNCuint)(i - 1), v[k++] = -1;
    ci[k] = (CNCuint)i, v[k++] = 2.5;
    if (i + 1 < n) ci[k] = (CNCuint)(i + 1), v[k++] = -1;
    b[i] = 1.0 + (i % 7);
    x[i] = 0;
  }
  rp[n] = k;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
  cncSolverParameterd(CNC_THRESHOLD, 1e-10);
  const CNCstatus s = cncSolveCSR((CNCuint)n, rp, ci, v, 0, 1, b, x);
  cncDeleteContext(c);
  free(rp), free(ci), free(v), free(b);
  return s;
}

int main(void) {
  const int n = 1 << 20;
  double* xp = malloc(sizeof(double) * (size_t)n);
  double* xc = malloc(sizeof(double) * (size_t)n);
  if (!xp || !xc || solve(n, xp) != CNC_OK) {
    printf("FAIL: the parent's solve\n");
    return 1;
  }
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    printf("SKIP: fork failed\n");
    return 77;
  }
  if (pid == 0) {
    alarm(60);
    const int s = solve(n, xc);
    _exit(s == CNC_OK && memcmp(xc, xp, sizeof(double) * (size_t)n) == 0 ? 0 : 2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok && WIFSIGNALED(status))
    printf("FAIL: the child was killed by signal %d (SIGALRM: it hung)\n", WTERMSIG(status));
  else if (!ok)
    printf("FAIL: the child's solve failed or differs (exit %d)\n", WEXITSTATUS(status));
  else
    printf("1 passed, 0 failed\n");
  free(xp), free(xc);
  return ok ? 0 : 1;
}
