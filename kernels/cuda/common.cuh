// Device helpers shared by the CUDA kernels: precision types, compile-time dispatch, vector loads
// of one row's kc values, and the deterministic two-stage reduction (per-block partials summed in
// block order by the block that finishes last).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>
#include <utility>

#include "backends/cuda/cuda_kernels.hpp"

namespace cnc::cuda {

template <class M, class V>
struct prec_types {
  using mat = M;  // matrix values
  using vec = V;  // vectors (and SpMV row sums)
};

// Calls f(prec_types<...>{}) for the run-time precision.
template <class F>
cudaError_t with_prec(precision pr, F&& f) {
  switch (pr) {
    case precision::f64:
      return f(prec_types<double, double>{});
    case precision::f32:
      return f(prec_types<float, float>{});
    case precision::mixed:
      return f(prec_types<float, double>{});
  }
  return cudaErrorInvalidValue;
}

// Calls f(std::integral_constant<int, V>{}) for the V of Vs equal to v; cudaErrorInvalidValue
// when none is.
template <int... Vs, class F>
cudaError_t with_value(int v, F&& f) {
  cudaError_t e = cudaErrorInvalidValue;
  (void)((v == Vs && (e = f(std::integral_constant<int, Vs>{}), true)) || ...);
  return e;
}

// Right-hand sides per group (kc) and CSR/BCRS lanes per row (w) the kernels are built for.
template <class F>
cudaError_t with_kc(int kc, F&& f) {
  return with_value<1, 2, 4, 8>(kc, f);
}
template <class F>
cudaError_t with_width(int w, F&& f) {
  return with_value<2, 4, 8, 16, 32>(w, f);
}

// Launchers of an SpMV kernel chosen by precision and kc only (the sliced formats: a warp a
// slice): pick(prec_types, kc constant) returns the kernel, launched over a.grid blocks, or
// whose blocks an SM holds (times sm_count; -1 on failure).
template <class Pick>
cudaError_t launch_by_kc(precision pr, const matrix_view& a, const group_view& g, bool cg,
                         const void* x, void* y, cudaStream_t s, Pick pick) {
  if (a.rows == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    return with_kc(g.kc, [&](auto kc) {
      pick(t, kc)<<<a.grid, block_threads, 0, s>>>(a, g, cg, static_cast<const V*>(x),
                                                   static_cast<V*>(y));
      return cudaGetLastError();
    });
  });
}
template <class Pick>
int max_grid_by_kc(precision pr, int kc, int sm_count, Pick pick) {
  int per_sm = 0;
  const cudaError_t e = with_prec(pr, [&](auto t) {
    return with_kc(kc, [&](auto k) {
      return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pick(t, k), block_threads, 0);
    });
  });
  return e == cudaSuccess && per_sm > 0 ? per_sm * sm_count : -1;
}

// One load through the read-only (non-coherent) cache when NC, else a plain coherent load: data
// written by the same kernel launch (the persistent PCG kernel's vectors) must not use __ldg.
template <bool NC, class T>
__device__ __forceinline__ T ldv(const T* p) {
  if constexpr (NC)
    return __ldg(p);
  else
    return *p;
}

// A load of the matrix's values or indices, each read once a product: streaming (ld.global.cs,
// evict first) so that they do not push the gathered vector out of L1 and L2, or through the
// read-only cache (__ldg) when `streaming` is off (CNC_CUDA_STREAM_LOADS=0). H200, run 141: the
// 27-point stencil 160^3 (SELL) 5.5 % less time an iteration, the 2 M power-law graph (CSR) 3.5 %,
// the meshes and 7-point stencils within noise; L1::no_allocate instead lost 2-6 % on the mesh.
template <class T>
__device__ __forceinline__ T ld_matrix(const T* p, bool streaming) {
  return streaming ? __ldcs(p) : __ldg(p);
}

// Loads the KC contiguous values at p (aligned to KC elements) with the widest loads that fit.
template <int KC, bool NC = true, class V>
__device__ __forceinline__ void load_slots(const V* __restrict__ p, V (&out)[KC]) {
  if constexpr (std::is_same_v<V, double> && KC >= 2) {
#pragma unroll
    for (int h = 0; h < KC / 2; ++h) {
      const double2 t = ldv<NC>(reinterpret_cast<const double2*>(p) + h);
      out[2 * h] = t.x;
      out[2 * h + 1] = t.y;
    }
  } else if constexpr (std::is_same_v<V, float> && KC >= 4) {
#pragma unroll
    for (int h = 0; h < KC / 4; ++h) {
      const float4 t = ldv<NC>(reinterpret_cast<const float4*>(p) + h);
      out[4 * h] = t.x;
      out[4 * h + 1] = t.y;
      out[4 * h + 2] = t.z;
      out[4 * h + 3] = t.w;
    }
  } else if constexpr (std::is_same_v<V, float> && KC == 2) {
    const float2 t = ldv<NC>(reinterpret_cast<const float2*>(p));
    out[0] = t.x;
    out[1] = t.y;
  } else {
    out[0] = ldv<NC>(p);
  }
}

// Lanes that share a row of an SpMV over several right-hand sides (the CSR and SELL kernels):
// where the row's KC values span 32 bytes or more, one 16-byte piece of them a lane, so that a
// warp's gathers and stores touch contiguous pieces rather than one row's values a lane at a
// row-wide stride (one lane a row of 8 doubles issued four 16-byte loads a gathered entry and
// eight 8-byte stores, each touching 32 lines: the SELL SpMV at k = 8 was bound by L1 and moved
// 31-34 % of the H200's DRAM bandwidth, run 155); else 1.
CNC_HOST_DEVICE constexpr int split_lanes_of(int row_bytes) {
  return row_bytes >= 32 ? row_bytes / 16 : 1;
}
template <class V, int KC>
constexpr int row_split_lanes = split_lanes_of(static_cast<int>(sizeof(V)) * KC);

// Stores the KC contiguous values at p (aligned to KC elements) with the widest stores that fit.
template <int KC, class V>
__device__ __forceinline__ void store_slots(V* p, const V (&v)[KC]) {
  if constexpr (std::is_same_v<V, double> && KC % 2 == 0) {
#pragma unroll
    for (int h = 0; h < KC / 2; ++h)
      reinterpret_cast<double2*>(p)[h] = make_double2(v[2 * h], v[2 * h + 1]);
  } else if constexpr (std::is_same_v<V, float> && KC % 4 == 0) {
#pragma unroll
    for (int h = 0; h < KC / 4; ++h)
      reinterpret_cast<float4*>(p)[h] =
          make_float4(v[4 * h], v[4 * h + 1], v[4 * h + 2], v[4 * h + 3]);
  } else {
#pragma unroll
    for (int j = 0; j < KC; ++j) p[j] = v[j];
  }
}

// Block-wide sums of one value per thread, grouped by slot j = threadIdx.x % KC (blockDim.x is
// a multiple of 32 and KC divides 32). Result valid in threads 0..KC-1 (thread j: slot j). The
// order of additions is fixed, so the result is reproducible. smem: (blockDim.x/32)*KC doubles.
template <int KC>
__device__ __forceinline__ double block_sum_by_slot(double v, double* smem) {
#pragma unroll
  for (int off = 16; off >= KC; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane < KC) smem[warp * KC + lane] = v;
  __syncthreads();
  double s = 0.0;
  if (threadIdx.x < KC) {
    const int nw = blockDim.x >> 5;
    for (int w = 0; w < nw; ++w) s += smem[w * KC + threadIdx.x];
  }
  __syncthreads();
  return s;
}

// Two block_sum_by_slot at once (one pass through shared memory, two barriers instead of four):
// each quantity is added in exactly the order block_sum_by_slot uses, so the bits are the same.
// smem: 2*(blockDim.x/32)*KC doubles.
template <int KC>
__device__ __forceinline__ void block_sum_by_slot2(double& a, double& b, double* smem) {
#pragma unroll
  for (int off = 16; off >= KC; off >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, off);
    b += __shfl_xor_sync(0xffffffffu, b, off);
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int nw = blockDim.x >> 5;
  if (lane < KC) {
    smem[warp * KC + lane] = a;
    smem[(nw + warp) * KC + lane] = b;
  }
  __syncthreads();
  double sa = 0.0, sb = 0.0;
  if (threadIdx.x < KC) {
    for (int w = 0; w < nw; ++w) {
      sa += smem[w * KC + threadIdx.x];
      sb += smem[(nw + w) * KC + threadIdx.x];
    }
  }
  __syncthreads();
  a = sa;
  b = sb;
}

// Block-wide sums of KC values held by every thread. Result for slot j valid in thread j.
template <int KC>
__device__ __forceinline__ double block_sum_all(const double (&v)[KC], double* smem) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
#pragma unroll
  for (int j = 0; j < KC; ++j) {
    double t = v[j];
#pragma unroll
    for (int off = 16; off >= 1; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
    if (lane == 0) smem[warp * KC + j] = t;
  }
  __syncthreads();
  double s = 0.0;
  if (threadIdx.x < KC) {
    const int nw = blockDim.x >> 5;
    for (int w = 0; w < nw; ++w) s += smem[w * KC + threadIdx.x];
  }
  __syncthreads();
  return s;
}

// Called by every thread after this block's partials are stored; true in the block that
// finishes last, which then sees every other block's partials. Resets the counter for the next
// launch (no other block touches it any more).
__device__ __forceinline__ bool last_block_done(unsigned int* counter) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned int prev = atomicAdd(counter, 1u);
    last = (prev == gridDim.x - 1);
    if (last) *counter = 0u;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}

// In the last block: sums the gridDim.x partials of every slot (layout part[block*KC + j]) in a
// fixed order. Result for slot j valid in thread j.
template <int KC>
__device__ __forceinline__ double sum_partials(const double* part, double* smem) {
  double s = 0.0;
  const int j = threadIdx.x % KC;
  for (unsigned int blk = threadIdx.x / KC; blk < gridDim.x; blk += blockDim.x / KC)
    s += __ldcg(part + blk * KC + j);
  return block_sum_by_slot<KC>(s, smem);
}

// Two sum_partials at once (the loads of both in flight together), same order per quantity.
template <int KC>
__device__ __forceinline__ void sum_partials2(const double* pa, const double* pb, double& a,
                                              double& b, double* smem) {
  double sa = 0.0, sb = 0.0;
  const int j = threadIdx.x % KC;
  for (unsigned int blk = threadIdx.x / KC; blk < gridDim.x; blk += blockDim.x / KC) {
    sa += __ldcg(pa + blk * KC + j);
    sb += __ldcg(pb + blk * KC + j);
  }
  block_sum_by_slot2<KC>(sa, sb, smem);
  a = sa;
  b = sb;
}

// Block sums of two per-slot quantities into `part` (layout [quantity][block][slot], 2*KC*grid).
// smem: 2*(blockDim.x/32)*KC doubles.
template <int KC>
__device__ __forceinline__ void block_partials2(double* part, double a, double b, double* smem) {
  block_sum_by_slot2<KC>(a, b, smem);
  if (threadIdx.x < KC) {
    part[blockIdx.x * KC + threadIdx.x] = a;
    part[(gridDim.x + blockIdx.x) * KC + threadIdx.x] = b;
  }
}

// Grid sums of two per-slot quantities: block partials, then, in the block that finishes last,
// the totals (valid in threads < KC, in a and b). Returns true in that block only.
template <int KC>
__device__ __forceinline__ bool grid_sum2(double* part, unsigned int* counter, double& a, double& b,
                                          double* smem) {
  block_partials2<KC>(part, a, b, smem);
  if (!last_block_done(counter)) return false;
  sum_partials2<KC>(part, part + gridDim.x * KC, a, b, smem);
  return true;
}

// r -= alpha q (and x += alpha p when X) on elements first, first + stride, ... < total (all of
// slot first % KC), accumulating d r² and r². The step kernels (update_xr without x: update_p
// moves x, see step_x) and the persistent kernel (with x) both use it: their results must agree
// bit for bit.
__device__ __forceinline__ void step_x(double& x, double alpha, double p) {
  x = __fma_rn(alpha, p, x);  // one rounding, whatever the compiler's contraction
}
__device__ __forceinline__ void step_x(float& x, float alpha, float p) {
  x = __fmaf_rn(alpha, p, x);
}
template <int KC, bool X, class V>
__device__ __forceinline__ void update_xr_range(V* x, V* r, const V* p, const V* q, const V* d,
                                                V alpha, long long first, long long stride,
                                                long long total, double& rz, double& rr) {
  for (long long f = first; f < total; f += stride) {
    const V rv = r[f] - alpha * q[f];
    if constexpr (X) step_x(x[f], alpha, p[f]);
    r[f] = rv;
    const double r2 = static_cast<double>(rv) * static_cast<double>(rv);
    rz += static_cast<double>(d[f / KC]) * r2;
    rr += r2;
  }
}

// The SpMV launch and the vector launches of a group use different grids; both write partials
// into the same buffer (never at the same time: launches on one stream are ordered).
inline unsigned int div_up(long long a, long long b) {
  return static_cast<unsigned int>((a + b - 1) / b);
}

}  // namespace cnc::cuda

namespace cnc::cuda {

// Which systems an SpMV launch serves: every slot for a plain product, the running systems of
// the group for the CG step. Uniform over the grid (the state is not written during a launch).
template <int KC>
__device__ __forceinline__ bool spmv_active(const group_view& g, bool cg, bool (&act)[KC]) {
  bool any = false;
#pragma unroll
  for (int j = 0; j < KC; ++j) {
    act[j] = !cg || (j < g.k && g.state[j].status == running);
    any = any || act[j];
  }
  return any;
}

// Row `row` of an SpMV is done: store y = acc for the served systems and, in CG mode, add
// y * p[row] to pq (the CSR, BCRS, SELL and persistent kernels).
template <int KC, class V>
__device__ __forceinline__ void store_row(const bool (&act)[KC], bool cg, V* out, long long row,
                                          const V (&acc)[KC], const V (&prow)[KC],
                                          double (&pq)[KC]) {
#pragma unroll
  for (int j = 0; j < KC; ++j) {
    if (!act[j]) continue;
    out[row * KC + j] = acc[j];
    if (cg) pq[j] += static_cast<double>(acc[j]) * static_cast<double>(prow[j]);
  }
}

// End of a CG SpMV launch: pq of each running system, reduced over the grid in fixed order.
template <int KC>
__device__ __forceinline__ void spmv_finish_pq(const group_view& g, const double (&pq)[KC]) {
  __shared__ double smem[(block_threads / 32) * KC];
  const double s = block_sum_all<KC>(pq, smem);
  if (threadIdx.x < KC) g.partials[blockIdx.x * KC + threadIdx.x] = s;
  if (!last_block_done(g.counter)) return;
  const double total = sum_partials<KC>(g.partials, smem);
  const int j = threadIdx.x;
  if (j < KC && j < g.k && g.state[j].status == running) g.state[j].pq = total;
}

// The split kernels' counterparts of spmv_active, store_row and spmv_finish_pq for a lane that
// holds P of a row's KC values, columns piece * P ... piece * P + P - 1 (row_split_lanes).
// piece_active: which of them the launch serves (true when all); act[] with a run-time index
// would go to local memory.
template <int P>
__device__ __forceinline__ bool piece_active(const group_view& g, bool cg, int piece,
                                             bool (&on)[P]) {
  bool all = true;
#pragma unroll
  for (int w = 0; w < P; ++w) {
    const int j = piece * P + w;
    on[w] = !cg || (j < g.k && g.state[j].status == running);
    all = all && on[w];
  }
  return all;
}
template <int P, class V>
__device__ __forceinline__ void store_piece(const bool (&on)[P], bool all, bool cg, V* o,
                                            const V (&acc)[P], const V (&prow)[P],
                                            double (&pq)[P]) {
  if (all) {
    store_slots<P>(o, acc);
  } else {
#pragma unroll
    for (int j = 0; j < P; ++j)
      if (on[j]) o[j] = acc[j];
  }
  if (cg)
#pragma unroll
    for (int j = 0; j < P; ++j)
      if (on[j]) pq[j] += static_cast<double>(acc[j]) * static_cast<double>(prow[j]);
}
template <int KC, int P>
__device__ __forceinline__ void spmv_finish_pq_piece(const group_view& g, const double (&pq)[P],
                                                     int piece) {
  double pk[KC];
#pragma unroll
  for (int j = 0; j < KC; ++j) pk[j] = j / P == piece ? pq[j % P] : 0.0;
  spmv_finish_pq<KC>(g, pk);
}

// The BCRS, SELL and ZCSR/ZSELL launchers live in spmv_bcrs.cu, spmv_sell.cu and spmv_zcsr.cu;
// spmv() in spmv_csr.cu dispatches to them.
cudaError_t spmv_bcrs(precision pr, const matrix_view& a, const group_view& g, bool cg,
                      const void* x, void* y, cudaStream_t s);
int spmv_bcrs_max_grid(precision pr, int b, int width, int kc, int sm_count);
cudaError_t spmv_sell(precision pr, const matrix_view& a, const group_view& g, bool cg,
                      const void* x, void* y, cudaStream_t s);
int spmv_sell_max_grid(precision pr, int kc, int sm_count);
cudaError_t spmv_zcsr(precision pr, const matrix_view& a, const group_view& g, bool cg,
                      const void* x, void* y, cudaStream_t s);
int spmv_zcsr_max_grid(precision pr, int width, int kc, int sm_count);
cudaError_t spmv_zsell(precision pr, const matrix_view& a, const group_view& g, bool cg,
                       const void* x, void* y, cudaStream_t s);
int spmv_zsell_max_grid(precision pr, int kc, int sm_count);

// SELL entries a thread loads before using any, per trip over its row: a 7-point row in one trip
// at kc = 1; fewer at larger kc, whose kc gathers per entry are already independent loads; two
// at kc = 8 (one left the 7-point's lock-step CG at k = 8 5 % slower, run 148).
CNC_HOST_DEVICE constexpr int sell_unroll(int kc) { return kc >= 8 ? 2 : 8 / kc; }

// The CG direction update p = d r + beta p with the rounding fixed (one product rounded, then
// one fma), so the update_p kernel and the persistent kernel, which recomputes it inside its
// SpMV gathers, produce the same bits whatever the compiler would otherwise contract.
__device__ __forceinline__ double direction(double d, double r, double beta, double p) {
  return __fma_rn(beta, p, __dmul_rn(d, r));
}
__device__ __forceinline__ float direction(float d, float r, float beta, float p) {
  return __fmaf_rn(beta, p, __fmul_rn(d, r));
}

// The second half of one trip of an SpMV lane (CSR, BCRS and SELL kernels): the gathers of the U
// entries just loaded (c < 0: past the row, nothing to gather), all issued before the first
// multiply so that their latencies overlap, then acc += v * x in entry order.
template <int U, int KC, class M, class V, class Gather>
__device__ __forceinline__ void gather_fma(const M (&v)[U], const std::int32_t (&c)[U],
                                           Gather gather, V (&acc)[KC]) {
  V xv[U][KC];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (c[u] >= 0) {
      gather(c[u], xv[u]);
    } else {
#pragma unroll
      for (int j = 0; j < KC; ++j) xv[u][j] = V(0);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int j = 0; j < KC; ++j) acc[j] += static_cast<V>(v[u]) * xv[u][j];
}

// Row (slice*32 + r) of a SELL matrix times a group vector, KC of whose values at column c
// gather(c, out) loads (all of a row's, or one lane's piece of them): acc[j] = sum_t val *
// v[c][j], U entries loaded before any is used. The lanes of a warp are rows of one slice, so each
// step of t reads consecutive values and indices (coalesced).
template <class M, class V, int KC, int U = sell_unroll(KC), class Gather>
__device__ __forceinline__ void sell_row_g(const matrix_view& a, Gather gather, long long slice,
                                           int r, V (&acc)[KC]) {
  constexpr int C = sell_slice;
  const M* __restrict__ val = static_cast<const M*>(a.val);
  const std::int64_t base = __ldg(a.row_ptr + slice);
  const int w = static_cast<int>((__ldg(a.row_ptr + slice + 1) - base) / C);
  const M* __restrict__ vp = val + base + r;
  const std::int32_t* __restrict__ cp = a.col + base + r;
#pragma unroll
  for (int j = 0; j < KC; ++j) acc[j] = V(0);
  for (int t = 0; t < w; t += U) {  // w is uniform over the warp
    M v[U];
    std::int32_t c[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool in_row = t + u < w;
      v[u] = in_row ? ld_matrix(vp + static_cast<std::int64_t>(t + u) * C, a.stream) : M(0);
      c[u] = in_row ? ld_matrix(cp + static_cast<std::int64_t>(t + u) * C, a.stream) : -1;
    }
    gather_fma<U, KC>(v, c, gather, acc);
  }
}

// sell_row_g over the stored vector `in`. NC: `in` may use __ldg (not written by this launch).
template <class M, class V, int KC, bool NC>
__device__ __forceinline__ void sell_row(const matrix_view& a, const V* __restrict__ in,
                                         long long slice, int lane, V (&acc)[KC]) {
  sell_row_g<M, V, KC>(
      a,
      [in](std::int32_t c, V(&out)[KC]) {
        load_slots<KC, NC>(in + static_cast<long long>(c) * KC, out);
      },
      slice, lane, acc);
}

}  // namespace cnc::cuda
