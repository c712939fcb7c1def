// The CPU backend's cross-column products (see cpu_block.hpp).
#include "backends/cpu/cpu_block.hpp"

#include <cstddef>
#include <vector>

namespace cnc::cpu_block {
namespace {

template <class VT>
void gram_t(const VT* u, const VT* v, int k, std::int64_t r0, std::int64_t r1,
            const std::uint8_t* mask, double* part) {
  const std::size_t ks = std::size_t(k);
  std::vector<double> s(ks * ks, 0.0);
  for (std::int64_t r = r0; r < r1; ++r) {
    const VT* ur = u + r * k;
    const VT* vr = v + r * k;
    for (std::size_t i = 0; i < ks; ++i) {
      const double ui = double(ur[i]);
      double* si = s.data() + i * ks;
      for (std::size_t j = 0; j < ks; ++j) si[j] += ui * double(vr[j]);
    }
  }
  for (std::size_t i = 0; i < ks; ++i)
    for (std::size_t j = 0; j < ks; ++j)
      if (mask[j]) part[i * ks + j] = s[i * ks + j];
}

template <class VT>
void combine_t(const VT* v, const VT* coef, const VT* beta, int k, std::int64_t r0, std::int64_t r1,
               const std::uint8_t* mask, VT* y) {
  const std::size_t ks = std::size_t(k);
  for (std::int64_t r = r0; r < r1; ++r) {
    const VT* vr = v + r * k;
    VT* yr = y + r * k;
    for (std::size_t j = 0; j < ks; ++j) {
      if (!mask[j]) continue;
      VT s = beta[j] == VT(0) ? VT(0) : beta[j] * yr[j];
      for (std::size_t i = 0; i < ks; ++i) {
        const VT c = coef[i * ks + j];
        if (c != VT(0)) s += c * vr[i];
      }
      yr[j] = s;
    }
  }
}

}  // namespace

void gram(const double* u, const double* v, int k, std::int64_t r0, std::int64_t r1,
          const std::uint8_t* mask, double* part) {
  gram_t(u, v, k, r0, r1, mask, part);
}
void gram(const float* u, const float* v, int k, std::int64_t r0, std::int64_t r1,
          const std::uint8_t* mask, double* part) {
  gram_t(u, v, k, r0, r1, mask, part);
}
void combine(const double* v, const double* coef, const double* beta, int k, std::int64_t r0,
             std::int64_t r1, const std::uint8_t* mask, double* y) {
  combine_t(v, coef, beta, k, r0, r1, mask, y);
}
void combine(const float* v, const float* coef, const float* beta, int k, std::int64_t r0,
             std::int64_t r1, const std::uint8_t* mask, float* y) {
  combine_t(v, coef, beta, k, r0, r1, mask, y);
}

}  // namespace cnc::cpu_block
