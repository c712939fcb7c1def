// Fused vector steps of the CUDA Jacobi-PCG (backend.hpp's step contract), with every scalar
// kept on the device: each launch reads the rhs_state array, and its last block writes the new
// scalars and status. Thread t of a launch always serves slot j = t % KC of the group (the grid
// has a multiple of KC threads), so a thread needs one running sum per reduced quantity.
#include "common.cuh"

namespace cnc::cuda {
namespace {

template <class V, int KC>
__global__ void __launch_bounds__(block_threads) k_init(group_view g) {
  __shared__ double smem[2 * (block_threads / 32) * KC];
  const V* __restrict__ b = static_cast<const V*>(g.b);
  const V* __restrict__ q = static_cast<const V*>(g.q);  // A x
  const V* __restrict__ d = static_cast<const V*>(g.d);
  V* __restrict__ r = static_cast<V*>(g.r);
  V* __restrict__ p = static_cast<V*>(g.p);
  double rz = 0.0, rr = 0.0;
  const long long total = static_cast<long long>(g.n) * KC;
  for (long long f = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; f < total;
       f += static_cast<long long>(gridDim.x) * blockDim.x) {
    const V rv = b[f] - q[f];
    const V dv = d[f / KC];
    r[f] = rv;
    p[f] = dv * rv;
    const double r2 = static_cast<double>(rv) * static_cast<double>(rv);
    rz += static_cast<double>(dv) * r2;
    rr += r2;
  }
  if (!grid_sum2<KC>(g.partials, g.counter, rz, rr, smem)) return;
  const double trz = rz, trr = rr;
  const int j = threadIdx.x;
  if (j < KC && j < g.k) {
    rhs_state& st = g.state[j];
    st.rz = trz;
    st.rz_new = trz;
    st.rr = trr;
    st.pq = 0.0;
    st.iters = 0;
    st.status = cnc_status_of_residual(trr, trz, st.thr2);
  }
}

// True when no system of the group is running: the launch is then a no-op for every block.
template <int KC>
__device__ __forceinline__ bool none_running(const group_view& g) {
  bool any = false;
  for (int j = 0; j < g.k; ++j) any = any || g.state[j].status == running;
  return !any;
}

template <class V, int KC>
__global__ void __launch_bounds__(block_threads) k_update_xr(group_view g) {
  __shared__ double smem[2 * (block_threads / 32) * KC];
  if (none_running<KC>(g)) return;
  const int j = threadIdx.x % KC;
  bool act = false;
  V alpha = V(0);
  if (j < g.k) {
    const rhs_state& st = g.state[j];
    if (st.status == running && cnc_status_of_pq(st.pq) == running) {
      act = true;
      alpha = static_cast<V>(st.rz / st.pq);
    }
  }
  double rz = 0.0, rr = 0.0;
  if (act)  // x moves in update_p, which reads p anyway
    update_xr_range<KC, false>(
        static_cast<V*>(nullptr), static_cast<V*>(g.r), static_cast<const V*>(nullptr),
        static_cast<const V*>(g.q), static_cast<const V*>(g.d), alpha,
        static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x,
        static_cast<long long>(gridDim.x) * blockDim.x, static_cast<long long>(g.n) * KC, rz, rr);
  if (!grid_sum2<KC>(g.partials, g.counter, rz, rr, smem)) return;
  const double trz = rz, trr = rr;
  const int t = threadIdx.x;
  if (t < KC && t < g.k) {
    rhs_state& st = g.state[t];
    if (st.status == running) {
      st.status = cnc_status_of_pq(st.pq);
      if (st.status == running) {
        st.rz_new = trz;
        st.rr = trr;
        st.iters += 1;
      }
    }
  }
}

template <class V, int KC>
__global__ void __launch_bounds__(block_threads, 8) k_update_p(group_view g) {
  if (none_running<KC>(g)) return;
  const int j = threadIdx.x % KC;
  bool step = false, act = false;  // x += alpha p; p = d r + beta p
  V alpha = V(0), beta = V(0);
  if (j < g.k) {
    const rhs_state& st = g.state[j];
    if (st.status == running) {  // update_xr took its step: rz and pq are still its own
      step = true;
      alpha = static_cast<V>(st.rz / st.pq);
      if (cnc_status_of_residual(st.rr, st.rz_new, st.thr2) == running) {
        act = true;
        beta = static_cast<V>(st.rz_new / st.rz);
      }
    }
  }
  if (step) {
    const V* __restrict__ r = static_cast<const V*>(g.r);
    const V* __restrict__ d = static_cast<const V*>(g.d);
    V* __restrict__ p = static_cast<V*>(g.p);
    V* __restrict__ x = static_cast<V*>(g.x);
    const long long total = static_cast<long long>(g.n) * KC;
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    if (act) {
      for (long long f = first; f < total; f += stride) {
        const V pv = p[f];
        step_x(x[f], alpha, pv);
        p[f] = direction(d[f / KC], r[f], beta, pv);
      }
    } else {  // converged (or ended) here: the last step of x only
      for (long long f = first; f < total; f += stride) step_x(x[f], alpha, p[f]);
    }
  }
  // The scalars change only once every block has read the old ones.
  if (!last_block_done(g.counter)) return;
  const int t = threadIdx.x;
  if (t < KC && t < g.k) {
    rhs_state& st = g.state[t];
    if (st.status == running) {
      st.status = cnc_status_of_residual(st.rr, st.rz_new, st.thr2);
      if (st.status == running) st.rz = st.rz_new;
    }
  }
}

template <class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_scatter(group_view g, const double* __restrict__ src, std::int32_t n_real,
              const std::int32_t* __restrict__ perm, V* dst) {
  const long long total = static_cast<long long>(g.n) * KC;
  for (long long f = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; f < total;
       f += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = f / KC;
    const int j = static_cast<int>(f % KC);
    const bool real = i < n_real && j < g.k;
    const long long from = real && perm ? perm[i] : i;
    dst[f] = real ? static_cast<V>(src[j * static_cast<long long>(n_real) + from]) : V(0);
  }
}

template <class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_gather(group_view g, const V* __restrict__ src, std::int32_t n_real,
             const std::int32_t* __restrict__ perm, double* dst) {
  const long long total = static_cast<long long>(n_real) * KC;
  for (long long f = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; f < total;
       f += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = f / KC;
    const int j = static_cast<int>(f % KC);
    const long long to = perm ? perm[i] : i;
    if (j < g.k) dst[j * static_cast<long long>(n_real) + to] = static_cast<double>(src[f]);
  }
}

// Launches kernel<V, KC>(g, args...) on the group's vector grid.
template <template <class, int> class K, class... A>
cudaError_t launch_vec(precision pr, const group_view& g, cudaStream_t s, A... args) {
  if (g.n == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    return with_kc(g.kc, [&](auto kc) {
      K<V, kc()>::launch(g, s, args...);
      return cudaGetLastError();
    });
  });
}

template <class V, int KC>
struct init_k {
  static void launch(const group_view& g, cudaStream_t s) {
    k_init<V, KC><<<g.grid, block_threads, 0, s>>>(g);
  }
};
template <class V, int KC>
struct xr_k {
  static void launch(const group_view& g, cudaStream_t s) {
    k_update_xr<V, KC><<<g.grid, block_threads, 0, s>>>(g);
  }
};
template <class V, int KC>
struct p_k {
  static void launch(const group_view& g, cudaStream_t s) {
    k_update_p<V, KC><<<g.grid, block_threads, 0, s>>>(g);
  }
};
template <class V, int KC>
struct scatter_k {
  static void launch(const group_view& g, cudaStream_t s, const double* src, std::int32_t n_real,
                     const std::int32_t* perm, void* dst) {
    k_scatter<V, KC><<<g.grid, block_threads, 0, s>>>(g, src, n_real, perm, static_cast<V*>(dst));
  }
};
template <class V, int KC>
struct gather_k {
  static void launch(const group_view& g, cudaStream_t s, const void* src, std::int32_t n_real,
                     const std::int32_t* perm, double* dst) {
    k_gather<V, KC>
        <<<g.grid, block_threads, 0, s>>>(g, static_cast<const V*>(src), n_real, perm, dst);
  }
};

}  // namespace

cudaError_t init_vectors(precision pr, const group_view& g, cudaStream_t s) {
  return launch_vec<init_k>(pr, g, s);
}
cudaError_t update_xr(precision pr, const group_view& g, cudaStream_t s) {
  return launch_vec<xr_k>(pr, g, s);
}
cudaError_t update_p(precision pr, const group_view& g, cudaStream_t s) {
  return launch_vec<p_k>(pr, g, s);
}
cudaError_t scatter(precision pr, const group_view& g, const double* src, std::int32_t n_real,
                    const std::int32_t* perm, void* dst, cudaStream_t s) {
  return launch_vec<scatter_k>(pr, g, s, src, n_real, perm, dst);
}
cudaError_t gather(precision pr, const group_view& g, const void* src, std::int32_t n_real,
                   const std::int32_t* perm, double* dst, cudaStream_t s) {
  return launch_vec<gather_k>(pr, g, s, src, n_real, perm, dst);
}

int vector_max_grid(int sm_count) {
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_update_xr<double, 8>, block_threads,
                                                    0) != cudaSuccess ||
      per_sm <= 0)
    return -1;
  return per_sm * sm_count;
}

}  // namespace cnc::cuda
