// CUDA backend: a device-resident Jacobi-PCG whose scalars never leave the GPU between checks.
//
// The matrix is uploaded once (values in double, or float for single/mixed) and kept. The k
// right-hand sides are split into groups of at most 8; a group stores its vectors interleaved
// (cuda_kernels.hpp) so that one matrix pass serves the whole group. Each step of backend.hpp is
// one kernel per group; iterate(count) records `count` iterations into a CUDA graph once and
// replays it, so a small system pays one graph launch per check instead of 3 launches and a
// host synchronization per iteration. Smaller still (a SELL matrix in one group, at most
// persistent_rows rows x systems): iterate(count) is ONE cooperative launch running the count
// iterations with two grid barriers per iteration (cuda_pcg_persistent.cu), since there the
// kernel boundaries, not the bytes, set the time. Only read_state, get_x and apply synchronize.
//
// The runtime is linked statically: without a driver, cudaGetDeviceCount fails and the factory
// returns nullptr with the runtime's explanation; libcnc.so itself never needs libcuda.
#include "backends/cuda/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "cnc.h"
#include "util/error.hpp"
#include "util/lease.hpp"
#include "util/parallel.hpp"

namespace cnc {
namespace {

std::string cuda_message(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Throws the cnc::error that matches a CUDA failure (out of memory or a device/driver error).
void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  const int code = e == cudaErrorMemoryAllocation ? CNC_ERR_OUT_OF_MEMORY : CNC_ERR_DEVICE;
  throw error(code, std::string("CUDA backend: ") + what + " failed: " + cuda_message(e));
}

// Owning device allocation.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
      ptr_ = nullptr;
      cudaGetLastError();
      const int code = e == cudaErrorMemoryAllocation ? CNC_ERR_OUT_OF_MEMORY : CNC_ERR_DEVICE;
      throw error(code, "CUDA backend: cannot allocate " + std::to_string(bytes) +
                            " bytes of device memory: " + cuda_message(e));
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

// Copies between large pageable host arrays (the caller's CSR, b, x) and the device go through
// two pinned staging buffers: every core copies one chunk between pageable and pinned memory
// while the DMA engine moves the other, instead of the driver's single-threaded staging of
// pageable memory. A backend (a context) leases one from its device's pool (util/lease.hpp), so a
// process pins its staging memory once, not once per context (a context per call, as cnc.solve
// in Python makes, paid ~0.1 s); its buffers are made at the first large copy, grown to the
// largest chunk used, and kept.
class stager {
 public:
  static constexpr std::size_t max_chunk = std::size_t(64) << 20, min_chunk = std::size_t(1) << 20;
  stager() = default;
  stager(const stager&) = delete;
  stager& operator=(const stager&) = delete;
  ~stager() {
    for (int i = 0; i < 2; ++i) {
      if (done_[i]) cudaEventSynchronize(done_[i]), cudaEventDestroy(done_[i]);
      if (pinned_[i]) cudaFreeHost(pinned_[i]);
    }
  }
  // Host -> device, queued on s (the host array may be reused when this returns).
  void copy(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
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
      check(cudaMemcpyAsync(static_cast<char*>(dst) + off, pinned_[b], len, cudaMemcpyHostToDevice,
                            s),
            "upload");
      check(cudaEventRecord(done_[b], s), "staging");
    }
  }
  // Device -> host after the work queued on s; complete when this returns.
  void copy_to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
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
      host_copy(static_cast<char*>(dst) + i * chunk, pinned_[b],
                std::min(chunk, bytes - i * chunk));
    }
  }

 private:
  // A quarter of the array, between 1 and 64 MiB: enough chunks to overlap both sides.
  static std::size_t chunk_for(std::size_t bytes) {
    return std::clamp((bytes / 4 + min_chunk - 1) / min_chunk * min_chunk, min_chunk, max_chunk);
  }
  static void host_copy(void* to, const void* from, std::size_t len) {
    parallel_pieces(std::int64_t(len), std::int64_t(1) << 18, host_threads(),
                    [&](std::int64_t, std::int64_t a, std::int64_t e) {
                      std::memcpy(static_cast<char*>(to) + a, static_cast<const char*>(from) + a,
                                  std::size_t(e - a));
                    });
  }
  // Pinned buffers of at least `chunk` bytes and their events, made or grown on use (pinning
  // costs about 1 ms per MiB: no more than the copies need); false (plain copies) if it fails.
  bool ready(std::size_t chunk) {
    if (failed_) return false;
    if (capacity_ >= chunk) return true;
    for (int i = 0; i < 2; ++i) {
      if (done_[i]) check(cudaEventSynchronize(done_[i]), "staging");
      if (pinned_[i]) cudaFreeHost(pinned_[i]), pinned_[i] = nullptr;
    }
    capacity_ = 0;
    for (int i = 0; i < 2; ++i)
      if (cudaHostAlloc(&pinned_[i], chunk, cudaHostAllocDefault) != cudaSuccess ||
          (!done_[i] &&
           cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming) != cudaSuccess)) {
        cudaGetLastError();
        failed_ = true;
        return false;
      }
    capacity_ = chunk;
    return true;
  }
  void* pinned_[2] = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  std::size_t capacity_ = 0;
  bool failed_ = false;
};

// Whether p is ordinary (pageable) host memory, which the stager moves faster than the driver.
bool pageable(const void* p) {
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return at.type == cudaMemoryTypeUnregistered;
}

template <class T>
device_buffer upload(stager& st, const T* host, std::size_t count, cudaStream_t s) {
  device_buffer b(count * sizeof(T));
  if (count) st.copy(b.get(), host, count * sizeof(T), s);
  return b;
}

// Matrix values in the device's precision (double, or float for single and mixed).
device_buffer upload_values(stager& st, std::span<const double> v, bool as_float, cudaStream_t s) {
  if (!as_float) return upload(st, v.data(), v.size(), s);
  std::vector<float> f(v.begin(), v.end());
  device_buffer b = upload(st, f.data(), f.size(), s);
  check(cudaStreamSynchronize(s), "matrix upload");  // `f` dies here
  return b;
}

// Lanes per (block) row: the smallest power of two whose lanes, each loading `unroll` strided
// entries (or blocks) at once, cover the average row in one trip: more rows per warp and every
// load of a row in flight together. At least one lane per block element.
int choose_width(int b, double avg_per_row, int unroll) {
  const int bb = b * b;
  int w = bb == 1 ? 2 : bb;
  while (w < 32 && double(unroll) * (w / bb) < avg_per_row) w *= 2;
  return w;
}

bool valid_width(int b, int w) {
  if (w < 2 || w > 32 || (w & (w - 1)) != 0) return false;
  return b == 1 || w % (b * b) == 0;
}

int env_int(const char* name, int fallback) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < -1 || v > 1 << 30) return fallback;
  return static_cast<int>(v);
}

constexpr int max_group = 8;  // systems per matrix pass
// Rows x systems up to which iterate() uses the persistent kernel (CNC_CUDA_PERSISTENT_ROWS
// overrides; 0 turns it off). Above, the kernels stream from HBM and kernel boundaries cost a
// small share; measured on the H200 in bench/results/cuda.md.
constexpr int persistent_rows = 1 << 19;
constexpr int max_graph_iters = 32;  // iterations recorded into one graph

cuda::cprec to_cprec(precision p) {
  switch (p) {
    case precision::f64:
      return cuda::cprec::f64;
    case precision::f32:
      return cuda::cprec::f32;
    case precision::mixed:
      return cuda::cprec::mixed;
  }
  return cuda::cprec::f64;
}

struct group {
  int j0 = 0;  // first system
  device_buffer x, r, p, q, b, partials, counter;
  cuda::group_view view;
  int spmv_grid = 0;
  int width = 0;  // SpMV lanes per (block) row
};

class cuda_system final : public device_system, public cuda::system_probe {
 public:
  cuda_system(int dev, int sm_count, bool cooperative, stager& st, const host_matrix& a,
              std::span<const double> d, precision p, int nrhs)
      : stager_(&st), dev_(dev), pr_(to_cprec(p)), nrhs_(nrhs) {
    if (nrhs < 1) throw error(CNC_ERR_INVALID_VALUE, "CUDA backend: nrhs must be >= 1");
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    n_real_ = a.csr.n;
    n_ = a.n_padded();
    if (static_cast<std::int64_t>(d.size()) < n_)
      throw error(CNC_ERR_SIZE_MISMATCH, "CUDA backend: inverse diagonal shorter than n_padded");
    const bool f32_values = pr_ != cuda::cprec::f64;
    vsize_ = pr_ == cuda::cprec::f32 ? sizeof(float) : sizeof(double);

    double avg = 0.0;
    if (a.fmt == format::csr) {
      const csr_view m = a.csr;
      mat_.b = 1;
      mat_.rows = m.n;
      row_ptr_ = upload(*stager_, m.row_ptr.data(), m.row_ptr.size(), stream_);
      col_ = upload(*stager_, m.col.data(), m.col.size(), stream_);
      val_ = upload_values(*stager_, m.val, f32_values, stream_);
      avg = m.n ? static_cast<double>(m.nnz()) / m.n : 0.0;
    } else if (a.fmt == format::sell && !a.sell) {
      build_sell(a.csr, f32_values);
    } else if (a.fmt == format::sell) {
      static_assert(cuda::sell_rows == sell_slice, "one SELL slice height");
      const sell_matrix& m = *a.sell;
      mat_.b = cuda::sell_rows;
      mat_.rows = m.n_slices;
      row_ptr_ = upload(*stager_, m.slice_ptr.data(), m.slice_ptr.size(), stream_);
      col_ = upload(*stager_, m.col.data(), m.col.size(), stream_);
      val_ = upload_values(*stager_, m.val, f32_values, stream_);
    } else {
      const bcrs_matrix& m = *a.bcrs;
      mat_.b = m.b;
      mat_.rows = m.n_block_rows;
      row_ptr_ = upload(*stager_, m.row_ptr.data(), m.row_ptr.size(), stream_);
      col_ = upload(*stager_, m.col.data(), m.col.size(), stream_);
      val_ = upload_values(*stager_, m.val, f32_values, stream_);
      avg = m.n_block_rows ? static_cast<double>(m.n_blocks()) / m.n_block_rows : 0.0;
    }
    mat_.row_ptr = row_ptr_.as<std::int64_t>();
    mat_.col = col_.as<std::int32_t>();
    mat_.val = val_.get();
    avg_per_row_ = avg;

    if (pr_ == cuda::cprec::f32) {
      std::vector<float> df(d.begin(), d.begin() + n_);
      d_ = upload(*stager_, df.data(), df.size(), stream_);
      check(cudaStreamSynchronize(stream_), "upload");
    } else {
      d_ = upload(*stager_, d.data(), static_cast<std::size_t>(n_), stream_);
    }
    setup_groups(sm_count, cooperative);
  }

  // From a canonical CSR in device memory (the caller's arrays), double precision: CSR is
  // copied device to device, SELL built from it, the inverse diagonal computed here.
  cuda_system(int dev, int sm_count, bool cooperative, stager& st, const device_csr& a, format f,
              bool jacobi, int nrhs, device_build& info)
      : stager_(&st), dev_(dev), pr_(cuda::cprec::f64), nrhs_(nrhs) {
    if (nrhs < 1) throw error(CNC_ERR_INVALID_VALUE, "CUDA backend: nrhs must be >= 1");
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    n_real_ = a.n;
    n_ = padded_rows(a.n, f);
    if (f == format::sell) {
      info.stored = build_sell(a.row_ptr, a.col, a.val, a.n, false);
    } else if (f == format::csr) {
      mat_.b = 1;
      mat_.rows = a.n;
      row_ptr_ = device_buffer(sizeof(std::int64_t) * (std::size_t(a.n) + 1));
      col_ = device_buffer(sizeof(std::int32_t) * std::size_t(a.nnz));
      val_ = device_buffer(sizeof(double) * std::size_t(a.nnz));
      check(cudaMemcpyAsync(row_ptr_.get(), a.row_ptr, row_ptr_.bytes(), cudaMemcpyDeviceToDevice,
                            stream_),
            "matrix copy");
      if (a.nnz) {
        check(cudaMemcpyAsync(col_.get(), a.col, col_.bytes(), cudaMemcpyDeviceToDevice, stream_),
              "matrix copy");
        check(cudaMemcpyAsync(val_.get(), a.val, val_.bytes(), cudaMemcpyDeviceToDevice, stream_),
              "matrix copy");
      }
      avg_per_row_ = a.n ? double(a.nnz) / a.n : 0.0;
    } else {  // BCRS 2x2 / 4x4
      const int b = block_size(f);
      mat_.b = b;
      mat_.rows = n_ / b;
      row_ptr_ = device_buffer(sizeof(std::int64_t) * (std::size_t(mat_.rows) + 1));
      const std::int64_t blocks = bcrs_offsets(a, b, row_ptr_.as<std::int64_t>(), stream_);
      col_ = device_buffer(sizeof(std::int32_t) * std::size_t(blocks));
      val_ = device_buffer(sizeof(double) * std::size_t(blocks) * b * b);
      check(cuda::bcrs_fill(b, a.n, a.row_ptr, a.col, a.val, row_ptr_.as<std::int64_t>(),
                            col_.as<std::int32_t>(), val_.as<double>(), stream_),
            "BCRS fill");
      avg_per_row_ = mat_.rows ? double(blocks) / mat_.rows : 0.0;
      info.stored = blocks;
    }
    mat_.row_ptr = row_ptr_.as<std::int64_t>();
    mat_.col = col_.as<std::int32_t>();
    mat_.val = val_.get();
    d_ = device_buffer(sizeof(double) * std::size_t(n_));
    device_buffer zeros(sizeof(unsigned long long));
    check(cuda::inverse_diagonal(a.n, n_, a.row_ptr, a.col, a.val, jacobi, d_.as<double>(),
                                 zeros.as<unsigned long long>(), stream_),
          "inverse diagonal");
    unsigned long long z = 0;
    check(cudaMemcpyAsync(&z, zeros.get(), sizeof z, cudaMemcpyDeviceToHost, stream_),
          "inverse diagonal");
    setup_groups(sm_count, cooperative);  // synchronizes
    info.zero_diagonals = std::int64_t(z);
  }

 private:
  // Work vectors, groups, launch configuration; the matrix and d_ are on the device already.
  void setup_groups(int sm_count, bool cooperative) {
    state_ = device_buffer(sizeof(rhs_state) * nrhs_);
    staging_ = device_buffer(sizeof(double) * static_cast<std::size_t>(n_) * nrhs_);

    const int vec_max = cuda::vector_max_grid(sm_count);
    if (vec_max <= 0) check(cudaGetLastError(), "kernel occupancy query");
    for (int j0 = 0; j0 < nrhs_; j0 += max_group) {
      group g;
      g.j0 = j0;
      const int k = std::min(max_group, nrhs_ - j0);
      int kc = 1;
      while (kc < k) kc *= 2;
      const std::size_t elems = static_cast<std::size_t>(n_) * kc;
      for (device_buffer* v : {&g.x, &g.r, &g.p, &g.q, &g.b}) {
        *v = device_buffer(elems * vsize_);
        if (elems) check(cudaMemsetAsync(v->get(), 0, elems * vsize_, stream_), "cudaMemset");
      }
      // (at least 2 chunks' worth of lanes: with one chunk per lane the rows get too many lanes)
      if (mat_.b == cuda::sell_rows) {
        g.width = cuda::sell_rows;  // one warp per slice, a lane per row
      } else {
        g.width = choose_width(mat_.b, avg_per_row_,
                               std::max(2, cuda::spmv_unroll(kc, pr_ == cuda::cprec::f64 ? 8 : 4)));
        const int forced = env_int("CNC_CUDA_SPMV_WIDTH", 0);  // tuning and tests
        if (forced && valid_width(mat_.b, forced)) g.width = forced;
      }
      const long long rows_per_block = cuda::block_threads / g.width;
      int smax = cuda::spmv_max_grid(pr_, mat_.b, g.width, kc, sm_count);
      if (smax <= 0) check(cudaGetLastError(), "kernel occupancy query");
      smax = std::max(smax, 1);
      g.spmv_grid = static_cast<int>(
          std::clamp<long long>((mat_.rows + rows_per_block - 1) / rows_per_block, 1, smax));
      const int vgrid = static_cast<int>(std::clamp<long long>(
          (static_cast<long long>(elems) + cuda::block_threads - 1) / cuda::block_threads, 1,
          std::max(vec_max, 1)));
      g.partials = device_buffer(sizeof(double) * 2 * kc * std::max(vgrid, g.spmv_grid));
      g.counter = device_buffer(sizeof(unsigned int));
      check(cudaMemsetAsync(g.counter.get(), 0, sizeof(unsigned int), stream_), "cudaMemset");
      cuda::group_view& v = g.view;
      v.kc = kc;
      v.k = k;
      v.n = n_;
      v.x = g.x.get();
      v.r = g.r.get();
      v.p = g.p.get();
      v.q = g.q.get();
      v.b = g.b.get();
      v.d = d_.get();
      v.state = state_.as<rhs_state>() + j0;
      v.partials = g.partials.as<double>();
      v.counter = g.counter.as<unsigned int>();
      v.grid = vgrid;
      groups_.push_back(std::move(g));
    }
    // The persistent kernel: one group, SELL, small enough that launches dominate.
    const long long limit = env_int("CNC_CUDA_PERSISTENT_ROWS", persistent_rows);
    if (cooperative && mat_.b == cuda::sell_rows && groups_.size() == 1 && n_ > 0 &&
        static_cast<long long>(n_) * groups_[0].view.kc <= limit) {
      const int kc = groups_[0].view.kc;
      int most = cuda::pcg_persistent_max_grid(pr_, kc, sm_count);
      if (most <= 0) check(cudaGetLastError(), "kernel occupancy query");
      const int per_sm = env_int("CNC_CUDA_PERSISTENT_BLOCKS_PER_SM", 0);  // tuning
      if (per_sm > 0) most = std::min(most, per_sm * sm_count);
      const long long slices_per_block = cuda::block_threads / 32;
      persistent_grid_ = static_cast<int>(std::clamp<long long>(
          (mat_.rows + slices_per_block - 1) / slices_per_block, 1, std::max(most, 1)));
      persistent_partials_ = device_buffer(sizeof(double) * 3 * kc * persistent_grid_);
      persistent_p_ = device_buffer(groups_[0].p.bytes());
      // The single-step kernels use the same grid: the same rows per block and the same partial
      // sums in the same order, so iterate(n) equals n single steps bit for bit (backend.hpp).
      groups_[0].spmv_grid = persistent_grid_;
      groups_[0].view.grid = persistent_grid_;
    }
    check(cudaStreamSynchronize(stream_), "upload");
  }

 public:
  ~cuda_system() override {
    cudaSetDevice(dev_);
    for (auto& [count, exec] : graphs_) cudaGraphExecDestroy(exec);
    if (stream_) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }

  void set_vectors(const double* b, const double* x) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    scatter_all(b, [](group& g) { return g.b.get(); });
    if (x) {
      scatter_all(x, [](group& g) { return g.x.get(); });
    } else {
      for (group& g : groups_)
        check(cudaMemsetAsync(g.x.get(), 0, g.x.bytes(), stream_), "cudaMemset");
    }
    check(cudaStreamSynchronize(stream_), "set_vectors");
  }

  void init(const double* thr2) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    std::vector<rhs_state> st(nrhs_);
    for (int j = 0; j < nrhs_; ++j) st[j] = rhs_state{0, 0, 0, 0, thr2[j], running, 0};
    check(cudaMemcpyAsync(state_.get(), st.data(), sizeof(rhs_state) * nrhs_,
                          cudaMemcpyHostToDevice, stream_),
          "state upload");
    for (group& g : groups_) {
      check(cuda::spmv(pr_, matrix_for(g), g.view, false, g.x.get(), g.q.get(), stream_),
            "SpMV launch");
      check(cuda::init_vectors(pr_, g.view, stream_), "init launch");
    }
    check(cudaStreamSynchronize(stream_), "init");  // `st` must outlive the copy
  }

  void spmv_dot() override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(launch_spmv_dot(), "SpMV launch");
  }
  void update_xr() override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(launch_update_xr(), "update_xr launch");
  }
  void update_p() override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(launch_update_p(), "update_p launch");
  }

  void iterate(int count) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    if (persistent_grid_ > 0) {
      const group& g = groups_[0];
      check(
          cuda::pcg_persistent(pr_, matrix_for(g), g.view, persistent_p_.get(),
                               persistent_partials_.as<double>(), persistent_grid_, count, stream_),
          "persistent PCG launch");
      return;
    }
    while (count > 0) {
      const int c = std::min(count, max_graph_iters);
      check(cudaGraphLaunch(graph_for(c), stream_), "cudaGraphLaunch");
      count -= c;
    }
  }

  void read_state(rhs_state* out) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    check(cudaMemcpyAsync(out, state_.get(), sizeof(rhs_state) * nrhs_, cudaMemcpyDeviceToHost,
                          stream_),
          "state read-back");
    check(cudaStreamSynchronize(stream_), "iterations");
  }

  void get_x(double* x) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    gather_all(
        n_real_, [](group& g) { return g.x.get(); }, x, n_real_);
  }

  void apply(const double* x, double* y) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    scatter_all(x, [](group& g) { return g.p.get(); });
    for (group& g : groups_)
      check(cuda::spmv(pr_, matrix_for(g), g.view, false, g.p.get(), g.q.get(), stream_),
            "SpMV launch");
    gather_all(
        n_real_, [](group& g) { return g.q.get(); }, y, n_real_);
  }

  // --- probe ------------------------------------------------------------------------------------
  void read_vector(cuda::vec_id v, double* out) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    gather_all(
        n_,
        [v](group& g) -> void* {
          switch (v) {
            case cuda::vec_id::x:
              return g.x.get();
            case cuda::vec_id::r:
              return g.r.get();
            case cuda::vec_id::p:
              return g.p.get();
            case cuda::vec_id::q:
              return g.q.get();
            case cuda::vec_id::b:
              return g.b.get();
          }
          return nullptr;
        },
        out, n_);
  }

  std::string config() const override {
    std::string s = mat_.b == 1                 ? std::string("csr")
                    : mat_.b == cuda::sell_rows ? std::string("sell")
                                                : "bcrs" + std::to_string(mat_.b);
    if (persistent_grid_ > 0) s += " persistent_grid=" + std::to_string(persistent_grid_);
    for (const group& g : groups_)
      s += " [kc=" + std::to_string(g.view.kc) + " width=" + std::to_string(g.width) +
           " spmv_grid=" + std::to_string(g.spmv_grid) +
           " vec_grid=" + std::to_string(g.view.grid) + "]";
    return s;
  }

 private:
  // SELL built on the device from the caller's CSR (backend::builds_on_device): the CSR goes up
  // once, the padded layout is written where it is read, and the CSR is freed.
  void build_sell(const csr_view& m, bool f32_values) {
    device_buffer rp = upload(*stager_, m.row_ptr.data(), m.row_ptr.size(), stream_);
    device_buffer col = upload(*stager_, m.col.data(), m.col.size(), stream_);
    device_buffer val = upload_values(*stager_, m.val, f32_values, stream_);
    build_sell(rp.as<std::int64_t>(), col.as<std::int32_t>(), val.get(), m.n, f32_values);
  }
  // The same from a CSR in device memory (values already in the device's precision).
  // Returns the entries stored.
  std::int64_t build_sell(const std::int64_t* rp, const std::int32_t* col, const void* val,
                          std::int32_t n, bool f32_values) {
    mat_.b = cuda::sell_rows;
    mat_.rows = (n + cuda::sell_rows - 1) / cuda::sell_rows;
    row_ptr_ = device_buffer(sizeof(std::int64_t) * (static_cast<std::size_t>(mat_.rows) + 1));
    std::size_t scratch_bytes = 0;
    check(cuda::sell_slice_offsets(n, nullptr, row_ptr_.as<std::int64_t>(), nullptr, &scratch_bytes,
                                   stream_),
          "SELL offsets (size)");
    device_buffer scratch(std::max<std::size_t>(scratch_bytes, 16));
    check(cuda::sell_slice_offsets(n, rp, row_ptr_.as<std::int64_t>(), scratch.get(),
                                   &scratch_bytes, stream_),
          "SELL offsets");
    std::int64_t entries = 0;
    check(cudaMemcpyAsync(&entries, row_ptr_.as<std::int64_t>() + mat_.rows, sizeof entries,
                          cudaMemcpyDeviceToHost, stream_),
          "SELL size read-back");
    check(cudaStreamSynchronize(stream_), "SELL offsets");
    col_ = device_buffer(sizeof(std::int32_t) * static_cast<std::size_t>(entries));
    val_ = device_buffer((f32_values ? sizeof(float) : sizeof(double)) *
                         static_cast<std::size_t>(entries));
    check(cuda::sell_fill(f32_values, n, rp, col, val, row_ptr_.as<std::int64_t>(),
                          col_.as<std::int32_t>(), val_.get(), stream_),
          "SELL fill");
    check(cudaStreamSynchronize(stream_), "SELL fill");  // before the CSR buffers go
    return entries;
  }

 public:
  // BCRS block-row offsets of a device CSR into block_ptr; returns the block count.
  static std::int64_t bcrs_offsets(const device_csr& a, int b, std::int64_t* block_ptr,
                                   cudaStream_t s) {
    std::size_t scratch_bytes = 0;
    check(cuda::bcrs_offsets(b, a.n, a.row_ptr, a.col, block_ptr, nullptr, &scratch_bytes, s),
          "BCRS offsets (size)");
    device_buffer scratch(std::max<std::size_t>(scratch_bytes, 16));
    check(cuda::bcrs_offsets(b, a.n, a.row_ptr, a.col, block_ptr, scratch.get(), &scratch_bytes, s),
          "BCRS offsets");
    std::int64_t blocks = 0;
    check(cudaMemcpyAsync(&blocks, block_ptr + (a.n + b - 1) / b, sizeof blocks,
                          cudaMemcpyDeviceToHost, s),
          "BCRS size read-back");
    check(cudaStreamSynchronize(s), "BCRS offsets");
    return blocks;
  }

 private:
  cuda::matrix_view matrix_for(const group& g) const {
    cuda::matrix_view m = mat_;
    m.grid = g.spmv_grid;
    m.width = g.width;
    return m;
  }

  cudaError_t launch_spmv_dot() {
    for (group& g : groups_) {
      const cudaError_t e = cuda::spmv(pr_, matrix_for(g), g.view, true, nullptr, nullptr, stream_);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  cudaError_t launch_update_xr() {
    for (group& g : groups_) {
      const cudaError_t e = cuda::update_xr(pr_, g.view, stream_);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }
  cudaError_t launch_update_p() {
    for (group& g : groups_) {
      const cudaError_t e = cuda::update_p(pr_, g.view, stream_);
      if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
  }

  // The executable graph of `count` iterations, recorded on first use.
  cudaGraphExec_t graph_for(int count) {
    auto it = graphs_.find(count);
    if (it != graphs_.end()) return it->second;
    check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "graph capture");
    cudaError_t e = cudaSuccess;
    for (int c = 0; c < count && e == cudaSuccess; ++c) {
      e = launch_spmv_dot();
      if (e == cudaSuccess) e = launch_update_xr();
      if (e == cudaSuccess) e = launch_update_p();
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
    if (e == cudaSuccess) e = end;
    cudaGraphExec_t exec = nullptr;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    check(e, "graph capture");
    graphs_.emplace(count, exec);
    return exec;
  }

  // Column-major doubles (n_real rows per system; host or device memory: cudaMemcpyDefault) ->
  // the vector `pick(g)` of every group.
  template <class Pick>
  void scatter_all(const double* host, Pick pick) {
    const std::size_t bytes = sizeof(double) * n_real_ * nrhs_;
    if (pageable(host))
      stager_->copy(staging_.get(), host, bytes, stream_);
    else
      check(cudaMemcpyAsync(staging_.get(), host, bytes, cudaMemcpyDefault, stream_),
            "vector upload");
    for (group& g : groups_)
      check(cuda::scatter(pr_, g.view, staging_.as<double>() + std::size_t(g.j0) * n_real_, n_real_,
                          pick(g), stream_),
            "scatter launch");
  }

  // The vector `pick(g)` of every group -> column-major doubles (host or device memory), `rows`
  // rows per system.
  template <class Pick>
  void gather_all(std::int32_t rows, Pick pick, double* host, std::int32_t host_rows) {
    for (group& g : groups_)
      check(cuda::gather(pr_, g.view, pick(g), rows,
                         staging_.as<double>() + std::size_t(g.j0) * rows, stream_),
            "gather launch");
    const std::size_t bytes = sizeof(double) * host_rows * nrhs_;
    if (pageable(host)) {
      stager_->copy_to_host(host, staging_.get(), bytes, stream_);
    } else {
      check(cudaMemcpyAsync(host, staging_.get(), bytes, cudaMemcpyDefault, stream_),
            "vector read-back");
      check(cudaStreamSynchronize(stream_), "vector read-back");
    }
  }

  stager* stager_;  // the backend's
  int dev_;
  cuda::cprec pr_;
  int nrhs_;
  std::int32_t n_real_ = 0;
  std::int32_t n_ = 0;  // padded rows
  std::size_t vsize_ = sizeof(double);
  cudaStream_t stream_ = nullptr;
  device_buffer row_ptr_, col_, val_, d_, state_, staging_;
  cuda::matrix_view mat_;
  double avg_per_row_ = 0;  // entries (CSR) or blocks (BCRS) per (block) row
  std::vector<group> groups_;
  int persistent_grid_ = 0;  // > 0: iterate() runs the persistent kernel on this many blocks
  device_buffer persistent_partials_, persistent_p_;
  std::map<int, cudaGraphExec_t> graphs_;
};

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
  std::int64_t first_not_finite(const double* p, std::int64_t count) const override {
    if (count <= 0) return -1;
    check(cudaSetDevice(dev_), "cudaSetDevice");
    device_buffer out(sizeof(unsigned long long));
    check(cuda::first_not_finite(p, count, out.as<unsigned long long>(),
                                 cuda::vector_max_grid(sm_count_), nullptr),
          "finite check");
    unsigned long long first = 0;
    check(cudaMemcpy(&first, out.get(), sizeof first, cudaMemcpyDeviceToHost), "finite check");
    return first == ~0ull ? -1 : std::int64_t(first);
  }
  device_csr_scan scan_device_csr(const device_csr& a) const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    device_buffer out(2 * sizeof(unsigned long long));
    check(
        cuda::scan_csr(a.n, a.nnz, a.row_ptr, a.col, a.val, out.as<unsigned long long>(), nullptr),
        "CSR scan");
    unsigned long long r[2] = {1, 0};
    check(cudaMemcpy(r, out.get(), sizeof r, cudaMemcpyDeviceToHost), "CSR scan");
    return device_csr_scan{r[0] == 0, std::int64_t(r[1])};
  }
  std::int64_t device_block_count(const device_csr& a, int b) const override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    device_buffer ptr(sizeof(std::int64_t) * (std::size_t(a.n + b - 1) / b + 1));
    return cuda_system::bcrs_offsets(a, b, ptr.as<std::int64_t>(), nullptr);
  }
  std::unique_ptr<device_csr_copy> upload_csr(const csr_view& raw) override {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    struct copy final : device_csr_copy {
      device_buffer rp, col, val;
    };
    auto c = std::make_unique<copy>();
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    try {
      c->rp = upload(*stage_, raw.row_ptr.data(), raw.row_ptr.size(), s);
      c->col = upload(*stage_, raw.col.data(), raw.col.size(), s);
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
  std::unique_ptr<device_system> create_system_from_device(const device_csr& a, format f,
                                                           bool jacobi, int nrhs,
                                                           device_build& info) override {
    return std::make_unique<cuda_system>(dev_, sm_count_, cooperative_, *stage_, a, f, jacobi, nrhs,
                                         info);
  }

 private:
  int dev_;
  std::string name_;
  int sm_count_;
  bool cooperative_;
  lease<int, stager> stage_{dev_, [] { return new stager; }};  // declared after dev_
};

}  // namespace

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
  if (dev < 0) dev = env_int("CNC_CUDA_DEVICE", 0);
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
