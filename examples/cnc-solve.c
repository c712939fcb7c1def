/* cnc-solve: solve a Matrix Market system, or with no file an embedded 3D Poisson problem,
 * and print what a user wants to know: backend, device, format, iterations, residuals, times,
 * achieved bandwidth. The right-hand side is b = A x* for a known x* (all ones for a file, a
 * smooth field for Poisson), so the error of the solution is printed too.
 *
 *   cnc-solve [--backend auto|cpu|opencl|cuda] [--precision double|single|mixed]
 *             [--format auto|csr|bcrs2|bcrs4|sell] [--threshold T] [--max-iter N] [--threads N]
 *             [--grid N] [--rhs K] [--repeat R] [--verbose] [file.mtx]
 *
 * The file may be any real square Matrix Market matrix (coordinate or array; real, integer or
 * pattern; any symmetry; gzip or not: examples/common/matrix_market.h). Complex files are refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnc.h"
#include "common/matrix_market.h"

/* The embedded problem is generated on every core with OpenMP when the compiler has it, else
 * serially; the arrays handed to cnc are the same either way. */
#ifdef _OPENMP
#include <omp.h>
#define PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define PARALLEL_FOR
#endif

/* Every error after the context exists leaves through `done`, which frees what main holds. */
#define CHECK(call)                                                                        \
  do {                                                                                     \
    CNCstatus s_ = (call);                                                                 \
    if (s_ != CNC_OK) {                                                                    \
      fprintf(stderr, "cnc-solve: %s\n  %s\n", cncStatusString(s_), cncGetErrorMessage()); \
      goto done;                                                                           \
    }                                                                                      \
  } while (0)

static int parse_enum(const char* v, const char* const* names, const int* values, int* out) {
  for (int i = 0; names[i]; ++i)
    if (!strcmp(v, names[i])) return *out = values[i], 1;
  return 0;
}

static void usage(void) {
  fprintf(
      stderr,
      "usage: cnc-solve [--backend auto|cpu|opencl|cuda] [--precision double|single|mixed]\n"
      "                 [--format auto|csr|bcrs2|bcrs4|sell] [--threshold T] [--max-iter N]\n"
      "                 [--threads N] [--grid N] [--rhs K] [--repeat R] [--verbose] [file.mtx]\n"
      "file.mtx: a real square Matrix Market matrix, coordinate or array, plain or gzip.\n"
      "Without a file, solves a 7-point 3D Poisson problem on an N^3 grid (default N=64,\n"
      "at most 1290).\n");
}

/* Known solution x* of the embedded Poisson problem, system k (at xs + k n) on the N^3 grid,
 * h = 1/(N+1): x*(x, y, z) = sin(pi (x+1) h) sin(pi (y+1) h) (1 + (z+1) h) + k. The sines are
 * tabulated once per coordinate. Returns 0, or -1 out of memory. */
static int poisson_solution(int grid, int nrhs, double* xs) {
  const long g = grid, n = g * g * g;
  const double h = 1.0 / (grid + 1);
  double* s = malloc(sizeof(double) * (size_t)g);
  if (!s) return -1;
  for (long x = 0; x < g; ++x) s[x] = sin(M_PI * (x + 1) * h);
  PARALLEL_FOR
  for (long line = 0; line < g * g; ++line) { /* the g points (x, y, z), line = z g + y */
    const long y = line % g, z = line / g;
    const double fz = 1.0 + (z + 1) * h;
    for (long x = 0; x < g; ++x) {
      const double v = s[x] * s[y] * fz;
      for (int k = 0; k < nrhs; ++k) xs[line * g + x + k * n] = v + k;
    }
  }
  free(s);
  return 0;
}

/* b = A x* for the 7-point matrix below (the same terms in the same order as its rows). */
static void poisson_rhs(int grid, int nrhs, const double* xs, double* b) {
  const long g = grid, g2 = g * g, n = g2 * g;
  PARALLEL_FOR
  for (long line = 0; line < g2; ++line) {
    const long y = line % g, z = line / g;
    for (int k = 0; k < nrhs; ++k) {
      const double* u = xs + k * n;
      for (long x = 0, i = line * g; x < g; ++x, ++i) {
        double v = 6.0 * u[i];
        if (x > 0) v -= u[i - 1];
        if (x < g - 1) v -= u[i + 1];
        if (y > 0) v -= u[i - g];
        if (y < g - 1) v -= u[i + g];
        if (z > 0) v -= u[i - g2];
        if (z < g - 1) v -= u[i + g2];
        b[i + k * n] = v;
      }
    }
  }
}

/* Number of entries in the g rows of grid line (y, z): every row has its diagonal, the x
 * neighbours give 2 (g-1), and each of y-1, y+1, z-1, z+1 inside the grid gives g. */
static long poisson_line_entries(long g, long y, long z) {
  return g * (1 + (y > 0) + (y < g - 1) + (z > 0) + (z < g - 1)) + 2 * (g - 1);
}

/* The entries of the g rows of grid line (y, z), rows in order: 6 on the diagonal, then -1 on
 * the neighbours x-1, x+1, y-1, y+1, z-1, z+1 that are inside the grid. */
static void poisson_line(long g, long y, long z, CNCuint* ci, CNCuint* cj, double* cv) {
  const long g2 = g * g;
  long t = 0;
  for (long x = 0, i = (z * g + y) * g; x < g; ++x, ++i) {
#define PUT(J, V) (ci[t] = (CNCuint)i, cj[t] = (CNCuint)(J), cv[t++] = (V))
    PUT(i, 6.0);
    if (x > 0) PUT(i - 1, -1.0);
    if (x < g - 1) PUT(i + 1, -1.0);
    if (y > 0) PUT(i - g, -1.0);
    if (y < g - 1) PUT(i + g, -1.0);
    if (z > 0) PUT(i - g2, -1.0);
    if (z < g - 1) PUT(i + g2, -1.0);
#undef PUT
  }
}

/* Adds the Poisson matrix through cncAddIJCoefficients, a group of z-planes (about
 * `chunk_entries` entries) per call. Each line of rows is written by one thread at its offset
 * (a prefix sum of the lines' lengths), so the arrays do not depend on the thread count.
 * Returns 0, or 1 after saying why not. */
static int poisson_matrix(int grid, long chunk_entries) {
  const long g = grid, plane = 7 * g * g;
  long planes = chunk_entries > plane ? chunk_entries / plane : 1;
  if (planes > g) planes = g;
  CNCint64* off = malloc(sizeof(CNCint64) * (size_t)(planes * g + 1));
  CNCuint* ci = malloc(sizeof(CNCuint) * (size_t)(planes * plane));
  CNCuint* cj = malloc(sizeof(CNCuint) * (size_t)(planes * plane));
  double* cv = malloc(sizeof(double) * (size_t)(planes * plane));
  CNCstatus status = CNC_OK;
  if (!off || !ci || !cj || !cv) {
    fprintf(stderr, "cnc-solve: out of memory\n");
    free(off), free(ci), free(cj), free(cv);
    return 1;
  }
  for (long z0 = 0; z0 < g && status == CNC_OK; z0 += planes) {
    const long lines = (z0 + planes < g ? planes : g - z0) * g; /* line = (z - z0) g + y */
    off[0] = 0;
    for (long line = 0; line < lines; ++line)
      off[line + 1] = off[line] + poisson_line_entries(g, line % g, z0 + line / g);
    PARALLEL_FOR
    for (long line = 0; line < lines; ++line)
      poisson_line(g, line % g, z0 + line / g, ci + off[line], cj + off[line], cv + off[line]);
    status = cncAddIJCoefficients(off[lines], ci, cj, cv);
  }
  free(off), free(ci), free(cj), free(cv);
  if (status == CNC_OK) return 0;
  fprintf(stderr, "cnc-solve: %s\n  %s\n", cncStatusString(status), cncGetErrorMessage());
  return 1;
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
    if (!strcmp(o, "--backend") && v)
      ok = parse_enum(v, backends, backend_v, &backend), ++a;
    else if (!strcmp(o, "--precision") && v)
      ok = parse_enum(v, precisions, precision_v, &precision), ++a;
    else if (!strcmp(o, "--format") && v)
      ok = parse_enum(v, formats, format_v, &format), ++a;
    else if (!strcmp(o, "--threshold") && v)
      threshold = atof(v), ++a;
    else if (!strcmp(o, "--max-iter") && v)
      max_iter = atol(v), ++a;
    else if (!strcmp(o, "--threads") && v)
      threads = atoi(v), ++a;
    else if (!strcmp(o, "--grid") && v)
      grid = atoi(v), ++a;
    else if (!strcmp(o, "--rhs") && v)
      nrhs = atoi(v), ++a;
    else if (!strcmp(o, "--repeat") && v)
      repeat = atoi(v), ++a;
    else if (!strcmp(o, "--verbose"))
      verbose = 1;
    else if (!strcmp(o, "--help") || !strcmp(o, "-h"))
      return usage(), 0;
    else if (o[0] != '-' && !file)
      file = o;
    else
      ok = 0;
    if (!ok || grid < 2 || grid > 1290 || nrhs < 1 || repeat < 1) {
      usage();
      return 2;
    }
  }

  mm_matrix m = {0}; /* empty until a file is read: mm_free is safe on every path */
  const int poisson = file == NULL;
  long n;
  if (!poisson) {
    char err[512];
    if (mm_read(file, &m, err, sizeof err)) {
      fprintf(stderr, "cnc-solve: %s\n", err);
      return 1;
    }
    const char* why = m.field == MM_COMPLEX ? "complex systems are not supported yet"
                      : m.rows != m.cols    ? "not square"
                                            : NULL;
    if (why) {
      fprintf(stderr, "cnc-solve: %s (%d x %d, %s): %s\n", file, m.rows, m.cols,
              m.field == MM_COMPLEX ? "complex" : "real", why);
      mm_free(&m);
      return 1;
    }
    n = m.rows;
  } else {
    n = (long)grid * grid * grid;
  }
  /* n fits CNCint (grid <= 1290); x* and b hold n * nrhs doubles each. */
  if ((size_t)nrhs > SIZE_MAX / sizeof(double) / (size_t)n) {
    fprintf(stderr, "cnc-solve: %ld unknowns x %d right-hand sides do not fit in memory\n", n,
            nrhs);
    mm_free(&m);
    return 1;
  }

  int status = 1; /* until the last line is printed */
  double* xs = NULL;
  double* b = NULL;
  CNCcontext ctx = cncNewContext();
  if (!ctx) {
    fprintf(stderr, "cnc-solve: no context (out of memory)\n");
    goto done;
  }
  cncMakeCurrent(ctx);
  if (verbose) cncEnable(CNC_VERBOSE);
  CHECK(cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)n));
  CHECK(cncSolverParameteri(CNC_NB_SYSTEMS, nrhs));
  CHECK(cncSolverParameterd(CNC_THRESHOLD, threshold));
  CHECK(cncSolverParameteri(CNC_PRECISION, precision));
  CHECK(cncSolverParameteri(CNC_MATRIX_FORMAT, format));
  CHECK(cncSolverParameteri(CNC_NB_THREADS, threads));
#ifdef _OPENMP
  if (threads > 0) omp_set_num_threads(threads); /* the tool's own loops too */
#endif
  if (backend >= 0) CHECK(cncSolverParameteri(CNC_BACKEND, backend));
  if (max_iter > 0) CHECK(cncSolverParameteri64(CNC_MAX_ITERATIONS, max_iter));
  CHECK(cncSolverParameteri64(CNC_NNZ_HINT, poisson ? 7 * n : m.nnz));

  /* The known solution x* and b = A x* first (the tool's own work, outside the assembly the
   * library times). */
  xs = malloc(sizeof(double) * (size_t)n * (size_t)nrhs);
  b = calloc((size_t)n * (size_t)nrhs, sizeof(double));
  if (!xs || !b || (poisson && poisson_solution(grid, nrhs, xs))) {
    fprintf(stderr, "cnc-solve: out of memory\n");
    goto done;
  }
  if (poisson) {
    poisson_rhs(grid, nrhs, xs, b);
  } else {
    for (int k = 0; k < nrhs; ++k)
      for (long i = 0; i < n; ++i) xs[i + k * n] = 1.0 + k;
    for (long t = 0; t < m.nnz; ++t)
      for (int k = 0; k < nrhs; ++k) b[m.row[t] + k * n] += m.val[t] * xs[m.col[t] + k * n];
  }
  /* The matrix goes in through the bulk entry point (cncAddIJCoefficients): the Poisson one a
   * group of z-planes at a time, about 16 M entries (256 MiB) per call, since each call has a
   * fixed cost (milliseconds on 16 cores); the file's in one call (int32_t and uint32_t arrays
   * may alias, and its indices are >= 0). cnc has no bulk call for the right-hand side: one call
   * per value. */
  CHECK(cncBegin(CNC_SYSTEM));
  CHECK(cncBegin(CNC_MATRIX));
  if (poisson) {
    if (poisson_matrix(grid, 16L << 20)) goto done;
  } else if (m.nnz > 0) {
    CHECK(cncAddIJCoefficients(m.nnz, (const CNCuint*)m.row, (const CNCuint*)m.col, m.val));
  }
  for (int k = 0; k < nrhs; ++k)
    for (long i = 0; i < n; ++i)
      CHECK(cncMultiAddIRightHandSide((CNCuint)i, (CNCuint)k, b[i + k * n]));
  CHECK(cncEnd(CNC_MATRIX));
  CHECK(cncEnd(CNC_SYSTEM));
  free(b);
  b = NULL;
  mm_free(&m);

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
        double e = fabs(v - xs[i + k * n]);
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
    printf("residual    |r|/|b| = %.3e recursive, %.3e true; max |x - x*| = %.3e\n", err, true_err,
           max_err);
    printf(
        "time        assembly %.3f s, conversion %.3f s, upload %.3f s, solve %.3f s (%.3f "
        "ms/iteration)\n",
        t_asm, t_conv, t_up, t_solve, it > 0 ? 1e3 * t_solve / (double)it : 0.0);
    printf("throughput  %.2f GB/s (%lld bytes/iteration minimum), %.2f GFLOP/s\n", gbs,
           (long long)bytes, gflops);
  }
  status = 0;
done:
  free(xs);
  free(b);
  mm_free(&m);
  cncDeleteContext(ctx);
  return status;
}
