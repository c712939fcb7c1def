// Backend selection (see registry.hpp).
#include "backends/registry.hpp"

#include <strings.h>

#include <cstdlib>
#include <cstring>

#include "backends/opencl/opencl_backend.hpp"
#include "cnc.h"
#include "util/environment.hpp"
#include "util/error.hpp"

namespace cnc {

int backend_from_environment() {
  const std::optional<std::string> v = env::text(env::var::backend);
  const char* e = v ? v->c_str() : nullptr;
  if (!e || !strcasecmp(e, "auto")) return CNC_BACKEND_AUTO;
  if (!strcasecmp(e, "cpu")) return CNC_BACKEND_CPU;
  if (!strcasecmp(e, "opencl")) return CNC_BACKEND_OPENCL;
  if (!strcasecmp(e, "cuda")) return CNC_BACKEND_CUDA;
  throw error(CNC_ERR_INVALID_VALUE,
              std::string("CNC_BACKEND='") + e + "' (expected auto, cpu, opencl or cuda)");
}

std::unique_ptr<backend> make_backend(int kind, const backend_options& o, std::string& why) {
  switch (kind) {
    case CNC_BACKEND_CPU:
      return make_cpu_backend(o, why);
    case CNC_BACKEND_OPENCL:
      return make_opencl_backend(o, why);
    case CNC_BACKEND_CUDA:
      return make_cuda_backend(o, why);
  }
  why = "unknown backend";
  return nullptr;
}

// Device arrays: only backends that take them (CUDA) override these.
namespace {
[[noreturn]] void no_device_arrays(const backend& b) {
  throw error(CNC_ERR_BACKEND_UNAVAILABLE,
              std::string(": the ") + b.name() + " backend does not take device arrays");
}
}  // namespace
std::string backend::device_memory_problem(const void*) const {
  return std::string("the ") + name() + " backend does not take device arrays";
}
void backend::copy_to_host(void*, const void*, std::size_t) const { no_device_arrays(*this); }
void backend::synchronize_device() const { no_device_arrays(*this); }
void backend::copy_to_device(void*, const void*, std::size_t) const { no_device_arrays(*this); }
std::int64_t backend::first_not_finite(const double*, std::int64_t, double*) const {
  no_device_arrays(*this);
}
device_csr_scan backend::scan_device_csr(const device_csr&) const { no_device_arrays(*this); }
device_zcsr_scan backend::scan_device_zcsr(const device_csr&, bool) const {
  no_device_arrays(*this);
}
std::int64_t backend::device_block_count(const device_csr&, int) const { no_device_arrays(*this); }
std::unique_ptr<device_csr_copy> backend::upload_csr(const csr_view&, bool) {
  no_device_arrays(*this);
}
std::unique_ptr<device_csr_copy> backend::permute_device_csr(const device_csr&,
                                                             std::span<const std::int32_t>) {
  no_device_arrays(*this);
}
device_ordering backend::rcm_device(const device_csr&) { no_device_arrays(*this); }
void device_system::ssor(int, int, double) {
  throw error(CNC_ERR_UNSUPPORTED,
              ": SSOR runs on the CPU backend only (its sweeps are sequential)");
}

void device_system::write_state(const rhs_state*) {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend cannot set the PCG steps' state");
}
namespace {
[[noreturn]] void no_halo() {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend has no halo operations (libcnc_mpi)");
}
}  // namespace
double* device_system::halo_send() { no_halo(); }
double* device_system::halo_recv() { no_halo(); }
void device_system::gather_halo(int) { no_halo(); }
void device_system::add_halo(double, int) { no_halo(); }
void device_system::gather_halo_on_device(int) { no_halo(); }
void device_system::add_halo_on_device(double, int) { no_halo(); }
void device_system::block_dots(int, int, double*) {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend has no cross-column products (block CG)");
}
void device_system::block_combine(int, const double*, const double*, int) {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend has no cross-column products (block CG)");
}
void device_system::zaxpby(const double*, int, const double*, int) {
  throw error(CNC_ERR_UNSUPPORTED,
              ": this backend has no complex vector operations (complex BiCGSTAB and GMRES)");
}
void device_system::set_complex_jacobi(const double*) {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend has no Jacobi on a complex diagonal");
}
void device_system::zprecondition(int, int) {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend has no Jacobi on a complex diagonal");
}
void device_system::zdots(int, const int*, int, double*) {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend has no fused complex inner products");
}
void device_system::zcombine(const int*, int, const double*, const double*, int) {
  throw error(CNC_ERR_UNSUPPORTED, ": this backend has no fused complex combinations");
}

std::unique_ptr<device_system> backend::create_system_from_device(const device_csr&, format, bool,
                                                                  int, bool, device_build&) {
  no_device_arrays(*this);
}

bool backend_is_gpu(const backend& b) {
  if (b.api_id() == CNC_BACKEND_OPENCL) return opencl_backend_is_gpu(b);
  return b.api_id() == CNC_BACKEND_CUDA;
}

}  // namespace cnc
