// ZCSR SpMV for the CUDA backend (matrix/format.hpp): a complex matrix as CSR over its complex
// rows, values (re, im) pairs, vectors the real-equivalent's (complex row i is real rows 2i and
// 2i + 1, x_j's re and im at rows 2j and 2j + 1 of the group layout). As the CSR kernel: a
// sub-warp of W lanes per complex row (W from the average row length), each lane loading U
// strided entries (one 16- or 8-byte pair and a column each) before using any, the lanes' sums
// added by shuffles in a fixed order; in CG mode pq = pᵀ(Ap) is reduced per running system
// (common.cuh). Rows are not cut into pieces: a complex row is one sub-warp's work however long.
//
// ZSELL, the same matrix sliced as SELL (matrix/format.hpp): one warp a slice of 32 complex rows,
// a thread a complex row, so each step over the slice's width reads 32 consecutive pairs and
// column indices (coalesced), with no row offsets a row and no shuffles; each thread issues the
// loads of sell_unroll(kc) entries and their gathers before using any.
#include "common.cuh"

namespace cnc::cuda {
namespace {

template <class M>
struct pair_of;
template <>
struct pair_of<double> {
  using type = double2;
};
template <>
struct pair_of<float> {
  using type = float2;
};

// The second half of a complex trip (both kernels): the gathers of x's (re, im) at the U columns
// just loaded (c < 0: past the row), all issued before the first multiply, then the complex
// products added in entry order.
template <int U, int KC, class M, class V>
__device__ __forceinline__ void complex_fma(const M (&vr)[U], const M (&vi)[U],
                                            const std::int32_t (&c)[U], const V* __restrict__ in,
                                            V (&re)[KC], V (&im)[KC]) {
  V xr[U][KC], xi[U][KC];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (c[u] >= 0) {
      load_slots<KC>(in + 2LL * c[u] * KC, xr[u]);
      load_slots<KC>(in + (2LL * c[u] + 1) * KC, xi[u]);
    } else {
#pragma unroll
      for (int j = 0; j < KC; ++j) xr[u][j] = xi[u][j] = V(0);
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int j = 0; j < KC; ++j) {
      const V ar = static_cast<V>(vr[u]), ai = static_cast<V>(vi[u]);
      re[j] += ar * xr[u][j] - ai * xi[u][j];
      im[j] += ar * xi[u][j] + ai * xr[u][j];
    }
}

template <class M, class V, int W, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_zcsr(matrix_view a, group_view g, bool cg, const V* __restrict__ in,
                V* __restrict__ out) {
  bool act[KC];
  if (!spmv_active<KC>(g, cg, act)) return;
  if (cg) {
    in = static_cast<const V*>(g.p);
    out = static_cast<V*>(g.q);
  }
  using P = typename pair_of<M>::type;
  const P* __restrict__ val = static_cast<const P*>(a.val);
  const std::int32_t* __restrict__ col = a.col;
  const std::int64_t* __restrict__ row_ptr = a.row_ptr;
  constexpr int rows_per_warp = 32 / W;
  constexpr int U = spmv_unroll(KC, sizeof(M));
  const int lane = threadIdx.x % W;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long n_warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  double pq[KC];
#pragma unroll
  for (int j = 0; j < KC; ++j) pq[j] = 0.0;

  // The loop bound is uniform over the warp, so every lane reaches the shuffles.
  for (long long first = warp * rows_per_warp; first < a.rows; first += n_warps * rows_per_warp) {
    const long long row = first + (threadIdx.x & 31) / W;
    std::int64_t e = 0, end = 0;
    if (row < a.rows) {
      e = __ldg(row_ptr + row) + lane;
      end = __ldg(row_ptr + row + 1);
    }
    V pre[KC], pim[KC], re[KC], im[KC];
#pragma unroll
    for (int j = 0; j < KC; ++j) pre[j] = pim[j] = re[j] = im[j] = V(0);
    if (cg && lane == 0 && row < a.rows) {
      load_slots<KC>(in + 2 * row * KC, pre);
      load_slots<KC>(in + (2 * row + 1) * KC, pim);
    }
    for (; e < end; e += W * U) {
      M vr[U], vi[U];
      std::int32_t c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t eu = e + u * W;
        if (eu < end) {
          const P v = ld_matrix(val + eu, a.stream);
          vr[u] = v.x, vi[u] = v.y, c[u] = ld_matrix(col + eu, a.stream);
        } else {
          vr[u] = vi[u] = M(0), c[u] = -1;
        }
      }
      complex_fma<U, KC>(vr, vi, c, in, re, im);
    }
#pragma unroll
    for (int off = W / 2; off >= 1; off >>= 1)
#pragma unroll
      for (int j = 0; j < KC; ++j) {
        re[j] += __shfl_xor_sync(0xffffffffu, re[j], off, W);
        im[j] += __shfl_xor_sync(0xffffffffu, im[j], off, W);
      }
    if (lane == 0 && row < a.rows) {
      store_row<KC>(act, cg, out, 2 * row, re, pre, pq);
      store_row<KC>(act, cg, out, 2 * row + 1, im, pim, pq);
    }
  }
  if (cg) spmv_finish_pq<KC>(g, pq);
}

template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_zsell(matrix_view a, group_view g, bool cg, const V* __restrict__ in,
                 V* __restrict__ out) {
  bool act[KC];
  if (!spmv_active<KC>(g, cg, act)) return;
  if (cg) {
    in = static_cast<const V*>(g.p);
    out = static_cast<V*>(g.q);
  }
  using P = typename pair_of<M>::type;
  constexpr int U = sell_unroll(KC);
  constexpr int C = sell_slice;
  const int lane = threadIdx.x & 31;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long n_warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  double pq[KC];
#pragma unroll
  for (int j = 0; j < KC; ++j) pq[j] = 0.0;
  for (long long slice = warp; slice < a.rows; slice += n_warps) {
    const long long row = slice * C + lane;  // a complex row: real rows 2 row and 2 row + 1
    V pre[KC], pim[KC], re[KC], im[KC];
#pragma unroll
    for (int j = 0; j < KC; ++j) pre[j] = pim[j] = re[j] = im[j] = V(0);
    if (cg) {
      load_slots<KC>(in + 2 * row * KC, pre);
      load_slots<KC>(in + (2 * row + 1) * KC, pim);
    }
    const std::int64_t base = __ldg(a.row_ptr + slice);
    const int w = static_cast<int>((__ldg(a.row_ptr + slice + 1) - base) / C);
    const P* __restrict__ vp = static_cast<const P*>(a.val) + base + lane;
    const std::int32_t* __restrict__ cp = a.col + base + lane;
    for (int t = 0; t < w; t += U) {  // w is uniform over the warp
      M vr[U], vi[U];
      std::int32_t c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (t + u < w) {
          const P v = ld_matrix(vp + static_cast<std::int64_t>(t + u) * C, a.stream);
          vr[u] = v.x, vi[u] = v.y;
          c[u] = ld_matrix(cp + static_cast<std::int64_t>(t + u) * C, a.stream);
        } else {
          vr[u] = vi[u] = M(0), c[u] = -1;
        }
      }
      complex_fma<U, KC>(vr, vi, c, in, re, im);
    }
    store_row<KC>(act, cg, out, 2 * row, re, pre, pq);
    store_row<KC>(act, cg, out, 2 * row + 1, im, pim, pq);
  }
  if (cg) spmv_finish_pq<KC>(g, pq);
}

template <class T, int W, int KC>
constexpr auto zcsr_kernel() {
  return &k_spmv_zcsr<typename T::mat, typename T::vec, W, KC>;
}

template <class T, int KC>
constexpr auto zsell_kernel() {
  return &k_spmv_zsell<typename T::mat, typename T::vec, KC>;
}

}  // namespace

cudaError_t spmv_zcsr(precision pr, const matrix_view& a, const group_view& g, bool cg,
                      const void* x, void* y, cudaStream_t s) {
  if (a.rows == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using T = decltype(t);
    using V = typename T::vec;
    return with_kc(g.kc, [&](auto kc) {
      return with_width(a.width, [&](auto w) {
        zcsr_kernel<T, w(), kc()>()<<<a.grid, block_threads, 0, s>>>(
            a, g, cg, static_cast<const V*>(x), static_cast<V*>(y));
        return cudaGetLastError();
      });
    });
  });
}

int spmv_zcsr_max_grid(precision pr, int width, int kc, int sm_count) {
  int per_sm = 0;
  const cudaError_t e = with_prec(pr, [&](auto t) {
    using T = decltype(t);
    return with_kc(kc, [&](auto k) {
      return with_width(width, [&](auto w) {
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, zcsr_kernel<T, w(), k()>(),
                                                             block_threads, 0);
      });
    });
  });
  return e == cudaSuccess && per_sm > 0 ? per_sm * sm_count : -1;
}

cudaError_t spmv_zsell(precision pr, const matrix_view& a, const group_view& g, bool cg,
                       const void* x, void* y, cudaStream_t s) {
  return launch_by_kc(pr, a, g, cg, x, y, s,
                      [](auto t, auto kc) { return zsell_kernel<decltype(t), kc()>(); });
}

int spmv_zsell_max_grid(precision pr, int kc, int sm_count) {
  return max_grid_by_kc(pr, kc, sm_count,
                        [](auto t, auto k) { return zsell_kernel<decltype(t), k()>(); });
}

}  // namespace cnc::cuda
