// The C API's memory query: cncEstimateMemory, the model of util/memory_model.hpp applied to the
// context's parameters.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "backends/registry.hpp"
#include "cnc.h"
#include "direct/direct.hpp"
#include "util/memory_model.hpp"

using cnc::context;
using namespace cnc::api;

namespace {

// Bytes as a CNCint64 (a model of 2^31 rows and 2^62 entries stays far below 2^63 - 1).
CNCint64 as_bytes(double bytes) {
  return bytes >= 9.2e18 ? INT64_MAX : CNCint64(std::max(0.0, bytes));
}

}  // namespace

extern "C" {

CNC_API CNCstatus cncEstimateMemory(CNCuint n, CNCint64 nnz, CNCint64* host_bytes,
                                    CNCint64* device_bytes) {
  return guarded<access::read>("cncEstimateMemory", [&](context& c) {
    char args[96];
    std::snprintf(args, sizeof args, "n=%u, nnz=%lld", n, (long long)nnz);
    if (!host_bytes || !device_bytes)
      fail(CNC_ERR_NULL_POINTER, "(%s): host_bytes and device_bytes must not be NULL", args);
    if (n == 0 || n > CNCuint(INT32_MAX - 8))
      fail(CNC_ERR_INVALID_VALUE, "(%s): n must be in [1, 2^31 - 9]", args);
    if (nnz < 0 || double(nnz) > double(n) * double(n))
      fail(CNC_ERR_INVALID_VALUE, "(%s): nnz must be in [0, n^2]", args);
    cnc::memory::solve_shape s;
    s.n = double(n), s.nnz = double(nnz), s.k = double(c.k);
    s.nnz_hint = c.nnz_hint;
    s.vector_bytes = c.precision_param == CNC_SINGLE ? 4 : 8;
    s.matrix_value_bytes = c.precision_param == CNC_DOUBLE ? 8 : 4;
    s.format = c.format_param;
    // CNC_SOLVER_DEFAULT as context::options resolves it.
    s.solver = c.solver != CNC_SOLVER_DEFAULT   ? c.solver
               : c.symmetric || c.least_squares ? CNC_CG
                                                : CNC_BICGSTAB;
    s.gmres_restart = c.gmres_restart;
    s.ssor = c.preconditioner == CNC_PRECOND_SSOR;
    s.reorder = c.reorder != CNC_REORDER_NONE;
    // The backend as the pipeline picks it, without starting one: AUTO counts a GPU from
    // auto_gpu_min_nnz entries on (present or not) and keeps the CPU as its last resort.
    int backend = c.backend_param;
    if (backend == CNC_BACKEND_AUTO) {
      try {
        backend = cnc::backend_from_environment();
      } catch (const cnc::error&) {  // an unknown CNC_BACKEND fails the solve, not this query
        backend = CNC_BACKEND_AUTO;
      }
    }
    if (s.ssor) backend = CNC_BACKEND_CPU;
    s.cpu = backend == CNC_BACKEND_CPU || backend == CNC_BACKEND_AUTO;
    s.gpu = backend == CNC_BACKEND_CUDA || backend == CNC_BACKEND_OPENCL ||
            (backend == CNC_BACKEND_AUTO && nnz >= cnc::auto_gpu_min_nnz);
    if (cnc::direct::is_direct_solver(s.solver))  // the library's own, no cnc backend
      s.cpu = s.solver != CNC_CUDSS, s.gpu = false;
    const cnc::memory::solve_estimate e = cnc::memory::estimate(s);
    *host_bytes = as_bytes(e.host);
    *device_bytes = as_bytes(e.device);
  });
}

}  // extern "C"
