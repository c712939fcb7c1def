// The cross-column products of the CUDA vector surface (device_system::block_dots,
// block_combine, and block CG's fused block_grams / block_update / block_combine2) over two groups'
// interleaved vectors (v[i*kc + j]). The Gram product reads each vector once (groups of one stride:
// one element a thread and warp shuffles; else tiles of rows staged in shared memory, one thread
// lane per column pair), adds in a fixed order within a block, and a second launch sums the blocks'
// partials in block order, so the same inputs on the same grid give the same bits (no
// floating-point atomics).
#include "backends/cuda/cuda_block_kernels.hpp"
#include "common.cuh"
#include "gram.cuh"

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

// Block CG's fused passes (k_block_grams, k_block_update, k_block_combine2): one element a
// thread (the lanes layout above), but a row's other values come from a warp-private tile in
// shared memory, one 16-byte load per two doubles, instead of a warp shuffle per value: with
// shuffles these passes were bound by them (a shuffle is two instructions for a double) and
// moved 19-50 % of the H200's bandwidth (run 130). `sel` picks one of the four values with a
// constant index (a runtime index into a register array would spill it to local memory).
template <class V>
__device__ __forceinline__ V sel(const V (&e)[4], int i) {
  return i == 0 ? e[0] : i == 1 ? e[1] : i == 2 ? e[2] : e[3];
}

// The KC values of a row from a tile (16-byte aligned: row0 is a multiple of KC).
template <class V, int KC>
__device__ __forceinline__ void row_from(const V* t, V (&o)[KC]) {
  if constexpr (std::is_same_v<V, double> && KC >= 2) {
#pragma unroll
    for (int b = 0; b < KC; b += 2) {
      const double2 w = reinterpret_cast<const double2*>(t)[b / 2];
      o[b] = w.x, o[b + 1] = w.y;
    }
  } else if constexpr (std::is_same_v<V, float> && KC >= 4) {
#pragma unroll
    for (int b = 0; b < KC; b += 4) {
      const float4 w = reinterpret_cast<const float4*>(t)[b / 4];
      o[b] = w.x, o[b + 1] = w.y, o[b + 2] = w.z, o[b + 3] = w.w;
    }
  } else {
#pragma unroll
    for (int b = 0; b < KC; ++b) o[b] = t[b];
  }
}

// Steps a thread loads before it uses any (two: with one in flight these passes are far from
// the bandwidth, lanes_unroll's note).
constexpr int fused_unroll = 2;

// Each warp's per-lane sums added over its rows (lane a then holds entry (a, b) of a pair), into
// red[warp][e][b][a] for the NE pairs' entries e.
template <int KC, int NE>
__device__ __forceinline__ void warp_rows_sum(const double (&acc)[NE][KC], int lane, double* red) {
#pragma unroll
  for (int c = 0; c < NE; ++c)
#pragma unroll
    for (int b = 0; b < KC; ++b) {
      double v = acc[c][b];
#pragma unroll
      for (int off = 16; off >= KC; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
      if (lane < KC) red[(c * KC + b) * KC + lane] = v;
    }
}

template <class V, int KC, int NP>
__global__ void __launch_bounds__(block_threads, gram_mma_on<V, KC> ? (NP <= 2 ? 4 : 3) : 1)
    k_block_grams(int n, block_fused f, double* part) {
  constexpr int warps = block_threads / 32, U = fused_unroll;
  constexpr bool mma = gram_mma_on<V, KC>;
  __shared__ alignas(32) V tile[warps][U][4][32];
  __shared__ alignas(32) double red[warps * NP * KC * KC];
  const int lane = static_cast<int>(threadIdx.x) & 31, j = lane & (KC - 1), row0 = lane - j;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  double acc[NP][KC];
  gram_acc macc[NP];
#pragma unroll
  for (int c = 0; c < NP; ++c) {
    gram_zero(macc[c]);
#pragma unroll
    for (int b = 0; b < KC; ++b) acc[c][b] = 0.0;
  }
  const long long total = static_cast<long long>(n) * KC;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  // The loop's condition is the same for a whole warp (it strides by whole warps), so every lane
  // reaches each __syncwarp.
  for (long long f0 = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       f0 - lane < total; f0 += U * step) {
    V e[U][4];
#pragma unroll
    for (int q = 0; q < U; ++q) {
      const long long fi = f0 + q * step;
#pragma unroll
      for (int v = 0; v < 4; ++v)
        e[q][v] = fi < total && v < f.nvec ? __ldg(static_cast<const V*>(f.vec[v]) + fi) : V(0);
    }
#pragma unroll
    for (int q = 0; q < U; ++q)
#pragma unroll
      for (int v = 0; v < 4; ++v)
        if (v < f.nvec) tile[warp][q][v][lane] = e[q][v];
    __syncwarp();
#pragma unroll
    for (int q = 0; q < U; ++q)
#pragma unroll
      for (int c = 0; c < NP; ++c) {
        if constexpr (mma) {
          gram_mma(macc[c], reinterpret_cast<const double*>(tile[warp][q][f.ia[c]]),
                   reinterpret_cast<const double*>(tile[warp][q][f.ib[c]]));
        } else {
          const double own = static_cast<double>(sel(e[q], f.ia[c]));
          V o[KC];
          row_from<V, KC>(&tile[warp][q][f.ib[c]][row0], o);
#pragma unroll
          for (int b = 0; b < KC; ++b)
            acc[c][b] = __fma_rn(own, static_cast<double>(o[b]), acc[c][b]);
        }
      }
    __syncwarp();  // the tile is written again in the next step
  }
  if constexpr (mma) {
#pragma unroll
    for (int c = 0; c < NP; ++c) gram_store(red + (warp * NP + c) * KC * KC, macc[c]);
  } else {
    warp_rows_sum<KC, NP>(acc, lane, red + warp * NP * KC * KC);
  }
  block_partials(red, NP * KC * KC, part);
}

// block_update_pass's kernel: the update of the active columns, then QᵀZ, ZᵀZ, PᵀZ, PᵀP, RᵀZ
// (the rows of P, R and Z from warp tiles) and the diagonals r_j·z_j, r_j·r_j (a thread's own
// values). Pairs fixed at compile time so that the 5 * KC + 2 accumulators, not the 6 * KC of
// six general pairs, hold a thread's registers (with six, 173 registers and one block an SM: 19 %
// of the H200's bandwidth, run 131); on the tensor cores each pair is one fragment.
constexpr int update_unroll = 1;

template <class V, int KC>
__global__ void __launch_bounds__(block_threads, gram_mma_on<V, KC> ? 4 : 2)
    k_block_update(int n, block_update_args f, const V* __restrict__ d, double* part) {
  constexpr int warps = block_threads / 32, U = update_unroll, NF = block_update_grams;
  constexpr int entries = NF * KC * KC + 2 * KC;
  constexpr bool mma = gram_mma_on<V, KC>;
  __shared__ alignas(32) V tile[warps][U][4][32];  // p, q, z, r
  __shared__ alignas(32) double red[warps * entries];
  __shared__ double sa[8][8];
  if (threadIdx.x < 64)
    sa[threadIdx.x / 8][threadIdx.x % 8] = f.alpha[threadIdx.x / 8][threadIdx.x % 8];
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) & 31, j = lane & (KC - 1), row0 = lane - j;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const bool on = (f.mask >> j) & 1u;
  const V* __restrict__ p = static_cast<const V*>(f.p);
  const V* __restrict__ qv = static_cast<const V*>(f.q);
  V* x = static_cast<V*>(f.x);
  V* r = static_cast<V*>(f.r);
  V* z = static_cast<V*>(f.z);               // nullptr: Z not stored (d∘r wherever it is used)
  double acc[NF][KC], drz = 0.0, drr = 0.0;  // acc: QᵀZ, ZᵀZ, PᵀZ, PᵀP, RᵀZ
  gram_acc macc[NF];
#pragma unroll
  for (int c = 0; c < NF; ++c) {
    gram_zero(macc[c]);
#pragma unroll
    for (int b = 0; b < KC; ++b) acc[c][b] = 0.0;
  }
  const long long total = static_cast<long long>(n) * KC;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long f0 = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       f0 - lane < total; f0 += U * step) {
    V pe[U], qe[U], re[U], ze[U], xe[U], de[U];
#pragma unroll
    // p, q read whole; x, r, d for the active columns; z kept where not (or d∘r, unstored)
    for (int q = 0; q < U; ++q) {
      const long long fi = f0 + q * step;
      const bool ok = fi < total;
      pe[q] = ok ? __ldg(p + fi) : V(0);
      qe[q] = ok ? __ldg(qv + fi) : V(0);
      re[q] = ok ? r[fi] : V(0);
      de[q] = ok && (on || !z) ? __ldg(d + fi / KC) : V(0);
      ze[q] = !ok ? V(0) : on ? V(0) : z ? z[fi] : de[q] * re[q];
      xe[q] = ok && on ? x[fi] : V(0);
    }
#pragma unroll
    for (int q = 0; q < U; ++q) tile[warp][q][0][lane] = pe[q], tile[warp][q][1][lane] = qe[q];
    __syncwarp();
#pragma unroll
    for (int q = 0; q < U; ++q) {
      V pr[KC], qr[KC];
      row_from<V, KC>(&tile[warp][q][0][row0], pr);
      row_from<V, KC>(&tile[warp][q][1][row0], qr);
      V xa = xe[q], ra = re[q];
#pragma unroll
      for (int a = 0; a < KC; ++a) {
        const double cf = sa[a][j];
        if (on && cf != 0.0) {
          xa += static_cast<V>(cf) * pr[a];
          ra += static_cast<V>(-cf) * qr[a];
        }
      }
      const long long fi = f0 + q * step;
      if (on) {
        re[q] = ra, ze[q] = de[q] * ra;
        if (fi < total) {
          x[fi] = xa, r[fi] = ra;
          if (z) z[fi] = ze[q];
        }
      }
      if constexpr (!mma) {
        const double pd = static_cast<double>(pe[q]);
#pragma unroll
        for (int b = 0; b < KC; ++b)
          acc[3][b] = __fma_rn(pd, static_cast<double>(pr[b]), acc[3][b]);
      }
      tile[warp][q][2][lane] = ze[q];
      if constexpr (mma) tile[warp][q][3][lane] = re[q];  // the sums take r from registers
    }
    __syncwarp();
#pragma unroll
    for (int q = 0; q < U; ++q) {
      const double zd = static_cast<double>(ze[q]), rd = static_cast<double>(re[q]);
      if constexpr (mma) {
        const double* pt = reinterpret_cast<const double*>(tile[warp][q][0]);
        const double* qt = reinterpret_cast<const double*>(tile[warp][q][1]);
        const double* zt = reinterpret_cast<const double*>(tile[warp][q][2]);
        const double* rt = reinterpret_cast<const double*>(tile[warp][q][3]);
        gram_mma(macc[0], qt, zt);
        gram_mma(macc[1], zt, zt);
        gram_mma(macc[2], pt, zt);
        gram_mma(macc[3], pt, pt);
        gram_mma(macc[4], rt, zt);
      } else {
        V zr[KC];
        row_from<V, KC>(&tile[warp][q][2][row0], zr);
        const double qd = static_cast<double>(qe[q]), pd = static_cast<double>(pe[q]);
#pragma unroll
        for (int b = 0; b < KC; ++b) {
          const double zb = static_cast<double>(zr[b]);
          acc[0][b] = __fma_rn(qd, zb, acc[0][b]);
          acc[1][b] = __fma_rn(zd, zb, acc[1][b]);
          acc[2][b] = __fma_rn(pd, zb, acc[2][b]);
          acc[4][b] = __fma_rn(rd, zb, acc[4][b]);
        }
      }
      drz = __fma_rn(rd, zd, drz);
      drr = __fma_rn(rd, rd, drr);
    }
    __syncwarp();  // the tiles are written again in the next step
  }
  double* mine = red + warp * entries;
  if constexpr (mma) {
#pragma unroll
    for (int c = 0; c < NF; ++c) gram_store(mine + c * KC * KC, macc[c]);
  } else {
    warp_rows_sum<KC, NF>(acc, lane, mine);
  }
#pragma unroll
  for (int off = 16; off >= KC; off >>= 1) {
    drz += __shfl_xor_sync(0xffffffffu, drz, off);
    drr += __shfl_xor_sync(0xffffffffu, drr, off);
  }
  if (lane < KC) mine[NF * KC * KC + lane] = drz, mine[NF * KC * KC + KC + lane] = drr;
  block_partials(red, entries, part);
}

// gram_sum's kernel (gram.cuh), one block an entry, summed as k_gram_sum.
template <int KC>
__global__ void __launch_bounds__(block_threads)
    k_fused_sum(int blocks, int k, int pairs, const double* part, double* result) {
  __shared__ double smem[block_threads / 32];
  const int t = static_cast<int>(blockIdx.x);
  int a, at;
  if (t < pairs * KC * KC) {
    const int b = (t / KC) % KC, c = t / (KC * KC);
    a = t % KC;
    if (b >= k) return;  // the whole block
    at = (c * k + a) * k + b;
  } else {
    const int u = t - pairs * KC * KC, dg = u / KC;
    a = u % KC;
    at = pairs * k * k + dg * k + a;
  }
  if (a >= k) return;
  double v = 0.0;
  for (int blk = static_cast<int>(threadIdx.x); blk < blocks; blk += static_cast<int>(blockDim.x))
    v += __ldcg(part + static_cast<long long>(t) * blocks + blk);
  v = block_sum_by_slot<1>(v, smem);
  if (threadIdx.x == 0) result[at] = v;
}

// block_combine2's kernel: the rows of v1 and v2 from warp-private tiles, as k_block_fused.
template <class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_block_combine2(int n, block_coefs2 c, const V* __restrict__ v1, const V* __restrict__ v2,
                     const V* __restrict__ d, V* y) {
  constexpr int warps = block_threads / 32, U = lanes_unroll;
  __shared__ alignas(16) V tile[warps][U][2][32];
  __shared__ double s1[8][8], s2[8][8];
  if (threadIdx.x < 64) {
    s1[threadIdx.x / 8][threadIdx.x % 8] = c.c1[threadIdx.x / 8][threadIdx.x % 8];
    s2[threadIdx.x / 8][threadIdx.x % 8] = c.c2[threadIdx.x / 8][threadIdx.x % 8];
  }
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) & 31, j = lane & (KC - 1), row0 = lane - j;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const long long total = static_cast<long long>(n) * KC;
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long f0 = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       f0 - lane < total; f0 += U * step) {
#pragma unroll
    for (int q = 0; q < U; ++q) {
      const long long fi = f0 + q * step;
      tile[warp][q][0][lane] = fi >= total  ? V(0)
                               : c.scale_v1 ? __ldg(d + fi / KC) * __ldg(v1 + fi)
                                            : __ldg(v1 + fi);
      tile[warp][q][1][lane] = fi < total ? __ldg(v2 + fi) : V(0);
    }
    __syncwarp();
#pragma unroll
    for (int q = 0; q < U; ++q) {
      V a1[KC], a2[KC];
      row_from<V, KC>(&tile[warp][q][0][row0], a1);
      row_from<V, KC>(&tile[warp][q][1][row0], a2);
      V acc = V(0);
#pragma unroll
      for (int a = 0; a < KC; ++a) {
        const double cf = s1[a][j];
        if (cf != 0.0) acc += static_cast<V>(cf) * a1[a];
      }
#pragma unroll
      for (int a = 0; a < KC; ++a) {
        const double cf = s2[a][j];
        if (cf != 0.0) acc += static_cast<V>(cf) * a2[a];
      }
      const long long fi = f0 + q * step;
      if (fi < total) y[fi] = acc;
    }
    __syncwarp();  // the tile is written again in the next step
  }
}

}  // namespace

cudaError_t gram_sum(int kc, int blocks, int k, int pairs, int diag, const double* part,
                     double* result, cudaStream_t s) {
  return with_kc(kc, [&](auto c) {
    constexpr int KC = decltype(c)::value;
    k_fused_sum<KC>
        <<<pairs * KC * KC + diag * KC, block_threads, 0, s>>>(blocks, k, pairs, part, result);
    return cudaGetLastError();
  });
}

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

cudaError_t block_fused_pass(precision pr, const group_view& g, const block_fused& f,
                             double* partials, double* result, cudaStream_t s) {
  if (g.n == 0) return cudaSuccess;
  const int grid = g.grid > 0 ? g.grid : 1;
  auto launch = [&](auto np) {
    constexpr int NP = decltype(np)::value;
    return with_prec(pr, [&](auto t) {
      using V = typename decltype(t)::vec;
      return with_kc(g.kc, [&](auto kc) {
        constexpr int KC = decltype(kc)::value;
        k_block_grams<V, KC, NP><<<grid, block_threads, 0, s>>>(g.n, f, partials);
        const cudaError_t e = cudaGetLastError();
        return e != cudaSuccess ? e : gram_sum(KC, grid, g.k, NP, 0, partials, result, s);
      });
    });
  };
  using std::integral_constant;
  switch (f.pairs) {
    case 1:
      return launch(integral_constant<int, 1>{});
    case 2:
      return launch(integral_constant<int, 2>{});
    case 4:
      return launch(integral_constant<int, 4>{});
    default:
      return cudaErrorNotSupported;
  }
}

cudaError_t block_update_pass(precision pr, const group_view& g, const block_update_args& f,
                              double* partials, double* result, cudaStream_t s) {
  if (g.n == 0) return cudaSuccess;
  const int grid = g.grid > 0 ? g.grid : 1;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    return with_kc(g.kc, [&](auto kc) {
      constexpr int KC = decltype(kc)::value;
      k_block_update<V, KC>
          <<<grid, block_threads, 0, s>>>(g.n, f, static_cast<const V*>(g.d), partials);
      const cudaError_t e = cudaGetLastError();
      return e != cudaSuccess ? e
                              : gram_sum(KC, grid, g.k, block_update_grams, 2, partials, result, s);
    });
  });
}

cudaError_t block_combine2(precision pr, const group_view& g, const block_coefs2& c, const void* v1,
                           const void* v2, void* y, cudaStream_t s) {
  if (g.n == 0) return cudaSuccess;
  const int grid = g.grid > 0 ? g.grid : 1;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    return with_kc(g.kc, [&](auto kc) {
      k_block_combine2<V, decltype(kc)::value><<<grid, block_threads, 0, s>>>(
          g.n, c, static_cast<const V*>(v1), static_cast<const V*>(v2), static_cast<const V*>(g.d),
          static_cast<V*>(y));
      return cudaGetLastError();
    });
  });
}

}  // namespace cnc::cuda
