// The cross-column products of the CUDA vector surface (device_system::block_dots,
// block_combine) over two groups' interleaved vectors (v[i*kc + j]). The Gram product reads each
// vector once (tiles of rows staged in shared memory, one thread lane per column pair), adds in a
// fixed order within a block, and a second launch sums the blocks' partials in block order, so
// the same inputs on the same grid give the same bits (no floating-point atomics).
#include "backends/cuda/cuda_block_kernels.hpp"
#include "common.cuh"

namespace cnc::cuda {
namespace {

// Per-block partials of u_a . v_b for every pair p = a * kb + b (a < ka, b < kb active; at most
// 64 pairs: groups hold at most 8 systems) in ONE pass over u and v: each block stages tiles of
// gram_tile rows of both vectors in shared memory (coalesced loads of the interleaved rows), and
// thread t adds, for pair t % 64, the rows t / 64, t / 64 + 4, ... of the tile; the four threads
// of a pair are then added in a fixed order into part[p * gridDim.x + blockIdx.x].
constexpr int gram_tile = 64;
constexpr int gram_slots = 64;  // pairs per block pass (ka * kb <= 64)

template <class V>
__global__ void __launch_bounds__(block_threads)
    k_gram_part(int n, int kca, int ka, int kcb, int kb, unsigned int mask_b,
                const V* __restrict__ u, const V* __restrict__ v, double* part) {
  static_assert(block_threads % gram_slots == 0, "whole pair lanes");
  constexpr int lanes = block_threads / gram_slots;
  __shared__ double su[gram_tile * 8], sv[gram_tile * 8];
  __shared__ double red[block_threads];
  const int t = threadIdx.x, p = t % gram_slots, sub = t / gram_slots;
  const int pairs = ka * kb;
  const int a = p < pairs ? p / kb : 0, b = p < pairs ? p % kb : 0;
  const bool on = p < pairs && ((mask_b >> b) & 1u);
  double acc = 0.0;
  for (long long r0 = static_cast<long long>(blockIdx.x) * gram_tile; r0 < n;
       r0 += static_cast<long long>(gridDim.x) * gram_tile) {
    const int rows = n - r0 < gram_tile ? static_cast<int>(n - r0) : gram_tile;
    for (int e = t; e < gram_tile * kca; e += block_threads)
      su[e] = e < rows * kca ? static_cast<double>(__ldg(u + r0 * kca + e)) : 0.0;
    for (int e = t; e < gram_tile * kcb; e += block_threads)
      sv[e] = e < rows * kcb ? static_cast<double>(__ldg(v + r0 * kcb + e)) : 0.0;
    __syncthreads();
    if (on)
      for (int r = sub; r < rows; r += lanes) acc = __fma_rn(su[r * kca + a], sv[r * kcb + b], acc);
    __syncthreads();
  }
  red[t] = acc;
  __syncthreads();
  if (t < gram_slots && p < pairs) {
    double s = 0.0;
    for (int l = 0; l < lanes; ++l) s += red[l * gram_slots + t];
    part[static_cast<long long>(p) * gridDim.x + blockIdx.x] = s;
  }
}

// One block per pair: its `blocks` partials summed by the block's threads (thread t takes blocks
// t, t + blockDim.x, ... in order), then across the threads in block_sum_by_slot's fixed order:
// the same bits for the same inputs and grid, with every thread's loads in flight at once (one
// thread per pair summing a thousand partials in a chain cost ~0.1 ms a product).
__global__ void __launch_bounds__(block_threads)
    k_gram_sum(int blocks, int kb, unsigned int mask_b, const double* part, double* result,
               int stride) {
  __shared__ double smem[block_threads / 32];
  const int p = static_cast<int>(blockIdx.x);
  const int a = p / kb, b = p % kb;
  if (!((mask_b >> b) & 1u)) return;  // the whole block: no barrier is left waiting
  double t = 0.0;
  for (int blk = static_cast<int>(threadIdx.x); blk < blocks; blk += static_cast<int>(blockDim.x))
    t += __ldcg(part + static_cast<long long>(p) * blocks + blk);
  t = block_sum_by_slot<1>(t, smem);
  if (threadIdx.x == 0) result[static_cast<long long>(a) * stride + b] = t;
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
  if (ga.k * gb.k > gram_slots) return cudaErrorInvalidValue;
  const int grid = ga.grid > 0 ? ga.grid : 1;
  const cudaError_t e = with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    k_gram_part<V><<<grid, block_threads, 0, s>>>(ga.n, ga.kc, ga.k, gb.kc, gb.k, mask_b,
                                                  static_cast<const V*>(u),
                                                  static_cast<const V*>(v), partials);
    return cudaGetLastError();
  });
  if (e != cudaSuccess) return e;
  k_gram_sum<<<ga.k * gb.k, block_threads, 0, s>>>(grid, gb.k, mask_b, partials, result, stride);
  return cudaGetLastError();
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
