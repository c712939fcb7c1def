// SELL SpMV for the CUDA backend: one warp per 32-row slice, one thread per row (SELL-C-1 with
// C = 32, matrix/matrix.hpp). The slice's entries are column-major, so each of the w steps
// of a slice reads 32 consecutive values and column indices: fully coalesced, no row offsets per
// row, no shuffles. Each thread issues the loads of sell_unroll(kc) entries and their gathers
// before using any (memory-level parallelism). In CG mode it also reduces pq = pᵀ(Ap) per running
// system (common.cuh: deterministic two-stage reduction). Where a row's kc values span 32 bytes
// or more, k_spmv_sell_split shares a row among several lanes instead.
#include "common.cuh"

namespace cnc::cuda {
namespace {

template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_sell(matrix_view a, group_view g, bool cg, const V* __restrict__ in,
                V* __restrict__ out) {
  bool act[KC];
  if (!spmv_active<KC>(g, cg, act)) return;
  if (cg) {
    in = static_cast<const V*>(g.p);
    out = static_cast<V*>(g.q);
  }
  const int lane = threadIdx.x & 31;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long n_warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  double pq[KC];
#pragma unroll
  for (int j = 0; j < KC; ++j) pq[j] = 0.0;
  for (long long slice = warp; slice < a.rows; slice += n_warps) {
    const long long row = slice * sell_slice + lane;
    V prow[KC];
    if (cg) load_slots<KC>(in + row * KC, prow);
    V acc[KC];
    sell_row<M, V, KC, true>(a, in, slice, lane, acc);
    store_row<KC>(act, cg, out, row, acc, prow, pq);
  }
  if (cg) spmv_finish_pq<KC>(g, pq);
}

// A row's kc values over L = row_split_lanes lanes (common.cuh), one 16-byte piece (W values) a
// lane: a warp takes R = 32 / L rows of a slice at a time.
template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_sell_split(matrix_view a, group_view g, bool cg, const V* __restrict__ in,
                      V* __restrict__ out) {
  constexpr int L = row_split_lanes<V, KC>, W = KC / L, R = sell_slice / L, U = 4;
  static_assert(L >= 2 && KC % L == 0 && sell_slice % L == 0);
  bool act[KC];
  if (!spmv_active<KC>(g, cg, act)) return;
  if (cg) {
    in = static_cast<const V*>(g.p);
    out = static_cast<V*>(g.q);
  }
  const int lane = threadIdx.x & 31, sub = lane % L, rr = lane / L;
  bool on[W];
  const bool all = piece_active<W>(g, cg, sub, on);
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long n_warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  double pq[W];
#pragma unroll
  for (int w = 0; w < W; ++w) pq[w] = 0.0;
  // Unit u: the rows (u % L) * R ... + R - 1 of slice u / L.
  for (long long u = warp; u < a.rows * L; u += n_warps) {
    const long long slice = u / L;
    const int r = static_cast<int>(u % L) * R + rr;
    const long long row = slice * sell_slice + r;
    V acc[W];
    sell_row_g<M, V, W, U>(
        a,
        [in, sub](std::int32_t col, V(&x)[W]) {
          load_slots<W>(in + static_cast<long long>(col) * KC + sub * W, x);
        },
        slice, r, acc);
    V pr[W];
#pragma unroll
    for (int w = 0; w < W; ++w) pr[w] = V(0);
    if (cg) load_slots<W>(in + row * KC + sub * W, pr);
    store_piece<W>(on, all, cg, out + row * KC + sub * W, acc, pr, pq);
  }
  if (cg) spmv_finish_pq_piece<KC, W>(g, pq, sub);
}

template <class T, int KC>
auto sell_kernel(bool split) {
  using V = typename T::vec;
  if constexpr (row_split_lanes<V, KC> >= 2)
    if (split) return &k_spmv_sell_split<typename T::mat, V, KC>;
  return &k_spmv_sell<typename T::mat, V, KC>;
}

}  // namespace

cudaError_t spmv_sell(precision pr, const matrix_view& a, const group_view& g, bool cg,
                      const void* x, void* y, cudaStream_t s) {
  return launch_by_kc(pr, a, g, cg, x, y, s, [&a](auto t, auto kc) {
    return sell_kernel<decltype(t), kc()>(a.sell_split);
  });
}

int spmv_sell_max_grid(precision pr, int kc, int sm_count) {
  return max_grid_by_kc(pr, kc, sm_count,
                        [](auto t, auto k) { return sell_kernel<decltype(t), k()>(true); });
}

}  // namespace cnc::cuda
