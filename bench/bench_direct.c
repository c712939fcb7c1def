/* The direct solvers through the public API (cncSolveCSR: host arrays in, x back in host memory):
 * cuDSS on the GPU (CNC_CUDSS) against CHOLMOD on the host (CNC_CHOLMOD), with Jacobi-CG on the
 * default backend for scale, on 3D 7-point Poisson operators of N^3 rows and 2D 5-point ones of
 * M^2 rows. Per solver and problem: the first solve of the arrays (factorization + solve, or the
 * whole CG), then a second right-hand side with the matrix kept (CNC_KEEP_MATRIX: only the
 * triangular solves), medians over --reps runs after a warm-up, the true relative residual and
 * the outcome. Solvers that cannot run here are reported as such. Prints a markdown table.
 *
 *   bench_direct [--grid3 32,64,100] [--grid2 1000] [--reps 3] [--tol 1e-8]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "cnc.h"

typedef struct {
  char name[64];
  CNCuint n;
  CNCint64* row_ptr;
  CNCuint* col;
  double* val;
} problem;

/* -Δu, Dirichlet, h = 1: in 2D (dims 2, N^2 rows) or 3D (N^3 rows). */
static problem poisson(int N, int dims) {
  problem p;
  const CNCint64 n = dims == 3 ? (CNCint64)N * N * N : (CNCint64)N * N;
  const int width = 2 * dims + 1;
  p.n = (CNCuint)n;
  p.row_ptr = malloc(sizeof(CNCint64) * (size_t)(n + 1));
  p.col = malloc(sizeof(CNCuint) * (size_t)(width * n));
  p.val = malloc(sizeof(double) * (size_t)(width * n));
  if (!p.row_ptr || !p.col || !p.val) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  snprintf(p.name, sizeof p.name, "%dD %d-point %d^%d", dims, width, N, dims);
  const int nz = dims == 3 ? N : 1;
  CNCint64 e = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        const CNCint64 i = ((CNCint64)z * N + y) * N + x, plane = (CNCint64)N * N;
        p.row_ptr[i] = e;
        if (z > 0) p.col[e] = (CNCuint)(i - plane), p.val[e++] = -1.0;
        if (y > 0) p.col[e] = (CNCuint)(i - N), p.val[e++] = -1.0;
        if (x > 0) p.col[e] = (CNCuint)(i - 1), p.val[e++] = -1.0;
        p.col[e] = (CNCuint)i, p.val[e++] = 2.0 * dims;
        if (x < N - 1) p.col[e] = (CNCuint)(i + 1), p.val[e++] = -1.0;
        if (y < N - 1) p.col[e] = (CNCuint)(i + N), p.val[e++] = -1.0;
        if (z < nz - 1) p.col[e] = (CNCuint)(i + plane), p.val[e++] = -1.0;
      }
  p.row_ptr[n] = e;
  return p;
}

typedef struct {
  double first, again; /* medians, seconds */
  double true_err;     /* of the last first solve */
  CNCint iters, reason;
  int ok;
} outcome;

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

static outcome run(const problem* p, CNCenum solver, int reps, double tol) {
  outcome o = {0, 0, 0, 0, 0, 0};
  double* b = malloc(sizeof(double) * p->n);
  double* b2 = malloc(sizeof(double) * p->n);
  double* x = malloc(sizeof(double) * p->n);
  double first[16], again[16];
  unsigned s = 12345u;
  for (CNCuint i = 0; i < p->n; ++i) {
    s = s * 1103515245u + 12345u, b[i] = (double)(s >> 8) / 16777216.0 - 0.5;
    s = s * 1103515245u + 12345u, b2[i] = (double)(s >> 8) / 16777216.0 - 0.5;
  }
  for (int r = -1; r < reps; ++r) { /* r = -1: the warm-up */
    CNCcontext c = cncNewContext();
    cncMakeCurrent(c);
    cncSolverParameteri(CNC_SOLVER, (CNCint)solver);
    cncSolverParameterd(CNC_THRESHOLD, tol);
    cncSolverParameteri(CNC_MAX_ITERATIONS, 100000);
    cncEnable(CNC_KEEP_MATRIX); /* the default, said: the second solve reuses the matrix */
    memset(x, 0, sizeof(double) * p->n);
    const double t0 = now();
    CNCstatus st = cncSolveCSR(p->n, p->row_ptr, p->col, p->val, 0, 1, b, x);
    const double t1 = now();
    if (st == CNC_OK) {
      cncGetDoublev(CNC_TRUE_ERROR, &o.true_err);
      cncGetIntegerv(CNC_USED_ITERATIONS, &o.iters);
      cncGetIntegerv(CNC_REASON, &o.reason);
      memset(x, 0, sizeof(double) * p->n);
      st = cncSolveCSR(p->n, p->row_ptr, p->col, p->val, 0, 1, b2, x);
    }
    const double t2 = now();
    if (st != CNC_OK) {
      printf("<!-- %s, solver 0x%x: %s -->\n", p->name, (unsigned)solver, cncGetLastErrorMessage());
      cncDeleteContext(c);
      break;
    }
    cncDeleteContext(c);
    if (r >= 0) first[r] = t1 - t0, again[r] = t2 - t1;
    o.ok = r == reps - 1;
  }
  if (o.ok) o.first = median(first, reps), o.again = median(again, reps);
  free(b), free(b2), free(x);
  return o;
}

static int parse_list(const char* s, int* out, int max) {
  int k = 0;
  while (*s && k < max) {
    out[k++] = atoi(s);
    const char* comma = strchr(s, ',');
    if (!comma) break;
    s = comma + 1;
  }
  return k;
}

int main(int argc, char** argv) {
  int grid3[8] = {32, 64, 100}, n3 = 3, grid2[8] = {1000}, n2 = 1, reps = 3;
  double tol = 1e-8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--grid3"))
      n3 = strcmp(argv[i + 1], "none") ? parse_list(argv[i + 1], grid3, 8) : 0;
    else if (!strcmp(argv[i], "--grid2"))
      n2 = strcmp(argv[i + 1], "none") ? parse_list(argv[i + 1], grid2, 8) : 0;
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--tol"))
      tol = atof(argv[i + 1]);
    else {
      fprintf(stderr,
              "usage: bench_direct [--grid3 32,64,100] [--grid2 1000] [--reps 3] [--tol 1e-8]\n");
      return 2;
    }
  }
  if (reps < 1 || reps > 16) reps = 3;
  const struct {
    CNCenum solver;
    const char* name;
  } solvers[] = {
      {CNC_CUDSS, "cuDSS (GPU)"}, {CNC_CHOLMOD, "CHOLMOD (host)"}, {CNC_CG, "Jacobi-CG (auto)"}};
  for (int s = 0; s < 2; ++s)
    if (!cncDirectSolverAvailable(solvers[s].solver))
      printf("<!-- %s not available: %s -->\n", solvers[s].name, cncGetLastErrorMessage());
  printf(
      "| problem | n | solver | first solve s | again (kept) s | its | true residual | vs CHOLMOD "
      "first / again |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int q = 0; q < n3 + n2; ++q) {
    problem p = q < n3 ? poisson(grid3[q], 3) : poisson(grid2[q - n3], 2);
    outcome res[3];
    for (int s = 0; s < 3; ++s) res[s] = run(&p, solvers[s].solver, reps, tol);
    for (int s = 0; s < 3; ++s) {
      if (!res[s].ok) {
        printf("| %s | %u | %s | not run | | | | |\n", p.name, p.n, solvers[s].name);
        continue;
      }
      char ratio[64] = "";
      if (res[1].ok && s != 1)
        snprintf(ratio, sizeof ratio, "%.2fx / %.2fx", res[1].first / res[s].first,
                 res[1].again / res[s].again);
      printf("| %s | %u | %s | %.4f | %.4f | %d | %.1e | %s |\n", p.name, p.n, solvers[s].name,
             res[s].first, res[s].again, res[s].iters, res[s].true_err, ratio);
    }
    fflush(stdout);
    free(p.row_ptr), free(p.col), free(p.val);
  }
  return 0;
}
