// The OpenCL backend: finds the loader and a device at run time, and creates device_systems.
//
// Device choice, first match wins: backend_options::device_index (a global index over all
// platforms, in enumeration order), then CNC_OPENCL_DEVICE (a global index or a case-insensitive
// substring of the device name), then the first GPU, then the first device. CNC_OPENCL_PLATFORM
// (an index or a name substring) restricts the candidates to one platform. Anything missing
// (loader, platform, device, a match) makes the factory return nullptr with the reason.
#include "backends/opencl/opencl_backend.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/opencl/cl_api.hpp"
#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/cl_runtime.hpp"
#include "backends/opencl/opencl_system.hpp"
#include "cnc.h"
#include "util/environment.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"

namespace cnc {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string describe(const std::vector<ocl::device_info>& devs) {
  std::string s;
  for (const auto& d : devs)
    s += (s.empty() ? "" : ", ") + std::string("[") + std::to_string(d.global_index) + "] " +
         d.name + " (" + d.platform_name + ")";
  return s.empty() ? "none" : s;
}

class opencl_backend final : public backend {
 public:
  opencl_backend(const ocl::api& cl, ocl::device_info dev, bool fp64,
                 std::function<void(int, const std::string&)> log)
      : cl_(cl), dev_(std::move(dev)), fp64_(fp64), log_(std::move(log)) {}

  const char* name() const override { return "opencl"; }
  int api_id() const override { return CNC_BACKEND_OPENCL; }
  std::string device_name() const override { return dev_.name; }
  bool has_fp64() const override { return fp64_; }
  // GPUs: SELL's one work-item per row with coalesced slices beats scalar CSR on even rows; on
  // CPUs (PoCL) a work-item walks its rows alone and CSR's contiguous rows stream better.
  bool prefers_sliced() const override { return dev_.gpu; }
  // SELL is filled on the device from the CSR (its kernel reads the double values).
  bool builds_on_device(format f) const override { return f == format::sell && fp64_; }
  // GPUs: a convergence check (queue drain + read) costs about as much as a few iterations.
  int default_check_interval() const override { return dev_.gpu ? 16 : 2; }

  std::unique_ptr<device_system> create_system(const host_matrix& a, std::span<const double> d,
                                               precision p, int nrhs) override {
    if (nrhs < 1) throw error(CNC_ERR_INVALID_VALUE, "OpenCL backend: nrhs must be >= 1");
    if (p != precision::f32 && !fp64_)
      throw error(CNC_ERR_NO_FP64, "OpenCL device " + dev_.name +
                                       " has no double precision (cl_khr_fp64): use CNC_SINGLE");
    if (!dev_.gpu) {  // a CPU device's buffers are host memory: checked as the CPU backend's
      const double mb = p == precision::f64 ? 8 : 4, vb = p == precision::f32 ? 4 : 8;
      const double n = a.csr.n, csr = memory::csr(n, double(a.csr.nnz()), mb);
      const double matrix =
          is_block(a.fmt) ? memory::bcrs(n, double(a.bcrs->n_blocks()), block_size(a.fmt), mb)
          : a.fmt == format::zcsr ? memory::csr(n / 2, double(a.zcsr->nnz()), 2 * mb)
          : a.fmt != format::sell ? csr
          : a.sell                ? memory::sell(n, double(a.sell->entries()), mb)
                                  : csr + 1.1 * csr;  // CSR, SELL built from it
      memory::reserve(matrix + double(memory::device_vectors * nrhs + 1) * a.n_padded() * vb, [&] {
        return "the OpenCL system on " + dev_.name + " (a CPU device: host memory; " +
               std::to_string(a.csr.n) + " rows, " +
               std::to_string(a.zcsr ? 4 * a.zcsr->nnz() : a.csr.nnz()) + " entries, " +
               std::to_string(nrhs) + " system(s))";
      });
    }
    ocl::tuning t;
    t.log = log_;
    return ocl::make_system(cl_, dev_, a, d, p, nrhs, fp64_, t);
  }

  bool is_gpu() const { return dev_.gpu; }

  double copy_bandwidth(std::size_t bytes, int reps) const {
    cl_context ctx = ocl::shared_context(cl_, dev_);
    cl_int err = CL_SUCCESS;
    cl_command_queue q = cl_.CreateCommandQueue(ctx, dev_.id, 0, &err);
    ocl::check(err, "clCreateCommandQueue");
    cl_mem a = cl_.CreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    cl_mem b = err == CL_SUCCESS ? cl_.CreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err)
                                 : nullptr;
    double best = 0;
    if (err == CL_SUCCESS) {
      for (int r = 0; r <= reps && err == CL_SUCCESS; ++r) {  // r = 0 warms up
        const auto t0 = std::chrono::steady_clock::now();
        err = cl_.EnqueueCopyBuffer(q, a, b, 0, 0, bytes, 0, nullptr, nullptr);
        if (err == CL_SUCCESS) err = cl_.Finish(q);
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r > 0 && s > 0) best = std::max(best, 2.0 * static_cast<double>(bytes) / s);
      }
    }
    if (b) cl_.ReleaseMemObject(b);
    if (a) cl_.ReleaseMemObject(a);
    cl_.ReleaseCommandQueue(q);
    ocl::check(err, "measuring the copy bandwidth");
    return best;
  }

 private:
  const ocl::api& cl_;
  ocl::device_info dev_;
  bool fp64_;
  std::function<void(int, const std::string&)> log_;
};

// CNC_OPENCL_PLATFORM (an index or a name substring): only that platform's devices are kept;
// false, with the reason, when it matches none.
bool keep_platform(std::vector<ocl::device_info>& devs, std::string& why) {
  const std::optional<std::string> platform_env = env::text(env::var::opencl_platform);
  if (!platform_env) return true;
  const std::string& want = *platform_env;
  std::vector<cl_platform_id> order;  // platforms with devices, in enumeration order
  for (const auto& d : devs)
    if (std::find(order.begin(), order.end(), d.platform) == order.end())
      order.push_back(d.platform);
  std::vector<ocl::device_info> kept;
  for (const auto& d : devs) {
    const long pos = std::find(order.begin(), order.end(), d.platform) - order.begin();
    const bool match = all_digits(want)
                           ? pos == std::atol(want.c_str())
                           : lower(d.platform_name).find(lower(want)) != std::string::npos;
    if (match) kept.push_back(d);
  }
  if (kept.empty()) {
    why = "CNC_OPENCL_PLATFORM=" + want + " matches no OpenCL platform; devices: " + describe(devs);
    return false;
  }
  devs.swap(kept);
  return true;
}

}  // namespace

int opencl_gpu_index(int ordinal) {
  std::string why;
  const ocl::api* cl = ocl::load_api(why);
  if (!cl || env::text(env::var::opencl_device)) return -1;
  std::vector<ocl::device_info> devs = ocl::list_devices(*cl, why);
  if (!keep_platform(devs, why)) return -1;
  std::vector<int> gpus;
  for (const auto& d : devs)
    if (d.gpu) gpus.push_back(d.global_index);
  if (gpus.empty() || ordinal < 0) return -1;
  return gpus[std::size_t(ordinal) % gpus.size()];
}

std::vector<std::string> list_opencl_devices(std::string& why) {
  const ocl::api* cl = ocl::load_api(why);
  if (!cl) return {};
  std::vector<std::string> out;
  for (const ocl::device_info& d : ocl::list_devices(*cl, why))  // in global_index order
    out.push_back(d.name + " (" + d.platform_name + (d.gpu ? ", GPU" : "") +
                  (d.fp64 ? "" : ", no fp64") + ", " + std::to_string(d.compute_units) +
                  " compute units)");
  return out;
}

std::unique_ptr<backend> make_opencl_backend(const backend_options& o, std::string& why) {
  const ocl::api* cl = ocl::load_api(why);
  if (!cl) return nullptr;
  std::vector<ocl::device_info> devs = ocl::list_devices(*cl, why);
  if (devs.empty()) return nullptr;

  if (!keep_platform(devs, why)) return nullptr;
  const std::optional<std::string> device_env = env::text(env::var::opencl_device);

  const ocl::device_info* chosen = nullptr;
  if (o.device_index >= 0) {
    for (const auto& d : devs)
      if (d.global_index == o.device_index) chosen = &d;
    if (!chosen) {
      why = "no OpenCL device with index " + std::to_string(o.device_index) +
            "; devices: " + describe(devs);
      return nullptr;
    }
  } else if (const char* env = device_env ? device_env->c_str() : nullptr) {
    const std::string want = env;
    for (const auto& d : devs) {
      const bool match = all_digits(want) ? d.global_index == std::atoi(want.c_str())
                                          : lower(d.name).find(lower(want)) != std::string::npos;
      if (match) {
        chosen = &d;
        break;
      }
    }
    if (!chosen) {
      why = "CNC_OPENCL_DEVICE=" + want + " names no OpenCL device; devices: " + describe(devs);
      return nullptr;
    }
  } else {
    for (const auto& d : devs)
      if (d.gpu) {
        chosen = &d;
        break;
      }
    if (!chosen) chosen = &devs.front();
  }

  // Tests: act as if fp64 were missing.
  const bool fp64 = chosen->fp64 && env::integer(env::var::opencl_disable_fp64, 0) == 0;
  if (o.log)
    o.log(CNC_LOG_INFO, "OpenCL device: " + chosen->name + " (" + chosen->platform_name + ")" +
                            (chosen->gpu ? ", GPU" : "") + (fp64 ? "" : ", no fp64"));
  return std::make_unique<opencl_backend>(*cl, *chosen, fp64, o.log);
}

bool opencl_backend_is_gpu(const backend& b) {
  const auto* o = dynamic_cast<const opencl_backend*>(&b);
  return o && o->is_gpu();
}

double opencl_copy_bandwidth(const backend& b, std::size_t bytes, int reps) {
  const auto* o = dynamic_cast<const opencl_backend*>(&b);
  return o ? o->copy_bandwidth(bytes, reps) : 0.0;
}

}  // namespace cnc
