// The solve pipeline's device paths (see pipeline.hpp): the caller's host CSR checked and
// converted on the device (device_intake), a prepared system built from a device CSR, and the
// solve of arrays that already lie in CUDA device memory (cncSolveCSRDevice).
#include <cstdint>
#include <cstdio>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/registry.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "conversion/reorder_rcm.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_internal.hpp"
#include "solver/scaling.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace cnc {

using namespace pipeline_detail;

namespace {

// The caller's 0-based host CSR as upload_csr takes it (a complex one: (re, im) values).
csr_view caller_view(const caller_csr& in) {
  const std::int64_t nnz = in.row_ptr[in.n];
  return csr_view{in.n,
                  {in.row_ptr, std::size_t(in.n) + 1},
                  {reinterpret_cast<const std::int32_t*>(in.col), std::size_t(nnz)},
                  {in.val, std::size_t(nnz) * (in.complex ? 2 : 1)}};
}

// The caller's CSR uploaded as it is; nullptr (logged) when the device memory is too small:
// the host path, which needs less of it, follows.
std::unique_ptr<device_csr_copy> upload_caller(backend& be, const solve_options& o,
                                               const csr_view& raw, const char* what) {
  try {
    return be.upload_csr(raw);
  } catch (const error& e) {
    if (e.status() != CNC_ERR_OUT_OF_MEMORY) throw;
    log_to(o, CNC_LOG_INFO,
           std::string("device memory too small for the uploaded ") + what + " (" + e.what() +
               "): host path");
    return nullptr;
  }
}

}  // namespace

bool pipeline::built_from_device(const solve_options& o, const device_csr& a, format fmt,
                                 std::uint64_t version, int k, bool keep_pattern,
                                 const char* what) {
  try {
    prepare_from_device(o, a, fmt, version, k, keep_pattern);
    return true;
  } catch (const error& e) {
    if (e.status() != CNC_ERR_OUT_OF_MEMORY) throw;
    log_to(
        o, CNC_LOG_INFO,
        std::string("device memory too small for the ") + what + " (" + e.what() + "): host path");
    return false;
  }
}

void pipeline::order_on_device(const solve_options& o, permuted_csr& pm, const device_csr& a) {
  const double t = now_seconds();
  try {
    device_ordering d = be_->rcm_device(a);
    pm.order_where = "on the device " + std::to_string(1e3 * (now_seconds() - t)) + " ms";
    if (d.placed < a.n) {
      const double th = now_seconds();
      rcm_finish(pm.source(), host_threads(o.threads), d.perm, d.placed, d.cursor);
      pm.order_where += " (" + std::to_string(d.components) + " components, " +
                        std::to_string(d.placed) + " of " + std::to_string(a.n) +
                        " unknowns), the rest on the host " +
                        std::to_string(1e3 * (now_seconds() - th)) + " ms";
    }
    *pm.perm = std::move(d.perm);
  } catch (const error& e) {
    if (e.status() != CNC_ERR_OUT_OF_MEMORY && e.status() != CNC_ERR_UNSUPPORTED) throw;
    log_to(o, CNC_LOG_INFO,
           std::string("ordering not made on the device (") + e.what() + "): on the host");
  }
  pm.order_seconds += now_seconds() - t;
}

bool pipeline::device_intake(const solve_options& o, const caller_csr& in, std::uint64_t version,
                             int k, bool keep_pattern, solve_stats& stats, permuted_csr* pm) {
  const double tc = now_seconds();  // row offsets already checked (solve_user) or canonical
  const csr_view raw = caller_view(in);
  const double tu = now_seconds();
  std::unique_ptr<device_csr_copy> up = upload_caller(*be_, o, raw, "CSR");
  if (!up) return false;
  const double tp = now_seconds();
  // Reordered: the ordering (when not made yet) and P A Pᵀ made here from the upload (the
  // caller's numbering, canonical on the host already), checked and converted as the caller's
  // own would be.
  const bool permuted = pm != nullptr;
  double tq = tp;  // after the ordering, before P A Pᵀ
  // b and x are renumbered with the solve (run), on the device.
  if (permuted) {
    if (pm->perm->empty()) order_on_device(o, *pm, up->view);
    pm->order();  // on the host, when the device did not make it
    tq = now_seconds();
    try {
      // The upload, in the caller's numbering, is read no more: freed before the build.
      up = be_->permute_device_csr(up->view, *pm->perm);
    } catch (const error& e) {
      if (e.status() != CNC_ERR_OUT_OF_MEMORY && e.status() != CNC_ERR_UNSUPPORTED) throw;
      log_to(o, CNC_LOG_INFO,
             std::string("P A Pᵀ not made on the device (") + e.what() + "): host path");
      return false;
    }
  }
  const device_csr& view = up->view;
  const double ts = now_seconds();
  if (permuted) pm->seconds = ts - tq;
  const device_csr_scan scan = be_->scan_device_csr(view);
  if (!scan.canonical) {
    log_to(o, CNC_LOG_INFO, "CSR is not canonical (sorted, no duplicates, valid): host path");
    return false;
  }
  // Checked: the host may now read the entries (the sampled block screen; not for P A Pᵀ, which
  // only the device holds); exact counts come from the device.
  const double tf = now_seconds();
  double exact = 0;  // of the format choice, the device's exact block counts
  const format fmt = o.format == CNC_FORMAT_AUTO
                         ? choose_format(
                               raw, 8, be_->prefers_sliced(), scan.sell_entries,
                               [&](int b) {
                                 const double t = now_seconds();
                                 const std::int64_t c = be_->device_block_count(view, b);
                                 exact += now_seconds() - t;
                                 return c;
                               },
                               !permuted)
                         : from_api_format(o.format);
  const double tb = now_seconds();
  if (!built_from_device(o, view, fmt, version, k, keep_pattern, "CSR and its conversion"))
    return false;
  const double te = now_seconds();
  // host checks, P A Pᵀ, device check, build (an ordering made here: the pipeline counts it)
  stats.conversion = (tu - tc) + (ts - tq) + (tb - ts) + (te - tb);
  char line[240];
  std::snprintf(line, sizeof line,
                "device intake: row offsets %.3f ms, upload %.3f ms, %s%.3f ms, check %.3f ms, "
                "format choice %.3f ms (exact block counts %.3f ms), %s build %.3f ms",
                1e3 * (tu - tc), 1e3 * (tp - tu), permuted ? "P A Pᵀ " : "no permutation ",
                1e3 * (ts - tq), 1e3 * (tf - ts), 1e3 * (tb - tf), 1e3 * exact, format_name(fmt),
                1e3 * (te - tb));
  stats.upload = tp - tu;
  log_to(o, CNC_LOG_INFO,
         permuted ? "ordering " + (pm->order_where.empty() ? "kept" : pm->order_where) + " (" +
                        std::to_string(1e3 * (tq - tp)) + " ms); " + line
                  : std::string(line));
  return true;
}

void pipeline::prepare_from_device(const solve_options& o, const device_csr& a, format fmt,
                                   std::uint64_t version, int k, bool keep_pattern) {
  prep_ = prepared_system{};
  device_build info;
  prep_.dev = be_->create_system_from_device(a, fmt, o.jacobi, k, keep_pattern, info);
  prep_.key = key_for(o, version, be_.get(), k);
  prep_.fmt = fmt;
  // zcsr: complex entries stored (zsell: with its padding); the real-equivalent's entries and
  // rows, as build_system counts.
  const bool z = is_complex(fmt);
  prep_.stored = fmt == format::zcsr ? a.nnz : info.stored;
  prep_.nnz = z ? 4 * a.nnz : a.nnz;
  prep_.zero_diagonals = info.zero_diagonals;
  prep_.n_padded = padded_rows(z ? 2 * a.n : a.n, fmt);
}

bool pipeline::complex_device_intake(const solve_options& o, const caller_csr& in,
                                     std::uint64_t version, int k, solve_stats& stats) {
  const double tu = now_seconds();  // 0-based, row offsets checked (solve_user)
  const std::unique_ptr<device_csr_copy> up =
      upload_caller(*be_, o, caller_view(in), "complex CSR");  // (re, im) pairs as they are
  if (!up) return false;
  const double ts = now_seconds();
  const bool hermitian = needs_hermitian(o) && !in.kept;  // (the pipeline's own: checked)
  const device_zcsr_scan scan = be_->scan_device_zcsr(up->view, hermitian);
  if (!scan.canonical || (hermitian && !scan.hermitian)) {
    // The host path makes it canonical, or decides and names what is wrong.
    log_to(o, CNC_LOG_INFO,
           scan.canonical
               ? "complex CSR: the Hermitian check left to the host: host path"
               : "complex CSR is not canonical (sorted, no duplicates, valid): host path");
    return false;
  }
  const double tb = now_seconds();
  const format fmt = complex_format(o, *be_, in.n, up->view.nnz, [&] { return scan.sell_entries; });
  if (!built_from_device(o, up->view, fmt, version, k, false, "complex CSR and its copy"))
    return false;
  const double te = now_seconds();
  stats.upload = ts - tu;
  stats.conversion = te - ts;
  char line[200];
  std::snprintf(line, sizeof line,
                "complex device intake: upload %.3f ms, check%s %.3f ms, %s and diagonal %.3f ms",
                1e3 * (ts - tu), hermitian ? " (Hermitian too)" : "", 1e3 * (tb - ts),
                format_name(fmt), 1e3 * (te - tb));
  log_to(o, CNC_LOG_INFO, line);
  return true;
}

bool pipeline::refill(const solve_options& o, const caller_csr& in, solve_stats& stats) {
  if (!be_->takes_device_arrays()) {
    log_to(o, CNC_LOG_INFO,
           std::string("same pattern, new values: the ") + be_->name() +
               " backend prepares the matrix anew (values are refilled in place on CUDA)");
    release_matrix();
    return false;
  }
  try {
    const double tu = now_seconds();
    const std::int64_t nnz = in.row_ptr[in.n];
    const csr_view values{in.n, {}, {}, {in.val, std::size_t(nnz)}};
    std::unique_ptr<device_csr_copy> up;
    try {
      up = be_->upload_csr(values, true);
    } catch (const error& e) {
      if (e.status() != CNC_ERR_OUT_OF_MEMORY) throw;
      up.reset();
    }
    const double tc = now_seconds();
    std::int64_t zeros = 0;
    // A value that is not finite: the full path names it.
    const char* why = !up                                             ? "no device memory"
                      : be_->first_not_finite(up->view.val, nnz) >= 0 ? "a value is not finite"
                      : !prep_.dev->refill_values(up->view.val, o.jacobi, &zeros)
                          ? "the kept system cannot be refilled"
                          : nullptr;
    if (why) {
      log_to(o, CNC_LOG_INFO,
             std::string("same pattern, new values, but ") + why + ": prepared anew");
      release_matrix();
      return false;
    }
    prep_.zero_diagonals = zeros;
    const double te = now_seconds();
    stats.upload = tc - tu;
    stats.conversion = te - tc;
    char line[128];
    std::snprintf(line, sizeof line,
                  "same pattern, new values: values up %.3f ms, refilled in place %.3f ms",
                  1e3 * (tc - tu), 1e3 * (te - tc));
    log_to(o, CNC_LOG_INFO, line);
    return true;
  } catch (...) {
    release_matrix();  // the system may hold part of the new values
    throw;
  }
}

void pipeline::solve_device(const solve_options& o, const caller_csr& in, int k, const double* b,
                            double* x, solve_stats& stats) {
  const double t0 = now_seconds();
  check_format(o);
  const int requested = o.backend != CNC_BACKEND_AUTO ? o.backend : backend_from_environment();
  if (requested != CNC_BACKEND_AUTO && requested != CNC_BACKEND_CUDA)
    throw error(CNC_ERR_INVALID_VALUE, ": arrays in device memory need the CUDA backend");
  if (o.prec != precision::f64)
    throw error(CNC_ERR_INVALID_VALUE, ": arrays in device memory are solved in CNC_DOUBLE only");
  if (o.solver == CNC_BLOCK_CG)
    throw error(CNC_ERR_UNSUPPORTED,
                ": arrays in device memory are solved with CG only (CNC_BLOCK_CG takes host "
                "arrays: cncSolve or cncSolveCSR)");
  if (o.solver == CNC_BICGSTAB || o.solver == CNC_GMRES)
    throw error(CNC_ERR_INVALID_VALUE,
                ": arrays in device memory are solved with CG only (BiCGSTAB and GMRES take ||b|| "
                "from b on the host; CNC_SOLVER_DEFAULT means BiCGSTAB when CNC_SYMMETRIC is 0)");
  if (o.ssor_omega > 0)
    throw error(CNC_ERR_UNSUPPORTED,
                ": arrays in device memory cannot use SSOR (it runs on the CPU backend only)");
  backend& be = *backend_for(o, CNC_BACKEND_CUDA, true);
  if (!be.takes_device_arrays())
    throw error(CNC_ERR_BACKEND_UNAVAILABLE, ": this backend does not take device arrays");
  const std::pair<const char*, const void*> arrays[] = {
      {"row_ptr", in.row_ptr}, {"col_idx", in.col}, {"values", in.val}, {"b", b}, {"x", x}};
  for (const auto& [name, p] : arrays) {
    const std::string why = be.device_memory_problem(p);
    if (!why.empty()) throw error(CNC_ERR_INVALID_VALUE, std::string(": ") + name + ": " + why);
  }
  be.synchronize_device();
  const std::int64_t len = std::int64_t(in.n) * k;
  std::vector<double> b_max(static_cast<std::size_t>(k), 0.0);  // max |b_j|, for the scaling
  for (int j = 0; j <= k; ++j) {  // the k systems of b, then the whole of x
    const char* name = j < k ? "b" : "x";
    const double* p = j < k ? b + std::int64_t(j) * in.n : x;
    const std::int64_t bad =
        be.first_not_finite(p, j < k ? in.n : len, j < k ? &b_max[std::size_t(j)] : nullptr);
    if (bad >= 0) {
      double v = 0;
      be.copy_to_host(&v, p + bad, sizeof v);
      const long long at = bad + (j < k ? std::int64_t(j) * in.n : 0);
      char m[128];
      std::snprintf(m, sizeof m, ": %s[%lld]=%g is not finite", name, at, v);
      throw error(CNC_ERR_NOT_FINITE, m);
    }
  }
  const double tc = now_seconds();
  // The matrix: scanned where it lies; a canonical 0-based CSR is converted on the device.
  std::int64_t ends[2] = {0, 0};
  be.copy_to_host(&ends[0], in.row_ptr, sizeof(std::int64_t));
  be.copy_to_host(&ends[1], in.row_ptr + in.n, sizeof(std::int64_t));
  const std::int64_t nnz = ends[1] - ends[0];
  device_csr dc{in.n, nnz, in.row_ptr, reinterpret_cast<const std::int32_t*>(in.col), in.val};
  device_csr_scan scan;
  if (in.base == 0 && ends[0] == 0 && nnz >= 0 && nnz < (std::int64_t(1) << 40))
    scan = be.scan_device_csr(dc);
  // The fallback's arrays, brought to the host, and their canonical form (which may view them).
  std::vector<std::int64_t> rp;
  std::vector<std::uint32_t> col;
  std::vector<double> val;
  user_csr host;
  csr_view a{in.n, {}, {}, {}};
  if (!scan.canonical) {
    // Anything else (1-based, unsorted rows, duplicates, or an error to report exactly) takes
    // the host path: the arrays come down once and csr_from_user handles them.
    log_to(o, CNC_LOG_INFO,
           "device CSR is not canonical (0-based, sorted, no duplicates): converted on the host");
    rp.resize(std::size_t(in.n) + 1);
    be.copy_to_host(rp.data(), in.row_ptr, rp.size() * sizeof(std::int64_t));
    try {  // the host path's checks and messages
      check_row_ptr(in.n, rp.data(), in.base);
      const std::size_t m = std::size_t(rp.back() - rp.front());
      col.resize(m), val.resize(m);
      be.copy_to_host(col.data(), in.col, m * sizeof(std::uint32_t));
      be.copy_to_host(val.data(), in.val, m * sizeof(double));
      host = csr_from_user(in.n, rp.data(), col.data(), val.data(), in.base);
    } catch (const error& e) {
      throw error(e.status(), std::string(": ") + e.what());
    }
    a = host.view;
  }
  // Every device solve prepares anew: the caller's arrays may change between calls.
  release_matrix();
  if (!scan.canonical) {
    prepare(o, a, nullptr, 0, k, stats);
    stats.conversion = now_seconds() - tc - stats.upload;  // scan, copy down, host conversion
  } else {
    // The host cannot read these arrays for the sampled block screen: CSR or SELL unless forced.
    const format fmt =
        o.format == CNC_FORMAT_AUTO
            ? choose_scalar_format(in.n, nnz, scan.sell_entries, 8, be.prefers_sliced())
            : from_api_format(o.format);
    const double tu = now_seconds();
    stats.conversion = tu - tc;  // the scan
    prepare_from_device(o, dc, fmt, 0, k, false);
    stats.upload = now_seconds() - tu;  // device-side conversion and copies
  }
  if (rhs_exponents(b_max).empty()) {
    run(o, a, k, b, x, true, stats);
  } else {
    // b of extreme magnitude: solved from host copies, which run() scales (solver/scaling.hpp).
    const std::size_t bytes = std::size_t(len) * sizeof(double);
    std::vector<double> hb(std::size_t(len), 0.0), hx(std::size_t(len), 0.0);
    be.copy_to_host(hb.data(), b, bytes);
    be.copy_to_host(hx.data(), x, bytes);
    run(o, a, k, hb.data(), hx.data(), false, stats);
    be.copy_to_device(x, hx.data(), bytes);
  }
  release_matrix();  // the next solve must not take this matrix for the caller's
  stats.elapsed = now_seconds() - t0;
}

}  // namespace cnc
