// Persistent Jacobi-PCG for small systems: `count` iterations in one cooperative launch.
//
// A small system (n of order 1e5, data in L2) is bound by latency, not bytes: three kernels per
// iteration, each a grid launch ending in a last-block reduction, cost ~5 us apiece even inside
// a CUDA graph. Here the steps of backend.hpp's contract run in one kernel separated by grid-wide
// barriers (cooperative groups), and only two barriers per iteration:
//   A: p' = d r + beta p (the pending update_p) and q = A p', pq = p'ᵀq. The SpMV needs p' at
//      neighbouring rows: each gather recomputes it from r, d and the old p of its column
//      (direction(), rounding fixed, so it equals what update_p writes). p' goes to the other
//      of two buffers, since other warps still read the old p.          -- barrier --
//   B: alpha = rz/pq; x += alpha p'; r -= alpha q; partials of rz_new, rr. -- barrier --
//      (x moves here rather than in update_p as in the step kernels: the same bits once the
//      iteration is done, which is all a caller of iterate(count) sees.)
//   then the update_p checks and beta, computed at the start of the next A (or after the loop,
//   followed by a last pass that writes the final p into the group's p buffer).
// Scalars: every block reduces the same per-block partials in the same order (sum_partials) and so
// computes bit-identical rhs_states; each block keeps its copy in shared memory; block 0 writes
// them back at the end. With the single-step kernels on the same grid (cuda_backend.cpp), the
// result equals `count` single steps bit for bit. Vectors written inside the launch are read with
// coherent loads, never __ldg. Partials: A (pq, kc per block) and B (rz_new, rr: 2 kc per block);
// each is rewritten only after a barrier that follows every block's reads of it.
#include <cooperative_groups.h>

#include "common.cuh"

namespace cnc::cuda {
namespace {

namespace cg = cooperative_groups;

// The update_p step on the block's copy of the states (threads t < KC): sets pend/beta.
template <int KC>
__device__ __forceinline__ void finish_update_p(const group_view& g, rhs_state* sst, double trz,
                                                double trr, bool* pend, double* beta) {
  const int t = threadIdx.x;
  if (t >= KC) return;
  pend[t] = false;
  if (t >= g.k || sst[t].status != running) return;
  rhs_state& st = sst[t];
  st.rz_new = trz;
  st.rr = trr;
  st.iters += 1;
  st.status = cnc_status_of_residual(trr, trz, st.thr2);
  if (st.status == running) {
    beta[t] = trz / st.rz;
    st.rz = trz;
    pend[t] = true;
  }
}

template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_pcg_persistent(matrix_view a, group_view g, V* p_other, double* part, int count) {
  cg::grid_group grid = cg::this_grid();
  __shared__ double smem[2 * (block_threads / 32) * KC];
  __shared__ rhs_state sst[KC];
  __shared__ double alpha_s[KC], beta_s[KC];
  __shared__ bool pend_s[KC];  // beta_s[j] is a pending update of p for system j
  const int t = threadIdx.x;
  if (t < KC) {
    sst[t] = t < g.k ? g.state[t] : rhs_state{0, 0, 0, 0, 0, converged, 0};
    pend_s[t] = false;
    beta_s[t] = 0.0;
  }
  __syncthreads();
  double* part_a = part;
  double* part_b = part + static_cast<long long>(gridDim.x) * KC;
  const V* __restrict__ d = static_cast<const V*>(g.d);
  V* x = static_cast<V*>(g.x);
  V* r = static_cast<V*>(g.r);
  V* q = static_cast<V*>(g.q);
  V* cur = static_cast<V*>(g.p);  // p of the current iteration (before the pending update)
  V* nxt = p_other;
  const long long total = static_cast<long long>(g.n) * KC;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + t;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const int j = t % KC;  // the slot this thread serves in the vector phases (stride % KC == 0)
  const int lane = t & 31;
  const long long warp = first >> 5, n_warps = stride >> 5;
  bool wrote = false, b_pending = false;

  for (int it = 0; it < count; ++it) {
    if (b_pending) {  // the previous iteration's update_p checks and beta
      double trz, trr;
      sum_partials2<KC>(part_b, part_b + gridDim.x * KC, trz, trr, smem);
      finish_update_p<KC>(g, sst, trz, trr, pend_s, beta_s);
      __syncthreads();
      b_pending = false;
    }
    bool act[KC], pend[KC], any = false;
    V beta[KC];
#pragma unroll
    for (int s = 0; s < KC; ++s) {
      act[s] = s < g.k && sst[s].status == running;
      pend[s] = pend_s[s];
      beta[s] = static_cast<V>(beta_s[s]);
      any = any || act[s];
    }
    if (!any) break;  // uniform: every block holds the same states
    wrote = true;

    // A: p' = d r + beta p (pending systems), q = A p', pq = p'ᵀq.
    auto p_new = [&](long long c, V(&out)[KC]) {
      V pc[KC], rc[KC];
      load_slots<KC, false>(cur + c * KC, pc);
      load_slots<KC, false>(r + c * KC, rc);
      const V dc = __ldg(d + c);
#pragma unroll
      for (int s = 0; s < KC; ++s) out[s] = pend[s] ? direction(dc, rc[s], beta[s], pc[s]) : pc[s];
    };
    double pq[KC];
#pragma unroll
    for (int s = 0; s < KC; ++s) pq[s] = 0.0;
    for (long long slice = warp; slice < a.rows; slice += n_warps) {
      const long long row = slice * sell_slice + lane;
      V prow[KC], acc[KC];
      p_new(row, prow);
#pragma unroll
      for (int s = 0; s < KC; ++s) nxt[row * KC + s] = prow[s];
      sell_row_g<M, V, KC>(a, p_new, slice, lane, acc);
      store_row<KC>(act, true, q, row, acc, prow, pq);
    }
    const double bpq = block_sum_all<KC>(pq, smem);
    if (t < KC) part_a[blockIdx.x * KC + t] = bpq;
    grid.sync();

    // B: the update_xr checks; alpha = rz/pq; x += alpha p'; r -= alpha q; rz_new, rr.
    const double tpq = sum_partials<KC>(part_a, smem);
    if (t < KC && t < g.k && sst[t].status == running) {
      rhs_state& st = sst[t];
      st.pq = tpq;
      st.status = cnc_status_of_pq(tpq);
      if (st.status == running) alpha_s[t] = st.rz / tpq;
    }
    __syncthreads();
    double rz = 0.0, rr = 0.0;
    if (j < g.k && sst[j].status == running)
      update_xr_range<KC, true>(x, r, nxt, q, d, static_cast<V>(alpha_s[j]), first, stride, total,
                                rz, rr);
    block_partials2<KC>(part_b, rz, rr, smem);
    if (t < KC) pend_s[t] = false;  // p' is now the current p
    V* const tmp = cur;
    cur = nxt;
    nxt = tmp;
    grid.sync();
    b_pending = true;
  }
  if (!wrote) return;  // nothing ran: g.p and the states are untouched
  if (b_pending) {
    double trz, trr;
    sum_partials2<KC>(part_b, part_b + gridDim.x * KC, trz, trr, smem);
    finish_update_p<KC>(g, sst, trz, trr, pend_s, beta_s);
    __syncthreads();
  }
  // The final p into the group's buffer: the pending update, or a copy when p lives in the
  // other buffer. Element by element (nothing reads p any more in this launch).
  {
    V* const gp = static_cast<V*>(g.p);
    const bool pj = j < KC && pend_s[j];
    const V bj = static_cast<V>(beta_s[j]);
    if (pj || cur != gp)
      for (long long f = first; f < total; f += stride)
        gp[f] = pj ? direction(d[f / KC], r[f], bj, cur[f]) : cur[f];
  }
  // Every block read g.state before the first barrier; block 0 writes after the last one.
  if (blockIdx.x == 0 && t < KC && t < g.k) g.state[t] = sst[t];
}

template <class T, int KC>
constexpr auto persistent_kernel() {
  return &k_pcg_persistent<typename T::mat, typename T::vec, KC>;
}

}  // namespace

cudaError_t pcg_persistent(precision pr, const matrix_view& a, const group_view& g, void* p_other,
                           double* partials, int grid, int count, cudaStream_t s) {
  if (a.fmt != format::sell) return cudaErrorNotSupported;
  if (count <= 0 || g.n == 0) return cudaSuccess;
  return with_prec(pr, [&](auto tp) {
    using T = decltype(tp);
    using V = typename T::vec;
    return with_kc(g.kc, [&](auto kc) {
      matrix_view av = a;
      group_view gv = g;
      V* other = static_cast<V*>(p_other);
      double* part = partials;
      int cnt = count;
      void* args[] = {&av, &gv, &other, &part, &cnt};
      return cudaLaunchCooperativeKernel(
          reinterpret_cast<const void*>(persistent_kernel<T, kc()>()), dim3(grid),
          dim3(block_threads), args, 0, s);
    });
  });
}

int pcg_persistent_max_grid(precision pr, int kc, int sm_count) {
  int per_sm = 0;
  const cudaError_t e = with_prec(pr, [&](auto tp) {
    using T = decltype(tp);
    return with_kc(kc, [&](auto k) {
      return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_kernel<T, k()>(),
                                                           block_threads, 0);
    });
  });
  return e == cudaSuccess && per_sm > 0 ? per_sm * sm_count : 0;
}

}  // namespace cnc::cuda
