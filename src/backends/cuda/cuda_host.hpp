// Host-side helpers shared by the CUDA backend (cuda_backend.cpp) and its device_system
// (cuda_system.cpp, cuda_surface.cpp): error translation, owning device and pinned buffers, and
// the pinned staging of large pageable copies.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <utility>

#include "cnc.h"
#include "util/environment.hpp"
#include "util/error.hpp"
#include "util/fault.hpp"
#include "util/memory.hpp"

namespace cnc::cuda_host {

inline std::string cuda_message(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Throws the cnc::error that matches a CUDA failure (out of memory or a device/driver error).
inline void check(cudaError_t e, const char* what) {
  const bool injected = e == cudaSuccess && fault::fire(fault::point::device_call);
  if (e == cudaSuccess && !injected) return;
  if (injected) e = cudaErrorLaunchFailure;
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  const int code = e == cudaErrorMemoryAllocation ? CNC_ERR_OUT_OF_MEMORY : CNC_ERR_DEVICE;
  throw error(code, std::string("CUDA backend: ") + what + " failed: " + cuda_message(e) +
                        (injected ? fault::note : ""));
}

// Owning device allocation.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const bool injected = fault::fire(fault::point::device_alloc);
    const cudaError_t e = injected ? cudaErrorMemoryAllocation : cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
      ptr_ = nullptr;
      cudaGetLastError();
      const int code = e == cudaErrorMemoryAllocation ? CNC_ERR_OUT_OF_MEMORY : CNC_ERR_DEVICE;
      std::size_t free = 0, total = 0;  // what the device has, for the message
      const bool known = cudaMemGetInfo(&free, &total) == cudaSuccess;
      cudaGetLastError();
      throw error(code, "CUDA backend: cannot allocate " + std::to_string(bytes) +
                            " bytes of device memory" +
                            (known ? " (" + memory::format_bytes(double(free)) + " free of " +
                                         memory::format_bytes(double(total)) + ")"
                                   : std::string()) +
                            ": " + cuda_message(e) + (injected ? fault::note : ""));
    }
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& o) noexcept { *this = std::move(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~device_buffer() {
    if (ptr_) cudaFree(ptr_);
  }
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Owning pinned host allocation; empty (as() == nullptr) when pinning failed. `mapped`: also
// mapped into the device's address space (device<T>() == nullptr when that failed): kernels
// write it directly, and the host reads it after synchronizing, with no copy in between.
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t bytes, bool mapped = false) {
    if (!bytes) return;
    if (cudaHostAlloc(&ptr_, bytes, mapped ? cudaHostAllocMapped : cudaHostAllocDefault) !=
        cudaSuccess) {
      cudaGetLastError();
      ptr_ = nullptr;
      return;
    }
    bytes_ = bytes;
    if (mapped && cudaHostGetDevicePointer(&dev_, ptr_, 0) != cudaSuccess) {
      cudaGetLastError();
      dev_ = nullptr;
    }
  }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  pinned_buffer(pinned_buffer&& o) noexcept { *this = std::move(o); }
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(dev_, o.dev_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~pinned_buffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  template <class T>
  T* device() const {
    return static_cast<T*>(dev_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  void* dev_ = nullptr;
  std::size_t bytes_ = 0;
};

// Copies between large pageable host arrays (the caller's CSR, b, x) and the device go through
// two pinned staging buffers: every core copies one chunk between pageable and pinned memory
// while the DMA engine moves the other, instead of the driver's single-threaded staging of
// pageable memory. A backend (a context) leases one from its device's pool (util/lease.hpp), so a
// process pins its staging memory once, not once per context (a context per call, as cnc.solve
// in Python makes, paid ~0.1 s); its buffers are made at the first large copy, grown to the
// largest chunk used, and kept. (Defined in cuda_backend.cpp.)
class stager {
 public:
  static constexpr std::size_t max_chunk = std::size_t(64) << 20, min_chunk = std::size_t(1) << 20;
  stager() = default;
  stager(const stager&) = delete;
  stager& operator=(const stager&) = delete;
  ~stager();
  // Host -> device, queued on s (the host array may be reused when this returns).
  void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t s);
  // Device -> host after the work queued on s; complete when this returns.
  void copy_to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t s);

 private:
  static std::size_t chunk_for(std::size_t bytes);
  static void host_copy(void* to, const void* from, std::size_t len);
  bool ready(std::size_t chunk);
  void* pinned_[2] = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  std::size_t capacity_ = 0;
  bool failed_ = false;
};

// Whether p is ordinary (pageable) host memory, which the stager moves faster than the driver.
bool pageable(const void* p);

template <class T>
device_buffer upload(stager& st, const T* host, std::size_t count, cudaStream_t s) {
  device_buffer b(count * sizeof(T));
  if (count) st.copy(b.get(), host, count * sizeof(T), s);
  return b;
}

// An integer setting from the environment (util/environment.hpp), `fallback` when unset or out
// of [-1, 2^30].
inline int env_int(env::var v, int fallback) {
  const long long x = env::integer(v, fallback);
  return x < -1 || x > 1 << 30 ? fallback : static_cast<int>(x);
}

}  // namespace cnc::cuda_host
