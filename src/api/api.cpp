// The C API boundary: every cnc* entry point checks the current context, the state and its
// arguments, runs the C++ core inside one try/catch, and turns every failure into a status code
// with a message "cncCall(arg=value, ...): reason" (sticky first error per context).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "api/context.hpp"
#include "backends/registry.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

namespace cnc {
const char* cpu_simd_level();
}

using cnc::context;
using cnc::error;

namespace {

// Read on every call: the build gives this file TLS descriptors (CMakeLists.txt), which make the
// read a few instructions instead of a __tls_get_addr call, dlopen'ed or not (initial-exec TLS
// would be cheaper still but fails to load from Python: the library's TLS block is too big).
thread_local context* tls_current = nullptr;
thread_local std::string tls_no_context_message;

// Formats the "(args): reason" tail of an error message.
[[noreturn]] __attribute__((format(printf, 2, 3))) void fail(int status, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  throw error(status, buf);
}

// Inlined into each entry point: the per-entry calls then keep their arguments in registers.
template <class F>
__attribute__((always_inline)) inline CNCstatus guarded(const char* call, F&& body) {
  context* c = tls_current;
  if (!c) {
    tls_no_context_message =
        std::string(call) + ": no current context on this thread (cncMakeCurrent)";
    return CNC_ERR_NO_CONTEXT;
  }
  try {
    body(*c);
    return CNC_OK;
  } catch (const error& e) {
    return c->fail(e.status(), call + std::string(e.what()));
  } catch (const std::bad_alloc&) {
    return c->fail(CNC_ERR_OUT_OF_MEMORY, call + std::string(": out of memory"));
  } catch (const std::exception& e) {
    return c->fail(CNC_ERR_INTERNAL, call + std::string(": internal error: ") + e.what());
  }
}

const char* state_name(int s) {
  static const char* names[] = {
      "INITIAL", "SYSTEM",        "MATRIX", "ROW", "MATRIX_CONSTRUCTED", "SYSTEM_CONSTRUCTED",
      "SOLVED",  "MATRIX_PATTERN"};
  return s >= CNC_STATE_INITIAL && s <= CNC_STATE_MATRIX_PATTERN ? names[s - CNC_STATE_INITIAL]
                                                                 : "?";
}

void need_state(const context& c, const char* args, std::initializer_list<int> allowed) {
  for (int s : allowed)
    if (c.state == s) return;
  std::string list;
  for (int s : allowed) list += std::string(list.empty() ? "" : " or ") + state_name(s);
  fail(CNC_ERR_STATE, "(%s): not allowed in state %s (needs %s)", args, state_name(c.state),
       list.c_str());
}

void need_finite(double v, const char* what, const char* args) {
  if (!std::isfinite(v)) fail(CNC_ERR_NOT_FINITE, "(%s): %s is not finite", args, what);
}

void need_variable(const context& c, CNCuint i, const char* args) {
  if (i >= CNCuint(c.n))
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): variable index %u >= CNC_NB_VARIABLES=%d", args, i,
         c.n);
}

void need_system(const context& c, CNCuint k, const char* args) {
  if (k >= CNCuint(c.k))
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): system index %u >= CNC_NB_SYSTEMS=%d", args, k, c.k);
}

const int solving_states[] = {CNC_STATE_INITIAL, CNC_STATE_SYSTEM, CNC_STATE_MATRIX_CONSTRUCTED,
                              CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED};

bool is_one_of(int v, std::initializer_list<int> set) {
  for (int s : set)
    if (v == s) return true;
  return false;
}

// Parameters ---------------------------------------------------------------------------------
void set_parameter(context& c, CNCenum p, std::int64_t iv, double dv, bool is_double) {
  char args[96];
  if (is_double)
    std::snprintf(args, sizeof args, "pname=0x%x, value=%g", p, dv);
  else
    std::snprintf(args, sizeof args, "pname=0x%x, value=%lld", p, (long long)iv);
  const bool real_valued = p == CNC_THRESHOLD || p == CNC_SSOR_OMEGA;
  if (is_double && !real_valued) {
    need_finite(dv, "value", args);
    if (dv != std::floor(dv) || std::fabs(dv) > 9.0e18)
      fail(CNC_ERR_INVALID_VALUE, "(%s): parameter takes an integer", args);
    iv = std::int64_t(dv);
  }
  const bool structural = p == CNC_NB_VARIABLES || p == CNC_NB_SYSTEMS || p == CNC_LEAST_SQUARES;
  if (structural) {
    if (c.state != CNC_STATE_INITIAL)
      fail(CNC_ERR_STATE, "(%s): structural parameter can be set only in state INITIAL (now %s)",
           args, state_name(c.state));
  } else if (c.state == CNC_STATE_MATRIX || c.state == CNC_STATE_ROW) {
    fail(CNC_ERR_STATE, "(%s): solver parameters cannot change in state %s", args,
         state_name(c.state));
  }
  auto range = [&](std::int64_t lo, std::int64_t hi) {
    if (iv < lo || iv > hi)
      fail(CNC_ERR_INVALID_VALUE, "(%s): value must be in [%lld, %lld]", args, (long long)lo,
           (long long)hi);
  };
  auto one_of = [&](std::initializer_list<int> allowed) {
    if (!is_one_of(int(iv), allowed) || iv != std::int64_t(int(iv)))
      fail(CNC_ERR_INVALID_ENUM, "(%s): not a valid value for this parameter", args);
  };
  switch (p) {
    case CNC_NB_VARIABLES:
      range(1, INT32_MAX - 8), c.n = std::int32_t(iv);
      break;
    case CNC_NB_SYSTEMS:
      range(1, 4096), c.k = std::int32_t(iv);
      break;
    case CNC_LEAST_SQUARES:
      range(0, 1), c.least_squares = iv != 0;
      break;
    case CNC_SYMMETRIC:
      range(0, 1), c.symmetric = iv != 0;
      break;
    case CNC_SOLVER:
      one_of({CNC_SOLVER_DEFAULT, CNC_CG, CNC_BICGSTAB, CNC_GMRES}), c.solver = int(iv);
      break;
    case CNC_PRECONDITIONER:
      one_of({CNC_PRECOND_NONE, CNC_PRECOND_JACOBI, CNC_PRECOND_SSOR}), c.preconditioner = int(iv);
      break;
    case CNC_MAX_ITERATIONS:
      range(1, INT64_MAX), c.max_iterations = iv;
      break;
    case CNC_THRESHOLD:
      if (!is_double) dv = double(iv);
      need_finite(dv, "threshold", args);
      if (!(dv > 0.0 && dv < 1.0))
        fail(CNC_ERR_INVALID_VALUE, "(%s): threshold must be in (0, 1)", args);
      c.threshold = dv;
      break;
    case CNC_PRECISION:
      one_of({CNC_DOUBLE, CNC_SINGLE, CNC_MIXED}), c.precision_param = int(iv);
      break;
    case CNC_SSOR_OMEGA:
      if (!is_double) dv = double(iv);
      need_finite(dv, "omega", args);
      if (!(dv > 0.0 && dv < 2.0))
        fail(CNC_ERR_INVALID_VALUE, "(%s): SSOR's omega must be in (0, 2)", args);
      c.ssor_omega = dv;
      break;
    case CNC_MATRIX_FORMAT:
      one_of(
          {CNC_FORMAT_AUTO, CNC_FORMAT_CSR, CNC_FORMAT_BCRS2, CNC_FORMAT_BCRS4, CNC_FORMAT_SELL});
      c.format_param = int(iv);
      break;
    case CNC_BACKEND:
      one_of({CNC_BACKEND_AUTO, CNC_BACKEND_CPU, CNC_BACKEND_OPENCL, CNC_BACKEND_CUDA});
      c.backend_param = int(iv);
      break;
    case CNC_NB_THREADS:
      range(0, 4096), c.threads = int(iv);
      break;
    case CNC_NNZ_HINT:
      range(0, INT64_MAX), c.nnz_hint = iv;
      break;
    case CNC_DEVICE_INDEX:
      range(-1, 4096), c.device_index = int(iv);
      break;
    case CNC_CHECK_INTERVAL:
      range(0, 1 << 20), c.check_interval = int(iv);
      break;
    case CNC_GMRES_RESTART:
      range(1, 100000), c.gmres_restart = int(iv);
      break;
    default:
      fail(CNC_ERR_INVALID_ENUM, "(%s): unknown or read-only parameter", args);
  }
}

// Reads any parameter or statistic as a double, and tells whether it is integral.
double get_parameter(const context& c, CNCenum p, bool* integral) {
  *integral = true;
  const cnc::solve_stats& s = c.stats;
  switch (p) {
    case CNC_NB_VARIABLES:
      return c.n;
    case CNC_NB_SYSTEMS:
      return c.k;
    case CNC_LEAST_SQUARES:
      return c.least_squares;
    case CNC_SYMMETRIC:
      return c.symmetric;
    case CNC_SOLVER:
      return c.solver;
    case CNC_PRECONDITIONER:
      return c.preconditioner;
    case CNC_MAX_ITERATIONS:
      return double(c.max_iterations > 0 ? c.max_iterations
                                         : std::max<std::int64_t>(100, 5 * std::int64_t(c.n)));
    case CNC_PRECISION:
      return c.precision_param;
    case CNC_MATRIX_FORMAT:
      return c.format_param;
    case CNC_BACKEND:
      return c.backend_param;
    case CNC_NB_THREADS:
      return c.threads;
    case CNC_NNZ_HINT:
      return double(c.nnz_hint);
    case CNC_DEVICE_INDEX:
      return c.device_index;
    case CNC_CHECK_INTERVAL:
      return c.check_interval;
    case CNC_GMRES_RESTART:
      return c.gmres_restart;
    case CNC_USED_ITERATIONS:
      return double(s.iterations);
    case CNC_REASON:
      return s.reason;
    case CNC_BYTES_PER_ITERATION:
      return double(s.bytes_per_iteration);
    case CNC_NNZ:
      return double(s.nnz);
    case CNC_BACKEND_USED:
      return s.backend_used;
    case CNC_FORMAT_USED:
      return s.format_used;
    case CNC_ZERO_DIAGONALS:
      return double(s.zero_diagonals);
    case CNC_STATE:
      return c.state;
  }
  *integral = false;
  switch (p) {
    case CNC_THRESHOLD:
      return c.threshold;
    case CNC_SSOR_OMEGA:
      return c.ssor_omega;
    case CNC_ERROR:
      return s.error;
    case CNC_TRUE_ERROR:
      return s.true_error;
    case CNC_TRUE_ERROR_MIN:
      return s.true_error_min;
    case CNC_ELAPSED_TIME:
      return s.elapsed;
    case CNC_ASSEMBLY_TIME:
      return s.assembly;
    case CNC_CONVERSION_TIME:
      return s.conversion;
    case CNC_UPLOAD_TIME:
      return s.upload;
    case CNC_SOLVE_TIME:
      return s.solve;
    case CNC_GFLOPS:
      return s.gflops;
    case CNC_GBYTES_PER_SECOND:
      return s.gbps;
    case CNC_BLOCK_FILL_RATIO:
      return s.fill_ratio;
  }
  fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): unknown parameter or statistic", p);
}

// Gathers free variables into x (column-major, n_free rows), solves, scatters back.
void solve_assembled(context& c) {
  const std::int32_t nf = c.sys.a.n;
  if (nf == 0) {
    c.stats = cnc::solve_stats{};
    c.stats.reason = CNC_REASON_CONVERGED;
    return;
  }
  std::vector<double> x(std::size_t(nf) * c.k);
  for (std::int32_t s = 0; s < c.k; ++s)
    for (std::int32_t f = 0; f < nf; ++f)
      x[f + std::size_t(s) * nf] = c.values[c.sys.to_var[f] + std::size_t(s) * c.n];
  const double assembly = c.stats.assembly;
  c.solve(c.sys.a, c.matrix_version, c.k, c.sys.b.data(), x.data());
  c.stats.assembly = assembly;
  for (std::int32_t s = 0; s < c.k; ++s)
    for (std::int32_t f = 0; f < nf; ++f)
      c.values[c.sys.to_var[f] + std::size_t(s) * c.n] = x[f + std::size_t(s) * nf];
}

std::uint64_t next_version() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

}  // namespace

extern "C" {

// Contexts -------------------------------------------------------------------------------------
CNC_API CNCcontext cncNewContext(void) {
  try {
    return reinterpret_cast<CNCcontext>(new context());
  } catch (...) {
    return nullptr;
  }
}

CNC_API void cncDeleteContext(CNCcontext ctx) {
  auto* c = reinterpret_cast<context*>(ctx);
  if (!c) return;
  if (tls_current == c) tls_current = nullptr;
  delete c;
}

CNC_API CNCstatus cncMakeCurrent(CNCcontext ctx) {
  tls_current = reinterpret_cast<context*>(ctx);
  return CNC_OK;
}

CNC_API CNCcontext cncGetCurrent(void) { return reinterpret_cast<CNCcontext>(tls_current); }

// Parameters -----------------------------------------------------------------------------------
CNC_API CNCstatus cncSolverParameteri(CNCenum p, CNCint v) {
  return guarded("cncSolverParameteri", [&](context& c) { set_parameter(c, p, v, 0, false); });
}
CNC_API CNCstatus cncSolverParameteri64(CNCenum p, CNCint64 v) {
  return guarded("cncSolverParameteri64", [&](context& c) { set_parameter(c, p, v, 0, false); });
}
CNC_API CNCstatus cncSolverParameterd(CNCenum p, double v) {
  return guarded("cncSolverParameterd", [&](context& c) { set_parameter(c, p, 0, v, true); });
}

CNC_API CNCstatus cncGetIntegerv(CNCenum p, CNCint* out) {
  return guarded("cncGetIntegerv", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    bool integral;
    double v = get_parameter(c, p, &integral);
    if (!integral) fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): a double: use cncGetDoublev", p);
    *out = v > INT32_MAX ? INT32_MAX : CNCint(v);
  });
}
CNC_API CNCstatus cncGetInteger64v(CNCenum p, CNCint64* out) {
  return guarded("cncGetInteger64v", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    bool integral;
    double v = get_parameter(c, p, &integral);
    if (!integral) fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): a double: use cncGetDoublev", p);
    *out = CNCint64(v);
  });
}
CNC_API CNCstatus cncGetDoublev(CNCenum p, double* out) {
  return guarded("cncGetDoublev", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    bool integral;
    *out = get_parameter(c, p, &integral);
  });
}

CNC_API CNCstatus cncGetString(CNCenum p, const char** out) {
  return guarded("cncGetString", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    if (p < CNC_BACKEND_NAME || p > CNC_CPU_SIMD)
      fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): unknown string", p);
    std::string& result = c.strings[p - CNC_BACKEND_NAME];
    switch (p) {
      case CNC_BACKEND_NAME:
        result = c.stats.backend_name;
        break;
      case CNC_DEVICE_NAME:
        result = c.stats.device_name;
        break;
      case CNC_FORMAT_NAME:
        result = c.stats.format_used == CNC_FORMAT_CSR     ? "csr"
                 : c.stats.format_used == CNC_FORMAT_BCRS2 ? "bcrs2"
                 : c.stats.format_used == CNC_FORMAT_BCRS4 ? "bcrs4"
                 : c.stats.format_used == CNC_FORMAT_SELL  ? "sell"
                                                           : "";
        break;
      case CNC_REASON_NAME:
        result = cnc::reason_name(c.stats.reason);
        break;
      case CNC_VERSION_STRING:
        result = CNC_VERSION_STRING_BUILD;
        break;
      case CNC_CPU_SIMD:
        result = cnc::cpu_simd_level();
        break;
      default:
        fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): unknown string", p);
    }
    *out = result.c_str();
  });
}

static CNCstatus set_flag(const char* call, CNCenum flag, bool on) {
  return guarded(call, [&](context& c) {
    if (flag == CNC_VERBOSE) {
      c.verbose = on;
    } else if (flag == CNC_NORMALIZE_ROWS) {
      if (c.state == CNC_STATE_MATRIX || c.state == CNC_STATE_ROW)
        fail(CNC_ERR_STATE, "(flag=0x%x): cannot change during assembly", flag);
      c.normalize_rows = on;
    } else if (flag == CNC_KEEP_MATRIX) {
      c.keep_matrix = on;
      if (!on) c.pipe.release_matrix();
    } else {
      fail(CNC_ERR_INVALID_ENUM, "(flag=0x%x): unknown flag", flag);
    }
  });
}
CNC_API CNCstatus cncEnable(CNCenum flag) { return set_flag("cncEnable", flag, true); }
CNC_API CNCstatus cncDisable(CNCenum flag) { return set_flag("cncDisable", flag, false); }
CNC_API CNCstatus cncIsEnabled(CNCenum flag, CNCboolean* out) {
  return guarded("cncIsEnabled", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(flag=0x%x, value=NULL): value is NULL", flag);
    if (flag == CNC_VERBOSE)
      *out = c.verbose;
    else if (flag == CNC_NORMALIZE_ROWS)
      *out = c.normalize_rows;
    else if (flag == CNC_KEEP_MATRIX)
      *out = c.keep_matrix;
    else
      fail(CNC_ERR_INVALID_ENUM, "(flag=0x%x): unknown flag", flag);
  });
}

// Life cycle -----------------------------------------------------------------------------------
CNC_API CNCstatus cncBegin(CNCenum prim) {
  return guarded("cncBegin", [&](context& c) {
    char args[48];
    std::snprintf(args, sizeof args, "primitive=0x%x", prim);
    switch (prim) {
      case CNC_SYSTEM: {
        need_state(c, args, {CNC_STATE_INITIAL, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
        if (c.n <= 0) fail(CNC_ERR_INVALID_VALUE, "(%s): set CNC_NB_VARIABLES first", args);
        const std::size_t size = std::size_t(c.n) * std::size_t(c.k);
        if (c.values.size() != size) c.values.assign(size, 0.0);
        if (c.locked.size() != std::size_t(c.n)) c.locked.assign(std::size_t(c.n), 0);
        c.state = CNC_STATE_SYSTEM;
        break;
      }
      case CNC_MATRIX:
        need_state(c, args, {CNC_STATE_SYSTEM, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
        c.assembly_start = cnc::now_seconds();
        c.build.begin_matrix(c.n, c.k, c.least_squares, c.normalize_rows, c.locked, c.values,
                             c.nnz_hint, c.threads);
        c.sys = cnc::assembled_system{};
        c.state = CNC_STATE_MATRIX;
        break;
      case CNC_ROW:
        need_state(c, args, {CNC_STATE_MATRIX});
        c.build.begin_row();
        c.state = CNC_STATE_ROW;
        break;
      case CNC_MATRIX_PATTERN:
        need_state(c, args, {CNC_STATE_SYSTEM, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
        if (c.least_squares)
          fail(CNC_ERR_STATE,
               "(%s): pattern-first assembly is not available in least-squares mode "
               "(CNC_LEAST_SQUARES)",
               args);
        c.build.pattern().begin(c.n, c.state);
        c.state = CNC_STATE_MATRIX_PATTERN;
        break;
      default:
        fail(CNC_ERR_INVALID_ENUM,
             "(%s): not CNC_SYSTEM, CNC_MATRIX, CNC_ROW or CNC_MATRIX_PATTERN", args);
    }
  });
}

CNC_API CNCstatus cncEnd(CNCenum prim) {
  return guarded("cncEnd", [&](context& c) {
    char args[48];
    std::snprintf(args, sizeof args, "primitive=0x%x", prim);
    switch (prim) {
      case CNC_ROW: {
        need_state(c, args, {CNC_STATE_ROW});
        c.state = CNC_STATE_MATRIX;
        const cnc::builder::row_end r = c.build.end_row();
        if (r == cnc::builder::row_end::beyond_n)
          fail(CNC_ERR_INDEX_OUT_OF_RANGE,
               "(%s): row %d >= CNC_NB_VARIABLES=%d in plain mode (row dropped)", args,
               c.build.rows_done(), c.n);
        if (r == cnc::builder::row_end::pattern_full)
          fail(CNC_ERR_OVERFLOW,
               "(%s): row %d has no room for its columns in the pattern (row dropped; "
               "cncSetRowLength)",
               args, c.build.rows_done());
        break;
      }
      case CNC_MATRIX: {
        need_state(c, args, {CNC_STATE_MATRIX});
        const double t = cnc::now_seconds();
        c.sys = c.build.end_matrix();
        c.csr_conversion_time = cnc::now_seconds() - t;
        c.stats.assembly = cnc::now_seconds() - c.assembly_start;
        c.matrix_version = next_version();
        c.state = CNC_STATE_MATRIX_CONSTRUCTED;
        break;
      }
      case CNC_SYSTEM:
        need_state(c, args, {CNC_STATE_MATRIX_CONSTRUCTED});
        c.state = CNC_STATE_SYSTEM_CONSTRUCTED;
        break;
      case CNC_MATRIX_PATTERN: {
        need_state(c, args, {CNC_STATE_MATRIX_PATTERN});
        const std::int64_t slots = c.build.pattern().compile(c.threads);
        if (slots > cnc::row_pattern::max_slots)
          fail(CNC_ERR_OVERFLOW, "(%s): the row lengths add up to %lld slots (at most %lld)", args,
               (long long)slots, (long long)cnc::row_pattern::max_slots);
        c.state = c.build.pattern().return_state();
        break;
      }
      default:
        fail(CNC_ERR_INVALID_ENUM,
             "(%s): not CNC_SYSTEM, CNC_MATRIX, CNC_ROW or CNC_MATRIX_PATTERN", args);
    }
  });
}

// Variables ------------------------------------------------------------------------------------
static const std::initializer_list<int> settable = {CNC_STATE_SYSTEM, CNC_STATE_MATRIX_CONSTRUCTED,
                                                    CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED,
                                                    CNC_STATE_MATRIX_PATTERN};
static const std::initializer_list<int> readable = {CNC_STATE_SYSTEM,
                                                    CNC_STATE_MATRIX,
                                                    CNC_STATE_ROW,
                                                    CNC_STATE_MATRIX_CONSTRUCTED,
                                                    CNC_STATE_SYSTEM_CONSTRUCTED,
                                                    CNC_STATE_SOLVED,
                                                    CNC_STATE_MATRIX_PATTERN};

static CNCstatus set_variable(const char* call, CNCuint i, CNCuint k, double v) {
  return guarded(call, [&](context& c) {
    if (!is_one_of(c.state, settable) || i >= CNCuint(c.n) || k >= CNCuint(c.k) ||
        !std::isfinite(v)) {  // details only when something is wrong: this call is hot
      char args[96];
      std::snprintf(args, sizeof args, "i=%u, k=%u, value=%g", i, k, v);
      need_state(c, args, settable);
      need_variable(c, i, args);
      need_system(c, k, args);
      need_finite(v, "value", args);
    }
    c.values[i + std::size_t(k) * c.n] = v;
  });
}
CNC_API CNCstatus cncMultiSetVariable(CNCuint i, CNCuint k, double v) {
  return set_variable("cncMultiSetVariable", i, k, v);
}
CNC_API CNCstatus cncSetVariable(CNCuint i, double v) {
  return set_variable("cncSetVariable", i, 0, v);
}
static CNCstatus get_variable(const char* call, CNCuint i, CNCuint k, double* v) {
  return guarded(call, [&](context& c) {
    if (!v || !is_one_of(c.state, readable) || i >= CNCuint(c.n) || k >= CNCuint(c.k)) {
      char args[96];
      std::snprintf(args, sizeof args, "i=%u, k=%u", i, k);
      if (!v) fail(CNC_ERR_NULL_POINTER, "(%s, value=NULL): value is NULL", args);
      need_state(c, args, readable);
      need_variable(c, i, args);
      need_system(c, k, args);
    }
    *v = c.values[i + std::size_t(k) * c.n];
  });
}
CNC_API CNCstatus cncMultiGetVariable(CNCuint i, CNCuint k, double* v) {
  return get_variable("cncMultiGetVariable", i, k, v);
}
CNC_API CNCstatus cncGetVariable(CNCuint i, double* v) {
  return get_variable("cncGetVariable", i, 0, v);
}

static CNCstatus set_lock(const char* call, CNCuint i, bool lock) {
  return guarded(call, [&](context& c) {
    char args[32];
    std::snprintf(args, sizeof args, "i=%u", i);
    need_state(c, args, {CNC_STATE_SYSTEM});
    need_variable(c, i, args);
    c.locked[i] = lock;
  });
}
CNC_API CNCstatus cncLockVariable(CNCuint i) { return set_lock("cncLockVariable", i, true); }
CNC_API CNCstatus cncUnlockVariable(CNCuint i) { return set_lock("cncUnlockVariable", i, false); }
CNC_API CNCstatus cncVariableIsLocked(CNCuint i, CNCboolean* out) {
  return guarded("cncVariableIsLocked", [&](context& c) {
    char args[48];
    std::snprintf(args, sizeof args, "i=%u", i);
    if (!out) fail(CNC_ERR_NULL_POINTER, "(%s, value=NULL): value is NULL", args);
    need_state(c, args, readable);
    need_variable(c, i, args);
    *out = c.locked[i] ? CNC_TRUE : CNC_FALSE;
  });
}

// Assembly -------------------------------------------------------------------------------------
CNC_API CNCstatus cncCoefficient(CNCuint j, double v) {
  return guarded("cncCoefficient", [&](context& c) {
    if (c.state != CNC_STATE_ROW) {
      char args[64];
      std::snprintf(args, sizeof args, "j=%u, value=%g", j, v);
      need_state(c, args, {CNC_STATE_ROW});
    }
    if (j >= CNCuint(c.n) || !std::isfinite(v)) {
      char args[64];
      std::snprintf(args, sizeof args, "j=%u, value=%g", j, v);
      need_variable(c, j, args);
      need_finite(v, "value", args);
    }
    c.build.coefficient(std::int32_t(j), v);
  });
}

static CNCstatus row_rhs(const char* call, CNCuint k, double v) {
  return guarded(call, [&](context& c) {
    if (c.state != CNC_STATE_ROW || k >= CNCuint(c.k) || !std::isfinite(v)) {
      char args[64];
      std::snprintf(args, sizeof args, "k=%u, value=%g", k, v);
      need_state(c, args, {CNC_STATE_ROW});
      need_system(c, k, args);
      need_finite(v, "value", args);
    }
    c.build.row_rhs(std::int32_t(k), v);
  });
}
CNC_API CNCstatus cncMultiRightHandSide(CNCuint k, double v) {
  return row_rhs("cncMultiRightHandSide", k, v);
}
CNC_API CNCstatus cncRightHandSide(double v) { return row_rhs("cncRightHandSide", 0, v); }

CNC_API CNCstatus cncRowScaling(double v) {
  return guarded("cncRowScaling", [&](context& c) {
    char args[48];
    std::snprintf(args, sizeof args, "value=%g", v);
    need_state(c, args, {CNC_STATE_ROW});
    need_finite(v, "value", args);
    c.build.row_scaling(v);
  });
}

// Why an entry was refused (cold: the hot paths test everything in one expression).
[[noreturn]] __attribute__((noinline, cold)) static void refuse_entry(const context& c, CNCuint i,
                                                                      CNCuint j, double v) {
  char args[96];
  std::snprintf(args, sizeof args, "i=%u, j=%u, value=%g", i, j, v);
  need_state(c, args, {CNC_STATE_MATRIX});
  need_variable(c, i, args);
  need_variable(c, j, args);
  need_finite(v, "value", args);
  if (!c.build.uses_pattern()) fail(CNC_ERR_INTERNAL, "(%s): entry refused for no reason", args);
  const cnc::row_pattern& p = c.build.pattern();
  fail(CNC_ERR_OVERFLOW,
       "(%s): row %u is full: its %lld pattern slots hold other columns (cncSetRowLength)", args, i,
       (long long)(p.row_end(std::int32_t(i)) - p.row_begin(std::int32_t(i))));
}

CNC_API CNCstatus cncAddIJCoefficient(CNCuint i, CNCuint j, double v) {
  return guarded("cncAddIJCoefficient", [&](context& c) {
    if (c.state == CNC_STATE_MATRIX && i < CNCuint(c.n) && j < CNCuint(c.n) && std::isfinite(v))
        [[likely]] {
      if (c.build.add_ij(std::int32_t(i), std::int32_t(j), v)) [[likely]]
        return;
    }
    refuse_entry(c, i, j, v);
  });
}

CNC_API CNCstatus cncAddIJCoefficients(CNCint64 count, const CNCuint* i, const CNCuint* j,
                                       const double* values) {
  return guarded("cncAddIJCoefficients", [&](context& c) {
    char args[96];
    std::snprintf(args, sizeof args, "count=%lld", (long long)count);
    need_state(c, args, {CNC_STATE_MATRIX});
    if (count < 0) fail(CNC_ERR_INVALID_VALUE, "(%s): count must be >= 0", args);
    if (count == 0) return;
    if (!i || !j || !values)
      fail(CNC_ERR_NULL_POINTER, "(%s): i, j and values must not be NULL", args);
    // Every entry is checked before any is added, so a bad call changes nothing.
    const CNCuint n = CNCuint(c.n);
    const std::int64_t bad = cnc::first_index(
        count, 1 << 16, cnc::host_threads(c.threads),
        [&](std::int64_t e) { return i[e] >= n || j[e] >= n || !std::isfinite(values[e]); });
    if (bad >= 0) {
      std::snprintf(args, sizeof args, "count=%lld, entry %lld: i=%u, j=%u, value=%g",
                    (long long)count, (long long)bad, i[bad], j[bad], values[bad]);
      need_variable(c, i[bad], args);
      need_variable(c, j[bad], args);
      need_finite(values[bad], "value", args);
    }
    const std::int64_t full = c.build.add_ij_many(count, i, j, values);
    if (full >= 0) {
      const cnc::row_pattern& p = c.build.pattern();
      const std::int32_t r = std::int32_t(i[full]);
      fail(CNC_ERR_OVERFLOW,
           "(%s, entry %lld: i=%u, j=%u): row %u is full: its %lld pattern slots hold other "
           "columns (nothing added; cncSetRowLength)",
           args, (long long)full, i[full], j[full], i[full],
           (long long)(p.row_end(r) - p.row_begin(r)));
    }
  });
}

// Pattern-first assembly -----------------------------------------------------------------------
CNC_API CNCstatus cncSetRowLength(CNCuint i, CNCuint length) {
  return guarded("cncSetRowLength", [&](context& c) {
    if (c.state != CNC_STATE_MATRIX_PATTERN || i >= CNCuint(c.n)) {
      char args[64];
      std::snprintf(args, sizeof args, "i=%u, length=%u", i, length);
      need_state(c, args, {CNC_STATE_MATRIX_PATTERN});
      need_variable(c, i, args);
    }
    c.build.pattern().set_length(std::int32_t(i), length);
  });
}

CNC_API CNCstatus cncSetRowLengths(const CNCuint* lengths) {
  return guarded("cncSetRowLengths", [&](context& c) {
    const char* args = lengths ? "lengths" : "lengths=NULL";
    need_state(c, args, {CNC_STATE_MATRIX_PATTERN});
    if (!lengths) fail(CNC_ERR_NULL_POINTER, "(%s): lengths must not be NULL", args);
    c.build.pattern().set_lengths(lengths, c.threads);
  });
}

// Why a slot call was refused. `where` is the row offset (by_offset) or the global slot index.
[[noreturn]] __attribute__((noinline, cold)) static void refuse_slot(const context& c, CNCuint i,
                                                                     CNCuint j, double v,
                                                                     std::int64_t where,
                                                                     bool by_offset) {
  char args[128];
  std::snprintf(args, sizeof args, "i=%u, j=%u, value=%g, %s=%lld", i, j, v,
                by_offset ? "offset" : "index", (long long)where);
  need_state(c, args, {CNC_STATE_MATRIX});
  if (!c.build.uses_pattern())
    fail(CNC_ERR_STATE,
         "(%s): no pattern in use: cncBegin/cncEnd(CNC_MATRIX_PATTERN) before cncBegin(CNC_MATRIX)",
         args);
  need_variable(c, i, args);
  need_variable(c, j, args);
  need_finite(v, "value", args);
  const cnc::row_pattern& p = c.build.pattern();
  const std::int64_t b = p.row_begin(std::int32_t(i)), e = p.row_end(std::int32_t(i));
  if (by_offset && where >= e - b)
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): offset >= row %u's length %lld", args, i,
         (long long)(e - b));
  const std::int64_t s = by_offset ? b + where : where;
  if (s < b || s >= e)
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): index outside row %u's slots [%lld, %lld)", args, i,
         (long long)b, (long long)e);
  fail(CNC_ERR_INVALID_VALUE, "(%s): slot %lld already holds column %d", args, (long long)s,
       p.slot_col(s));
}

// Row i's slot s takes (j, v) when the call is valid: one combined test for the hot path.
static bool slot_call_ok(const context& c, CNCuint i, CNCuint j, double v, std::int64_t s) {
  const cnc::row_pattern& p = c.build.pattern();
  if (s < p.row_begin(std::int32_t(i)) || s >= p.row_end(std::int32_t(i))) return false;
  const std::int32_t col = p.slot_col(s);
  return col < 0 || col == std::int32_t(j);
}

CNC_API CNCstatus cncSetIJCoefficientAtRowOffset(CNCuint i, CNCuint j, double v, CNCuint offset) {
  return guarded("cncSetIJCoefficientAtRowOffset", [&](context& c) {
    if (c.state == CNC_STATE_MATRIX && c.build.uses_pattern() && i < CNCuint(c.n) &&
        j < CNCuint(c.n) && std::isfinite(v)) [[likely]] {
      const std::int64_t s = c.build.pattern().row_begin(std::int32_t(i)) + std::int64_t(offset);
      if (slot_call_ok(c, i, j, v, s)) [[likely]] {
        c.build.put(std::int32_t(i), std::int32_t(j), v, s, true);
        return;
      }
    }
    refuse_slot(c, i, j, v, std::int64_t(offset), true);
  });
}

CNC_API CNCstatus cncAddIJCoefficientAt(CNCuint i, CNCuint j, double v, CNCint64 index) {
  return guarded("cncAddIJCoefficientAt", [&](context& c) {
    if (c.state == CNC_STATE_MATRIX && c.build.uses_pattern() && i < CNCuint(c.n) &&
        j < CNCuint(c.n) && std::isfinite(v) && slot_call_ok(c, i, j, v, index)) [[likely]] {
      c.build.put(std::int32_t(i), std::int32_t(j), v, index, false);
      return;
    }
    refuse_slot(c, i, j, v, index, false);
  });
}

static CNCstatus add_rhs(const char* call, CNCuint i, CNCuint k, double v) {
  return guarded(call, [&](context& c) {
    if (c.state != CNC_STATE_MATRIX || i >= CNCuint(c.n) || k >= CNCuint(c.k) ||
        !std::isfinite(v)) {
      char args[96];
      std::snprintf(args, sizeof args, "i=%u, k=%u, value=%g", i, k, v);
      need_state(c, args, {CNC_STATE_MATRIX});
      need_variable(c, i, args);
      need_system(c, k, args);
      need_finite(v, "value", args);
    }
    if (!c.locked[i]) c.build.add_rhs(std::int32_t(i), std::int32_t(k), v);
  });
}
CNC_API CNCstatus cncMultiAddIRightHandSide(CNCuint i, CNCuint k, double v) {
  return add_rhs("cncMultiAddIRightHandSide", i, k, v);
}
CNC_API CNCstatus cncAddIRightHandSide(CNCuint i, double v) {
  return add_rhs("cncAddIRightHandSide", i, 0, v);
}

// Solving --------------------------------------------------------------------------------------
CNC_API CNCstatus cncSolve(void) {
  return guarded("cncSolve", [&](context& c) {
    need_state(c, "", {CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
    solve_assembled(c);
    c.state = CNC_STATE_SOLVED;
  });
}

// The checks cncSolveCSR and cncSolveCSRDevice share (pointers, state, sizes).
static void check_csr_call(context& c, const char* args, CNCuint n, const void* row_ptr,
                           const void* col_idx, const void* values, CNCint base, CNCuint nrhs,
                           const void* b, const void* x) {
  if (!row_ptr || !col_idx || !values || !b || !x)
    fail(CNC_ERR_NULL_POINTER, "(%s): row_ptr, col_idx, values, b and x must not be NULL", args);
  if (c.state == CNC_STATE_MATRIX || c.state == CNC_STATE_ROW)
    fail(CNC_ERR_STATE, "(%s): not allowed in state %s", args, state_name(c.state));
  if (n == 0 || n > CNCuint(INT32_MAX - 8))
    fail(CNC_ERR_INVALID_VALUE, "(%s): n out of range", args);
  if (base != 0 && base != 1) fail(CNC_ERR_INVALID_VALUE, "(%s): base must be 0 or 1", args);
  if (nrhs == 0 || nrhs > 4096)
    fail(CNC_ERR_INVALID_VALUE, "(%s): nrhs must be in [1, 4096]", args);
}

CNC_API CNCstatus cncSolveCSR(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                              const double* values, CNCint base, CNCuint nrhs, const double* b,
                              double* x) {
  return guarded("cncSolveCSR", [&](context& c) {
    char args[160];
    std::snprintf(args, sizeof args, "n=%u, base=%d, nrhs=%u", n, base, nrhs);
    check_csr_call(c, args, n, row_ptr, col_idx, values, base, nrhs, b, x);
    const std::size_t len = std::size_t(n) * nrhs;
    const std::int64_t bad = cnc::first_index(
        std::int64_t(len), 1 << 16, cnc::host_threads(),
        [&](std::int64_t e) { return !std::isfinite(b[e]) || !std::isfinite(x[e]); });
    if (bad >= 0 && !std::isfinite(b[bad]))
      fail(CNC_ERR_NOT_FINITE, "(%s): b[%lld]=%g is not finite", args, (long long)bad, b[bad]);
    if (bad >= 0)
      fail(CNC_ERR_NOT_FINITE, "(%s): x[%lld]=%g is not finite", args, (long long)bad, x[bad]);
    // The pipeline writes x only when the solve succeeds (pipeline::run).
    c.stats = cnc::solve_stats{};
    try {
      c.pipe.solve_user(c.options(),
                        cnc::caller_csr{std::int32_t(n), row_ptr, col_idx, values, base},
                        next_version(), int(nrhs), b, x, c.stats);
    } catch (const error& e) {
      fail(e.status(), "(%s)%s", args, e.what());
    }
  });
}

CNC_API CNCstatus cncSolveCSRDevice(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                                    const double* values, CNCint base, CNCuint nrhs,
                                    const double* b, double* x) {
  return guarded("cncSolveCSRDevice", [&](context& c) {
    char args[160];
    std::snprintf(args, sizeof args, "n=%u, base=%d, nrhs=%u", n, base, nrhs);
    check_csr_call(c, args, n, row_ptr, col_idx, values, base, nrhs, b, x);
    c.stats = cnc::solve_stats{};
    try {
      c.pipe.solve_device(c.options(),
                          cnc::caller_csr{std::int32_t(n), row_ptr, col_idx, values, base},
                          int(nrhs), b, x, c.stats);
    } catch (const error& e) {
      fail(e.status(), "(%s)%s", args, e.what());
    }
  });
}

// Errors, callbacks, version --------------------------------------------------------------------
CNC_API CNCstatus cncGetError(void) {
  context* c = tls_current;
  return c ? c->first_error : CNC_ERR_NO_CONTEXT;
}
CNC_API const char* cncGetErrorMessage(void) {
  context* c = tls_current;
  return c ? c->first_message.c_str() : tls_no_context_message.c_str();
}
CNC_API const char* cncGetLastErrorMessage(void) {
  context* c = tls_current;
  return c ? c->last_message.c_str() : tls_no_context_message.c_str();
}
CNC_API CNCstatus cncClearError(void) {
  return guarded("cncClearError", [&](context& c) {
    c.first_error = CNC_OK;
    c.first_message.clear();
    c.last_message.clear();
  });
}
CNC_API CNCstatus cncSetLogCallback(CNClogCallback cb, void* user) {
  return guarded("cncSetLogCallback", [&](context& c) { c.log_cb = cb, c.log_data = user; });
}
CNC_API CNCstatus cncSetProgressCallback(CNCprogressCallback cb, void* user) {
  return guarded("cncSetProgressCallback",
                 [&](context& c) { c.progress_cb = cb, c.progress_data = user; });
}
CNC_API void cncGetVersion(int* major, int* minor, int* patch) {
  int v[3] = {0, 0, 0};
  std::sscanf(CNC_VERSION_STRING_BUILD, "%d.%d.%d", &v[0], &v[1], &v[2]);
  if (major) *major = v[0];
  if (minor) *minor = v[1];
  if (patch) *patch = v[2];
}
CNC_API const char* cncVersionString(void) { return CNC_VERSION_STRING_BUILD; }

CNC_API CNCboolean cncBackendAvailable(CNCenum kind) {
  if (kind != CNC_BACKEND_CPU && kind != CNC_BACKEND_OPENCL && kind != CNC_BACKEND_CUDA)
    return CNC_FALSE;
  try {
    std::string why;
    cnc::backend_options o;
    o.threads = 1;
    return cnc::make_backend(kind, o, why) ? CNC_TRUE : CNC_FALSE;
  } catch (...) {
    return CNC_FALSE;
  }
}

}  // extern "C"
