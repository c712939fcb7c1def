/* cnc-solve: solve a Matrix Market system, or with no file an embedded 3D Poisson problem,
 * and print what a user wants to know: backend, device, format, iterations, residuals, times,
 * achieved bandwidth. The right-hand side is b = A x* for a known x* (all ones for a file, a
 * smooth field for Poisson), so the error of the solution is printed too.
 *
 *   cnc-solve [--backend auto|cpu|opencl|cuda] [--precision double|single|mixed]
 *             [--format auto|csr|bcrs2|bcrs4|sell] [--threshold T] [--max-iter N] [--threads N]
 *             [--grid N] [--rhs K] [--repeat R] [--verbose] [file.mtx]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnc.h"
#include "common/matrix_market.h"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    CNCstatus s_ = (call);                                                              \
    if (s_ != CNC_OK) {                                                                 \
      fprintf(stderr, "cnc-solve: %s\n  %s\n", cncStatusString(s_), cncGetErrorMessage()); \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

static int parse_enum(const char* v, const char* const* names, const int* values, int* out) {
  for (int i = 0; names[i]; ++i)
    if (!strcmp(v, names[i])) return *out = values[i], 1;
  return 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: cnc-solve [--backend auto|cpu|opencl|cuda] [--precision double|single|mixed]\n"
          "                 [--format auto|csr|bcrs2|bcrs4|sell] [--threshold T] [--max-iter N]\n"
          "                 [--threads N] [--grid N] [--rhs K] [--repeat R] [--verbose] [file.mtx]\n"
          "Without a file, solves a 7-point 3D Poisson problem on an N^3 grid (default N=64).\n");
}

/* Known solution of system k at unknown i. */
static double exact(int poisson, int grid, long i, int k) {
  if (!poisson) return 1.0 + k;
  long x = i % grid, y = (i / grid) % grid, z = i / ((long)grid * grid);
  double h = 1.0 / (grid + 1);
  return sin(M_PI * (x + 1) * h) * sin(M_PI * (y + 1) * h) * (1.0 + (z + 1) * h) + k;
}

/* The 6 neighbours of grid point i on the N^3 grid (-1 past the boundary). */
static void neighbours(long i, int grid, long nb[6]) {
  const long g = grid, g2 = (long)grid * grid, x = i % g, y = (i / g) % g, z = i / g2;
  nb[0] = x > 0 ? i - 1 : -1, nb[1] = x < g - 1 ? i + 1 : -1;
  nb[2] = y > 0 ? i - g : -1, nb[3] = y < g - 1 ? i + g : -1;
  nb[4] = z > 0 ? i - g2 : -1, nb[5] = z < g - 1 ? i + g2 : -1;
}

int main(int argc, char** argv) {
  static const char* const backends[] = {"auto", "cpu", "opencl", "cuda", NULL};
  static const int backend_v[] = {CNC_BACKEND_AUTO, CNC_BACKEND_CPU, CNC_BACKEND_OPENCL,
                                  CNC_BACKEND_CUDA};
  static const char* const precisions[] = {"double", "single", "mixed", NULL};
  static const int precision_v[] = {CNC_DOUBLE, CNC_SINGLE, CNC_MIXED};
  static const char* const formats[] = {"auto", "csr", "bcrs2", "bcrs4", "sell", NULL};
  static const int format_v[] = {CNC_FORMAT_AUTO, CNC_FORMAT_CSR, CNC_FORMAT_BCRS2,
                                 CNC_FORMAT_BCRS4, CNC_FORMAT_SELL};
  int backend = -1, precision = CNC_DOUBLE, format = CNC_FORMAT_AUTO, threads = 0, grid = 64;
  int nrhs = 1, repeat = 1, verbose = 0;
  double threshold = 1e-8;
  long max_iter = 0;
  const char* file = NULL;
  for (int a = 1; a < argc; ++a) {
    const char* o = argv[a];
    const char* v = a + 1 < argc ? argv[a + 1] : NULL;
    int ok = 1;
    if (!strcmp(o, "--backend") && v) ok = parse_enum(v, backends, backend_v, &backend), ++a;
    else if (!strcmp(o, "--precision") && v) ok = parse_enum(v, precisions, precision_v, &precision), ++a;
    else if (!strcmp(o, "--format") && v) ok = parse_enum(v, formats, format_v, &format), ++a;
    else if (!strcmp(o, "--threshold") && v) threshold = atof(v), ++a;
    else if (!strcmp(o, "--max-iter") && v) max_iter = atol(v), ++a;
    else if (!strcmp(o, "--threads") && v) threads = atoi(v), ++a;
    else if (!strcmp(o, "--grid") && v) grid = atoi(v), ++a;
    else if (!strcmp(o, "--rhs") && v) nrhs = atoi(v), ++a;
    else if (!strcmp(o, "--repeat") && v) repeat = atoi(v), ++a;
    else if (!strcmp(o, "--verbose")) verbose = 1;
    else if (!strcmp(o, "--help") || !strcmp(o, "-h")) return usage(), 0;
    else if (o[0] != '-' && !file) file = o;
    else ok = 0;
    if (!ok || grid < 2 || nrhs < 1 || repeat < 1) {
      usage();
      return 2;
    }
  }

  mm_matrix m;
  int poisson = file == NULL;
  long n;
  if (!poisson) {
    char err[512];
    if (mm_read(file, &m, err, sizeof err)) {
      fprintf(stderr, "cnc-solve: %s\n", err);
      return 1;
    }
    if (m.rows != m.cols) {
      fprintf(stderr, "cnc-solve: %s is %d x %d, not square\n", file, m.rows, m.cols);
      mm_free(&m);
      return 1;
    }
    n = m.rows;
  } else {
    n = (long)grid * grid * grid;
  }

  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  if (verbose) cncEnable(CNC_VERBOSE);
  CHECK(cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)n));
  CHECK(cncSolverParameteri(CNC_NB_SYSTEMS, nrhs));
  CHECK(cncSolverParameterd(CNC_THRESHOLD, threshold));
  CHECK(cncSolverParameteri(CNC_PRECISION, precision));
  CHECK(cncSolverParameteri(CNC_MATRIX_FORMAT, format));
  CHECK(cncSolverParameteri(CNC_NB_THREADS, threads));
  if (backend >= 0) CHECK(cncSolverParameteri(CNC_BACKEND, backend));
  if (max_iter > 0) CHECK(cncSolverParameteri64(CNC_MAX_ITERATIONS, max_iter));
  CHECK(cncSolverParameteri64(CNC_NNZ_HINT, poisson ? 7 * n : m.nnz));

  /* The problem's entries, a chunk at a time, go in through the bulk entry point
   * (cncAddIJCoefficients). */
  double* b = calloc((size_t)n * nrhs, sizeof(double));
  enum { chunk = 1 << 20 };
  CNCuint* ci = malloc(sizeof(CNCuint) * (chunk + 8));
  CNCuint* cj = malloc(sizeof(CNCuint) * (chunk + 8));
  double* cv = malloc(sizeof(double) * (chunk + 8));
  if (!b || !ci || !cj || !cv) return fprintf(stderr, "cnc-solve: out of memory\n"), 1;
  long fill = 0;
#define FLUSH()                                       \
  do {                                                \
    CHECK(cncAddIJCoefficients(fill, ci, cj, cv));    \
    fill = 0;                                         \
  } while (0)
#define ENTRY(I, J, V) (ci[fill] = (CNCuint)(I), cj[fill] = (CNCuint)(J), cv[fill++] = (V))
  /* b = A x* first (the tool's own work, outside the assembly the library times). */
  if (poisson) {
    for (long i = 0; i < n; ++i) {
      long nb[6];
      neighbours(i, grid, nb);
      for (int k = 0; k < nrhs; ++k) b[i + k * n] += 6.0 * exact(1, grid, i, k);
      for (int t = 0; t < 6; ++t)
        if (nb[t] >= 0)
          for (int k = 0; k < nrhs; ++k) b[i + k * n] -= exact(1, grid, nb[t], k);
    }
  } else {
    for (long t = 0; t < m.nnz; ++t)
      for (int k = 0; k < nrhs; ++k) b[m.row[t] + k * n] += m.val[t] * exact(0, 0, m.col[t], k);
  }
  CHECK(cncBegin(CNC_SYSTEM));
  CHECK(cncBegin(CNC_MATRIX));
  if (poisson) {
    for (long i = 0; i < n; ++i) {
      long nb[6];
      neighbours(i, grid, nb);
      ENTRY(i, i, 6.0);
      for (int t = 0; t < 6; ++t)
        if (nb[t] >= 0) ENTRY(i, nb[t], -1.0);
      if (fill >= chunk) FLUSH();
    }
  } else {
    for (long t = 0; t < m.nnz; ++t) {
      ENTRY(m.row[t], m.col[t], m.val[t]);
      if (fill >= chunk) FLUSH();
    }
  }
  FLUSH();
  free(ci), free(cj), free(cv);
  for (int k = 0; k < nrhs; ++k)
    for (long i = 0; i < n; ++i) CHECK(cncMultiAddIRightHandSide((CNCuint)i, (CNCuint)k, b[i + k * n]));
  CHECK(cncEnd(CNC_MATRIX));
  CHECK(cncEnd(CNC_SYSTEM));
  free(b);
  if (!poisson) mm_free(&m);

  for (int r = 0; r < repeat; ++r) {
    for (int k = 0; k < nrhs; ++k)
      for (long i = 0; i < n; ++i) CHECK(cncMultiSetVariable((CNCuint)i, (CNCuint)k, 0.0));
    CHECK(cncSolve());
    const char *be, *dev, *fmt, *reason;
    CNCint64 nnz, it, bytes;
    double err, true_err, t_asm, t_conv, t_up, t_solve, gbs, gflops;
    CHECK(cncGetString(CNC_BACKEND_NAME, &be));
    CHECK(cncGetString(CNC_DEVICE_NAME, &dev));
    CHECK(cncGetString(CNC_FORMAT_NAME, &fmt));
    CHECK(cncGetString(CNC_REASON_NAME, &reason));
    CHECK(cncGetInteger64v(CNC_NNZ, &nnz));
    CHECK(cncGetInteger64v(CNC_USED_ITERATIONS, &it));
    CHECK(cncGetInteger64v(CNC_BYTES_PER_ITERATION, &bytes));
    CHECK(cncGetDoublev(CNC_ERROR, &err));
    CHECK(cncGetDoublev(CNC_TRUE_ERROR, &true_err));
    CHECK(cncGetDoublev(CNC_ASSEMBLY_TIME, &t_asm));
    CHECK(cncGetDoublev(CNC_CONVERSION_TIME, &t_conv));
    CHECK(cncGetDoublev(CNC_UPLOAD_TIME, &t_up));
    CHECK(cncGetDoublev(CNC_SOLVE_TIME, &t_solve));
    CHECK(cncGetDoublev(CNC_GBYTES_PER_SECOND, &gbs));
    CHECK(cncGetDoublev(CNC_GFLOPS, &gflops));
    double max_err = 0.0;
    for (int k = 0; k < nrhs; ++k)
      for (long i = 0; i < n; ++i) {
        double v;
        CHECK(cncMultiGetVariable((CNCuint)i, (CNCuint)k, &v));
        double e = fabs(v - exact(poisson, grid, i, k));
        if (e > max_err) max_err = e;
      }
    if (poisson)
      printf("problem     3D Poisson 7-point, %d^3 grid\n", grid);
    else
      printf("problem     %s\n", file);
    printf("unknowns    %ld x %d right-hand side%s, nnz %lld\n", n, nrhs, nrhs > 1 ? "s" : "",
           (long long)nnz);
    printf("backend     %s (%s), format %s, precision %s\n", be, dev, fmt,
           precisions[precision - CNC_DOUBLE]);
    printf("result      %s after %lld iterations\n", reason, (long long)it);
    printf("residual    |r|/|b| = %.3e recursive, %.3e true; max |x - x*| = %.3e\n", err,
           true_err, max_err);
    printf("time        assembly %.3f s, conversion %.3f s, upload %.3f s, solve %.3f s (%.3f ms/iteration)\n",
           t_asm, t_conv, t_up, t_solve, it > 0 ? 1e3 * t_solve / (double)it : 0.0);
    printf("throughput  %.2f GB/s (%lld bytes/iteration minimum), %.2f GFLOP/s\n", gbs,
           (long long)bytes, gflops);
  }
  cncDeleteContext(ctx);
  return 0;
}
