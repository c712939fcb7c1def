// Context services behind the C API: errors, logging, and the solve pipeline
// (backend choice -> format conversion -> upload -> PCG -> statistics).
#include "api/context.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "backends/registry.hpp"
#include "conversion/convert.hpp"
#include "solver/krylov.hpp"
#include "solver/pcg.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace cnc {

const char* cpu_simd_level();

const char* reason_name(int reason) {
  static const char* names[] = {
      "none",       "converged", "max iterations", "indefinite matrix", "indefinite preconditioner",
      "not finite", "stopped",   "stagnated",      "breakdown"};
  const int i = reason - CNC_REASON_NONE;
  return i >= 0 && i < int(sizeof names / sizeof *names) ? names[i] : "unknown";
}

int context::fail(int status, const std::string& message) {
  last_message = message;
  if (first_error == CNC_OK) {
    first_error = status;
    first_message = message;
  }
  log(CNC_LOG_ERROR, message);
  return status;
}

void context::log(int level, const std::string& message) const {
  if (log_cb) {
    log_cb(level, message.c_str(), log_data);
  } else if (verbose) {
    static const char* names[] = {"error", "warning", "info"};
    std::fprintf(stderr, "cnc %s: %s\n", names[std::clamp(level, 0, 2)], message.c_str());
  }
}

namespace {

precision to_precision(int p) {
  return p == CNC_SINGLE ? precision::f32 : p == CNC_MIXED ? precision::mixed : precision::f64;
}

int api_format(format f) {
  switch (f) {
    case format::csr:
      return CNC_FORMAT_CSR;
    case format::bcrs2:
      return CNC_FORMAT_BCRS2;
    case format::bcrs4:
      return CNC_FORMAT_BCRS4;
    case format::sell:
      return CNC_FORMAT_SELL;
  }
  return CNC_FORMAT_CSR;
}

format from_api_format(int f) {
  return f == CNC_FORMAT_BCRS2   ? format::bcrs2
         : f == CNC_FORMAT_BCRS4 ? format::bcrs4
         : f == CNC_FORMAT_SELL  ? format::sell
                                 : format::csr;
}

// Stored blocks (BCRS) or entries (SELL) of a converted matrix: what matrix_bytes counts.
std::int64_t stored_units(const prepared_system& p) {
  return is_block(p.fmt) ? p.bcrs.n_blocks() : p.fmt == format::sell ? p.sell.entries() : 0;
}

int threads_from_environment() {
  const char* e = std::getenv("CNC_NUM_THREADS");
  return e ? std::max(0, std::atoi(e)) : 0;
}

// Minimum bytes one iteration must move: the matrix once, 13 vector passes per system (spmv:
// read p, write q; update_xr: read x p r q, write x r; update_p: read r p, write p; plus the
// diagonal read twice, shared by the systems).
double bytes_per_iteration(const csr_view& a, const prepared_system& p, std::int32_t np) {
  const int vb = p.prec == precision::f32 ? 4 : 8, mb = p.prec == precision::f64 ? 8 : 4;
  return matrix_bytes(a, p.fmt, p.stored, mb) + double(np) * vb * (11.0 * p.k + 2.0);
}

}  // namespace

void context::solve(const csr_view& a, std::uint64_t version, int nrhs, const double* b,
                    double* x) {
  const double t0 = now_seconds();
  int requested = backend_param != CNC_BACKEND_AUTO ? backend_param : backend_from_environment();
  std::vector<int> candidates;
  if (requested != CNC_BACKEND_AUTO)
    candidates = {requested};
  else if (a.n < auto_gpu_min_rows)
    candidates = {CNC_BACKEND_CPU};
  else
    candidates = {CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL, CNC_BACKEND_CPU};
  const int nthreads = threads > 0 ? threads : threads_from_environment();
  const precision prec = to_precision(precision_param);

  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const int kind = candidates[c];
    const bool last = c + 1 == candidates.size();
    const unsigned skip_bit = 1u << (kind - CNC_BACKEND_AUTO);
    if (requested == CNC_BACKEND_AUTO && !last && (auto_skip & skip_bit)) continue;
    try {
      // Backend (cached per context while its options are unchanged).
      if (!be || be_kind != kind || be_threads != nthreads || be_device != device_index) {
        prep = prepared_system{};
        be.reset();
        backend_options o;
        o.threads = nthreads;
        o.device_index = device_index;
        o.log = [this](int level, const std::string& m) { log(level, m); };
        std::string why;
        be = make_backend(kind, o, why);
        if (!be) {
          if (requested != CNC_BACKEND_AUTO)
            throw error(CNC_ERR_BACKEND_UNAVAILABLE, ": backend not available: " + why);
          log(CNC_LOG_INFO, std::string("auto backend: skipping ") +
                                (kind == CNC_BACKEND_CUDA ? "cuda" : "opencl") + ": " + why);
          auto_skip |= skip_bit;  // remembered for this context's next solves
          continue;
        }
        be_kind = kind, be_threads = nthreads, be_device = device_index;
      }
      if (requested == CNC_BACKEND_AUTO && kind == CNC_BACKEND_OPENCL && !backend_is_gpu(*be)) {
        log(CNC_LOG_INFO,
            "auto backend: skipping OpenCL device '" + be->device_name() + "' (not a GPU)");
        auto_skip |= skip_bit;
        be.reset();
        be_kind = 0;
        continue;
      }
      // Format, diagonal and device-resident matrix (kept while nothing changed).
      // SSOR is not implemented on any backend: it runs as Jacobi, as OpenNL does where absent.
      if (preconditioner == CNC_PRECOND_SSOR)
        log(CNC_LOG_WARNING, "SSOR is not available: using Jacobi");
      const bool jacobi = preconditioner != CNC_PRECOND_NONE;
      const double tc = now_seconds();
      format fmt = format::csr;
      if (format_param == CNC_FORMAT_AUTO) {
        const int value_bytes = prec == precision::f64 ? 8 : 4;
        const bool sliced = be->prefers_sliced();
        if (auto_format_version != version || auto_format_bytes != value_bytes ||
            auto_format_sliced != sliced) {
          auto_format = choose_format(a, value_bytes, sliced);
          auto_format_version = version, auto_format_bytes = value_bytes;
          auto_format_sliced = sliced;
        }
        fmt = auto_format;
      } else
        fmt = from_api_format(format_param);
      if (!(prep.dev && prep.version == version && prep.owner == be.get() && prep.fmt == fmt &&
            prep.prec == prec && prep.k == nrhs && prep.jacobi == jacobi)) {
        prep = prepared_system{};
        prep.fmt = fmt, prep.prec = prec, prep.k = nrhs, prep.jacobi = jacobi;
        const bool on_device = be->builds_on_device(fmt);
        if (is_block(fmt)) prep.bcrs = csr_to_bcrs(a, block_size(fmt));
        if (fmt == format::sell && !on_device) prep.sell = csr_to_sell(a);
        host_matrix hm;
        hm.fmt = fmt, hm.csr = a;
        hm.bcrs = is_block(fmt) ? &prep.bcrs : nullptr;
        hm.sell = fmt == format::sell && !on_device ? &prep.sell : nullptr;
        prep.d = inverse_diagonal(a, hm.n_padded(), jacobi, &prep.zero_diagonals);
        const double tu = now_seconds();
        stats.conversion = csr_conversion_time + (tu - tc);
        prep.dev = be->create_system(hm, prep.d, prec, nrhs);
        stats.upload = now_seconds() - tu;
        prep.stored = fmt == format::sell && on_device ? sell_entries(a) : stored_units(prep);
        prep.n_padded = hm.n_padded();
        if (!be->keeps_host_matrix()) prep.bcrs = bcrs_matrix{}, prep.sell = sell_matrix{};
        prep.version = version, prep.owner = be.get();
      } else {
        stats.conversion = csr_conversion_time;
        stats.upload = 0;
      }
      const std::int32_t np = prep.n_padded;
      if (prep.zero_diagonals > 0 && jacobi)
        log(CNC_LOG_WARNING,
            std::to_string(prep.zero_diagonals) + " zero diagonal entries: Jacobi uses 1 there");
      log(CNC_LOG_INFO, "solving n=" + std::to_string(a.n) + " nnz=" + std::to_string(a.nnz()) +
                            " k=" + std::to_string(nrhs) + " on " + be->name() + " (" +
                            be->device_name() + "), format " + format_name(fmt));

      pcg_params prm;
      prm.max_iterations =
          max_iterations > 0 ? max_iterations : std::max<std::int64_t>(100, 5 * std::int64_t(a.n));
      prm.threshold = threshold;
      prm.check_interval = check_interval > 0 ? check_interval : be->default_check_interval();
      prm.device_residual = prec == precision::f64;
      if (progress_cb) {
        prm.progress = [this](std::int64_t it, double res) {
          return progress_cb(CNCint(std::min<std::int64_t>(it, INT32_MAX)), res, progress_data) !=
                 0;
        };
      }
      prm.log = [this](int level, const std::string& m) { log(level, m); };
      const double ts = now_seconds();
      pcg_result r;
      if (solver == CNC_BICGSTAB || solver == CNC_GMRES) {  // DEFAULT and CG: PCG
        krylov_params kp;
        kp.base = prm;
        kp.restart = gmres_restart;
        kp.threads = nthreads;
        kp.d = jacobi ? prep.d.data() : nullptr;
        r = solver == CNC_BICGSTAB ? bicgstab_solve(*prep.dev, a, nrhs, b, x, kp)
                                   : gmres_solve(*prep.dev, a, nrhs, b, x, kp);
      } else {
        r = pcg_solve(*prep.dev, a, nrhs, b, x, prm);
      }
      stats.solve = now_seconds() - ts;

      stats.iterations = r.iterations;
      stats.reason = r.reason;
      stats.error =
          r.residual.empty() ? 0 : *std::max_element(r.residual.begin(), r.residual.end());
      stats.true_error = r.true_residual.empty()
                             ? 0
                             : *std::max_element(r.true_residual.begin(), r.true_residual.end());
      stats.true_error_min = r.true_residual.empty() ? 0
                                                     : *std::min_element(r.true_residual.begin(),
                                                                         r.true_residual.end());
      stats.nnz = a.nnz();
      stats.zero_diagonals = prep.zero_diagonals;
      stats.format_used = api_format(fmt);
      const int bs = block_size(fmt);
      stats.fill_ratio = fmt == format::csr || a.nnz() == 0
                             ? 1.0
                             : double(prep.stored) * bs * bs / double(a.nnz());
      stats.backend_used = be->api_id();
      stats.backend_name = be->name();
      stats.device_name = be->device_name();
      const double bpi = bytes_per_iteration(a, prep, np);
      stats.bytes_per_iteration = std::int64_t(bpi);
      const double flops = (2.0 * double(a.nnz()) + 14.0 * a.n) * nrhs * double(r.iteration_steps);
      stats.gflops = stats.solve > 0 ? flops / stats.solve * 1e-9 : 0;
      stats.gbps = stats.solve > 0 ? bpi * double(r.iteration_steps) / stats.solve * 1e-9 : 0;
      stats.elapsed = now_seconds() - t0;
      char line[256];
      std::snprintf(line, sizeof line,
                    "%s after %lld iterations: |r|/|b| = %.3e (true %.3e), %.3f s",
                    reason_name(stats.reason), (long long)stats.iterations, stats.error,
                    stats.true_error, stats.solve);
      log(CNC_LOG_INFO, line);
      return;
    } catch (const error& e) {
      // In auto mode a failing GPU backend falls back to the next candidate, saying why.
      if (requested != CNC_BACKEND_AUTO || last || e.status() == CNC_ERR_NOT_FINITE) throw;
      log(CNC_LOG_WARNING, std::string("backend ") + (be ? be->name() : "?") + " failed (" +
                               e.what() + "); falling back");
      prep = prepared_system{};
      be.reset();
    }
  }
  throw error(CNC_ERR_BACKEND_UNAVAILABLE, ": no backend could run this solve");
}

}  // namespace cnc
