// What the OpenCL backend offers beyond the generic backend interface: whether the chosen device
// is a GPU (auto selection considers OpenCL after CUDA only for GPUs) and a device copy
// bandwidth measurement for benchmarks. Both also exist in builds without OpenCL.
#pragma once

#include <cstddef>

#include "backends/backend.hpp"

namespace cnc {

// True when `b` is an OpenCL backend whose device is a GPU; false for any other backend.
bool opencl_backend_is_gpu(const backend& b);

// Bandwidth of clEnqueueCopyBuffer on the backend's device, bytes read plus written per second,
// best of `reps` copies of `bytes` bytes. 0 when `b` is not an OpenCL backend.
double opencl_copy_bandwidth(const backend& b, std::size_t bytes, int reps);

}  // namespace cnc
