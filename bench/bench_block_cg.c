/* Block CG (CNC_BLOCK_CG) against k separate single right-hand-side CG solves and against
 * lock-step multi-RHS CG (CNC_CG with k systems), through the public API (cncSolveCSR: host
 * arrays in, x back in host memory), on the 7-point 3D Poisson operator on an N^3 grid with k
 * random right-hand sides. Per method: median wall time of the whole work over --reps runs,
 * that time per right-hand side, iterations (the largest over the systems; for the separate
 * solves the largest of the k), the worst true relative residual, and the outcome. A warm-up
 * solve first (device set-up, kernel builds). Prints a markdown table.
 *
 *   bench_block_cg [--backend auto|cpu|cuda|opencl] [--n 128] [--k 8] [--reps 3]
 *                  [--tol 1e-8] [--max-iter 5000] [--precond jacobi|none]
 *                  [--format auto|csr|sell] [--verbose]
 *
 * The targets (GPU, N = 128, k = 8, 1e-8): block CG iterations <= 0.6x the single-RHS
 * count, and time per right-hand side >= 2.5x better than k separate solves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "cnc.h"

/* -Δu on an N^3 grid, Dirichlet boundary, h = 1: 6 on the diagonal, -1 to each neighbour. */
static void poisson_3d(int N, CNCint64** rp, CNCuint** ci, double** va) {
  const CNCint64 n = (CNCint64)N * N * N;
  CNCint64* row_ptr = malloc(sizeof(CNCint64) * (size_t)(n + 1));
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)(7 * n));
  double* val = malloc(sizeof(double) * (size_t)(7 * n));
  if (!row_ptr || !col || !val) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  CNCint64 e = 0;
  for (int z = 0; z < N; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        const CNCint64 i = ((CNCint64)z * N + y) * N + x;
        row_ptr[i] = e;
        if (z > 0) col[e] = (CNCuint)(i - (CNCint64)N * N), val[e++] = -1.0;
        if (y > 0) col[e] = (CNCuint)(i - N), val[e++] = -1.0;
        if (x > 0) col[e] = (CNCuint)(i - 1), val[e++] = -1.0;
        col[e] = (CNCuint)i, val[e++] = 6.0;
        if (x < N - 1) col[e] = (CNCuint)(i + 1), val[e++] = -1.0;
        if (y < N - 1) col[e] = (CNCuint)(i + N), val[e++] = -1.0;
        if (z < N - 1) col[e] = (CNCuint)(i + (CNCint64)N * N), val[e++] = -1.0;
      }
  row_ptr[n] = e;
  *rp = row_ptr, *ci = col, *va = val;
}

typedef struct {
  const char* name;
  double seconds;  /* median */
  CNCint iters;    /* largest over the systems */
  double true_err; /* worst */
  CNCint reason;   /* worst */
  double phase[4]; /* last run, summed over its solves: conversion, upload, solve, elapsed */
} outcome;

static int check(CNCstatus st, const char* what) {
  if (st == CNC_OK) return 0;
  fprintf(stderr, "%s: %s (%s)\n", what, cncStatusString(st), cncGetLastErrorMessage());
  return 1;
}

/* Adds the last solve's phase times (CNC_CONVERSION_TIME .. CNC_ELAPSED_TIME) to o->phase. */
static void add_phases(outcome* o) {
  const CNCenum which[4] = {CNC_CONVERSION_TIME, CNC_UPLOAD_TIME, CNC_SOLVE_TIME, CNC_ELAPSED_TIME};
  for (int i = 0; i < 4; ++i) {
    double t = 0;
    cncGetDoublev(which[i], &t);
    o->phase[i] += t;
  }
}

/* One run of `method` (0: k separate solves, 1: lock-step CNC_CG, 2: CNC_BLOCK_CG) into x;
 * returns its wall time, fills iterations, worst true error and reason. */
static double run(int method, CNCuint n, const CNCint64* rp, const CNCuint* ci, const double* va,
                  int k, const double* b, double* x, outcome* o) {
  memset(x, 0, sizeof(double) * (size_t)n * (size_t)k);
  o->iters = 0, o->true_err = 0, o->reason = CNC_REASON_CONVERGED;
  for (int i = 0; i < 4; ++i) o->phase[i] = 0;
  const double t0 = now();
  if (method == 0) {
    cncSolverParameteri(CNC_SOLVER, CNC_CG);
    for (int j = 0; j < k; ++j) {
      if (check(cncSolveCSR(n, rp, ci, va, 0, 1, b + (size_t)j * n, x + (size_t)j * n),
                "cncSolveCSR"))
        exit(1);
      CNCint it = 0, reason = 0;
      double te = 0;
      cncGetIntegerv(CNC_USED_ITERATIONS, &it);
      cncGetIntegerv(CNC_REASON, &reason);
      cncGetDoublev(CNC_TRUE_ERROR, &te);
      if (it > o->iters) o->iters = it;
      if (te > o->true_err) o->true_err = te;
      if (reason != CNC_REASON_CONVERGED) o->reason = reason;
      add_phases(o);
    }
  } else {
    cncSolverParameteri(CNC_SOLVER, method == 1 ? CNC_CG : CNC_BLOCK_CG);
    if (check(cncSolveCSR(n, rp, ci, va, 0, (CNCuint)k, b, x), "cncSolveCSR")) exit(1);
    cncGetIntegerv(CNC_USED_ITERATIONS, &o->iters);
    cncGetIntegerv(CNC_REASON, &o->reason);
    cncGetDoublev(CNC_TRUE_ERROR, &o->true_err);
    add_phases(o);
  }
  return now() - t0;
}

int main(int argc, char** argv) {
  const char* backend = "auto";
  const char* precond = "jacobi";
  const char* format = "auto";
  int N = 128, k = 8, reps = 3, max_iter = 5000, verbose = 0;
  double tol = 1e-8;
  for (int a = 1; a < argc; ++a) {
    const char* v = a + 1 < argc ? argv[a + 1] : NULL;
    if (!strcmp(argv[a], "--backend") && v)
      backend = v, ++a;
    else if (!strcmp(argv[a], "--n") && v)
      N = atoi(v), ++a;
    else if (!strcmp(argv[a], "--k") && v)
      k = atoi(v), ++a;
    else if (!strcmp(argv[a], "--reps") && v)
      reps = atoi(v), ++a;
    else if (!strcmp(argv[a], "--tol") && v)
      tol = atof(v), ++a;
    else if (!strcmp(argv[a], "--max-iter") && v)
      max_iter = atoi(v), ++a;
    else if (!strcmp(argv[a], "--precond") && v)
      precond = v, ++a;
    else if (!strcmp(argv[a], "--format") && v &&
             (!strcmp(v, "auto") || !strcmp(v, "csr") || !strcmp(v, "sell")))
      format = v, ++a;
    else if (!strcmp(argv[a], "--verbose"))
      verbose = 1;
    else {
      fprintf(stderr,
              "usage: %s [--backend auto|cpu|cuda|opencl] [--n 128] [--k 8] [--reps 3] "
              "[--tol 1e-8] [--max-iter 5000] [--precond jacobi|none] [--format auto|csr|sell] "
              "[--verbose]\n",
              argv[0]);
      return 2;
    }
  }
  if (N < 2 || k < 1 || reps < 1) return 2;
  const CNCenum be = !strcmp(backend, "cpu")      ? CNC_BACKEND_CPU
                     : !strcmp(backend, "cuda")   ? CNC_BACKEND_CUDA
                     : !strcmp(backend, "opencl") ? CNC_BACKEND_OPENCL
                                                  : CNC_BACKEND_AUTO;
  CNCint64* rp;
  CNCuint* ci;
  double* va;
  poisson_3d(N, &rp, &ci, &va);
  const CNCuint n = (CNCuint)((CNCint64)N * N * N);
  double* b = malloc(sizeof(double) * (size_t)n * (size_t)k);
  double* x = malloc(sizeof(double) * (size_t)n * (size_t)k);
  if (!b || !x) return 1;
  unsigned long long s = 88172645463325252ull;
  for (size_t i = 0; i < (size_t)n * (size_t)k; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    b[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0) - 0.5;
  }
  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  if (verbose) cncEnable(CNC_VERBOSE);
  if (check(cncSolverParameteri(CNC_BACKEND, (CNCint)be), "CNC_BACKEND") ||
      check(cncSolverParameterd(CNC_THRESHOLD, tol), "CNC_THRESHOLD") ||
      check(cncSolverParameteri(CNC_MAX_ITERATIONS, max_iter), "CNC_MAX_ITERATIONS") ||
      check(cncSolverParameteri(CNC_PRECONDITIONER,
                                strcmp(precond, "none") ? CNC_PRECOND_JACOBI : CNC_PRECOND_NONE),
            "CNC_PRECONDITIONER") ||
      check(cncSolverParameteri(CNC_MATRIX_FORMAT, !strcmp(format, "csr")    ? CNC_FORMAT_CSR
                                                   : !strcmp(format, "sell") ? CNC_FORMAT_SELL
                                                                             : CNC_FORMAT_AUTO),
            "CNC_MATRIX_FORMAT"))
    return 1;
  outcome out[3] = {{"k separate CG solves", 0, 0, 0, 0, {0}},
                    {"lock-step CG (CNC_CG, k systems)", 0, 0, 0, 0, {0}},
                    {"block CG (CNC_BLOCK_CG)", 0, 0, 0, 0, {0}}};
  double* times = malloc(sizeof(double) * (size_t)reps);
  for (int m = 0; m < 3; ++m) {
    run(m, n, rp, ci, va, k, b, x, &out[m]);  // warm-up: device set-up, kernel builds
    for (int r = 0; r < reps; ++r) times[r] = run(m, n, rp, ci, va, k, b, x, &out[m]);
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    out[m].seconds = times[reps / 2];
  }
  const char* used = "";
  cncGetString(CNC_DEVICE_NAME, &used);
  printf(
      "3D Poisson %d^3 (n = %u), k = %d, threshold %.0e, %s preconditioner, backend %s (%s), "
      "format %s, median of %d\n\n",
      N, n, k, tol, precond, backend, used, format, reps);
  printf(
      "| method | iterations | time (s) | time per rhs (ms) | vs k separate | worst true "
      "residual | outcome |\n|---|---|---|---|---|---|---|\n");
  for (int m = 0; m < 3; ++m) {
    printf("| %s | %d | %.3f | %.2f | %.2fx | %.1e | %s |\n", out[m].name, out[m].iters,
           out[m].seconds, 1e3 * out[m].seconds / k, out[0].seconds / out[m].seconds,
           out[m].true_err, out[m].reason == CNC_REASON_CONVERGED ? "converged" : "not converged");
  }
  printf(
      "\nWhere the last run's time went (s, cnc's own phase times summed over its solves):\n\n"
      "| method | conversion | upload | solve | whole call |\n|---|---|---|---|---|\n");
  for (int m = 0; m < 3; ++m)
    printf("| %s | %.3f | %.3f | %.3f | %.3f |\n", out[m].name, out[m].phase[0], out[m].phase[1],
           out[m].phase[2], out[m].phase[3]);
  printf(
      "\nblock CG iterations / single-RHS iterations: %.2f (target <= 0.6); time per rhs, "
      "k separate / block CG: %.2fx (target >= 2.5)\n",
      (double)out[2].iters / (double)(out[0].iters > 0 ? out[0].iters : 1),
      out[0].seconds / out[2].seconds);
  free(times);
  cncDeleteContext(ctx);
  free(b), free(x), free(rp), free(ci), free(va);
  return 0;
}
