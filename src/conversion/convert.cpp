// Conversion stage (see convert.hpp). BCRS: rows grouped by b, each stored block dense and
// row-major, so that an SpMV reads one column index per block and loads the b values of x a block
// needs once for its b rows; padding rows get a unit diagonal so the system stays SPD.
#include "conversion/convert.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "cnc.h"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"

namespace cnc {

namespace {
constexpr std::int64_t row_grain = 2048;  // rows per piece of the parallel loops

// One bad argument found by a piece: position (for the lowest-first pick) and message.
struct piece_error {
  std::int64_t at = -1;
  int status = CNC_OK;
  std::string message;
};

// Throws the error of the lowest piece that found one (the first in row order).
void throw_first(const std::vector<piece_error>& errs) {
  for (const piece_error& e : errs)
    if (e.at >= 0) throw error(e.status, e.message);
}

// memory::reserve for csr_from_user, whose callers put the ": " before its messages.
template <class What>
void reserve_for_copy(double bytes, What&& what) {
  try {
    memory::reserve(bytes, what);
  } catch (const error& e) {
    throw error(e.status(), e.what() + 2);
  }
}

// Sorts row entries by column (stable: duplicates keep their order), sums duplicates and writes
// the result to col/val (both may be null: only count); returns the number of distinct columns.
std::size_t canonical_row(std::vector<std::pair<std::int32_t, double>>& row, std::int32_t* col,
                          double* val) {
  std::stable_sort(row.begin(), row.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t w = 0;
  for (std::size_t t = 0; t < row.size(); ++t) {
    if (t > 0 && row[t].first == row[t - 1].first) {
      if (val) val[w - 1] += row[t].second;
    } else {
      if (col) col[w] = row[t].first, val[w] = row[t].second;
      ++w;
    }
  }
  return w;
}
}  // namespace

void check_row_ptr(std::int32_t n, const std::int64_t* row_ptr, int base) {
  char msg[256];
  if (row_ptr[0] != base) {
    std::snprintf(msg, sizeof msg, "row_ptr[0]=%lld but base=%d", (long long)row_ptr[0], base);
    throw error(CNC_ERR_INVALID_VALUE, msg);
  }
  const std::int64_t down = first_index(
      n, row_grain, host_threads(), [&](std::int64_t i) { return row_ptr[i + 1] < row_ptr[i]; });
  if (down >= 0) {
    std::snprintf(msg, sizeof msg, "row_ptr decreases at row %lld (%lld > %lld)", (long long)down,
                  (long long)row_ptr[down], (long long)row_ptr[down + 1]);
    throw error(CNC_ERR_INVALID_VALUE, msg);
  }
}

user_csr csr_from_user(std::int32_t n, const std::int64_t* row_ptr, const std::uint32_t* col,
                       const double* val, int base, std::int32_t cols) {
  check_row_ptr(n, row_ptr, base);
  const std::int32_t ncols = cols < 0 ? n : cols;
  const int threads = host_threads();
  const std::int64_t pieces = piece_count(n, row_grain);
  std::vector<piece_error> errs(static_cast<std::size_t>(pieces));
  // Entries: in range, finite; rows already canonical (sorted, no duplicates) need no sorting.
  // Non-canonical rows get their output length here (their entries are placed below).
  user_csr u;
  u.owned.n = n;
  reserve_for_copy(double(n + 1) * memory::offset_bytes, [&] {
    return "the row lengths of " + std::to_string(n) + " rows (8 bytes each)";
  });
  host_vector<std::int64_t> len(std::size_t(n) + 1);  // every entry written below
  len[0] = 0;
  std::vector<std::uint8_t> piece_canonical(static_cast<std::size_t>(pieces), 1);
  parallel_pieces(n, row_grain, threads, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    std::vector<std::pair<std::int32_t, double>> row;
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int64_t k0 = row_ptr[i] - base, k1 = row_ptr[i + 1] - base;
      // Branch-free scan (columns in range, values finite, strictly increasing); the exact
      // error is looked for only in a row that has one.
      const std::uint32_t lo = std::uint32_t(base), span = std::uint32_t(ncols);
      std::uint32_t bad = 0, unsorted = 0;
      for (std::int64_t k = k0; k < k1; ++k) {
        std::uint64_t bits;
        std::memcpy(&bits, &val[k], sizeof bits);
        bad |= std::uint32_t(col[k] - lo >= span) |
               std::uint32_t((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull);
        unsorted |= std::uint32_t(k > k0 && col[k] <= col[k - 1]);
      }
      for (std::int64_t k = k0; bad && k < k1; ++k) {
        const std::int64_t c = std::int64_t(col[k]) - base;
        if (c < 0 || c >= ncols || !std::isfinite(val[k])) {
          char m[160];
          if (c < 0 || c >= ncols)
            std::snprintf(m, sizeof m, "col_idx[%lld]=%lld out of range for n=%d, base=%d",
                          (long long)k, (long long)col[k], ncols, base);
          else
            std::snprintf(m, sizeof m, "values[%lld]=%g is not finite", (long long)k, val[k]);
          errs[p] = {k, c < 0 || c >= ncols ? CNC_ERR_INDEX_OUT_OF_RANGE : CNC_ERR_NOT_FINITE, m};
          return;
        }
      }
      const bool sorted = !unsorted;
      if (sorted) {
        len[i + 1] = k1 - k0;
        continue;
      }
      piece_canonical[p] = 0;
      row.clear();
      for (std::int64_t k = k0; k < k1; ++k) row.emplace_back(std::int32_t(col[k] - base), val[k]);
      len[i + 1] = std::int64_t(canonical_row(row, nullptr, nullptr));
    }
  });
  throw_first(errs);
  const bool canonical = std::all_of(piece_canonical.begin(), piece_canonical.end(),
                                     [](std::uint8_t c) { return c != 0; });
  const std::int64_t nnz_in = row_ptr[n] - base;
  if (canonical && base == 0) {  // the caller's arrays as they are (uint32 < n <= INT32_MAX)
    u.view = csr_view{n,
                      {row_ptr, std::size_t(n) + 1},
                      {reinterpret_cast<const std::int32_t*>(col), std::size_t(nnz_in)},
                      {val, std::size_t(nnz_in)}};
    return u;
  }
  // A canonical copy, placed in parallel: offsets from the row lengths, then each row.
  csr_matrix& m = u.owned;
  std::vector<std::int64_t> piece_at(static_cast<std::size_t>(pieces), 0);
  parallel_pieces(n, row_grain, threads, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) piece_at[p] += len[i + 1];
  });
  const std::int64_t nnz = exclusive_scan(piece_at);
  reserve_for_copy(memory::csr(n, double(nnz)), [&] {
    return "the canonical copy of the CSR (" + std::to_string(n) + " rows, " + std::to_string(nnz) +
           " entries: 12 bytes an entry, 8 a row offset)";
  });
  m.row_ptr.resize(std::size_t(n) + 1);
  m.row_ptr[0] = 0;
  m.col.resize(std::size_t(nnz));
  m.val.resize(std::size_t(nnz));
  parallel_pieces(n, row_grain, threads, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    std::vector<std::pair<std::int32_t, double>> row;
    std::int64_t at = piece_at[p];
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int64_t k0 = row_ptr[i] - base, k1 = row_ptr[i + 1] - base;
      bool sorted = true;  // strictly increasing: copied as is
      for (std::int64_t k = k0 + 1; k < k1 && sorted; ++k) sorted = col[k] > col[k - 1];
      if (sorted) {
        for (std::int64_t k = k0; k < k1; ++k)
          m.col[at + k - k0] = std::int32_t(col[k] - base), m.val[at + k - k0] = val[k];
        at += k1 - k0;
        m.row_ptr[i + 1] = at;
        continue;
      }
      row.clear();
      for (std::int64_t k = k0; k < k1; ++k) row.emplace_back(std::int32_t(col[k] - base), val[k]);
      at += std::int64_t(canonical_row(row, m.col.data() + at, m.val.data() + at));
      m.row_ptr[i + 1] = at;
    }
  });
  u.view = m;
  return u;
}

namespace {
// Sorted distinct block columns of block row br (with the padding diagonal of a last, partial
// block row) into `cols`.
// The b rows are sorted (canonical), so their block columns are merged in one pass: linear in
// the entries, where a sort of a long row's columns was not. B is a compile-time constant so
// that the divisions are shifts (with a runtime b they were most of the merge's time).
template <int B>
void block_columns_of(const csr_view& a, std::int32_t br, std::vector<std::int32_t>& cols) {
  cols.clear();
  std::int64_t at[B] = {}, end[B] = {};
  const int rows = std::max(0, std::min(B, a.n - br * B));
  for (int l = 0; l < rows; ++l) at[l] = a.row_ptr[br * B + l], end[l] = a.row_ptr[br * B + l + 1];
  bool pad = (br + 1) * B > a.n;  // the padding rows' identity block sits in column br
  const std::int64_t entries = rows ? end[rows - 1] - at[0] : 0;
  if (entries > 4096) {
    // A long block row (a power-law hub's): its block columns marked in a bitmap, then read in
    // order over the span they cover. The merge's unpredictable branches cost ~15 ns an entry.
    thread_local std::vector<std::uint64_t> bits;
    const std::size_t words = (std::size_t(a.n) + B - 1) / B / 64 + 1;
    if (bits.size() < words) bits.assign(words, 0);
    std::size_t lo = words, hi = 0;
    auto mark = [&](std::int64_t c) {
      const std::size_t w = std::size_t(c) / 64;
      bits[w] |= std::uint64_t(1) << (c % 64);
      lo = std::min(lo, w), hi = std::max(hi, w);
    };
    for (std::int64_t e = at[0]; e < end[rows - 1]; ++e) mark(a.col[e] / B);
    if (pad) mark(br);
    for (std::size_t w = lo; w <= hi && lo < words; ++w)
      for (std::uint64_t m = bits[w]; m; m &= m - 1)
        cols.push_back(std::int32_t(w * 64 + std::size_t(__builtin_ctzll(m))));
    if (lo < words)
      std::fill(bits.begin() + std::ptrdiff_t(lo), bits.begin() + std::ptrdiff_t(hi) + 1, 0);
    return;
  }
  for (;;) {
    std::int32_t c = pad ? br : INT32_MAX;
    for (int l = 0; l < rows; ++l)
      if (at[l] < end[l]) c = std::min(c, a.col[at[l]] / B);
    if (c == INT32_MAX) break;
    cols.push_back(c);
    if (c == br) pad = false;
    for (int l = 0; l < rows; ++l)
      while (at[l] < end[l] && a.col[at[l]] / B == c) ++at[l];
  }
}

void block_columns(const csr_view& a, int b, std::int32_t br, std::vector<std::int32_t>& cols) {
  if (b == 2)
    block_columns_of<2>(a, br, cols);
  else
    block_columns_of<4>(a, br, cols);
}
}  // namespace

std::int64_t count_blocks(const csr_view& a, int b) {
  const std::int32_t nbr = (a.n + b - 1) / b;
  std::vector<std::int64_t> part(static_cast<std::size_t>(piece_count(nbr, row_grain)), 0);
  parallel_pieces(nbr, row_grain, host_threads(),
                  [&](std::int64_t p, std::int64_t r0, std::int64_t r1) {
                    std::vector<std::int32_t> cols;
                    for (std::int64_t br = r0; br < r1; ++br) {
                      block_columns(a, b, std::int32_t(br), cols);
                      part[p] += std::int64_t(cols.size());
                    }
                  });
  return exclusive_scan(part);
}

bcrs_matrix csr_to_bcrs(const csr_view& a, int b) {
  bcrs_matrix m;
  m.b = b;
  m.n = a.n;
  m.n_block_rows = (a.n + b - 1) / b;
  const std::int32_t nbr = m.n_block_rows;
  const int threads = host_threads();
  // Pass 1: blocks per block row; pass 2: each block row's columns and values in place.
  m.row_ptr.assign(std::size_t(nbr) + 1, 0);
  std::vector<std::int64_t> part(static_cast<std::size_t>(piece_count(nbr, row_grain)), 0);
  parallel_pieces(nbr, row_grain, threads, [&](std::int64_t p, std::int64_t r0, std::int64_t r1) {
    std::vector<std::int32_t> cols;
    for (std::int64_t br = r0; br < r1; ++br) {
      block_columns(a, b, std::int32_t(br), cols);
      m.row_ptr[br + 1] = std::int64_t(cols.size());
      part[p] += std::int64_t(cols.size());
    }
  });
  const std::int64_t blocks = exclusive_scan(part);
  const std::size_t bb = std::size_t(b) * b;
  memory::reserve(memory::bcrs(a.n, double(blocks), b), [&] {
    return "the BCRS " + std::to_string(b) + "x" + std::to_string(b) + " matrix (" +
           std::to_string(blocks) + " blocks of " + std::to_string(4 + 8 * bb) + " bytes)";
  });
  m.col.resize(std::size_t(blocks));
  m.val.resize(std::size_t(blocks) * bb);
  parallel_pieces(nbr, row_grain, threads, [&](std::int64_t p, std::int64_t r0, std::int64_t r1) {
    std::vector<std::int32_t> cols;
    std::int64_t at = part[p];
    for (std::int64_t br = r0; br < r1; ++br) {
      const std::int64_t count = m.row_ptr[br + 1];
      m.row_ptr[br + 1] = at + count;
      block_columns(a, b, std::int32_t(br), cols);
      std::copy(cols.begin(), cols.end(), m.col.begin() + at);
      double* v = m.val.data() + std::size_t(at) * bb;
      std::fill(v, v + std::size_t(count) * bb, 0.0);
      const std::int32_t r_end = std::min(a.n, std::int32_t(br + 1) * b);
      for (std::int32_t i = std::int32_t(br) * b; i < r_end; ++i)
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
          const std::int64_t blk =
              std::lower_bound(cols.begin(), cols.end(), a.col[k] / b) - cols.begin();
          v[std::size_t(blk) * bb + std::size_t(i - br * b) * b + std::size_t(a.col[k] % b)] +=
              a.val[k];
        }
      for (std::int32_t i = r_end; i < std::int32_t(br + 1) * b; ++i) {  // padding: unit diagonal
        const std::int64_t blk =
            std::lower_bound(cols.begin(), cols.end(), std::int32_t(br)) - cols.begin();
        v[std::size_t(blk) * bb + std::size_t(i - br * b) * (b + 1)] = 1.0;
      }
      at += count;
    }
  });
  return m;
}

csr_matrix bcrs_to_csr(const bcrs_matrix& m) {
  csr_matrix a;
  a.n = m.n;
  a.row_ptr.assign(std::size_t(m.n) + 1, 0);
  const int b = m.b;
  for (std::int32_t i = 0; i < m.n; ++i) {
    std::int32_t br = i / b, ii = i % b;
    for (std::int64_t blk = m.row_ptr[br]; blk < m.row_ptr[br + 1]; ++blk)
      for (int jj = 0; jj < b; ++jj) {
        double v = m.val[std::size_t(blk) * b * b + std::size_t(ii) * b + jj];
        std::int32_t j = m.col[blk] * b + jj;
        if (v != 0.0 && j < m.n) a.col.push_back(j), a.val.push_back(v);
      }
    a.row_ptr[i + 1] = a.nnz();
  }
  return a;
}

// Entries per row of SELL slice s: its longest row (at least 1: identity padding rows).
static std::int64_t slice_width(const csr_view& a, std::int32_t s) {
  std::int64_t w = 1;
  for (std::int32_t i = s * sell_slice; i < std::min(a.n, (s + 1) * sell_slice); ++i)
    w = std::max(w, a.row_ptr[i + 1] - a.row_ptr[i]);
  return w;
}

std::int64_t sell_entries(const csr_view& a) {
  const std::int32_t ns = (a.n + sell_slice - 1) / sell_slice;
  std::vector<std::int64_t> part(static_cast<std::size_t>(piece_count(ns, row_grain / 32)), 0);
  parallel_pieces(ns, row_grain / 32, host_threads(),
                  [&](std::int64_t p, std::int64_t s0, std::int64_t s1) {
                    for (std::int64_t s = s0; s < s1; ++s)
                      part[p] += slice_width(a, std::int32_t(s)) * sell_slice;
                  });
  return exclusive_scan(part);
}

std::int64_t zsell_entries(const zcsr_view& a) {
  return sell_entries(csr_view{a.n, a.row_ptr, {}, {}});  // (only the row offsets are read)
}

std::vector<std::int64_t> sell_slice_offsets(const csr_view& a) {
  const std::int32_t C = sell_slice, ns = (a.n + C - 1) / C;
  const std::int64_t grain = row_grain / 32;
  std::vector<std::int64_t> ptr(std::size_t(ns) + 1, 0);
  std::vector<std::int64_t> part(static_cast<std::size_t>(piece_count(ns, grain)), 0);
  const int threads = host_threads();
  parallel_pieces(ns, grain, threads, [&](std::int64_t p, std::int64_t s0, std::int64_t s1) {
    for (std::int64_t s = s0; s < s1; ++s) {
      ptr[s + 1] = slice_width(a, std::int32_t(s)) * C;
      part[p] += ptr[s + 1];
    }
  });
  exclusive_scan(part);
  parallel_pieces(ns, grain, threads, [&](std::int64_t p, std::int64_t s0, std::int64_t s1) {
    std::int64_t base = part[p];
    for (std::int64_t s = s0; s < s1; ++s) ptr[s + 1] = base += ptr[s + 1];
  });
  return ptr;
}

sell_matrix csr_to_sell(const csr_view& a) {
  const std::int32_t C = sell_slice;
  sell_matrix m;
  m.n = a.n;
  m.n_slices = (a.n + C - 1) / C;
  const int threads = host_threads();
  const std::int64_t grain = row_grain / 32;
  m.slice_ptr = sell_slice_offsets(a);
  const std::int64_t entries = m.slice_ptr.back();
  memory::reserve(memory::sell(a.n, double(entries)), [&] {
    return "the SELL matrix (" + std::to_string(entries) +
           " entries with the slices' padding, 12 bytes each)";
  });
  // No value-initialization: every entry is written below, each slice by one piece.
  m.col.resize(std::size_t(entries));
  m.val.resize(std::size_t(entries));
  parallel_pieces(m.n_slices, grain, threads, [&](std::int64_t, std::int64_t s0, std::int64_t s1) {
    for (std::int64_t s = s0; s < s1; ++s) {
      const std::int64_t base = m.slice_ptr[s], w = (m.slice_ptr[s + 1] - base) / C;
      for (std::int32_t l = 0; l < C; ++l) {
        const std::int32_t i = std::int32_t(s) * C + l;
        std::int64_t t = 0;
        if (i < a.n) {
          for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e, ++t) {
            m.col[std::size_t(base + t * C + l)] = a.col[e];
            m.val[std::size_t(base + t * C + l)] = a.val[e];
          }
        } else {  // identity padding row
          m.col[std::size_t(base + l)] = i;
          m.val[std::size_t(base + l)] = 1.0;
          t = 1;
        }
        for (; t < w; ++t)  // value 0, own row
          m.col[std::size_t(base + t * C + l)] = i, m.val[std::size_t(base + t * C + l)] = 0.0;
      }
    }
  });
  return m;
}

double matrix_bytes(std::int32_t n, std::int64_t nnz, format f, std::int64_t stored,
                    int value_bytes) {
  if (f == format::csr) return double(nnz) * (value_bytes + 4) + double(n + 1) * 8;
  if (f == format::zcsr) {  // `stored` complex entries of two values, n / 2 complex rows
    const std::int64_t complex_rows = n / 2;
    return double(stored) * (2.0 * value_bytes + 4) + double(complex_rows + 1) * 8;
  }
  if (f == format::sell || f == format::zsell) {  // zsell: slices of complex rows, pairs
    const bool z = f == format::zsell;
    const std::int32_t slices = (n / (z ? 2 : 1) + sell_slice - 1) / sell_slice;
    return double(stored) * ((z ? 2 : 1) * value_bytes + 4) + double(slices + 1) * 8;
  }
  const int b = block_size(f);
  const std::int32_t block_rows = (n + b - 1) / b;
  return double(stored) * (double(b) * b * value_bytes + 4) + double(block_rows + 1) * 8;
}
double matrix_bytes(const csr_view& a, format f, std::int64_t stored, int value_bytes) {
  return matrix_bytes(a.n, a.nnz(), f, stored, value_bytes);
}

// Blocks of b x b over every `stride`-th block row only: a cheap estimate of count_blocks. Block
// rows of more than 4096 entries (a power-law graph's hubs, 10^5 entries and more) are left out
// of the sample: they would cost most of its time and tell little of the rest. With none left,
// 0 (the exact count decides).
static double sampled_blocks(const csr_view& a, int b, std::int32_t stride) {
  constexpr std::int64_t long_block_row = 4096;
  const std::int32_t nbr = (a.n + b - 1) / b;
  const std::int64_t samples = (std::int64_t(nbr) + stride - 1) / stride;
  constexpr std::int64_t grain = 256;
  const auto pieces = static_cast<std::size_t>(piece_count(samples, grain));
  std::vector<std::int64_t> part(pieces, 0), taken(pieces, 0);
  parallel_pieces(samples, grain, host_threads(),
                  [&](std::int64_t p, std::int64_t s0, std::int64_t s1) {
                    std::vector<std::int32_t> cols;
                    for (std::int64_t s = s0; s < s1; ++s) {
                      const std::int32_t br = std::int32_t(s * stride);
                      const std::int32_t r0 = br * b, r1 = std::min(a.n, r0 + b);
                      if (a.row_ptr[r1] - a.row_ptr[r0] > long_block_row) continue;
                      block_columns(a, b, br, cols);
                      part[std::size_t(p)] += std::int64_t(cols.size());
                      ++taken[std::size_t(p)];
                    }
                  });
  const double blocks = double(exclusive_scan(part));
  const std::int64_t used = exclusive_scan(taken);
  return used > 0 ? blocks * double(nbr) / double(used) : 0;
}

format choose_scalar_format(std::int32_t n, std::int64_t nnz, std::int64_t sell_stored,
                            int value_bytes, bool sliced) {
  if (!sliced) return format::csr;
  const double csr_bytes = matrix_bytes(n, nnz, format::csr, 0, value_bytes);
  const double sell_bytes = matrix_bytes(n, nnz, format::sell, sell_stored, value_bytes);
  return sell_bytes <= 1.1 * csr_bytes ? format::sell : format::csr;
}

format choose_complex_format(std::int32_t n, std::int64_t nnz, std::int64_t zsell_stored,
                             int value_bytes) {
  const double zcsr_bytes = matrix_bytes(2 * n, nnz, format::zcsr, nnz, value_bytes);
  const double zsell_bytes = matrix_bytes(2 * n, nnz, format::zsell, zsell_stored, value_bytes);
  return zsell_bytes <= complex_sell_bytes * zcsr_bytes ? format::zsell : format::zcsr;
}

format choose_format(const csr_view& a, int value_bytes, bool sliced) {
  return choose_format(a, value_bytes, sliced, sliced ? sell_entries(a) : 0,
                       [&](int b) { return count_blocks(a, b); });
}

format choose_format(const csr_view& a, int value_bytes, bool sliced, std::int64_t sell_stored,
                     const std::function<std::int64_t(int)>& exact_blocks, bool screen) {
  const format scalar = choose_scalar_format(a.n, a.nnz(), sell_stored, value_bytes, sliced);
  const double scalar_bytes = matrix_bytes(a, scalar, sell_stored, value_bytes);
  // Past 8192 rows, a sample of block rows (1 in 32, at most about 8192 of them) rules out
  // blocking when it clearly does not pay (scalar stencils), so the exact count below runs only
  // for plausible candidates.
  if (screen && a.n > 8192) {
    bool plausible = false;
    for (format f : {format::bcrs2, format::bcrs4}) {
      const std::int32_t nbr = (a.n + block_size(f) - 1) / block_size(f);
      const std::int32_t stride = std::max(32, nbr / 8192);
      plausible =
          plausible || matrix_bytes(a, f, std::int64_t(sampled_blocks(a, block_size(f), stride)),
                                    value_bytes) < 0.95 * scalar_bytes;
    }
    if (!plausible) return scalar;
  }
  format best = scalar;
  double best_bytes = scalar_bytes;
  for (format f : {format::bcrs2, format::bcrs4}) {
    double bytes = matrix_bytes(a, f, exact_blocks(block_size(f)), value_bytes);
    if (bytes < 0.9 * scalar_bytes && bytes < best_bytes) best = f, best_bytes = bytes;
  }
  return best;
}

host_vector<double> inverse_diagonal(const csr_view& a, std::int32_t n_padded, bool jacobi,
                                     std::int64_t* zero_diagonals) {
  return inverse_diagonal(a.n, n_padded, jacobi, zero_diagonals, [&](std::int32_t i) {
    // Columns sorted (canonical): found by bisection, not by a walk of the row (a hub row of
    // 10^5 entries would hold its piece).
    const auto first = a.col.begin() + a.row_ptr[std::size_t(i)];
    const auto last = a.col.begin() + a.row_ptr[std::size_t(i) + 1];
    const auto at = std::lower_bound(first, last, i);
    return at != last && *at == i ? a.val[std::size_t(at - a.col.begin())] : 0.0;
  });
}

}  // namespace cnc
