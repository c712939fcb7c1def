#include "conversion/reorder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "cnc.h"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"
#include "util/prefetch.hpp"

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

// The cost model, measured on the GPU machine (BENCHMARKS.md, "Reordering"; runs 92-93): computing
// and applying the ordering costs about ordering_ns_per_entry ns per entry on its host (16 cores:
// 7.5-8.3 on the randomly numbered mesh 128^3 and 7-point 192^3; not scaled by the thread count:
// on 2 threads it is ~5x, but so is the CPU backend's time per iteration it is weighed against);
// each iteration then saves about the scattered lines' extra sectors: (lines per entry - 0.25)
// x 32 bytes per entry, at the device's bandwidth (GPU) or the host's (CPU).
constexpr double ordering_ns_per_entry = 8.0;
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
// The new rows read old rows in the ordering's sequence, which for a poorly numbered matrix is
// random: each row's offsets, entries and the new numbers of its columns are fetched rows ahead.
template <int W, class Matrix, class View>
Matrix permute_rows(const View& a, std::span<const std::int32_t> perm, int threads) {
  const std::int32_t n = a.n;
  memory::reserve(memory::csr(n, double(a.nnz()), 8 * W) + double(n) * memory::index_bytes, [&] {
    return "the reordered matrix (" + std::to_string(n) + " rows, " + std::to_string(a.nnz()) +
           " entries of " + std::to_string(4 + 8 * W) + " bytes, 12 bytes a row)";
  });
  host_vector<std::int32_t> inv(static_cast<std::size_t>(n));  // written below, in parallel
  parallel_pieces(n, row_grain, threads, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) inv[perm[r]] = std::int32_t(r);
  });
  constexpr std::int64_t ahead_offsets = 16, ahead_row = 8, ahead_columns = 4;
  constexpr std::int64_t short_row = 32;  // sorted by ranks; longer rows by std::sort
  const std::int64_t* ptr = a.row_ptr.data();
  const std::int32_t* col = a.col.data();
  const double* val = a.val.data();
  const std::int32_t* new_of = inv.data();
  Matrix m;
  m.n = n;
  m.row_ptr.resize(std::size_t(n) + 1);
  m.row_ptr[0] = 0;
  std::int64_t* out_ptr = m.row_ptr.data();
  // Row lengths, then offsets: per piece, so the pieces' sums are scanned once in order.
  std::vector<std::int64_t> before(std::size_t(piece_count(n, row_grain)), 0);
  parallel_pieces(n, row_grain, threads, [&](std::int64_t q, std::int64_t r0, std::int64_t r1) {
    std::int64_t s = 0;
    for (std::int64_t r = r0; r < r1; ++r) {
      if (r + ahead_offsets < r1) prefetch(ptr + perm[r + ahead_offsets]);
      s += out_ptr[r + 1] = ptr[perm[r] + 1] - ptr[perm[r]];
    }
    before[std::size_t(q)] = s;
  });
  exclusive_scan(before);
  parallel_pieces(n, row_grain, threads, [&](std::int64_t q, std::int64_t r0, std::int64_t r1) {
    std::int64_t s = before[std::size_t(q)];
    for (std::int64_t r = r0; r < r1; ++r) out_ptr[r + 1] = s += out_ptr[r + 1];
  });
  m.col.resize(std::size_t(a.nnz()));
  m.val.resize(W * std::size_t(a.nnz()));
  parallel_pieces(n, row_grain, threads, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
    std::vector<std::uint64_t> row;  // a long row: new column << 32 | place in the old row
    for (std::int64_t r = r0; r < r1; ++r) {
      if (r + ahead_offsets < r1) prefetch(ptr + perm[r + ahead_offsets]);
      if (r + ahead_row < r1) {
        const std::int64_t e = ptr[perm[r + ahead_row]];
        if (e < a.nnz()) {
          prefetch(col + e);
          prefetch(val + W * e);
        }
      }
      if (r + ahead_columns < r1) {  // a hub row's columns are not fetched twice over
        const std::int32_t o = perm[r + ahead_columns];
        const std::int64_t end = std::min(ptr[o + 1], ptr[o] + short_row);
        for (std::int64_t t = ptr[o]; t < end; ++t) prefetch(new_of + col[t]);
      }
      const std::int64_t e0 = ptr[perm[r]], len = ptr[perm[r] + 1] - e0;
      const std::size_t o = std::size_t(out_ptr[r]);
      if (len <= short_row) {
        // Each entry's place is the count of smaller columns (distinct in a canonical row): no
        // branches to mispredict (an insertion sort of these rows took half the time).
        std::int32_t c[short_row];
        for (std::int64_t t = 0; t < len; ++t) c[t] = new_of[col[e0 + t]];
        for (std::int64_t t = 0; t < len; ++t) {
          std::int32_t rank = 0;
          for (std::int64_t u = 0; u < len; ++u) rank += c[u] < c[t] ? 1 : 0;
          m.col[o + std::size_t(rank)] = c[t];
          for (int w = 0; w < W; ++w)
            m.val[W * (o + std::size_t(rank)) + w] = val[W * std::size_t(e0 + t) + w];
        }
        continue;
      }
      row.resize(std::size_t(len));  // t < len <= n < 2^31: fits the key's low half
      for (std::int64_t t = 0; t < len; ++t)
        row[std::size_t(t)] =
            std::uint64_t(std::uint32_t(new_of[col[e0 + t]])) << 32 | std::uint64_t(t);
      std::sort(row.begin(), row.end());
      for (std::size_t j = 0; j < row.size(); ++j) {
        const std::size_t t = std::size_t(e0) + std::size_t(row[j] & 0xffffffffu);
        m.col[o + j] = std::int32_t(row[j] >> 32);
        for (int w = 0; w < W; ++w) m.val[W * (o + j) + w] = val[W * t + w];
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
      // The scattered side's lines fetched ahead: one miss at a time was most of the time.
      constexpr std::int64_t ahead = 16;
      if (back)
        for (std::int64_t r = r0; r < r1; ++r) {
          if (r + ahead < r1) prefetch(dst + perm[r + ahead]);
          dst[perm[r]] = src[r];
        }
      else
        for (std::int64_t r = r0; r < r1; ++r) {
          if (r + ahead < r1) prefetch(src + perm[r + ahead]);
          dst[r] = src[perm[r]];
        }
    }
  });
}

}  // namespace cnc
