/* Threads that cannot be had: a child process whose address space is capped (RLIMIT_AS) asks the
 * CPU backend for 4096 threads (CNC_NB_THREADS), so thread creation fails part way. The solve must
 * still be answered (with fewer threads: CNC_OK and the right x), never end in std::terminate.
 * Skipped under the sanitizers (their shadow memory does not fit a capped address space). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cnc.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CNC_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CNC_TEST_SANITIZED 1
#endif
#endif

#ifndef CNC_TEST_SANITIZED
enum { n = 20000 };

/* A = tridiag(-1, 2.5, -1), x* = 1: b = A 1. Returns 0 when the solve succeeds with |x - 1| small,
 * else what went wrong (printed). */
static int child(void) {
  static CNCint64 row_ptr[n + 1];
  static CNCuint col[3 * n];
  static double val[3 * n], b[n], x[n];
  CNCint64 e = 0;
  for (int i = 0; i < n; ++i) {
    row_ptr[i] = e;
    b[i] = 0.5;
    if (i > 0)
      col[e] = (CNCuint)(i - 1), val[e++] = -1.0;
    else
      b[i] += 1.0;
    col[e] = (CNCuint)i, val[e++] = 2.5;
    if (i + 1 < n)
      col[e] = (CNCuint)(i + 1), val[e++] = -1.0;
    else
      b[i] += 1.0;
  }
  row_ptr[n] = e;
  const struct rlimit cap = {(rlim_t)1 << 31, (rlim_t)1 << 31}; /* 2 GiB: ~250 stacks of 8 MiB */
  if (setrlimit(RLIMIT_AS, &cap) != 0) {
    perror("setrlimit");
    return 2;
  }
  CNCcontext c = cncNewContext();
  CNCstatus st = c ? cncMakeCurrent(c) : CNC_ERR_OUT_OF_MEMORY;
  if (st == CNC_OK) st = cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
  if (st == CNC_OK) st = cncSolverParameteri(CNC_NB_THREADS, 4096);
  if (st == CNC_OK) st = cncSolverParameterd(CNC_THRESHOLD, 1e-12);
  if (st == CNC_OK) st = cncSolveCSR(n, row_ptr, col, val, 0, 1, b, x);
  if (st != CNC_OK) {
    printf("child: status %d: %s\n", (int)st, cncGetErrorMessage());
    return 1;
  }
  double err = 0;
  for (int i = 0; i < n; ++i) err = fmax(err, fabs(x[i] - 1.0));
  printf("child: solved with 4096 threads asked for under a 2 GiB cap, max |x - 1| = %.2e\n", err);
  cncDeleteContext(c);
  return err <= 1e-8 ? 0 : 1;
}

#endif

int main(void) {
#ifdef CNC_TEST_SANITIZED
  printf("SKIP: the address-space cap does not fit a sanitizer's shadow memory\n");
  return 77;
#else
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    const int rc = child();
    fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    perror("waitpid");
    return 1;
  }
  if (WIFSIGNALED(status)) {
    printf("FAIL: the child died of signal %d (std::terminate is SIGABRT)\n", WTERMSIG(status));
    return 1;
  }
  return WEXITSTATUS(status) == 0 ? 0 : 1;
#endif
}
