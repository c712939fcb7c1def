// Solves whose matrix or preconditioner the caller applies (cncSetOperator): no backend, no
// format, no device copy; the Krylov methods run over an operator system's host vectors.
#include <cmath>
#include <string>
#include <vector>

#include "cnc.h"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_internal.hpp"
#include "solver/krylov.hpp"
#include "solver/operator_system.hpp"
#include "solver/scaling.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

namespace cnc {

using namespace pipeline_detail;

void solve_with_operators(const solve_options& o, std::int32_t n, int k, const column_operator& a,
                          const column_operator& m, const std::string& why, const double* b,
                          double* x, solve_stats& stats) {
  check_format(o);
  const double t0 = now_seconds();
  // The method's vectors: the system's five plus at most GMRES's restart + 3 of its own.
  const int vectors = 5 + (o.solver == CNC_GMRES ? o.gmres_restart + 3 : 4);
  memory::reserve(double(n) * k * 8.0 * vectors, [&] {
    return "the operator solve's vectors (" + std::to_string(vectors) + " of " + std::to_string(n) +
           " rows x " + std::to_string(k) + " systems)";
  });
  const auto sys = make_operator_system(n, k, a, m, o.threads);
  log_to(o, CNC_LOG_INFO,
         "solving n=" + std::to_string(n) + " k=" + std::to_string(k) + " on the host: " + why);
  krylov_params kp;
  kp.base.max_iterations = max_iterations(o, n);
  kp.base.threshold = o.threshold;
  kp.base.device_residual = true;  // the system's residual is b - A x in double
  // b of extreme magnitude solved scaled, as in pipeline::run (solver/scaling.hpp).
  rhs_scaling scaled(column_max_abs(b, std::size_t(n), k), b, x, std::size_t(n), k);
  for (const std::string& line : scaled.messages()) log_to(o, CNC_LOG_INFO, line);
  kp.base.progress = scaled.wrap(o.progress);
  kp.base.log = o.log;
  kp.restart = o.gmres_restart;
  kp.rows = n;
  kp.nnz = 0;           // the caller's operator: its cost is not known here
  kp.matrix_bytes = 0;  // likewise
  kp.vector_bytes = 8;
  kp.cg_indefinite = o.cg_indefinite;
  csr_view shape;
  shape.n = n;  // the methods read only its n (the residual is the system's)
  const double ts = now_seconds();
  const double* bs = scaled.b();
  double* xs = scaled.x();
  const pcg_result r = o.solver == CNC_BICGSTAB   ? bicgstab_solve(*sys, shape, k, bs, xs, kp)
                       : o.solver == CNC_GMRES    ? gmres_solve(*sys, shape, k, bs, xs, kp)
                       : o.solver == CNC_BLOCK_CG ? block_cg_solve(*sys, shape, k, bs, xs, kp)
                                                  : cg_solve(*sys, shape, k, bs, xs, kp);
  scaled.finish();
  stats.solve = now_seconds() - ts;
  fill_outcome(r, stats);
  // As pipeline::run: a converged residual says nothing of x where A does not see it.
  for (int j = 0; j < k && std::size_t(j) < r.reasons.size(); ++j) {
    if (r.reasons[std::size_t(j)] != CNC_REASON_CONVERGED) continue;
    const double* xj = x + std::size_t(j) * std::size_t(n);
    if (first_index(n, std::int64_t(1) << 16, host_threads(o.threads),
                    [&](std::int64_t i) { return !std::isfinite(xj[i]); }) < 0)
      continue;
    stats.reason = CNC_REASON_NOT_FINITE;
    log_to(o, CNC_LOG_WARNING,
           "the solution of system " + std::to_string(j) +
               (scaled.active() && scaled.exponents()[std::size_t(j)] != 0
                    ? " overflows double when scaled back (its entries exceed 1.8e308)"
                    : " holds Inf or NaN though its residual converged") +
               ": not finite");
  }
  stats.backend_used = CNC_BACKEND_CPU;
  stats.backend_name = "cpu";
  stats.device_name = "host (the caller's operator)";
  stats.solver_used = o.solver;
  stats.format_used = 0;
  stats.choice_reason = why;
  const double it = double(std::max<std::int64_t>(1, r.iterations));
  stats.bytes_per_iteration = std::int64_t(r.bytes / it);
  stats.gflops = stats.solve > 0 ? r.flops / stats.solve * 1e-9 : 0;
  stats.gbps = stats.solve > 0 ? r.bytes / stats.solve * 1e-9 : 0;
  stats.elapsed = now_seconds() - t0;
  log_to(o, CNC_LOG_INFO,
         std::string(reason_name(stats.reason)) + " after " + std::to_string(stats.iterations) +
             " iterations (the caller's operator, on the host)");
}

}  // namespace cnc
