#include "conversion/reorder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "cnc.h"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"

namespace cnc {
namespace {

// 1024 slices of 32 rows (about 3 % spread on the measure) cost about 1 ms on one core; 4096
// cost 18-21 ms on every call, whatever the size (n below 131 072 rows was measured in full).
constexpr std::int64_t max_sampled_slices = 1024;
constexpr std::int64_t row_grain = 2048;
// Rows longer than this are left out of the locality sample: the backends cut them into pieces
// of consecutive entries whatever the numbering, and one hub row of 10^5 entries would cost a
// sort of its own (that was most of the measure's time on power-law graphs).
constexpr std::int64_t max_sampled_row = 1024;

// The cost model, measured on the H100 machine (BENCHMARKS.md, "Reordering"): computing and
// applying the ordering costs about ordering_ns_per_entry ns per entry on its host (16 cores);
// each iteration then saves about the scattered lines' extra sectors: (lines per entry - 0.25)
// x 32 bytes per entry, at the device's bandwidth (GPU) or the host's (CPU).
constexpr double ordering_ns_per_entry = 19.0;
constexpr double gpu_bytes_per_second = 2.5e12, cpu_bytes_per_second = 1.0e11;

}  // namespace

double gather_lines_per_entry(std::int32_t n, const std::int64_t* row_ptr, const std::uint32_t* col,
                              int base, int threads) {
  const std::int64_t slices = (std::int64_t(n) + 31) / 32;
  if (slices == 0) return 0;
  const std::int64_t step = std::max<std::int64_t>(1, slices / max_sampled_slices);
  const std::int64_t samples = (slices + step - 1) / step;
  constexpr std::int64_t grain = 64;  // samples a piece: fixed, so the sums are too
  std::vector<std::int64_t> lines(std::size_t(piece_count(samples, grain)), 0);
  std::vector<std::int64_t> entries(lines.size(), 0);
  parallel_pieces(samples, grain, threads, [&](std::int64_t p, std::int64_t s0, std::int64_t s1) {
    std::vector<std::uint32_t> seen;
    for (std::int64_t s = s0 * step; s < s1 * step; s += step) {
      seen.clear();
      const std::int64_t r0 = s * 32, r1 = std::min<std::int64_t>(n, r0 + 32);
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t e0 = row_ptr[r] - base, e1 = row_ptr[r + 1] - base;
        if (e1 - e0 > max_sampled_row) continue;
        for (std::int64_t e = e0; e < e1; ++e) seen.push_back((col[e] - std::uint32_t(base)) >> 4);
      }
      entries[std::size_t(p)] += std::int64_t(seen.size());
      std::sort(seen.begin(), seen.end());
      lines[std::size_t(p)] += std::unique(seen.begin(), seen.end()) - seen.begin();
    }
  });
  const std::int64_t all_lines = exclusive_scan(lines), all_entries = exclusive_scan(entries);
  return all_entries ? double(all_lines) / double(all_entries) : 0;
}

ordering_decision decide_ordering(int requested, std::int32_t n, std::int64_t nnz,
                                  const std::function<double()>& measure,
                                  std::int64_t max_iterations, bool gpu) {
  ordering_decision d;
  char why[256];
  if (requested == CNC_REORDER_NONE) {
    d.why = "natural order (CNC_REORDER_NONE)";
    return d;
  }
  if (requested == CNC_REORDER_AUTO && n < min_rows) {
    std::snprintf(why, sizeof why, "natural order: n = %d < %d, x stays in cache", n, min_rows);
    d.why = why;
    return d;
  }
  const double lines_per_entry = measure();
  d.lines_per_entry = lines_per_entry;
  if (requested == CNC_REORDER_RCM) {
    std::snprintf(why, sizeof why, "rcm (CNC_REORDER_RCM; %.2f lines of x per entry before)",
                  lines_per_entry);
    d.reorder = true, d.why = why;
    return d;
  }
  if (lines_per_entry <= poor_locality) {
    std::snprintf(why, sizeof why,
                  "natural order: locality good (%.2f lines of x per entry, reordering from %.2f)",
                  lines_per_entry, poor_locality);
  } else {
    // Iterations a Jacobi-CG is expected to run on a 3-D problem of n unknowns (~2 n^(1/3)),
    // within the limit.
    const double iterations =
        std::min(double(max_iterations), 2.0 * std::cbrt(double(std::max(n, 1))));
    const double saved = iterations * double(nnz) * (lines_per_entry - 0.25) * 32.0 /
                         (gpu ? gpu_bytes_per_second : cpu_bytes_per_second);
    const double cost = double(nnz) * ordering_ns_per_entry * 1e-9;
    d.reorder = saved > cost;
    std::snprintf(why, sizeof why,
                  "%s: %.2f lines of x per entry; ordering ~%.3f s vs ~%.3f s saved over ~%.0f "
                  "iterations",
                  d.reorder ? "rcm" : "natural order", lines_per_entry, cost, saved, iterations);
  }
  d.why = why;
  return d;
}

namespace {

// P A Pᵀ of a canonical CSR with W values an entry (CSR: 1, complex CSR: 2), rows sorted.
template <int W, class Matrix, class View>
Matrix permute_rows(const View& a, std::span<const std::int32_t> perm, int threads) {
  const std::int32_t n = a.n;
  memory::reserve(memory::csr(n, double(a.nnz()), 8 * W) + double(n) * memory::index_bytes, [&] {
    return "the reordered matrix (" + std::to_string(n) + " rows, " + std::to_string(a.nnz()) +
           " entries of " + std::to_string(4 + 8 * W) + " bytes, 12 bytes a row)";
  });
  std::vector<std::int32_t> inv(static_cast<std::size_t>(n));
  parallel_pieces(n, row_grain, threads, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) inv[perm[r]] = std::int32_t(r);
  });
  Matrix m;
  m.n = n;
  m.row_ptr.resize(std::size_t(n) + 1);
  m.row_ptr[0] = 0;
  for (std::int32_t r = 0; r < n; ++r)
    m.row_ptr[r + 1] = m.row_ptr[r] + (a.row_ptr[perm[r] + 1] - a.row_ptr[perm[r]]);
  m.col.resize(std::size_t(a.nnz()));
  m.val.resize(W * std::size_t(a.nnz()));
  parallel_pieces(n, row_grain, threads, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
    std::vector<std::pair<std::int32_t, std::int64_t>> row;  // new column, old entry
    for (std::int64_t r = r0; r < r1; ++r) {
      row.clear();
      for (std::int64_t t = a.row_ptr[perm[r]]; t < a.row_ptr[perm[r] + 1]; ++t)
        row.emplace_back(inv[a.col[t]], t);
      std::sort(row.begin(), row.end());
      std::size_t o = std::size_t(m.row_ptr[r]);
      for (const auto& [c, t] : row) {
        m.col[o] = c;
        for (int w = 0; w < W; ++w) m.val[W * o + w] = a.val[W * std::size_t(t) + w];
        ++o;
      }
    }
  });
  return m;
}

}  // namespace

csr_matrix permute_csr(const csr_view& a, std::span<const std::int32_t> perm, int threads) {
  return permute_rows<1, csr_matrix>(a, perm, threads);
}

zcsr_matrix permute_zcsr(const zcsr_view& a, std::span<const std::int32_t> perm, int threads) {
  return permute_rows<2, zcsr_matrix>(a, perm, threads);
}

void permute_vectors(std::span<const std::int32_t> perm, int k, const double* in, double* out,
                     bool back, int threads) {
  const std::int64_t n = std::int64_t(perm.size());
  parallel_pieces(n, row_grain * 8, threads, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
    for (int j = 0; j < k; ++j) {
      const double* src = in + j * n;
      double* dst = out + j * n;
      if (back)
        for (std::int64_t r = r0; r < r1; ++r) dst[perm[r]] = src[r];
      else
        for (std::int64_t r = r0; r < r1; ++r) dst[r] = src[perm[r]];
    }
  });
}

}  // namespace cnc
