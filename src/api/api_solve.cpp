// The C API's solves: the assembled system (cncSolve) and the caller's CSR (cncSolveCSR,
// cncSolveCSRDevice).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "direct/direct.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"

using cnc::context;
using cnc::error;
using namespace cnc::api;

namespace {

// Gathers free variables into x (column-major, n_free rows), solves, scatters back.
void solve_assembled(context& c) {
  const std::int32_t nf = c.sys.a.n;
  if (nf == 0) {
    c.stats = cnc::solve_stats{};
    c.stats.reason = CNC_REASON_CONVERGED;
    return;
  }
  cnc::memory::reserve(double(nf) * c.k * cnc::memory::variable_bytes, [&] {
    return "the unknowns' copy (" + std::to_string(nf) + " free variables, " + std::to_string(c.k) +
           " system(s) of 8 bytes)";
  });
  std::vector<double> x(std::size_t(nf) * c.k);
  for (std::int32_t s = 0; s < c.k; ++s)
    for (std::int32_t f = 0; f < nf; ++f)
      x[f + std::size_t(s) * nf] = c.values[c.sys.to_var[f] + std::size_t(s) * c.n];
  const double assembly = c.stats.assembly;
  c.iterate_free_variables = true;
  try {
    if (c.uses_operators()) {  // the caller's matrix operator replaces the assembled matrix
      const cnc::csr_view a = c.sys.a;
      c.solve_operators(c.op_matrix ? nullptr : &a, nf, c.k, c.sys.b.data(), x.data());
    } else {
      c.solve(c.sys.a, c.matrix_version, c.k, c.sys.b.data(), x.data());
    }
  } catch (...) {
    c.iterate_free_variables = false;
    throw;
  }
  c.iterate_free_variables = false;
  c.stats.assembly = assembly;
  for (std::int32_t s = 0; s < c.k; ++s)
    for (std::int32_t f = 0; f < nf; ++f)
      c.values[c.sys.to_var[f] + std::size_t(s) * c.n] = x[f + std::size_t(s) * nf];
}

}  // namespace

// The checks the CSR solve calls share (pointers, state, sizes): api_internal.hpp.
void cnc::api::check_csr_call(context& c, const char* args, CNCuint n, const void* row_ptr,
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

extern "C" {

// Solving --------------------------------------------------------------------------------------
CNC_API CNCstatus cncGetCurrentIterate(double* x) {
  return guarded("cncGetCurrentIterate", [&](context& c) {
    if (!x) fail(CNC_ERR_NULL_POINTER, "(x=NULL): x must not be NULL");
    if (!c.in_progress)
      fail(CNC_ERR_STATE, "(x): only inside the progress callback (cncSetProgressCallback)");
    if (!c.iterate)
      fail(CNC_ERR_STATE,
           "(x): this solve does not form its iterate between checks (GMRES: at the end of a "
           "cycle only; cncSolveCSRDevice: it stays on the device)");
    if (!c.iterate_free_variables) {
      (*c.iterate)(x);
      return;
    }
    // cncSolve: every variable's value, the free ones from the solver.
    const std::int32_t nf = c.sys.a.n;
    std::vector<double> free(std::size_t(nf) * std::size_t(c.k));
    (*c.iterate)(free.data());
    std::copy(c.values.begin(), c.values.begin() + std::ptrdiff_t(c.n) * c.k, x);
    for (std::int32_t s = 0; s < c.k; ++s)
      for (std::int32_t f = 0; f < nf; ++f)
        x[c.sys.to_var[f] + std::size_t(s) * c.n] = free[f + std::size_t(s) * nf];
  });
}

CNC_API CNCstatus cncSolve(void) {
  return guarded("cncSolve", [&](context& c) {
    need_state(c, "", {CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
    solve_assembled(c);
    c.state = CNC_STATE_SOLVED;
  });
}

// cncSolveCSR and cncSolveCSRn; nnz < 0: the arrays' length is not known.
static CNCstatus solve_csr(const char* call, CNCuint n, CNCint64 nnz, const CNCint64* row_ptr,
                           const CNCuint* col_idx, const double* values, CNCint base, CNCuint nrhs,
                           const double* b, double* x) {
  return guarded(call, [&](context& c) {
    char args[192];
    if (nnz >= 0)
      std::snprintf(args, sizeof args, "n=%u, nnz=%lld, base=%d, nrhs=%u", n, (long long)nnz, base,
                    nrhs);
    else
      std::snprintf(args, sizeof args, "n=%u, base=%d, nrhs=%u", n, base, nrhs);
    check_csr_call(c, args, n, row_ptr, col_idx, values, base, nrhs, b, x);
    // The offsets must stay inside the arrays: the first is base, the last at most base + nnz
    // (the offsets in between are checked to increase before any entry is read).
    if (nnz >= 0 && (row_ptr[0] != base || row_ptr[n] < base || row_ptr[n] - base > nnz))
      fail(CNC_ERR_SIZE_MISMATCH,
           "(%s): row_ptr[0]=%lld and row_ptr[n]=%lld do not fit arrays of nnz=%lld entries "
           "(needs row_ptr[0] = base and row_ptr[n] - base <= nnz)",
           args, (long long)row_ptr[0], (long long)row_ptr[n], (long long)nnz);
    const std::size_t len = std::size_t(n) * nrhs;
    const std::int64_t bad = cnc::first_index(
        std::int64_t(len), 1 << 16, cnc::host_threads(),
        [&](std::int64_t e) { return !std::isfinite(b[e]) || !std::isfinite(x[e]); });
    if (bad >= 0 && !std::isfinite(b[bad]))
      fail(CNC_ERR_NOT_FINITE, "(%s): b[%lld]=%g is not finite", args, (long long)bad, b[bad]);
    if (bad >= 0)
      fail(CNC_ERR_NOT_FINITE, "(%s): x[%lld]=%g is not finite", args, (long long)bad, x[bad]);
    // The pipeline writes x only when the solve succeeds (pipeline::run).
    if (c.op_matrix)
      fail(CNC_ERR_UNSUPPORTED,
           "(%s): a matrix operator is set (CNC_OPERATOR_MATRIX): cncSolveOperator solves with "
           "it; clear it to solve this CSR",
           args);
    c.stats = cnc::solve_stats{};
    try {
      if (c.uses_operators()) {  // CNC_PRECOND_USER: the host solve, on the canonical CSR
        cnc::check_row_ptr(std::int32_t(n), row_ptr, base);
        const cnc::user_csr a = cnc::csr_from_user(std::int32_t(n), row_ptr, col_idx, values, base);
        c.solve_operators(&a.view, std::int32_t(n), int(nrhs), b, x);
        return;
      }
      c.pipe.solve_user(c.options(),
                        cnc::caller_csr{std::int32_t(n), row_ptr, col_idx, values, base},
                        next_version(), int(nrhs), b, x, c.stats);
    } catch (const error& e) {
      fail(e.status(), "(%s)%s%s", args, *e.what() == ':' ? "" : ": ", e.what());
    }
  });
}

CNC_API CNCstatus cncSolveCSR(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                              const double* values, CNCint base, CNCuint nrhs, const double* b,
                              double* x) {
  return solve_csr("cncSolveCSR", n, -1, row_ptr, col_idx, values, base, nrhs, b, x);
}

CNC_API CNCstatus cncSolveCSRn(CNCuint n, CNCint64 nnz, const CNCint64* row_ptr,
                               const CNCuint* col_idx, const double* values, CNCint base,
                               CNCuint nrhs, const double* b, double* x) {
  if (nnz < 0)
    return guarded("cncSolveCSRn", [&](context&) {
      fail(CNC_ERR_INVALID_VALUE, "(n=%u, nnz=%lld): nnz must be >= 0", n, (long long)nnz);
    });
  return solve_csr("cncSolveCSRn", n, nnz, row_ptr, col_idx, values, base, nrhs, b, x);
}

CNC_API CNCstatus cncSolveCSRDevice(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                                    const double* values, CNCint base, CNCuint nrhs,
                                    const double* b, double* x) {
  return guarded("cncSolveCSRDevice", [&](context& c) {
    char args[160];
    std::snprintf(args, sizeof args, "n=%u, base=%d, nrhs=%u", n, base, nrhs);
    check_csr_call(c, args, n, row_ptr, col_idx, values, base, nrhs, b, x);
    if (c.uses_operators())
      fail(CNC_ERR_UNSUPPORTED,
           "(%s): the caller's operators (cncSetOperator) run on host vectors, not on device "
           "arrays",
           args);
    if (cnc::direct::is_direct_solver(c.solver))
      fail(CNC_ERR_UNSUPPORTED,
           "(%s): the direct solvers (CNC_CHOLMOD, CNC_SUPERLU, CNC_CUDSS) take host arrays: use "
           "cncSolveCSR, or an iterative CNC_SOLVER for device arrays",
           args);
    c.stats = cnc::solve_stats{};
    try {
      c.pipe.solve_device(c.options(),
                          cnc::caller_csr{std::int32_t(n), row_ptr, col_idx, values, base},
                          int(nrhs), b, x, c.stats);
    } catch (const error& e) {
      fail(e.status(), "(%s)%s%s", args, *e.what() == ':' ? "" : ": ", e.what());
    }
  });
}

}  // extern "C"
