// The CPU kernels, written once and compiled once per ISA (kernels_generic/avx2/avx512.cpp set
// the target flags and CNC_ISA_NAMESPACE). Everything here lives in a per-ISA anonymous namespace
// and uses no inline functions from other headers, so no AVX code can leak into generic paths.
//
// Matrix values MT (float/double), vector values VT; dot products accumulate in double.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "backends/cpu/cpu_kernels.hpp"

namespace cnc {
namespace {

// Size of a local array of sums for k known at compile time (KS > 1); 1 when they are kept
// elsewhere (KS = 1 keeps scalars, KS = 0 sums in place).
constexpr int local_slots(int ks, int per_system) { return ks > 1 ? ks * per_system : 1; }

template <class T>
inline const T* cp(const void* v) {
  return static_cast<const T*>(v);
}
template <class T>
inline T* mp(void* v) {
  return static_cast<T*>(v);
}

// SELL slices s0..s1 (32 rows each, entries column-major per slice): the 32 rows of a slice
// advance together, one entry each per step (vectorizable across the rows, gathers from `in`).
template <int KS, class VT, class MT>
inline void sell_range(const cpu_matrix_view& a, int k_, const VT* in, VT* out, std::int32_t s0,
                       std::int32_t s1) {
  constexpr int C = sell_slice;
  const int k = KS ? KS : k_;
  const MT* val = cp<MT>(a.val);
  for (std::int32_t s = s0; s < s1; ++s) {
    const std::int64_t base = a.row_ptr[s], w = (a.row_ptr[s + 1] - base) / C;
    VT* __restrict o = out + std::int64_t(s) * C * k;
    if constexpr (KS == 1) {
      VT acc[C] = {};
      for (std::int64_t t = 0; t < w; ++t) {
        const MT* v = val + base + t * C;
        const std::int32_t* c = a.col + base + t * C;
#pragma omp simd
        for (int l = 0; l < C; ++l) acc[l] += VT(v[l]) * in[c[l]];
      }
      for (int l = 0; l < C; ++l) o[l] = acc[l];
    } else {
      for (int t = 0; t < C * k; ++t) o[t] = VT(0);
      for (std::int64_t t = 0; t < w; ++t)
        for (int l = 0; l < C; ++l) {
          const std::int64_t e = base + t * C + l;
          const VT v = VT(val[e]);
          const VT* __restrict src = in + std::int64_t(a.col[e]) * k;
#pragma omp simd
          for (int j = 0; j < k; ++j) o[l * k + j] += v * src[j];
        }
    }
  }
}

// ZCSR complex rows i0..i1 (real rows 2i, 2i + 1): y_i = sum a_ij x_j, complex, with x_j at
// real rows 2j (re) and 2j + 1 (im) of `in`; each entry's pair is read once for both rows.
template <int KS, class VT, class MT>
inline void zcsr_range(const cpu_matrix_view& a, int k_, const VT* in, VT* out, std::int32_t i0,
                       std::int32_t i1) {
  const int k = KS ? KS : k_;
  const MT* val = cp<MT>(a.val);
  for (std::int32_t i = i0; i < i1; ++i) {
    const std::int64_t e = a.row_ptr[i + 1];
    if constexpr (KS == 1) {
      VT re = 0, im = 0;
      for (std::int64_t t = a.row_ptr[i]; t < e; ++t) {
        const VT ar = VT(val[2 * t]), ai = VT(val[2 * t + 1]);
        const VT* src = in + 2 * std::int64_t(a.col[t]);
        re += ar * src[0] - ai * src[1];
        im += ar * src[1] + ai * src[0];
      }
      out[2 * std::int64_t(i)] = re, out[2 * std::int64_t(i) + 1] = im;
    } else {
      VT* o = out + 2 * std::int64_t(i) * k;
      for (int t = 0; t < 2 * k; ++t) o[t] = VT(0);
      for (std::int64_t t = a.row_ptr[i]; t < e; ++t) {
        const VT ar = VT(val[2 * t]), ai = VT(val[2 * t + 1]);
        const VT* src = in + 2 * std::int64_t(a.col[t]) * k;
        for (int j = 0; j < k; ++j) {
          o[j] += ar * src[j] - ai * src[k + j];
          o[k + j] += ar * src[k + j] + ai * src[j];
        }
      }
    }
  }
}

#if defined(__AVX512F__)
// One CSR row's Σ val[t] in[col[t]], double, 8 entries at a time (one gather of 8, the row's last
// ones masked), the 8 lanes' sums added at the end: no branch per entry, whose loop exits the
// short rows of random length of a power-law graph or an irregular mesh mispredict once a row
// (a flush of the loads in flight), and 8 gathers an instruction. GCC 12 takes the undefined
// sources inside its own gather and reduction intrinsics for uninitialized values (GCC bug
// 105593): that warning is off here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
inline double csr_row_dot8(const double* val, const std::int32_t* col, const double* in,
                           std::int64_t t, std::int64_t e) {
  __m512d acc = _mm512_setzero_pd();
  for (; t + 8 <= e; t += 8) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + t));
    acc = _mm512_fmadd_pd(_mm512_loadu_pd(val + t), _mm512_i32gather_pd(c, in, 8), acc);
  }
  if (t < e) {
    const __mmask8 m = static_cast<__mmask8>((1u << (e - t)) - 1u);
    const __m256i c = _mm256_maskz_loadu_epi32(m, col + t);
    const __m512d g = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, c, in, 8);
    acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, val + t), g, acc);
  }
  return _mm512_reduce_add_pd(acc);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// CSR rows r0..r1 with one system, the gather of `in` prefetch_distance entries ahead issued
// before each entry (cpu_matrix_view::prefetch_gathers). Measured (BENCHMARKS.md, CPU backend):
// the power-law 2M graph's iteration 70 -> 40-45 ms on the 2-core AMD build box; no gain on the
// GPU machine's Intel host, whose 300 MiB L3 holds x. Only for scattered columns, where it was
// measured to pay: stencils, whose gathers hit the caches, keep the plain loop.
template <class VT, class MT>
inline void csr_prefetched_range(const cpu_matrix_view& a, const VT* in, VT* out, std::int32_t r0,
                                 std::int32_t r1) {
  constexpr std::int64_t prefetch_distance = 64;
  const MT* val = cp<MT>(a.val);
  const std::int64_t last = a.row_ptr[r1];
  for (std::int32_t r = r0; r < r1; ++r) {
    const std::int64_t e = a.row_ptr[r + 1];
    VT acc = 0;
    for (std::int64_t t = a.row_ptr[r]; t < e; ++t) {
      if (t + prefetch_distance < last) __builtin_prefetch(in + a.col[t + prefetch_distance]);
      acc += VT(val[t]) * in[a.col[t]];
    }
    out[r] = acc;
  }
}

// out[rows r0..r1) = A in, for k interleaved systems; returns nothing. Rows r0..r1 are row
// groups of format F (block rows for BCRS, slices for SELL).
template <format F, int KS, class VT, class MT>
inline void spmv_range(const cpu_matrix_view& a, int k_, const VT* in, VT* out, std::int32_t r0,
                       std::int32_t r1) {
  if constexpr (F == format::sell) {
    sell_range<KS, VT, MT>(a, k_, in, out, r0, r1);
    return;
  }
  if constexpr (F == format::zcsr) {
    zcsr_range<KS, VT, MT>(a, k_, in, out, r0, r1);
    return;
  }
  constexpr int B = block_size(F);  // evaluated here, at compile time: nothing to link
  const int k = KS ? KS : k_;
  const MT* val = cp<MT>(a.val);
  if constexpr (F == format::csr && KS == 1) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<VT, double> && std::is_same_v<MT, double>) {
      // Every CSR matrix, scattered or not: measured faster than the prefetched loop on the
      // power-law graphs and than the plain one on the 7-point stencil (BENCHMARKS.md).
      for (std::int32_t r = r0; r < r1; ++r)
        out[r] = csr_row_dot8(val, a.col, in, a.row_ptr[r], a.row_ptr[r + 1]);
      return;
    }
#endif
    if (a.prefetch_gathers) return csr_prefetched_range<VT, MT>(a, in, out, r0, r1);
  }
  for (std::int32_t br = r0; br < r1; ++br) {
    const std::int64_t e = a.row_ptr[br + 1];
    if constexpr (KS == 1) {
      VT acc[B] = {};
      for (std::int64_t t = a.row_ptr[br]; t < e; ++t) {
        const std::int64_t c = std::int64_t(a.col[t]) * B;
        const MT* blk = val + t * B * B;
        for (int ii = 0; ii < B; ++ii)
          for (int jj = 0; jj < B; ++jj) acc[ii] += VT(blk[ii * B + jj]) * in[c + jj];
      }
      for (int ii = 0; ii < B; ++ii) out[std::int64_t(br) * B + ii] = acc[ii];
    } else {
      // A row's sums in registers when k is known here (else in the output row, which the
      // gathers of `in` cannot alias: __restrict lets the loop over the systems vectorize).
      VT local[local_slots(KS, B)];
      VT* __restrict o = KS > 1 ? local : out + std::int64_t(br) * B * k;
      for (int t = 0; t < B * k; ++t) o[t] = VT(0);
      for (std::int64_t t = a.row_ptr[br]; t < e; ++t) {
        const VT* __restrict src = in + std::int64_t(a.col[t]) * B * k;
        const MT* blk = val + t * B * B;
        for (int ii = 0; ii < B; ++ii)
          for (int jj = 0; jj < B; ++jj) {
            const VT v = VT(blk[ii * B + jj]);
#pragma omp simd
            for (int j = 0; j < k; ++j) o[ii * k + j] += v * src[jj * k + j];
          }
      }
      if constexpr (KS > 1)
        for (int t = 0; t < B * k; ++t) out[std::int64_t(br) * B * k + t] = o[t];
    }
  }
}

// The dot part of spmv_dot over element rows [i0, i1): part = p.q, q already written.
template <int KS, class VT>
void dot_tail_t(const cpu_step& s, std::int64_t i0, std::int64_t i1, double* part) {
  const int k = KS ? KS : s.k;
  const VT* p = cp<VT>(s.p);
  const VT* q = cp<VT>(s.q);
  if constexpr (KS == 1) {
    double acc = 0.0;
#pragma omp simd reduction(+ : acc)
    for (std::int64_t i = i0; i < i1; ++i) acc += double(p[i]) * double(q[i]);
    part[0] = acc;
  } else {
    double local[local_slots(KS, 1)];
    double* __restrict acc = KS > 1 ? local : part;
    for (int j = 0; j < k; ++j) acc[j] = 0.0;
    for (std::int64_t i = i0 * k; i < i1 * k; i += k)
#pragma omp simd
      for (int j = 0; j < k; ++j) acc[j] += double(p[i + j]) * double(q[i + j]);
    if constexpr (KS > 1)
      for (int j = 0; j < k; ++j) part[j] = acc[j];
  }
}

// The rest of init over element rows [i0, i1), r = A x already written: r = b - r, p = d r.
template <int KS, class VT>
void init_tail_t(const cpu_step& s, std::int64_t i0, std::int64_t i1, double* part) {
  const int k = KS ? KS : s.k;
  const VT* b = cp<VT>(s.b);
  const VT* d = cp<VT>(s.d);
  VT* r = mp<VT>(s.r);
  VT* p = mp<VT>(s.p);
  double local[local_slots(KS, 2)];
  double* __restrict acc = KS > 1 ? local : part;
  for (int j = 0; j < 2 * k; ++j) acc[j] = 0.0;
  for (std::int64_t i = i0; i < i1; ++i)
    for (int j = 0; j < k; ++j) {
      const std::int64_t t = i * k + j;
      const VT ri = b[t] - r[t];
      r[t] = ri;
      p[t] = d[i] * ri;
      acc[2 * j] += double(ri) * double(ri) * double(d[i]);
      acc[2 * j + 1] += double(ri) * double(ri);
    }
  if constexpr (KS > 1)
    for (int j = 0; j < 2 * k; ++j) part[j] = acc[j];
}

template <format F, int KS, class VT, class MT>
void spmv_dot_t(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
  spmv_range<F, KS, VT, MT>(s.a, s.k, cp<VT>(s.p), mp<VT>(s.q), r0, r1);
  constexpr int G = group_rows(F);  // compile time
  dot_tail_t<KS, VT>(s, std::int64_t(r0) * G, std::int64_t(r1) * G, part);
}

template <format F, int KS, class VT, class MT>
void init_t(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
  spmv_range<F, KS, VT, MT>(s.a, s.k, cp<VT>(s.x), mp<VT>(s.r), r0, r1);  // r = A x
  constexpr int G = group_rows(F);
  init_tail_t<KS, VT>(s, std::int64_t(r0) * G, std::int64_t(r1) * G, part);
}

// One piece of a long CSR row: entries [e0, e1) times `in`, k sums. One system: four
// accumulators (a piece is thousands of entries: the adds' latency, not the loads, would bound
// one), added in a fixed order.
template <int KS, class VT, class MT>
void piece_t(const cpu_step& s, const void* in_v, std::int64_t e0, std::int64_t e1, void* out) {
  const int k = KS ? KS : s.k;
  const MT* val = cp<MT>(s.a.val);
  const std::int32_t* col = s.a.col;
  const VT* in = cp<VT>(in_v);
  VT* sums = mp<VT>(out);
  if constexpr (KS == 1) {
    VT a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    std::int64_t t = e0;
    for (; t + 4 <= e1; t += 4) {
      a0 += VT(val[t]) * in[col[t]];
      a1 += VT(val[t + 1]) * in[col[t + 1]];
      a2 += VT(val[t + 2]) * in[col[t + 2]];
      a3 += VT(val[t + 3]) * in[col[t + 3]];
    }
    for (; t < e1; ++t) a0 += VT(val[t]) * in[col[t]];
    sums[0] = (a0 + a1) + (a2 + a3);
    return;
  }
  VT local[local_slots(KS, 1)];
  VT* __restrict acc = KS > 1 ? local : sums;
  for (int j = 0; j < k; ++j) acc[j] = VT(0);
  for (std::int64_t t = e0; t < e1; ++t) {
    const VT v = VT(val[t]);
    const VT* __restrict src = in + std::int64_t(col[t]) * k;
#pragma omp simd
    for (int j = 0; j < k; ++j) acc[j] += v * src[j];
  }
  if constexpr (KS > 1)
    for (int j = 0; j < k; ++j) sums[j] = acc[j];
}

// r -= alpha q (x moves in update_p, which reads p anyway).
template <int KS, class VT>
void update_xr_t(const cpu_step& s, std::int64_t i0, std::int64_t i1, double* part) {
  const int k = KS ? KS : s.k;
  VT* r = mp<VT>(s.r);
  const VT* q = cp<VT>(s.q);
  const VT* d = cp<VT>(s.d);
  if constexpr (KS == 1) {
    const VT a = VT(s.alpha[0]);
    double rz = 0.0, rr = 0.0;
#pragma omp simd reduction(+ : rz, rr)
    for (std::int64_t i = i0; i < i1; ++i) {
      const VT ri = r[i] - a * q[i];
      r[i] = ri;
      rz += double(ri) * double(ri) * double(d[i]);
      rr += double(ri) * double(ri);
    }
    part[0] = rz, part[1] = rr;
    return;
  }
  if constexpr (KS > 1) {
    // k known: the systems' loop vectorizes, the stopped ones masked by a select (their r
    // rewritten unchanged, their sums dropped) instead of a branch.
    double acc[2 * KS] = {};
    VT alpha[KS];
    bool on[KS];
    for (int j = 0; j < KS; ++j) alpha[j] = VT(s.alpha[j]), on[j] = s.active[j] != 0;
    for (std::int64_t i = i0; i < i1; ++i) {
      const double di = double(d[i]);
#pragma omp simd
      for (int j = 0; j < KS; ++j) {
        const std::int64_t t = i * KS + j;
        const VT ri = on[j] ? r[t] - alpha[j] * q[t] : r[t];
        r[t] = ri;
        acc[2 * j] += double(ri) * double(ri) * di;
        acc[2 * j + 1] += double(ri) * double(ri);
      }
    }
    for (int j = 0; j < KS; ++j)
      part[2 * j] = on[j] ? acc[2 * j] : 0.0, part[2 * j + 1] = on[j] ? acc[2 * j + 1] : 0.0;
    return;
  }
  for (int j = 0; j < 2 * k; ++j) part[j] = 0.0;
  for (std::int64_t i = i0; i < i1; ++i)
    for (int j = 0; j < k; ++j) {
      if (!s.active[j]) continue;
      const std::int64_t t = i * k + j;
      const VT ri = r[t] - VT(s.alpha[j]) * q[t];
      r[t] = ri;
      part[2 * j] += double(ri) * double(ri) * double(d[i]);
      part[2 * j + 1] += double(ri) * double(ri);
    }
}

// x += alpha p for the systems that took update_xr's step (s.stepped), then p = d r + beta p for
// those still running (s.active, a subset).
template <int KS, class VT>
void update_p_t(const cpu_step& s, std::int64_t i0, std::int64_t i1) {
  const int k = KS ? KS : s.k;
  const VT* r = cp<VT>(s.r);
  const VT* d = cp<VT>(s.d);
  VT* p = mp<VT>(s.p);
  VT* x = mp<VT>(s.x);
  if constexpr (KS == 1) {
    const VT a = VT(s.alpha[0]);
    if (!s.active[0]) {
#pragma omp simd
      for (std::int64_t i = i0; i < i1; ++i) x[i] += a * p[i];
      return;
    }
    const VT beta = VT(s.beta[0]);
#pragma omp simd
    for (std::int64_t i = i0; i < i1; ++i) {
      const VT pi = p[i];
      x[i] += a * pi;
      p[i] = d[i] * r[i] + beta * pi;
    }
    return;
  }
  if constexpr (KS > 1) {  // as update_xr: selects instead of branches, k known
    VT alpha[KS], beta[KS];
    bool stepped[KS], on[KS];
    for (int j = 0; j < KS; ++j) {
      alpha[j] = VT(s.alpha[j]), beta[j] = VT(s.beta[j]);
      stepped[j] = s.stepped[j] != 0, on[j] = s.active[j] != 0;
    }
    for (std::int64_t i = i0; i < i1; ++i) {
      const VT di = d[i];
#pragma omp simd
      for (int j = 0; j < KS; ++j) {
        const std::int64_t t = i * KS + j;
        const VT pt = p[t];
        x[t] = stepped[j] ? x[t] + alpha[j] * pt : x[t];
        p[t] = on[j] ? di * r[t] + beta[j] * pt : pt;
      }
    }
    return;
  }
  for (std::int64_t i = i0; i < i1; ++i)
    for (int j = 0; j < k; ++j) {
      if (!s.stepped[j]) continue;
      const std::int64_t t = i * k + j;
      const VT pt = p[t];
      x[t] += VT(s.alpha[j]) * pt;
      if (s.active[j]) p[t] = d[i] * r[t] + VT(s.beta[j]) * pt;
    }
}

// K > 0: k known at compile time (the sums in registers, the loops over the columns unrolled
// and vectorized); K = 0: k at run time.
template <int K, class VT>
void gram_k(const VT* __restrict u, const VT* __restrict v, int k_, std::int64_t r0,
            std::int64_t r1, const std::uint8_t* mask, double* part) {
  const int k = K ? K : k_;
  const std::size_t ks = std::size_t(k);
  double local[local_slots(K, K)] = {};
  double* __restrict s = K ? local : part;  // k at run time: the sums in place in part
  if constexpr (K == 0)
    for (std::size_t e = 0; e < ks * ks; ++e) s[e] = 0.0;
  for (std::int64_t r = r0; r < r1; ++r) {
    const VT* ur = u + r * k;
    const VT* vr = v + r * k;
    for (std::size_t i = 0; i < ks; ++i) {
      const double ui = double(ur[i]);
      double* si = s + i * ks;
#pragma omp simd
      for (std::size_t j = 0; j < ks; ++j) si[j] += ui * double(vr[j]);
    }
  }
  for (std::size_t i = 0; i < ks; ++i)
    for (std::size_t j = 0; j < ks; ++j) part[i * ks + j] = mask[j] ? s[i * ks + j] : 0.0;
}

// A zero coefficient adds nothing and does not read v_i (a NaN there stays out), beta_j == 0
// overwrites y_j (a NaN there too). d: v's rows scaled by d[row] first (nullptr: not).
template <int K, class VT>
void combine_k(const VT* __restrict v, const VT* __restrict d, const VT* coef, const VT* beta,
               int k_, std::int64_t r0, std::int64_t r1, const std::uint8_t* mask,
               VT* __restrict y) {
  const int k = K ? K : k_;
  const std::size_t ks = std::size_t(k);
  if constexpr (K > 0) {
    // Per row: the sums s_j in registers, v_i broadcast over the columns j (one vector op a
    // term). A zero coefficient times a finite v_i adds a zero, so only a v_i that is not finite
    // (rare) takes the loop that skips zero coefficients; a column of coefficients all zero
    // (P's columns past s in block CG) is skipped whole.
    VT cf[K * K], be[K];
    bool on[K], any[K], all_on = true, no_beta = true, all_beta = true;
    for (int e = 0; e < K * K; ++e) cf[e] = coef[e];
    for (int i = 0; i < K; ++i) {
      be[i] = beta[i], on[i] = mask[i] != 0, any[i] = false;
      all_on = all_on && on[i];
      no_beta = no_beta && be[i] == VT(0), all_beta = all_beta && be[i] != VT(0);
      for (int j = 0; j < K; ++j) any[i] = any[i] || cf[i * K + j] != VT(0);
    }
    for (std::int64_t r = r0; r < r1; ++r) {
      const VT* vr = v + r * K;
      VT* yr = y + r * K;
      VT s[K];
      // The common cases (every beta 0, or none; every column active) without a select, whose
      // per-column tests the compiler leaves scalar.
      if (no_beta || all_beta) {  // no_beta is the same for every j: the loop is unswitched
#pragma omp simd
        for (int j = 0; j < K; ++j) s[j] = no_beta ? VT(0) : be[j] * yr[j];
      } else {
        for (int j = 0; j < K; ++j) s[j] = be[j] == VT(0) ? VT(0) : be[j] * yr[j];
      }
      for (int i = 0; i < K; ++i) {
        const VT vi = d ? d[r] * vr[i] : vr[i];
        if (!any[i]) continue;
        if (vi * VT(0) == VT(0)) {  // finite
#pragma omp simd
          for (int j = 0; j < K; ++j) s[j] += cf[i * K + j] * vi;
        } else {
          for (int j = 0; j < K; ++j)
            if (cf[i * K + j] != VT(0)) s[j] += cf[i * K + j] * vi;
        }
      }
      if (all_on) {
#pragma omp simd
        for (int j = 0; j < K; ++j) yr[j] = s[j];
      } else {
        for (int j = 0; j < K; ++j)
          if (on[j]) yr[j] = s[j];
      }
    }
    return;
  }
  for (std::int64_t r = r0; r < r1; ++r) {
    const VT* vr = v + r * k;
    VT* yr = y + r * k;
    for (std::size_t j = 0; j < ks; ++j) {
      if (!mask[j]) continue;
      VT s = beta[j] == VT(0) ? VT(0) : beta[j] * yr[j];
      for (std::size_t i = 0; i < ks; ++i) {
        const VT c = coef[i * ks + j];
        if (c != VT(0)) s += c * (d ? d[r] * vr[i] : vr[i]);
      }
      yr[j] = s;
    }
  }
}

// Block CG's update (device_system::block_update) over element rows [r0, r1): for the columns of
// mask, x_j += Σ_i coef[i*k + j] p_i, r_j -= Σ_i coef[i*k + j] q_i (zero coefficients skipped),
// z_j = d∘r_j; then part = QᵀZ, ZᵀZ, PᵀZ, PᵀP, RᵀZ (k*k each, every column) and r_j·z_j,
// r_j·r_j (k each), in double, as the rows are after the update. z == nullptr: Z not stored,
// the products take d∘r_j for every column j.
constexpr std::int64_t update_rows = 128;  // 3 vectors of 128 rows of 8 doubles: 24 KB, in L1

template <int K, class VT>
void block_update_k(const cpu_block_update& u, std::int64_t r0, std::int64_t r1, double* part) {
  const int k = K ? K : u.k;
  constexpr int G = cpu_block_update::grams;
  const std::size_t ks = std::size_t(k), kk = ks * ks, width = G * kk + 2 * ks;
  const VT* __restrict p = cp<VT>(u.p), * __restrict q = cp<VT>(u.q), * __restrict d = cp<VT>(u.d);
  const VT* cf = cp<VT>(u.coef);
  VT* __restrict x = mp<VT>(u.x), * __restrict r = mp<VT>(u.r), * __restrict z = mp<VT>(u.z);
  // A row of Z: z's, or d∘r into buf where Z is not stored.
  VT fixed[std::max(K, 1)];
  std::vector<VT> heap(K ? 0 : ks);
  VT* buf = K ? fixed : heap.data();
  auto z_row = [&](std::int64_t row) -> const VT* {
    if (z) return z + row * k;
    const VT* rw = r + row * k;
    for (std::size_t j = 0; j < ks; ++j) buf[j] = d[row] * rw[j];
    return buf;
  };
  double local[K ? G * K * K + 2 * K : 1] = {};
  double* __restrict s = K ? local : part;  // k at run time: the sums in place in part
  if constexpr (K == 0)
    for (std::size_t e = 0; e < width; ++e) s[e] = 0.0;
  double *qz = s, *zz = s + kk, *pz = s + 2 * kk, *pp = s + 3 * kk, *rzm = s + 4 * kk;
  double *rz = s + G * kk, *rr = rz + ks;
  for (std::int64_t b0 = r0; b0 < r1; b0 += update_rows) {
    const std::int64_t b1 = std::min(r1, b0 + update_rows);
    for (std::int64_t row = b0; row < b1; ++row) {
      const VT* pr = p + row * k;
      const VT* qr = q + row * k;
      VT* xr = x + row * k;
      VT* rw = r + row * k;
      VT* zw = z ? z + row * k : nullptr;
      if constexpr (K > 0) {
        // As combine_k: a zero coefficient times a finite value adds a zero, so only a row with a
        // value that is not finite takes the loop that skips them.
        VT xs[K], rs[K];
#pragma omp simd
        for (int j = 0; j < K; ++j) xs[j] = xr[j], rs[j] = rw[j];
        // The test for the whole row, so that the loop over i has no branch and xs, rs stay in
        // registers (with a test per i they went through the stack each time).
        bool finite = true;
        for (int i = 0; i < K; ++i)
          finite = finite && pr[i] * VT(0) == VT(0) && qr[i] * VT(0) == VT(0);
        if (finite) {
          for (int i = 0; i < K; ++i) {
            const VT pi = pr[i], qi = qr[i];
#pragma omp simd
            for (int j = 0; j < K; ++j) xs[j] += cf[i * K + j] * pi, rs[j] -= cf[i * K + j] * qi;
          }
        } else {
          for (int i = 0; i < K; ++i)
            for (int j = 0; j < K; ++j)
              if (cf[i * K + j] != VT(0))
                xs[j] += cf[i * K + j] * pr[i], rs[j] -= cf[i * K + j] * qr[i];
        }
        for (int j = 0; j < K; ++j)
          if (u.mask[j]) {
            xr[j] = xs[j], rw[j] = rs[j];
            if (zw) zw[j] = d[row] * rs[j];
          }
      } else {
        for (std::size_t j = 0; j < ks; ++j) {
          if (!u.mask[j]) continue;
          VT xa = xr[j], ra = rw[j];
          for (std::size_t i = 0; i < ks; ++i) {
            const VT c = cf[i * ks + j];
            if (c != VT(0)) xa += c * pr[i], ra -= c * qr[i];
          }
          xr[j] = xa, rw[j] = ra;
          if (zw) zw[j] = d[row] * ra;
        }
      }
      const VT* zr = z_row(row);
      for (std::size_t i = 0; i < ks; ++i) {
        const double qi = double(qr[i]), zi = double(zr[i]);
        double *qzi = qz + i * ks, *zzi = zz + i * ks;
#pragma omp simd
        for (std::size_t j = 0; j < ks; ++j) {
          const double zj = double(zr[j]);
          qzi[j] += qi * zj, zzi[j] += zi * zj;
        }
      }
#pragma omp simd
      for (std::size_t j = 0; j < ks; ++j) {
        const double rj = double(rw[j]), zj = double(zr[j]);
        rz[j] += rj * zj, rr[j] += rj * rj;
      }
    }
    // PᵀZ, PᵀP and RᵀZ over the same rows again, from the cache: all five products in one loop
    // would want more accumulators than a core has vector registers (5 x 64 doubles at k = 8).
    for (std::int64_t row = b0; row < b1; ++row) {
      const VT* pr = p + row * k;
      const VT* rw = r + row * k;
      const VT* zr = z_row(row);
      for (std::size_t i = 0; i < ks; ++i) {
        const double pi = double(pr[i]), ri = double(rw[i]);
        double *pzi = pz + i * ks, *ppi = pp + i * ks, *rzi = rzm + i * ks;
#pragma omp simd
        for (std::size_t j = 0; j < ks; ++j) {
          const double zj = double(zr[j]);
          pzi[j] += pi * zj, ppi[j] += pi * double(pr[j]), rzi[j] += ri * zj;
        }
      }
    }
  }
  if constexpr (K > 0)
    for (std::size_t e = 0; e < width; ++e) part[e] = s[e];
}

// Calls f(k_tag<K>{}) with K = k for the counts of systems compiled with k known (one, and the
// small blocks geometry codes solve: 2, 3 (x, y, z), 4, 8), else K = 0 (k read at run time).
template <int K>
struct k_tag {
  static constexpr int value = K;
};
template <class F>
inline auto with_k(int k, F&& f) {
  switch (k) {
    case 1:
      return f(k_tag<1>{});
    case 2:
      return f(k_tag<2>{});
    case 3:
      return f(k_tag<3>{});
    case 4:
      return f(k_tag<4>{});
    case 8:
      return f(k_tag<8>{});
    default:
      return f(k_tag<0>{});
  }
}

template <format F, class VT, class MT>
struct by_format {
  static void spmv_dot(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
    with_k(s.k, [&](auto K) { spmv_dot_t<F, K.value, VT, MT>(s, r0, r1, part); });
  }
  static void init(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
    with_k(s.k, [&](auto K) { init_t<F, K.value, VT, MT>(s, r0, r1, part); });
  }
  static void apply(const cpu_step& s, std::int32_t r0, std::int32_t r1) {
    with_k(s.k, [&](auto K) {
      spmv_range<F, K.value, VT, MT>(s.a, s.k, cp<VT>(s.in), mp<VT>(s.out), r0, r1);
    });
  }
};

template <class VT, class MT>
struct kernels {
  template <class Fn>
  static Fn pick(format f, Fn csr, Fn bcrs2, Fn bcrs4, Fn sell, Fn zcsr) {
    return f == format::csr     ? csr
           : f == format::bcrs2 ? bcrs2
           : f == format::bcrs4 ? bcrs4
           : f == format::zcsr  ? zcsr
                                : sell;
  }
  static void spmv_dot(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
    pick(s.a.fmt, by_format<format::csr, VT, MT>::spmv_dot,
         by_format<format::bcrs2, VT, MT>::spmv_dot, by_format<format::bcrs4, VT, MT>::spmv_dot,
         by_format<format::sell, VT, MT>::spmv_dot,
         by_format<format::zcsr, VT, MT>::spmv_dot)(s, r0, r1, part);
  }
  static void init(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
    pick(s.a.fmt, by_format<format::csr, VT, MT>::init, by_format<format::bcrs2, VT, MT>::init,
         by_format<format::bcrs4, VT, MT>::init, by_format<format::sell, VT, MT>::init,
         by_format<format::zcsr, VT, MT>::init)(s, r0, r1, part);
  }
  static void apply(const cpu_step& s, std::int32_t r0, std::int32_t r1) {
    pick(s.a.fmt, by_format<format::csr, VT, MT>::apply, by_format<format::bcrs2, VT, MT>::apply,
         by_format<format::bcrs4, VT, MT>::apply, by_format<format::sell, VT, MT>::apply,
         by_format<format::zcsr, VT, MT>::apply)(s, r0, r1);
  }
  // Vector steps work on element rows: scale row groups by their rows.
  static void update_xr(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
    const std::int64_t i0 = std::int64_t(r0) * s.a.group, i1 = std::int64_t(r1) * s.a.group;
    with_k(s.k, [&](auto K) { update_xr_t<K.value, VT>(s, i0, i1, part); });
  }
  static void update_p(const cpu_step& s, std::int32_t r0, std::int32_t r1) {
    const std::int64_t i0 = std::int64_t(r0) * s.a.group, i1 = std::int64_t(r1) * s.a.group;
    with_k(s.k, [&](auto K) { update_p_t<K.value, VT>(s, i0, i1); });
  }
  static void spmv_dot_tail(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
    const std::int64_t i0 = std::int64_t(r0) * s.a.group, i1 = std::int64_t(r1) * s.a.group;
    with_k(s.k, [&](auto K) { dot_tail_t<K.value, VT>(s, i0, i1, part); });
  }
  static void init_tail(const cpu_step& s, std::int32_t r0, std::int32_t r1, double* part) {
    const std::int64_t i0 = std::int64_t(r0) * s.a.group, i1 = std::int64_t(r1) * s.a.group;
    with_k(s.k, [&](auto K) { init_tail_t<K.value, VT>(s, i0, i1, part); });
  }
  static void piece(const cpu_step& s, const void* in, std::int64_t e0, std::int64_t e1,
                    void* sums) {
    with_k(s.k, [&](auto K) { piece_t<K.value, VT, MT>(s, in, e0, e1, sums); });
  }
  static void gram(const void* u, const void* v, int k, std::int64_t r0, std::int64_t r1,
                   const std::uint8_t* mask, double* part) {
    with_k(k, [&](auto K) { gram_k<K.value, VT>(cp<VT>(u), cp<VT>(v), k, r0, r1, mask, part); });
  }
  static void combine(const void* v, const void* d, const void* coef, const void* beta, int k,
                      std::int64_t r0, std::int64_t r1, const std::uint8_t* mask, void* y) {
    with_k(k, [&](auto K) {
      combine_k<K.value, VT>(cp<VT>(v), cp<VT>(d), cp<VT>(coef), cp<VT>(beta), k, r0, r1, mask,
                             mp<VT>(y));
    });
  }
  static void block_update(const cpu_block_update& u, std::int64_t r0, std::int64_t r1,
                           double* part) {
    with_k(u.k, [&](auto K) { block_update_k<K.value, VT>(u, r0, r1, part); });
  }
  static constexpr cpu_kernel_table table{spmv_dot, init,          update_xr,   update_p,
                                          apply,    spmv_dot_tail, init_tail,   piece,
                                          gram,     combine,       block_update};
};

const cpu_kernel_table* select_table(precision p) {
  switch (p) {
    case precision::f64:
      return &kernels<double, double>::table;
    case precision::f32:
      return &kernels<float, float>::table;
    case precision::mixed:
      return &kernels<double, float>::table;
  }
  return nullptr;
}

}  // namespace
}  // namespace cnc
