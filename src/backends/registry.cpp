// Backend selection (see registry.hpp).
#include "backends/registry.hpp"

#include <cstdlib>
#include <cstring>
#include <strings.h>

#include "backends/opencl/opencl_backend.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc {

int backend_from_environment() {
  const char* e = std::getenv("CNC_BACKEND");
  if (!e || !*e || !strcasecmp(e, "auto")) return CNC_BACKEND_AUTO;
  if (!strcasecmp(e, "cpu")) return CNC_BACKEND_CPU;
  if (!strcasecmp(e, "opencl")) return CNC_BACKEND_OPENCL;
  if (!strcasecmp(e, "cuda")) return CNC_BACKEND_CUDA;
  throw error(CNC_ERR_INVALID_VALUE,
              std::string("CNC_BACKEND='") + e + "' (expected auto, cpu, opencl or cuda)");
}

std::unique_ptr<backend> make_backend(int kind, const backend_options& o, std::string& why) {
  switch (kind) {
    case CNC_BACKEND_CPU: return make_cpu_backend(o, why);
    case CNC_BACKEND_OPENCL: return make_opencl_backend(o, why);
    case CNC_BACKEND_CUDA: return make_cuda_backend(o, why);
  }
  why = "unknown backend";
  return nullptr;
}

bool backend_is_gpu(const backend& b) {
  if (b.api_id() == CNC_BACKEND_OPENCL) return opencl_backend_is_gpu(b);
  return b.api_id() == CNC_BACKEND_CUDA;
}

}  // namespace cnc
