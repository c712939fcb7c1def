// The solve pipeline (see pipeline.hpp).
#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <system_error>

#include "backends/registry.hpp"
#include "cnc.h"
#include "conversion/complex.hpp"
#include "conversion/convert.hpp"
#include "conversion/reorder.hpp"
#include "direct/direct.hpp"
#include "pipeline/pipeline_internal.hpp"
#include "solver/krylov.hpp"
#include "solver/pcg.hpp"
#include "solver/scaling.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

namespace cnc {

using namespace pipeline_detail;

namespace {

int value_bytes(precision p) { return p == precision::f64 ? 8 : 4; }

// Stored blocks (BCRS) or entries (SELL) of a converted matrix: what matrix_bytes counts.
std::int64_t stored_units(const prepared_system& p) {
  return is_block(p.fmt)          ? p.bcrs.n_blocks()
         : p.fmt == format::sell  ? p.sell.entries()
         : p.fmt == format::zcsr  ? p.zcsr.nnz()
         : p.fmt == format::zsell ? zsell_entries(p.zcsr)
                                  : 0;
}

int threads_from_environment() {
  return int(std::clamp<long long>(env::integer(env::var::num_threads, 0), 0, 1 << 16));
}

// Minimum bytes one iteration must move: the matrix once, 10 vector passes per system (spmv:
// read p, write q; update_xr: read r q, write r; update_p: read x r p, write x p; plus the
// diagonal read twice, shared by the systems).
double bytes_per_iteration(std::int32_t n, std::int64_t nnz, const prepared_system& p) {
  const int vb = p.key.prec == precision::f32 ? 4 : 8, mb = value_bytes(p.key.prec);
  return matrix_bytes(n, nnz, p.fmt, p.stored, mb) +
         double(p.n_padded) * vb * (10.0 * p.key.k + 2.0);
}

}  // namespace

const char* reason_name(int reason) {
  static const char* names[] = {
      "none",       "converged", "max iterations", "indefinite matrix", "indefinite preconditioner",
      "not finite", "stopped",   "stagnated",      "breakdown"};
  const int i = reason - CNC_REASON_NONE;
  return i >= 0 && i < int(sizeof names / sizeof *names) ? names[i] : "unknown";
}

void pipeline::reset() {
  release_matrix();
  be_.reset();
  be_kind_ = 0;
}

void pipeline::release_matrix() {
  prep_ = prepared_system{};
  factored_ = kept_factorization{};
  last_caller_ = caller_content{};
  order_ = kept_order{};
}

backend* pipeline::backend_for(const solve_options& o, int kind, bool requested) {
  const unsigned skip_bit = 1u << (kind - CNC_BACKEND_AUTO);
  const int nthreads = o.threads > 0 ? o.threads : threads_from_environment();
  if (!be_ || be_kind_ != kind || be_threads_ != nthreads || be_device_ != o.device_index) {
    reset();
    backend_options bo;
    bo.threads = nthreads;
    bo.device_index = o.device_index;
    bo.log = o.log;
    std::string why;
    be_ = make_backend(kind, bo, why);
    if (!be_) {
      if (requested) throw error(CNC_ERR_BACKEND_UNAVAILABLE, ": backend not available: " + why);
      log_to(o, CNC_LOG_INFO,
             std::string("auto backend: skipping ") +
                 (kind == CNC_BACKEND_CUDA ? "cuda" : "opencl") + ": " + why);
      auto_skip_ |= skip_bit;  // remembered for this context's next solves
      return nullptr;
    }
    be_kind_ = kind, be_threads_ = nthreads, be_device_ = o.device_index;
  }
  if (!requested && kind == CNC_BACKEND_OPENCL && !backend_is_gpu(*be_)) {
    log_to(o, CNC_LOG_INFO,
           "auto backend: skipping OpenCL device '" + be_->device_name() + "' (not a GPU)");
    auto_skip_ |= skip_bit;
    reset();
    return nullptr;
  }
  return be_.get();
}

format pipeline_detail::complex_format(const solve_options& o, const backend& be, std::int32_t n,
                                       std::int64_t nnz,
                                       const std::function<std::int64_t()>& zsell_stored) {
  if (o.format == CNC_FORMAT_ZSELL) {
    if (!be.runs_complex_sell())
      throw error(CNC_ERR_UNSUPPORTED, std::string(": CNC_FORMAT_ZSELL is stored by the CUDA "
                                                   "backend only, not the ") +
                                           be.name() +
                                           " backend (choose CNC_FORMAT_AUTO or _ZCSR)");
    return format::zsell;
  }
  if (!o.complex_auto || !be.runs_complex_sell()) return format::zcsr;
  return choose_complex_format(n, nnz, zsell_stored(), value_bytes(o.prec));
}

void pipeline::prepare(const solve_options& o, const csr_view& a, const zcsr_view* z,
                       std::uint64_t version, int k, solve_stats& stats) {
  const prepared_key key = key_for(o, version, be_.get(), k);
  if (prep_.dev && prep_.key == key) {
    stats.conversion = 0, stats.upload = 0;
    return;
  }
  const double tc = now_seconds();
  prep_ = prepared_system{};
  prep_.key = key;
  // A complex matrix comes as its zcsr, or (other precisions) as its real-equivalent, whose real
  // rows 2i and 2i + 1 hold two entries for each complex entry of row i.
  auto complex_rows_of_real = [&] {
    std::vector<std::int64_t> rp(std::size_t(a.n / 2) + 1);
    for (std::size_t i = 0; i < rp.size(); ++i) rp[i] = a.row_ptr[2 * i] / 4;
    return zsell_entries(zcsr_view{a.n / 2, rp, {}, {}});
  };
  prep_.fmt = z ? complex_format(o, *be_, z->n, z->nnz(), [&] { return zsell_entries(*z); })
              : native_complex(o.format)
                  ? complex_format(o, *be_, a.n / 2, a.nnz() / 4, complex_rows_of_real)
              : o.format == CNC_FORMAT_AUTO
                  ? choose_format(a, value_bytes(o.prec), be_->prefers_sliced())
                  : from_api_format(o.format);
  const build_times t = z ? build_system(*be_, *z, o.prec, o.jacobi, k, prep_)
                          : build_system(*be_, a, o.prec, o.jacobi, k, prep_);
  stats.conversion = now_seconds() - tc - t.system;
  stats.upload = t.system;
  char line[200];
  std::snprintf(line, sizeof line,
                "host conversion: format choice %.3f ms, %s layout %.3f ms%s, diagonal %.3f ms; "
                "backend's system %.3f ms",
                1e3 * (stats.conversion - t.layout - t.diagonal), format_name(prep_.fmt),
                1e3 * t.layout, be_->builds_on_device(prep_.fmt) ? " (filled on the device)" : "",
                1e3 * t.diagonal, 1e3 * t.system);
  log_to(o, CNC_LOG_INFO, line);
}

build_times build_system(backend& be, const csr_view& a, precision p, bool jacobi, int k,
                         prepared_system& prep) {
  build_times t;
  const format fmt = prep.fmt;
  const bool on_device = be.builds_on_device(fmt);
  const double t0 = now_seconds();
  if (is_block(fmt)) prep.bcrs = csr_to_bcrs(a, block_size(fmt));
  if (fmt == format::sell && !on_device) prep.sell = csr_to_sell(a);
  if (is_complex(fmt)) prep.zcsr = zcsr_from_real_equivalent(a);
  const double t1 = now_seconds();
  host_matrix hm;
  const zcsr_view z = prep.zcsr;
  hm.fmt = fmt, hm.csr = a;
  hm.bcrs = is_block(fmt) ? &prep.bcrs : nullptr;
  hm.sell = fmt == format::sell && !on_device ? &prep.sell : nullptr;
  hm.zcsr = is_complex(fmt) ? &z : nullptr;
  // Every backend copies the diagonal into its own system: it is not kept here.
  const host_vector<double> d = inverse_diagonal(a, hm.n_padded(), jacobi, &prep.zero_diagonals);
  const double t2 = now_seconds();
  prep.dev = be.create_system(hm, d, p, k);
  t.layout = t1 - t0, t.diagonal = t2 - t1, t.system = now_seconds() - t2;
  prep.stored = fmt == format::sell && on_device ? sell_entries(a) : stored_units(prep);
  prep.nnz = a.nnz();
  prep.n_padded = hm.n_padded();
  if (!be.keeps_host_matrix())
    prep.bcrs = bcrs_matrix{}, prep.sell = sell_matrix{}, prep.zcsr = zcsr_matrix{};
  return t;
}

build_times build_system(backend& be, const zcsr_view& a, precision p, bool jacobi, int k,
                         prepared_system& prep) {
  build_times t;
  const double t0 = now_seconds();
  host_matrix hm;  // no real-equivalent: its row count only
  hm.fmt = prep.fmt, hm.csr = csr_view{2 * a.n, {}, {}, {}}, hm.zcsr = &a;
  const host_vector<double> d = inverse_diagonal(a, hm.n_padded(), jacobi, &prep.zero_diagonals);
  const double t1 = now_seconds();
  prep.dev = be.create_system(hm, d, p, k);
  t.diagonal = t1 - t0, t.system = now_seconds() - t1;
  prep.stored = prep.fmt == format::zsell ? zsell_entries(a) : a.nnz();
  prep.nnz = 4 * a.nnz();  // the real-equivalent's entries, as the other complex path counts
  prep.n_padded = hm.n_padded();
  return t;
}

user_csr pipeline_detail::caller_canonical(const caller_csr& raw) {
  try {
    return csr_from_user(raw.n, raw.row_ptr, raw.col, raw.val, raw.base);
  } catch (const error& e) {
    throw input_error(e.status(), std::string(": ") + e.what());
  }
}

user_zcsr pipeline_detail::complex_canonical(const solve_options& o, const caller_csr& raw) {
  try {
    // CG and block CG need a Hermitian positive definite A; the checks a pass over the sorted
    // rows affords (the pipeline's own arrays were checked when they were made from the caller's).
    return zcsr_from_user(raw.n, raw.row_ptr, raw.col, raw.val, raw.base,
                          needs_hermitian(o) && !raw.kept);
  } catch (const error& e) {
    throw input_error(e.status(), std::string(": ") + e.what());
  }
}

void pipeline::run(const solve_options& o, const csr_view& a, int k, const double* b, double* x,
                   bool on_device, solve_stats& stats, const std::function<void()>& alongside,
                   permuted_csr* pm) {
  stats.nnz = prep_.nnz;
  // Rows (two a complex unknown) where Jacobi takes 1: the complex diagonal's own where given.
  const std::int64_t zero_diagonals =
      o.complex_dinv ? 2 * o.complex_dinv_ones : prep_.zero_diagonals;
  if (zero_diagonals > 0 && o.jacobi)
    log_to(o, CNC_LOG_WARNING,
           std::to_string(zero_diagonals) +
               " zero or subnormal diagonal entries (1/a_ii would overflow): Jacobi uses 1 there");
  log_to(o, CNC_LOG_INFO,
         "solving n=" + std::to_string(a.n) + " nnz=" + std::to_string(stats.nnz) +
             " k=" + std::to_string(k) + " on " + be_->name() + " (" + be_->device_name() +
             "), format " + format_name(prep_.fmt) + (on_device ? ", arrays on the device" : ""));
  pcg_params prm;
  prm.max_iterations = max_iterations(o, a.n);
  prm.threshold = o.threshold;
  prm.check_interval = o.check_interval > 0 ? o.check_interval : be_->default_check_interval();
  prm.device_residual = o.prec == precision::f64;
  prm.vectors_on_device = on_device;
  prm.progress = o.progress;
  prm.log = o.log;
  // `alongside` starts once b and x are on the device (it would compete with their staging),
  // on another thread; on the CPU backend, or when PCG never iterates, it runs after the solve.
  std::future<void> side;  // waited for (also when the solve throws) before the caller's arrays go
  if (alongside && be_->api_id() != CNC_BACKEND_CPU) {
    prm.loop_started = [&side, &alongside] {
      try {
        side = std::async(std::launch::async, alongside);
      } catch (const std::system_error&) {  // no thread to be had: done after the solve
      }
    };
  }
  // The caller's x changes only when the solve succeeds. BiCGSTAB, GMRES and PCG with the
  // device's true residual write it once, at the end; PCG otherwise works on a copy.
  const bool krylov = o.solver == CNC_BICGSTAB || o.solver == CNC_GMRES || o.solver == CNC_BLOCK_CG;
  // CG with SSOR, or continuing on indefinite curvature: over the vector surface.
  const bool surface_cg = !krylov && (o.ssor_omega > 0 || o.cg_indefinite);
  // Reordered (pm): b and x renumbered on the device as they go up, and x as it comes down,
  // where the system can, for PCG with the device's residual (no other step reads them in the
  // system's numbering); on the host otherwise (pm->ready). Reset when the solve ends, however.
  struct numbering_reset {
    device_system* sys = nullptr;
    ~numbering_reset() {
      if (!sys) return;
      try {
        sys->set_numbering({});
      } catch (...) {  // the system is dropped with the error that follows, if any
      }
    }
  } reset_numbering;
  if (pm) {
    pm->order();
    const double tn = now_seconds();
    pm->device_numbering = false;
    if (!on_device && !krylov && !surface_cg && prm.device_residual && !o.complex_dinv) {
      try {
        pm->device_numbering = prep_.dev->set_numbering(*pm->perm);
      } catch (const error& e) {
        if (e.status() != CNC_ERR_OUT_OF_MEMORY) throw;
        log_to(o, CNC_LOG_INFO,
               std::string("no room on the device for the ordering (") + e.what() +
                   "): b and x renumbered on the host");
      }
    }
    if (pm->device_numbering) {
      stats.upload += now_seconds() - tn;  // the ordering's upload: the vectors' own
      reset_numbering.sys = prep_.dev.get();
      b = pm->b, x = pm->x;
      log_to(o, CNC_LOG_INFO, "b and x renumbered on the device");
    } else {
      pm->ready();
    }
  }
  const double ts = now_seconds();
  pcg_result r;
  host_vector<double> scratch;
  double* const x_out = x;
  // b (and x with it) of extreme magnitude: solved scaled by a power of two (solver/scaling.hpp).
  const std::size_t nk = std::size_t(a.n) * std::size_t(k);
  rhs_scaling scaled(on_device ? std::vector<double>{} : column_max_abs(b, std::size_t(a.n), k), b,
                     x, std::size_t(a.n), k);
  if (scaled.active()) {
    b = scaled.b(), x = scaled.x();
    for (const std::string& line : scaled.messages()) log_to(o, CNC_LOG_INFO, line);
    prm.progress = scaled.wrap(prm.progress);  // the callback sees x in the caller's scale
  } else if (!on_device && !krylov && !surface_cg && !prm.device_residual) {
    scratch.assign(x, x + std::size_t(a.n) * std::size_t(k));
    x = scratch.data();
  }
  if (krylov || surface_cg) {
    krylov_params kp;
    kp.base = prm;
    kp.restart = o.gmres_restart;
    kp.rows = prep_.n_padded;
    kp.nnz = prep_.nnz;
    kp.matrix_bytes = matrix_bytes(a.n, prep_.nnz, prep_.fmt, prep_.stored, value_bytes(o.prec));
    kp.vector_bytes = o.prec == precision::f32 ? 4 : 8;
    kp.ssor_omega = o.ssor_omega;
    kp.cg_indefinite = o.cg_indefinite;
    // Complex systems: BiCGSTAB and GMRES in complex arithmetic, except with SSOR, whose sweeps
    // over the real-equivalent's triangles are not complex-linear (the real methods run then).
    kp.complex = o.complex_system && o.ssor_omega == 0;
    kp.complex_dinv = o.complex_dinv;
    r = o.solver == CNC_BLOCK_CG   ? block_cg_solve(*prep_.dev, a, k, b, x, kp)
        : surface_cg               ? cg_solve(*prep_.dev, a, k, b, x, kp)
        : o.solver == CNC_BICGSTAB ? bicgstab_solve(*prep_.dev, a, k, b, x, kp)
                                   : gmres_solve(*prep_.dev, a, k, b, x, kp);
  } else {
    r = pcg_solve(*prep_.dev, a, k, b, x, prm);
  }
  stats.solve = now_seconds() - ts;
  const double tw = now_seconds();
  if (side.valid())
    side.get();
  else if (alongside)
    alongside();
  const double waited = now_seconds() - tw;
  if (scaled.active())
    scaled.finish();
  else if (x != x_out)
    std::copy(x, x + nk, x_out);
  // A converged residual says nothing of x where A does not see it: on a singular A the iterate
  // can run off to Inf and NaN along A's null space (columns A never reads) while b - A x stays
  // small; scaled back, x can also leave double's range (b near 1e308, A below 1). Not
  // "converged" then. One pass over x, on every core or on the device.
  for (int j = 0; j < k && std::size_t(j) < r.reasons.size(); ++j) {
    if (r.reasons[std::size_t(j)] != CNC_REASON_CONVERGED) continue;
    const double* xj = x_out + std::size_t(j) * std::size_t(a.n);
    const bool finite =
        on_device ? be_->first_not_finite(xj, a.n) < 0
                  : first_index(a.n, std::int64_t(1) << 16, host_threads(o.threads),
                                [&](std::int64_t i) { return !std::isfinite(xj[i]); }) < 0;
    if (finite) continue;
    r.reasons[std::size_t(j)] = CNC_REASON_NOT_FINITE;
    r.reason = CNC_REASON_NOT_FINITE;
    log_to(o, CNC_LOG_WARNING,
           "the solution of system " + std::to_string(j) +
               (scaled.active() && scaled.exponents()[std::size_t(j)] != 0
                    ? " overflows double when scaled back (its entries exceed 1.8e308)"
                    : " holds Inf or NaN though its residual converged (A is singular: the "
                      "iterate diverged where A does not see it)") +
               ": not finite");
  }

  fill_outcome(r, stats);
  stats.zero_diagonals = zero_diagonals;
  stats.format_used = api_format(prep_.fmt);
  stats.long_rows = prep_.dev->long_rows();
  stats.choice_reason =
      std::string("format ") + format_name(prep_.fmt) +
      (o.format == CNC_FORMAT_AUTO ? " (AUTO: fewest bytes per SpMV on this backend)"
                                   : " (CNC_MATRIX_FORMAT)") +
      "; " +
      (stats.long_rows > 0 ? std::to_string(stats.long_rows) +
                                 " long rows cut into pieces (their work split by entries)"
                           : std::string("no long rows"));
  // ZCSR: a complex entry is 4 real entries of the real-equivalent (the zeros kept, as BCRS 2x2).
  const int bs = is_complex(prep_.fmt) ? 2 : block_size(prep_.fmt);
  stats.fill_ratio = prep_.fmt == format::csr || stats.nnz == 0
                         ? 1.0
                         : double(prep_.stored) * bs * bs / double(stats.nnz);
  stats.backend_used = be_->api_id();
  stats.solver_used = krylov ? o.solver : CNC_CG;
  stats.backend_name = be_->name();
  stats.device_name = be_->device_name();
  // PCG's per-iteration cost is fixed; the other methods count what they issued.
  const double steps = double(r.iteration_steps);
  const double bytes = r.bytes > 0 ? r.bytes : bytes_per_iteration(a.n, stats.nnz, prep_) * steps;
  const double flops = r.flops > 0 ? r.flops : (2.0 * double(stats.nnz) + 14.0 * a.n) * k * steps;
  stats.bytes_per_iteration =
      r.bytes > 0 ? std::int64_t(bytes / double(std::max<std::int64_t>(1, r.iterations)))
                  : std::int64_t(bytes_per_iteration(a.n, stats.nnz, prep_));
  stats.gflops = stats.solve > 0 ? flops / stats.solve * 1e-9 : 0;
  stats.gbps = stats.solve > 0 ? bytes / stats.solve * 1e-9 : 0;
  char line[256];
  std::snprintf(line, sizeof line,
                "%s after %lld iterations: |r|/|b| = %.3e (true %.3e), %.3f s (then %.3f ms for "
                "the arrays' fingerprints)",
                reason_name(stats.reason), (long long)stats.iterations, stats.error,
                stats.true_error, stats.solve, 1e3 * waited);
  log_to(o, CNC_LOG_INFO, line);
}

void pipeline::solve(const solve_options& o, const csr_view& a, std::uint64_t version, int k,
                     const double* b, double* x, solve_stats& stats) {
  check_format(o);
  if (direct::is_direct_solver(o.solver))
    return solve_direct(o, &a, nullptr, version, k, b, x, stats);
  solve_any(o, &a, nullptr, version, k, b, x, stats);
}

namespace {

void check_caller_row_ptr(const caller_csr& in) {
  try {
    check_row_ptr(in.n, in.row_ptr, in.base);  // before anything reads the entries
  } catch (const error& e) {
    throw input_error(e.status(), std::string(": ") + e.what());
  }
}

}  // namespace

void pipeline::solve_user(const solve_options& o, const caller_csr& in, std::uint64_t version,
                          int k, const double* b, double* x, solve_stats& stats) {
  const double t_call = now_seconds();
  struct call_log {  // where the whole call's time went, once it returns (CNC_LOG_INFO)
    const solve_options& o;
    const solve_stats& s;
    double t0;
    ~call_log() {
      if (s.elapsed <= 0) return;
      char line[200];
      std::snprintf(line, sizeof line,
                    "call %.3f ms: conversion %.3f, upload %.3f, solve %.3f, other %.3f (%.3f "
                    "outside the backend's stage)",
                    1e3 * (now_seconds() - t0), 1e3 * s.conversion, 1e3 * s.upload, 1e3 * s.solve,
                    1e3 * (now_seconds() - t0 - s.conversion - s.upload - s.solve),
                    1e3 * (now_seconds() - t0 - s.elapsed));
      log_to(o, CNC_LOG_INFO, line);
    }
  } logged{o, stats, t_call};
  check_format(o);
  check_caller_row_ptr(in);
  if (direct::is_direct_solver(o.solver))
    return solve_direct(o, nullptr, &in, version, k, b, x, stats);
  if (!o.keep_matrix) return solve_any(o, nullptr, &in, version, k, b, x, stats);
  caller_content now;
  now.n = in.n, now.nnz = in.row_ptr[in.n] - in.base, now.base = in.base;
  const std::size_t row_bytes = (std::size_t(in.n) + 1) * sizeof *in.row_ptr,
                    col_bytes = std::size_t(now.nnz) * sizeof *in.col,
                    val_bytes = std::size_t(now.nnz) * sizeof *in.val * (in.complex ? 2 : 1);
  bool hashed = false;  // `now` holds the arrays' fingerprints (hashing never fails the solve)
  auto hash_values = [&](int threads) {
    piece_prints v = fingerprint_pieces(in.val, val_bytes, threads);
    now.vals = v.whole, now.val_pieces = std::move(v.pieces);
  };
  auto hash = [&](int threads, bool values_only) {
    try {
      if (!values_only) {
        now.rows = fingerprint_of(in.row_ptr, row_bytes, threads);
        now.cols = fingerprint_of(in.col, col_bytes, threads);
      }
      hash_values(threads);
      hashed = true;
    } catch (...) {  // e.g. no memory for the digests: nothing is remembered
    }
  };
  const int threads = host_threads(o.threads);
  const caller_content& last = last_caller_;
  bool same = false, same_pattern = false;
  double check = 0;  // the comparison's time, counted as intake
  if (prep_.dev && last.version != 0 && prep_.key.version == last.version && last.n == now.n &&
      last.nnz == now.nnz && last.base == now.base) {
    // The device may hold these very arrays, or their pattern: compare before anything moves.
    // New values (the common change) are seen within the first pieces; then the pattern's
    // arrays are hashed in full, the values later, while the device solves.
    const double t = now_seconds();
    try {
      const bool same_values = same_pieces(in.val, val_bytes, threads, last.val_pieces);
      now.rows = fingerprint_of(in.row_ptr, row_bytes, threads);
      now.cols = fingerprint_of(in.col, col_bytes, threads);
      same_pattern = now.rows == last.rows && now.cols == last.cols;
      if (same_values) {
        now.vals = last.vals, now.val_pieces = last.val_pieces;
        hashed = true;
        same = same_pattern;
      }
    } catch (...) {  // no comparison: solved anew
      same_pattern = false;
    }
    check = now_seconds() - t;
  }
  if (same) {
    version = last.version;
    // A kept complex system prepared for another method: CG's check on the caller's arrays
    // (their numbering in its message) before CG or block CG runs on it.
    if (in.complex && needs_hermitian(o) && !prep_.hermitian) {
      complex_canonical(o, in);
      prep_.hermitian = true;
    }
    solve_any(o, nullptr, &in, version, k, b, x, stats);
  } else if (same_pattern && !in.complex) {  // (a zcsr system is not refilled: prepared anew)
    // The pattern's fingerprints are known; the values' are taken while the device solves.
    // What is remembered is forgotten first: once refilled, the kept system no longer holds
    // the last call's values, so if this solve throws or its hashing fails, no later call
    // may take it for them.
    version = last.version;
    last_caller_ = caller_content{};
    solve_any(
        o, nullptr, &in, version, k, b, x, stats,
        [&hash, threads] { hash(std::max(1, threads / 2), true); }, true);
  } else {
    // The fingerprints of new arrays are taken while the device solves, on half the cores (the
    // hash is bound by memory bandwidth, and the thread driving the device keeps a core: with
    // every core hashing, an H100 solve of 16.8 M rows took 10 % longer).
    solve_any(o, nullptr, &in, version, k, b, x, stats,
              [&hash, threads] { hash(std::max(1, threads / 2), false); });
  }
  stats.conversion += check;
  stats.elapsed += check;
  if (hashed && prep_.dev && prep_.key.version == version) {
    last_caller_ = std::move(now);
    last_caller_.version = version;
  }
}

void pipeline::solve_in_order(const solve_options& o, const csr_view* canonical,
                              const caller_csr* raw, std::uint64_t version, int k, const double* b,
                              double* x, solve_stats& stats, const std::function<void()>& alongside,
                              bool new_values, permuted_csr* pm) {
  const double t0 = now_seconds();
  struct release_at_end {  // CNC_KEEP_MATRIX off: nothing stays, whatever happens
    pipeline* p;
    bool on;
    ~release_at_end() {
      if (on) p->release_matrix();
    }
  } guard{this, !o.keep_matrix};
  const std::int32_t n = canonical ? canonical->n : pm ? pm->n : raw->rows();
  user_csr host;  // the caller's CSR made canonical on the host, when a stage needs it
  const bool made = pm && !pm->host->row_ptr.empty();  // P A Pᵀ already made on the host
  csr_view a = canonical ? *canonical : made ? csr_view(*pm->host) : csr_view{};
  bool have = canonical != nullptr || made;
  double host_conversion = 0;
  auto canonical_view = [&]() -> const csr_view& {
    if (!have) {
      if (pm) pm->order();  // the ordering, when not made yet (timed as the ordering)
      const double t = now_seconds();
      if (pm) {
        *pm->host = permute_csr(pm->source(), *pm->perm, host_threads(o.threads));
        a = *pm->host, have = true;
        pm->seconds = now_seconds() - t;
        log_to(o, CNC_LOG_INFO,
               "P A Pᵀ on the host: " + std::to_string(1e3 * (now_seconds() - t)) + " ms");
      } else {
        host = caller_canonical(*raw);
        a = host.view, have = true;
      }
      host_conversion = now_seconds() - t;
    }
    return a;
  };
  const int requested = o.backend != CNC_BACKEND_AUTO ? o.backend : backend_from_environment();
  std::vector<int> candidates;
  if (o.ssor_omega > 0 && o.backend != CNC_BACKEND_AUTO && o.backend != CNC_BACKEND_CPU)
    throw error(CNC_ERR_UNSUPPORTED,
                ": SSOR runs on the CPU backend only (its sweeps are sequential): choose "
                "CNC_BACKEND_CPU or AUTO, or CNC_PRECOND_JACOBI on a GPU");
  if (o.ssor_omega > 0) {  // AUTO in the context: the CPU, whatever CNC_BACKEND says
    if (requested != CNC_BACKEND_AUTO && requested != CNC_BACKEND_CPU)
      log_to(o, CNC_LOG_WARNING,
             "SSOR runs on the CPU backend: CNC_BACKEND ignored for this solve");
    candidates = {CNC_BACKEND_CPU};
  } else if (requested != CNC_BACKEND_AUTO) {
    candidates = {requested};
  } else if ((canonical ? canonical->nnz() : pm ? pm->nnz : raw->entries()) < auto_gpu_min_nnz)
    candidates = {CNC_BACKEND_CPU};
  else
    candidates = {CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL, CNC_BACKEND_CPU};
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const int kind = candidates[c];
    const bool last = c + 1 == candidates.size();
    const bool forced = requested != CNC_BACKEND_AUTO;
    if (!forced && !last && (auto_skip_ & (1u << (kind - CNC_BACKEND_AUTO)))) continue;
    try {
      if (!backend_for(o, kind, forced)) continue;
      // The device path needs what it checks on the device to be all there is to check: CG in
      // double (its true residual is then computed on the device too).
      // An assembled CSR (canonical, kept by the context) takes the same route: its blocks and
      // diagonal are then computed on the device too.
      // With pm and nothing made on the host yet, the caller's order: P A Pᵀ is made on the
      // device after the upload.
      const bool device_permutes = pm && !have;
      double source_time = 0;  // the caller's CSR made canonical for P A Pᵀ, when not yet
      auto intake_csr = [&]() -> caller_csr {  // made canonical only when taken in
        if (!have && !pm) return *raw;
        const double t = now_seconds();
        const csr_view from = device_permutes ? pm->source() : a;
        source_time = now_seconds() - t;
        return caller_csr{from.n, from.row_ptr.data(),
                          reinterpret_cast<const std::uint32_t*>(from.col.data()), from.val.data(),
                          0};
      };
      const int base = have || pm ? 0 : raw->base;
      bool cached = prep_.dev && prep_.key == key_for(o, version, be_.get(), k);
      if (cached && new_values) cached = refill(o, *raw, stats);  // false: nothing prepared
      // What a solver reads on the host: the CSR, for a true residual not computed on the device
      // (precisions other than double). Every method computes it on the device in double.
      const bool host_csr_read = o.prec != precision::f64;
      // ZCSR: a complex caller_csr takes complex_device_intake below; the real-equivalent is
      // never taken in by the device.
      const bool intake = !cached && base == 0 && be_->takes_device_arrays() &&
                          o.prec == precision::f64 && !host_csr_read && !native_complex(o.format);
      const csr_view none{n, {}, {}, {}};
      if (cached && !new_values)
        log_to(o, CNC_LOG_INFO,
               std::string("the ") + (be_->api_id() == CNC_BACKEND_CPU ? "backend" : "device") +
                   " already holds this matrix: nothing converted or uploaded");
      if (cached && !have && !host_csr_read) {
        if (!new_values) stats.conversion = 0, stats.upload = 0;  // the device holds this matrix
        run(o, none, k, b, x, false, stats, alongside, pm);
      } else if (intake && device_intake(o, intake_csr(), version, k, raw && o.keep_matrix, stats,
                                         device_permutes ? pm : nullptr)) {
        stats.conversion += source_time;
        run(o, none, k, b, x, false, stats, alongside, pm);
      } else if (raw && raw->complex && raw->base == 0 && be_->takes_device_arrays() &&
                 complex_device_intake(o, *raw, version, k, stats)) {
        prep_.hermitian = needs_hermitian(o);
        run(o, none, k, b, x, false, stats, alongside);
      } else if (raw && raw->complex) {
        // zcsr straight from the caller's complex CSR (viewed in place when canonical). The
        // CPU backend reads its matrix in place: it keeps a copy when the system is kept.
        const double t = now_seconds();
        user_zcsr z = complex_canonical(o, *raw);
        if (o.keep_matrix && be_->keeps_host_matrix() && !z.copied() && !raw->kept) {
          const zcsr_view v = z.view;
          memory::reserve(double(v.n + 1) * 8 + double(v.nnz()) * 20, [&] {
            return "the copy of the complex CSR the CPU backend keeps (" + std::to_string(v.nnz()) +
                   " entries of 20 bytes)";
          });
          z.owned.n = v.n;
          z.owned.row_ptr.assign(v.row_ptr.begin(), v.row_ptr.end());
          z.owned.col.resize(v.col.size());
          z.owned.val.resize(v.val.size());
          parallel_pieces(v.nnz(), std::int64_t(1) << 16, host_threads(o.threads),
                          [&](std::int64_t, std::int64_t e0, std::int64_t e1) {
                            std::copy(v.col.begin() + e0, v.col.begin() + e1,
                                      z.owned.col.begin() + e0);
                            std::copy(v.val.begin() + 2 * e0, v.val.begin() + 2 * e1,
                                      z.owned.val.begin() + 2 * e0);
                          });
          z.view = z.owned;
        }
        host_conversion = now_seconds() - t;
        log_to(o, CNC_LOG_INFO,
               std::string("complex intake: entries checked") +
                   (needs_hermitian(o) ? ", Hermitian checked" : "") +
                   (z.copied() ? ", copied (made canonical, or kept for the backend)"
                               : ", the arrays used in place") +
                   ": " + std::to_string(1e3 * host_conversion) + " ms");
        prepare(o, none, &z.view, version, k, stats);
        prep_.hermitian = needs_hermitian(o);
        if (be_->keeps_host_matrix()) prep_.zcsr = std::move(z.owned);  // buffers stay put
        stats.conversion += host_conversion;
        run(o, none, k, b, x, false, stats, alongside);
      } else {
        canonical_view();
        // A backend that reads the host CSR in place (the CPU's) must not keep pointers to
        // arrays of a cncSolveCSR call once it returns: the kept system gets its own CSR.
        const bool own = raw && !cached && o.keep_matrix && be_->keeps_host_matrix();
        if (own && !host.copied()) {
          memory::reserve(memory::csr(a.n, double(a.nnz())), [&] {
            return "the copy of the CSR the CPU backend keeps (" + std::to_string(a.n) + " rows, " +
                   std::to_string(a.nnz()) + " entries: 12 bytes an entry, 8 a row offset)";
          });
          host.owned.n = a.n;
          host.owned.row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
          host.owned.col.resize(a.col.size());
          host.owned.val.resize(a.val.size());
          parallel_pieces(
              a.nnz(), std::int64_t(1) << 16, host_threads(o.threads),
              [&](std::int64_t, std::int64_t e0, std::int64_t e1) {
                std::copy(a.col.begin() + e0, a.col.begin() + e1, host.owned.col.begin() + e0);
                std::copy(a.val.begin() + e0, a.val.begin() + e1, host.owned.val.begin() + e0);
              });
          a = host.view = host.owned;
        }
        prepare(o, a, nullptr, version, k, stats);
        if (own) prep_.csr = std::move(host.owned);  // the buffers (and `a`) stay where they are
        stats.conversion += host_conversion;
        run(o, a, k, b, x, false, stats, alongside, pm);
      }
      stats.elapsed = now_seconds() - t0;
      return;
    } catch (const input_error&) {
      throw;  // the caller's data, not the backend: no other backend would take it
    } catch (const error& e) {
      // In auto mode a failing GPU backend falls back to the next candidate, saying why.
      if (forced || last || e.status() == CNC_ERR_NOT_FINITE) throw;
      log_to(o, CNC_LOG_WARNING,
             std::string("backend ") + (be_ ? be_->name() : "?") + " failed (" + e.what() +
                 "); falling back");
      reset();
    }
  }
  throw error(CNC_ERR_BACKEND_UNAVAILABLE, ": no backend could run this solve");
}

}  // namespace cnc
