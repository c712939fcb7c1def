// P A Pᵀ of a canonical CSR on the device (cuda_kernels.hpp): the reordered matrix is made where
// it will be read, from the caller's CSR uploaded as it is, instead of on the host (where its
// rows, read in the new order, are scattered in memory). The result is the host's permute_csr
// (conversion/reorder.hpp) bit for bit: row r is row perm[r] with columns renumbered by the
// inverse permutation and sorted (they are distinct, so the sorted order is unique).
#include <climits>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/util_type.cuh>
#include <cub/version.cuh>
#include <type_traits>

#include "backends/cuda/cuda_kernels.hpp"

namespace cnc::cuda {
namespace {

// inv[perm[r]] = r.
__global__ void invert_permutation(std::int32_t n, const std::int32_t* perm, std::int32_t* inv) {
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < n) inv[perm[r]] = std::int32_t(r);
}

// out_ptr[r + 1] = length of row perm[r]; out_ptr[0] = 0 (the inclusive scan makes the offsets).
__global__ void permuted_lengths(std::int32_t n, const std::int32_t* perm,
                                 const std::int64_t* row_ptr, std::int64_t* out_ptr) {
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r == 0) out_ptr[0] = 0;
  if (r < n) out_ptr[r + 1] = row_ptr[perm[r] + 1] - row_ptr[perm[r]];
}

// Row r's entries, columns renumbered, in their old order: a warp a row, its lanes along the row
// (the old row is contiguous, so its reads coalesce wherever it lies).
__global__ void permuted_rows(std::int32_t n, const std::int32_t* perm, const std::int32_t* inv,
                              const std::int64_t* row_ptr, const std::int32_t* col,
                              const double* val, const std::int64_t* out_ptr, std::int32_t* out_col,
                              double* out_val) {
  const std::int64_t r = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = int(threadIdx.x % 32);
  if (r >= n) return;
  const std::int64_t from = row_ptr[perm[r]], len = row_ptr[perm[r] + 1] - from, to = out_ptr[r];
  for (std::int64_t t = lane; t < len; t += 32) {
    out_col[to + t] = inv[col[from + t]];
    out_val[to + t] = val[from + t];
  }
}

// CUB before CCCL 3 (CUDA 12) counts a segmented sort's items in int.
using sort_count = std::conditional_t<(CUB_VERSION < 300000), int, std::int64_t>;

constexpr int threads = 256;
int blocks(std::int64_t work) {
  return int(std::max<std::int64_t>(1, (work + threads - 1) / threads));
}

}  // namespace

std::int64_t permute_max_entries() { return std::is_same_v<sort_count, int> ? INT_MAX : LLONG_MAX; }

cudaError_t permute_csr(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                        const std::int32_t* col, const double* val, const std::int32_t* perm,
                        std::int32_t* inv, std::int64_t* out_ptr, std::int32_t* const cols[2],
                        double* const vals[2], int* result, void* scratch,
                        std::size_t* scratch_bytes, cudaStream_t s) {
  if (nnz > permute_max_entries()) return cudaErrorInvalidValue;
  // Sorted between the two pairs of buffers (no copy of them in the scratch).
  cub::DoubleBuffer<std::int32_t> keys(cols[0], cols[1]);
  cub::DoubleBuffer<double> items(vals[0], vals[1]);
  *result = 0;
  std::size_t scan_bytes = 0, sort_bytes = 0;
  cudaError_t e =
      cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, out_ptr, out_ptr, std::int64_t(n) + 1, s);
  if (e != cudaSuccess) return e;
  e = cub::DeviceSegmentedSort::SortPairs(nullptr, sort_bytes, keys, items, sort_count(nnz), n,
                                          out_ptr, out_ptr + 1, s);
  if (e != cudaSuccess) return e;
  if (!scratch) {  // size query
    *scratch_bytes = std::max(scan_bytes, sort_bytes);
    return cudaSuccess;
  }
  if (n == 0) return cudaMemsetAsync(out_ptr, 0, sizeof *out_ptr, s);
  invert_permutation<<<blocks(n), threads, 0, s>>>(n, perm, inv);
  permuted_lengths<<<blocks(n), threads, 0, s>>>(n, perm, row_ptr, out_ptr);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  e = cub::DeviceScan::InclusiveSum(scratch, scan_bytes, out_ptr, out_ptr, std::int64_t(n) + 1, s);
  if (e != cudaSuccess || nnz == 0) return e;
  permuted_rows<<<blocks(std::int64_t(n) * 32), threads, 0, s>>>(n, perm, inv, row_ptr, col, val,
                                                                 out_ptr, cols[0], vals[0]);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  e = cub::DeviceSegmentedSort::SortPairs(scratch, sort_bytes, keys, items, sort_count(nnz), n,
                                          out_ptr, out_ptr + 1, s);
  *result = keys.selector;
  return e;
}

}  // namespace cnc::cuda
