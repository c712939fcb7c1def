// Backend selection: explicit parameter, then the CNC_BACKEND environment variable, then auto
// (CUDA, then an OpenCL GPU, then the CPU; tiny systems stay on the CPU).
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace cnc {

// Systems with fewer rows than this stay on the CPU in auto mode: a GPU launch costs more.
constexpr std::int64_t auto_gpu_min_rows = 20000;

// CNC_BACKEND_* requested by the environment, or CNC_BACKEND_AUTO. Unknown text -> throws.
int backend_from_environment();
// Makes the backend `kind` (CNC_BACKEND_CPU/OPENCL/CUDA); nullptr + why when unavailable.
std::unique_ptr<backend> make_backend(int kind, const backend_options& o, std::string& why);
// Whether an OpenCL backend is on a GPU (auto selection skips OpenCL CPU devices).
bool backend_is_gpu(const backend& b);

}  // namespace cnc
