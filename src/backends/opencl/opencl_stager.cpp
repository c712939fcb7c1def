// The OpenCL backend's staged writes (see opencl_stager.hpp).
#include "backends/opencl/opencl_stager.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/opencl/cl_error.hpp"
#include "util/parallel.hpp"

namespace cnc::ocl {

stager::stager(const api& cl, cl_context ctx, cl_command_queue q) : cl_(cl) {
  for (int i = 0; i < 2; ++i) {
    cl_int err = CL_SUCCESS;
    buf_[i] =
        cl.CreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, chunk_max, nullptr, &err);
    if (err != CL_SUCCESS) return;
    ptr_[i] = cl.EnqueueMapBuffer(q, buf_[i], CL_TRUE, CL_MAP_WRITE, 0, chunk_max, 0, nullptr,
                                  nullptr, &err);
    if (err != CL_SUCCESS) {
      ptr_[i] = nullptr;
      return;
    }
  }
}

void stager::write(cl_command_queue q, cl_mem dst, const void* src, std::size_t bytes) {
  const std::size_t chunk =
      std::clamp((bytes / 4 + chunk_min - 1) / chunk_min * chunk_min, chunk_min, chunk_max);
  cl_event done[2] = {nullptr, nullptr};
  cl_int err = CL_SUCCESS;  // the first failure: enqueueing, or a write that failed later
  auto wait = [&](int b) {
    if (!done[b]) return;
    const cl_int w = cl_.WaitForEvents(1, &done[b]);
    if (err == CL_SUCCESS) err = w;
    cl_.ReleaseEvent(done[b]);
    done[b] = nullptr;
  };
  for (std::size_t off = 0, i = 0; off < bytes && err == CL_SUCCESS; off += chunk, ++i) {
    const int b = int(i % 2);
    wait(b);
    const std::size_t len = std::min(chunk, bytes - off);
    char* to = static_cast<char*>(ptr_[b]);
    const char* from = static_cast<const char*>(src) + off;
    parallel_pieces(std::int64_t(len), std::int64_t(1) << 18, host_threads(),
                    [&](std::int64_t, std::int64_t a, std::int64_t e) {
                      std::memcpy(to + a, from + a, std::size_t(e - a));
                    });
    err = cl_.EnqueueWriteBuffer(q, dst, CL_FALSE, off, len, to, 0, nullptr, &done[b]);
    // Submitted now, so that it runs while the next chunk is copied (unflushed, it would start
    // only at the wait for its buffer: no overlap).
    if (err == CL_SUCCESS) err = cl_.Flush(q);
  }
  wait(0), wait(1);
  check(err, "clEnqueueWriteBuffer (staged)");
}

}  // namespace cnc::ocl
