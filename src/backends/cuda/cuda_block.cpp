// The CUDA vector surface's cross-column products (device_system::block_dots, block_combine):
// kernels/cuda/block.cu, one call per pair of groups (systems live in groups of at most 8).
// block_dots writes its k x k doubles into the surface's result buffer (mapped pinned memory, or
// a device array copied back) and synchronizes once, as dots does.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_block_kernels.hpp"
#include "backends/cuda/cuda_system.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc::cuda_host {

void cuda_system::block_dots(int u, int v, double* out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(u), check_index(v);
  surface_buffers(nrhs_);  // nrhs_ x nrhs_ results; partials of 8 kc grid >= ka kb grid doubles
  double* mapped = dot_host_.device<double>();
  double* result = mapped ? mapped : dot_result_.as<double>();
  for (group& gb : groups_) {
    if (!gb.mask) continue;
    for (group& ga : groups_)
      check(cuda::block_gram(pr_, ga.view, gb.view, gb.mask, vec(ga, u), vec(gb, v),
                             dot_partials_.as<double>(),
                             result + std::size_t(ga.j0) * nrhs_ + gb.j0, nrhs_, stream_),
            "block_dots launch");
  }
  const std::size_t bytes = sizeof(double) * std::size_t(nrhs_) * nrhs_;
  double* host = dot_host_.as<double>() ? dot_host_.as<double>() : out;
  if (!mapped)
    check(cudaMemcpyAsync(host, result, bytes, cudaMemcpyDeviceToHost, stream_),
          "block_dots read-back");
  check(cudaStreamSynchronize(stream_), "block_dots");
  if (host != out) std::memcpy(out, host, bytes);
  for (const group& g : groups_)
    for (int j = 0; j < g.view.k; ++j)
      if (!((g.mask >> j) & 1u))
        for (int i = 0; i < nrhs_; ++i) out[std::size_t(i) * nrhs_ + g.j0 + j] = 0.0;
}

void cuda_system::block_combine(int v, const double* coef, const double* beta, int y) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(v), check_index(y);
  if (v == y) throw error(CNC_ERR_INVALID_VALUE, ": block_combine into its input");
  for (group& gy : groups_) {
    if (!gy.mask) continue;
    bool first = true;
    for (group& gv : groups_) {  // v's groups in order: the sum runs in i order
      cuda::block_coefs c{};
      c.first = first ? 1 : 0;
      for (int j = 0; j < gy.view.k; ++j) c.beta[j] = beta[gy.j0 + j];
      bool any = false;
      for (int a = 0; a < gv.view.k; ++a)
        for (int j = 0; j < gy.view.k; ++j) {
          c.coef[a][j] = coef[std::size_t(gv.j0 + a) * nrhs_ + gy.j0 + j];
          any = any || c.coef[a][j] != 0.0;
        }
      if (!any && !first) continue;  // nothing to add
      check(cuda::block_combine(pr_, gv.view, gy.view, gy.mask, c, vec(gv, v), vec(gy, y), stream_),
            "block_combine launch");
      first = false;
    }
  }
}

// The fused block-CG steps: one group only (the products then need no pairs of groups). The
// results land in the surface's mapped host array where it has one, else are copied back.
template <class F>
void cuda_system::fused_results(std::size_t count, double* out, const char* what, F&& launch) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  surface_buffers(int((count + std::size_t(nrhs_) - 1) / std::size_t(nrhs_)));
  double* mapped = dot_host_.device<double>();
  double* result = mapped ? mapped : dot_result_.as<double>();
  check(launch(result), what);
  const std::size_t bytes = sizeof(double) * count;
  double* host = dot_host_.as<double>() ? dot_host_.as<double>() : out;
  if (!mapped) check(cudaMemcpyAsync(host, result, bytes, cudaMemcpyDeviceToHost, stream_), what);
  check(cudaStreamSynchronize(stream_), what);
  if (host != out) std::memcpy(out, host, bytes);
}

bool cuda_system::block_grams(const int* u, const int* v, int count, double* out) {
  if (groups_.size() != 1 || (count != 1 && count != 2 && count != 4)) return false;
  cuda::block_fused f{};
  std::vector<int> vecs;
  auto slot = [&](int w) {  // w's place among the pass's vectors (at most 4), or -1
    for (std::size_t i = 0; i < vecs.size(); ++i)
      if (vecs[i] == w) return int(i);
    if (vecs.size() >= 4) return -1;
    vecs.push_back(w);
    return int(vecs.size()) - 1;
  };
  for (int c = 0; c < count; ++c) {
    check_index(u[c]), check_index(v[c]);
    f.ia[c] = slot(u[c]), f.ib[c] = slot(v[c]);
    if (f.ia[c] < 0 || f.ib[c] < 0) return false;
  }
  group& g = groups_[0];
  f.pairs = count;
  f.nvec = int(vecs.size());
  for (int i = 0; i < 4; ++i) f.vec[i] = i < f.nvec ? vec(g, vecs[std::size_t(i)]) : nullptr;
  const std::size_t kc = std::size_t(g.view.kc), grid = std::size_t(std::max(g.view.grid, 1));
  const std::size_t parts = sizeof(double) * std::size_t(count) * kc * kc * grid;
  if (fused_partials_.bytes() < parts) fused_partials_ = device_buffer(parts);
  const std::size_t values = std::size_t(count) * std::size_t(nrhs_) * std::size_t(nrhs_);
  fused_results(values, out, "block CG Gram pass", [&](double* result) {
    return cuda::block_fused_pass(pr_, g.view, f, fused_partials_.as<double>(), result, stream_);
  });
  return true;
}

// The SpMV of a full single group with its Gram product, where the SELL kernel has it (the
// answer, fixed for the system's device and layout, asked once).
bool cuda_system::spmv_gram(int in, int out, double* gram) {
  if (groups_.size() != 1 || in == out || !full(groups_[0])) return false;
  check_index(in), check_index(out);
  group& g = groups_[0];
  const cuda::matrix_view m = matrix_for(g);
  if (spmv_gram_on_ < 0) {
    check(cudaSetDevice(dev_), "cudaSetDevice");
    spmv_gram_on_ = cuda::spmv_sell_gram_on(pr_, m, g.view) ? 1 : 0;
  }
  if (!spmv_gram_on_) return false;
  const std::size_t kc = std::size_t(g.view.kc), grid = std::size_t(std::max(m.grid, 1));
  const std::size_t parts = sizeof(double) * kc * kc * grid;
  if (fused_partials_.bytes() < parts) fused_partials_ = device_buffer(parts);
  fused_results(std::size_t(nrhs_) * std::size_t(nrhs_), gram, "block CG SpMV with PᵀQ",
                [&](double* result) {
                  return cuda::spmv_sell_gram(pr_, m, g.view, vec(g, in), vec(g, out),
                                              fused_partials_.as<double>(), result, stream_);
                });
  return true;
}

static_assert(cuda::block_update_grams == device_system::block_update_grams, "update's products");

bool cuda_system::block_update(int p, int q, const double* a, int x, int r, int z, double* out) {
  if (groups_.size() != 1) return false;
  check_index(p), check_index(q), check_index(x), check_index(r);
  if (z != no_vector) check_index(z);
  group& g = groups_[0];
  cuda::block_update_args f{};
  f.p = vec(g, p), f.q = vec(g, q);
  f.x = vec(g, x), f.r = vec(g, r), f.z = z == no_vector ? nullptr : vec(g, z);
  f.mask = g.mask;
  for (int i = 0; i < g.view.k; ++i)
    for (int j = 0; j < g.view.k; ++j) f.alpha[i][j] = a[std::size_t(i) * nrhs_ + j];
  const std::size_t kc = std::size_t(g.view.kc), grid = std::size_t(std::max(g.view.grid, 1));
  const std::size_t parts =
      sizeof(double) * (std::size_t(cuda::block_update_grams) * kc * kc + 2 * kc) * grid;
  if (fused_partials_.bytes() < parts) fused_partials_ = device_buffer(parts);
  fused_results(block_update_size(nrhs_), out, "block CG update pass", [&](double* result) {
    return cuda::block_update_pass(pr_, g.view, f, fused_partials_.as<double>(), result, stream_);
  });
  return true;
}

bool cuda_system::block_combine2(int v1, const double* c1, int v2, const double* c2, int y,
                                 bool scale_v1) {
  if (groups_.size() != 1) return false;
  check_index(v1), check_index(v2), check_index(y);
  if (y == v1 || y == v2) throw error(CNC_ERR_INVALID_VALUE, ": block_combine2 into its input");
  check(cudaSetDevice(dev_), "cudaSetDevice");
  group& g = groups_[0];
  cuda::block_coefs2 c{};
  c.scale_v1 = scale_v1 ? 1 : 0;
  for (int i = 0; i < g.view.k; ++i)
    for (int j = 0; j < g.view.k; ++j) {
      c.c1[i][j] = c1[std::size_t(i) * nrhs_ + j];
      c.c2[i][j] = c2[std::size_t(i) * nrhs_ + j];
    }
  check(cuda::block_combine2(pr_, g.view, c, vec(g, v1), vec(g, v2), vec(g, y), stream_),
        "block_combine2 launch");
  return true;
}

}  // namespace cnc::cuda_host
