/* libFuzzer harness: random sequences of cnc.h calls on one context (CPU backend, n <= 64):
 * Begin/End with any primitive, parameters and getters with any enum and value, variables and
 * locks with any index, row-wise, entry-wise, bulk and pattern-first assembly, solves, CSR solves,
 * errors, callbacks, NULL where a call takes a pointer, and calls without a current context.
 * Every call must return a status of cnc.h; a refused call must leave the state, its output
 * argument and a sticky error as the contract says; the context is deleted at the end (leaks are
 * LeakSanitizer's to find). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnc.h"
#include "fuzz_input.h"

enum { max_n = 64, max_bulk = 48, max_ops = 400 };

static void quiet(int level, const char* message, void* user) {
  (void)level, (void)message, (void)user;
}

/* Stops the solve after `*user` checks (0: never). */
static int progress(CNCint iteration, double residual, void* user) {
  (void)residual;
  const int after = *(const int*)user;
  return after > 0 && iteration >= after;
}

static int trace; /* CNC_FUZZ_TRACE=1: every call and its status on stderr (reproductions) */

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  trace = getenv("CNC_FUZZ_TRACE") != NULL;
  setenv("CNC_NUM_THREADS", "1", 1);
  setenv("CNC_BACKEND", "cpu", 1);
  setenv("CNC_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
  return 0;
}

static void die(const char* call, const char* what, CNCstatus st) {
  fprintf(stderr, "fuzz_state_machine: %s: %s (status %d: %s)\n", call, what, st,
          cncGetLastErrorMessage());
  abort();
}

static CNCint state_now(void) {
  CNCint s = -1;
  if (cncGetIntegerv(CNC_STATE, &s) != CNC_OK) die("cncGetIntegerv(CNC_STATE)", "failed", 0);
  return s;
}

static CNCint nb_variables(void) {
  CNCint n = 0;
  cncGetIntegerv(CNC_NB_VARIABLES, &n);
  return n;
}

/* What every call's status must satisfy; `before` is the state before the call. */
static void check(const char* call, CNCstatus st, CNCint before) {
  if (trace) fprintf(stderr, "%s -> %d %s\n", call, st, st ? cncGetLastErrorMessage() : "");
  if (st > CNC_OK || st < CNC_ERR_NO_FP64) die(call, "status outside cnc.h", st);
  if (st == CNC_OK) return;
  if (st == CNC_ERR_NO_CONTEXT) die(call, "no context, but one is current", st);
  if (st == CNC_ERR_INTERNAL) die(call, "CNC_ERR_INTERNAL (a bug, says cnc.h)", st);
  /* The one refusal that moves on, by design: cncEnd(CNC_ROW) drops a row that has no place
   * (beyond n in plain mode, or a full pattern row) and leaves the row (src/api/api_system.cpp). */
  const int row_dropped = before == CNC_STATE_ROW && state_now() == CNC_STATE_MATRIX &&
                          !strcmp(call, "cncEnd(CNC_ROW)") &&
                          (st == CNC_ERR_INDEX_OUT_OF_RANGE || st == CNC_ERR_OVERFLOW);
  if (state_now() != before && !row_dropped) die(call, "a refused call changed the state", st);
  if (cncGetError() == CNC_OK) die(call, "a refused call left no sticky error", st);
  if (*cncGetLastErrorMessage() == '\0') die(call, "a refused call left no message", st);
}

static const CNCenum primitives[] = {CNC_SYSTEM, CNC_MATRIX, CNC_ROW, CNC_MATRIX_PATTERN};

/* Every parameter, statistic, flag and string enum of cnc.h, and a few that are none. */
static const CNCenum pnames[] = {CNC_NB_VARIABLES,
                                 CNC_NB_SYSTEMS,
                                 CNC_LEAST_SQUARES,
                                 CNC_SYMMETRIC,
                                 CNC_SOLVER,
                                 CNC_PRECONDITIONER,
                                 CNC_MAX_ITERATIONS,
                                 CNC_THRESHOLD,
                                 CNC_PRECISION,
                                 CNC_MATRIX_FORMAT,
                                 CNC_BACKEND,
                                 CNC_NB_THREADS,
                                 CNC_NNZ_HINT,
                                 CNC_DEVICE_INDEX,
                                 CNC_CHECK_INTERVAL,
                                 CNC_GMRES_RESTART,
                                 CNC_SSOR_OMEGA,
                                 CNC_REORDER,
                                 CNC_USED_ITERATIONS,
                                 CNC_ERROR,
                                 CNC_TRUE_ERROR,
                                 CNC_REASON,
                                 CNC_ELAPSED_TIME,
                                 CNC_NNZ,
                                 CNC_BACKEND_USED,
                                 CNC_FORMAT_USED,
                                 CNC_ZERO_DIAGONALS,
                                 CNC_STATE,
                                 CNC_BLOCK_FILL_RATIO,
                                 CNC_TRUE_ERROR_MIN,
                                 CNC_SOLVER_USED,
                                 CNC_REORDER_USED,
                                 CNC_LONG_ROWS,
                                 CNC_BYTES_PER_ITERATION,
                                 CNC_GFLOPS,
                                 CNC_VERBOSE,
                                 CNC_KEEP_MATRIX,
                                 CNC_NORMALIZE_ROWS,
                                 CNC_BACKEND_NAME,
                                 CNC_DEVICE_NAME,
                                 CNC_FORMAT_NAME,
                                 CNC_REASON_NAME,
                                 CNC_VERSION_STRING,
                                 CNC_CPU_SIMD,
                                 CNC_ORDERING_NAME,
                                 CNC_CHOICE_REASON,
                                 0,
                                 -1,
                                 0x7fffffff,
                                 0x113,
                                 0x818,
                                 0xB09};
enum { n_pnames = sizeof pnames / sizeof pnames[0] };

static CNCenum fz_pname(fuzz_input* in) {
  const uint8_t t = fz_u8(in);
  return t < 250 ? pnames[t % n_pnames] : (CNCenum)fz_u32(in);
}

/* Valid values that would turn a call into gigabytes or hours (variables, systems, threads,
 * iterations) are made small: they are not what this harness is for. */
static int64_t capped(CNCenum p, int64_t v) {
  if (p == CNC_NB_VARIABLES && v > max_n && v <= INT32_MAX - 8) return v % (max_n + 1);
  if (p == CNC_NB_SYSTEMS && v > 4 && v <= 4096) return 1 + v % 4;
  if (p == CNC_NB_THREADS && v > 2 && v <= 4096) return 1;
  if (p == CNC_MAX_ITERATIONS && v > 200) return 200;
  return v;
}

static int is_capped(CNCenum p) {
  return p == CNC_NB_VARIABLES || p == CNC_NB_SYSTEMS || p == CNC_NB_THREADS ||
         p == CNC_MAX_ITERATIONS;
}

/* A value for any parameter: valid enums of every group, boundaries, small integers, raw bits. */
static int64_t fz_value(fuzz_input* in) {
  static const int64_t table[] = {0,
                                  1,
                                  2,
                                  3,
                                  -1,
                                  7,
                                  64,
                                  CNC_SOLVER_DEFAULT,
                                  CNC_CG,
                                  CNC_BICGSTAB,
                                  CNC_GMRES,
                                  CNC_PRECOND_NONE,
                                  CNC_PRECOND_JACOBI,
                                  CNC_PRECOND_SSOR,
                                  CNC_DOUBLE,
                                  CNC_SINGLE,
                                  CNC_MIXED,
                                  CNC_FORMAT_AUTO,
                                  CNC_FORMAT_CSR,
                                  CNC_FORMAT_BCRS2,
                                  CNC_FORMAT_BCRS4,
                                  CNC_FORMAT_SELL,
                                  CNC_BACKEND_AUTO,
                                  CNC_BACKEND_CPU,
                                  CNC_BACKEND_OPENCL,
                                  CNC_BACKEND_CUDA,
                                  CNC_REORDER_AUTO,
                                  CNC_REORDER_NONE,
                                  CNC_REORDER_RCM,
                                  INT32_MAX,
                                  INT32_MIN,
                                  (int64_t)1 << 40,
                                  INT64_MAX,
                                  INT64_MIN,
                                  4096,
                                  4097,
                                  100000};
  const uint8_t t = fz_u8(in);
  return t < 200 ? table[t % (sizeof table / sizeof table[0])] : (int64_t)fz_u64(in);
}

static CNCint fz_value32(fuzz_input* in, CNCenum p) {
  const int64_t v = fz_value(in);
  return (CNCint)capped(p, v > INT32_MAX || v < INT32_MIN ? v >> 32 : v);
}

static double fz_real_value(fuzz_input* in, CNCenum p) {
  static const double table[] = {1e-6, 0.5, 1.0, 1.5, 2.0, 0.0, -1.0, 1e-300, 1e300, 3.5, NAN};
  const uint8_t t = fz_u8(in);
  if (t < 100) return table[t % (sizeof table / sizeof table[0])];
  if (t < 200 || is_capped(p)) return (double)capped(p, fz_value(in));
  return fz_double(in);
}

/* cncSolveCSR on -u'' = 1 (n <= 8 points), or cncSolveCSRDevice, which must refuse host
 * arrays; sometimes with a NULL array or nrhs = 0. */
static void csr_call(fuzz_input* in, int device) {
  const CNCuint n = 1 + fz_pick(in, 8);
  const CNCuint nrhs = fz_pick(in, 3);
  int64_t* rp = malloc(sizeof(int64_t) * (n + 1));
  uint32_t* col = malloc(sizeof(uint32_t) * 3 * n);
  double* val = malloc(sizeof(double) * 3 * n);
  double* b = malloc(sizeof(double) * n * (nrhs ? nrhs : 1));
  double* x = malloc(sizeof(double) * n * (nrhs ? nrhs : 1));
  if (!rp || !col || !val || !b || !x) abort();
  int64_t at = 0;
  for (CNCuint i = 0; i < n; ++i) {
    rp[i] = at;
    if (i > 0) col[at] = i - 1, val[at++] = -1.0;
    col[at] = i, val[at++] = 2.0;
    if (i + 1 < n) col[at] = i + 1, val[at++] = -1.0;
  }
  rp[n] = at;
  for (CNCuint i = 0; i < n * (nrhs ? nrhs : 1); ++i) b[i] = 1.0, x[i] = 0.0;
  const unsigned nulls = fz_u8(in) >= 224 ? 1u << fz_pick(in, 5) : 0;
  const CNCint before = state_now();
  CNCstatus (*solve)(CNCuint, const CNCint64*, const CNCuint*, const double*, CNCint, CNCuint,
                     const double*, double*) = device ? cncSolveCSRDevice : cncSolveCSR;
  const CNCstatus st =
      solve(n, (nulls & 1) ? NULL : rp, (nulls & 2) ? NULL : col, (nulls & 4) ? NULL : val, 0, nrhs,
            (nulls & 8) ? NULL : b, (nulls & 16) ? NULL : x);
  check(device ? "cncSolveCSRDevice" : "cncSolveCSR", st, before);
  if (st == CNC_OK && (device || nulls || nrhs == 0))
    die("cncSolveCSR", "accepted a device call, a NULL array or nrhs = 0", st);
  free(rp), free(col), free(val), free(b), free(x);
}

static void bulk_call(fuzz_input* in) {
  const CNCuint n = (CNCuint)nb_variables();
  const unsigned count = fz_pick(in, max_bulk + 1);
  CNCuint* i = malloc(sizeof(CNCuint) * (count ? count : 1));
  CNCuint* j = malloc(sizeof(CNCuint) * (count ? count : 1));
  double* v = malloc(sizeof(double) * (count ? count : 1));
  if (!i || !j || !v) abort();
  for (unsigned t = 0; t < count; ++t) i[t] = fz_index(in, n), j[t] = fz_index(in, n);
  for (unsigned t = 0; t < count; ++t) v[t] = fz_double(in);
  CNCint64 passed = count;
  unsigned nulls = 0;
  switch (fz_pick(in, 8)) {
    case 0:
      nulls = 1u << fz_pick(in, 3);
      break;
    case 1: /* huge or negative counts with NULL arrays: refused before any read */
      passed = fz_pick(in, 2) ? -(CNCint64)fz_u8(in) - 1 : (CNCint64)1 << 40;
      nulls = 7;
      break;
    case 2:
      passed = -1;
      break;
    default:
      break;
  }
  const CNCint before = state_now();
  const CNCstatus st = cncAddIJCoefficients(passed, (nulls & 1) ? NULL : i, (nulls & 2) ? NULL : j,
                                            (nulls & 4) ? NULL : v);
  check("cncAddIJCoefficients", st, before);
  if (st == CNC_OK && ((nulls && passed != 0) || passed < 0))
    die("cncAddIJCoefficients", "accepted NULL arrays or a negative count", st);
  free(i), free(j), free(v);
}

static void row_lengths_call(fuzz_input* in) {
  const CNCint n = nb_variables();
  CNCuint* lengths = malloc(sizeof(CNCuint) * (size_t)(n > 0 ? n : 1));
  if (!lengths) abort();
  for (CNCint r = 0; r < n; ++r) lengths[r] = fz_pick(in, 9);
  const int null = fz_u8(in) >= 240;
  const CNCint before = state_now();
  const CNCstatus st = cncSetRowLengths(null ? NULL : lengths);
  check("cncSetRowLengths", st, before);
  if (st == CNC_OK && null) die("cncSetRowLengths", "accepted NULL", st);
  free(lengths);
}

/* A getter: a refused call must leave its output as it was. */
static void getter_call(fuzz_input* in) {
  const CNCenum p = fz_pname(in);
  const int null = fz_u8(in) >= 240;
  const CNCint before = state_now();
  CNCstatus st;
  switch (fz_pick(in, 5)) {
    case 0: {
      CNCint v = 12345;
      st = cncGetIntegerv(p, null ? NULL : &v);
      check("cncGetIntegerv", st, before);
      if (st != CNC_OK && v != 12345) die("cncGetIntegerv", "refused, but wrote", st);
      break;
    }
    case 1: {
      CNCint64 v = 12345;
      st = cncGetInteger64v(p, null ? NULL : &v);
      check("cncGetInteger64v", st, before);
      if (st != CNC_OK && v != 12345) die("cncGetInteger64v", "refused, but wrote", st);
      break;
    }
    case 2: {
      double v = 12345.0;
      st = cncGetDoublev(p, null ? NULL : &v);
      check("cncGetDoublev", st, before);
      if (st != CNC_OK && v != 12345.0) die("cncGetDoublev", "refused, but wrote", st);
      break;
    }
    case 3: {
      const char* s = NULL;
      st = cncGetString(p, null ? NULL : &s);
      check("cncGetString", st, before);
      if (st == CNC_OK && (s == NULL || strlen(s) > 4096)) die("cncGetString", "no string", st);
      break;
    }
    default: {
      CNCboolean v = 7;
      st = cncIsEnabled(p, null ? NULL : &v);
      check("cncIsEnabled", st, before);
      if (st == CNC_OK && v != CNC_TRUE && v != CNC_FALSE) die("cncIsEnabled", "not a bool", st);
      break;
    }
  }
  if (st == CNC_OK && null) die("a getter", "accepted NULL", st);
}

static void solve_call(void) {
  const CNCint before = state_now();
  const CNCstatus st = cncSolve();
  check("cncSolve", st, before);
  if (st != CNC_OK) return;
  CNCint reason = 0;
  double err = 0.0, threshold = 0.0;
  cncGetIntegerv(CNC_REASON, &reason);
  if (trace) fprintf(stderr, "  reason 0x%x\n", (unsigned)reason);
  if (reason < CNC_REASON_NONE || reason > CNC_REASON_BREAKDOWN)
    die("cncSolve", "unknown reason", st);
  cncGetDoublev(CNC_TRUE_ERROR, &err);
  cncGetDoublev(CNC_THRESHOLD, &threshold);
  /* Converged means a true residual within the solvers' slack of 2 (src/solver/pcg.hpp). */
  if (reason == CNC_REASON_CONVERGED && !(err <= 2.0 * threshold * (1 + 1e-9)))
    die("cncSolve", "converged with a true error above the threshold", st);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_input in = {data, size, 0};
  static int stop_after = 0;
  CNCcontext ctx = cncNewContext();
  if (!ctx) abort();
  if (cncMakeCurrent(ctx) != CNC_OK) abort();
  cncSetLogCallback(quiet, NULL);
  cncSolverParameteri(CNC_NB_THREADS, 1);
  cncSolverParameteri(CNC_MAX_ITERATIONS, 200);
  for (int op = 0; op < max_ops && fz_left(&in); ++op) {
    const CNCint n = nb_variables();
    const CNCuint un = n > 0 ? (CNCuint)n : 0;
    const CNCint before = state_now();
    const uint8_t code = fz_u8(&in);
    switch (code % 26) {
      case 0: {
        const uint8_t t = fz_u8(&in);
        check("cncBegin", cncBegin(t < 240 ? primitives[t % 4] : (CNCenum)fz_u32(&in)), before);
        break;
      }
      case 1: {
        const uint8_t t = fz_u8(&in);
        const CNCenum prim = t < 240 ? primitives[t % 4] : (CNCenum)fz_u32(&in);
        check(prim == CNC_ROW ? "cncEnd(CNC_ROW)" : "cncEnd", cncEnd(prim), before);
        break;
      }
      case 2: {
        const CNCenum p = fz_pname(&in);
        check("cncSolverParameteri", cncSolverParameteri(p, fz_value32(&in, p)), before);
        break;
      }
      case 3: {
        const CNCenum p = fz_pname(&in);
        check("cncSolverParameterd", cncSolverParameterd(p, fz_real_value(&in, p)), before);
        break;
      }
      case 4: {
        const CNCenum p = fz_pname(&in);
        check("cncSolverParameteri64", cncSolverParameteri64(p, capped(p, fz_value(&in))), before);
        break;
      }
      case 5:
      case 6:
        getter_call(&in);
        break;
      case 7: {
        const CNCenum f = fz_pname(&in);
        check(code & 32 ? "cncEnable" : "cncDisable", code & 32 ? cncEnable(f) : cncDisable(f),
              before);
        break;
      }
      case 8: {
        const CNCuint i = fz_index(&in, un);
        check("cncSetVariable", cncSetVariable(i, fz_double(&in)), before);
        break;
      }
      case 9: {
        const CNCuint i = fz_index(&in, un), k = fz_index(&in, 2);
        double v = 12345.0;
        const int null = fz_u8(&in) >= 240;
        const CNCstatus st = code & 32 ? cncMultiGetVariable(i, k, null ? NULL : &v)
                                       : cncGetVariable(i, null ? NULL : &v);
        check("cncGetVariable", st, before);
        if (st != CNC_OK && v != 12345.0) die("cncGetVariable", "refused, but wrote", st);
        break;
      }
      case 10: {
        const CNCuint i = fz_index(&in, un), k = fz_index(&in, 2);
        check("cncMultiSetVariable", cncMultiSetVariable(i, k, fz_double(&in)), before);
        break;
      }
      case 11: {
        const CNCuint i = fz_index(&in, un);
        switch (fz_pick(&in, 3)) {
          case 0:
            check("cncLockVariable", cncLockVariable(i), before);
            break;
          case 1:
            check("cncUnlockVariable", cncUnlockVariable(i), before);
            break;
          default: {
            CNCboolean locked = 7;
            const CNCstatus st = cncVariableIsLocked(i, fz_u8(&in) >= 240 ? NULL : &locked);
            check("cncVariableIsLocked", st, before);
            if (st == CNC_OK && locked != CNC_TRUE && locked != CNC_FALSE)
              die("cncVariableIsLocked", "not a bool", st);
          }
        }
        break;
      }
      case 12: {
        const CNCuint j = fz_index(&in, un);
        check("cncCoefficient", cncCoefficient(j, fz_double(&in)), before);
        break;
      }
      case 13:
        switch (fz_pick(&in, 3)) {
          case 0:
            check("cncRightHandSide", cncRightHandSide(fz_double(&in)), before);
            break;
          case 1: {
            const CNCuint k = fz_index(&in, 2);
            check("cncMultiRightHandSide", cncMultiRightHandSide(k, fz_double(&in)), before);
            break;
          }
          default:
            check("cncRowScaling", cncRowScaling(fz_double(&in)), before);
        }
        break;
      case 14:
      case 15: {
        const CNCuint i = fz_index(&in, un), j = fz_index(&in, un);
        check("cncAddIJCoefficient", cncAddIJCoefficient(i, j, fz_double(&in)), before);
        break;
      }
      case 16:
        bulk_call(&in);
        break;
      case 17: {
        const CNCuint i = fz_index(&in, un);
        if (code & 32) {
          const CNCuint k = fz_index(&in, 2);
          check("cncMultiAddIRightHandSide", cncMultiAddIRightHandSide(i, k, fz_double(&in)),
                before);
        } else {
          check("cncAddIRightHandSide", cncAddIRightHandSide(i, fz_double(&in)), before);
        }
        break;
      }
      case 18:
        if (code & 32) {
          row_lengths_call(&in);
        } else {
          const CNCuint i = fz_index(&in, un);
          const uint8_t t = fz_u8(&in);
          /* Long rows now and then; never the terabytes a valid huge length would ask for. */
          const CNCuint len = t < 250 ? t % 9 : 4096;
          check("cncSetRowLength", cncSetRowLength(i, len), before);
        }
        break;
      case 19: {
        const CNCuint i = fz_index(&in, un), j = fz_index(&in, un);
        const double v = fz_double(&in);
        if (code & 32) {
          check("cncSetIJCoefficientAtRowOffset",
                cncSetIJCoefficientAtRowOffset(i, j, v, fz_index(&in, 9)), before);
        } else {
          const uint8_t t = fz_u8(&in);
          const CNCint64 index = t < 240 ? t % 128 : (CNCint64)fz_u64(&in);
          check("cncAddIJCoefficientAt", cncAddIJCoefficientAt(i, j, v, index), before);
        }
        break;
      }
      case 20:
      case 21:
        solve_call();
        break;
      case 22:
        csr_call(&in, (code & 96) == 96);
        break;
      case 23:
        switch (fz_pick(&in, 5)) {
          case 0:
            if (cncGetError() > CNC_OK) die("cncGetError", "positive", 1);
            break;
          case 1:
            check("cncClearError", cncClearError(), before);
            if (cncGetError() != CNC_OK) die("cncClearError", "the error stayed", 0);
            break;
          case 2:
            if (!cncGetErrorMessage() || !cncGetLastErrorMessage())
              die("cncGetErrorMessage", "NULL", 0);
            break;
          case 3:
            if (!cncStatusString((CNCstatus)(int32_t)fz_u32(&in)))
              die("cncStatusString", "NULL", 0);
            break;
          default: { /* arithmetic only: any size may be asked */
            CNCint64 host = -1, device = -1;
            const CNCuint en = fz_u8(&in) < 200 ? fz_u8(&in) : fz_u32(&in);
            const CNCint64 nnz = fz_value(&in);
            const int null = fz_u8(&in) >= 240;
            const CNCstatus st = cncEstimateMemory(en, nnz, null ? NULL : &host, &device);
            check("cncEstimateMemory", st, before);
            if (st == CNC_OK && (null || host < 0 || device < 0))
              die("cncEstimateMemory", "accepted NULL or estimated a negative size", st);
          }
        }
        break;
      case 24:
        if (code & 32) {
          stop_after = fz_pick(&in, 4);
          check("cncSetProgressCallback",
                cncSetProgressCallback(fz_u8(&in) & 1 ? progress : NULL, &stop_after), before);
        } else {
          check("cncSetLogCallback", cncSetLogCallback(quiet, NULL), before);
        }
        break;
      default: { /* no current context: every call says so and touches nothing */
        cncMakeCurrent(NULL);
        CNCint v = 5;
        double d = 5.0;
        if (cncBegin(CNC_SYSTEM) != CNC_ERR_NO_CONTEXT || cncSolve() != CNC_ERR_NO_CONTEXT ||
            cncGetIntegerv(CNC_STATE, &v) != CNC_ERR_NO_CONTEXT ||
            cncGetVariable(0, &d) != CNC_ERR_NO_CONTEXT || v != 5 || d != 5.0 ||
            cncGetCurrent() != NULL || *cncGetErrorMessage() == '\0')
          die("no context", "a call did not say CNC_ERR_NO_CONTEXT", 0);
        (void)cncBackendAvailable((CNCenum)fz_u32(&in));
        cncMakeCurrent(ctx);
        if (cncGetCurrent() != ctx) die("cncMakeCurrent", "not current", 0);
      }
    }
  }
  cncDeleteContext(ctx);
  if (cncGetCurrent() != NULL) die("cncDeleteContext", "still current", 0);
  return 0;
}
