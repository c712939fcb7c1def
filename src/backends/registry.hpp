// Backend selection: explicit parameter, then the CNC_BACKEND environment variable, then auto
// (CUDA, then an OpenCL GPU, then the CPU; tiny systems stay on the CPU).
#pragma once

#include <memory>
#include <string>

#include "backends/backend.hpp"

namespace cnc {

// Systems with fewer matrix entries than this stay on the CPU in auto mode, where a GPU's
// launches and copies cost more than the work. Measured end to end (bench_api --small, H100 and
// 16 host cores, BENCHMARKS.md): the GPU wins from 18 K entries on (7-pt 14^3: 1.1 ms against
// 1.8 ms), the CPU at 6.4 K (0.6 ms against 1.0 ms).
constexpr std::int64_t auto_gpu_min_nnz = 12000;

// CNC_BACKEND_* requested by the environment, or CNC_BACKEND_AUTO. Unknown text -> throws.
int backend_from_environment();
// Makes the backend `kind` (CNC_BACKEND_CPU/OPENCL/CUDA); nullptr + why when unavailable.
std::unique_ptr<backend> make_backend(int kind, const backend_options& o, std::string& why);
// Whether an OpenCL backend is on a GPU (auto selection skips OpenCL CPU devices).
bool backend_is_gpu(const backend& b);

}  // namespace cnc
