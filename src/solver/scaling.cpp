#include "solver/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "util/parallel.hpp"

namespace cnc {

namespace {
constexpr std::int64_t grain = std::int64_t(1) << 16;
}

std::vector<double> column_max_abs(const double* v, std::size_t n, int k) {
  std::vector<double> out(static_cast<std::size_t>(k), 0.0);
  const std::int64_t len = std::int64_t(n), pieces = piece_count(len, grain);
  for (int j = 0; j < k; ++j) {
    const double* vj = v + std::size_t(j) * n;
    std::vector<double> part(static_cast<std::size_t>(pieces), 0.0);
    parallel_pieces(len, grain, host_threads(),
                    [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
                      double m = 0.0;
                      for (std::int64_t i = i0; i < i1; ++i) m = std::max(m, std::fabs(vj[i]));
                      part[std::size_t(p)] = m;
                    });
    for (double m : part) out[std::size_t(j)] = std::max(out[std::size_t(j)], m);
  }
  return out;
}

std::vector<int> rhs_exponents(const std::vector<double>& max_abs) {
  std::vector<int> e(max_abs.size(), 0);
  bool any = false;
  for (std::size_t j = 0; j < max_abs.size(); ++j) {
    const double m = max_abs[j];
    if (m == 0.0 || !std::isfinite(m)) continue;
    const int x = std::ilogb(m);  // 2^x <= m < 2^(x+1), subnormals included
    if (x < -rhs_exponent_band || x > rhs_exponent_band) e[j] = -x, any = true;
  }
  if (!any) e.clear();
  return e;
}

void scale_columns(const double* in, double* out, std::size_t n, const std::vector<int>& e,
                   int sign) {
  for (std::size_t j = 0; j < e.size(); ++j) {
    const double* a = in + j * n;
    double* b = out + j * n;
    const int s = sign * e[j];
    parallel_pieces(std::int64_t(n), grain, host_threads(),
                    [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                      // ldexp rounds once, also where the result is subnormal.
                      for (std::int64_t i = i0; i < i1; ++i) b[i] = std::ldexp(a[i], s);
                    });
  }
}

rhs_scaling::rhs_scaling(const std::vector<double>& max_abs, const double* b, double* x,
                         std::size_t n, int k)
    : e_(rhs_exponents(max_abs)), n_(n), b_caller_(b), x_caller_(x) {
  if (e_.empty()) return;
  const std::size_t nk = n * std::size_t(k);
  b_.resize(nk), x_.resize(nk);
  scale_columns(b, b_.data(), n, e_, 1);
  scale_columns(x, x_.data(), n, e_, 1);
}

progress_fn rhs_scaling::wrap(const progress_fn& p) const {
  if (!active() || !p) return p;
  return [this, p](std::int64_t it, double res, const iterate_reader* rd) {
    if (!rd) return p(it, res, nullptr);
    const iterate_reader unscaled = [&](double* out) {
      (*rd)(out);
      scale_columns(out, out, n_, e_, -1);
    };
    return p(it, res, &unscaled);
  };
}

void rhs_scaling::finish() const {
  if (active()) scale_columns(x_.data(), x_caller_, n_, e_, -1);
}

std::vector<std::string> rhs_scaling::messages() const {
  std::vector<std::string> out;
  for (std::size_t j = 0; j < e_.size(); ++j)
    if (e_[j] != 0)
      out.push_back("right-hand side " + std::to_string(j) + " solved scaled by 2^" +
                    std::to_string(e_[j]) +
                    " (its squared norm would leave double's range); x is scaled back");
  return out;
}

}  // namespace cnc
