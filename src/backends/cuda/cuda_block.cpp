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

}  // namespace cnc::cuda_host
