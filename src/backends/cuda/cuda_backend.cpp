// CUDA backend: a device-resident Jacobi-PCG whose scalars never leave the GPU between checks.
//
// This file holds the backend (device choice, the caller's device arrays, the factory) and the
// pinned stager; the device_system is cuda_system (cuda_system.cpp, cuda_surface.cpp).
//
// The runtime is linked statically: without a driver, cudaGetDeviceCount fails and the factory
// returns nullptr with the runtime's explanation; libcnc.so itself never needs libcuda.
#include "backends/cuda/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_host.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_system.hpp"
#include "cnc.h"
#include "util/error.hpp"
#include "util/lease.hpp"
#include "util/parallel.hpp"

namespace cnc {
namespace cuda_host {

// --- stager (cuda_host.hpp) ------------------------------------------------------------------

stager::~stager() {
  for (int i = 0; i < 2; ++i) {
    if (done_[i]) cudaEventSynchronize(done_[i]), cudaEventDestroy(done_[i]);
    if (pinned_[i]) cudaFreeHost(pinned_[i]);
  }
}

void stager::copy(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
  if (bytes < 2 * min_chunk || !ready(chunk_for(bytes))) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "upload");
    return;
  }
  const std::size_t chunk = chunk_for(bytes);
  for (std::size_t off = 0, i = 0; off < bytes; off += chunk, ++i) {
    const int b = int(i % 2);
    check(cudaEventSynchronize(done_[b]), "staging");  // its previous DMA is done
    const std::size_t len = std::min(chunk, bytes - off);
    host_copy(pinned_[b], static_cast<const char*>(src) + off, len);
    check(
        cudaMemcpyAsync(static_cast<char*>(dst) + off, pinned_[b], len, cudaMemcpyHostToDevice, s),
        "upload");
    check(cudaEventRecord(done_[b], s), "staging");
  }
}

void stager::copy_to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
  if (bytes < 2 * min_chunk || !ready(chunk_for(bytes))) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "read-back");
    check(cudaStreamSynchronize(s), "read-back");
    return;
  }
  const std::size_t chunk = chunk_for(bytes), count = (bytes + chunk - 1) / chunk;
  auto fetch = [&](std::size_t i) {  // chunk i's DMA into buffer i % 2
    const int b = int(i % 2);
    check(cudaEventSynchronize(done_[b]), "staging");
    check(cudaMemcpyAsync(pinned_[b], static_cast<const char*>(src) + i * chunk,
                          std::min(chunk, bytes - i * chunk), cudaMemcpyDeviceToHost, s),
          "read-back");
    check(cudaEventRecord(done_[b], s), "staging");
  };
  fetch(0);
  for (std::size_t i = 0; i < count; ++i) {
    if (i + 1 < count) fetch(i + 1);  // its buffer's last chunk was copied out below
    const int b = int(i % 2);
    check(cudaEventSynchronize(done_[b]), "read-back");
    host_copy(static_cast<char*>(dst) + i * chunk, pinned_[b], std::min(chunk, bytes - i * chunk));
  }
}

// A quarter of the array, between 1 and 64 MiB: enough chunks to overlap both sides.
std::size_t stager::chunk_for(std::size_t bytes) {
  return std::clamp((bytes / 4 + min_chunk - 1) / min_chunk * min_chunk, min_chunk, max_chunk);
}

void stager::host_copy(void* to, const void* from, std::size_t len) {
  parallel_pieces(std::int64_t(len), std::int64_t(1) << 18, host_threads(),
                  [&](std::int64_t, std::int64_t a, std::int64_t e) {
                    std::memcpy(static_cast<char*>(to) + a, static_cast<const char*>(from) + a,
                                std::size_t(e - a));
                  });
}

// Pinned buffers of at least `chunk` bytes and their events, made or grown on use (pinning
// costs about 1 ms per MiB: no more than the copies need); false (plain copies) if it fails.
bool stager::ready(std::size_t chunk) {
  if (failed_) return false;
  if (capacity_ >= chunk) return true;
  for (int i = 0; i < 2; ++i) {
    if (done_[i]) check(cudaEventSynchronize(done_[i]), "staging");
    if (pinned_[i]) cudaFreeHost(pinned_[i]), pinned_[i] = nullptr;
  }
  capacity_ = 0;
  for (int i = 0; i < 2; ++i)
    if (cudaHostAlloc(&pinned_[i], chunk, cudaHostAllocDefault) != cudaSuccess ||
        (!done_[i] && cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming) != cudaSuccess)) {
      cudaGetLastError();
      failed_ = true;
      return false;
    }
  capacity_ = chunk;
  return true;
}

bool pageable(const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return at.type == cudaMemoryTypeUnregistered;
}

}  // namespace cuda_host

namespace {

using namespace cuda_host;

class cuda_backend final : public backend {
 public:
  cuda_backend(int dev, const cudaDeviceProp& prop)
      : dev_(dev),
        name_(prop.name),
        sm_count_(prop.multiProcessorCount),
        cooperative_(prop.cooperativeLaunch != 0) {}
  const char* name() const override { return "cuda"; }
  int api_id() const override { return CNC_BACKEND_CUDA; }
  bool prefers_sliced() const override { return true; }
  bool runs_complex_sell() const override { return true; }
  bool builds_on_device(format f) const override { return f == format::sell; }
  std::string device_name() const override { return name_; }
  // One state read (and host synchronization) per 16 iterations: small systems run about ten
  // times faster than with a read per iteration, and at most 15 extra (no-op) iterations run
  // after convergence.
  int default_check_interval() const override { return 16; }
  std::unique_ptr<device_system> create_system(const host_matrix& a, std::span<const double> d,
                                               precision p, int nrhs) override {
    return std::make_unique<cuda_system>(dev_, sm_count_, cooperative_, *stage_, a, d, p, nrhs);
  }

  bool takes_device_arrays() const override { return true; }
  std::string device_memory_problem(const void* p) const override {
    cudaPointerAttributes at{};
    const cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return "not a CUDA pointer (" + cuda_message(e) + ")";
    }
    if (at.type != cudaMemoryTypeDevice && at.type != cudaMemoryTypeManaged)
      return "host memory, not CUDA device memory";
    if (at.device != dev_)
      return "memory of CUDA device " + std::to_string(at.device) + ", but cnc runs on device " +
             std::to_string(dev_) + " (CNC_DEVICE_INDEX)";
    return {};
  }
  void synchronize_device() const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(cudaDeviceSynchronize(), "waiting for the caller's device work");
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "device read-back");
  }
  std::int64_t first_not_finite(const double* p, std::int64_t count,
                                double* max_abs) const override {
    if (max_abs) *max_abs = 0.0;
    if (count <= 0) return -1;
    check(cudaSetDevice(dev_), "cudaSetDevice");
    device_buffer out(2 * sizeof(unsigned long long));
    check(cuda::first_not_finite(p, count, out.as<unsigned long long>(),
                                 cuda::vector_max_grid(sm_count_), nullptr),
          "finite check");
    unsigned long long words[2] = {0, 0};
    check(cudaMemcpy(words, out.get(), sizeof words, cudaMemcpyDeviceToHost), "finite check");
    if (max_abs) std::memcpy(max_abs, &words[1], sizeof(double));
    return words[0] == ~0ull ? -1 : std::int64_t(words[0]);
  }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "device write");
  }
  device_csr_scan scan_device_csr(const device_csr& a) const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    device_buffer out(2 * sizeof(unsigned long long));
    std::size_t scratch_bytes = 0;
    check(cuda::scan_csr(a.n, a.nnz, a.row_ptr, a.col, a.val, nullptr, nullptr, &scratch_bytes,
                         nullptr),
          "CSR scan");
    device_buffer scratch(scratch_bytes);
    check(cuda::scan_csr(a.n, a.nnz, a.row_ptr, a.col, a.val, out.as<unsigned long long>(),
                         scratch.get(), &scratch_bytes, nullptr),
          "CSR scan");
    unsigned long long r[2] = {1, 0};
    check(cudaMemcpy(r, out.get(), sizeof r, cudaMemcpyDeviceToHost), "CSR scan");
    return device_csr_scan{r[0] == 0, std::int64_t(r[1])};
  }
  device_zcsr_scan scan_device_zcsr(const device_csr& a, bool hermitian) const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    device_buffer out(5 * sizeof(unsigned long long));
    check(cuda::scan_zcsr(a.n, a.nnz, a.row_ptr, a.col, a.val, hermitian,
                          out.as<unsigned long long>(), nullptr),
          "complex CSR scan");
    unsigned long long r[5] = {1, 0, 0, 0, 0};
    check(cudaMemcpy(r, out.get(), sizeof r, cudaMemcpyDeviceToHost), "complex CSR scan");
    return device_zcsr_scan{(r[0] & 1) == 0,
                            hermitian && r[0] == 0 && r[1] == r[2] && r[3] == std::uint64_t(a.n),
                            std::int64_t(r[4])};
  }
  std::int64_t device_block_count(const device_csr& a, int b) const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    device_buffer ptr(sizeof(std::int64_t) * (std::size_t(a.n + b - 1) / b + 1));
    return cuda_system::bcrs_offsets(a, b, ptr.as<std::int64_t>(), nullptr);
  }
  std::unique_ptr<device_csr_copy> upload_csr(const csr_view& raw, bool values_only) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    struct copy final : device_csr_copy {
      device_buffer rp, col, val;
    };
    auto c = std::make_unique<copy>();
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    try {
      if (!values_only) {
        c->rp = upload(*stage_, raw.row_ptr.data(), raw.row_ptr.size(), s);
        c->col = upload(*stage_, raw.col.data(), raw.col.size(), s);
      }
      c->val = upload(*stage_, raw.val.data(), raw.val.size(), s);
      check(cudaStreamSynchronize(s), "matrix upload");
    } catch (...) {
      cudaStreamSynchronize(s);
      cudaStreamDestroy(s);
      throw;
    }
    cudaStreamDestroy(s);
    c->view = device_csr{raw.n, raw.nnz(), c->rp.as<std::int64_t>(), c->col.as<std::int32_t>(),
                         c->val.as<double>()};
    return c;
  }
  std::unique_ptr<device_csr_copy> permute_device_csr(const device_csr& a,
                                                      std::span<const std::int32_t> perm) override {
    if (perm.size() != std::size_t(a.n))
      throw error(CNC_ERR_INVALID_VALUE, ": permutation of the wrong length");
    if (a.nnz > cuda::permute_max_entries())
      throw error(CNC_ERR_UNSUPPORTED,
                  ": P A Pᵀ on the device: " + std::to_string(a.nnz) +
                      " entries, more than this CUB's segmented sort counts (" +
                      std::to_string(cuda::permute_max_entries()) + ")");
    check(cudaSetDevice(dev_), "cudaSetDevice");
    struct copy final : device_csr_copy {
      device_buffer rp, col[2], val[2];
    };
    auto c = std::make_unique<copy>();
    const std::size_t n = perm.size(), nnz = std::size_t(a.nnz);
    device_buffer p(n * sizeof(std::int32_t)), inv(n * sizeof(std::int32_t));
    c->rp = device_buffer((n + 1) * sizeof(std::int64_t));
    for (int i = 0; i < 2; ++i) {
      c->col[i] = device_buffer(nnz * sizeof(std::int32_t));
      c->val[i] = device_buffer(nnz * sizeof(double));
    }
    std::int32_t* const cols[2] = {c->col[0].as<std::int32_t>(), c->col[1].as<std::int32_t>()};
    double* const vals[2] = {c->val[0].as<double>(), c->val[1].as<double>()};
    std::size_t scratch_bytes = 0;
    int result = 0;
    auto run = [&](void* scratch) {
      return cuda::permute_csr(a.n, a.nnz, a.row_ptr, a.col, a.val, p.as<std::int32_t>(),
                               inv.as<std::int32_t>(), c->rp.as<std::int64_t>(), cols, vals,
                               &result, scratch, &scratch_bytes, nullptr);
    };
    check(run(nullptr), "P A P^T on the device");
    device_buffer scratch(std::max<std::size_t>(scratch_bytes, 1));
    check(cudaMemcpy(p.get(), perm.data(), n * sizeof(std::int32_t), cudaMemcpyHostToDevice),
          "permutation upload");
    check(run(scratch.get()), "P A P^T on the device");
    check(cudaStreamSynchronize(nullptr), "P A P^T on the device");
    c->col[1 - result] = device_buffer();  // the sort's other pair
    c->val[1 - result] = device_buffer();
    c->view = device_csr{a.n, a.nnz, c->rp.as<std::int64_t>(), c->col[result].as<std::int32_t>(),
                         c->val[result].as<double>()};
    return c;
  }
  device_ordering rcm_device(const device_csr& a) override {
    constexpr int max_row = device_rcm_max_row, max_components = device_rcm_max_components;
    check(cudaSetDevice(dev_), "cudaSetDevice");
    const int grid = cooperative_ ? cuda::rcm_grid(sm_count_) : 0;
    if (grid == 0) throw error(CNC_ERR_UNSUPPORTED, ": this CUDA device has no cooperative launch");
    device_ordering out;
    out.perm.resize(std::size_t(a.n));
    if (a.n == 0) return out;
    device_buffer perm(std::size_t(a.n) * sizeof(std::int32_t));
    device_buffer work(cuda::rcm_work_bytes(a.n, grid));
    cuda::rcm_result r;
    check(cuda::rcm_order(a.n, a.row_ptr, a.col, perm.as<std::int32_t>(), work.get(), grid,
                          max_components, max_row, &r, nullptr),
          "reverse Cuthill-McKee on the device");
    if (r.max_row > 0)
      throw error(CNC_ERR_UNSUPPORTED, ": a row of " + std::to_string(r.max_row) +
                                           " entries (the device orders rows of up to " +
                                           std::to_string(max_row) + ")");
    stage_->copy_to_host(out.perm.data(), perm.get(), out.perm.size() * sizeof(std::int32_t),
                         nullptr);
    out.placed = r.placed;
    out.cursor = r.cursor;
    out.components = r.components;
    return out;
  }
  std::unique_ptr<device_system> create_system_from_device(const device_csr& a, format f,
                                                           bool jacobi, int nrhs, bool keep_pattern,
                                                           device_build& info) override {
    return std::make_unique<cuda_system>(dev_, sm_count_, cooperative_, *stage_, a, f, jacobi, nrhs,
                                         keep_pattern, info);
  }

 private:
  int dev_;
  std::string name_;
  int sm_count_;
  bool cooperative_;
  lease<int, stager> stage_{dev_, [] { return new stager; }};  // declared after dev_
};

}  // namespace

std::vector<std::string> list_cuda_devices(std::string& why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    why = "no usable CUDA driver or device (" + cuda_message(e) + ")";
    return {};
  }
  std::vector<std::string> out;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    std::memset(&prop, 0, sizeof prop);
    e = cudaGetDeviceProperties(&prop, d);
    if (e != cudaSuccess) {
      cudaGetLastError();
      out.push_back("CUDA device " + std::to_string(d) + " (unusable: " + cuda_message(e) + ")");
      continue;
    }
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f GiB",
                  double(prop.totalGlobalMem) / double(1ull << 30));
    out.push_back(std::string(prop.name) + ", compute capability " + std::to_string(prop.major) +
                  "." + std::to_string(prop.minor) + ", " + memory +
                  (prop.major * 10 + prop.minor < 75 ? " (below 7.5: cnc cannot run on it)" : ""));
  }
  if (out.empty()) why = "the CUDA driver reports no device";
  return out;
}

std::unique_ptr<backend> make_cuda_backend(const backend_options& o, std::string& why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    why = "no usable CUDA driver or device (" + cuda_message(e) + ")";
    return nullptr;
  }
  if (count <= 0) {
    why = "the CUDA driver reports no device";
    return nullptr;
  }
  int dev = o.device_index;
  if (dev < 0) dev = env_int(env::var::cuda_device, 0);
  if (dev < 0) dev = 0;
  if (dev >= count) {
    why = "CUDA device index " + std::to_string(dev) + " out of range (" + std::to_string(count) +
          " device(s))";
    return nullptr;
  }
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof prop);
  e = cudaGetDeviceProperties(&prop, dev);
  if (e == cudaSuccess) e = cudaSetDevice(dev);
  if (e == cudaSuccess) e = cudaFree(nullptr);  // creates the context now, not mid-solve
  if (e != cudaSuccess) {
    cudaGetLastError();
    why = "CUDA device " + std::to_string(dev) + " unusable (" + cuda_message(e) + ")";
    return nullptr;
  }
  if (prop.major * 10 + prop.minor < 75) {
    why = std::string("CUDA device ") + prop.name + " has compute capability " +
          std::to_string(prop.major) + "." + std::to_string(prop.minor) +
          "; cnc's kernels need 7.5 or newer";
    return nullptr;
  }
  // The kernels must load on this device (PTX newer than the driver fails here).
  if (cuda::vector_max_grid(prop.multiProcessorCount) <= 0) {
    const cudaError_t k = cudaGetLastError();
    why = std::string("cnc's CUDA kernels cannot run on ") + prop.name + " (" +
          cuda_message(k == cudaSuccess ? cudaErrorInvalidDeviceFunction : k) + ")";
    return nullptr;
  }
  if (o.log) {
    o.log(CNC_LOG_INFO, std::string("CUDA device ") + std::to_string(dev) + ": " + prop.name +
                            " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                            ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
                            std::to_string(prop.totalGlobalMem >> 20) + " MiB)");
  }
  return std::make_unique<cuda_backend>(dev, prop);
}

}  // namespace cnc
