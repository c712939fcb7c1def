// The cross-column products of the CUDA vector surface (device_system::block_dots,
// block_combine) over two groups' interleaved vectors (v[i*kc + j]). Written for clarity: a
// grid-stride loop over rows per thread, a fixed-order block reduction, and the blocks' partials
// summed in block order by a second launch, so the same inputs on the same grid give the same
// bits (no floating-point atomics).
#include "backends/cuda/cuda_block_kernels.hpp"
#include "common.cuh"

namespace cnc::cuda {
namespace {

// Per-block partials of u_a . v_b for the pairs p0 .. p0 + block_pairs - 1 (p = a * kb + b).
template <class V>
__global__ void __launch_bounds__(block_threads)
    k_gram_part(int n, int kca, int ka, int kcb, int kb, unsigned int mask_b, int p0,
                const V* __restrict__ u, const V* __restrict__ v, double* part) {
  __shared__ double smem[block_threads];
  double s[block_pairs];
  int ia[block_pairs], ib[block_pairs];
#pragma unroll
  for (int q = 0; q < block_pairs; ++q) {
    const int p = p0 + q;
    s[q] = 0.0;
    ia[q] = p < ka * kb ? p / kb : -1;
    ib[q] = p < ka * kb ? p % kb : -1;
    if (ia[q] >= 0 && !((mask_b >> ib[q]) & 1u)) ia[q] = -1;
  }
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; r < n;
       r += step) {
#pragma unroll
    for (int q = 0; q < block_pairs; ++q)
      if (ia[q] >= 0)
        s[q] = __fma_rn(static_cast<double>(__ldg(u + r * kca + ia[q])),
                        static_cast<double>(__ldg(v + r * kcb + ib[q])), s[q]);
  }
#pragma unroll
  for (int q = 0; q < block_pairs; ++q) {
    smem[threadIdx.x] = s[q];
    __syncthreads();
    for (int off = blockDim.x / 2; off > 0; off >>= 1) {
      if (threadIdx.x < off) smem[threadIdx.x] += smem[threadIdx.x + off];
      __syncthreads();
    }
    if (threadIdx.x == 0) part[static_cast<long long>(q) * gridDim.x + blockIdx.x] = smem[0];
    __syncthreads();
  }
}

// One thread per pair: the partials of `blocks` blocks in block order.
__global__ void k_gram_sum(int blocks, int ka, int kb, unsigned int mask_b, int p0,
                           const double* part, double* result, int stride) {
  const int q = threadIdx.x;
  const int p = p0 + q;
  if (q >= block_pairs || p >= ka * kb) return;
  const int a = p / kb, b = p % kb;
  if (!((mask_b >> b) & 1u)) return;
  double t = 0.0;
  for (int blk = 0; blk < blocks; ++blk) t += part[static_cast<long long>(q) * blocks + blk];
  result[static_cast<long long>(a) * stride + b] = t;
}

template <class V>
__global__ void __launch_bounds__(block_threads)
    k_block_combine(int n, int kcv, int kv, int kcy, unsigned int mask_y, block_coefs c,
                    const V* __restrict__ v, V* y) {
  const long long total = static_cast<long long>(n) * kcy;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long f = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; f < total;
       f += step) {
    const int j = static_cast<int>(f % kcy);
    if (!((mask_y >> j) & 1u)) continue;
    const long long r = f / kcy;
    V acc;
    if (c.first)
      acc = c.beta[j] == 0.0 ? V(0) : static_cast<V>(c.beta[j]) * y[f];
    else
      acc = y[f];
    for (int a = 0; a < kv; ++a) {
      const double cf = c.coef[a][j];
      if (cf != 0.0) acc += static_cast<V>(cf) * v[r * kcv + a];
    }
    y[f] = acc;
  }
}

}  // namespace

cudaError_t block_gram(precision pr, const group_view& ga, const group_view& gb,
                       unsigned int mask_b, const void* u, const void* v, double* partials,
                       double* result, int stride, cudaStream_t s) {
  if (ga.n == 0 || mask_b == 0) return cudaSuccess;
  const int pairs = ga.k * gb.k, grid = ga.grid > 0 ? ga.grid : 1;
  for (int p0 = 0; p0 < pairs; p0 += block_pairs) {
    const cudaError_t e = with_prec(pr, [&](auto t) {
      using V = typename decltype(t)::vec;
      k_gram_part<V><<<grid, block_threads, 0, s>>>(ga.n, ga.kc, ga.k, gb.kc, gb.k, mask_b, p0,
                                                    static_cast<const V*>(u),
                                                    static_cast<const V*>(v), partials);
      return cudaGetLastError();
    });
    if (e != cudaSuccess) return e;
    k_gram_sum<<<1, block_pairs, 0, s>>>(grid, ga.k, gb.k, mask_b, p0, partials, result, stride);
    const cudaError_t e2 = cudaGetLastError();
    if (e2 != cudaSuccess) return e2;
  }
  return cudaSuccess;
}

cudaError_t block_combine(precision pr, const group_view& gv, const group_view& gy,
                          unsigned int mask_y, const block_coefs& c, const void* v, void* y,
                          cudaStream_t s) {
  if (gy.n == 0 || mask_y == 0) return cudaSuccess;
  const int grid = gy.grid > 0 ? gy.grid : 1;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    k_block_combine<V><<<grid, block_threads, 0, s>>>(gy.n, gv.kc, gv.k, gy.kc, mask_y, c,
                                                      static_cast<const V*>(v), static_cast<V*>(y));
    return cudaGetLastError();
  });
}

}  // namespace cnc::cuda
