/* cnc-solve: solve a Matrix Market system, or with no file an embedded 3D Poisson problem,
 * and print what a user wants to know: backend, device, format, solver, iterations, residuals,
 * times, achieved bandwidth. Unless --rhs-file gives b, the right-hand side is b = A x* for a
 * known x* (all ones for a file, a smooth field for Poisson), so the error of the solution is
 * printed too. The exit status says how the solve ended (see usage() and README.md, "cnc-solve").
 *
 * The file may be any real square Matrix Market matrix (coordinate or array; real, integer or
 * pattern; any symmetry; gzip or not: examples/common/matrix_market.h). Complex files are refused.
 * Relative paths are taken from the current directory: cnc-solve never changes it.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_complex.h"
#include "cli/cli_io.h"
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

/* cnc-solve ships with the library: its version is that of the cnc.h it was built with. */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)
#define CNC_SOLVE_VERSION \
  CLI_STR(CNC_VERSION_MAJOR) "." CLI_STR(CNC_VERSION_MINOR) "." CLI_STR(CNC_VERSION_PATCH)

/* Exit statuses: one per way a run can end. */
enum {
  RC_CONVERGED = 0,  /* the solve reached the threshold (true residual too) */
  RC_USAGE = 1,      /* unknown option, missing or malformed value, value out of range */
  RC_INPUT = 2,      /* the matrix or right-hand side file cannot be read, is malformed, not
                        square, or of the wrong size (a complex b for a real A) */
  RC_SETUP = 3,      /* cnc refused a parameter or the input, or failed (no backend, memory) */
  RC_MAX_ITER = 4,   /* CNC_REASON_MAX_ITERATIONS */
  RC_STAGNATED = 5,  /* CNC_REASON_STAGNATED: recursive residual converged, true one did not */
  RC_INDEFINITE = 6, /* CNC_REASON_INDEFINITE_MATRIX or _PRECOND: CG met a non-SPD A or M */
  RC_BREAKDOWN = 7,  /* CNC_REASON_BREAKDOWN: BiCGSTAB or GMRES broke down */
  RC_NOT_FINITE = 8, /* CNC_REASON_NOT_FINITE: NaN or Inf in the iteration */
  RC_STOPPED = 9,    /* CNC_REASON_STOPPED: interrupted (Ctrl-C) or --time-limit reached */
  RC_OUTPUT = 10     /* an output file (-o, --json, --history, --history-plot) cannot be written */
};

static int reason_status(int reason) {
  switch (reason) {
    case CNC_REASON_CONVERGED:
      return RC_CONVERGED;
    case CNC_REASON_MAX_ITERATIONS:
      return RC_MAX_ITER;
    case CNC_REASON_STAGNATED:
      return RC_STAGNATED;
    case CNC_REASON_INDEFINITE_MATRIX:
    case CNC_REASON_INDEFINITE_PRECOND:
      return RC_INDEFINITE;
    case CNC_REASON_BREAKDOWN:
      return RC_BREAKDOWN;
    case CNC_REASON_NOT_FINITE:
      return RC_NOT_FINITE;
    case CNC_REASON_STOPPED:
      return RC_STOPPED;
    default: /* CNC_REASON_NONE after a solve, or a reason newer than this tool */
      return RC_SETUP;
  }
}

static const char* status_meaning(int rc) {
  static const char* const m[] = {"converged",      "usage error", "input error", "setup error",
                                  "max iterations", "stagnated",   "indefinite",  "breakdown",
                                  "not finite",     "stopped",     "output error"};
  return rc >= 0 && rc <= RC_OUTPUT ? m[rc] : "unknown";
}

static void usage(FILE* out) {
  fprintf(
      out,
      "usage: cnc-solve [options] [file.mtx]\n"
      "Solves A x = b for a real or complex square Matrix Market matrix (coordinate or array,\n"
      "plain or gzip), or without a file a 7-point 3D Poisson problem on an N^3 grid. b = A x*\n"
      "for a known x* (all ones for a real file, 1 + i/2 for a complex one) unless --rhs-file\n"
      "gives b. A complex matrix (field complex; symmetry general or hermitian) is solved by\n"
      "cncSolveCSRComplex; auto picks CG when it is Hermitian with a real positive diagonal.\n"
      "\n"
      "  --solver auto|cg|bicgstab|gmres  method (auto: CG when A is symmetric with a positive\n"
      "                               diagonal, told by the header or checked, else BiCGSTAB)\n"
      "  --backend auto|cpu|opencl|cuda\n"
      "  --precision double|single|mixed\n"
      "  --format auto|csr|bcrs2|bcrs4|sell|zcsr|zsell  (zcsr, zsell: complex matrices; zsell on "
      "CUDA)\n"
      "  --threshold T                stop when |r|/|b| <= T, 0 < T < 1 (default 1e-8)\n"
      "  --max-iter N                 iteration limit, N >= 1 (default 5 n, at least 100)\n"
      "  --threads N                  CPU threads, 0 = one per core (default)\n"
      "  --device N                   GPU device index (CNC_DEVICE_INDEX; see --list-devices)\n"
      "  --time-limit S               stop the solve after S seconds (exit status 9)\n"
      "  --grid N                     Poisson grid size, 2..1290 (default 64)\n"
      "  --rhs K                      K right-hand sides, b_k = A (x* + k) (default 1)\n"
      "  --rhs-file FILE              b from a Matrix Market array (or coordinate) file of n\n"
      "                               rows, one column per right-hand side\n"
      "  --repeat R                   solve R times (default 1)\n"
      "  -o, --output FILE            write x as a Matrix Market array (n x K, %%.17g): the\n"
      "                               last iterate, converged or not (see the exit status)\n"
      "  --json FILE                  write statistics as JSON\n"
      "  --history FILE               write the residual history as CSV\n"
      "                               (iteration,relative_residual,seconds since cncSolve)\n"
      "  --history-plot FILE.png      plot the residual history (needs libpng at build time)\n"
      "  -q, --quiet                  no progress line\n"
      "  -v, --verbose                cnc's informational messages too\n"
      "  -h, --help                   this text\n"
      "  --version                    cnc-solve's and the loaded libcnc's versions\n"
      "  --list-devices               the devices of each backend, numbered as --device counts\n"
      "FILE '-' is stdout for one of -o, --json, --history; the report then goes to stderr.\n"
      "A progress line (iteration, residual, rate, time left) shows on stderr when it is a\n"
      "terminal and the solve lasts over 0.5 s; Ctrl-C stops the solve (exit status 9).\n"
      "\n"
      "Exit status:\n"
      "   0  converged: |r|/|b| <= T, the true residual too\n"
      "   1  usage error: unknown option, malformed or out-of-range value\n"
      "   2  input error: a file cannot be read, is malformed, not square, or b has the wrong\n"
      "      size (or is complex for a real matrix)\n"
      "   3  setup error: cnc refused a parameter or the system, or failed (backend, memory)\n"
      "   4  max iterations reached\n"
      "   5  stagnated: the recursive residual converged, the true residual did not\n"
      "   6  indefinite matrix or preconditioner (CG needs symmetric positive definite)\n"
      "   7  breakdown of BiCGSTAB or GMRES\n"
      "   8  not finite: NaN or Inf appeared\n"
      "   9  stopped: interrupted (Ctrl-C) or --time-limit reached\n"
      "  10  an output file cannot be written\n"
      "Several right-hand sides or --repeat: the first run or system that fails decides.\n");
}

/* ---- Everything main holds, for the callbacks and the JSON report ----------------------- */

typedef struct {
  /* options */
  int verbose, quiet, solver_opt; /* solver_opt: 0 auto, else CNC_CG/BICGSTAB/GMRES */
  double threshold, time_limit;   /* time_limit < 0: none */
  /* progress line and history */
  int show_progress, line_shown, keep_history, history_oom, error_logged;
  double t0, last_draw;
  int64_t max_iter;
  int ring_len, ring_pos; /* the last draws, for the rate and the time left */
  int64_t ring_it[8];
  double ring_res[8], ring_t[8];
  cli_history history;
  /* the first error, for the JSON report */
  char error[1024];
} cli_state;

static volatile sig_atomic_t interrupted = 0;
static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_erase(cli_state* c) {
  if (!c->line_shown) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  c->line_shown = 0;
}

/* Prints "cnc-solve: <message>" on stderr and keeps the first message for the JSON report. */
static int fail(cli_state* c, int rc, const char* fmt, ...) {
  char m[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  progress_erase(c);
  fprintf(stderr, "cnc-solve: %s\n", m);
  if (!c->error[0]) snprintf(c->error, sizeof c->error, "%s", m);
  return rc;
}

/* A cnc call failed: the log callback printed cnc's message already (an error is logged). */
static int cnc_failed(cli_state* c, CNCstatus s, const char* call) {
  const char* m = cncGetErrorMessage();
  if (c->error_logged) return fail(c, RC_SETUP, "%s failed: %s", call, cncStatusString(s));
  return fail(c, RC_SETUP, "%s failed: %s: %s", call, cncStatusString(s), m ? m : "");
}

/* Every error after the context exists leaves through `done`, which frees what main holds. */
#define CHECK(call)                         \
  do {                                      \
    CNCstatus s_ = (call);                  \
    if (s_ != CNC_OK) {                     \
      status = cnc_failed(&cli, s_, #call); \
      goto done;                            \
    }                                       \
  } while (0)

static void on_log(int level, const char* message, void* data) {
  cli_state* c = data;
  if (level >= CNC_LOG_INFO && !c->verbose) return;
  progress_erase(c);
  fprintf(stderr, "cnc %s: %s\n",
          level == CNC_LOG_ERROR     ? "error"
          : level == CNC_LOG_WARNING ? "warning"
                                     : "info",
          message);
  if (level == CNC_LOG_ERROR) c->error_logged = 1;
}

static void format_seconds(double s, char* out, size_t len) {
  if (s < 60)
    snprintf(out, len, "%.0f s", ceil(s));
  else if (s < 3600)
    snprintf(out, len, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
  else
    snprintf(out, len, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* The progress line: iteration, residual, convergence rate per iteration and the time left,
 * over the draws of the last ~2 seconds; redrawn at most 4 times a second, from 0.5 s on. */
static void progress_draw(cli_state* c, int64_t it, double res, double t) {
  const int oldest = c->ring_len < 8 ? 0 : c->ring_pos;
  c->ring_it[c->ring_pos] = it, c->ring_res[c->ring_pos] = res, c->ring_t[c->ring_pos] = t;
  c->ring_pos = (c->ring_pos + 1) % 8;
  if (c->ring_len < 8) ++c->ring_len;
  char line[160], left[48] = "";
  int len = snprintf(line, sizeof line, "iteration %lld/%lld  |r|/|b| %.2e (to %.0e)",
                     (long long)it, (long long)c->max_iter, res, c->threshold);
  const int64_t dit = it - c->ring_it[oldest];
  if (dit > 0 && c->ring_res[oldest] > 0 && res > 0) {
    const double rate = exp(log(res / c->ring_res[oldest]) / (double)dit);
    const double per_it = (t - c->ring_t[oldest]) / (double)dit;
    if (rate < 1.0) {
      double need = ceil(log(c->threshold / res) / log(rate));
      const double room = (double)(c->max_iter - it);
      if (need < 0) need = 0;
      format_seconds(fmin(need, room) * per_it, left, sizeof left);
      len += snprintf(line + len, sizeof line - (size_t)len, "  rate %.4f/it  %s%s", rate,
                      need > room ? "max-iter in " : "~", left);
      if (need <= room) snprintf(line + len, sizeof line - (size_t)len, " left");
    } else {
      snprintf(line + len, sizeof line - (size_t)len, "  rate %.4f/it  not decreasing", rate);
    }
  }
  fprintf(stderr, "\r\033[K%s", line);
  fflush(stderr);
  c->line_shown = 1;
}

static int on_progress(CNCint iteration, double relative_residual, void* data) {
  cli_state* c = data;
  const double t = now() - c->t0;
  if (c->keep_history && !c->history_oom &&
      cli_history_add(&c->history, iteration, relative_residual, t))
    c->history_oom = 1;
  if (c->show_progress && t >= 0.5 && t - c->last_draw >= 0.25) {
    progress_draw(c, iteration, relative_residual, t);
    c->last_draw = t;
  }
  return interrupted || (c->time_limit >= 0 && t >= c->time_limit);
}

/* ---- The embedded Poisson problem -------------------------------------------------------- */

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
 * Returns 0, or an exit status after saying why not. */
static int poisson_matrix(cli_state* c, int grid, long chunk_entries) {
  const long g = grid, plane = 7 * g * g;
  long planes = chunk_entries > plane ? chunk_entries / plane : 1;
  if (planes > g) planes = g;
  CNCint64* off = malloc(sizeof(CNCint64) * (size_t)(planes * g + 1));
  CNCuint* ci = malloc(sizeof(CNCuint) * (size_t)(planes * plane));
  CNCuint* cj = malloc(sizeof(CNCuint) * (size_t)(planes * plane));
  double* cv = malloc(sizeof(double) * (size_t)(planes * plane));
  CNCstatus status = CNC_OK;
  if (!off || !ci || !cj || !cv) {
    free(off), free(ci), free(cj), free(cv);
    return fail(c, RC_SETUP, "out of memory");
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
  return status == CNC_OK ? 0 : cnc_failed(c, status, "cncAddIJCoefficients");
}

/* ---- Options ----------------------------------------------------------------------------- */

static int parse_enum(const char* option, const char* v, const char* const* names,
                      const int* values, int* out) {
  for (int i = 0; names[i]; ++i)
    if (!strcmp(v, names[i])) return *out = values[i], 0;
  fprintf(stderr, "cnc-solve: %s '%s': expected one of", option, v);
  for (int i = 0; names[i]; ++i) fprintf(stderr, "%s%s", i ? "|" : " ", names[i]);
  fprintf(stderr, "\n");
  return -1;
}

/* Opens an output file ("-": stdout). NULL after saying why. */
static FILE* open_output(cli_state* c, const char* path, const char* mode) {
  if (!strcmp(path, "-")) return stdout;
  FILE* f = fopen(path, mode);
  if (!f) fail(c, RC_OUTPUT, "%s: cannot open for writing: %s", path, strerror(errno));
  return f;
}

/* Closes an output file; 0, or RC_OUTPUT after saying why (a full disk shows here). */
static int close_output(cli_state* c, FILE** f, const char* path) {
  if (!*f) return 0;
  int bad = ferror(*f);
  const int e = errno;
  if (*f == stdout)
    bad |= fflush(stdout) != 0;
  else
    bad |= fclose(*f) != 0;
  *f = NULL;
  return bad ? fail(c, RC_OUTPUT, "%s: cannot write: %s", path, strerror(errno ? errno : e)) : 0;
}

enum {
  OPT_BACKEND = 256,
  OPT_PRECISION,
  OPT_FORMAT,
  OPT_SOLVER,
  OPT_THRESHOLD,
  OPT_MAX_ITER,
  OPT_THREADS,
  OPT_GRID,
  OPT_RHS,
  OPT_RHS_FILE,
  OPT_REPEAT,
  OPT_JSON,
  OPT_HISTORY,
  OPT_HISTORY_PLOT,
  OPT_TIME_LIMIT,
  OPT_VERSION,
  OPT_DEVICE,
  OPT_LIST_DEVICES
};

/* --list-devices: every backend's devices (cncGetDeviceCount/Name), on stdout. */
static int list_devices(void) {
  static const char* const names[] = {"cpu", "opencl", "cuda"};
  static const int kinds[] = {CNC_BACKEND_CPU, CNC_BACKEND_OPENCL, CNC_BACKEND_CUDA};
  for (int b = 0; b < 3; ++b) {
    CNCint count = 0;
    if (cncGetDeviceCount(kinds[b], &count) != CNC_OK) {
      fprintf(stderr, "cnc-solve: %s\n", cncGetLastErrorMessage());
      return RC_SETUP;
    }
    if (count == 0) printf("%-6s  none: %s\n", names[b], cncGetLastErrorMessage());
    for (CNCint i = 0; i < count; ++i) {
      const char* name = "";
      if (cncGetDeviceName(kinds[b], i, &name) != CNC_OK) {
        fprintf(stderr, "cnc-solve: %s\n", cncGetLastErrorMessage());
        return RC_SETUP;
      }
      printf("%-6s  %d  %s\n", names[b], (int)i, name);
    }
  }
  return RC_CONVERGED;
}

int main(int argc, char** argv) {
  static const char* const backends[] = {"auto", "cpu", "opencl", "cuda", NULL};
  static const int backend_v[] = {CNC_BACKEND_AUTO, CNC_BACKEND_CPU, CNC_BACKEND_OPENCL,
                                  CNC_BACKEND_CUDA};
  static const char* const precisions[] = {"double", "single", "mixed", NULL};
  static const int precision_v[] = {CNC_DOUBLE, CNC_SINGLE, CNC_MIXED};
  static const char* const formats[] = {"auto", "csr",  "bcrs2", "bcrs4",
                                        "sell", "zcsr", "zsell", NULL};
  static const int format_v[] = {CNC_FORMAT_AUTO,  CNC_FORMAT_CSR,  CNC_FORMAT_BCRS2,
                                 CNC_FORMAT_BCRS4, CNC_FORMAT_SELL, CNC_FORMAT_ZCSR,
                                 CNC_FORMAT_ZSELL};
  static const char* const solvers[] = {"auto", "cg", "bicgstab", "gmres", NULL};
  static const int solver_v[] = {0, CNC_CG, CNC_BICGSTAB, CNC_GMRES};
  static const struct option long_options[] = {
      {"backend", required_argument, NULL, OPT_BACKEND},
      {"precision", required_argument, NULL, OPT_PRECISION},
      {"format", required_argument, NULL, OPT_FORMAT},
      {"solver", required_argument, NULL, OPT_SOLVER},
      {"threshold", required_argument, NULL, OPT_THRESHOLD},
      {"max-iter", required_argument, NULL, OPT_MAX_ITER},
      {"threads", required_argument, NULL, OPT_THREADS},
      {"grid", required_argument, NULL, OPT_GRID},
      {"rhs", required_argument, NULL, OPT_RHS},
      {"rhs-file", required_argument, NULL, OPT_RHS_FILE},
      {"repeat", required_argument, NULL, OPT_REPEAT},
      {"output", required_argument, NULL, 'o'},
      {"json", required_argument, NULL, OPT_JSON},
      {"history", required_argument, NULL, OPT_HISTORY},
      {"history-plot", required_argument, NULL, OPT_HISTORY_PLOT},
      {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
      {"quiet", no_argument, NULL, 'q'},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, OPT_VERSION},
      {"device", required_argument, NULL, OPT_DEVICE},
      {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
      {NULL, 0, NULL, 0}};
  int backend = -1, precision = CNC_DOUBLE, format = CNC_FORMAT_AUTO;
  int64_t threads = 0, grid = 64, nrhs_opt = 0, repeat = 1, max_iter = 0, device = -1;
  const char *file = NULL, *rhs_file = NULL, *out_path = NULL, *json_path = NULL;
  const char *history_path = NULL, *plot_path = NULL;
  cli_state cli;
  memset(&cli, 0, sizeof cli);
  cli.threshold = 1e-8;
  cli.time_limit = -1;

  opterr = 0; /* our own messages */
  for (;;) {
    const int o = getopt_long(argc, argv, ":ho:qv", long_options, NULL);
    if (o == -1) break;
    const char* name = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    int bad = 0;
    switch (o) {
      case OPT_BACKEND:
        bad = parse_enum("--backend", optarg, backends, backend_v, &backend);
        break;
      case OPT_PRECISION:
        bad = parse_enum("--precision", optarg, precisions, precision_v, &precision);
        break;
      case OPT_FORMAT:
        bad = parse_enum("--format", optarg, formats, format_v, &format);
        break;
      case OPT_SOLVER:
        bad = parse_enum("--solver", optarg, solvers, solver_v, &cli.solver_opt);
        break;
      case OPT_THRESHOLD:
        bad = cli_parse_double("--threshold", optarg, 0.0, 1.0, 1, &cli.threshold);
        break;
      case OPT_TIME_LIMIT:
        bad = cli_parse_double("--time-limit", optarg, 0.0, 1e9, 0, &cli.time_limit);
        break;
      case OPT_MAX_ITER:
        bad = cli_parse_int64("--max-iter", optarg, 1, INT64_MAX, &max_iter);
        break;
      case OPT_THREADS: /* cnc itself judges the upper bound (4096) */
        bad = cli_parse_int64("--threads", optarg, 0, INT32_MAX, &threads);
        break;
      case OPT_DEVICE:
        bad = cli_parse_int64("--device", optarg, 0, INT32_MAX, &device);
        break;
      case OPT_LIST_DEVICES:
        return list_devices();
      case OPT_GRID: /* 1290^3 is the largest cube below CNC_NB_VARIABLES's 2^31 - 9 */
        bad = cli_parse_int64("--grid", optarg, 2, 1290, &grid);
        break;
      case OPT_RHS:
        bad = cli_parse_int64("--rhs", optarg, 1, 65536, &nrhs_opt);
        break;
      case OPT_REPEAT:
        bad = cli_parse_int64("--repeat", optarg, 1, INT32_MAX, &repeat);
        break;
      case OPT_RHS_FILE:
        rhs_file = optarg;
        break;
      case 'o':
        out_path = optarg;
        break;
      case OPT_JSON:
        json_path = optarg;
        break;
      case OPT_HISTORY:
        history_path = optarg;
        break;
      case OPT_HISTORY_PLOT:
#ifndef CNC_HAVE_PNG
        fprintf(stderr,
                "cnc-solve: --history-plot: this cnc-solve was built without libpng (install "
                "libpng-dev and rebuild); --history FILE writes the same data as CSV\n");
        bad = 1;
#endif
        plot_path = optarg;
        break;
      case 'q':
        cli.quiet = 1;
        break;
      case 'v':
        cli.verbose = 1;
        break;
      case 'h':
        usage(stdout);
        return RC_CONVERGED;
      case OPT_VERSION:
        printf("cnc-solve %s\nlibcnc %s (the library loaded)\n", CNC_SOLVE_VERSION,
               cncVersionString());
        return RC_CONVERGED;
      case ':':
        fprintf(stderr, "cnc-solve: option '%s' needs a value\n", name);
        bad = 1;
        break;
      default: /* '?': unknown, ambiguous, or a value given to an option that takes none */
        if (!strncmp(name, "--", 2) && strchr(name, '=') && optopt != 0)
          fprintf(stderr, "cnc-solve: option '%.*s' takes no value\n",
                  (int)(strchr(name, '=') - name), name);
        else if (!strncmp(name, "--", 2))
          fprintf(stderr, "cnc-solve: unknown or ambiguous option '%s'\n", name);
        else
          fprintf(stderr, "cnc-solve: unknown option '-%c'\n", optopt ? optopt : '?');
        bad = 1;
    }
    if (bad) {
      fprintf(stderr, "Try 'cnc-solve --help'.\n");
      return RC_USAGE;
    }
  }
  for (int a = optind; a < argc; ++a) {
    if (file) {
      fprintf(stderr,
              "cnc-solve: one matrix file only ('%s', then '%s')\nTry 'cnc-solve --help'.\n", file,
              argv[a]);
      return RC_USAGE;
    }
    file = argv[a];
  }
  /* At most one of -o, --json and --history writes to stdout; the human report then goes to
   * stderr. */
  const int to_stdout = (out_path && !strcmp(out_path, "-")) +
                        (json_path && !strcmp(json_path, "-")) +
                        (history_path && !strcmp(history_path, "-"));
  if (to_stdout > 1) {
    fprintf(stderr,
            "cnc-solve: only one of -o, --json and --history can write to stdout ('-')\n"
            "Try 'cnc-solve --help'.\n");
    return RC_USAGE;
  }
  FILE* report = to_stdout ? stderr : stdout;

  int status = RC_SETUP; /* until a solve has run */
  int solved = 0, nrhs = nrhs_opt ? (int)nrhs_opt : 1, poisson = file == NULL;
  const char* solver_name = "auto";
  char solver_why[512] = "";
  int symmetric = 1; /* what is known of A, told to cnc (CNC_SYMMETRIC) */
  long n = 0;
  mm_matrix m = {0}, mb = {0}; /* empty until read: mm_free is safe on every path */
  double* xs = NULL;           /* the known solution; NULL when b comes from a file */
  double* b = NULL;
  /* A complex matrix: its CSR (cncSolveCSRComplex) and x; b and xs then hold (re, im) pairs. */
  int is_complex = 0;
  cli_zcsr za = {0};
  double* zx = NULL;
  FILE *out = NULL, *json = NULL, *hist = NULL;
  CNCcontext ctx = NULL;
  /* Statistics of the last run, and the worst status over the runs. */
  const char *be = "", *dev = "", *fmt = "", *reason = "";
  CNCint64 nnz = 0, it = 0, bytes = 0;
  CNCint used_solver = 0;
  double err = NAN, true_err = NAN, t_asm = 0, t_conv = 0, t_up = 0, t_solve = 0, t_all = 0;
  double t_reorder = 0, gbs = 0, gflops = 0, max_err = NAN;
  char err_msg[512];
  int created = 0; /* output files opened: -o 1, --history 2, --history-plot 4 */

  /* Output files first, so that a path that cannot be written fails before a long solve. */
  if (json_path && !(json = open_output(&cli, json_path, "w"))) {
    json_path = NULL; /* nowhere to write the report */
    status = RC_OUTPUT;
    goto done;
  }
  if (out_path && !(out = open_output(&cli, out_path, "w"))) {
    status = RC_OUTPUT;
    goto done;
  }
  created |= out && out != stdout ? 1 : 0;
  if (history_path && !(hist = open_output(&cli, history_path, "w"))) {
    status = RC_OUTPUT;
    goto done;
  }
  created |= hist && hist != stdout ? 2 : 0;
  if (plot_path) {
    FILE* probe = fopen(plot_path, "wb");
    if (!probe) {
      status = fail(&cli, RC_OUTPUT, "%s: cannot open for writing: %s", plot_path, strerror(errno));
      goto done;
    }
    fclose(probe);
    created |= 4;
  }
  cli.keep_history = history_path || plot_path;

  if (!poisson) {
    if (mm_read(file, &m, err_msg, sizeof err_msg)) {
      status = fail(&cli, RC_INPUT, "%s", err_msg);
      goto done;
    }
    is_complex = m.field == MM_COMPLEX;
    const char* why = m.rows != m.cols ? "not square" : NULL;
    if (why) {
      status = fail(&cli, RC_INPUT, "%s (%d x %d, %s): %s", file, m.rows, m.cols,
                    m.field == MM_COMPLEX ? "complex" : "real", why);
      goto done;
    }
    n = m.rows;
  } else {
    n = (long)(grid * grid * grid);
  }
  if (rhs_file) {
    if (mm_read(rhs_file, &mb, err_msg, sizeof err_msg)) {
      status = fail(&cli, RC_INPUT, "--rhs-file %s", err_msg);
      goto done;
    }
    if ((mb.field == MM_COMPLEX && !is_complex) || mb.rows != n ||
        (nrhs_opt && mb.cols != nrhs_opt)) {
      status = fail(&cli, RC_INPUT,
                    "--rhs-file %s: %s%d x %d, but the matrix has %ld rows: expected %ld x %s",
                    rhs_file, mb.field == MM_COMPLEX ? "complex, " : "", mb.rows, mb.cols, n, n,
                    nrhs_opt ? "--rhs columns" : "K (one column per right-hand side)");
      goto done;
    }
    nrhs = mb.cols;
  }
  /* n fits CNCint (grid <= 1290); x* and b hold n * nrhs doubles each. */
  if (n == 0) {
    status = fail(&cli, RC_INPUT, "%s: the matrix is empty (0 x 0)", file);
    goto done;
  }
  if ((size_t)nrhs > SIZE_MAX / sizeof(double) / (size_t)n) {
    status =
        fail(&cli, RC_SETUP, "%ld unknowns x %d right-hand sides do not fit in memory", n, nrhs);
    goto done;
  }

  /* The method: --solver, or auto from what is known of A's symmetry. */
  {
    cli_symmetry sym = {0, 0, ""};
    char why[400];
    int spd = 0;
    if (poisson) {
      spd = 1;
      snprintf(why, sizeof why, "the Poisson matrix is symmetric positive definite");
    } else if (is_complex) {
      /* Complex: CG where A is Hermitian positive definite (checked), else BiCGSTAB. */
      if (cli_zcsr_from_mm(&m, &za)) {
        status = fail(&cli, RC_SETUP, "out of memory building the complex CSR");
        goto done;
      }
      const char* header = m.symmetry == MM_HERMITIAN ? "the header says complex hermitian"
                                                      : "the header says complex general";
      char w[300];
      if (cli.solver_opt == CNC_BICGSTAB || cli.solver_opt == CNC_GMRES) {
        symmetric = m.symmetry == MM_HERMITIAN;
        snprintf(why, sizeof why, "as asked");
      } else if ((spd = cli_zcsr_hermitian(&za, w, sizeof w)) != 0) {
        snprintf(why, sizeof why, "%s, A is Hermitian with a real positive diagonal (checked)",
                 header);
      } else {
        symmetric = 0;
        snprintf(why, sizeof why, "%s, but A is not Hermitian positive definite: %s", header, w);
      }
    } else if (m.symmetry == MM_SKEW_SYMMETRIC) {
      symmetric = 0;
      snprintf(why, sizeof why, "the header says skew-symmetric: A is not symmetric");
    } else if (cli.solver_opt == CNC_BICGSTAB || cli.solver_opt == CNC_GMRES) {
      symmetric = m.symmetry == MM_SYMMETRIC; /* not checked: not needed */
      snprintf(why, sizeof why, "as asked");
    } else {
      if (cli_check_symmetry(n, m.nnz, m.row, m.col, m.val, &sym)) {
        status = fail(&cli, RC_SETUP, "out of memory checking the matrix's symmetry");
        goto done;
      }
      symmetric = sym.symmetric;
      spd = sym.symmetric && sym.positive_diagonal;
      const char* header =
          m.symmetry == MM_SYMMETRIC ? "the header says symmetric" : "the header says general";
      if (spd)
        snprintf(why, sizeof why, "%s%s and every diagonal entry is positive", header,
                 m.symmetry == MM_SYMMETRIC ? "" : ", the values are symmetric (checked)");
      else if (sym.symmetric)
        snprintf(why, sizeof why, "%s%s, but A is not positive definite: %s", header,
                 m.symmetry == MM_SYMMETRIC ? "" : ", the values are symmetric (checked)", sym.why);
      else
        snprintf(why, sizeof why, "%s and the values are not symmetric (checked): %s", header,
                 sym.why);
    }
    if (cli.solver_opt == 0) {
      /* BiCGSTAB when CG does not fit: cnc's own default for nonsymmetric systems, with a
       * memory of a few vectors whatever n (GMRES keeps CNC_GMRES_RESTART + 1 = 31). */
      cli.solver_opt = spd ? CNC_CG : CNC_BICGSTAB;
      snprintf(solver_why, sizeof solver_why, "auto: %s", why);
    } else {
      snprintf(solver_why, sizeof solver_why, "--solver: %s", why);
      if (cli.solver_opt == CNC_CG && !spd)
        fprintf(stderr,
                "cnc-solve: warning: --solver cg on a matrix that is not symmetric positive "
                "definite (%s): CG may fail or not converge; --solver auto would pick "
                "BiCGSTAB\n",
                why);
    }
    solver_name = cli.solver_opt == CNC_CG         ? "cg"
                  : cli.solver_opt == CNC_BICGSTAB ? "bicgstab"
                                                   : "gmres";
  }

  ctx = cncNewContext();
  if (!ctx) {
    status = fail(&cli, RC_SETUP, "no context (out of memory)");
    goto done;
  }
  cncMakeCurrent(ctx);
  CHECK(cncSetLogCallback(on_log, &cli));
  CHECK(cncSetProgressCallback(on_progress, &cli));
  if (cli.verbose) CHECK(cncEnable(CNC_VERBOSE));
  CHECK(cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)n));
  CHECK(cncSolverParameteri(CNC_NB_SYSTEMS, nrhs));
  CHECK(cncSolverParameteri(CNC_SYMMETRIC, symmetric));
  CHECK(cncSolverParameteri(CNC_SOLVER, cli.solver_opt));
  CHECK(cncSolverParameterd(CNC_THRESHOLD, cli.threshold));
  CHECK(cncSolverParameteri(CNC_PRECISION, precision));
  CHECK(cncSolverParameteri(CNC_MATRIX_FORMAT, format));
  CHECK(cncSolverParameteri(CNC_NB_THREADS, (CNCint)threads));
#ifdef _OPENMP
  if (threads > 0 && threads <= 4096) omp_set_num_threads((int)threads); /* the tool's loops */
#endif
  if (backend >= 0) CHECK(cncSolverParameteri(CNC_BACKEND, backend));
  if (device >= 0) CHECK(cncSolverParameteri(CNC_DEVICE_INDEX, (CNCint)device));
  if (max_iter > 0) CHECK(cncSolverParameteri64(CNC_MAX_ITERATIONS, max_iter));
  CHECK(cncSolverParameteri64(CNC_NNZ_HINT, poisson ? 7 * (CNCint64)n : m.nnz));
  CHECK(cncGetInteger64v(CNC_MAX_ITERATIONS, &cli.max_iter));

  /* b: from the file, or A x* for the known solution x* (the tool's own work, outside the
   * assembly the library times). */
  const size_t parts = is_complex ? 2 : 1; /* doubles per value */
  b = calloc(parts * (size_t)n * (size_t)nrhs, sizeof(double));
  if (!rhs_file) xs = malloc(parts * sizeof(double) * (size_t)n * (size_t)nrhs);
  if (!b || (!rhs_file && !xs) || (poisson && !rhs_file && poisson_solution((int)grid, nrhs, xs))) {
    status = fail(&cli, RC_SETUP, "out of memory");
    goto done;
  }
  if (rhs_file && is_complex) {
    for (int64_t t = 0; t < mb.nnz; ++t) {
      const size_t e = 2 * (mb.row[t] + (size_t)mb.col[t] * (size_t)n);
      b[e] += mb.val[t];
      b[e + 1] += mb.imag ? mb.imag[t] : 0.0;
    }
    mm_free(&mb);
  } else if (is_complex) { /* x* = (1 + k)(1 + i/2) */
    for (size_t e = 0; e < (size_t)n * (size_t)nrhs; ++e)
      xs[2 * e] = 1.0 + (double)(e / (size_t)n), xs[2 * e + 1] = 0.5 * xs[2 * e];
    cli_zcsr_mul(&za, nrhs, xs, b);
  } else if (rhs_file) {
    for (int64_t t = 0; t < mb.nnz; ++t) b[mb.row[t] + (size_t)mb.col[t] * (size_t)n] += mb.val[t];
    mm_free(&mb);
  } else if (poisson) {
    poisson_rhs((int)grid, nrhs, xs, b);
  } else {
    for (int k = 0; k < nrhs; ++k)
      for (long i = 0; i < n; ++i) xs[i + k * n] = 1.0 + k;
    for (int64_t t = 0; t < m.nnz; ++t)
      for (int k = 0; k < nrhs; ++k) b[m.row[t] + k * n] += m.val[t] * xs[m.col[t] + k * n];
  }
  /* The matrix goes in through the bulk entry point (cncAddIJCoefficients): the Poisson one a
   * group of z-planes at a time, about 16 M entries (256 MiB) per call, since each call has a
   * fixed cost (milliseconds on 16 cores); the file's in one call (int32_t and uint32_t arrays
   * may alias, and its indices are >= 0). cnc has no bulk call for the right-hand side: one call
   * per value. */
  if (is_complex) { /* solved from its CSR by cncSolveCSRComplex, without assembly */
    zx = calloc(2 * (size_t)n * (size_t)nrhs, sizeof(double));
    if (!zx) {
      status = fail(&cli, RC_SETUP, "out of memory");
      goto done;
    }
    goto assembled;
  }
  CHECK(cncBegin(CNC_SYSTEM));
  CHECK(cncBegin(CNC_MATRIX));
  if (poisson) {
    if ((status = poisson_matrix(&cli, (int)grid, 16L << 20)) != 0) goto done;
    status = RC_SETUP;
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
assembled:
  mm_free(&m);

  cli.show_progress = !cli.quiet && isatty(fileno(stderr));
  int worst = RC_CONVERGED;
  for (int r = 0; r < repeat; ++r) {
    if (is_complex) memset(zx, 0, 2 * sizeof(double) * (size_t)n * (size_t)nrhs);
    for (int k = 0; k < nrhs && !is_complex; ++k)
      for (long i = 0; i < n; ++i) CHECK(cncMultiSetVariable((CNCuint)i, (CNCuint)k, 0.0));
    cli_history_clear(&cli.history);
    cli.ring_len = cli.ring_pos = 0;
    cli.last_draw = 0;
    /* Ctrl-C stops the solve at its next check (status 9); a second one ends the process. */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    cli.t0 = now();
    const CNCstatus s = is_complex ? cncSolveCSRComplex((CNCuint)n, za.row_ptr, za.col, za.val, 0,
                                                        (CNCuint)nrhs, b, zx)
                                   : cncSolve();
    sigaction(SIGINT, &old, NULL);
    progress_erase(&cli);
    if (s != CNC_OK) {
      status = cnc_failed(&cli, s, is_complex ? "cncSolveCSRComplex()" : "cncSolve()");
      goto done;
    }
    solved = 1;
    CNCint reason_code = CNC_REASON_NONE;
    CHECK(cncGetString(CNC_BACKEND_NAME, &be));
    CHECK(cncGetString(CNC_DEVICE_NAME, &dev));
    CHECK(cncGetString(CNC_FORMAT_NAME, &fmt));
    CHECK(cncGetString(CNC_REASON_NAME, &reason));
    CHECK(cncGetIntegerv(CNC_REASON, &reason_code));
    CHECK(cncGetIntegerv(CNC_SOLVER_USED, &used_solver));
    CHECK(cncGetInteger64v(CNC_NNZ, &nnz));
    CHECK(cncGetInteger64v(CNC_USED_ITERATIONS, &it));
    CHECK(cncGetInteger64v(CNC_BYTES_PER_ITERATION, &bytes));
    CHECK(cncGetDoublev(CNC_ERROR, &err));
    CHECK(cncGetDoublev(CNC_TRUE_ERROR, &true_err));
    CHECK(cncGetDoublev(CNC_ASSEMBLY_TIME, &t_asm));
    CHECK(cncGetDoublev(CNC_CONVERSION_TIME, &t_conv));
    CHECK(cncGetDoublev(CNC_REORDER_TIME, &t_reorder));
    CHECK(cncGetDoublev(CNC_UPLOAD_TIME, &t_up));
    CHECK(cncGetDoublev(CNC_SOLVE_TIME, &t_solve));
    CHECK(cncGetDoublev(CNC_ELAPSED_TIME, &t_all));
    CHECK(cncGetDoublev(CNC_GBYTES_PER_SECOND, &gbs));
    CHECK(cncGetDoublev(CNC_GFLOPS, &gflops));
    /* cnc reports no check once every system has stopped (BiCGSTAB may stop half-way through
     * its last reported iteration): the solve's final residual closes the history. */
    if (cli.keep_history && !cli.history_oom) {
      cli_history* h = &cli.history;
      if (h->count > 0 && h->iteration[h->count - 1] == it) {
        h->residual[h->count - 1] = err;
        h->seconds[h->count - 1] = now() - cli.t0;
      } else if (cli_history_add(h, it, err, now() - cli.t0)) {
        cli.history_oom = 1;
      }
    }
    if (xs && is_complex) { /* the largest modulus of x - x* */
      max_err = 0.0;
      for (size_t e = 0; e < (size_t)n * (size_t)nrhs; ++e) {
        const double d = hypot(zx[2 * e] - xs[2 * e], zx[2 * e + 1] - xs[2 * e + 1]);
        if (!(d <= max_err)) max_err = d; /* NaN sticks */
      }
    } else if (xs) {
      max_err = 0.0;
      for (int k = 0; k < nrhs; ++k)
        for (long i = 0; i < n; ++i) {
          double v;
          CHECK(cncMultiGetVariable((CNCuint)i, (CNCuint)k, &v));
          const double e = fabs(v - xs[i + k * n]);
          if (!(e <= max_err)) max_err = e; /* NaN sticks */
        }
    }
    const int rc = reason_status(reason_code);
    if (worst == RC_CONVERGED) worst = rc;
    const char* used = used_solver == CNC_CG         ? "CG"
                       : used_solver == CNC_BICGSTAB ? "BiCGSTAB"
                       : used_solver == CNC_GMRES    ? "GMRES"
                                                     : "?";
    if (poisson)
      fprintf(report, "problem     3D Poisson 7-point, %lld^3 grid\n", (long long)grid);
    else
      fprintf(report, "problem     %s\n", file);
    fprintf(report, "unknowns    %ld%s x %d right-hand side%s%s, nnz %lld%s\n", n,
            is_complex ? " complex" : "", nrhs, nrhs > 1 ? "s" : "",
            rhs_file ? " (from --rhs-file)" : "", (long long)nnz,
            is_complex ? " (its real-equivalent form: 4 real entries per complex entry)" : "");
    fprintf(report, "backend     %s (%s), format %s, precision %s\n", be, dev, fmt,
            precisions[precision - CNC_DOUBLE]);
    fprintf(report, "solver      %s (%s)\n", used, solver_why);
    fprintf(report, "result      %s after %lld iterations\n", reason, (long long)it);
    if (xs)
      fprintf(report, "residual    |r|/|b| = %.3e recursive, %.3e true; max |x - x*| = %.3e\n", err,
              true_err, max_err);
    else
      fprintf(report, "residual    |r|/|b| = %.3e recursive, %.3e true\n", err, true_err);
    fprintf(report,
            "time        assembly %.3f s, conversion %.3f s, upload %.3f s, solve %.3f s (%.3f "
            "ms/iteration)\n",
            t_asm, t_conv, t_up, t_solve, it > 0 ? 1e3 * t_solve / (double)it : 0.0);
    fprintf(report, "throughput  %.2f GB/s (%lld bytes/iteration minimum), %.2f GFLOP/s\n", gbs,
            (long long)bytes, gflops);
    if (rc != RC_CONVERGED)
      fail(&cli, rc,
           "the solve did not converge: %s%s after %lld iterations, |r|/|b| = %.3e "
           "(threshold %.1e) (exit status %d)",
           reason, interrupted ? " (interrupted)" : "", (long long)it, true_err, cli.threshold, rc);
  }
  status = worst;

  /* The outputs of the last run. */
  if (out) {
    fprintf(out, "%%%%MatrixMarket matrix array %s general\n", is_complex ? "complex" : "real");
    fprintf(out, "%% x of cnc-solve %s (libcnc %s): %s after %lld iterations, |r|/|b| %.3e\n",
            CNC_SOLVE_VERSION, cncVersionString(), reason, (long long)it, true_err);
    fprintf(out, "%ld %d\n", n, nrhs);
    for (size_t e = 0; is_complex && e < (size_t)n * (size_t)nrhs; ++e)
      fprintf(out, "%.17g %.17g\n", zx[2 * e], zx[2 * e + 1]);
    for (int k = 0; k < nrhs && !is_complex; ++k)
      for (long i = 0; i < n; ++i) {
        double v;
        CHECK(cncMultiGetVariable((CNCuint)i, (CNCuint)k, &v));
        fprintf(out, "%.17g\n", v);
      }
    const int rc = close_output(&cli, &out, out_path);
    if (rc && status == RC_CONVERGED) status = rc;
  }
  if (hist) {
    cli_history_write_csv(&cli.history, hist);
    const int rc = close_output(&cli, &hist, history_path);
    if (rc && status == RC_CONVERGED) status = rc;
  }
  if (plot_path) {
    if (cli_history_plot(&cli.history, cli.threshold, plot_path, err_msg, sizeof err_msg)) {
      fail(&cli, RC_OUTPUT, "%s", err_msg);
      if (status == RC_CONVERGED) status = RC_OUTPUT;
    }
  }
  if (cli.history_oom)
    fprintf(stderr, "cnc-solve: warning: out of memory: the history is cut after %zu samples\n",
            cli.history.count);

done:
  if (json) {
    fprintf(json, "{\n  \"cnc_solve_version\": ");
    cli_json_string(json, CNC_SOLVE_VERSION);
    fprintf(json, ",\n  \"library_version\": ");
    cli_json_string(json, cncVersionString());
    fprintf(json, ",\n  \"problem\": ");
    cli_json_string(json, poisson ? "poisson" : "file");
    fprintf(json, ",\n  \"file\": ");
    if (poisson)
      fputs("null", json);
    else
      cli_json_string(json, file);
    fprintf(json, ",\n  \"grid\": ");
    if (poisson)
      fprintf(json, "%lld", (long long)grid);
    else
      fputs("null", json);
    fprintf(json, ",\n  \"rhs_file\": ");
    if (rhs_file)
      cli_json_string(json, rhs_file);
    else
      fputs("null", json);
    fprintf(json, ",\n  \"n\": %ld,\n  \"nrhs\": %d,\n  \"nnz\": %lld", n, nrhs, (long long)nnz);
    fprintf(json, ",\n  \"backend\": ");
    cli_json_string(json, be);
    fprintf(json, ",\n  \"device\": ");
    cli_json_string(json, dev);
    fprintf(json, ",\n  \"format\": ");
    cli_json_string(json, fmt);
    fprintf(json, ",\n  \"precision\": ");
    cli_json_string(json, precisions[precision - CNC_DOUBLE]);
    fprintf(json, ",\n  \"solver\": ");
    cli_json_string(json, solved ? (used_solver == CNC_CG         ? "cg"
                                    : used_solver == CNC_BICGSTAB ? "bicgstab"
                                                                  : "gmres")
                                 : solver_name);
    fprintf(json, ",\n  \"solver_choice\": ");
    cli_json_string(json, solver_why);
    fprintf(json, ",\n  \"threshold\": ");
    cli_json_number(json, cli.threshold);
    fprintf(json, ",\n  \"max_iterations\": %lld", (long long)cli.max_iter);
    fprintf(json, ",\n  \"repeat\": %lld", (long long)repeat);
    fprintf(json, ",\n  \"solved\": %s", solved ? "true" : "false");
    fprintf(json, ",\n  \"iterations\": %lld,\n  \"reason\": ", (long long)it);
    cli_json_string(json, solved ? reason : "none");
    fprintf(json, ",\n  \"residual\": ");
    cli_json_number(json, solved ? err : NAN);
    fprintf(json, ",\n  \"true_residual\": ");
    cli_json_number(json, solved ? true_err : NAN);
    fprintf(json, ",\n  \"max_error\": ");
    cli_json_number(json, solved ? max_err : NAN);
    fprintf(json, ",\n  \"times\": {\"assembly\": ");
    cli_json_number(json, t_asm);
    fprintf(json, ", \"conversion\": ");
    cli_json_number(json, t_conv);
    fprintf(json, ", \"reorder\": ");
    cli_json_number(json, t_reorder);
    fprintf(json, ", \"upload\": ");
    cli_json_number(json, t_up);
    fprintf(json, ", \"solve\": ");
    cli_json_number(json, t_solve);
    fprintf(json, ", \"elapsed\": ");
    cli_json_number(json, t_all);
    fprintf(json, "},\n  \"gbytes_per_second\": ");
    cli_json_number(json, gbs);
    fprintf(json, ",\n  \"gflops\": ");
    cli_json_number(json, gflops);
    fprintf(json, ",\n  \"bytes_per_iteration\": %lld", (long long)bytes);
    fprintf(json, ",\n  \"error\": ");
    if (cli.error[0] && status != RC_CONVERGED)
      cli_json_string(json, cli.error);
    else
      fputs("null", json);
    /* The JSON cannot report its own failure to be written: its status is the one before. */
    fprintf(json, ",\n  \"exit_status\": %d,\n  \"exit_meaning\": ", status);
    cli_json_string(json, status_meaning(status));
    fprintf(json, "\n}\n");
    const int rc = close_output(&cli, &json, json_path);
    if (rc && status == RC_CONVERGED) status = rc;
  }
  if (out && out != stdout) fclose(out);
  if (hist && hist != stdout) fclose(hist);
  if (!solved) { /* nothing to write: remove the files opened (so created) for it */
    if (created & 1) remove(out_path);
    if (created & 2) remove(history_path);
    if (created & 4) remove(plot_path);
  }
  cli_history_free(&cli.history);
  free(xs);
  free(b);
  free(zx);
  cli_zcsr_free(&za);
  mm_free(&m);
  mm_free(&mb);
  if (ctx) cncDeleteContext(ctx);
  return status;
}
