// The CUDA CSR's long rows (matrix_view::long_rows): found on the device once, when the system is
// made, from the row offsets already there.
#include <algorithm>
#include <cstdint>

#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_system.hpp"
#include "util/environment.hpp"

namespace cnc::cuda_host {

// Long: more than 4 trips of the row kernel's sub-warp at one right-hand side (its lanes times
// their unroll), and at least a quarter piece. Rows up to that share a warp with rows of about
// the average length at a bounded loss; longer ones would hold the warp, and a row of 10^5
// entries a whole launch.
static std::int64_t long_row_min(double avg_per_row) {
  const int unroll = std::max(2, cuda::spmv_unroll(1, 8));
  int lanes = 2;
  while (lanes < 32 && double(unroll) * lanes < avg_per_row) lanes *= 2;
  return std::max<std::int64_t>(4LL * lanes * unroll, csr_piece / 4);
}

void cuda_system::split_long_rows(std::int64_t nnz) {
  const long long forced = env::integer(env::var::long_row_min, 0);  // tests, tuning
  if (forced < 0 || mat_.fmt != format::csr || mat_.rows == 0) return;
  const std::int64_t min = forced > 0 ? forced : long_row_min(avg_per_row_);
  const std::int32_t capacity =
      static_cast<std::int32_t>(std::min<std::int64_t>(nnz / (min + 1) + 1, mat_.rows));
  long_rows_ = device_buffer(sizeof(std::int32_t) * std::size_t(capacity));
  piece_ptr_ = device_buffer(sizeof(std::int32_t) * (std::size_t(capacity) + 1));
  device_buffer out(2 * sizeof(std::int32_t));
  std::size_t scratch_bytes = 0;
  check(cuda::csr_long_rows(mat_.rows, mat_.row_ptr, min, capacity, nullptr, nullptr, nullptr,
                            nullptr, &scratch_bytes, stream_),
        "long rows");
  device_buffer scratch(std::max<std::size_t>(scratch_bytes, 1));
  check(cuda::csr_long_rows(mat_.rows, mat_.row_ptr, min, capacity, long_rows_.as<std::int32_t>(),
                            piece_ptr_.as<std::int32_t>(), out.as<std::int32_t>(), scratch.get(),
                            &scratch_bytes, stream_),
        "long rows");
  std::int32_t counts[2] = {0, 0};
  check(cudaMemcpyAsync(counts, out.get(), sizeof counts, cudaMemcpyDeviceToHost, stream_),
        "long rows");
  check(cudaStreamSynchronize(stream_), "long rows");
  if (counts[0] == 0) {
    long_rows_ = device_buffer();
    piece_ptr_ = device_buffer();
    return;
  }
  piece_done_ = device_buffer(sizeof(std::int32_t) * std::size_t(counts[0]));
  check(cudaMemsetAsync(piece_done_.get(), 0, piece_done_.bytes(), stream_), "cudaMemset");
  // One buffer for every group (their launches are ordered on the stream), at the widest group.
  const std::size_t vsize = pr_ == precision::f32 ? sizeof(float) : sizeof(double);
  piece_sums_ = device_buffer(vsize * max_group * std::size_t(counts[1]));
  mat_.n_long = counts[0];
  mat_.long_min = min;
  mat_.long_rows = long_rows_.as<std::int32_t>();
  mat_.piece_ptr = piece_ptr_.as<std::int32_t>();
  mat_.piece_done = piece_done_.as<std::int32_t>();
  mat_.piece_sums = piece_sums_.get();
  mat_.pieces = counts[1];
  const long long warps_per_block = cuda::block_threads / 32;
  mat_.piece_grid = static_cast<int>(
      std::clamp<long long>((counts[1] + warps_per_block - 1) / warps_per_block, 1, 1 << 20));
}

}  // namespace cnc::cuda_host
