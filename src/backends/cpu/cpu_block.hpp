// The CPU backend's cross-column products (device_system::block_dots, block_combine), over one
// chunk of rows of the backend's interleaved layout (row r, column j at r*k + j). The system
// (cpu_backend.cpp) runs them over its fixed row chunks and sums the chunks' partials in chunk
// order, so the bits do not depend on the thread count.
#pragma once

#include <cstdint>

namespace cnc::cpu_block {

// part[i*k + j] = Σ_{r in [r0, r1)} u[r*k + i] v[r*k + j] (in double) for active j (mask[j]);
// part's other entries are left as they are.
void gram(const double* u, const double* v, int k, std::int64_t r0, std::int64_t r1,
          const std::uint8_t* mask, double* part);
void gram(const float* u, const float* v, int k, std::int64_t r0, std::int64_t r1,
          const std::uint8_t* mask, double* part);

// y_j = beta_j y_j + Σ_i coef[i*k + j] v_i over rows [r0, r1) for active j, in the vectors'
// precision; zero coefficients skipped, beta_j == 0 overwrites.
void combine(const double* v, const double* coef, const double* beta, int k, std::int64_t r0,
             std::int64_t r1, const std::uint8_t* mask, double* y);
void combine(const float* v, const float* coef, const float* beta, int k, std::int64_t r0,
             std::int64_t r1, const std::uint8_t* mask, float* y);

}  // namespace cnc::cpu_block
