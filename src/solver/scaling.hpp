// Right-hand sides of extreme magnitude. CG and the other methods measure ||b||, ||r|| and their
// dot products as plain sums of squares, in double: b of magnitude 1e-170 squares to 0 (a
// "converged" x = 0) and 1e+160 to Inf. Multiplying b and x by a power of two is exact and
// leaves the solution scaled by the same power, so such systems are solved scaled and x is
// scaled back; systems within the band are untouched (the same bits as before).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "solver/pcg.hpp"  // progress_fn

namespace cnc {

// Systems whose max |b_j| lies outside [2^-band, 2^band] are scaled: their squared norms then stay
// far from double's limits (2^±1022) even at n = 2^31 and a residual 1e-16 of ||b||.
constexpr int rhs_exponent_band = 200;

// max |v_j| of each of the k columns (n rows, column-major), over the host threads.
std::vector<double> column_max_abs(const double* v, std::size_t n, int k);

// The exponent e_j that brings max |b_j| into [1, 2) for systems outside the band; 0 for the
// others and for b_j = 0. Empty when every exponent is 0 (nothing to scale).
std::vector<int> rhs_exponents(const std::vector<double>& max_abs);

// out_j = 2^(sign * e_j) in_j, column by column (in == out allowed).
void scale_columns(const double* in, double* out, std::size_t n, const std::vector<int>& e,
                   int sign);

// One solve's scaling, for every path that solves host b and x (the pipeline, the caller's
// operators, libcnc_mpi): scaled copies of b and x when a system is outside the band (the
// caller's arrays untouched until finish), the progress callback's iterate in the caller's scale,
// x scaled back into the caller's array at the end.
class rhs_scaling {
 public:
  // max_abs: max |b_j| of each system (column_max_abs; over every process for a split system).
  rhs_scaling(const std::vector<double>& max_abs, const double* b, double* x, std::size_t n, int k);
  bool active() const { return !e_.empty(); }
  const std::vector<int>& exponents() const { return e_; }
  const double* b() const { return active() ? b_.data() : b_caller_; }
  double* x() { return active() ? x_.data() : x_caller_; }
  // The callback, its iterate scaled back (p itself when inactive or empty).
  progress_fn wrap(const progress_fn& p) const;
  // The caller's x from the scaled one (nothing when inactive).
  void finish() const;
  // One line per scaled system, for the log.
  std::vector<std::string> messages() const;

 private:
  std::vector<int> e_;
  std::size_t n_;
  const double* b_caller_;
  double* x_caller_;
  std::vector<double> b_, x_;
};

}  // namespace cnc
