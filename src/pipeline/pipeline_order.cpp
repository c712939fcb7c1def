// The ordering stage of the solve pipeline (pipeline.hpp, solve_any): whether the unknowns are
// renumbered for locality before the matrix goes to the backend (conversion/reorder.hpp), kept
// per matrix version with the prepared system. The caller's b, x and results stay in the
// caller's numbering: b and x are permuted on the way in, x back on the way out.
#include <utility>
#include <vector>

#include "backends/registry.hpp"
#include "cnc.h"
#include "conversion/complex.hpp"
#include "conversion/convert.hpp"
#include "conversion/reorder.hpp"
#include "conversion/reorder_rcm.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_internal.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

namespace cnc {

using namespace pipeline_detail;

void pipeline::solve_any(const solve_options& o, const csr_view* canonical, const caller_csr* raw,
                         std::uint64_t version, int k, const double* b, double* x,
                         solve_stats& stats, const std::function<void()>& alongside,
                         bool new_values) {
  const std::int32_t n = canonical ? canonical->n : raw->rows();
  const std::int64_t nnz = canonical ? canonical->nnz() : raw->entries();
  const int threads = host_threads(o.threads);
  const double t0 = now_seconds();
  kept_order ord;
  bool decided_now = false;
  // A complex system's unknowns move as (re, im) pairs in every format: the zcsr kernels and
  // the complex Krylov methods read them so.
  const bool pairs = o.complex_system;
  if (order_.version == version && version != 0 && order_.requested == o.reorder &&
      order_.pairs == pairs) {
    // The same matrix, or its pattern with new values. Taken out: a solve that does not complete
    // keeps no ordering (and so no system made in it, below).
    ord = std::exchange(order_, kept_order{});
  } else {
    // A kept system of this version was made in another ordering, or by a solve whose ordering
    // was not kept (it threw): never taken with this ordering's b and x.
    if (version != 0 && prep_.key.version == version) prep_ = prepared_system{};
    order_ = kept_order{};
    ord.version = version;
    ord.requested = o.reorder;
    ord.pairs = pairs;
    decided_now = true;
    auto lines = [&] {  // measured only when the decision needs it
      return canonical
                 ? gather_lines_per_entry(
                       n, canonical->row_ptr.data(),
                       reinterpret_cast<const std::uint32_t*>(canonical->col.data()), 0, threads)
                 // A complex CSR's over its complex rows, per entry of the real-equivalent (4 a
                 // complex entry): the unit of decide_ordering's model, about what the measure
                 // of the real-equivalent itself gives.
                 : gather_lines_per_entry(raw->n, raw->row_ptr, raw->col, raw->base, threads) /
                       (raw->complex ? 4 : 1);
    };
    const bool gpu =
        o.backend == CNC_BACKEND_AUTO ? nnz >= auto_gpu_min_nnz : o.backend != CNC_BACKEND_CPU;
    const std::int64_t max_it = max_iterations(o, n);
    const ordering_decision d = decide_ordering(o.reorder, n, nnz, lines, max_it, gpu);
    ord.why = d.why;
    if (d.reorder && o.ssor_omega > 0) ord.why += " (SSOR: order kept, its sweeps depend on it)";
    if (d.reorder && o.ssor_omega == 0) ord.perm.resize(1);  // marked: computed below
  }
  if (ord.perm.empty()) {  // the caller's order
    solve_in_order(o, canonical, raw, version, k, b, x, stats, alongside, new_values);
    stats.reorder_used = CNC_REORDER_NONE;
    stats.choice_reason += "; ordering " + ord.why;
    if (o.keep_matrix) order_ = std::move(ord);
    return;
  }
  // Reordered. The caller's CSR made canonical on the host (in place when it is), when the
  // ordering or P A Pᵀ needs it.
  const bool complex = raw && raw->complex;
  user_csr host;
  csr_view source;
  bool have_source = false;
  auto source_view = [&]() -> const csr_view& {
    if (!have_source) {
      if (canonical) {
        source = *canonical;
      } else {
        host = caller_canonical(*raw);
        source = host.view;
      }
      have_source = true;
    }
    return source;
  };
  double t_rcm = t0;  // when the ordering was known: before it, intake and RCM; after, P A Pᵀ
  // A real matrix's ordering is made with its intake (solve_in_order): on the device where the
  // backend takes the caller's CSR in (from its upload), on the host otherwise.
  bool deferred = false;
  if (complex && decided_now) {
    // The complex CSR itself renumbered (RCM of its pattern); b and x move by (re, im) pairs.
    const user_zcsr z = complex_canonical(o, *raw);
    const std::vector<std::int32_t> perm = rcm_order(pattern_of(z.view), threads);
    t_rcm = now_seconds();
    ord.zcsr = permute_zcsr(z.view, perm, threads);
    ord.perm = pair_permutation(perm);
  } else if (!complex && (decided_now || new_values)) {
    // ZCSR reads the unknowns as (re, im) pairs: the complex unknowns are renumbered (RCM of
    // the complex pattern), each pair moving as one, so P A Pᵀ keeps the real-equivalent shape.
    if (decided_now && pairs)
      ord.perm = pair_permutation(rcm_order(complex_pattern(source_view()), threads));
    deferred = decided_now && !pairs;
    if (deferred) ord.perm.clear();  // (the mark "computed below")
    t_rcm = now_seconds();
    // P A Pᵀ is made with the matrix's intake (solve_in_order): on the device where the backend
    // takes the caller's CSR in, on the host (kept here) where a path needs it.
    ord.csr = csr_matrix{};
    if (new_values) {
      log_to(o, CNC_LOG_INFO,
             "same pattern, new values, but the matrix is reordered: values permuted with the "
             "kept ordering and prepared anew");
      prep_ = prepared_system{};  // the kept system holds the old values
    }
  }
  const double t_permuted = now_seconds();
  stats.reorder_time = decided_now || new_values ? t_permuted - t0 : 0;
  const std::size_t len = std::size_t(n) * std::size_t(k);
  memory::reserve(2.0 * double(len) * memory::variable_bytes, [&] {
    return "the reordered b and x (" + std::to_string(n) + " rows, " + std::to_string(k) +
           " system(s), 16 bytes a row and system)";
  });
  // Not zeroed first: written by the permutes, in parallel (zeroing 16 bytes a row on one
  // thread first cost more than the permutes).
  host_vector<double> bp(len), xp(len);
  host_vector<double> dp(o.complex_dinv ? std::size_t(n) : 0);  // the complex diagonal too
  double vectors_time = 0;
  permuted_csr pm;
  pm.n = n;
  pm.nnz = nnz;
  pm.source = source_view;
  pm.perm = &ord.perm;
  pm.host = &ord.csr;
  pm.b = b;
  pm.x = x;
  bool renumbered = false;
  pm.order = [&] {
    if (!ord.perm.empty()) return;  // kept, or made on the device
    const double t = now_seconds();
    ord.perm = rcm_order(source_view(), threads);
    const double took = now_seconds() - t;
    pm.order_seconds += took;
    pm.order_where = "on the host " + std::to_string(1e3 * took) + " ms";
  };
  pm.ready = [&] {
    if (renumbered) return;
    pm.order();
    const double t = now_seconds();
    permute_vectors(ord.perm, k, b, bp.data(), false, threads);
    permute_vectors(ord.perm, k, x, xp.data(), false, threads);
    if (o.complex_dinv) permute_vectors(ord.perm, 1, o.complex_dinv, dp.data(), false, threads);
    vectors_time += now_seconds() - t;
    renumbered = true;
  };
  // A complex caller's CSR is solved without pm (its P A Pᵀ made above): b and x renumbered
  // here. Otherwise the solve renumbers them (run), on the device where it can.
  if (complex) pm.ready();
  const caller_csr praw{ord.zcsr.n,
                        ord.zcsr.row_ptr.data(),
                        reinterpret_cast<const std::uint32_t*>(ord.zcsr.col.data()),
                        ord.zcsr.val.data(),
                        0,
                        true,
                        true};
  const double reorder_time = stats.reorder_time;
  solve_options po = o;
  if (o.complex_dinv) po.complex_dinv = dp.data();
  if (o.progress)  // the callback sees x in the caller's numbering
    po.progress = [&](std::int64_t it, double res, const iterate_reader* rd) {
      if (!rd || pm.device_numbering) return o.progress(it, res, rd);
      const iterate_reader unpermuted = [&](double* out) {
        host_vector<double> t(len);  // written by the reader
        (*rd)(t.data());
        permute_vectors(ord.perm, k, t.data(), out, true, threads);
      };
      return o.progress(it, res, &unpermuted);
    };
  solve_in_order(po, nullptr, complex ? &praw : nullptr, version, k, bp.data(), xp.data(), stats,
                 alongside, false, complex ? nullptr : &pm);
  // Every path that solved renumbered b and x first (here, or on the device, which wrote x
  // itself); one that did not solved unset vectors.
  if (!renumbered && !pm.device_numbering)
    throw error(CNC_ERR_INTERNAL, ": a reordered solve ran without renumbering b and x");
  if (!pm.device_numbering) {
    const double t_back = now_seconds();
    permute_vectors(ord.perm, k, xp.data(), x, true, threads);
    vectors_time += now_seconds() - t_back;
  }
  // Applying the ordering includes P A Pᵀ, made (and counted in the conversion) with the intake,
  // and an ordering deferred to it.
  stats.reorder_time = reorder_time + pm.order_seconds + pm.seconds;
  stats.conversion += reorder_time + pm.order_seconds;
  stats.elapsed = now_seconds() - t0;
  stats.reorder_used = CNC_REORDER_RCM;
  stats.choice_reason += "; ordering " + ord.why;
  // The split only when the stage ran (a kept ordering and matrix cost nothing here). P A Pᵀ of
  // a real matrix is made with its intake (on the device, or on the host).
  const double papt = complex ? t_permuted - t_rcm : pm.seconds;
  const std::string where = pm.order_where.empty() ? "" : " (ordering " + pm.order_where + ")";
  const std::string split = stats.reorder_time > 0
                                ? " (intake and ordering " +
                                      std::to_string(1e3 * (t_rcm - t0 + pm.order_seconds)) +
                                      where + ", P A Pᵀ " + std::to_string(1e3 * papt) + ")"
                                : " (kept)";
  log_to(o, CNC_LOG_INFO,
         "ordering " + ord.why + ", " + std::to_string(1e3 * stats.reorder_time) + " ms" + split +
             (pm.device_numbering ? std::string("; b and x renumbered on the device")
                                  : "; b and x renumbered in and x out " +
                                        std::to_string(1e3 * vectors_time) + " ms"));
  if (o.keep_matrix && prep_.dev && prep_.key.version == version) order_ = std::move(ord);
}

}  // namespace cnc
