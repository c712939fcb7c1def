// The C API's parameters, statistics and flags: cncSolverParameter*, cncGet*v, cncGetString,
// cncEnable/cncDisable/cncIsEnabled.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "api/api_internal.hpp"
#include "api/cnc_internal.h"
#include "api/context.hpp"
#include "cnc.h"

namespace cnc {
const char* cpu_simd_level();
}

using cnc::context;
using namespace cnc::api;

namespace {

// Parameters ---------------------------------------------------------------------------------
void set_parameter(context& c, CNCenum p, std::int64_t iv, double dv, bool is_double) {
  char args[96];
  if (is_double)
    std::snprintf(args, sizeof args, "pname=0x%x, value=%g", p, dv);
  else
    std::snprintf(args, sizeof args, "pname=0x%x, value=%lld", p, (long long)iv);
  const bool real_valued = p == CNC_THRESHOLD || p == CNC_SSOR_OMEGA || p == CNC_EIGEN_THRESHOLD;
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
      one_of({CNC_SOLVER_DEFAULT, CNC_CG, CNC_BICGSTAB, CNC_GMRES, CNC_CHOLMOD, CNC_SUPERLU,
              CNC_CUDSS, CNC_BLOCK_CG}),
          c.solver = int(iv);
      break;
    case CNC_PRECONDITIONER:
      one_of({CNC_PRECOND_NONE, CNC_PRECOND_JACOBI, CNC_PRECOND_SSOR, CNC_PRECOND_USER});
      if (iv == CNC_PRECOND_USER && !c.op_precond)
        fail(CNC_ERR_STATE,
             "(%s): CNC_PRECOND_USER needs the caller's preconditioner: "
             "cncSetOperator(CNC_OPERATOR_PRECONDITIONER, ...) first",
             args);
      c.preconditioner = int(iv), c.preconditioner_set = true;
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
    case CNC_EIGEN_THRESHOLD:
      if (!is_double) dv = double(iv);
      need_finite(dv, "threshold", args);
      if (!(dv >= 0.0 && dv < 1.0))
        fail(CNC_ERR_INVALID_VALUE, "(%s): the eigen threshold must be in [0, 1)", args);
      c.eigen_threshold = dv;
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
      one_of({CNC_FORMAT_AUTO, CNC_FORMAT_CSR, CNC_FORMAT_BCRS2, CNC_FORMAT_BCRS4, CNC_FORMAT_SELL,
              CNC_FORMAT_ZCSR, CNC_FORMAT_ZSELL});
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
    case CNC_REORDER:
      one_of({CNC_REORDER_AUTO, CNC_REORDER_NONE, CNC_REORDER_RCM}), c.reorder = int(iv);
      break;
    case CNC_INTERNAL_CG_INDEFINITE:
      range(0, 1), c.cg_indefinite = iv != 0;
      break;
    default:
      fail(CNC_ERR_INVALID_ENUM, "(%s): unknown or read-only parameter", args);
  }
}

// Reads any parameter or statistic as a double, and tells whether it is integral.
// The parameters and statistics that hold 64-bit counts, exactly (get_parameter's double would
// round them above 2^53); false for the others.
bool get_integer64(const context& c, CNCenum p, std::int64_t* v) {
  const cnc::solve_stats& s = c.stats;
  switch (p) {
    case CNC_MAX_ITERATIONS:
      *v = c.max_iterations > 0 ? c.max_iterations
                                : std::max<std::int64_t>(100, 5 * std::int64_t(c.n));
      return true;
    case CNC_NNZ_HINT:
      *v = c.nnz_hint;
      return true;
    case CNC_LONG_ROWS:
      *v = s.long_rows;
      return true;
    case CNC_USED_ITERATIONS:
      *v = s.iterations;
      return true;
    case CNC_BYTES_PER_ITERATION:
      *v = s.bytes_per_iteration;
      return true;
    case CNC_NNZ:
      *v = s.nnz;
      return true;
    default:
      return false;
  }
}

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
    case CNC_REORDER:
      return c.reorder;
    case CNC_REORDER_USED:
      return s.reorder_used;
    case CNC_LONG_ROWS:
      return double(s.long_rows);
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
    case CNC_SOLVER_USED:
      return s.solver_used;
    case CNC_FORMAT_USED:
      return s.format_used;
    case CNC_ZERO_DIAGONALS:
      return double(s.zero_diagonals);
    case CNC_STATE:
      return c.state;
    case CNC_INTERNAL_CG_INDEFINITE:
      return c.cg_indefinite;
    case CNC_INTERNAL_LAST_ITERATIONS:
      return double(s.last_iterations);
  }
  *integral = false;
  switch (p) {
    case CNC_THRESHOLD:
      return c.threshold;
    case CNC_EIGEN_THRESHOLD:
      return c.eigen_threshold;
    case CNC_SSOR_OMEGA:
      return c.ssor_omega;
    case CNC_ERROR:
      return s.error;
    case CNC_TRUE_ERROR:
      return s.true_error;
    case CNC_TRUE_ERROR_MIN:
      return s.true_error_min;
    case CNC_INTERNAL_LAST_TRUE_ERROR:
      return s.last_true_error;
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
    case CNC_REORDER_TIME:
      return s.reorder_time;
  }
  fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): unknown parameter or statistic", p);
}

}  // namespace

extern "C" {

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
  return guarded<access::read>("cncGetIntegerv", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    std::int64_t exact = 0;
    if (get_integer64(c, p, &exact)) {
      *out = CNCint(std::clamp<std::int64_t>(exact, INT32_MIN, INT32_MAX));
      return;
    }
    bool integral;
    double v = get_parameter(c, p, &integral);
    if (!integral) fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): a double: use cncGetDoublev", p);
    *out = v > INT32_MAX ? INT32_MAX : CNCint(v);
  });
}
CNC_API CNCstatus cncGetInteger64v(CNCenum p, CNCint64* out) {
  return guarded<access::read>("cncGetInteger64v", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    std::int64_t exact = 0;
    if (get_integer64(c, p, &exact)) {
      *out = exact;
      return;
    }
    bool integral;
    double v = get_parameter(c, p, &integral);
    if (!integral) fail(CNC_ERR_INVALID_ENUM, "(pname=0x%x): a double: use cncGetDoublev", p);
    *out = CNCint64(v);
  });
}
CNC_API CNCstatus cncGetDoublev(CNCenum p, double* out) {
  return guarded<access::read>("cncGetDoublev", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    bool integral;
    *out = get_parameter(c, p, &integral);
  });
}

CNC_API CNCstatus cncGetString(CNCenum p, const char** out) {
  return guarded("cncGetString", [&](context& c) {
    if (!out) fail(CNC_ERR_NULL_POINTER, "(pname=0x%x, value=NULL): value is NULL", p);
    if (p < CNC_BACKEND_NAME || p > CNC_CHOICE_REASON)
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
                 : c.stats.format_used == CNC_FORMAT_ZCSR  ? "zcsr"
                 : c.stats.format_used == CNC_FORMAT_ZSELL ? "zsell"
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
      case CNC_ORDERING_NAME:
        result = c.stats.backend_name.empty()              ? ""
                 : c.stats.reorder_used == CNC_REORDER_RCM ? "rcm"
                                                           : "natural";
        break;
      case CNC_CHOICE_REASON:
        result = c.stats.choice_reason;
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
  return guarded<access::read>("cncIsEnabled", [&](context& c) {
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

}  // extern "C"
