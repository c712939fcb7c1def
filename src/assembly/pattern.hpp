// Pattern-first assembly (OpenNL 4's NL_MATRIX_PATTERN): the caller states each row's length
// once; the pattern compiles into CSR-shaped slots (row i owns slots [row_ptr[i], row_ptr[i+1]),
// each a column, -1 while unused, and a value), and coefficients then go straight into slots:
// no hashing, no spills, no growth. End(MATRIX) drops unused slots and sums repeated columns.
//
// Slots are cleared at every Begin(MATRIX): the pattern (the row lengths) persists, the columns
// and values do not. Values start at -0.0 so that the first addition into a slot stores the
// value's exact bits (-0.0 + v == v for every v, +0.0 + -0.0 would not be -0.0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "matrix/matrix.hpp"

namespace cnc {

// One entry per column in a row sorted by column: the values of equal columns summed in row
// order (so the bits follow the order the entries came in); the row shrinks to fit. col(e) gives
// an entry's column, val(e) a reference to its value.
template <class Row, class Col, class Val>
void merge_equal_columns(Row& row, Col col, Val val) {
  std::size_t m = 0;
  for (std::size_t k = 0; k < row.size(); ++k) {
    if (m > 0 && col(row[m - 1]) == col(row[k]))
      val(row[m - 1]) += val(row[k]);
    else
      row[m++] = row[k];
  }
  row.resize(m);
}

class row_pattern {
 public:
  // Most slots a pattern may hold (CNC_ERR_OVERFLOW beyond): far past any machine's memory, so
  // that the sum of n 32-bit lengths is refused before it is allocated.
  static constexpr std::int64_t max_slots = std::int64_t(1) << 40;

  // Building, inside Begin/End(CNC_MATRIX_PATTERN): n lengths, all 0 at first. `return_state` is
  // kept for the API (the state End(CNC_MATRIX_PATTERN) goes back to).
  void begin(std::int32_t n, int return_state);
  void set_length(std::int32_t i, std::uint32_t length) { lengths_[std::size_t(i)] = length; }
  void set_lengths(const std::uint32_t* lengths, int threads);
  int return_state() const { return return_state_; }
  // Compiles the lengths: row offsets (prefix sum), slots allocated and cleared by every core.
  // Returns the total slot count; above max_slots nothing changes (the previous pattern stays)
  // and the caller reports it. All lengths 0 discards the pattern (hash assembly again).
  std::int64_t compile(int threads);

  bool active() const { return active_; }
  std::int32_t rows() const { return n_; }
  std::int64_t slots() const { return std::int64_t(col_.size()); }
  std::int64_t row_begin(std::int32_t i) const { return row_ptr_[std::size_t(i)]; }
  std::int64_t row_end(std::int32_t i) const { return row_ptr_[std::size_t(i) + 1]; }
  std::int32_t slot_col(std::int64_t s) const { return col_[std::size_t(s)]; }

  // Every slot unused (at Begin(MATRIX); skipped when nothing was written since).
  void clear(int threads);
  // Stores (j, v) in slot s (set) or adds v to it (add); the caller checked the slot is unused
  // or holds j.
  void set(std::int64_t s, std::int32_t j, double v) {
    col_[std::size_t(s)] = j, val_[std::size_t(s)] = v, dirty_ = true;
  }
  void add(std::int64_t s, std::int32_t j, double v) {
    col_[std::size_t(s)] = j, val_[std::size_t(s)] += v, dirty_ = true;
  }
  // Plain cncAddIJCoefficient: the slot holding j among row i's leading used slots, else the
  // first unused one, marked with j (its value stays -0.0); -1 when the row is full. `taken`
  // says whether an unused slot was marked.
  std::int64_t find_or_take(std::int32_t i, std::int32_t j, bool& taken) {
    taken = false;
    for (std::int64_t s = row_ptr_[std::size_t(i)], e = row_ptr_[std::size_t(i) + 1]; s < e; ++s) {
      const std::int32_t c = col_[std::size_t(s)];
      if (c == j) return s;
      if (c < 0) {
        col_[std::size_t(s)] = j, dirty_ = true, taken = true;
        return s;
      }
    }
    return -1;
  }
  void release(std::int64_t s) { col_[std::size_t(s)] = -1; }  // undoes a take

  // CSR over the kept rows/columns (map as hash_coo::to_csr): used slots only, each row sorted
  // by column with repeated columns summed in slot order; parallel pieces of rows, so the same
  // bits for any thread count.
  csr_matrix to_csr(const std::vector<std::int32_t>& map, std::int32_t n_out, int threads) const;

 private:
  std::int32_t n_ = 0;
  int return_state_ = 0;
  bool active_ = false, dirty_ = false;
  std::vector<std::uint32_t> lengths_;  // while building
  std::vector<std::int64_t> row_ptr_;   // n + 1
  host_vector<std::int32_t> col_;       // -1 = unused
  host_vector<double> val_;
};

}  // namespace cnc
