/* BiCGSTAB and GMRES through the public API (cncSolveCSR: host arrays in, x back in host
 * memory), on a nonsymmetric 3D convection-diffusion operator (7-point, upwind convection),
 * N^3 unknowns. Per size and method: median call-to-return time over --reps solves, the solve
 * phase alone, iterations, outcome, and the bytes the library reports it moved per second.
 *
 *   bench_krylov [--backend auto|cpu|cuda|opencl] [--sizes 100,160] [--reps 3]
 *                [--tol 1e-8] [--max-iter 2000] [--restart 30]
 *
 * Only cnc.h is used, so this program also measures an older libcnc built from the same header
 * (how BENCHMARKS.md compares the device-resident methods with the former host-vector ones). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "cnc.h"

/* -Δu + c·∇u on an N^3 grid, h = 1, upwind differences: diagonal 6 + c_x + c_y + c_z. */
static void convection_diffusion(int N, CNCint64** rp, CNCuint** ci, double** va) {
  const CNCint64 n = (CNCint64)N * N * N;
  const double cx = 0.9, cy = 0.4, cz = 0.2;
  CNCint64* row_ptr = malloc(sizeof(CNCint64) * (size_t)(n + 1));
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)(7 * n));
  double* val = malloc(sizeof(double) * (size_t)(7 * n));
  CNCint64 e = 0;
  for (int z = 0; z < N; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        const CNCint64 i = ((CNCint64)z * N + y) * N + x;
        row_ptr[i] = e;
        if (z > 0) col[e] = (CNCuint)(i - (CNCint64)N * N), val[e++] = -1.0 - cz;
        if (y > 0) col[e] = (CNCuint)(i - N), val[e++] = -1.0 - cy;
        if (x > 0) col[e] = (CNCuint)(i - 1), val[e++] = -1.0 - cx;
        col[e] = (CNCuint)i, val[e++] = 6.0 + cx + cy + cz;
        if (x < N - 1) col[e] = (CNCuint)(i + 1), val[e++] = -1.0;
        if (y < N - 1) col[e] = (CNCuint)(i + N), val[e++] = -1.0;
        if (z < N - 1) col[e] = (CNCuint)(i + (CNCint64)N * N), val[e++] = -1.0;
      }
  row_ptr[n] = e;
  *rp = row_ptr, *ci = col, *va = val;
}

int main(int argc, char** argv) {
  const char* sizes = "100,160";
  const char* backend_name = "auto";
  int reps = 3, max_iter = 2000, restart = 30;
  double tol = 1e-8;
  for (int a = 1; a < argc; ++a) {
    if (!strcmp(argv[a], "--sizes") && a + 1 < argc)
      sizes = argv[++a];
    else if (!strcmp(argv[a], "--backend") && a + 1 < argc)
      backend_name = argv[++a];
    else if (!strcmp(argv[a], "--reps") && a + 1 < argc)
      reps = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--tol") && a + 1 < argc)
      tol = atof(argv[++a]);
    else if (!strcmp(argv[a], "--max-iter") && a + 1 < argc)
      max_iter = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--restart") && a + 1 < argc)
      restart = atoi(argv[++a]);
    else {
      fprintf(stderr,
              "usage: %s [--backend auto|cpu|cuda|opencl] [--sizes 100,160] [--reps 3] "
              "[--tol 1e-8] [--max-iter 2000] [--restart 30]\n",
              argv[0]);
      return 2;
    }
  }
  if (reps < 1 || reps > 100) reps = 3;
  const CNCint backend = !strcmp(backend_name, "cpu")      ? CNC_BACKEND_CPU
                         : !strcmp(backend_name, "cuda")   ? CNC_BACKEND_CUDA
                         : !strcmp(backend_name, "opencl") ? CNC_BACKEND_OPENCL
                                                           : CNC_BACKEND_AUTO;
  printf("# cnc %s, backend %s, tolerance %g, GMRES(%d), median of %d\n", cncVersionString(),
         backend_name, tol, restart, reps);
  printf("%-9s %10s %-9s %10s %10s %6s %-15s %10s %8s\n", "N^3", "n", "method", "call s", "solve s",
         "iters", "outcome", "true err", "GB/s");
  char* list = strdup(sizes);
  for (char* tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
    const int N = atoi(tok);
    if (N < 2) continue;
    CNCint64* rp;
    CNCuint* ci;
    double* va;
    convection_diffusion(N, &rp, &ci, &va);
    const CNCuint n = (CNCuint)N * (CNCuint)N * (CNCuint)N;
    double* b = malloc(sizeof(double) * n);
    double* x = malloc(sizeof(double) * n);
    for (CNCuint i = 0; i < n; ++i) b[i] = 1.0 + (double)(i % 7) * 0.125;
    const CNCenum methods[2] = {CNC_BICGSTAB, CNC_GMRES};
    for (int m = 0; m < 2; ++m) {
      CNCcontext c = cncNewContext();
      cncMakeCurrent(c);
      cncSolverParameteri(CNC_BACKEND, backend);
      cncSolverParameteri(CNC_SOLVER, (CNCint)methods[m]);
      cncSolverParameteri(CNC_MAX_ITERATIONS, max_iter);
      cncSolverParameteri(CNC_GMRES_RESTART, restart);
      cncSolverParameterd(CNC_THRESHOLD, tol);
      double call[100], solve[100];
      CNCint iters = 0;
      double err = 0, gbps = 0;
      CNCstatus st = CNC_OK;
      for (int r = 0; r < reps && st == CNC_OK; ++r) {
        memset(x, 0, sizeof(double) * n);
        const double t0 = now();
        st = cncSolveCSR(n, rp, ci, va, 0, 1, b, x);
        call[r] = now() - t0;
        cncGetDoublev(CNC_SOLVE_TIME, &solve[r]);
      }
      if (st != CNC_OK) {
        printf("%-9d %10u %-9s failed: %s\n", N, n, m ? "GMRES" : "BiCGSTAB", cncGetErrorMessage());
        cncDeleteContext(c);
        continue;
      }
      static int named = 0;
      if (!named) {
        const char* dev = "?";
        cncGetString(CNC_DEVICE_NAME, &dev);
        printf("# device: %s\n", dev);
        named = 1;
      }
      cncGetIntegerv(CNC_USED_ITERATIONS, &iters);
      cncGetDoublev(CNC_TRUE_ERROR, &err);
      cncGetDoublev(CNC_GBYTES_PER_SECOND, &gbps);
      const char* outcome = "?";
      cncGetString(CNC_REASON_NAME, &outcome);
      qsort(call, (size_t)reps, sizeof(double), cmp_double);
      qsort(solve, (size_t)reps, sizeof(double), cmp_double);
      printf("%-9d %10u %-9s %10.4f %10.4f %6d %-15s %10.2e %8.1f\n", N, n,
             m ? "GMRES" : "BiCGSTAB", call[reps / 2], solve[reps / 2], iters, outcome, err, gbps);
      fflush(stdout);
      cncDeleteContext(c);
    }
    free(rp), free(ci), free(va), free(b), free(x);
  }
  free(list);
  return 0;
}
