// SELL SpMV for the CUDA backend: one warp per 32-row slice, one thread per row (SELL-C-1 with
// C = 32, matrix/matrix.hpp). The slice's entries are column-major, so each of the w steps
// of a slice reads 32 consecutive values and column indices: fully coalesced, no row offsets per
// row, no shuffles. Each thread issues the loads of sell_unroll(kc) entries and their gathers
// before using any (memory-level parallelism). In CG mode it also reduces pq = pᵀ(Ap) per running
// system (common.cuh: deterministic two-stage reduction).
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

template <class T, int KC>
constexpr auto sell_kernel() {
  return &k_spmv_sell<typename T::mat, typename T::vec, KC>;
}

}  // namespace

cudaError_t spmv_sell(precision pr, const matrix_view& a, const group_view& g, bool cg,
                      const void* x, void* y, cudaStream_t s) {
  return launch_by_kc(pr, a, g, cg, x, y, s,
                      [](auto t, auto kc) { return sell_kernel<decltype(t), kc()>(); });
}

int spmv_sell_max_grid(precision pr, int kc, int sm_count) {
  return max_grid_by_kc(pr, kc, sm_count,
                        [](auto t, auto k) { return sell_kernel<decltype(t), k()>(); });
}

}  // namespace cnc::cuda
