// Every environment variable cnc reads, in one table, read through one typed function. The
// variables are for deployment (backend, device, threads) and for tests and tuning experiments;
// the API's parameters always take precedence where both exist.
#pragma once

#include <optional>
#include <string>

namespace cnc::env {

enum class var {
  backend,                        // CNC_BACKEND: auto|cpu|opencl|cuda, when the context says AUTO
  num_threads,                    // CNC_NUM_THREADS: host threads (0 = one per core)
  cpu_isa,                        // CNC_CPU_ISA: cap the CPU kernels: generic|avx2|avx512
  cpu_gather_prefetch,            // CNC_CPU_GATHER_PREFETCH: 0 off, 1 on, unset auto (scalar CSR)
  cuda_device,                    // CNC_CUDA_DEVICE: CUDA ordinal when the context names none
  cuda_spmv_width,                // CNC_CUDA_SPMV_WIDTH: lanes per row (tests, tuning)
  cuda_persistent_rows,           // CNC_CUDA_PERSISTENT_ROWS: persistent kernel up to this n
  cuda_persistent_blocks_per_sm,  // CNC_CUDA_PERSISTENT_BLOCKS_PER_SM (tuning)
  cuda_dots_mapped,               // CNC_CUDA_DOTS_MAPPED: 0 = dots copy their results (tests)
  cuda_stream_loads,              // CNC_CUDA_STREAM_LOADS: 0 = matrix loads via __ldg (tuning)
  long_row_min,                   // CNC_LONG_ROW_MIN: > 0 rows longer are cut, < 0 none (tests)
  opencl_library,                 // CNC_OPENCL_LIBRARY: path of libOpenCL to load
  opencl_platform,                // CNC_OPENCL_PLATFORM: platform index or name part
  opencl_device,                  // CNC_OPENCL_DEVICE: device index or name part
  opencl_disable_fp64,            // CNC_OPENCL_DISABLE_FP64: act as if fp64 were missing (tests)
  opencl_work_group,              // CNC_OPENCL_WG (tuning)
  opencl_groups,                  // CNC_OPENCL_GROUPS (tuning)
  opencl_csr_width,               // CNC_OPENCL_CSR_WIDTH (tuning)
  opencl_sell_unroll,             // CNC_OPENCL_SELL_U (tuning)
  opencl_spmv_columns,            // CNC_OPENCL_SPMV_COLS: 1 or 0 where COLS can run (tuning)
  opencl_coefficient_buffer,      // CNC_OPENCL_COEF_BUFFER: the buffer path for any k (tests)
  opencl_profile,                 // CNC_OPENCL_PROFILE: 1 prints kernel times (diagnosis)
  memory_limit_bytes,             // CNC_MEMORY_LIMIT_BYTES: cap on host memory (containment, tests)
  fault_inject,                   // CNC_FAULT_INJECT: make a device call fail (tests; fault.hpp)
  cholmod_library,                // CNC_CHOLMOD_LIBRARY: path of libcholmod to load
  superlu_library,                // CNC_SUPERLU_LIBRARY: path of libsuperlu to load
  cudss_library,                  // CNC_CUDSS_LIBRARY: path of libcudss to load
  arpack_library,                 // CNC_ARPACK_LIBRARY: path of libarpack to load
  nccl_library,                   // CNC_NCCL_LIBRARY: path of libnccl to load (libcnc_mpi)
};

const char* name(var v);  // e.g. "CNC_BACKEND"
// The value, or nothing when unset or empty.
std::optional<std::string> text(var v);
// The value as an integer, or `fallback` when unset, empty or not an integer.
long long integer(var v, long long fallback);

}  // namespace cnc::env
