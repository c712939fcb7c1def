#include "util/environment.hpp"

#include <cstdlib>
#include <cstring>

namespace cnc::env {

const char* name(var v) {
  switch (v) {
    case var::backend:
      return "CNC_BACKEND";
    case var::num_threads:
      return "CNC_NUM_THREADS";
    case var::cpu_isa:
      return "CNC_CPU_ISA";
    case var::cpu_gather_prefetch:
      return "CNC_CPU_GATHER_PREFETCH";
    case var::cuda_device:
      return "CNC_CUDA_DEVICE";
    case var::cuda_spmv_width:
      return "CNC_CUDA_SPMV_WIDTH";
    case var::cuda_persistent_rows:
      return "CNC_CUDA_PERSISTENT_ROWS";
    case var::cuda_persistent_blocks_per_sm:
      return "CNC_CUDA_PERSISTENT_BLOCKS_PER_SM";
    case var::cuda_dots_mapped:
      return "CNC_CUDA_DOTS_MAPPED";
    case var::cuda_stream_loads:
      return "CNC_CUDA_STREAM_LOADS";
    case var::long_row_min:
      return "CNC_LONG_ROW_MIN";
    case var::opencl_library:
      return "CNC_OPENCL_LIBRARY";
    case var::opencl_platform:
      return "CNC_OPENCL_PLATFORM";
    case var::opencl_device:
      return "CNC_OPENCL_DEVICE";
    case var::opencl_disable_fp64:
      return "CNC_OPENCL_DISABLE_FP64";
    case var::opencl_work_group:
      return "CNC_OPENCL_WG";
    case var::opencl_groups:
      return "CNC_OPENCL_GROUPS";
    case var::opencl_csr_width:
      return "CNC_OPENCL_CSR_WIDTH";
    case var::opencl_sell_unroll:
      return "CNC_OPENCL_SELL_U";
    case var::opencl_spmv_columns:
      return "CNC_OPENCL_SPMV_COLS";
    case var::opencl_coefficient_buffer:
      return "CNC_OPENCL_COEF_BUFFER";
    case var::opencl_profile:
      return "CNC_OPENCL_PROFILE";
    case var::memory_limit_bytes:
      return "CNC_MEMORY_LIMIT_BYTES";
    case var::fault_inject:
      return "CNC_FAULT_INJECT";
    case var::cholmod_library:
      return "CNC_CHOLMOD_LIBRARY";
    case var::superlu_library:
      return "CNC_SUPERLU_LIBRARY";
    case var::cudss_library:
      return "CNC_CUDSS_LIBRARY";
    case var::arpack_library:
      return "CNC_ARPACK_LIBRARY";
    case var::nccl_library:
      return "CNC_NCCL_LIBRARY";
  }
  return "";
}

std::optional<std::string> text(var v) {
  const char* s = std::getenv(name(v));
  if (!s || !*s) return std::nullopt;
  return std::string(s);
}

long long integer(var v, long long fallback) {
  const char* s = std::getenv(name(v));
  if (!s || !*s) return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(s, &end, 10);
  return end && *end == '\0' ? x : fallback;
}

}  // namespace cnc::env
