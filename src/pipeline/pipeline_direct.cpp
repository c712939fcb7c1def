// The direct solvers' stage of the pipeline (pipeline.hpp, solve_direct): the canonical CSR on the
// host, factored by CHOLMOD, SuperLU or cuDSS (src/direct/) unless the kept factorization is of
// this matrix, the triangular solves, and the true residual in double, computed here on the host
// (the libraries' word is not taken for it).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cnc.h"
#include "conversion/convert.hpp"
#include "direct/direct.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_internal.hpp"
#include "solver/pcg.hpp"
#include "util/error.hpp"
#include "util/fingerprint.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

namespace cnc {

using namespace pipeline_detail;

void pipeline::solve_direct(const solve_options& o, const csr_view* canonical,
                            const caller_csr* raw, std::uint64_t version, int k, const double* b,
                            double* x, solve_stats& stats) {
  const double t0 = now_seconds();
  const direct::method m = *direct::method_of(o.solver);
  const char* const name = direct::name(m);
  std::string why;
  if (!direct::available(m, &why))  // before anything else: nothing changes
    throw error(CNC_ERR_UNSUPPORTED, std::string(": ") + name + " is not available: " + why);
  // Where it runs, for the statistics: the host, or cuDSS's CUDA device.
  const bool gpu = direct::on_gpu(m);
  const int where = gpu ? CNC_BACKEND_CUDA : CNC_BACKEND_CPU;
  if (o.backend != CNC_BACKEND_AUTO && o.backend != where)
    log_to(o, CNC_LOG_INFO,
           std::string(name) + (gpu ? " runs on a CUDA device" : " runs on the host") +
               ": CNC_BACKEND not used");
  const auto report_place = [&] {
    stats.backend_used = where;
    stats.backend_name = gpu ? "cuda" : "cpu";
    stats.device_name = std::string(gpu ? "CUDA device" : "host") + " (" + name + ")";
  };
  if (o.prec != precision::f64)
    log_to(o, CNC_LOG_INFO, std::string(name) + " factors in double: CNC_PRECISION not used");
  const int threads = host_threads(o.threads);
  // What identifies the matrix: its version, or for the caller's arrays their content.
  caller_content now;
  if (raw) {
    now.n = raw->n, now.nnz = raw->row_ptr[raw->n] - raw->base, now.base = raw->base;
    now.rows =
        fingerprint_of(raw->row_ptr, (std::size_t(raw->n) + 1) * sizeof *raw->row_ptr, threads);
    now.cols = fingerprint_of(raw->col, std::size_t(now.nnz) * sizeof *raw->col, threads);
    now.vals = fingerprint_of(raw->val, std::size_t(now.nnz) * sizeof *raw->val, threads);
  }
  const bool kept = factored_.f && factored_.solver == o.solver &&
                    (raw ? factored_.caller.version != 0 && factored_.caller.same_arrays(now)
                         : factored_.caller.version == 0 && factored_.version == version);
  // The canonical CSR: the assembled one, or the caller's made canonical (also when the
  // factorization is kept: the true residual reads it).
  user_csr host;
  csr_view a = canonical ? *canonical : csr_view{};
  if (!canonical) {
    const double tc = now_seconds();
    host = caller_canonical(*raw);
    a = host.view;
    stats.conversion = now_seconds() - tc;
  }
  stats.nnz = a.nnz();
  const double tf = now_seconds();
  double factor_time = 0;
  if (!kept) {
    factored_ = kept_factorization{};  // the old one goes first: its memory may be needed
    direct::factored r = direct::factor(m, a, o.device_index);
    factor_time = now_seconds() - tf;
    if (!r.f) {  // A has no factorization: x stays as it is
      log_to(o, CNC_LOG_WARNING, r.why);
      stats.reason = r.reason;
      stats.solver_used = o.solver;
      report_place();
      stats.format_used = CNC_FORMAT_CSR;
      stats.choice_reason = std::string("direct solver ") + name + ": " + r.why;
      stats.solve = factor_time;
      stats.elapsed = now_seconds() - t0;
      return;
    }
    factored_.f = std::move(r.f);
    factored_.solver = o.solver;
    factored_.version = version;
    if (raw) {
      factored_.caller = std::move(now);
      factored_.caller.version = version;
    }
  } else {
    log_to(o, CNC_LOG_INFO,
           std::string(name) + ": the kept factorization is of this matrix: not factored again");
  }
  const std::size_t len = std::size_t(a.n) * std::size_t(k);
  memory::reserve(double(len) * memory::variable_bytes, [&] {
    return "the direct solver's solution (" + std::to_string(a.n) + " rows, " + std::to_string(k) +
           " system(s) of 8 bytes)";
  });
  std::vector<double> sol(len);
  const double ts = now_seconds();
  factored_.f->solve(k, b, sol.data());
  const double solve_time = now_seconds() - ts;
  // The true relative residual of each system, in double; b = 0 gives x = 0 exactly.
  std::vector<double> r2(std::size_t(k), 0.0);
  residual_norms(a, k, b, sol.data(), r2.data());
  double worst = 0, best = 0;
  int reason = CNC_REASON_CONVERGED;
  for (int j = 0; j < k; ++j) {
    const double* bj = b + std::size_t(j) * std::size_t(a.n);
    double b2 = 0;
    for (std::int32_t i = 0; i < a.n; ++i) b2 += bj[i] * bj[i];
    const double rel = b2 > 0 ? std::sqrt(r2[std::size_t(j)] / b2) : std::sqrt(r2[std::size_t(j)]);
    const int rj = !std::isfinite(rel)  ? CNC_REASON_NOT_FINITE
                   : rel <= o.threshold ? CNC_REASON_CONVERGED
                                        : CNC_REASON_STAGNATED;
    if (rj == CNC_REASON_NOT_FINITE || reason == CNC_REASON_CONVERGED) reason = rj;  // the worst
    worst = j == 0 ? rel : std::max(worst, rel);
    best = j == 0 ? rel : std::min(best, rel);
    if (j == k - 1) stats.last_true_error = rel;
  }
  std::copy(sol.begin(), sol.end(), x);
  if (!o.keep_matrix) factored_ = kept_factorization{};
  stats.reason = reason;
  stats.error = stats.true_error = worst;
  stats.true_error_min = best;
  stats.iterations = stats.last_iterations = 0;
  stats.solver_used = o.solver;
  report_place();
  stats.format_used = CNC_FORMAT_CSR;
  stats.reorder_used = CNC_REORDER_NONE;
  stats.solve = factor_time + solve_time;
  stats.choice_reason =
      std::string("direct solver ") + name + ": " +
      (kept ? "the kept factorization reused (not factored again)" : "factored for this matrix") +
      "; its own fill-reducing ordering";
  stats.elapsed = now_seconds() - t0;
  char line[256];
  std::snprintf(line, sizeof line, "%s: %s %.3f ms, %d solve(s) %.3f ms: |b - A x|/|b| = %.3e (%s)",
                name, kept ? "factorization kept," : "factorization", 1e3 * factor_time, k,
                1e3 * solve_time, worst, reason_name(reason));
  log_to(o, CNC_LOG_INFO, line);
}

}  // namespace cnc
