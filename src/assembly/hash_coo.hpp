// Hash-assembled COO: an open-addressing table keyed by (row, col) that sums duplicates on insert,
// so that memory follows the distinct entries, not the calls (finite-element assembly adds an
// entry once per element that shares it); sized from an nnz hint and grown by load factor.
//
// Layout, for speed and memory: row i owns a window of `stride` slots; column j probes linearly
// inside that window from h(j) mod stride. The row is implicit in the slot's position, so a
// slot is a 32-bit column plus a double (12 bytes, structure of arrays), and conversion to CSR is
// one pass, row by row. Assembly loops visit rows in order, so inserts stream through memory. A row
// whose window is full spills to a small general table keyed by (row, col); when spills grow
// past a fraction of the entries, the windows double (rows outgrew the hint).
//
// Duplicates are summed in double-double (Knuth's TwoSum; the low parts live in an array made at
// the first duplicate): the stored value is the correctly rounded sum in all but pathological
// cases, so the result does not depend on insertion order. Each key's (high, low) pair is the
// same fold over its entries wherever the key lives (window or spill) and is moved verbatim when
// the windows grow, so the same per-key order gives the same bits, whatever else interleaves.
//
// Parallel insertion (builder's bulk path): threads own disjoint rows and call add_in_window,
// which touches only row i's window; what it cannot place (a full window, or a duplicate before
// the low parts exist) is handed back and inserted later with add(), keeping each key's order.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "matrix/matrix.hpp"

namespace cnc {

// Asks the kernel for 2 MiB pages over [p, p + bytes) (Linux, before first touch): fewer page
// faults when the pages are first touched and fewer TLB misses when the table is filled.
void advise_huge_pages(void* p, std::size_t bytes);
// A CSR of n rows and nnz entries, row offsets zero, index and value arrays not yet touched
// (huge pages asked for): what the assembly stages fill in parallel pieces.
csr_matrix empty_csr(std::int32_t n, std::int64_t nnz);

class hash_coo {
 public:
  // n_rows: rows keys may take (< n_rows); nnz_hint: expected distinct entries (0 = unknown);
  // threads: host_threads() request for the table's parallel passes (0 = default).
  void reset(std::int32_t n_rows, std::int64_t nnz_hint, int threads = 0);
  void add(std::int32_t i, std::int32_t j, double v) {
    const std::uint64_t s = find(i, j);
    if (s == no_slot) return spill(i, j, v);
    if (cols_[s] == j) return duplicate(s, v);
    cols_[s] = j, vals_[s] = v;
    if (lo_) lo_[s] = 0.0;
    ++count_;
  }
  enum class placed { yes, window_full, needs_low };
  // Row-local insert for parallel passes over disjoint rows: never spills, grows or allocates.
  // `added` counts new keys (the caller reports them with note_added after the pass).
  placed add_in_window(std::int32_t i, std::int32_t j, double v, std::int64_t& added) {
    const std::uint64_t s = find(i, j);
    if (s == no_slot) return placed::window_full;
    if (cols_[s] == j) {
      if (!lo_) return placed::needs_low;
      two_sum(vals_[s], lo_[s], v);
      return placed::yes;
    }
    cols_[s] = j, vals_[s] = v;
    if (lo_) lo_[s] = 0.0;
    ++added;
    return placed::yes;
  }
  void note_added(std::int64_t keys) { count_ += keys; }
  bool has_low_parts() const { return lo_ != nullptr; }
  void make_low_parts();
  // After a parallel pass left `misses` entries for full windows: doubles the windows (in
  // parallel) when the spill policy would, and says whether it did.
  bool grow_for(std::int64_t misses);
  std::int64_t size() const { return count_; }
  std::int32_t rows() const { return n_rows_; }
  // CSR over the kept rows/columns: map[i] is the new index of row/column i, or -1 to drop it.
  // Columns sorted in each row; empty map = identity.
  csr_matrix to_csr(const std::vector<std::int32_t>& map, std::int32_t n_out) const;

 private:
  struct spill_slot {
    std::uint64_t key;
    double hi, lo;
  };
  static constexpr std::uint64_t empty_key = ~std::uint64_t(0);
  static constexpr std::uint64_t no_slot = ~std::uint64_t(0);
  // Row i's slot holding j, else the empty slot where j goes, else no_slot (window full).
  std::uint64_t find(std::int32_t i, std::int32_t j) const {
    const std::uint64_t base = std::uint64_t(i) * stride_;
    std::uint64_t s = base + ((std::uint64_t(std::uint32_t(j) * 2654435769u) * stride_) >> 32);
    const std::uint64_t end = base + stride_;
    for (std::uint32_t t = 0; t < stride_; ++t) {
      const std::int32_t c = cols_[s];
      if (c == j || c < 0) return s;
      if (++s == end) s = base;
    }
    return no_slot;
  }

  static void two_sum(double& hi, double& lo, double v) {
    const double s = hi + v, bp = s - hi;
    lo += (hi - (s - bp)) + (v - bp);
    hi = s;
  }
  void duplicate(std::uint64_t s, double v);
  void spill(std::int32_t i, std::int32_t j, double v);
  bool crowded(std::int64_t extra_spills) const;
  spill_slot& spill_lookup(std::uint64_t key);
  void place(std::int32_t i, std::int32_t j, double hi, double lo);
  void allocate(std::uint32_t stride);
  void grow();

  std::int32_t n_rows_ = 0;
  int threads_ = 0;
  std::uint32_t stride_ = 0;
  std::uint64_t n_slots_ = 0;
  std::unique_ptr<std::int32_t[]> cols_;  // -1 = empty
  std::unique_ptr<double[]> vals_;        // high parts
  std::unique_ptr<double[]> lo_;          // low parts, made at the first duplicate
  std::vector<spill_slot> spill_;         // open addressing over (row, col), power-of-two size
  std::int64_t spilled_ = 0;
  std::int64_t count_ = 0;
};

}  // namespace cnc
