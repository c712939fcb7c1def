// The C API's matrix-free calls: the caller's operators (cncSetOperator) and the solve that needs
// no matrix (cncSolveOperator). cncSolve and cncSolveCSR route to the same host solve when an
// operator applies (context::solve_operators).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "cnc.h"
#include "util/error.hpp"
#include "util/parallel.hpp"

using cnc::context;
using cnc::error;
using namespace cnc::api;

extern "C" {

CNC_API CNCstatus cncSetOperator(CNCenum which, CNCoperator op, void* user_data) {
  return guarded("cncSetOperator", [&](context& c) {
    if (which != CNC_OPERATOR_MATRIX && which != CNC_OPERATOR_PRECONDITIONER)
      fail(CNC_ERR_INVALID_ENUM, "(which=0x%x): CNC_OPERATOR_MATRIX or CNC_OPERATOR_PRECONDITIONER",
           unsigned(which));
    if (c.state == CNC_STATE_MATRIX || c.state == CNC_STATE_ROW)
      fail(CNC_ERR_STATE, "(which=0x%x): not allowed in state %s", unsigned(which),
           state_name(c.state));
    if (which == CNC_OPERATOR_MATRIX) {
      c.op_matrix = op, c.op_matrix_data = op ? user_data : nullptr;
      return;
    }
    c.op_precond = op, c.op_precond_data = op ? user_data : nullptr;
    if (op) {
      c.preconditioner = CNC_PRECOND_USER, c.preconditioner_set = true;
    } else if (c.preconditioner == CNC_PRECOND_USER) {
      c.preconditioner = CNC_PRECOND_JACOBI, c.preconditioner_set = false;
    }
  });
}

CNC_API CNCstatus cncSolveOperator(CNCuint n, CNCuint nrhs, const double* b, double* x) {
  return guarded("cncSolveOperator", [&](context& c) {
    char args[96];
    std::snprintf(args, sizeof args, "n=%u, nrhs=%u", n, nrhs);
    if (!b || !x) fail(CNC_ERR_NULL_POINTER, "(%s): b and x must not be NULL", args);
    if (c.state == CNC_STATE_MATRIX || c.state == CNC_STATE_ROW)
      fail(CNC_ERR_STATE, "(%s): not allowed in state %s", args, state_name(c.state));
    if (!c.op_matrix)
      fail(CNC_ERR_STATE, "(%s): no matrix operator (cncSetOperator(CNC_OPERATOR_MATRIX, ...))",
           args);
    if (n == 0 || n > CNCuint(INT32_MAX - 8))
      fail(CNC_ERR_INVALID_VALUE, "(%s): n out of range", args);
    if (nrhs == 0 || nrhs > 4096)
      fail(CNC_ERR_INVALID_VALUE, "(%s): nrhs must be in [1, 4096]", args);
    const std::int64_t len = std::int64_t(n) * nrhs;
    const std::int64_t bad = cnc::first_index(
        len, 1 << 16, cnc::host_threads(),
        [&](std::int64_t e) { return !std::isfinite(b[e]) || !std::isfinite(x[e]); });
    if (bad >= 0 && !std::isfinite(b[bad]))
      fail(CNC_ERR_NOT_FINITE, "(%s): b[%lld]=%g is not finite", args, (long long)bad, b[bad]);
    if (bad >= 0)
      fail(CNC_ERR_NOT_FINITE, "(%s): x[%lld]=%g is not finite", args, (long long)bad, x[bad]);
    try {
      c.solve_operators(nullptr, std::int32_t(n), int(nrhs), b, x);
    } catch (const error& e) {
      fail(e.status(), "(%s)%s%s", args, *e.what() == ':' ? "" : ": ", e.what());
    }
  });
}

}  // extern "C"
