// Persistent Jacobi-PCG for small systems: `count` iterations in one cooperative launch.
//
// A small system (n of order 1e5, data in L2) is bound by latency, not bytes: three kernels per
// iteration, each a grid launch ending in a last-block reduction, cost ~5 us apiece even inside
// a CUDA graph. Here the three steps of backend.hpp's contract run back to back in one kernel,
// separated by grid-wide barriers (cooperative groups), so an iteration costs three barriers.
//
// Scalars: every block reduces the same per-block partials in the same fixed order (sum_partials)
// and so computes bit-identical rhs_states; each block keeps its copy in shared memory, so no
// block ever reads a state another block is writing. Block 0 writes the states back at the end.
// Vectors written inside the launch (p, q, x, r) are read with coherent loads, never __ldg.
// Partials: A (pq, kc per block) and B (Σ d r², Σ r²: 2 kc per block) are distinct buffers; a
// buffer is rewritten only after a barrier that follows every block's reads of it.
#include <cooperative_groups.h>

#include "cuda_common.cuh"

namespace cnc::cuda {
namespace {

namespace cg = cooperative_groups;

template <class M, class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_pcg_persistent(matrix_view a, group_view g, double* part, int count) {
  cg::grid_group grid = cg::this_grid();
  __shared__ double smem[(block_threads / 32) * KC];
  __shared__ rhs_state sst[KC];
  __shared__ double coef[KC];  // alpha, then beta
  const int t = threadIdx.x;
  if (t < KC) sst[t] = t < g.k ? g.state[t] : rhs_state{0, 0, 0, 0, 0, converged, 0};
  __syncthreads();
  double* part_a = part;
  double* part_b = part + static_cast<long long>(gridDim.x) * KC;
  const V* __restrict__ d = static_cast<const V*>(g.d);
  V* x = static_cast<V*>(g.x);
  V* r = static_cast<V*>(g.r);
  V* p = static_cast<V*>(g.p);
  V* q = static_cast<V*>(g.q);
  const long long total = static_cast<long long>(g.n) * KC;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + t;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const int j = t % KC;  // the slot this thread serves in the vector phases (stride % KC == 0)
  const int lane = t & 31;
  const long long warp = first >> 5, n_warps = stride >> 5;
  bool wrote = false;

  for (int it = 0; it < count; ++it) {
    bool act[KC], any = false;
#pragma unroll
    for (int s = 0; s < KC; ++s) {
      act[s] = s < g.k && sst[s].status == running;
      any = any || act[s];
    }
    if (!any) break;  // uniform: every block holds the same states
    wrote = true;

    // Step 1: q = A p, pq = pᵀq.
    double pq[KC];
#pragma unroll
    for (int s = 0; s < KC; ++s) pq[s] = 0.0;
    for (long long slice = warp; slice < a.rows; slice += n_warps) {
      const long long row = slice * sell_rows + lane;
      V prow[KC], acc[KC];
      load_slots<KC, false>(p + row * KC, prow);
      sell_row<M, V, KC, false>(a, p, slice, lane, acc);
#pragma unroll
      for (int s = 0; s < KC; ++s) {
        if (!act[s]) continue;
        q[row * KC + s] = acc[s];
        pq[s] += static_cast<double>(acc[s]) * static_cast<double>(prow[s]);
      }
    }
    const double bpq = block_sum_all<KC>(pq, smem);
    if (t < KC) part_a[blockIdx.x * KC + t] = bpq;
    grid.sync();

    // Step 2: α = rz/pq; x += α p; r -= α q; rz_new, rr.
    const double tpq = sum_partials<KC>(part_a, smem);
    if (t < KC && t < g.k && sst[t].status == running) {
      rhs_state& st = sst[t];
      st.pq = tpq;
      if (!finite(tpq))
        st.status = not_finite;
      else if (tpq <= 0.0)
        st.status = indefinite_matrix;
      else
        coef[t] = st.rz / tpq;
    }
    __syncthreads();
    double rz = 0.0, rr = 0.0;
    if (j < g.k && sst[j].status == running) {
      const V alpha = static_cast<V>(coef[j]);
      for (long long f = first; f < total; f += stride) {
        const V rv = r[f] - alpha * q[f];
        x[f] += alpha * p[f];
        r[f] = rv;
        const double r2 = static_cast<double>(rv) * static_cast<double>(rv);
        rz += static_cast<double>(d[f / KC]) * r2;
        rr += r2;
      }
    }
    const double brz = block_sum_by_slot<KC>(rz, smem);
    const double brr = block_sum_by_slot<KC>(rr, smem);
    if (t < KC) {
      part_b[blockIdx.x * KC + t] = brz;
      part_b[(gridDim.x + blockIdx.x) * KC + t] = brr;
    }
    grid.sync();

    // Step 3: the update_p checks; β = rz_new/rz; p = d∘r + β p.
    const double trz = sum_partials<KC>(part_b, smem);
    const double trr = sum_partials<KC>(part_b + gridDim.x * KC, smem);
    if (t < KC && t < g.k && sst[t].status == running) {
      rhs_state& st = sst[t];
      st.rz_new = trz;
      st.rr = trr;
      st.iters += 1;
      if (!finite(trr) || !finite(trz)) {
        st.status = not_finite;
      } else if (trr <= st.thr2) {
        st.status = converged;
      } else if (trz <= 0.0) {
        st.status = indefinite_precond;
      } else {
        coef[t] = trz / st.rz;
        st.rz = trz;
      }
    }
    __syncthreads();
    if (j < g.k && sst[j].status == running) {
      const V beta = static_cast<V>(coef[j]);
      for (long long f = first; f < total; f += stride) p[f] = d[f / KC] * r[f] + beta * p[f];
    }
    grid.sync();
  }
  // Every block read g.state before the first barrier; block 0 writes after the last one.
  if (wrote && blockIdx.x == 0 && t < KC && t < g.k) g.state[t] = sst[t];
}

template <class T, int KC>
constexpr auto persistent_kernel() {
  return &k_pcg_persistent<typename T::mat, typename T::vec, KC>;
}

}  // namespace

cudaError_t pcg_persistent(cprec pr, const matrix_view& a, const group_view& g, double* partials,
                           int grid, int count, cudaStream_t s) {
  if (a.b != sell_rows) return cudaErrorNotSupported;
  if (count <= 0 || g.n == 0) return cudaSuccess;
  return with_prec(pr, [&](auto tp) {
    using T = decltype(tp);
    return with_kc(g.kc, [&](auto kc) {
      matrix_view av = a;
      group_view gv = g;
      double* part = partials;
      int cnt = count;
      void* args[] = {&av, &gv, &part, &cnt};
      return cudaLaunchCooperativeKernel(
          reinterpret_cast<const void*>(persistent_kernel<T, kc()>()), dim3(grid),
          dim3(block_threads), args, 0, s);
    });
  });
}

int pcg_persistent_max_grid(cprec pr, int kc, int sm_count) {
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
