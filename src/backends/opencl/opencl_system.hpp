// The OpenCL device_system: one matrix and the work vectors of k right-hand sides resident on an
// OpenCL device, driven through the fused steps of kernels/opencl/pcg_steps.cl.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/opencl/cl_runtime.hpp"

namespace cnc::ocl {

// Launch shape; 0 = automatic. Environment overrides for experiments: CNC_OPENCL_WG,
// CNC_OPENCL_GROUPS, CNC_OPENCL_CSR_WIDTH.
struct tuning {
  int work_group = 0;  // work-items per group (power of two)
  int groups = 0;      // work-groups of every step kernel (= number of reduction partials)
  int csr_width = 0;   // work-items per CSR row (power of two)
  // Where the upload's phase times go (CNC_LOG_INFO lines); may be empty.
  std::function<void(int, const std::string&)> log;
};

// `fp64`: whether the device may use doubles (false forces float reductions; f64 and mixed are
// then refused with CNC_ERR_NO_FP64 by the caller).
std::unique_ptr<device_system> make_system(const api& cl, const device_info& dev,
                                           const host_matrix& a, std::span<const double> d,
                                           precision p, int nrhs, bool fp64, const tuning& t);

}  // namespace cnc::ocl
