// Writes of large pageable arrays (the matrix) go through two pinned, mapped staging buffers
// (CL_MEM_ALLOC_HOST_PTR): every core copies one chunk in while the device reads the other,
// instead of the driver's staging of pageable memory (3.5 GB/s on an H100's NVIDIA OpenCL).
// The buffers are made once per device and process and handed from one upload to the next
// (util/lease.hpp).
#pragma once

#include <cstddef>

#include "backends/opencl/cl_api.hpp"

namespace cnc::ocl {

class stager {
 public:
  static constexpr std::size_t chunk_max = std::size_t(32) << 20, chunk_min = std::size_t(1) << 20;
  stager(const api& cl, cl_context ctx, cl_command_queue q);
  bool ok() const { return ptr_[0] && ptr_[1]; }
  // dst[0, bytes) = src on queue q; done when this returns (the staging is free for the next).
  void write(cl_command_queue q, cl_mem dst, const void* src, std::size_t bytes);

 private:
  const api& cl_;
  cl_mem buf_[2] = {nullptr, nullptr};
  void* ptr_[2] = {nullptr, nullptr};
};

}  // namespace cnc::ocl
