// Gram products of warp tiles on the FP64 tensor cores and the per-block partials of the fused
// passes: shared by block CG's passes (block.cu) and the SpMV that gives PᵀQ with Q = A P
// (spmv_sell.cu). The partials are summed by gram_sum (block.cu) in block order.
#pragma once

#include <cuda_runtime.h>
#include <mma.h>

#include <type_traits>

#include "common.cuh"

namespace cnc::cuda {

// A Gram product of a warp's tile (4 rows x 8 columns of u and v, row-major, 32-byte aligned) on
// the FP64 tensor cores: acc += uᵀ v in one mma (u's tile read as the column-major 8 x 4 matrix
// uᵀ). Three fragment registers a product instead of eight running sums a thread, and no row of
// v read back per element: with the sums the update pass held 122 registers, two blocks an SM,
// and moved 57 % of the H200's bandwidth (run 132). sm_80 on, double, kc = 8 (`gram_mma_on`);
// the PTX for older GPUs keeps the sums.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define CNC_GRAM_MMA 1
#else
#define CNC_GRAM_MMA 0
#endif
template <class V, int KC>
constexpr bool gram_mma_on = CNC_GRAM_MMA != 0 && KC == 8 && std::is_same_v<V, double>;

struct gram_acc {
#if CNC_GRAM_MMA
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 8, 8, 4, double> f;
#endif
};
__device__ __forceinline__ void gram_zero(gram_acc& acc) {
#if CNC_GRAM_MMA
  nvcuda::wmma::fill_fragment(acc.f, 0.0);
#else
  (void)acc;
#endif
}
__device__ __forceinline__ void gram_mma(gram_acc& acc, const double* u, const double* v) {
#if CNC_GRAM_MMA
  namespace wm = nvcuda::wmma;
  wm::fragment<wm::matrix_a, 8, 8, 4, double, wm::col_major> a;
  wm::fragment<wm::matrix_b, 8, 8, 4, double, wm::row_major> b;
  wm::load_matrix_sync(a, u, 8);
  wm::load_matrix_sync(b, v, 8);
  wm::mma_sync(acc.f, a, b, acc.f);
#else
  (void)acc, (void)u, (void)v;
#endif
}
// Entry (a, b) of the warp's sum into red[b * 8 + a] (warp_rows_sum's layout).
__device__ __forceinline__ void gram_store(double* red, const gram_acc& acc) {
#if CNC_GRAM_MMA
  nvcuda::wmma::store_matrix_sync(red, acc.f, 8, nvcuda::wmma::mem_col_major);
#else
  (void)red, (void)acc;
#endif
}

// The block's partials of `count` entries, red[warp * count + t] added over the warps in order.
__device__ __forceinline__ void block_partials(const double* red, int count, double* part) {
  constexpr int warps = block_threads / 32;
  __syncthreads();
  for (int t = static_cast<int>(threadIdx.x); t < count; t += block_threads) {
    double sum = 0.0;
    for (int w = 0; w < warps; ++w) sum += red[w * count + t];
    part[static_cast<long long>(t) * gridDim.x + blockIdx.x] = sum;
  }
}

// One block per entry t of a fused pass's partials (`blocks` per entry, the layout block_partials
// writes), summed in block order: the pairs' entries t = (c*kc + b)*kc + a into
// result[c*k*k + a*k + b] (a, b < k), then `diag` rows of kc diagonal entries into
// result[pairs*k*k + d*k + a]. kc: 1, 2, 4 or 8.
cudaError_t gram_sum(int kc, int blocks, int k, int pairs, int diag, const double* part,
                     double* result, cudaStream_t s);

}  // namespace cnc::cuda
