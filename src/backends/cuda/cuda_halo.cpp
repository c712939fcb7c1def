// The halo operations of the CUDA device_system (backend.hpp; libcnc_mpi's distributed systems):
// the rows other processes read are gathered on the device and copied into a pinned buffer the
// caller sends from, once per product; the values they send arrive in another pinned buffer, go
// up in one asynchronous copy and are multiplied by the halo block. All on the system's stream,
// so a product's local part (queued right after the gather) runs while the caller exchanges the
// halo, and only the gather waits.
#include <cuda_runtime.h>

#include <string>

#include "backends/cuda/cuda_kernels.hpp"
#include "backends/cuda/cuda_system.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc::cuda_host {

bool cuda_system::set_halo(const csr_view& halo, std::int32_t halo_size,
                           const std::int32_t* send_rows, std::int32_t send_count) {
  if (vsize_ != sizeof(double)) return false;  // single-precision vectors: not offered
  check(cudaSetDevice(dev_), "cudaSetDevice");
  const std::size_t k = std::size_t(nrhs_);
  // Everything is allocated before anything is kept.
  device_buffer rp(sizeof(std::int64_t) * halo.row_ptr.size());
  device_buffer col(sizeof(std::int32_t) * halo.col.size());
  device_buffer val(sizeof(double) * halo.val.size());
  device_buffer rows(sizeof(std::int32_t) * std::size_t(send_count));
  device_buffer send(sizeof(double) * std::size_t(send_count) * k);
  device_buffer recv(sizeof(double) * std::size_t(halo_size) * k);
  pinned_buffer send_host(send.bytes()), recv_host(recv.bytes());
  if ((send.bytes() && !send_host.as<double>()) || (recv.bytes() && !recv_host.as<double>()))
    throw error(CNC_ERR_OUT_OF_MEMORY, "CUDA backend: cannot pin the halo buffers (" +
                                           std::to_string(send.bytes() + recv.bytes()) + " bytes)");
  auto up = [](device_buffer& d, const void* h) {
    if (d.bytes()) check(cudaMemcpy(d.get(), h, d.bytes(), cudaMemcpyHostToDevice), "halo upload");
  };
  up(rp, halo.row_ptr.data()), up(col, halo.col.data()), up(val, halo.val.data());
  up(rows, send_rows);
  halo_rows_ = halo.n, halo_size_ = halo_size, send_count_ = send_count;
  halo_rp_ = std::move(rp), halo_col_ = std::move(col), halo_val_ = std::move(val);
  send_rows_ = std::move(rows), send_dev_ = std::move(send), recv_dev_ = std::move(recv);
  send_host_ = std::move(send_host), recv_host_ = std::move(recv_host);
  return true;
}

void* cuda_system::halo_device(double** send, double** recv) {
  *send = send_dev_.as<double>(), *recv = recv_dev_.as<double>();
  return stream_;
}

void cuda_system::gather_halo_on_device(int v) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(v);
  if (send_count_ == 0) return;
  for (group& g : groups_)
    check(cuda::halo_gather(static_cast<const double*>(vec(g, v)), g.view.kc, g.view.k,
                            send_rows_.as<std::int32_t>(), send_count_, send_dev_.as<double>(),
                            nrhs_, g.j0, stream_),
          "halo gather launch");
}

void cuda_system::gather_halo(int v) {
  gather_halo_on_device(v);
  if (send_count_ > 0)
    check(cudaMemcpyAsync(send_host_.as<double>(), send_dev_.get(), send_dev_.bytes(),
                          cudaMemcpyDeviceToHost, stream_),
          "halo read-back");
  // Also when nothing is sent: the previous add_halo's copy from recv_host_ has run after this.
  check(cudaStreamSynchronize(stream_), "halo gather");
}

void cuda_system::add_halo_on_device(double alpha, int y) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check_index(y);
  if (halo_size_ == 0 || halo_rows_ == 0) return;
  for (group& g : groups_)
    check(
        cuda::halo_add(g.view.kc, g.view.k, g.mask, halo_rows_, halo_rp_.as<std::int64_t>(),
                       halo_col_.as<std::int32_t>(), halo_val_.as<double>(), recv_dev_.as<double>(),
                       nrhs_, g.j0, alpha, static_cast<double*>(vec(g, y)), stream_),
        "halo product launch");
}

void cuda_system::add_halo(double alpha, int y) {
  if (halo_size_ == 0 || halo_rows_ == 0) return;
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check(cudaMemcpyAsync(recv_dev_.get(), recv_host_.as<double>(), recv_dev_.bytes(),
                        cudaMemcpyHostToDevice, stream_),
        "halo upload");
  add_halo_on_device(alpha, y);
}

}  // namespace cnc::cuda_host
