// System builder: turns OpenNL-style calls (rows, entries, locked variables, least squares,
// row scaling) into a CSR matrix over the free variables and the matching right-hand sides.
//
// Plain mode: row i is the equation of variable i; a coefficient on a locked variable j moves to
// the right-hand side (b_i -= a_ij x_j), rows of locked variables are dropped.
// Least squares: each row a (weight w) adds w² a aᵀ to AᵀA and w² a (b - Σ_locked a_j x_j) to Aᵀb
// over the free variables. Arguments are validated by the API layer before they reach here.
#pragma once

#include <cstdint>
#include <vector>

#include "assembly/hash_coo.hpp"
#include "conversion/matrix.hpp"

namespace cnc {

struct assembled_system {
  csr_matrix a;                      // over free variables
  std::vector<double> b;             // n_free * k, column-major
  std::vector<std::int32_t> to_var;  // free index -> variable index
};

class builder {
 public:
  // values: n*k column-major variable values (locked values are read at insertion time).
  void begin_matrix(std::int32_t n, std::int32_t k, bool least_squares, bool normalize_rows,
                    const std::vector<std::uint8_t>& locked, const std::vector<double>& values,
                    std::int64_t nnz_hint);
  void add_ij(std::int32_t i, std::int32_t j, double v) {
    if (locked_[i]) return;
    if (locked_[j]) {
      for (std::int32_t s = 0; s < k_; ++s) b_[i + std::size_t(s) * n_] -= v * x_[j + std::size_t(s) * n_];
      return;
    }
    coo_.add(i, j, v);
  }
  void add_rhs(std::int32_t i, std::int32_t s, double v) { b_[i + std::size_t(s) * n_] += v; }

  void begin_row();
  void coefficient(std::int32_t j, double v) { row_.push_back({j, v}); }
  void row_rhs(std::int32_t s, double v) { row_b_[s] = v; }
  void row_scaling(double w) { row_w_ = w; }
  // Returns false when the row index exceeds n in plain mode (caller reports it).
  bool end_row();
  std::int32_t rows_done() const { return row_count_; }

  assembled_system end_matrix();

 private:
  struct entry {
    std::int32_t j;
    double v;
  };
  std::int32_t n_ = 0, k_ = 1;
  bool ls_ = false, normalize_ = false;
  const std::uint8_t* locked_ = nullptr;
  const double* x_ = nullptr;
  std::vector<std::uint8_t> locked_copy_;
  std::vector<double> x_copy_;
  hash_coo coo_;
  std::vector<double> b_;
  std::vector<entry> row_;
  std::vector<double> row_b_;
  double row_w_ = 1.0;
  std::int32_t row_count_ = 0;
};

}  // namespace cnc
