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

}  // namespace cnc
