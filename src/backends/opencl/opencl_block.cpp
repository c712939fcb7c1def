// The OpenCL vector surface's cross-column products (device_system::block_dots, block_combine):
// kernels/opencl/block.cl's vec_block_gram (a launch per 8 columns of u) summed by blas1.cl's
// vec_dot_finish into out[i*k + j], and vec_block_combine with its k betas and k x k
// coefficients from a slot of a device buffer (a ring of host slots, as combine's).
#include <algorithm>
#include <cstring>
#include <string>

#include "backends/backend.hpp"
#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/cl_runtime.hpp"
#include "backends/opencl/opencl_vectors.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc::ocl {
namespace {
constexpr int gram_rows = 8;  // GRAM_ROWS of block.cl: columns of u a launch
template <typename T>
void set_arg(const api& cl, cl_kernel k, cl_uint index, const T& v) {
  // NOLINTNEXTLINE(bugprone-sizeof-expression): T = cl_mem, a pointer: its size is what is asked
  check(cl.SetKernelArg(k, index, sizeof(T), &v), "clSetKernelArg");
}
}  // namespace

void vector_ops::release_block() {
  for (cl_kernel* k : {&k_bgram_, &k_bcomb_}) {
    if (*k) e_.cl->ReleaseKernel(*k);
    *k = nullptr;
  }
}

void vector_ops::block_dots(int u, int v, double* out) {
  const cl_mem um = vec(u), vm = vec(v);
  const std::size_t k = std::size_t(e_.k), values = k * k;
  if (!k_bgram_) {
    cl_int err = CL_SUCCESS;
    k_bgram_ = e_.cl->CreateKernel(e_.prog, "vec_block_gram", &err);
    check(err, "clCreateKernel");
    set_arg(*e_.cl, k_bgram_, 0, cl_int(e_.np));
    set_arg(*e_.cl, k_bgram_, 2, mask_st_);
  }
  ensure_dot_space(e_.k);  // k "vectors" of k columns: k * k sums
  set_arg(*e_.cl, k_bgram_, 3, um);
  set_arg(*e_.cl, k_bgram_, 4, vm);
  set_arg(*e_.cl, k_bgram_, 5, part_);
  for (int a0 = 0; a0 < e_.k; a0 += gram_rows) {
    set_arg(*e_.cl, k_bgram_, 1, cl_int(a0));
    launch(k_bgram_, e_.groups, "block_dots");
  }
  set_arg(*e_.cl, k_fin_, 2, part_);
  set_arg(*e_.cl, k_fin_, 3, out_);
  launch(k_fin_, e_.k, "block_dots (sum)");
  dot_host_.resize(values * as_);
  read_now(*e_.cl, e_.queue, out_, values * as_, dot_host_.data());
  for (std::size_t i = 0; i < values; ++i) out[i] = get_value(dot_host_.data(), i, e_.acc_f32);
}

void vector_ops::block_combine(int v, const double* coef, const double* beta, int y) {
  const cl_mem vm = vec(v), ym = vec(y);
  if (vm == ym) throw error(CNC_ERR_INVALID_VALUE, "OpenCL: block_combine into its input");
  const std::size_t k = std::size_t(e_.k), bytes = (k + k * k) * vs_;
  if (!k_bcomb_) {
    const int slots = e_.k <= 64 ? 32 : 2;  // k x k values a slot
    bcomb_ = make_buffer(std::size_t(slots) * bytes, "block_combine coefficients");
    bcomb_host_.assign(bytes, 0);
    init_ring(bcomb_ring_, slots, bytes);
    cl_int err = CL_SUCCESS;
    k_bcomb_ = e_.cl->CreateKernel(e_.prog, "vec_block_combine", &err);
    check(err, "clCreateKernel");
    set_arg(*e_.cl, k_bcomb_, 0, cl_int(e_.np));
    set_arg(*e_.cl, k_bcomb_, 2, bcomb_);
    set_arg(*e_.cl, k_bcomb_, 3, mask_st_);
  }
  for (std::size_t j = 0; j < k; ++j) put_value(bcomb_host_.data(), j, beta[j], e_.vec_f32);
  for (std::size_t e = 0; e < k * k; ++e) put_value(bcomb_host_.data(), k + e, coef[e], e_.vec_f32);
  set_arg(*e_.cl, k_bcomb_, 1, cl_int(put(bcomb_ring_, bcomb_, true, bcomb_host_.data())));
  set_arg(*e_.cl, k_bcomb_, 4, vm);
  set_arg(*e_.cl, k_bcomb_, 5, ym);
  launch(k_bcomb_, e_.groups, "block_combine");
}

}  // namespace cnc::ocl
