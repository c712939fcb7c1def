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

// One pass of block CG's Gram products over a group whose vectors all have the stride g.kc
// (cuda_block.cpp uses it when the system is one group): for pair c,
// result[c*g.k*g.k + a*g.k + b] = Σ vec[ia[c]]_a vec[ib[c]]_b over every column pair (no mask),
// in double, per-block partials (pairs * kc * kc * grid doubles) then summed in block order.
// pairs: 1, 2 or 4 (cudaErrorNotSupported otherwise); nvec <= 4.
struct block_fused {
  const void* vec[4];
  int nvec = 0;
  int pairs = 0;
  int ia[8], ib[8];
};
cudaError_t block_fused_pass(precision pr, const group_view& g, const block_fused& f,
                             double* partials, double* result, cudaStream_t s);

// Block CG's update in one pass over such a group: for the columns of `mask`,
// x_j += Σ_a alpha[a][j] p_a, r_j -= Σ_a alpha[a][j] q_a, z_j = d∘r_j (zero coefficients
// skipped; z nullptr: not stored, the products take d∘r_j for every column); then over every
// column, result = QᵀZ, ZᵀZ, PᵀZ, PᵀP, RᵀZ (g.k * g.k each, as
// block_fused_pass) followed by r_j·z_j and r_j·r_j (g.k each). Partials:
// (block_update_grams * kc * kc + 2 * kc) * grid doubles.
constexpr int block_update_grams = 5;
struct block_update_args {
  const void* p = nullptr;
  const void* q = nullptr;
  void* x = nullptr;
  void* r = nullptr;
  void* z = nullptr;
  unsigned int mask = 0;
  double alpha[8][8];
};
cudaError_t block_update_pass(precision pr, const group_view& g, const block_update_args& f,
                              double* partials, double* result, cudaStream_t s);

// y = A x over every column of the group as the plain SpMV (not CG mode) and, in the same pass,
// result[a*g.k + b] = Σ x_a y_b over every column pair (block_fused_pass's layout, order and
// partials: kc * kc * a.grid doubles). Only where spmv_sell_gram_on: SELL with split rows,
// double vectors, kc = 8, and code built for sm_80 or later on the current device (FP64 tensor
// cores; the PTX kept for older GPUs has no such kernel body). Defined in spmv_sell.cu.
bool spmv_sell_gram_on(precision pr, const matrix_view& a, const group_view& g);
cudaError_t spmv_sell_gram(precision pr, const matrix_view& a, const group_view& g, const void* x,
                           void* y, double* partials, double* result, cudaStream_t s);

// y_i = Σ_a c1[a][i] v1_a + Σ_a c2[a][i] v2_a for every slot i of the group (zero
// coefficients skipped, v1's terms first), one pass; y is neither v1 nor v2. scale_v1: v1's
// values taken as g.d∘v1.
struct block_coefs2 {
  double c1[8][8], c2[8][8];
  int scale_v1 = 0;
};
cudaError_t block_combine2(precision pr, const group_view& g, const block_coefs2& c, const void* v1,
                           const void* v2, void* y, cudaStream_t s);

}  // namespace cnc::cuda
