// Internal view of the CUDA device_system for tests and benchmarks (not part of the public API):
// reads any work vector back and tells the launch configuration that was chosen.
#pragma once

#include <string>

namespace cnc::cuda {

enum class vec_id { x, r, p, q, b };

class system_probe {
 public:
  virtual ~system_probe() = default;
  // Host, column-major, n_padded rows per system (padding rows included).
  virtual void read_vector(vec_id v, double* out) = 0;
  // e.g. "csr w=4 kc=1 spmv_grid=792 vec_grid=1056"
  virtual std::string config() const = 0;
};

}  // namespace cnc::cuda
