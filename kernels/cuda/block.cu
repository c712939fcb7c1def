// The cross-column products of the CUDA vector surface (device_system::block_dots,
// block_combine) over two groups' interleaved vectors (v[i*kc + j]). The Gram product reads each
// vector once (groups of one stride: one element a thread and warp shuffles; else tiles of rows
// staged in shared memory, one thread lane per column pair), adds in a fixed order within a
// block, and a second launch sums the blocks' partials in block order, so the same inputs on the
// same grid give the same bits (no floating-point atomics).
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

// The same products when u and v (v and y for block_combine) share the stride KC, as they do
// whenever every group holds KC systems (k = 8, 16, ...): the KC values of a row sit in KC
// adjacent lanes of a warp, so each thread loads its own element (coalesced, no staging, no
// barrier in the loop) and takes the row's other values by warp shuffles. Thread slot j
// accumulates the pairs (a = j, b) for every b; block_sum_by_slot adds them in a fixed order.
// The warps stride over whole warps' spans so that every lane of a warp reaches each shuffle.
// Elements each thread loads before it uses any: with one or two loads in flight a thread, these
// passes moved ~2.4 TB/s on an H200 (run 102, Nsight Compute), far from its bandwidth.
constexpr int lanes_unroll = 4;

template <class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_gram_part_lanes(int n, int ka, int kb, unsigned int mask_b, const V* __restrict__ u,
                      const V* __restrict__ v, double* part) {
  __shared__ double smem[(block_threads / 32) * KC];
  const int lane = static_cast<int>(threadIdx.x) & 31, j = lane & (KC - 1), row0 = lane - j;
  const bool same = u == v;  // a Gram matrix of one block: read it once
  double acc[KC];
#pragma unroll
  for (int b = 0; b < KC; ++b) acc[b] = 0.0;
  const long long total = static_cast<long long>(n) * KC;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long f0 = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       f0 - lane < total; f0 += lanes_unroll * step) {
    double uf[lanes_unroll], vf[lanes_unroll];
#pragma unroll
    for (int q = 0; q < lanes_unroll; ++q) {
      const long long f = f0 + q * step;
      uf[q] = f < total ? static_cast<double>(__ldg(u + f)) : 0.0;
      vf[q] = f < total && !same ? static_cast<double>(__ldg(v + f)) : uf[q];
    }
#pragma unroll
    for (int q = 0; q < lanes_unroll; ++q)
#pragma unroll
      for (int b = 0; b < KC; ++b)
        acc[b] = __fma_rn(uf[q], __shfl_sync(0xffffffffu, vf[q], row0 + b), acc[b]);
  }
#pragma unroll
  for (int b = 0; b < KC; ++b) {
    const double s = block_sum_by_slot<KC>(acc[b], smem);  // thread a: the pair (a, b)
    const int a = static_cast<int>(threadIdx.x);
    if (a < ka && b < kb && ((mask_b >> b) & 1u))
      part[static_cast<long long>(a * kb + b) * gridDim.x + blockIdx.x] = s;
  }
}

template <class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_block_combine_lanes(int n, int kv, unsigned int mask_y, block_coefs c,
                          const V* __restrict__ v, V* y) {
  // The coefficients in shared memory: a parameter indexed by each lane's own slot would be
  // read one distinct address at a time.
  __shared__ double sc[8][8], sb[8];
  if (threadIdx.x < 64)
    sc[threadIdx.x / 8][threadIdx.x % 8] = c.coef[threadIdx.x / 8][threadIdx.x % 8];
  if (threadIdx.x < 8) sb[threadIdx.x] = c.beta[threadIdx.x];
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) & 31, j = lane & (KC - 1), row0 = lane - j;
  const bool on = (mask_y >> j) & 1u;
  const bool read_y = on && (!c.first || sb[j] != 0.0);
  const long long total = static_cast<long long>(n) * KC;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long f0 = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       f0 - lane < total; f0 += lanes_unroll * step) {
    V vf[lanes_unroll], acc[lanes_unroll];
#pragma unroll
    for (int q = 0; q < lanes_unroll; ++q) {
      const long long f = f0 + q * step;
      vf[q] = f < total ? __ldg(v + f) : V(0);
      acc[q] = f < total && read_y ? y[f] : V(0);
      if (c.first && read_y) acc[q] = static_cast<V>(sb[j]) * acc[q];
    }
#pragma unroll
    for (int q = 0; q < lanes_unroll; ++q) {
      for (int a = 0; a < kv; ++a) {  // the same order of additions as k_block_combine
        const V va = __shfl_sync(0xffffffffu, vf[q], row0 + a);
        const double cf = sc[a][j];
        if (cf != 0.0) acc[q] += static_cast<V>(cf) * va;
      }
      const long long f = f0 + q * step;
      if (f < total && on) y[f] = acc[q];
    }
  }
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
    if (ga.kc == gb.kc)
      return with_kc(ga.kc, [&](auto kc) {
        k_gram_part_lanes<V, decltype(kc)::value><<<grid, block_threads, 0, s>>>(
            ga.n, ga.k, gb.k, mask_b, static_cast<const V*>(u), static_cast<const V*>(v), partials);
        return cudaGetLastError();
      });
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
    if (gv.kc == gy.kc)
      return with_kc(gy.kc, [&](auto kc) {
        k_block_combine_lanes<V, decltype(kc)::value><<<grid, block_threads, 0, s>>>(
            gy.n, gv.k, mask_y, c, static_cast<const V*>(v), static_cast<V*>(y));
        return cudaGetLastError();
      });
    k_block_combine<V><<<grid, block_threads, 0, s>>>(gy.n, gv.kc, gv.k, gy.kc, mask_y, c,
                                                      static_cast<const V*>(v), static_cast<V*>(y));
    return cudaGetLastError();
  });
}

}  // namespace cnc::cuda
