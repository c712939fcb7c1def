// Hash-assembled COO: an open-addressing table keyed by (row, col) that sums duplicates on insert
// (paper 003's idea, sized from an nnz hint and grown by load factor).
//
// Layout choice, for speed: slot(row, col) = row * stride + h(col) mod stride, i.e. each row owns
// a window of `stride` slots and probing is linear from there (spilling into the next window).
// Assembly loops visit rows in order, so inserts stream through memory instead of jumping at
// random: one cache line per few coefficients instead of one miss per coefficient.
//
// A run of probes longer than a few windows means rows outgrew their windows: the windows double.
// Duplicates are summed in double-double (Knuth's TwoSum): the stored value is the correctly
// rounded sum in all but pathological cases, so the result does not depend on insertion order.
#pragma once

#include <cstdint>
#include <vector>

#include "conversion/matrix.hpp"

namespace cnc {

class hash_coo {
 public:
  // n_rows: rows keys may take (< n_rows); nnz_hint: expected distinct entries (0 = unknown).
  void reset(std::int32_t n_rows, std::int64_t nnz_hint);
  void add(std::int32_t i, std::int32_t j, double v) {
    if (count_ + 1 > grow_at_) grow();
    std::uint64_t key = (std::uint64_t(std::uint32_t(i)) << 32) | std::uint32_t(j);
    std::uint64_t s = slot_of(i, j);
    for (std::uint32_t probes = 0;; ++probes) {
      if (probes > probe_limit_ && grow_for_probes()) return add(i, j, v);
      slot& e = slots_[s];
      if (e.key == key) {
        two_sum_add(e, v);
        return;
      }
      if (e.key == empty_key) {
        e.key = key, e.hi = v, e.lo = 0.0;
        ++count_;
        return;
      }
      if (++s == slots_.size()) s = 0;
    }
  }
  std::int64_t size() const { return count_; }
  std::int32_t rows() const { return n_rows_; }
  // CSR over the kept rows/columns: map[i] is the new index of row/column i, or -1 to drop it.
  // Columns sorted in each row; empty map = identity.
  csr_matrix to_csr(const std::vector<std::int32_t>& map, std::int32_t n_out) const;

 private:
  struct slot {
    std::uint64_t key;
    double hi, lo;
  };
  static constexpr std::uint64_t empty_key = ~std::uint64_t(0);

  std::uint64_t slot_of(std::int32_t i, std::int32_t j) const {
    // Fibonacci hashing of the column, scaled into the row's window.
    std::uint64_t h = (std::uint32_t(j) * 2654435769u);
    return std::uint64_t(i) * stride_ + ((h * stride_) >> 32);
  }
  static void two_sum_add(slot& e, double v) {
    double s = e.hi + v;
    double bp = s - e.hi;
    double err = (e.hi - (s - bp)) + (v - bp);
    e.hi = s;
    e.lo += err;
  }
  void allocate(std::uint32_t stride);
  void grow();
  // Rows with more entries than their window make long probe runs (LSCM's AᵀA rows, say):
  // then double the windows, unless the table would exceed 16x its entries (a few dense rows).
  bool grow_for_probes();

  std::vector<slot> slots_;
  std::int32_t n_rows_ = 0;
  std::uint32_t stride_ = 0;
  std::int64_t count_ = 0;
  std::int64_t grow_at_ = 0;
  std::uint32_t probe_limit_ = 0;
};

}  // namespace cnc
