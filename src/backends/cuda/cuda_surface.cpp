// The vector surface of the CUDA device_system (backend.hpp): BiCGSTAB and GMRES run on it with
// every vector on the device; the host sees only the scalars dots returns.
//
// Each operation is one launch per group (kernels/cuda/blas1.cu) over the group's interleaved
// vectors, queued on the system's stream; the mask is passed by value as the group's bits (at
// most 8 systems per group), so set_mask uploads nothing, and a group with no active system
// launches nothing. spmv and residual run the SpMV kernels of the PCG steps, which write every
// slot: when the group is fully active (and the output is not an input) they write the output
// directly, else into the group's scratch vector, copied to the output on the active slots only.
// dots runs one fused launch per 8 vectors per group, each reducing deterministically (per-block
// partials summed in block order by the last block) and writing its count * k' doubles straight
// into a small mapped pinned buffer; then ONE stream synchronization (the only one of the surface
// besides read's) and the host reads them. Where mapping is not available the results go to a
// device array and ONE copy brings them back before that synchronization.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_system.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc::cuda_host {

void cuda_system::check_index(int v) const {
  if (v < 0 || v >= vec_first_extra + extra_count_)
    throw error(CNC_ERR_INVALID_VALUE, "CUDA backend: no vector " + std::to_string(v) + " (" +
                                           std::to_string(vec_first_extra + extra_count_) +
                                           " vectors)");
}

void* cuda_system::vec(group& g, int v) {
  switch (v) {
    case vec_x:
      return g.x.get();
    case vec_r:
      return g.r.get();
    case vec_p:
      return g.p.get();
    case vec_q:
      return g.q.get();
    case vec_b:
      return g.b.get();
    default:
      return g.extra[std::size_t(v - vec_first_extra)].get();
  }
}

void* cuda_system::scratch(group& g) {
  if (!g.scratch.get() && g.x.bytes()) {
    g.scratch = device_buffer(g.x.bytes());
    check(cudaMemsetAsync(g.scratch.get(), 0, g.scratch.bytes(), stream_), "cudaMemset");
  }
  return g.scratch.get();
}

// The partials of the widest group's dots launch (8 vectors), its counter, and the results of
// `count` vectors: mapped pinned memory, else a device array and a pinned copy (grown, never
// shrunk; nothing changes when an allocation fails).
void cuda_system::surface_buffers(int count) {
  if (!dot_counter_.get()) {
    std::size_t parts = 0;
    for (const group& g : groups_)
      parts = std::max(parts, std::size_t(2 * cuda::max_fused_dots) * g.view.kc * g.view.grid);
    device_buffer partials(sizeof(double) * std::max<std::size_t>(parts, 1));
    device_buffer counter(sizeof(unsigned int));
    check(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned int), stream_), "cudaMemset");
    dot_partials_ = std::move(partials);
    dot_counter_ = std::move(counter);
    dot_mapped_ = env_int(env::var::cuda_dots_mapped, 1) != 0;  // 0: device array + copy (tests)
  }
  const std::size_t bytes = sizeof(double) * std::size_t(std::max(count, 1)) * nrhs_;
  if (dot_capacity_ >= bytes) return;
  const std::size_t grow = std::max(bytes, 2 * dot_capacity_);
  pinned_buffer host(grow, dot_mapped_);  // empty if pinning fails: dots then copies to `out`
  device_buffer result;
  if (!host.device<double>()) result = device_buffer(grow);
  dot_host_ = std::move(host);
  dot_result_ = std::move(result);
  dot_capacity_ = grow;
}

int cuda_system::add_vectors(int count) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  const int first = vec_first_extra + extra_count_;
  if (count <= 0) return first;
  // Everything is allocated before anything is kept: a failure leaves the system as it was.
  std::vector<std::vector<device_buffer>> made(groups_.size());
  for (std::size_t gi = 0; gi < groups_.size(); ++gi)
    for (int c = 0; c < count; ++c) made[gi].emplace_back(groups_[gi].x.bytes());
  surface_buffers(1);
  for (std::size_t gi = 0; gi < groups_.size(); ++gi)
    for (device_buffer& v : made[gi]) {
      if (v.bytes()) check(cudaMemsetAsync(v.get(), 0, v.bytes(), stream_), "cudaMemset");
      groups_[gi].extra.push_back(std::move(v));
    }
  extra_count_ += count;
  return first;
}

void cuda_system::release_vectors() {
  // cudaFree waits for the work queued on them; a failure there cannot be reported (noexcept).
  for (group& g : groups_) g.extra.clear(), g.scratch = device_buffer{};
  extra_count_ = 0;
}

void cuda_system::set_mask(const std::uint8_t* active) {
  for (group& g : groups_) {
    unsigned int m = 0;
    for (int j = 0; j < g.view.k; ++j)
      if (active[g.j0 + j]) m |= 1u << j;
    g.mask = m;
  }
}

void cuda_system::spmv(int in, int out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(in), check_index(out);
  for (group& g : groups_) {
    if (!g.mask) continue;
    const void* x = vec(g, in);
    void* y = vec(g, out);
    if (full(g) && in != out) {
      check(cuda::spmv(pr_, matrix_for(g), g.view, false, x, y, stream_), "SpMV launch");
    } else {
      void* s = scratch(g);
      check(cuda::spmv(pr_, matrix_for(g), g.view, false, x, s, stream_), "SpMV launch");
      check(cuda::blas_copy(pr_, g.view, g.mask, s, y, stream_), "copy launch");
    }
  }
}

void cuda_system::precondition(int in, int out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(in), check_index(out);
  for (group& g : groups_)
    check(cuda::blas_diag(pr_, g.view, g.mask, vec(g, in), vec(g, out), stream_),
          "precondition launch");
}

void cuda_system::residual(int in, int out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(in), check_index(out);
  for (group& g : groups_) {
    if (!g.mask) continue;
    void* y = vec(g, out);
    // A in straight into the output when that overwrites nothing still needed.
    void* ax = full(g) && out != in && out != vec_b ? y : scratch(g);
    check(cuda::spmv(pr_, matrix_for(g), g.view, false, vec(g, in), ax, stream_), "SpMV launch");
    check(cuda::blas_sub(pr_, g.view, g.mask, g.b.get(), ax, y, stream_), "residual launch");
  }
}

void cuda_system::dots(int u, const int* v, int count, double* out) {
  dots_of(u, v, count, 1, out);
}
void cuda_system::zdots(int u, const int* v, int count, double* out) {
  dots_of(u, v, count, 2, out);
}

// dots (per = 1) and zdots (per = 2: (re, im) a result).
void cuda_system::dots_of(int u, const int* v, int count, int per, double* out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(u);
  for (int i = 0; i < count; ++i) check_index(v[i]);
  if (count <= 0) {
    check(cudaStreamSynchronize(stream_), "dots");
    return;
  }
  surface_buffers(per * count);
  double* mapped = dot_host_.device<double>();
  double* result = mapped ? mapped : dot_result_.as<double>();
  dot_ptrs_.resize(std::size_t(count));
  for (group& g : groups_) {
    if (!g.mask) continue;  // its results are zeros, written below
    for (int i = 0; i < count; ++i) dot_ptrs_[std::size_t(i)] = vec(g, v[i]);
    const auto launch = per == 2 ? cuda::blas_zdots : cuda::blas_dots;
    check(
        launch(pr_, g.view, g.mask, vec(g, u), dot_ptrs_.data(), count, dot_partials_.as<double>(),
               dot_counter_.as<unsigned int>(), result + std::size_t(per) * g.j0, nrhs_, stream_),
        "dots launch");
  }
  const std::size_t values = std::size_t(per) * std::size_t(count) * nrhs_;
  double* host = dot_host_.as<double>() ? dot_host_.as<double>() : out;
  if (!mapped)
    check(cudaMemcpyAsync(host, result, sizeof(double) * values, cudaMemcpyDeviceToHost, stream_),
          "dots read-back");
  check(cudaStreamSynchronize(stream_), "dots");
  if (host != out) std::memcpy(out, host, sizeof(double) * values);
  for (const group& g : groups_)
    for (int j = 0; j < g.view.k; ++j)
      if (!((g.mask >> j) & 1u))
        for (int i = 0; i < count; ++i)
          for (int p = 0; p < per; ++p)
            out[std::size_t(per) * (std::size_t(i) * nrhs_ + g.j0 + j) + p] = 0.0;
}

void cuda_system::axpby(const double* alpha, int x, const double* beta, int y) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(x), check_index(y);
  for (group& g : groups_) {
    if (!g.mask) continue;
    cuda::group_coefs c;
    for (int j = 0; j < g.view.k; ++j) c.alpha[j] = alpha[g.j0 + j], c.beta[j] = beta[g.j0 + j];
    check(cuda::blas_axpby(pr_, g.view, g.mask, c, vec(g, x), vec(g, y), stream_), "axpby launch");
  }
}

void cuda_system::zaxpby(const double* alpha, int x, const double* beta, int y) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(x), check_index(y);
  for (group& g : groups_) {
    if (!g.mask) continue;
    cuda::group_zcoefs c;
    for (int j = 0; j < g.view.k; ++j)
      for (int p = 0; p < 2; ++p)
        c.alpha[j][p] = alpha[2 * (g.j0 + j) + p], c.beta[j][p] = beta[2 * (g.j0 + j) + p];
    check(cuda::blas_zaxpby(pr_, g.view, g.mask, c, vec(g, x), vec(g, y), stream_),
          "zaxpby launch");
  }
}

static_assert(cuda::max_fused_dots == device_system::combine_pass, "combine's pass width");

void cuda_system::combine(const int* v, int count, const double* coef, const double* beta, int y) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(y);
  for (int i = 0; i < count; ++i) {
    check_index(v[i]);
    if (v[i] == y) throw error(CNC_ERR_INVALID_VALUE, ": combine into one of its inputs");
  }
  dot_ptrs_.resize(std::size_t(std::max(count, 0)));
  for (group& g : groups_) {
    if (!g.mask || count <= 0) continue;
    for (int i = 0; i < count; ++i) dot_ptrs_[std::size_t(i)] = vec(g, v[i]);
    check(cuda::blas_combine(pr_, g.view, g.mask, dot_ptrs_.data(), count, coef + g.j0, nrhs_,
                             beta + g.j0, vec(g, y), stream_),
          "combine launch");
  }
}

void cuda_system::zcombine(const int* v, int count, const double* coef, const double* beta, int y) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(y);
  for (int i = 0; i < count; ++i) {
    check_index(v[i]);
    if (v[i] == y) throw error(CNC_ERR_INVALID_VALUE, ": zcombine into one of its inputs");
  }
  dot_ptrs_.resize(std::size_t(std::max(count, 0)));
  for (group& g : groups_) {
    if (!g.mask || count <= 0) continue;
    for (int i = 0; i < count; ++i) dot_ptrs_[std::size_t(i)] = vec(g, v[i]);
    check(cuda::blas_zcombine(pr_, g.view, g.mask, dot_ptrs_.data(), count, coef + 2 * g.j0, nrhs_,
                              beta + g.j0, vec(g, y), stream_),
          "zcombine launch");
  }
}

void cuda_system::set_complex_jacobi(const double* dinv) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  const bool single = pr_ == precision::f32;
  const std::size_t n = std::size_t(n_), real = std::size_t(n_real_);
  const std::size_t vb = single ? sizeof(float) : sizeof(double);
  if (!zd_.get()) zd_ = device_buffer(n * vb);
  if (!zd_.get()) return;  // no rows
  // Through the backend's pinned stager (faster than the driver from pageable memory); float
  // values converted here first. The padding rows 0. Waited for: `dinv` may go.
  std::vector<float> f(single ? real : 0);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = float(dinv[i]);
  const void* src = single ? static_cast<const void*>(f.data()) : dinv;
  unsigned char* dst = static_cast<unsigned char*>(zd_.get());
  stager_->copy(dst, src, real * vb, stream_);
  if (n > real) check(cudaMemsetAsync(dst + real * vb, 0, (n - real) * vb, stream_), "cudaMemset");
  check(cudaStreamSynchronize(stream_), "complex diagonal upload");
}

void cuda_system::zprecondition(int in, int out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(in), check_index(out);
  if (!zd_.get() && n_ > 0)
    throw error(CNC_ERR_INVALID_VALUE, ": zprecondition before set_complex_jacobi");
  for (group& g : groups_)
    check(cuda::blas_zdiag(pr_, g.view, g.mask, zd_.get(), vec(g, in), vec(g, out), stream_),
          "zprecondition launch");
}

void cuda_system::read(int v, double* out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(v);
  gather_all(
      n_real_, [v](group& g) { return vec(g, v); }, out, n_real_);
}

}  // namespace cnc::cuda_host
