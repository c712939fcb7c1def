// BCRS (2x2, 4x4) SpMV for the CUDA backend, register-blocked: the b values of x a block needs are
// read once and reused from registers for the block's b rows.
//
// A sub-warp of W lanes (a multiple of b*b) serves one block row. Lane l keeps one fixed position
// (row rb, column cb) inside the blocks it visits, so that its partial sums of the b rows stay
// in registers for the whole block row and a warp streams the blocks' values contiguously
// (coalesced); one block column index per b*b values, and the b values of x a block needs are
// fetched once per block (the b lanes of one column read the same address: a broadcast). The
// row sums are then combined with shuffles over the lanes of equal rb.
#include "common.cuh"

namespace cnc::cuda {
namespace {

template <class M, class V, int B, int W, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_bcrs(matrix_view a, group_view g, bool cg, const V* __restrict__ in,
                V* __restrict__ out) {
  static_assert(W % (B * B) == 0 && W <= 32, "lanes per block row: a multiple of b*b");
  bool act[KC];
  if (!spmv_active<KC>(g, cg, act)) return;
  if (cg) {
    in = static_cast<const V*>(g.p);
    out = static_cast<V*>(g.q);
  }
  constexpr int BB = B * B;
  constexpr int blocks_per_step = W / BB;
  constexpr int rows_per_warp = 32 / W;
  constexpr int U = spmv_unroll(KC, sizeof(M));
  const M* __restrict__ val = static_cast<const M*>(a.val);
  const std::int32_t* __restrict__ col = a.col;
  const std::int64_t* __restrict__ row_ptr = a.row_ptr;
  const int lane = threadIdx.x % W;
  const int elem = lane % BB;  // position inside a block, row-major
  const int rb = elem / B;     // row inside the block
  const int cb = elem % B;     // column inside the block
  const int boff = lane / BB;  // which of the blocks of one step
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long n_warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  double pq[KC];
#pragma unroll
  for (int j = 0; j < KC; ++j) pq[j] = 0.0;

  for (long long first = warp * rows_per_warp; first < a.rows; first += n_warps * rows_per_warp) {
    const long long brow = first + (threadIdx.x & 31) / W;
    std::int64_t s = 0, end = 0;
    if (brow < a.rows) {
      s = __ldg(row_ptr + brow) + boff;
      end = __ldg(row_ptr + brow + 1);
    }
    V prow[KC];
#pragma unroll
    for (int j = 0; j < KC; ++j) prow[j] = V(0);
    if (cg && cb == 0 && boff == 0 && brow < a.rows)
      load_slots<KC>(in + (brow * B + rb) * KC, prow);
    V acc[KC];
#pragma unroll
    for (int j = 0; j < KC; ++j) acc[j] = V(0);
    // U steps per trip, all loads issued before the first use (see spmv_csr.cu).
    for (; s < end; s += blocks_per_step * U) {
      M v[U];
      std::int32_t c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t su = s + u * blocks_per_step;
        v[u] = su < end ? __ldg(val + su * BB + elem) : M(0);
        c[u] = su < end ? __ldg(col + su) : -1;
      }
      gather_fma<U, KC>(
          v, c,
          [in, cb](std::int32_t bc, V(&x)[KC]) {
            load_slots<KC>(in + (static_cast<long long>(bc) * B + cb) * KC, x);
          },
          acc);
    }
    // Sum over the columns of a block, then over the blocks of a step.
#pragma unroll
    for (int off = 1; off < B; off <<= 1)
#pragma unroll
      for (int j = 0; j < KC; ++j) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off, W);
#pragma unroll
    for (int off = BB; off < W; off <<= 1)
#pragma unroll
      for (int j = 0; j < KC; ++j) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off, W);
    if (cb == 0 && boff == 0 && brow < a.rows) {
      const long long row = brow * B + rb;
      store_row<KC>(act, cg, out, row, acc, prow, pq);
    }
  }
  if (cg) spmv_finish_pq<KC>(g, pq);
}

// Calls f(integral_constant<B>, integral_constant<W>) for the valid (b, width) pairs.
template <class F>
cudaError_t with_block(int b, int w, F&& f) {
  using std::integral_constant;
  if (b == 2) {
    switch (w) {
      case 4:
        return f(integral_constant<int, 2>{}, integral_constant<int, 4>{});
      case 8:
        return f(integral_constant<int, 2>{}, integral_constant<int, 8>{});
      case 16:
        return f(integral_constant<int, 2>{}, integral_constant<int, 16>{});
      case 32:
        return f(integral_constant<int, 2>{}, integral_constant<int, 32>{});
    }
  } else if (b == 4) {
    switch (w) {
      case 16:
        return f(integral_constant<int, 4>{}, integral_constant<int, 16>{});
      case 32:
        return f(integral_constant<int, 4>{}, integral_constant<int, 32>{});
    }
  }
  return cudaErrorInvalidValue;
}

template <class T, int B, int W, int KC>
constexpr auto bcrs_kernel() {
  return &k_spmv_bcrs<typename T::mat, typename T::vec, B, W, KC>;
}

}  // namespace

cudaError_t spmv_bcrs(precision pr, const matrix_view& a, const group_view& g, bool cg,
                      const void* x, void* y, cudaStream_t s) {
  if (a.rows == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using T = decltype(t);
    using V = typename T::vec;
    return with_kc(g.kc, [&](auto kc) {
      return with_block(block_size(a.fmt), a.width, [&](auto b, auto w) {
        bcrs_kernel<T, b(), w(), kc()>()<<<a.grid, block_threads, 0, s>>>(
            a, g, cg, static_cast<const V*>(x), static_cast<V*>(y));
        return cudaGetLastError();
      });
    });
  });
}

int spmv_bcrs_max_grid(precision pr, int b, int width, int kc, int sm_count) {
  int per_sm = 0;
  const cudaError_t e = with_prec(pr, [&](auto t) {
    using T = decltype(t);
    return with_kc(kc, [&](auto k) {
      return with_block(b, width, [&](auto bs, auto w) {
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, bcrs_kernel<T, bs(), w(), k()>(), block_threads, 0);
      });
    });
  });
  return e == cudaSuccess && per_sm > 0 ? per_sm * sm_count : -1;
}

}  // namespace cnc::cuda
