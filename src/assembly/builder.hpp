// System builder: turns OpenNL-style calls (rows, entries, locked variables, least squares,
// row scaling) into a CSR matrix over the free variables and the matching right-hand sides.
//
// Plain mode: row i is the equation of variable i; a coefficient on a locked variable j moves to
// the right-hand side (b_i -= a_ij x_j), rows of locked variables are dropped.
// Least squares: each row a (weight w) adds w² a aᵀ to AᵀA and w² a (b - Σ_locked a_j x_j) to Aᵀb
// over the free variables. Arguments are validated by the API layer before they reach here.
//
// Coefficients go to the hash table (hash_coo), or, when a compiled row pattern is active
// (pattern.hpp, plain mode only), straight into the pattern's slots.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "assembly/hash_coo.hpp"
#include "assembly/pattern.hpp"
#include "matrix/matrix.hpp"

namespace cnc {

// Rows of a run of bulk entries (builder.cpp).
struct builder_rows {
  std::uint32_t lo, hi;
  bool in_order;
};

struct assembled_system {
  csr_matrix a;                      // over free variables
  host_vector<double> b;             // n_free * k, column-major
  host_vector<std::int32_t> to_var;  // free index -> variable index
};

class builder {
 public:
  // values: n*k column-major variable values (locked values are read at insertion time).
  // threads: the context's CNC_NB_THREADS for host_threads() (0 = default).
  void begin_matrix(std::int32_t n, std::int32_t k, bool least_squares, bool normalize_rows,
                    const std::vector<std::uint8_t>& locked, const std::vector<double>& values,
                    std::int64_t nnz_hint, int threads = 0);
  // a_ij += v. False only with a pattern active, when row i is full and holds no slot for j
  // (nothing changed then).
  bool add_ij(std::int32_t i, std::int32_t j, double v) {
    if (any_locked_) {  // one predictable test when nothing is locked (the usual case)
      if (locked_[i]) return true;
      if (locked_[j]) {
        for (std::int32_t s = 0; s < k_; ++s)
          b_[i + std::size_t(s) * n_] -= v * x_[j + std::size_t(s) * n_];
        return true;
      }
    }
    if (use_pattern_) return pattern_add(i, j, v);
    coo_.add(i, j, v);
    return true;
  }
  // count entries at once, the same bits as count add_ij calls in order. Large calls on the
  // hash table insert in parallel (rows bucketed by range, each bucket on one thread, entries
  // of a row in input order). Returns -1, or with a pattern active the first entry whose row is
  // full (nothing added then).
  std::int64_t add_ij_many(std::int64_t count, const std::uint32_t* i, const std::uint32_t* j,
                           const double* v);
  void add_rhs(std::int32_t i, std::int32_t s, double v) { b_[i + std::size_t(s) * n_] += v; }
  // Entries bucketed at a time by out-of-order bulk calls (16 bytes each); tests make it small.
  void set_bulk_chunk(std::int64_t entries) { bulk_chunk_ = std::max<std::int64_t>(entries, 1); }

  // Pattern-first assembly.
  row_pattern& pattern() { return pattern_; }
  const row_pattern& pattern() const { return pattern_; }
  bool uses_pattern() const { return use_pattern_; }
  // Slot s of row i (the API checked it is unused or holds j): stores v (set) or adds it.
  // Locked rows and columns as add_ij: dropped, or moved to the right-hand side.
  void put(std::int32_t i, std::int32_t j, double v, std::int64_t s, bool set) {
    if (any_locked_) {
      if (locked_[i]) return;
      if (locked_[j]) {
        for (std::int32_t q = 0; q < k_; ++q)
          b_[i + std::size_t(q) * n_] -= v * x_[j + std::size_t(q) * n_];
        return;
      }
    }
    if (set)
      pattern_.set(s, j, v);
    else
      pattern_.add(s, j, v);
  }

  void begin_row();
  void coefficient(std::int32_t j, double v) { row_.push_back({j, v}); }
  void row_rhs(std::int32_t s, double v) { row_b_[s] = v; }
  void row_scaling(double w) { row_w_ = w; }
  enum class row_end { ok, beyond_n, pattern_full };
  // beyond_n: the row index reached n in plain mode; pattern_full: the pattern row has no room
  // for the row's columns. Both drop the row (nothing added); the caller reports them.
  row_end end_row();
  std::int32_t rows_done() const { return row_count_; }

  assembled_system end_matrix();

 private:
  struct entry {
    std::int32_t j;
    double v;
  };
  struct bulk_entry {
    std::uint32_t i, j;
    double v;
  };
  bool pattern_add(std::int32_t i, std::int32_t j, double v) {
    bool taken;
    const std::int64_t s = pattern_.find_or_take(i, j, taken);
    if (s < 0) return false;
    pattern_.add(s, j, v);
    return true;
  }
  template <class Entry>
  std::int64_t pattern_add_all(std::int64_t count, Entry&& e);
  void add_bulk_parallel(std::int64_t count, const std::uint32_t* i, const std::uint32_t* j,
                         const double* v, const builder_rows& rows);

  std::int32_t n_ = 0, k_ = 1;
  int threads_ = 0;
  bool ls_ = false, normalize_ = false, any_locked_ = false, use_pattern_ = false;
  const std::uint8_t* locked_ = nullptr;
  const double* x_ = nullptr;
  std::vector<std::uint8_t> locked_copy_;
  std::vector<double> x_copy_;
  hash_coo coo_;
  row_pattern pattern_;
  host_vector<double> b_;
  host_vector<bulk_entry> bulk_buffer_;  // out-of-order bulk entries in bucket order
  std::int64_t bulk_chunk_ = std::int64_t(1) << 22;
  std::vector<entry> row_;
  std::vector<double> row_b_;
  double row_w_ = 1.0;
  std::int32_t row_count_ = 0;
};

}  // namespace cnc
