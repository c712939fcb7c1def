// CSR SpMV for the CUDA backend: a sub-warp of W lanes per row (W from the average row length;
// rows much longer than that are cut into pieces by k_csr_pieces, launched first),
// so that the lanes of a warp read consecutive values and column indices (coalesced), and one
// pass over the matrix serves the KC right-hand sides of a group. Each lane issues the loads of
// U strided entries before using any (memory-level parallelism: the row offsets, values and
// gathers would otherwise form a chain of dependent latencies per W entries). In CG mode it also
// reduces pq = pᵀ(Ap) per running system (common.cuh: deterministic two-stage reduction).
#include "common.cuh"

namespace cnc::cuda {
namespace {

// W0: the lanes a row the host chose (choose_width). Where a row's KC values span 32 bytes or
// more, L = row_split_lanes of them share each entry, lane piece p gathering the row's 16-byte
// piece p (as k_spmv_sell_split), so that a warp's gather reads contiguous pieces: a row keeps
// max(W0, L) lanes and takes W / L entries at a time, four a lane in flight. (A row of W0 * L
// lanes, fewer rows a warp, was 27 % slower on the 7-point stencil at kc = 8, run 158.)
template <class M, class V, int W0, int KC>
__global__ void __launch_bounds__(block_threads)
    k_spmv_csr(matrix_view a, group_view g, bool cg, const V* __restrict__ in,
               V* __restrict__ out) {
  constexpr int L = row_split_lanes<V, KC>, P = KC / L;
  constexpr int W = W0 > L ? W0 : L, E = W / L;
  static_assert(E >= 1 && KC % L == 0);
  bool act[KC];
  if (!spmv_active<KC>(g, cg, act)) return;
  if (cg) {
    in = static_cast<const V*>(g.p);
    out = static_cast<V*>(g.q);
  }
  const M* __restrict__ val = static_cast<const M*>(a.val);
  const std::int32_t* __restrict__ col = a.col;
  const std::int64_t* __restrict__ row_ptr = a.row_ptr;
  constexpr int rows_per_warp = 32 / W;
  constexpr int U = L > 1 ? 4 : spmv_unroll(KC, sizeof(M));
  const int lane = threadIdx.x % W, el = lane / L, piece = lane % L;
  bool on[P];
  const bool all = piece_active<P>(g, cg, piece, on);
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long n_warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  double pq[P];
#pragma unroll
  for (int j = 0; j < P; ++j) pq[j] = 0.0;

  // The next trip's row offsets are loaded while this one runs: a trip then waits on the chain
  // entries -> gathers, not offsets -> entries -> gathers (8-9 % less time a CG iteration on
  // meshes of 8-entry rows, 5 % on the 2 M power-law graph, the 100 K one 5 % slower, run 78 on
  // an H200; the same prefetch made the SELL and ZCSR kernels slower on the 27-point stencil
  // there, so they do not have it).
  const long long stride = n_warps * rows_per_warp;
  const auto row_offsets = [&](long long first, std::int64_t& begin, std::int64_t& end) {
    const long long r = first + (threadIdx.x & 31) / W;
    begin = r < a.rows ? __ldg(row_ptr + r) : 0;
    end = r < a.rows ? __ldg(row_ptr + r + 1) : 0;
  };
  std::int64_t next_begin, next_end;
  row_offsets(warp * rows_per_warp, next_begin, next_end);
  // The loop bound is uniform over the warp, so every lane reaches the shuffles.
  for (long long first = warp * rows_per_warp; first < a.rows; first += stride) {
    const long long row = first + (threadIdx.x & 31) / W;
    const std::int64_t begin = next_begin;
    std::int64_t e = begin + el, end = next_end;
    if (first + stride < a.rows) row_offsets(first + stride, next_begin, next_end);
    // A long row was summed by k_csr_pieces (launched first): read back below, nothing gathered.
    const bool long_row = a.n_long > 0 && end - begin > a.long_min;
    if (long_row) e = end;
    const bool stores = el == 0 && row < a.rows;
    V* const o = out + row * KC + piece * P;
    // p of this row's piece (for pq) is loaded now, independent of the row's gathers.
    V prow[P];
#pragma unroll
    for (int j = 0; j < P; ++j) prow[j] = V(0);
    if (cg && stores) load_slots<P>(in + row * KC + piece * P, prow);
    V acc[P];
#pragma unroll
    for (int j = 0; j < P; ++j) acc[j] = V(0);
    // U strided chunks per trip: every value, index and gather of a short row is in flight at
    // once (one trip), instead of one dependent load chain per E entries.
    for (; e < end; e += E * U) {
      M v[U];
      std::int32_t c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t eu = e + u * E;
        v[u] = eu < end ? ld_matrix(val + eu, a.stream) : M(0);
        c[u] = eu < end ? ld_matrix(col + eu, a.stream) : -1;
      }
      gather_fma<U, P>(
          v, c,
          [in, piece](std::int32_t cc, V(&x)[P]) {
            load_slots<P>(in + static_cast<long long>(cc) * KC + piece * P, x);
          },
          acc);
    }
#pragma unroll
    for (int off = W / 2; off >= L; off >>= 1)
#pragma unroll
      for (int j = 0; j < P; ++j) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off, W);
    if (stores) {
      if (long_row) load_slots<P, false>(o, acc);
      store_piece<P>(on, all, cg, o, acc, prow, pq);
    }
  }
  if (cg) spmv_finish_pq_piece<KC, P>(g, pq, piece);
}

// The long rows of a CSR (matrix_view::long_rows): one warp per piece of csr_piece entries,
// its sum over 32 lanes in a fixed order. A row of one piece is stored at once; otherwise the
// piece's sum goes to piece_sums and the warp that finishes the row's last piece (counted in
// piece_done, which it resets) adds the row's pieces in piece order: the same bits whichever warp
// that is. Stores y (q in CG mode) of the long rows for the served systems only.
template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_csr_pieces(matrix_view a, group_view g, bool cg, const V* __restrict__ in, V* out) {
  bool act[KC];
  if (!spmv_active<KC>(g, cg, act)) return;
  if (cg) {
    in = static_cast<const V*>(g.p);
    out = static_cast<V*>(g.q);
  }
  const M* __restrict__ val = static_cast<const M*>(a.val);
  V* sums = static_cast<V*>(a.piece_sums);
  constexpr int U = spmv_unroll(KC, sizeof(M));
  const int lane = threadIdx.x & 31;
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long long n_warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  for (long long pc = warp; pc < a.pieces; pc += n_warps) {
    int lo = 0, hi = a.n_long;  // piece_ptr[lo] <= pc < piece_ptr[hi]
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (__ldg(a.piece_ptr + mid) <= pc)
        lo = mid;
      else
        hi = mid;
    }
    const std::int32_t row = __ldg(a.long_rows + lo);
    const std::int32_t first = __ldg(a.piece_ptr + lo);
    const std::int32_t count = __ldg(a.piece_ptr + lo + 1) - first;
    const std::int64_t row_end = __ldg(a.row_ptr + row + 1);
    const std::int64_t start = __ldg(a.row_ptr + row) + std::int64_t(pc - first) * csr_piece;
    const std::int64_t end = min(start + csr_piece, row_end);
    V acc[KC];
#pragma unroll
    for (int j = 0; j < KC; ++j) acc[j] = V(0);
    for (std::int64_t e = start + lane; e < end; e += 32 * U) {
      M v[U];
      std::int32_t c[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t eu = e + u * 32;
        v[u] = eu < end ? ld_matrix(val + eu, a.stream) : M(0);
        c[u] = eu < end ? ld_matrix(a.col + eu, a.stream) : -1;
      }
      gather_fma<U, KC>(
          v, c,
          [in](std::int32_t cc, V(&x)[KC]) {
            load_slots<KC>(in + static_cast<long long>(cc) * KC, x);
          },
          acc);
    }
#pragma unroll
    for (int off = 16; off >= 1; off >>= 1)
#pragma unroll
      for (int j = 0; j < KC; ++j) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
    if (count > 1) {
      int last = 0;
      if (lane == 0) {
#pragma unroll
        for (int j = 0; j < KC; ++j) sums[pc * KC + j] = acc[j];
        __threadfence();
        last = atomicAdd(a.piece_done + lo, 1) == count - 1;
        if (last) a.piece_done[lo] = 0;
      }
      if (!__shfl_sync(0xffffffffu, last, 0)) continue;
      __threadfence();
#pragma unroll
      for (int j = 0; j < KC; ++j) acc[j] = V(0);
      for (int q = lane; q < count; q += 32)
#pragma unroll
        for (int j = 0; j < KC; ++j)
          acc[j] += __ldcg(sums + (first + q) * static_cast<long long>(KC) + j);
#pragma unroll
      for (int off = 16; off >= 1; off >>= 1)
#pragma unroll
        for (int j = 0; j < KC; ++j) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], off);
    }
    if (lane == 0)
#pragma unroll
      for (int j = 0; j < KC; ++j)
        if (act[j]) out[static_cast<long long>(row) * KC + j] = acc[j];
  }
}

template <class T, int W, int KC>
constexpr auto csr_kernel() {
  return &k_spmv_csr<typename T::mat, typename T::vec, W, KC>;
}

}  // namespace

cudaError_t spmv(precision pr, const matrix_view& a, const group_view& g, bool cg, const void* x,
                 void* y, cudaStream_t s) {
  if (a.fmt == format::sell) return spmv_sell(pr, a, g, cg, x, y, s);
  if (a.fmt == format::zcsr) return spmv_zcsr(pr, a, g, cg, x, y, s);
  if (a.fmt == format::zsell) return spmv_zsell(pr, a, g, cg, x, y, s);
  if (is_block(a.fmt)) return spmv_bcrs(pr, a, g, cg, x, y, s);
  if (a.rows == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using T = decltype(t);
    using V = typename T::vec;
    return with_kc(g.kc, [&](auto kc) {
      if (a.n_long > 0) {
        k_csr_pieces<typename T::mat, V, kc()><<<a.piece_grid, block_threads, 0, s>>>(
            a, g, cg, static_cast<const V*>(x), static_cast<V*>(y));
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
      }
      return with_width(a.width, [&](auto w) {
        csr_kernel<T, w(), kc()>()<<<a.grid, block_threads, 0, s>>>(
            a, g, cg, static_cast<const V*>(x), static_cast<V*>(y));
        return cudaGetLastError();
      });
    });
  });
}

int spmv_max_grid(precision pr, format f, int width, int kc, int sm_count) {
  if (f == format::sell) return spmv_sell_max_grid(pr, kc, sm_count);
  if (f == format::zcsr) return spmv_zcsr_max_grid(pr, width, kc, sm_count);
  if (f == format::zsell) return spmv_zsell_max_grid(pr, kc, sm_count);
  if (is_block(f)) return spmv_bcrs_max_grid(pr, block_size(f), width, kc, sm_count);
  int per_sm = 0;
  const cudaError_t e = with_prec(pr, [&](auto t) {
    using T = decltype(t);
    return with_kc(kc, [&](auto k) {
      return with_width(width, [&](auto w) {
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, csr_kernel<T, w(), k()>(),
                                                             block_threads, 0);
      });
    });
  });
  return e == cudaSuccess && per_sm > 0 ? per_sm * sm_count : -1;
}

}  // namespace cnc::cuda
