// Pattern-first assembly: compile, clear, CSR (see pattern.hpp).
#include "assembly/pattern.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "assembly/hash_coo.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"

namespace cnc {

namespace {
constexpr std::int64_t row_grain = 2048;
constexpr std::int64_t slot_grain = std::int64_t(1) << 18;

// Fills slots [a, e) as unused: column -1, value -0.0.
void clear_slots(std::int32_t* col, double* val, std::int64_t a, std::int64_t e) {
  std::memset(col + a, 0xff, sizeof(std::int32_t) * std::size_t(e - a));
  std::fill(val + a, val + e, -0.0);
}
}  // namespace

void row_pattern::begin(std::int32_t n, int return_state) {
  memory::reserve(double(n) * sizeof(std::uint32_t), [&] {
    return "the row lengths of " + std::to_string(n) + " rows (4 bytes each)";
  });
  lengths_.assign(std::size_t(n), 0);
  return_state_ = return_state;
}

void row_pattern::set_lengths(const std::uint32_t* lengths, int threads) {
  std::uint32_t* out = lengths_.data();
  parallel_pieces(std::int64_t(lengths_.size()), slot_grain, host_threads(threads),
                  [&](std::int64_t, std::int64_t a, std::int64_t e) {
                    std::memcpy(out + a, lengths + a, sizeof(std::uint32_t) * std::size_t(e - a));
                  });
}

std::int64_t row_pattern::compile(int threads) {
  const std::int32_t n = std::int32_t(lengths_.size());
  const int t = host_threads(threads);
  // Prefix sum in fixed pieces: piece sums, their scan, then each piece's rows.
  std::vector<std::int64_t> part(std::size_t(piece_count(n, row_grain)), 0);
  parallel_pieces(n, row_grain, t, [&](std::int64_t p, std::int64_t a, std::int64_t e) {
    std::int64_t s = 0;
    for (std::int64_t i = a; i < e; ++i) s += lengths_[std::size_t(i)];
    part[std::size_t(p)] = s;
  });
  const std::int64_t total = exclusive_scan(part);  // < 2^31 * 2^32: no int64 overflow
  if (total > max_slots) return total;
  if (total == 0) {  // no slots: the pattern is discarded
    const int back = return_state_;
    *this = row_pattern{};
    return_state_ = back;
    return 0;
  }
  memory::reserve(memory::csr(n, double(total)), [&] {
    return "the pattern of " + std::to_string(n) + " rows and " + std::to_string(total) +
           " slots (12 bytes a slot, 8 a row offset)";
  });
  std::vector<std::int64_t> row_ptr(std::size_t(n) + 1);
  host_vector<std::int32_t> col(static_cast<std::size_t>(total));
  host_vector<double> val(static_cast<std::size_t>(total));
  advise_huge_pages(col.data(), sizeof(std::int32_t) * col.size());
  advise_huge_pages(val.data(), sizeof(double) * val.size());
  parallel_pieces(n, row_grain, t, [&](std::int64_t p, std::int64_t a, std::int64_t e) {
    std::int64_t s = part[std::size_t(p)];
    for (std::int64_t i = a; i < e; ++i) row_ptr[std::size_t(i)] = s, s += lengths_[std::size_t(i)];
  });
  row_ptr[std::size_t(n)] = total;
  // First touch by every core: the pages land where the threads that fill them run.
  parallel_pieces(total, slot_grain, t, [&](std::int64_t, std::int64_t a, std::int64_t e) {
    clear_slots(col.data(), val.data(), a, e);
  });
  n_ = n;
  row_ptr_ = std::move(row_ptr);
  col_ = std::move(col);
  val_ = std::move(val);
  active_ = true;
  dirty_ = false;
  lengths_.clear();
  lengths_.shrink_to_fit();
  return total;
}

void row_pattern::clear(int threads) {
  if (!dirty_) return;
  parallel_pieces(slots(), slot_grain, host_threads(threads),
                  [&](std::int64_t, std::int64_t a, std::int64_t e) {
                    clear_slots(col_.data(), val_.data(), a, e);
                  });
  dirty_ = false;
}

csr_matrix row_pattern::to_csr(const std::vector<std::int32_t>& map, std::int32_t n_out,
                               int threads) const {
  auto mapped = [&](std::int32_t idx) { return map.empty() ? idx : map[std::size_t(idx)]; };
  const int t = host_threads(threads);
  // One row's used slots as (new column, value), sorted by column (stable: repeated columns keep
  // slot order) and merged; returns the merged length.
  auto gather = [&](std::int32_t i, std::vector<std::pair<std::int32_t, double>>& row) {
    row.clear();
    for (std::int64_t s = row_ptr_[std::size_t(i)]; s < row_ptr_[std::size_t(i) + 1]; ++s) {
      const std::int32_t c = col_[std::size_t(s)];
      if (c >= 0 && mapped(c) >= 0) row.emplace_back(mapped(c), val_[std::size_t(s)]);
    }
    if (row.size() > 32) {
      std::stable_sort(row.begin(), row.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    } else {
      for (std::size_t k = 1; k < row.size(); ++k) {
        const auto e = row[k];
        std::size_t q = k;
        for (; q > 0 && row[q - 1].first > e.first; --q) row[q] = row[q - 1];
        row[q] = e;
      }
    }
    merge_equal_columns(
        row, [](const auto& e) { return e.first; }, [](auto& e) -> double& { return e.second; });
    return row.size();
  };
  // Used slots of row i when their columns already increase (the usual case: no copy), else -1.
  auto sorted_count = [&](std::int32_t i) -> std::int64_t {
    std::int32_t prev = -1;
    std::int64_t c = 0;
    for (std::int64_t s = row_ptr_[std::size_t(i)]; s < row_ptr_[std::size_t(i) + 1]; ++s) {
      const std::int32_t col = col_[std::size_t(s)];
      if (col < 0 || mapped(col) < 0) continue;
      if (mapped(col) <= prev) return -1;
      prev = mapped(col), ++c;
    }
    return c;
  };
  auto kept = [&](std::int64_t i) {
    const std::int32_t r = mapped(std::int32_t(i));
    return r >= 0 && r < n_out;
  };
  // Pass 1 counts each kept row's merged entries per piece; pass 2 writes them. The map keeps
  // rows in order, so output rows follow input rows.
  std::vector<std::int64_t> part(std::size_t(piece_count(n_, row_grain)), 0);
  parallel_pieces(n_, row_grain, t, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    std::vector<std::pair<std::int32_t, double>> row;
    std::int64_t c = 0;
    for (std::int64_t i = i0; i < i1; ++i) {
      if (!kept(i)) continue;
      const std::int64_t sc = sorted_count(std::int32_t(i));
      c += sc >= 0 ? sc : std::int64_t(gather(std::int32_t(i), row));
    }
    part[std::size_t(p)] = c;
  });
  const std::int64_t nnz = exclusive_scan(part);
  csr_matrix m = empty_csr(n_out, nnz);
  parallel_pieces(n_, row_grain, t, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    std::vector<std::pair<std::int32_t, double>> row;
    std::int64_t at = part[std::size_t(p)];
    for (std::int64_t i = i0; i < i1; ++i) {
      if (!kept(i)) continue;
      if (sorted_count(std::int32_t(i)) >= 0) {
        for (std::int64_t s = row_ptr_[std::size_t(i)]; s < row_ptr_[std::size_t(i) + 1]; ++s) {
          const std::int32_t col = col_[std::size_t(s)];
          if (col < 0 || mapped(col) < 0) continue;
          m.col[std::size_t(at)] = mapped(col), m.val[std::size_t(at++)] = val_[std::size_t(s)];
        }
      } else {
        gather(std::int32_t(i), row);
        for (const auto& e : row)
          m.col[std::size_t(at)] = e.first, m.val[std::size_t(at++)] = e.second;
      }
      m.row_ptr[std::size_t(mapped(std::int32_t(i))) + 1] = at;
    }
  });
  return m;
}

}  // namespace cnc
