// The halo operations of the CUDA backend (backend.hpp, libcnc_mpi): the rows other processes read
// gathered into one array, and the product of the halo block (the columns other processes own)
// added into a vector. Double vectors only; group layout v[i*kc + j] (cuda_kernels.hpp). Host
// buffers of halo values interleave all nrhs columns, value t of column j at [t*nrhs + j]: a group
// of systems j0 .. j0+k-1 reads and writes its own slots of that stride.
#include "common.cuh"

namespace cnc::cuda {
namespace {

// One thread per (send row, slot).
__global__ void __launch_bounds__(block_threads)
    gather_kernel(const double* __restrict__ v, int kc, int k,
                  const std::int32_t* __restrict__ rows, std::int32_t count,
                  double* __restrict__ out, int stride, int j0) {
  const long long total = (long long)count * k;
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
       t += (long long)gridDim.x * blockDim.x) {
    const long long i = t / k;
    const int j = int(t - i * k);
    out[i * stride + j0 + j] = v[(long long)rows[i] * kc + j];
  }
}

// One thread per row: y_j += alpha Σ_e val[e] h[col[e]*stride + j0 + j] for the active slots,
// each sum in entry order (the same bits for any launch shape).
__global__ void __launch_bounds__(block_threads)
    halo_add_kernel(int kc, int k, unsigned int mask, std::int32_t n,
                    const std::int64_t* __restrict__ rp, const std::int32_t* __restrict__ col,
                    const double* __restrict__ val, const double* __restrict__ h, int stride,
                    int j0, double alpha, double* __restrict__ y) {
  for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < n;
       r += (long long)gridDim.x * blockDim.x) {
    const std::int64_t e0 = rp[r], e1 = rp[r + 1];
    if (e0 == e1) continue;
    for (int j = 0; j < k; ++j) {
      if (!((mask >> j) & 1u)) continue;
      double s = 0.0;
      for (std::int64_t e = e0; e < e1; ++e) s += val[e] * h[(long long)col[e] * stride + j0 + j];
      y[r * kc + j] += alpha * s;
    }
  }
}

int grid_for(long long work) {
  const long long blocks = (work + block_threads - 1) / block_threads;
  return int(blocks < 1 ? 1 : blocks > 65535 ? 65535 : blocks);
}

}  // namespace

cudaError_t halo_gather(const double* v, int kc, int k, const std::int32_t* rows,
                        std::int32_t count, double* out, int stride, int j0, cudaStream_t s) {
  if (count == 0 || k == 0) return cudaSuccess;
  gather_kernel<<<grid_for((long long)count * k), block_threads, 0, s>>>(v, kc, k, rows, count, out,
                                                                         stride, j0);
  return cudaGetLastError();
}

cudaError_t halo_add(int kc, int k, unsigned int mask, std::int32_t n, const std::int64_t* rp,
                     const std::int32_t* col, const double* val, const double* h, int stride,
                     int j0, double alpha, double* y, cudaStream_t s) {
  if (n == 0 || mask == 0) return cudaSuccess;
  halo_add_kernel<<<grid_for(n), block_threads, 0, s>>>(kc, k, mask, n, rp, col, val, h, stride, j0,
                                                        alpha, y);
  return cudaGetLastError();
}

}  // namespace cnc::cuda
