// SELL SpMV for the CUDA backend: one warp per 32-row slice, one thread per row (SELL-C-1 with
// C = 32, matrix/matrix.hpp). The slice's entries are column-major, so each of the w steps
// of a slice reads 32 consecutive values and column indices: fully coalesced, no row offsets per
// row, no shuffles. Each thread issues the loads of sell_unroll(kc) entries and their gathers
// before using any (memory-level parallelism). In CG mode it also reduces pq = pᵀ(Ap) per running
// system (common.cuh: deterministic two-stage reduction). Where a row's kc values span 32 bytes
// or more, k_spmv_sell_split shares a row among several lanes instead; block CG's SpMV there
// also gives the Gram matrix of the block it multiplies (spmv_sell_gram).
#include "backends/cuda/cuda_block_kernels.hpp"
#include "common.cuh"
#include "gram.cuh"

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
// lane: a warp takes R = 32 / L rows of a slice at a time. GRAM (spmv_sell_gram; double, kc = 8:
// R = 8 rows of 8 values a warp): the warp's 8 rows of x and of the product are also put in a
// warp tile and x_rowsᵀ y_rows added on the tensor cores, so that the Gram matrix xᵀ A x needs
// no pass of its own over x and y; the block's sums into part (block_partials' layout).
template <class M, class V, int KC, bool GRAM>
__device__ __forceinline__ void sell_split_body(const matrix_view& a, const group_view& g, bool cg,
                                                const V* __restrict__ in, V* __restrict__ out,
                                                double* part) {
  constexpr int L = row_split_lanes<V, KC>, W = KC / L, R = sell_slice / L, U = 4;
  static_assert(L >= 2 && KC % L == 0 && sell_slice % L == 0);
  static_assert(!GRAM || (gram_mma_on<V, KC> && W == 2 && R == 8), "8 x 8 tiles of doubles");
  constexpr int warps = block_threads / 32;
  __shared__ alignas(32) double tile[GRAM ? warps : 1][2][64];
  __shared__ alignas(32) double red[GRAM ? warps * 64 : 1];
  gram_acc macc;
  if constexpr (GRAM) gram_zero(macc);
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
  const int wb = static_cast<int>(threadIdx.x) >> 5;
  double pq[W];
#pragma unroll
  for (int w = 0; w < W; ++w) pq[w] = 0.0;
  // Unit u: the rows (u % L) * R ... + R - 1 of slice u / L. The loop is the same for a whole
  // warp, so every lane reaches the tile's __syncwarp and the mma.
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
    if (cg || GRAM) load_slots<W>(in + row * KC + sub * W, pr);
    store_piece<W>(on, all, cg, out + row * KC + sub * W, acc, pr, pq);
    if constexpr (GRAM) {
      // Lane rr * L + sub holds row rr's values 2 sub, 2 sub + 1: element 2 lane of the tile.
      reinterpret_cast<double2*>(tile[wb][0])[lane] = make_double2(pr[0], pr[1]);
      reinterpret_cast<double2*>(tile[wb][1])[lane] = make_double2(acc[0], acc[1]);
      __syncwarp();
      gram_mma(macc, tile[wb][0], tile[wb][1]);            // rows 0-3
      gram_mma(macc, tile[wb][0] + 32, tile[wb][1] + 32);  // rows 4-7
      __syncwarp();  // the tile is written again in the next unit
    }
  }
  if (cg) spmv_finish_pq_piece<KC, W>(g, pq, sub);
  if constexpr (GRAM) {
    gram_store(red + wb * 64, macc);
    block_partials(red, 64, part);
  }
}

template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_sell_split(matrix_view a, group_view g, bool cg, const V* __restrict__ in,
                      V* __restrict__ out) {
  sell_split_body<M, V, KC, false>(a, g, cg, in, out, nullptr);
}

template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_sell_split_gram(matrix_view a, group_view g, const V* __restrict__ in,
                           V* __restrict__ out, double* part) {
  if constexpr (gram_mma_on<V, KC>) sell_split_body<M, V, KC, true>(a, g, false, in, out, part);
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

bool spmv_sell_gram_on(precision pr, const matrix_view& a, const group_view& g) {
  if (a.fmt != format::sell || !a.sell_split || g.kc != 8 || pr == precision::f32) return false;
  bool on = false;
  with_prec(pr, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<typename T::vec, double>) {
      cudaFuncAttributes at{};
      on = cudaFuncGetAttributes(&at, &k_spmv_sell_split_gram<typename T::mat, double, 8>) ==
               cudaSuccess &&
           at.ptxVersion >= 80;
    }
    return cudaSuccess;
  });
  return on;
}

cudaError_t spmv_sell_gram(precision pr, const matrix_view& a, const group_view& g, const void* x,
                           void* y, double* partials, double* result, cudaStream_t s) {
  if (a.rows == 0) return cudaSuccess;
  const cudaError_t e = with_prec(pr, [&](auto t) {
    using T = decltype(t);
    using V = typename T::vec;
    if constexpr (std::is_same_v<V, double>) {
      k_spmv_sell_split_gram<typename T::mat, V, 8><<<a.grid, block_threads, 0, s>>>(
          a, g, static_cast<const V*>(x), static_cast<V*>(y), partials);
      return cudaGetLastError();
    } else {
      return cudaErrorNotSupported;
    }
  });
  return e != cudaSuccess ? e : gram_sum(8, a.grid, g.k, 1, 0, partials, result, s);
}

int spmv_sell_max_grid(precision pr, int kc, int sm_count) {
  return max_grid_by_kc(pr, kc, sm_count,
                        [](auto t, auto k) { return sell_kernel<decltype(t), k()>(true); });
}

}  // namespace cnc::cuda
