// Launchers of the CUDA backend's cross-column products (kernels/cuda/block.cu), for
// device_system::block_dots / block_combine (cuda_block.cpp). Systems live in groups of at most
// 8 (cuda_kernels.hpp's layout, v[i*kc + j]); a product of columns of two groups is one call per
// pair of groups.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/cuda_kernels.hpp"
#include "matrix/format.hpp"

namespace cnc::cuda {

// result[a*stride + b] = Σ u_a v_b (double) for a < ga.k, b < gb.k with mask_b bit b set,
// u of group ga and v of group gb (same rows n). One pass over u and v, deterministic: per-block
// partials (partials: ga.k * gb.k * ga.grid doubles), then one thread per pair sums them in
// block order (two launches). `result` is device memory (or mapped); entries of masked b are not
// written.
cudaError_t block_gram(precision pr, const group_view& ga, const group_view& gb,
                       unsigned int mask_b, const void* u, const void* v, double* partials,
                       double* result, int stride, cudaStream_t s);

// The coefficients of one (v group, y group) pair of block_combine: y_j = (first ? beta_j y_j :
// y_j) + Σ_a coef[a][j] v_a for slots j of y's group with mask bit j, zero coefficients skipped,
// beta_j == 0 overwriting.
struct block_coefs {
  double beta[8];
  double coef[8][8];  // [a of v's group][j of y's group]
  int first;
};
cudaError_t block_combine(precision pr, const group_view& gv, const group_view& gy,
                          unsigned int mask_y, const block_coefs& c, const void* v, void* y,
                          cudaStream_t s);

}  // namespace cnc::cuda
