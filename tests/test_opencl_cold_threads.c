/* Threads that each use OpenCL for the first time at once, in a process that has not touched it:
 * every thread makes its own context, forces the OpenCL backend and solves a tridiagonal system
 * (1D Laplacian + shift) through cncSolveCSR, checked against the test's own direct solve. Device
 * discovery used to run unlocked: concurrent first uses crashed inside the ICD loader or PoCL, or
 * reported a spurious "backend not available". Every thread must succeed; when none can (no OpenCL
 * here, told by a later solve on this thread), the program exits 77 after saying why. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cnc.h"

enum { threads = 8, n = 300 };

static pthread_barrier_t start;

typedef struct {
  CNCstatus status;
  double error; /* max |x - x_ref| */
  char message[256];
} outcome;

/* A = tridiag(-1, 2.5, -1), b_i = 1 + i % 7: solved here by Thomas' algorithm. */
static void reference(double* x) {
  double c[n], d[n];
  for (int i = 0; i < n; ++i) {
    const double b = 1.0 + i % 7;
    const double m = 2.5 - (i > 0 ? -1.0 * c[i - 1] : 0.0);
    c[i] = -1.0 / m;
    d[i] = (b + (i > 0 ? d[i - 1] : 0.0)) / m;
  }
  for (int i = n - 1; i >= 0; --i) x[i] = d[i] - c[i] * (i + 1 < n ? x[i + 1] : 0.0);
}

static CNCstatus solve(double* x) {
  CNCint64 row_ptr[n + 1];
  CNCuint col[3 * n];
  double val[3 * n], b[n];
  CNCint64 e = 0;
  for (int i = 0; i < n; ++i) {
    row_ptr[i] = e;
    if (i > 0) col[e] = (CNCuint)(i - 1), val[e++] = -1.0;
    col[e] = (CNCuint)i, val[e++] = 2.5;
    if (i + 1 < n) col[e] = (CNCuint)(i + 1), val[e++] = -1.0;
    b[i] = 1.0 + i % 7;
    x[i] = 0.0;
  }
  row_ptr[n] = e;
  CNCstatus st = cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_OPENCL);
  if (st == CNC_OK) st = cncSolverParameterd(CNC_THRESHOLD, 1e-12);
  if (st == CNC_OK) st = cncSolveCSR(n, row_ptr, col, val, 0, 1, b, x);
  return st;
}

static void* run(void* arg) {
  outcome* o = arg;
  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  double x[n], ref[n];
  pthread_barrier_wait(&start);
  o->status = solve(x);
  if (o->status != CNC_OK) {
    snprintf(o->message, sizeof o->message, "%s", cncGetErrorMessage());
  } else {
    reference(ref);
    for (int i = 0; i < n; ++i)
      if (fabs(x[i] - ref[i]) > o->error) o->error = fabs(x[i] - ref[i]);
  }
  cncDeleteContext(ctx);
  return NULL;
}

int main(void) {
  pthread_t t[threads];
  outcome out[threads] = {{0}};
  pthread_barrier_init(&start, NULL, threads);
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, run, &out[i]);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  int ok = 0, failed = 0;
  for (int i = 0; i < threads; ++i) {
    if (out[i].status == CNC_OK && out[i].error <= 1e-9) {
      ++ok;
      continue;
    }
    ++failed;
    printf("thread %d: status %d, max |x - x_ref| = %.3g %s\n", i, (int)out[i].status, out[i].error,
           out[i].message);
  }
  if (ok == 0) { /* no OpenCL at all, or every thread refused: ask once more, alone */
    CNCcontext ctx = cncNewContext();
    cncMakeCurrent(ctx);
    double x[n];
    const CNCstatus st = solve(x);
    if (st == CNC_ERR_BACKEND_UNAVAILABLE) {
      printf("SKIP: no OpenCL device here (%s)\n", cncGetErrorMessage());
      cncDeleteContext(ctx);
      return 77;
    }
    cncDeleteContext(ctx);
  }
  printf("%d of %d threads solved on OpenCL from a cold start\n", ok, threads);
  return failed == 0 ? 0 : 1;
}
