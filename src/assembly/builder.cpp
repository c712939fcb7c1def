// System builder (see builder.hpp).
#include "assembly/builder.hpp"

#include <algorithm>
#include <cmath>

namespace cnc {

void builder::begin_matrix(std::int32_t n, std::int32_t k, bool least_squares, bool normalize_rows,
                           const std::vector<std::uint8_t>& locked,
                           const std::vector<double>& values, std::int64_t nnz_hint) {
  n_ = n, k_ = k, ls_ = least_squares, normalize_ = normalize_rows;
  // Own copies: the caller may not change variables during assembly, but we do not rely on it.
  locked_copy_ = locked;
  x_copy_ = values;
  locked_ = locked_copy_.data();
  x_ = x_copy_.data();
  coo_.reset(n, nnz_hint);
  b_.assign(std::size_t(n) * k, 0.0);
  row_b_.assign(std::size_t(k), 0.0);
  row_count_ = 0;
}

void builder::begin_row() {
  row_.clear();
  std::fill(row_b_.begin(), row_b_.end(), 0.0);
  row_w_ = 1.0;
}

bool builder::end_row() {
  // Merge repeated columns so that normalization sees the row's true coefficients.
  std::sort(row_.begin(), row_.end(), [](const entry& a, const entry& b) { return a.j < b.j; });
  std::size_t m = 0;
  for (std::size_t t = 0; t < row_.size(); ++t) {
    if (m > 0 && row_[m - 1].j == row_[t].j)
      row_[m - 1].v += row_[t].v;
    else
      row_[m++] = row_[t];
  }
  row_.resize(m);
  double w = row_w_;
  if (normalize_) {
    double norm2 = 0.0;
    for (const entry& e : row_) norm2 += e.v * e.v;
    if (norm2 > 0.0) w /= std::sqrt(norm2);
  }
  if (!ls_) {
    std::int32_t i = row_count_;
    if (i >= n_) return false;
    ++row_count_;
    for (const entry& e : row_) add_ij(i, e.j, w * e.v);
    if (!locked_[i])
      for (std::int32_t s = 0; s < k_; ++s) add_rhs(i, s, w * row_b_[s]);
    return true;
  }
  ++row_count_;
  // Least squares: right-hand sides minus the locked part, then the weighted outer product.
  for (std::int32_t s = 0; s < k_; ++s) {
    double bs = row_b_[s];
    for (const entry& e : row_)
      if (locked_[e.j]) bs -= e.v * x_[e.j + std::size_t(s) * n_];
    for (const entry& e : row_)
      if (!locked_[e.j]) b_[e.j + std::size_t(s) * n_] += w * w * e.v * bs;
  }
  for (const entry& p : row_) {
    if (locked_[p.j]) continue;
    for (const entry& q : row_)
      if (!locked_[q.j]) coo_.add(p.j, q.j, w * w * p.v * q.v);
  }
  return true;
}

assembled_system builder::end_matrix() {
  assembled_system out;
  std::vector<std::int32_t> map(std::size_t(n_), -1);
  std::int32_t n_free = 0;
  for (std::int32_t i = 0; i < n_; ++i)
    if (!locked_[i]) {
      map[i] = n_free++;
      out.to_var.push_back(i);
    }
  out.a = coo_.to_csr(n_free == n_ ? std::vector<std::int32_t>{} : map, n_free);
  out.b.resize(std::size_t(n_free) * k_);
  for (std::int32_t s = 0; s < k_; ++s)
    for (std::int32_t f = 0; f < n_free; ++f)
      out.b[f + std::size_t(s) * n_free] = b_[out.to_var[f] + std::size_t(s) * n_];
  coo_.reset(1, 0);  // release the table's memory
  b_.clear();
  b_.shrink_to_fit();
  return out;
}

}  // namespace cnc
