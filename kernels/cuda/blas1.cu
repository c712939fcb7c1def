// The vector surface of the CUDA backend (backend.hpp): BLAS-1 operations over the vectors of
// one group (cuda_kernels.hpp layout, v[i*kc + j]), each ONE launch on the group's vector grid.
//
// The grid has a multiple of kc threads, so thread t always serves slot j = t % kc: a thread whose
// slot is masked out (mask bit j clear; bits >= k are always clear, so padding slots stay zero)
// neither reads nor writes, and the masked columns keep their bits. Every element loop is a
// grid-stride loop that loads U elements (t, t + S, ..., S = grid threads) before storing any:
// the loads are in flight together (memory bandwidth on H100/H200), and an input may be the
// output (x == y in axpby) since each element is read before it is written, by its own thread.
//
// dots reduce like the PCG kernels (common.cuh): each thread sums its elements in a fixed
// order in double, the block sums them by slot in a fixed order into per-block partials, and the
// block that finishes last sums the partials in block order. No floating-point atomics: the same
// inputs on the same grid give the same bits, whatever other vectors share the launch.
#include "common.cuh"

namespace cnc::cuda {
namespace {

// Elements a thread loads before storing any, per trip.
constexpr int map_unroll = 4;

// For f = first, first + stride, ... < total, in that order: store(f, load(f)), with the loads
// of U consecutive elements of the sequence issued before their stores.
template <int U, class T, class Load, class Store>
__device__ __forceinline__ void map_elements(long long first, long long stride, long long total,
                                             Load load, Store store) {
  for (long long f0 = first; f0 < total; f0 += U * stride) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long f = f0 + u * stride;
      v[u] = f < total ? load(f) : T{};
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const long long f = f0 + u * stride;
      if (f < total) store(f, v[u]);
    }
  }
}

enum class map_op { copy, diag, sub, axpby };

// out = op(a, b) on the active slots:
//   copy: out = a;  diag: out = d∘a;  sub: out = a - b;
//   axpby: out = alpha a + beta b (b may be out), or alpha a where beta == 0 (b is not read).
template <class V, int KC, map_op O>
__global__ void __launch_bounds__(block_threads)
    k_map(group_view g, unsigned int mask, group_coefs c, const V* a, const V* b, V* out) {
  const int j = threadIdx.x % KC;
  if (!((mask >> j) & 1u)) return;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long total = static_cast<long long>(g.n) * KC;
  auto store = [out](long long f, V v) { out[f] = v; };
  if constexpr (O == map_op::copy) {
    map_elements<map_unroll, V>(
        first, stride, total, [a](long long f) { return a[f]; }, store);
  } else if constexpr (O == map_op::diag) {
    const V* __restrict__ d = static_cast<const V*>(g.d);
    map_elements<map_unroll, V>(
        first, stride, total, [a, d](long long f) { return d[f / KC] * a[f]; }, store);
  } else if constexpr (O == map_op::sub) {
    map_elements<map_unroll, V>(
        first, stride, total, [a, b](long long f) { return a[f] - b[f]; }, store);
  } else {
    // The branch is per thread (its slot's beta): a warp may take both, each with its lanes.
    double alpha = 0.0, beta = 0.0;  // constant indices: no local-memory copy of `c`
#pragma unroll
    for (int t = 0; t < KC; ++t)
      if (t == j) alpha = c.alpha[t], beta = c.beta[t];
    const V al = static_cast<V>(alpha), be = static_cast<V>(beta);
    if (beta == 0.0)
      map_elements<map_unroll, V>(
          first, stride, total, [a, al](long long f) { return al * a[f]; }, store);
    else
      map_elements<map_unroll, V>(
          first, stride, total, [a, b, al, be](long long f) { return al * a[f] + be * b[f]; },
          store);
  }
}

template <class V>
struct cpair {  // one complex element: map_elements' value type in k_zaxpby
  V re, im;
};

// Complex y = alpha x + beta y on the active slots, or alpha x where beta == 0 (y not read).
// Element f of the grid-stride sequence is pair q = f / KC of slot j = f % KC: rows 2q and
// 2q + 1, i.e. y[2f - j] and y[2f - j + KC]. One thread reads both parts of x and y before it
// writes either, and no other thread touches the pair, so x may be y.
template <class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_zaxpby(group_view g, unsigned int mask, group_zcoefs c, const V* x, V* y) {
  const int j = threadIdx.x % KC;
  if (!((mask >> j) & 1u)) return;
  double a[2] = {}, b[2] = {};  // constant indices: no local-memory copy of `c`
#pragma unroll
  for (int t = 0; t < KC; ++t)
    if (t == j)
      a[0] = c.alpha[t][0], a[1] = c.alpha[t][1], b[0] = c.beta[t][0], b[1] = c.beta[t][1];
  const V ar = static_cast<V>(a[0]), ai = static_cast<V>(a[1]);
  const V br = static_cast<V>(b[0]), bi = static_cast<V>(b[1]);
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long total = static_cast<long long>(g.n / 2) * KC;
  auto store = [y, j](long long f, cpair<V> v) { y[2 * f - j] = v.re, y[2 * f - j + KC] = v.im; };
  auto run = [&](auto read_y) {  // the branch per thread (its slot's beta), as in axpby
    map_elements<map_unroll, cpair<V>>(
        first, stride, total,
        [=](long long f) {
          const long long re = 2 * f - j, im = re + KC;
          const V xr = x[re], xi = x[im];
          cpair<V> v{ar * xr - ai * xi, ar * xi + ai * xr};
          if constexpr (decltype(read_y)::value) {
            const V yr = y[re], yi = y[im];
            v.re += br * yr - bi * yi, v.im += br * yi + bi * yr;
          }
          return v;
        },
        store);
  };
  if (b[0] == 0.0 && b[1] == 0.0)
    run(std::false_type{});
  else
    run(std::true_type{});
}

// Complex y = d x on the active slots' pairs, d = (zd[2q], zd[2q + 1]) for pair q (the system's
// D⁻¹, one pair per complex row, shared by the slots). x may be y (each pair read, then written,
// by one thread).
template <class V, int KC>
__global__ void __launch_bounds__(block_threads)
    k_zdiag(group_view g, unsigned int mask, const V* __restrict__ zd, const V* x, V* y) {
  const int j = threadIdx.x % KC;
  if (!((mask >> j) & 1u)) return;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long total = static_cast<long long>(g.n / 2) * KC;
  map_elements<map_unroll, cpair<V>>(
      first, stride, total,
      [=](long long f) {
        const long long q = f / KC, re = 2 * f - j, im = re + KC;
        const V dr = __ldg(zd + 2 * q), di = __ldg(zd + 2 * q + 1), xr = x[re], xi = x[im];
        return cpair<V>{dr * xr - di * xi, dr * xi + di * xr};
      },
      [y, j](long long f, cpair<V> v) { y[2 * f - j] = v.re, y[2 * f - j + KC] = v.im; });
}

// y = beta y + Σ_{i < count} coef[i] v[i] on the active slots (count <= NV), the sum in i order
// in the vectors' precision; where beta == 0, y is not read.
template <class V, int KC, int NV>
__global__ void __launch_bounds__(block_threads)
    k_combine(group_view g, unsigned int mask, combine_coefs c, int count, V* y) {
  const int j = threadIdx.x % KC;
  if (!((mask >> j) & 1u)) return;
  V al[NV];
  double beta = 0.0;  // constant indices: no local-memory copy of `c`
#pragma unroll
  for (int t = 0; t < KC; ++t)
    if (t == j) {
      beta = c.beta[t];
#pragma unroll
      for (int i = 0; i < NV; ++i) al[i] = static_cast<V>(c.coef[i][t]);
    }
  const V be = static_cast<V>(beta);
  const V* vp[NV];
#pragma unroll
  for (int i = 0; i < NV; ++i) vp[i] = static_cast<const V*>(c.v[i]);  // read if i < count
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long total = static_cast<long long>(g.n) * KC;
  constexpr int U = NV >= 4 ? 1 : 4 / NV;  // loads in flight per thread: U * (NV + 1)
  auto store = [y](long long f, V v) { y[f] = v; };
  auto sum = [&](long long f, V s) {
#pragma unroll
    for (int i = 0; i < NV; ++i)
      if (i < count) s += al[i] * __ldg(vp[i] + f);
    return s;
  };
  if (beta == 0.0)
    map_elements<U, V>(
        first, stride, total, [&](long long f) { return sum(f, V(0)); }, store);
  else
    map_elements<U, V>(
        first, stride, total, [&](long long f) { return sum(f, be * y[f]); }, store);
}

// Complex y = beta y + Σ_{i < count} c_i v[i] on the active slots' pairs (count <= NV), c_i
// complex, beta real, the sum in i order in the vectors' precision; where beta == 0, y is not
// read. Pairs as in k_zaxpby; y is none of v.
template <class V, int KC, int NV>
__global__ void __launch_bounds__(block_threads)
    k_zcombine(group_view g, unsigned int mask, zcombine_coefs c, int count, V* y) {
  const int j = threadIdx.x % KC;
  if (!((mask >> j) & 1u)) return;
  V cr[NV], ci[NV];
  double beta = 0.0;  // constant indices: no local-memory copy of `c`
#pragma unroll
  for (int t = 0; t < KC; ++t)
    if (t == j) {
      beta = c.beta[t];
#pragma unroll
      for (int i = 0; i < NV; ++i)
        cr[i] = static_cast<V>(c.coef[i][t][0]), ci[i] = static_cast<V>(c.coef[i][t][1]);
    }
  const V be = static_cast<V>(beta);
  const V* vp[NV];
#pragma unroll
  for (int i = 0; i < NV; ++i) vp[i] = static_cast<const V*>(c.v[i]);  // read if i < count
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long total = static_cast<long long>(g.n / 2) * KC;
  constexpr int U = NV >= 4 ? 1 : 4 / NV;  // pairs in flight per thread: U * (NV + 1)
  auto store = [y, j](long long f, cpair<V> v) { y[2 * f - j] = v.re, y[2 * f - j + KC] = v.im; };
  auto sum = [&](long long f, cpair<V> s) {
    const long long re = 2 * f - j, im = re + KC;
#pragma unroll
    for (int i = 0; i < NV; ++i)
      if (i < count) {
        const V vr = __ldg(vp[i] + re), vi = __ldg(vp[i] + im);
        s.re += cr[i] * vr - ci[i] * vi, s.im += cr[i] * vi + ci[i] * vr;
      }
    return s;
  };
  if (beta == 0.0)
    map_elements<U, cpair<V>>(
        first, stride, total,
        [&](long long f) {
          return sum(f, cpair<V>{V(0), V(0)});
        },
        store);
  else
    map_elements<U, cpair<V>>(
        first, stride, total,
        [&](long long f) {
          const long long re = 2 * f - j;
          return sum(f, cpair<V>{be * y[re], be * y[re + KC]});
        },
        store);
}

// Block sums by (vector i < NV, slot j) of one value per thread and vector (slot j =
// threadIdx.x % KC), each added in a fixed order. Result for (i, j) in thread i*KC + j.
// smem: NV * (blockDim.x/32) * KC doubles.
template <int KC, int NV>
__device__ __forceinline__ double block_sums(const double (&s)[NV], double* smem) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int nw = blockDim.x >> 5;
#pragma unroll
  for (int i = 0; i < NV; ++i) {
    double t = s[i];
#pragma unroll
    for (int off = 16; off >= KC; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
    if (lane < KC) smem[(i * nw + warp) * KC + lane] = t;
  }
  __syncthreads();
  double r = 0.0;
  if (threadIdx.x < NV * KC) {
    const int i = threadIdx.x / KC, jj = threadIdx.x % KC;
    for (int w = 0; w < nw; ++w) r += smem[(i * nw + w) * KC + jj];
  }
  __syncthreads();
  return r;
}

// result[i*stride + j] = Σ u_j v_i,j (double) for i < count <= NV and j < g.k; 0 where masked.
// part: NV * KC * gridDim.x doubles ([vector][block][slot]); counter: zero between launches.
template <class V, int KC, int NV>
__global__ void __launch_bounds__(block_threads)
    k_dots(group_view g, unsigned int mask, const V* __restrict__ u, dot_vectors v, int count,
           double* part, unsigned int* counter, double* result, int stride) {
  __shared__ double smem[NV * (block_threads / 32) * KC];
  constexpr int U = NV >= 4 ? 1 : 4 / NV;  // loads in flight per thread: U * (NV + 1)
  const int j = threadIdx.x % KC;
  double s[NV];
#pragma unroll
  for (int i = 0; i < NV; ++i) s[i] = 0.0;
  if ((mask >> j) & 1u) {
    const V* vp[NV];
#pragma unroll
    for (int i = 0; i < NV; ++i) vp[i] = static_cast<const V*>(v.v[i]);  // read if i < count
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long total = static_cast<long long>(g.n) * KC;
    for (long long f0 = first; f0 < total; f0 += U * step) {
      V uu[U], vv[U][NV];
#pragma unroll
      for (int e = 0; e < U; ++e) {
        const long long f = f0 + e * step;
        const bool in = f < total;
        uu[e] = in ? __ldg(u + f) : V(0);
#pragma unroll
        for (int i = 0; i < NV; ++i) vv[e][i] = in && i < count ? __ldg(vp[i] + f) : V(0);
      }
#pragma unroll
      for (int e = 0; e < U; ++e)
#pragma unroll
        for (int i = 0; i < NV; ++i)
          s[i] = __fma_rn(static_cast<double>(uu[e]), static_cast<double>(vv[e][i]), s[i]);
    }
  }
  const double blk = block_sums<KC, NV>(s, smem);
  if (threadIdx.x < count * KC) {
    const int i = threadIdx.x / KC, jj = threadIdx.x % KC;
    part[(static_cast<long long>(i) * gridDim.x + blockIdx.x) * KC + jj] = blk;
  }
  if (!last_block_done(counter)) return;
  // The last block: every vector's partials in block order, all loads of a step in flight.
  double t[NV];
#pragma unroll
  for (int i = 0; i < NV; ++i) t[i] = 0.0;
  for (unsigned int b = threadIdx.x / KC; b < gridDim.x; b += blockDim.x / KC)
#pragma unroll
    for (int i = 0; i < NV; ++i)
      if (i < count) t[i] += __ldcg(part + (static_cast<long long>(i) * gridDim.x + b) * KC + j);
  const double sum = block_sums<KC, NV>(t, smem);
  if (threadIdx.x < count * KC) {
    const int i = threadIdx.x / KC, jj = threadIdx.x % KC;
    if (jj < g.k) result[static_cast<long long>(i) * stride + jj] = (mask >> jj) & 1u ? sum : 0.0;
  }
}

// result[2(i*stride + j) + p] = part p (re, im) of Σ conj(u_j) v[i]_j over the pairs (double),
// for i < count <= NV and j < g.k; 0 where masked. Reduced as k_dots, with 2 NV sums a slot.
// part: 2 NV * KC * gridDim.x doubles ([2i + p][block][slot]).
template <class V, int KC, int NV>
__global__ void __launch_bounds__(block_threads)
    k_zdots(group_view g, unsigned int mask, const V* __restrict__ u, dot_vectors v, int count,
            double* part, unsigned int* counter, double* result, int stride) {
  __shared__ double smem[2 * NV * (block_threads / 32) * KC];
  constexpr int U = NV >= 4 ? 1 : 4 / NV;  // pairs in flight per thread: U * (NV + 1)
  const int j = threadIdx.x % KC;
  double s[2 * NV];
#pragma unroll
  for (int i = 0; i < 2 * NV; ++i) s[i] = 0.0;
  if ((mask >> j) & 1u) {
    const V* vp[NV];
#pragma unroll
    for (int i = 0; i < NV; ++i) vp[i] = static_cast<const V*>(v.v[i]);  // read if i < count
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long total = static_cast<long long>(g.n / 2) * KC;
    for (long long f0 = first; f0 < total; f0 += U * step) {
      double ur[U], ui[U], vr[U][NV], vi[U][NV];
#pragma unroll
      for (int e = 0; e < U; ++e) {
        const long long f = f0 + e * step, re = 2 * f - j, im = re + KC;
        const bool in = f < total;
        ur[e] = in ? static_cast<double>(__ldg(u + re)) : 0.0;
        ui[e] = in ? static_cast<double>(__ldg(u + im)) : 0.0;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
          const bool use = in && i < count;
          vr[e][i] = use ? static_cast<double>(__ldg(vp[i] + re)) : 0.0;
          vi[e][i] = use ? static_cast<double>(__ldg(vp[i] + im)) : 0.0;
        }
      }
#pragma unroll
      for (int e = 0; e < U; ++e)
#pragma unroll
        for (int i = 0; i < NV; ++i) {  // conj(u) v = (ur vr + ui vi) + i (ur vi - ui vr)
          s[2 * i] = __fma_rn(ui[e], vi[e][i], __fma_rn(ur[e], vr[e][i], s[2 * i]));
          s[2 * i + 1] = __fma_rn(-ui[e], vr[e][i], __fma_rn(ur[e], vi[e][i], s[2 * i + 1]));
        }
    }
  }
  const double blk = block_sums<KC, 2 * NV>(s, smem);
  if (threadIdx.x < 2 * count * KC) {
    const int i = threadIdx.x / KC, jj = threadIdx.x % KC;
    part[(static_cast<long long>(i) * gridDim.x + blockIdx.x) * KC + jj] = blk;
  }
  if (!last_block_done(counter)) return;
  double t[2 * NV];
#pragma unroll
  for (int i = 0; i < 2 * NV; ++i) t[i] = 0.0;
  for (unsigned int b = threadIdx.x / KC; b < gridDim.x; b += blockDim.x / KC)
#pragma unroll
    for (int i = 0; i < 2 * NV; ++i)
      if (i < 2 * count)
        t[i] += __ldcg(part + (static_cast<long long>(i) * gridDim.x + b) * KC + j);
  const double sum = block_sums<KC, 2 * NV>(t, smem);
  if (threadIdx.x < 2 * count * KC) {
    const int i = threadIdx.x / KC, jj = threadIdx.x % KC;  // i = 2 * vector + part
    if (jj < g.k)
      result[2 * (static_cast<long long>(i / 2) * stride + jj) + i % 2] =
          (mask >> jj) & 1u ? sum : 0.0;
  }
}

template <map_op O>
cudaError_t launch_map(precision pr, const group_view& g, unsigned int mask, const group_coefs& c,
                       const void* a, const void* b, void* out, cudaStream_t s) {
  if (g.n == 0 || mask == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    return with_kc(g.kc, [&](auto kc) {
      k_map<V, kc(), O><<<g.grid, block_threads, 0, s>>>(
          g, mask, c, static_cast<const V*>(a), static_cast<const V*>(b), static_cast<V*>(out));
      return cudaGetLastError();
    });
  });
}

}  // namespace

cudaError_t blas_copy(precision pr, const group_view& g, unsigned int mask, const void* in,
                      void* out, cudaStream_t s) {
  return launch_map<map_op::copy>(pr, g, mask, group_coefs{}, in, nullptr, out, s);
}
cudaError_t blas_diag(precision pr, const group_view& g, unsigned int mask, const void* in,
                      void* out, cudaStream_t s) {
  return launch_map<map_op::diag>(pr, g, mask, group_coefs{}, in, nullptr, out, s);
}
cudaError_t blas_sub(precision pr, const group_view& g, unsigned int mask, const void* a,
                     const void* b, void* out, cudaStream_t s) {
  return launch_map<map_op::sub>(pr, g, mask, group_coefs{}, a, b, out, s);
}
cudaError_t blas_axpby(precision pr, const group_view& g, unsigned int mask, const group_coefs& c,
                       const void* x, void* y, cudaStream_t s) {
  return launch_map<map_op::axpby>(pr, g, mask, c, x, y, y, s);
}

cudaError_t blas_zaxpby(precision pr, const group_view& g, unsigned int mask, const group_zcoefs& c,
                        const void* x, void* y, cudaStream_t s) {
  if (g.n < 2 || mask == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    return with_kc(g.kc, [&](auto kc) {
      k_zaxpby<V, kc()><<<g.grid, block_threads, 0, s>>>(g, mask, c, static_cast<const V*>(x),
                                                         static_cast<V*>(y));
      return cudaGetLastError();
    });
  });
}

cudaError_t blas_zdiag(precision pr, const group_view& g, unsigned int mask, const void* zd,
                       const void* x, void* y, cudaStream_t s) {
  if (g.n < 2 || mask == 0) return cudaSuccess;
  return with_prec(pr, [&](auto t) {
    using V = typename decltype(t)::vec;
    return with_kc(g.kc, [&](auto kc) {
      k_zdiag<V, decltype(kc)::value><<<g.grid, block_threads, 0, s>>>(
          g, mask, static_cast<const V*>(zd), static_cast<const V*>(x), static_cast<V*>(y));
      return cudaGetLastError();
    });
  });
}

namespace {

// The pass loops of combine and dots, real (Z false) or complex (Z true, per = 2 values a
// coefficient or result): one launch per max_fused_dots vectors, the kernel instantiated for
// 1, 2, 4 or 8 of them.
template <int NV, class F>
cudaError_t with_nv(int c, F&& f) {
  if (c == 1) return f(std::integral_constant<int, 1>{});
  if (c == 2) return f(std::integral_constant<int, 2>{});
  if (c <= 4) return f(std::integral_constant<int, 4>{});
  return f(std::integral_constant<int, NV>{});
}

template <bool Z>
cudaError_t combine_passes(precision pr, const group_view& g, unsigned int mask,
                           const void* const* v, int count, const double* coef, int stride,
                           const double* beta, void* y, cudaStream_t s) {
  if (g.n < (Z ? 2 : 1) || mask == 0) return cudaSuccess;
  using coefs = std::conditional_t<Z, zcombine_coefs, combine_coefs>;
  for (int i0 = 0; i0 < count; i0 += max_fused_dots) {
    const int n = count - i0 < max_fused_dots ? count - i0 : max_fused_dots;
    coefs c;
    for (int j = 0; j < g.k; ++j) {
      c.beta[j] = i0 == 0 ? beta[j] : 1.0;
      for (int i = 0; i < n; ++i) {
        const long long e = static_cast<long long>(i0 + i) * stride + j;
        if constexpr (Z)
          c.coef[i][j][0] = coef[2 * e], c.coef[i][j][1] = coef[2 * e + 1];
        else
          c.coef[i][j] = coef[e];
      }
    }
    for (int i = 0; i < n; ++i) c.v[i] = v[i0 + i];
    const cudaError_t e = with_prec(pr, [&](auto t) {
      using V = typename decltype(t)::vec;
      return with_kc(g.kc, [&](auto kc) {
        return with_nv<max_fused_dots>(n, [&](auto nv) {
          constexpr int KC = decltype(kc)::value, NV = decltype(nv)::value;
          if constexpr (Z)
            k_zcombine<V, KC, NV>
                <<<g.grid, block_threads, 0, s>>>(g, mask, c, n, static_cast<V*>(y));
          else
            k_combine<V, KC, NV>
                <<<g.grid, block_threads, 0, s>>>(g, mask, c, n, static_cast<V*>(y));
          return cudaGetLastError();
        });
      });
    });
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

template <bool Z>
cudaError_t dots_passes(precision pr, const group_view& g, unsigned int mask, const void* u,
                        const void* const* v, int count, double* partials, unsigned int* counter,
                        double* result, int stride, cudaStream_t s) {
  for (int i0 = 0; i0 < count; i0 += max_fused_dots) {
    const int c = count - i0 < max_fused_dots ? count - i0 : max_fused_dots;
    dot_vectors dv{};
    for (int i = 0; i < c; ++i) dv.v[i] = v[i0 + i];
    double* res = result + (Z ? 2 : 1) * static_cast<long long>(i0) * stride;
    const cudaError_t e = with_prec(pr, [&](auto t) {
      using V = typename decltype(t)::vec;
      return with_kc(g.kc, [&](auto kc) {
        return with_nv<max_fused_dots>(c, [&](auto nv) {
          constexpr int KC = decltype(kc)::value, NV = decltype(nv)::value;
          const V* uu = static_cast<const V*>(u);
          if constexpr (Z)
            k_zdots<V, KC, NV><<<g.grid, block_threads, 0, s>>>(g, mask, uu, dv, c, partials,
                                                                counter, res, stride);
          else
            k_dots<V, KC, NV><<<g.grid, block_threads, 0, s>>>(g, mask, uu, dv, c, partials,
                                                               counter, res, stride);
          return cudaGetLastError();
        });
      });
    });
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t blas_combine(precision pr, const group_view& g, unsigned int mask, const void* const* v,
                         int count, const double* coef, int stride, const double* beta, void* y,
                         cudaStream_t s) {
  return combine_passes<false>(pr, g, mask, v, count, coef, stride, beta, y, s);
}
cudaError_t blas_zcombine(precision pr, const group_view& g, unsigned int mask,
                          const void* const* v, int count, const double* coef, int stride,
                          const double* beta, void* y, cudaStream_t s) {
  return combine_passes<true>(pr, g, mask, v, count, coef, stride, beta, y, s);
}
cudaError_t blas_dots(precision pr, const group_view& g, unsigned int mask, const void* u,
                      const void* const* v, int count, double* partials, unsigned int* counter,
                      double* result, int stride, cudaStream_t s) {
  return dots_passes<false>(pr, g, mask, u, v, count, partials, counter, result, stride, s);
}
cudaError_t blas_zdots(precision pr, const group_view& g, unsigned int mask, const void* u,
                       const void* const* v, int count, double* partials, unsigned int* counter,
                       double* result, int stride, cudaStream_t s) {
  return dots_passes<true>(pr, g, mask, u, v, count, partials, counter, result, stride, s);
}

}  // namespace cnc::cuda
