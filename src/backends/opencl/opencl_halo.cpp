// The halo operations of the OpenCL device_system (backend.hpp; libcnc_mpi's distributed
// systems), on the vector surface's queue: kernels/opencl/halo.cl's halo_gather collects the rows
// other processes read into a device buffer, read back into the host send buffer (the one read
// that waits: everything queued before has run when gather_halo returns); add_halo writes the
// host receive buffer up without waiting and queues halo_add, the halo block's product, behind
// it. Device buffers hold the vectors' type (VEC_T) and the matrix's (VAL_T); the host buffers
// are doubles, converted through a staging buffer where the device's are floats.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/cl_runtime.hpp"
#include "backends/opencl/opencl_vectors.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc::ocl {
namespace {
template <typename T>
void set_arg(const api& cl, cl_kernel k, cl_uint index, const T& v) {
  // NOLINTNEXTLINE(bugprone-sizeof-expression): T = cl_mem, a pointer: its size is what is asked
  check(cl.SetKernelArg(k, index, sizeof(T), &v), "clSetKernelArg");
}
}  // namespace

void vector_ops::release_halo() {
  for (cl_kernel* k : {&k_hgather_, &k_hadd_}) {
    if (*k) e_.cl->ReleaseKernel(*k);
    *k = nullptr;
  }
  cl_mem* mems[6] = {&h_rp_, &h_col_, &h_val_, &h_rows_, &h_send_, &h_recv_};
  for (int i = 0; i < 6; ++i) drop_buffer(*mems[i], h_bytes_[i]);
}

bool vector_ops::set_halo(const csr_view& halo, std::int32_t halo_size,
                          const std::int32_t* send_rows, std::int32_t send_count) {
  if (halo.n > e_.np || halo_size < 0 || send_count < 0)
    throw error(CNC_ERR_INVALID_VALUE, "OpenCL: a halo plan that does not fit this system");
  const std::size_t k = std::size_t(e_.k), vsz = e_.val_f32 ? 4 : 8;
  const std::size_t bytes[6] = {halo.row_ptr.size() * 8,
                                halo.col.size() * 4,
                                halo.val.size() * vsz,
                                std::size_t(send_count) * 4,
                                std::size_t(send_count) * k * vs_,
                                std::size_t(halo_size) * k * vs_};
  // Everything is made before anything is kept; a failure leaves the previous plan as it was.
  cl_mem made[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  cl_kernel kernels[2] = {nullptr, nullptr};
  try {
    for (int i = 0; i < 6; ++i) made[i] = make_buffer(bytes[i], "halo buffer");
    auto up = [&](cl_mem m, const void* src, std::size_t b) {
      if (b)
        check(e_.cl->EnqueueWriteBuffer(e_.queue, m, CL_TRUE, 0, b, src, 0, nullptr, nullptr),
              "clEnqueueWriteBuffer (halo)");
    };
    up(made[0], halo.row_ptr.data(), bytes[0]);
    up(made[1], halo.col.data(), bytes[1]);
    if (e_.val_f32) {
      const std::vector<float> v(halo.val.begin(), halo.val.end());
      up(made[2], v.data(), bytes[2]);
    } else {
      up(made[2], halo.val.data(), bytes[2]);
    }
    up(made[3], send_rows, bytes[3]);
    const char* names[2] = {"halo_gather", "halo_add"};
    for (int i = 0; i < 2; ++i) {
      cl_int err = CL_SUCCESS;
      kernels[i] = e_.cl->CreateKernel(e_.prog, names[i], &err);
      check(err, "clCreateKernel");
    }
  } catch (...) {
    for (int i = 0; i < 6; ++i) drop_buffer(made[i], bytes[i]);
    for (cl_kernel kk : kernels)
      if (kk) e_.cl->ReleaseKernel(kk);
    throw;
  }
  release_halo();
  k_hgather_ = kernels[0], k_hadd_ = kernels[1];
  h_rp_ = made[0], h_col_ = made[1], h_val_ = made[2], h_rows_ = made[3];
  h_send_ = made[4], h_recv_ = made[5];
  std::copy(bytes, bytes + 6, h_bytes_);
  h_n_ = halo.n, h_size_ = halo_size, h_count_ = send_count, h_nnz_ = halo.nnz();
  halo_send_.assign(std::size_t(send_count) * k, 0.0);
  halo_recv_.assign(std::size_t(halo_size) * k, 0.0);
  halo_stage_.clear();
  if (e_.vec_f32) halo_stage_.resize(std::max(bytes[4], bytes[5]));
  // The arguments that stay.
  set_arg(*e_.cl, k_hgather_, 0, cl_int(send_count));
  set_arg(*e_.cl, k_hgather_, 1, h_rows_);
  set_arg(*e_.cl, k_hgather_, 3, h_send_);
  set_arg(*e_.cl, k_hadd_, 0, cl_int(halo.n));
  set_arg(*e_.cl, k_hadd_, 1, h_rp_);
  set_arg(*e_.cl, k_hadd_, 2, h_col_);
  set_arg(*e_.cl, k_hadd_, 3, h_val_);
  set_arg(*e_.cl, k_hadd_, 4, h_recv_);
  set_arg(*e_.cl, k_hadd_, 5, mask_st_);
  return true;
}

void vector_ops::gather_halo(int v) {
  const cl_mem vm = vec(v);
  if (!k_hgather_) throw error(CNC_ERR_INTERNAL, "OpenCL: gather_halo before set_halo");
  if (h_count_ == 0) {  // nothing to send: still, what was queued before (add_halo) has run
    check(e_.cl->Finish(e_.queue), "clFinish (halo)");
    return;
  }
  set_arg(*e_.cl, k_hgather_, 2, vm);
  const long long values = (long long)h_count_ * e_.k;
  const int groups = int(std::clamp<long long>((values + e_.wg - 1) / e_.wg, 1, e_.groups));
  launch(k_hgather_, groups, "halo gather");
  if (!e_.vec_f32) {
    read_now(*e_.cl, e_.queue, h_send_, h_bytes_[4], halo_send_.data());
    return;
  }
  read_now(*e_.cl, e_.queue, h_send_, h_bytes_[4], halo_stage_.data());
  for (std::size_t i = 0; i < halo_send_.size(); ++i)
    halo_send_[i] = get_value(halo_stage_.data(), i, true);
}

void vector_ops::add_halo(double alpha, int y) {
  const cl_mem ym = vec(y);
  if (!k_hadd_) throw error(CNC_ERR_INTERNAL, "OpenCL: add_halo before set_halo");
  if (h_size_ == 0 || h_nnz_ == 0) return;
  if (!e_.vec_f32) {
    // Not waited for: the caller leaves halo_recv() alone until the next gather_halo returns.
    check(e_.cl->EnqueueWriteBuffer(e_.queue, h_recv_, CL_FALSE, 0, h_bytes_[5], halo_recv_.data(),
                                    0, nullptr, nullptr),
          "clEnqueueWriteBuffer (halo)");
  } else {  // through the staging, which the next call rewrites: waited for
    for (std::size_t i = 0; i < halo_recv_.size(); ++i)
      put_value(halo_stage_.data(), i, halo_recv_[i], true);
    check(e_.cl->EnqueueWriteBuffer(e_.queue, h_recv_, CL_TRUE, 0, h_bytes_[5], halo_stage_.data(),
                                    0, nullptr, nullptr),
          "clEnqueueWriteBuffer (halo)");
  }
  if (e_.acc_f32)
    set_arg(*e_.cl, k_hadd_, 6, cl_float(alpha));
  else
    set_arg(*e_.cl, k_hadd_, 6, cl_double(alpha));
  set_arg(*e_.cl, k_hadd_, 7, ym);
  launch(k_hadd_, e_.groups, "halo product");
}

}  // namespace cnc::ocl
