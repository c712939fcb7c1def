// CSR -> SELL on the device (cuda_kernels.hpp): the GPU backend uploads the caller's CSR as it
// is and builds the SELL layout where it will be read, instead of converting on the host and
// moving the larger padded arrays. The layout is the host's (conversion/convert.cpp): slice s
// holds width(s) * 32 entries, entry t of row l at slice_ptr[s] + t*32 + l; padding entries have
// value 0 and their own row as column; rows past n are identity rows. ZSELL is the same layout
// over a complex CSR's complex rows, a value a (re, im) pair.
#include <thrust/iterator/counting_iterator.h>

#include <cfloat>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "backends/cuda/cuda_kernels.hpp"
#include "hermitian.h"

namespace cnc::cuda {
namespace {

// The entries a SELL slice stores, 32 * max(1, its longest row), from each lane's row length
// (the whole warp calls it; rows past n count 1).
__device__ std::int64_t slice_entries(std::int64_t len) {
  for (int o = 16; o > 0; o /= 2) len = max(len, __shfl_xor_sync(0xffffffffu, len, o));
  return max(len, std::int64_t(1)) * 32;
}

// out[s + 1] = slice s's entries; out[0] = 0. One warp per slice.
__global__ void slice_widths(std::int32_t n, std::int32_t n_slices, const std::int64_t* row_ptr,
                             std::int64_t* out) {
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= n_slices) return;
  const std::int64_t i = warp * 32 + lane;
  const std::int64_t entries = slice_entries(i < n ? row_ptr[i + 1] - row_ptr[i] : 1);
  if (lane == 0) out[warp + 1] = entries;
  if (warp == 0 && lane == 0) out[0] = 0;
}

// *out += the entries SELL would store for these rows (one thread per padded row).
__global__ void count_sell_entries(std::int32_t n, const std::int64_t* row_ptr,
                                   unsigned long long* out) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t entries = slice_entries(i < n ? row_ptr[i + 1] - row_ptr[i] : 1);
  if (threadIdx.x % 32 == 0 && i < n) atomicAdd(out, static_cast<unsigned long long>(entries));
}

// A stored value v: the value itself, or for a complex pair (v, 0).
template <class T>
__device__ __forceinline__ T sell_value(double v) {
  return T(v);
}
template <>
__device__ __forceinline__ double2 sell_value<double2>(double v) {
  return make_double2(v, 0.0);
}
template <>
__device__ __forceinline__ float2 sell_value<float2>(double v) {
  return make_float2(float(v), 0.0f);
}

// One thread per (padded) row: its entries, then its padding, at stride 32 (a warp writes 32
// consecutive entries per step).
template <class T>
__global__ void fill_sell(std::int32_t n, std::int32_t n_padded, const std::int64_t* row_ptr,
                          const std::int32_t* col, const T* val, const std::int64_t* slice_ptr,
                          std::int32_t* scol, T* sval) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_padded) return;
  const std::int64_t s = i / 32, l = i % 32;
  const std::int64_t base = slice_ptr[s] + l, w = (slice_ptr[s + 1] - slice_ptr[s]) / 32;
  std::int64_t t = 0;
  if (i < n) {
    for (std::int64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e, ++t) {
      scol[base + t * 32] = col[e];
      sval[base + t * 32] = val[e];
    }
  } else {
    scol[base] = std::int32_t(i);
    sval[base] = sell_value<T>(1);
    t = 1;
  }
  for (; t < w; ++t) scol[base + t * 32] = std::int32_t(i), sval[base + t * 32] = sell_value<T>(0);
}

// Row i's Jacobi entry from its diagonal value, as the host's inverse_diagonal: 1 where the
// diagonal is 0, absent or subnormal (counted in *zeros), 1/a_ii otherwise, 1 without jacobi.
__device__ double jacobi_entry(double diag, bool jacobi, unsigned long long* zeros) {
  if (fabs(diag) < DBL_MIN) {
    atomicAdd(zeros, 1ull);
    return 1.0;
  }
  return jacobi ? 1.0 / diag : 1.0;
}

// New values of the same pattern into a SELL built by fill_sell (its padding untouched), and
// the inverse diagonal as inverse_diag computes it, the diagonal found by its stored column.
__global__ void refill_sell(std::int32_t n, std::int32_t n_padded, const std::int64_t* row_ptr,
                            const double* val, const std::int64_t* slice_ptr,
                            const std::int32_t* scol, double* sval, bool jacobi, double* d,
                            unsigned long long* zeros) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_padded) return;
  double di = 1.0;
  if (i < n) {
    const std::int64_t base = slice_ptr[i / 32] + i % 32;
    double diag = 0.0;
    std::int64_t t = base;
    for (std::int64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e, t += 32) {
      sval[t] = val[e];
      if (scol[t] == i) diag = val[e];
    }
    di = jacobi_entry(diag, jacobi, zeros);
  }
  d[i] = di;
}

// The canonical check in two passes, so that no thread walks a row: a long row (10^5 entries in
// a power-law graph) would otherwise be one thread's serial work.
// Pass 1, one thread per padded row (whole warps = SELL slices): are the row's offsets inside
// [0, nnz] and not decreasing; the first entry of every non-empty row marked in `starts` (a bit
// per entry); how many entries its slice stores in SELL (as slice_widths counts them).
__global__ void scan_offsets(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                             unsigned int* starts, unsigned int* bad,
                             unsigned long long* sell_entries) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % 32;
  std::int64_t len = 1;
  unsigned int flag = 0;
  if (i < n) {
    const std::int64_t k0 = row_ptr[i], k1 = row_ptr[i + 1];
    if (k0 < 0 || k1 < k0 || k1 > nnz) {
      flag = 1;
    } else {
      len = k1 - k0;
      if (len > 0) atomicOr(starts + k0 / 32, 1u << (k0 % 32));
    }
  }
  const std::int64_t entries = slice_entries(len);
  for (int o = 16; o > 0; o /= 2) flag |= __shfl_xor_sync(0xffffffffu, flag, o);
  if (lane == 0 && i < n) {  // (warps past the last slice count nothing)
    atomicAdd(sell_entries, static_cast<unsigned long long>(entries));
    if (flag) atomicOr(bad, 1u);
  }
}

// Pass 2, one thread per entry (coalesced, balanced whatever the row lengths): the column in
// range and above the previous entry's unless the entry starts a row, the value finite. With
// valid offsets every entry lies in exactly one row, so this is each row's check.
__global__ void scan_entries(std::int32_t n, std::int64_t nnz, const std::int32_t* col,
                             const double* val, const unsigned int* starts, unsigned int* bad) {
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bool flag = false;
  if (k < nnz) {
    const std::int32_t c = col[k];
    flag = c < 0 || c >= n || !isfinite(val[k]);
    if (k > 0 && !((starts[k / 32] >> (k % 32)) & 1u)) flag = flag || c <= col[k - 1];
  }
  if (__any_sync(0xffffffffu, flag) && threadIdx.x % 32 == 0) atomicOr(bad, 1u);
}

// out[0]: the first NaN/Inf's index; out[1]: max |v| over the finite values, as its bits (the
// bits of non-negative doubles order as the values do), one atomic per warp.
__global__ void first_nan_or_inf(const double* v, std::int64_t count, unsigned long long* out) {
  unsigned long long m = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const double a = fabs(v[i]);
    if (!isfinite(a))
      atomicMin(out, static_cast<unsigned long long>(i));
    else
      m = max(m, static_cast<unsigned long long>(__double_as_longlong(a)));
  }
  for (int off = 16; off >= 1; off >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0 && m != 0) atomicMax(out + 1, m);
}

// The host's inverse_diagonal (conversion/convert.cpp), the same bits: 1 on padding rows and
// where the diagonal is 0 or absent (counted), 1/a_ii otherwise (all ones without jacobi). The
// row's columns are strictly increasing (checked), so the diagonal is found by bisection: a
// thread's work is logarithmic in its row's length. W = 2: a complex CSR ((re, im) values),
// whose real-equivalent rows 2r and 2r + 1 both take 1/Re a_rr (n: the real-equivalent's rows).
template <int W>
__global__ void inverse_diag(std::int32_t n, std::int32_t n_padded, const std::int64_t* row_ptr,
                             const std::int32_t* col, const double* val, bool jacobi, double* d,
                             unsigned long long* zeros) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_padded) return;
  double di = 1.0;
  if (i < n) {
    const std::int64_t r = i / W;
    std::int64_t lo = row_ptr[r], hi = row_ptr[r + 1];  // first column >= r in [lo, hi)
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (col[mid] < r)
        lo = mid + 1;
      else
        hi = mid;
    }
    const double diag = lo < row_ptr[r + 1] && col[lo] == r ? val[W * lo] : 0.0;
    di = jacobi_entry(diag, jacobi, zeros);
  }
  d[i] = di;
}

// One thread per entry of a complex CSR whose row offsets the host checked. out[0] |= 1 when an
// entry's column is out of range or not after its row's previous one, or a part is not finite;
// with `hermitian`, out[0] |= 2 when a diagonal entry is not real and > 0 or an entry right of
// the diagonal is not the conjugate of its mirror (0 when absent); out[1] += the mirrors found,
// out[2] += entries left of the diagonal, out[3] += diagonal entries. A is Hermitian with its
// whole diagonal when out[0] == 0, out[1] == out[2] and out[3] == n (as the host's bad_right).
__global__ void scan_zcsr_entries(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                                  const std::int32_t* col, const double* val, bool hermitian,
                                  unsigned long long* out) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned int flags = 0;
  unsigned long long mirrored = 0, left = 0, diagonal = 0;
  if (t < nnz) {
    std::int32_t i = 0, hi = n;  // row_ptr[i] <= t < row_ptr[hi]
    while (hi - i > 1) {
      const std::int32_t mid = i + (hi - i) / 2;
      if (row_ptr[mid] <= t)
        i = mid;
      else
        hi = mid;
    }
    const std::int32_t c = col[t];
    const double re = val[2 * t], im = val[2 * t + 1];
    if (c < 0 || c >= n || !isfinite(re) || !isfinite(im) || (t > row_ptr[i] && col[t - 1] >= c))
      flags = 1;
    else if (hermitian && c == i) {
      diagonal = 1;
      if (!real_positive(re, im)) flags = 2;
    } else if (hermitian && c < i) {
      left = 1;
    } else if (hermitian) {
      std::int64_t lo = row_ptr[c], end = row_ptr[c + 1], h = end;  // column i in row c
      while (lo < h) {
        const std::int64_t mid = lo + (h - lo) / 2;
        if (col[mid] < i)
          lo = mid + 1;
        else
          h = mid;
      }
      double tre = 0, tim = 0;
      if (lo < end && col[lo] == i) tre = val[2 * lo], tim = val[2 * lo + 1], mirrored = 1;
      if (!near_conjugate(re, im, tre, tim)) flags = 2;
    }
  }
  for (int o = 16; o > 0; o /= 2) {
    flags |= __shfl_xor_sync(0xffffffffu, flags, o);
    mirrored += __shfl_xor_sync(0xffffffffu, mirrored, o);
    left += __shfl_xor_sync(0xffffffffu, left, o);
    diagonal += __shfl_xor_sync(0xffffffffu, diagonal, o);
  }
  if (threadIdx.x % 32 == 0) {
    if (flags) atomicOr(out, static_cast<unsigned long long>(flags));
    if (mirrored) atomicAdd(out + 1, mirrored);
    if (left) atomicAdd(out + 2, left);
    if (diagonal) atomicAdd(out + 3, diagonal);
  }
}

// Block columns of block row br in order, merged from its b sorted rows (and the padding
// block br when the block row runs past n), as the host's block_columns lists them. For each
// distinct block column c, visit(c, slot) is called with slot = its index in the block row.
template <int B, class Visit>
__device__ std::int64_t merge_block_row(std::int32_t n, std::int64_t br,
                                        const std::int64_t* row_ptr, const std::int32_t* col,
                                        Visit visit) {
  std::int64_t at[B], end[B];
  for (int l = 0; l < B; ++l) {
    const std::int64_t i = br * B + l;
    at[l] = i < n ? row_ptr[i] : 0;
    end[l] = i < n ? row_ptr[i + 1] : 0;
  }
  const bool pad = (br + 1) * B > n;
  std::int64_t count = 0;
  std::int64_t last = -1;
  for (;;) {
    std::int64_t c = pad && last < br ? br : INT64_MAX;
    for (int l = 0; l < B; ++l)
      if (at[l] < end[l]) c = min(c, std::int64_t(col[at[l]] / B));
    if (c == INT64_MAX) break;
    visit(c, count, at);
    for (int l = 0; l < B; ++l)
      while (at[l] < end[l] && col[at[l]] / B == c) ++at[l];
    last = c;
    ++count;
  }
  return count;
}

// Block rows with more entries than this are counted by the whole grid, by entries
// (bcrs_counts_long): one thread merging a power-law hub's 10^5 entries held the launch for tens
// of milliseconds.
constexpr std::int64_t long_block_row = 2048;

__device__ std::int64_t block_row_entries(std::int32_t n, std::int64_t br, int b,
                                          const std::int64_t* row_ptr) {
  return row_ptr[min(std::int64_t(n), (br + 1) * b)] - row_ptr[min(std::int64_t(n), br * b)];
}

// Whether row i (sorted columns) has an entry in block column c (columns c*B .. c*B+B-1).
template <int B>
__device__ bool row_touches(const std::int64_t* row_ptr, const std::int32_t* col, std::int64_t i,
                            std::int64_t c) {
  std::int64_t lo = row_ptr[i], hi = row_ptr[i + 1];  // first column >= c*B
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (col[mid] < c * B)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < row_ptr[i + 1] && col[lo] / B == c;
}

// Blocks per block row (one thread each); a long block row gets 0 here and goes on `longs`
// (in any order: its count is an integer sum, the same whatever the order).
template <int B>
__global__ void bcrs_counts(std::int32_t n, std::int32_t nbr, const std::int64_t* row_ptr,
                            const std::int32_t* col, std::int64_t* out, std::int32_t* n_longs,
                            std::int32_t* longs) {
  const std::int64_t br = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (br == 0) out[0] = 0;
  if (br >= nbr) return;
  if (block_row_entries(n, br, B, row_ptr) > long_block_row) {
    out[br + 1] = 0;
    longs[atomicAdd(n_longs, 1)] = std::int32_t(br);
    return;
  }
  out[br + 1] = merge_block_row<B>(n, br, row_ptr, col,
                                   [](std::int64_t, std::int64_t, const std::int64_t*) {});
}

// The long block rows' counts, each spread over the whole grid by entries: an entry opens a
// block when it is the first of its row in its block column and no earlier row of the block row
// has that block column (a bisection in each); the padding rows' diagonal block counts when no
// row has block column br. The same counts as merge_block_row.
template <int B>
__global__ void bcrs_counts_long(std::int32_t n, const std::int64_t* row_ptr,
                                 const std::int32_t* col, std::int64_t* out,
                                 const std::int32_t* n_longs, const std::int32_t* longs) {
  const std::int64_t tid = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int32_t count = *n_longs;
  for (std::int32_t t = 0; t < count; ++t) {  // uniform over the grid
    const std::int64_t br = longs[t];
    const std::int64_t i0 = br * B, i1 = min(std::int64_t(n), i0 + B);
    unsigned long long mine = 0;
    for (std::int64_t k = row_ptr[i0] + tid; k < row_ptr[i1]; k += threads) {
      std::int64_t i = i0;
      while (row_ptr[i + 1] <= k) ++i;  // k's row: one of B
      const std::int64_t c = col[k] / B;
      bool opens = k == row_ptr[i] || col[k - 1] / B != c;
      for (std::int64_t j = i0; opens && j < i; ++j) opens = !row_touches<B>(row_ptr, col, j, c);
      mine += opens;
    }
    if (tid == 0 && i1 < i0 + B) {  // padding rows
      bool pad = true;
      for (std::int64_t j = i0; pad && j < i1; ++j) pad = !row_touches<B>(row_ptr, col, j, br);
      mine += pad;
    }
    for (int o = 16; o > 0; o /= 2) mine += __shfl_xor_sync(0xffffffffu, mine, o);
    if (threadIdx.x % 32 == 0 && mine)
      atomicAdd(reinterpret_cast<unsigned long long*>(out + br + 1), mine);
  }
}

template <int B>
__global__ void bcrs_fill_rows(std::int32_t n, std::int32_t nbr, const std::int64_t* row_ptr,
                               const std::int32_t* col, const double* val,
                               const std::int64_t* block_ptr, std::int32_t* bcol, double* bval) {
  const std::int64_t br = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (br >= nbr) return;
  const std::int64_t base = block_ptr[br];
  merge_block_row<B>(n, br, row_ptr, col,
                     [&](std::int64_t c, std::int64_t slot, const std::int64_t* at) {
                       bcol[base + slot] = std::int32_t(c);
                       double* v = bval + (base + slot) * B * B;
                       for (int t = 0; t < B * B; ++t) v[t] = 0.0;
                       for (int l = 0; l < B; ++l) {
                         const std::int64_t i = br * B + l;
                         if (i >= n) {
                           if (c == br) v[l * (B + 1)] = 1.0;
                           continue;
                         }
                         for (std::int64_t k = at[l]; k < row_ptr[i + 1] && col[k] / B == c; ++k)
                           v[l * B + col[k] % B] += val[k];
                       }
                     });
}

int blocks_for(std::int64_t threads) {
  return int(std::max<std::int64_t>(1, (threads + block_threads - 1) / block_threads));
}

// Long rows of a CSR (csr_long_rows): longer than min entries.
struct is_long_row {
  const std::int64_t* row_ptr;
  std::int64_t min;
  __device__ bool operator()(std::int32_t i) const { return row_ptr[i + 1] - row_ptr[i] > min; }
};

// piece_ptr[i] = pieces of long row i (0 past the *count long rows), for the exclusive scan.
__global__ void long_row_pieces(std::int32_t capacity, const std::int32_t* count,
                                const std::int64_t* row_ptr, const std::int32_t* long_rows,
                                std::int32_t* piece_ptr) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > capacity) return;
  std::int32_t p = 0;
  if (i < *count) {
    const std::int64_t len = row_ptr[long_rows[i] + 1] - row_ptr[long_rows[i]];
    p = std::int32_t((len + csr_piece - 1) / csr_piece);
  }
  piece_ptr[i] = p;
}

__global__ void total_pieces(const std::int32_t* piece_ptr, std::int32_t* out) {
  out[1] = piece_ptr[out[0]];
}

}  // namespace

cudaError_t scan_csr(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                     const std::int32_t* col, const double* val, unsigned long long* out,
                     void* scratch, std::size_t* scratch_bytes, cudaStream_t s) {
  const std::size_t bitmap = sizeof(unsigned int) * std::size_t((nnz + 31) / 32 + 1);
  if (!scratch) {  // size query
    *scratch_bytes = bitmap;
    return cudaSuccess;
  }
  auto* starts = static_cast<unsigned int*>(scratch);
  cudaError_t e = cudaMemsetAsync(out, 0, 2 * sizeof(unsigned long long), s);
  if (e == cudaSuccess) e = cudaMemsetAsync(starts, 0, bitmap, s);
  if (e != cudaSuccess) return e;
  const std::int64_t n_padded = (std::int64_t(n) + 31) / 32 * 32;
  auto* bad = reinterpret_cast<unsigned int*>(out);
  scan_offsets<<<blocks_for(n_padded), block_threads, 0, s>>>(n, nnz, row_ptr, starts, bad,
                                                              out + 1);
  if ((e = cudaGetLastError()) != cudaSuccess || nnz == 0) return e;
  scan_entries<<<blocks_for(nnz), block_threads, 0, s>>>(n, nnz, col, val, starts, bad);
  return cudaGetLastError();
}

cudaError_t sell_refill(std::int32_t n, const std::int64_t* row_ptr, const double* val,
                        const std::int64_t* slice_ptr, const std::int32_t* scol, double* sval,
                        bool jacobi, double* d, unsigned long long* zeros, cudaStream_t s) {
  const std::int32_t n_padded = (n + 31) / 32 * 32;
  refill_sell<<<blocks_for(n_padded), block_threads, 0, s>>>(n, n_padded, row_ptr, val, slice_ptr,
                                                             scol, sval, jacobi, d, zeros);
  return cudaGetLastError();
}

cudaError_t first_not_finite(const double* v, std::int64_t count, unsigned long long* out,
                             int max_grid, cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(out, 0xff, sizeof(unsigned long long), s);
  if (e == cudaSuccess) e = cudaMemsetAsync(out + 1, 0, sizeof(unsigned long long), s);
  if (e != cudaSuccess) return e;
  first_nan_or_inf<<<std::min(blocks_for(count), std::max(max_grid, 1)), block_threads, 0, s>>>(
      v, count, out);
  return cudaGetLastError();
}

cudaError_t inverse_diagonal(std::int32_t n, std::int32_t n_padded, const std::int64_t* row_ptr,
                             const std::int32_t* col, const double* val, bool jacobi, double* d,
                             unsigned long long* zeros, cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(zeros, 0, sizeof(unsigned long long), s);
  if (e != cudaSuccess) return e;
  inverse_diag<1><<<blocks_for(n_padded), block_threads, 0, s>>>(n, n_padded, row_ptr, col, val,
                                                                 jacobi, d, zeros);
  return cudaGetLastError();
}

cudaError_t zcsr_inverse_diagonal(std::int32_t n, std::int32_t n_padded,
                                  const std::int64_t* row_ptr, const std::int32_t* col,
                                  const double* val, bool jacobi, double* d,
                                  unsigned long long* zeros, cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(zeros, 0, sizeof(unsigned long long), s);
  if (e != cudaSuccess) return e;
  inverse_diag<2><<<blocks_for(n_padded), block_threads, 0, s>>>(2 * n, n_padded, row_ptr, col, val,
                                                                 jacobi, d, zeros);
  return cudaGetLastError();
}

cudaError_t scan_zcsr(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                      const std::int32_t* col, const double* val, bool hermitian,
                      unsigned long long* out, cudaStream_t s) {
  cudaError_t e = cudaMemsetAsync(out, 0, 5 * sizeof(unsigned long long), s);
  if (e != cudaSuccess) return e;
  const std::int64_t padded = (std::int64_t(n) + 31) / 32 * 32;
  if (padded > 0)
    count_sell_entries<<<blocks_for(padded), block_threads, 0, s>>>(n, row_ptr, out + 4);
  if (nnz > 0)
    scan_zcsr_entries<<<blocks_for(nnz), block_threads, 0, s>>>(n, nnz, row_ptr, col, val,
                                                                hermitian, out);
  return cudaGetLastError();
}

cudaError_t bcrs_offsets(int b, std::int32_t n, const std::int64_t* row_ptr,
                         const std::int32_t* col, std::int64_t* block_ptr, void* scratch,
                         std::size_t* scratch_bytes, cudaStream_t s) {
  const std::int32_t nbr = (n + b - 1) / b;
  // Scratch: the scan's, then the long block rows' count and list (nbr + 1 words at most).
  std::size_t scan_bytes = 0;
  cudaError_t e =
      cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, block_ptr, block_ptr, nbr + 1, s);
  if (e != cudaSuccess) return e;
  scan_bytes = (scan_bytes + 255) / 256 * 256;
  if (!scratch) {  // size query
    *scratch_bytes = scan_bytes + sizeof(std::int32_t) * (std::size_t(nbr) + 2);
    return cudaSuccess;
  }
  auto* n_longs = reinterpret_cast<std::int32_t*>(static_cast<char*>(scratch) + scan_bytes);
  std::int32_t* longs = n_longs + 1;
  if ((e = cudaMemsetAsync(n_longs, 0, sizeof *n_longs, s)) != cudaSuccess) return e;
  const int long_grid = std::min(blocks_for(nbr), 1024);
  if (b == 2) {
    bcrs_counts<2>
        <<<blocks_for(nbr), block_threads, 0, s>>>(n, nbr, row_ptr, col, block_ptr, n_longs, longs);
    bcrs_counts_long<2>
        <<<long_grid, block_threads, 0, s>>>(n, row_ptr, col, block_ptr, n_longs, longs);
  } else if (b == 4) {
    bcrs_counts<4>
        <<<blocks_for(nbr), block_threads, 0, s>>>(n, nbr, row_ptr, col, block_ptr, n_longs, longs);
    bcrs_counts_long<4>
        <<<long_grid, block_threads, 0, s>>>(n, row_ptr, col, block_ptr, n_longs, longs);
  } else {
    return cudaErrorInvalidValue;
  }
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  return cub::DeviceScan::InclusiveSum(scratch, scan_bytes, block_ptr, block_ptr, nbr + 1, s);
}

cudaError_t bcrs_fill(int b, std::int32_t n, const std::int64_t* row_ptr, const std::int32_t* col,
                      const double* val, const std::int64_t* block_ptr, std::int32_t* bcol,
                      double* bval, cudaStream_t s) {
  const std::int32_t nbr = (n + b - 1) / b;
  if (b == 2)
    bcrs_fill_rows<2><<<blocks_for(nbr), block_threads, 0, s>>>(n, nbr, row_ptr, col, val,
                                                                block_ptr, bcol, bval);
  else if (b == 4)
    bcrs_fill_rows<4><<<blocks_for(nbr), block_threads, 0, s>>>(n, nbr, row_ptr, col, val,
                                                                block_ptr, bcol, bval);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

cudaError_t sell_slice_offsets(std::int32_t n, const std::int64_t* row_ptr, std::int64_t* slice_ptr,
                               void* scratch, std::size_t* scratch_bytes, cudaStream_t s) {
  const std::int32_t n_slices = (n + 31) / 32;
  if (!scratch)  // size query
    return cub::DeviceScan::InclusiveSum(nullptr, *scratch_bytes, slice_ptr, slice_ptr,
                                         n_slices + 1, s);
  const int blocks = int((std::int64_t(n_slices) * 32 + block_threads - 1) / block_threads);
  slice_widths<<<std::max(blocks, 1), block_threads, 0, s>>>(n, n_slices, row_ptr, slice_ptr);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return cub::DeviceScan::InclusiveSum(scratch, *scratch_bytes, slice_ptr, slice_ptr, n_slices + 1,
                                       s);
}

// fill_sell over the padded rows for value type T.
template <class T>
cudaError_t fill_sell_as(std::int32_t n, const std::int64_t* row_ptr, const std::int32_t* col,
                         const void* val, const std::int64_t* slice_ptr, std::int32_t* scol,
                         void* sval, cudaStream_t s) {
  const std::int32_t n_padded = (n + 31) / 32 * 32;
  fill_sell<T><<<blocks_for(n_padded), block_threads, 0, s>>>(n, n_padded, row_ptr, col,
                                                              static_cast<const T*>(val), slice_ptr,
                                                              scol, static_cast<T*>(sval));
  return cudaGetLastError();
}

cudaError_t sell_fill(bool f32_values, bool pairs, std::int32_t n, const std::int64_t* row_ptr,
                      const std::int32_t* col, const void* val, const std::int64_t* slice_ptr,
                      std::int32_t* scol, void* sval, cudaStream_t s) {
  auto fill = pairs ? (f32_values ? &fill_sell_as<float2> : &fill_sell_as<double2>)
                    : (f32_values ? &fill_sell_as<float> : &fill_sell_as<double>);
  return fill(n, row_ptr, col, val, slice_ptr, scol, sval, s);
}

cudaError_t csr_long_rows(std::int32_t n, const std::int64_t* row_ptr, std::int64_t long_min,
                          std::int32_t capacity, std::int32_t* long_rows, std::int32_t* piece_ptr,
                          std::int32_t* out, void* scratch, std::size_t* scratch_bytes,
                          cudaStream_t s) {
  const thrust::counting_iterator<std::int32_t> rows(0);
  const is_long_row pred{row_ptr, long_min};
  if (!scratch) {  // size query: the larger of the selection's and the scan's
    std::size_t a = 0, b = 0;
    cudaError_t e = cub::DeviceSelect::If(nullptr, a, rows, long_rows, out, n, pred, s);
    if (e == cudaSuccess)
      e = cub::DeviceScan::ExclusiveSum(nullptr, b, piece_ptr, piece_ptr, capacity + 1, s);
    *scratch_bytes = std::max(a, b);
    return e;
  }
  cudaError_t e = cub::DeviceSelect::If(scratch, *scratch_bytes, rows, long_rows, out, n, pred, s);
  if (e != cudaSuccess) return e;
  long_row_pieces<<<blocks_for(std::int64_t(capacity) + 1), block_threads, 0, s>>>(
      capacity, out, row_ptr, long_rows, piece_ptr);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  e = cub::DeviceScan::ExclusiveSum(scratch, *scratch_bytes, piece_ptr, piece_ptr, capacity + 1, s);
  if (e != cudaSuccess) return e;
  total_pieces<<<1, 1, 0, s>>>(piece_ptr, out);
  return cudaGetLastError();
}

}  // namespace cnc::cuda
