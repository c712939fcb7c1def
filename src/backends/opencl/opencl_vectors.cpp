// The vector surface of the OpenCL device_system (see opencl_vectors.hpp).
#include "backends/opencl/opencl_vectors.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "backends/backend.hpp"
#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/cl_runtime.hpp"
#include "cnc.h"
#include "util/environment.hpp"
#include "util/error.hpp"
#include "util/fault.hpp"

namespace cnc::ocl {
namespace {

// Calls between two reuses of a host slot (a reuse waits until its write has run); combine's
// slots are launches (9k values each: fewer of them).
constexpr int mask_slots = 16, coef_slots = 64, comb_slots = 32;
// Vectors per vec_combine launch (its v0 .. v7).
constexpr int comb_v = device_system::combine_pass;
static_assert(comb_v == 8, "vec_combine (blas1.cl) takes 8 vectors");
const cl_uint zero4 = 0;
const char* const names[] = {
    "vec_axpby",      "vec_precondition", "vec_b_minus", "vec_dot_finish", "vec_dot_part1",
    "vec_dot_part2",  "vec_dot_part4",    "vec_combine", "vec_zaxpby",     "vec_zprecondition",
    "vec_zdot_part1", "vec_zdot_part2",   "vec_zcombine"};

}  // namespace

void put_value(unsigned char* dst, std::size_t index, double v, bool as_float) {
  if (as_float) {
    const float f = static_cast<float>(v);
    std::memcpy(dst + index * sizeof f, &f, sizeof f);
  } else {
    std::memcpy(dst + index * sizeof v, &v, sizeof v);
  }
}

double get_value(const unsigned char* src, std::size_t index, bool as_float) {
  if (as_float) {
    float f;
    std::memcpy(&f, src + index * sizeof f, sizeof f);
    return f;
  }
  double v;
  std::memcpy(&v, src + index * sizeof v, sizeof v);
  return v;
}

bool coef_args_fit(int k, std::size_t vec_size, std::size_t max_param) {
  if (env::integer(env::var::opencl_coefficient_buffer, 0) != 0) return false;  // tests
  // vec_zaxpby's 4k (axpby's are 2k); the other arguments: three ints and three pointers, with
  // room for alignment.
  return 4 * std::size_t(k) * vec_size + 64 <= max_param;
}

int dot_vectors(int k, int wg) {
  if (k <= wg) return 4;  // FLAT: a work-item keeps one sum a vector
  return k <= 8 ? 4 : k <= 16 ? 2 : 1;
}

std::size_t vector_kernels_fit(const api& cl, cl_program prog, cl_device_id dev) {
  std::size_t fit = SIZE_MAX;
  for (const char* name : names) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = cl.CreateKernel(prog, name, &err);
    check(err, "clCreateKernel");
    std::size_t s = 0;
    err = cl.GetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof s, &s, nullptr);
    cl.ReleaseKernel(k);
    check(err, "clGetKernelWorkGroupInfo");
    fit = std::min(fit, s);
  }
  return fit;
}

vector_ops::vector_ops(const vector_env& e)
    : e_(e),
      vs_(e.vec_f32 ? 4 : 8),
      as_(e.acc_f32 ? 4 : 8),
      vecs_(e.fixed),
      mask_(std::size_t(e.k), 1) {
  try {
    cl_kernel* ks[] = {&k_axpby_,   &k_precond_, &k_bminus_, &k_fin_,    &k_dot_[0],
                       &k_dot_[1],  &k_dot_[2],  &k_comb_,   &k_zaxpby_, &k_zprecond_,
                       &k_zdot_[0], &k_zdot_[1], &k_zcomb_};
    static_assert(std::size(ks) == std::size(names), "a kernel per name");
    for (std::size_t i = 0; i < std::size(ks); ++i) {
      cl_int err = CL_SUCCESS;
      *ks[i] = e_.cl->CreateKernel(e_.prog, names[i], &err);
      check(err, "clCreateKernel");
    }
    cl_int err = CL_SUCCESS;
    k_spmv_ = e_.cl->CreateKernel(e_.prog, "spmv_fused", &err);
    check(err, "clCreateKernel");

    // The mask: statuses of rhs_state structs (ACC_T fields, then status), all running (0).
    const std::size_t sts = 5 * as_ + 8;
    mask_st_ = make_buffer(sts * e_.k, "vector mask");
    check(
        e_.cl->EnqueueFillBuffer(e_.queue, mask_st_, &zero4, 4, 0, sts * e_.k, 0, nullptr, nullptr),
        "clEnqueueFillBuffer");
    init_ring(mask_ring_, mask_slots, sts * e_.k);
    ensure_dot_space(e_.dot_v);  // part_ also takes spmv_fused's partials (k * groups)
    coef_host_.assign(4 * std::size_t(e_.k) * vs_, 0);  // zaxpby's 4k; axpby uses 2k
    if (!e_.coef_args) {
      coef_ = make_buffer(coef_slots * coef_host_.size(), "axpby coefficients");
      init_ring(coef_ring_, coef_slots, coef_host_.size());
    }

    const cl_int n = e_.np, units = e_.units, groups = e_.groups, zero = 0;
    arg(k_spmv_, 0, zero);  // MODE_DOT: writes the running (active) columns only
    arg(k_spmv_, 1, units);
    arg(k_spmv_, 2, e_.rowp);
    arg(k_spmv_, 3, e_.col);
    arg(k_spmv_, 4, e_.val);
    arg(k_spmv_, 8, vecs_[device_system::vec_b]);
    arg(k_spmv_, 9, e_.d);
    arg(k_spmv_, 10, mask_st_);
    if (e_.rows_args) {
      arg(k_spmv_, 12, e_.long_min);
      arg(k_spmv_, 13, e_.n_long);
      arg(k_spmv_, 14, e_.bounds);
      arg(k_spmv_, 15, e_.lrow);
      arg(k_spmv_, 16, e_.psum);
    }
    if (e_.n_pieces) {  // csr_pieces in MODE_DOT: the masked columns, nothing when none
      k_pieces_ = e_.cl->CreateKernel(e_.prog, "csr_pieces", &err);
      check(err, "clCreateKernel");
      arg(k_pieces_, 0, zero);
      arg(k_pieces_, 1, e_.n_pieces);
      arg(k_pieces_, 2, e_.pieces);
      arg(k_pieces_, 3, e_.col);
      arg(k_pieces_, 4, e_.val);
      arg(k_pieces_, 6, mask_st_);
      arg(k_pieces_, 7, e_.psum);
    }
    for (cl_kernel k : {k_axpby_, k_zaxpby_}) {
      arg(k, 0, n);
      arg(k, 1, zero);
      if (!e_.coef_args) arg(k, 3, coef_);
      arg(k, 4, mask_st_);
    }
    arg(k_precond_, 0, n);
    arg(k_precond_, 1, mask_st_);
    arg(k_precond_, 2, e_.d);
    arg(k_zprecond_, 0, n);
    arg(k_zprecond_, 1, mask_st_);
    arg(k_bminus_, 0, n);
    arg(k_bminus_, 1, mask_st_);
    arg(k_bminus_, 2, vecs_[device_system::vec_b]);
    for (cl_kernel k : {k_dot_[0], k_dot_[1], k_dot_[2], k_zdot_[0], k_zdot_[1]}) {
      arg(k, 0, n);
      arg(k, 2, mask_st_);
    }
    arg(k_fin_, 0, groups);
    arg(k_fin_, 1, mask_st_);
    for (cl_kernel k : {k_comb_, k_zcomb_}) {
      arg(k, 0, n);
      arg(k, 5, mask_st_);
    }
  } catch (...) {
    release();
    throw;
  }
}

vector_ops::~vector_ops() { release(); }

void vector_ops::release() {
  if (e_.queue) e_.cl->Finish(e_.queue);
  release_ring(mask_ring_);
  release_ring(coef_ring_);
  release_ring(comb_ring_);
  release_ring(zcomb_ring_);
  release_ring(bcomb_ring_);
  release_block();
  release_halo();
  for (cl_kernel* k :
       {&k_pieces_, &k_spmv_, &k_axpby_, &k_precond_, &k_bminus_, &k_fin_, &k_dot_[0], &k_dot_[1],
        &k_dot_[2], &k_comb_, &k_zaxpby_, &k_zprecond_, &k_zdot_[0], &k_zdot_[1], &k_zcomb_}) {
    if (*k) e_.cl->ReleaseKernel(*k);
    *k = nullptr;
  }
  release_vectors();
  for (cl_mem* m : {&mask_st_, &part_, &out_, &coef_, &comb_, &zcomb_, &bcomb_}) drop_buffer(*m, 0);
  drop_buffer(zd_, std::size_t(e_.np) * vs_);
}

cl_mem vector_ops::vec(int v) const {
  if (v < 0 || std::size_t(v) >= vecs_.size())
    throw error(CNC_ERR_INVALID_VALUE, "OpenCL: no vector " + std::to_string(v) + " (there are " +
                                           std::to_string(vecs_.size()) + ")");
  return vecs_[std::size_t(v)];
}

int vector_ops::add(int count) {
  if (count < 0) throw error(CNC_ERR_INVALID_VALUE, "OpenCL: add_vectors of a negative count");
  const int first = int(vecs_.size());
  const std::size_t bytes = std::size_t(e_.np) * e_.k * vs_;
  if (e_.mem_left && used_ + double(count) * bytes > double(e_.mem_left))  // refused whole
    throw error(CNC_ERR_OUT_OF_MEMORY, "OpenCL: no room on the device for " +
                                           std::to_string(count) + " more vectors of " +
                                           std::to_string(bytes) + " bytes");
  std::vector<cl_mem> made;
  try {
    for (int c = 0; c < count; ++c) {
      made.push_back(make_buffer(bytes, "vector"));
      check(
          e_.cl->EnqueueFillBuffer(e_.queue, made.back(), &zero4, 4, 0, bytes, 0, nullptr, nullptr),
          "clEnqueueFillBuffer (vector)");
    }
  } catch (...) {
    for (cl_mem& m : made) drop_buffer(m, bytes);
    throw;
  }
  vecs_.insert(vecs_.end(), made.begin(), made.end());
  return first;
}

void vector_ops::release_vectors() {
  const std::size_t bytes = std::size_t(e_.np) * e_.k * vs_;
  for (std::size_t i = device_system::vec_first_extra; i < vecs_.size(); ++i)
    drop_buffer(vecs_[i], bytes);  // commands already queued on it keep it until they have run
  vecs_.resize(std::min<std::size_t>(vecs_.size(), device_system::vec_first_extra));
}

void vector_ops::set_mask(const std::uint8_t* active) {
  std::vector<std::uint8_t> m(std::size_t(e_.k));
  for (int j = 0; j < e_.k; ++j) m[j] = active[j] != 0;
  if (m == mask_) return;
  mask_ = m;
  const std::size_t sts = 5 * as_ + 8;
  std::vector<unsigned char> st(sts * e_.k, 0);
  for (int j = 0; j < e_.k; ++j) {
    const std::int32_t status = m[j] ? 0 : 1;  // ST_RUNNING, or any other status
    std::memcpy(st.data() + j * sts + 5 * as_, &status, sizeof status);
  }
  put(mask_ring_, mask_st_, false, st.data());
}

void vector_ops::spmv(int in, int out) {
  const cl_mem a = vec(in), y = vec(out);
  if (a == y) throw error(CNC_ERR_INVALID_VALUE, "OpenCL: spmv into its own input");
  arg(k_spmv_, 5, a);
  arg(k_spmv_, 6, y);
  arg(k_spmv_, 7, a);       // MODE_DOT's p: only read, for partials nobody uses
  arg(k_spmv_, 11, part_);  // those partials
  if (k_pieces_) {
    arg(k_pieces_, 5, a);
    launch(k_pieces_, e_.piece_groups, "spmv (long rows)");
  }
  launch(k_spmv_, e_.groups, "spmv");
}

void vector_ops::precondition(int in, int out) {
  arg(k_precond_, 3, vec(in));
  arg(k_precond_, 4, vec(out));
  launch(k_precond_, e_.groups, "precondition");
}

void vector_ops::set_complex_jacobi(const double* dinv, std::int32_t n) {
  const std::size_t bytes = std::size_t(e_.np) * vs_;
  if (!zd_) {
    zd_ = make_buffer(bytes, "complex diagonal");
    arg(k_zprecond_, 2, zd_);
  }
  std::vector<unsigned char> stage(bytes, 0);  // padding rows 0
  for (std::int32_t i = 0; i < n; ++i) put_value(stage.data(), std::size_t(i), dinv[i], vs_ == 4);
  check(e_.cl->EnqueueWriteBuffer(e_.queue, zd_, CL_TRUE, 0, bytes, stage.data(), 0, nullptr,
                                  nullptr),
        "clEnqueueWriteBuffer");
}

void vector_ops::zprecondition(int in, int out) {
  if (!zd_) throw error(CNC_ERR_INVALID_VALUE, "OpenCL: zprecondition before set_complex_jacobi");
  arg(k_zprecond_, 3, vec(in));
  arg(k_zprecond_, 4, vec(out));
  launch(k_zprecond_, e_.groups, "zprecondition");
}

void vector_ops::residual(int in, int out) {
  if (out == device_system::vec_b) throw error(CNC_ERR_INVALID_VALUE, "OpenCL: residual into b");
  spmv(in, out);
  arg(k_bminus_, 3, vec(out));
  launch(k_bminus_, e_.groups, "residual");
}

void vector_ops::axpby(const double* alpha, int x, const double* beta, int y) {
  coef_launch(k_axpby_, 1, alpha, x, beta, y, "axpby");
}

void vector_ops::zaxpby(const double* alpha, int x, const double* beta, int y) {
  coef_launch(k_zaxpby_, 2, alpha, x, beta, y, "zaxpby");
}

void vector_ops::coef_launch(cl_kernel kern, int per, const double* alpha, int x,
                             const double* beta, int y, const char* what) {
  const cl_mem xm = vec(x), ym = vec(y);
  const std::size_t m = std::size_t(per) * std::size_t(e_.k);
  cl_int overwrite = 1;  // every active beta is 0 in the vector precision: y is not read
  for (std::size_t i = 0; i < m; ++i) {
    put_value(coef_host_.data(), i, alpha[i], e_.vec_f32);
    put_value(coef_host_.data(), m + i, beta[i], e_.vec_f32);
    const double b = e_.vec_f32 ? double(float(beta[i])) : beta[i];
    if (mask_[i / std::size_t(per)] && b != 0) overwrite = 0;
  }
  arg(kern, 2, overwrite);
  if (e_.coef_args) {
    check(e_.cl->SetKernelArg(kern, 3, 2 * m * vs_, coef_host_.data()),
          "clSetKernelArg (coefficients)");
  } else {  // the whole slot (4k values) is written, axpby's unused half too: one layout
    arg(kern, 1, cl_int(put(coef_ring_, coef_, true, coef_host_.data())));
  }
  arg(kern, 5, xm);
  arg(kern, 6, ym);
  launch(kern, e_.groups, what);
}

void vector_ops::combine(const int* v, int count, const double* coef, const double* beta, int y) {
  combine_launches(k_comb_, 1, comb_, comb_ring_, comb_host_, v, count, coef, beta, y, "combine");
}

void vector_ops::zcombine(const int* v, int count, const double* coef, const double* beta, int y) {
  combine_launches(k_zcomb_, 2, zcomb_, zcomb_ring_, zcomb_host_, v, count, coef, beta, y,
                   "zcombine");
}

void vector_ops::combine_launches(cl_kernel kern, int per, cl_mem& buf, ring& r,
                                  std::vector<unsigned char>& host, const int* v, int count,
                                  const double* coef, const double* beta, int y, const char* what) {
  if (count <= 0) return;
  const cl_mem ym = vec(y);
  for (int i = 0; i < count; ++i)  // every index checked before anything is queued
    if (vec(v[i]) == ym)
      throw error(CNC_ERR_INVALID_VALUE,
                  std::string("OpenCL: ") + what + " into one of its vectors");
  const std::size_t k = std::size_t(e_.k), pk = std::size_t(per) * k;
  if (!buf) {  // only GMRES and BiCGSTAB combine: no buffer for the other methods
    const std::size_t bytes = (k + comb_v * pk) * vs_;
    buf = make_buffer(comb_slots * bytes, "combine coefficients");
    host.assign(bytes, 0);
    init_ring(r, comb_slots, bytes);
    arg(kern, 4, buf);
  }
  // A launch per 8 vectors: the first applies beta, the later ones add to what it wrote (beta 1),
  // so the sum runs in i order whatever the split.
  for (int i0 = 0; i0 < count; i0 += comb_v) {
    const int nv = std::min(comb_v, count - i0);
    cl_int overwrite = 1;  // every active beta is 0 in the vector precision: y is not read
    for (std::size_t j = 0; j < k; ++j) {
      const double b = i0 == 0 ? beta[j] : 1.0;
      put_value(host.data(), j, b, e_.vec_f32);
      if (mask_[j] && (e_.vec_f32 ? double(float(b)) : b) != 0) overwrite = 0;
    }
    for (int t = 0; t < nv; ++t)  // rows past nv are not read
      for (std::size_t e = 0; e < pk; ++e)
        put_value(host.data(), k + pk * std::size_t(t) + e, coef[pk * std::size_t(i0 + t) + e],
                  e_.vec_f32);
    arg(kern, 1, cl_int(put(r, buf, true, host.data())));
    arg(kern, 2, cl_int(nv));
    arg(kern, 3, overwrite);
    // Unused slots repeat the last vector (valid arguments, never read).
    for (int t = 0; t < comb_v; ++t) arg(kern, cl_uint(6 + t), vec(v[i0 + std::min(t, nv - 1)]));
    arg(kern, 14, ym);
    launch(kern, e_.groups, what);
  }
}

void vector_ops::dots(int u, const int* v, int count, double* out) {
  if (count <= 0) return;
  const cl_mem um = vec(u);
  for (int t = 0; t < count; ++t) vec(v[t]);  // every index checked before anything is queued
  // Launches of dot_v vectors, the last of the fewest of 1, 2 or 4 that cover what is left
  // (repeating its last vector, a cache hit; its partials land past count, unused).
  ensure_dot_space((count + e_.dot_v - 1) / e_.dot_v * e_.dot_v);
  for (int t0 = 0; t0 < count; t0 += e_.dot_v) {
    const int left = count - t0, nv = left >= e_.dot_v ? e_.dot_v : left <= 2 ? left : 4;
    const cl_kernel k = k_dot_[nv == 1 ? 0 : nv == 2 ? 1 : 2];
    arg(k, 1, cl_int(t0));
    arg(k, 3, um);
    for (int i = 0; i < 4; ++i) arg(k, cl_uint(4 + i), vec(v[t0 + std::min(i, left - 1)]));
    arg(k, 8, part_);
    launch(k, e_.groups, "dots");
  }
  finish_dots(count, "dots (sum)");
  const std::size_t values = std::size_t(count) * e_.k;
  for (std::size_t i = 0; i < values; ++i) out[i] = get_value(dot_host_.data(), i, e_.acc_f32);
}

void vector_ops::zdots(int u, const int* v, int count, double* out) {
  if (count <= 0) return;
  const cl_mem um = vec(u);
  for (int t = 0; t < count; ++t) vec(v[t]);  // every index checked before anything is queued
  // Launches of up to 2 vectors (4 sums a work-item, as dots' 4 vectors), each vector's real and
  // imaginary parts as two quantities of the partials; vec_dot_finish sums the 2 count of them.
  const int per = e_.dot_v >= 2 ? 2 : 1;
  ensure_dot_space(2 * count);
  for (int t0 = 0; t0 < count; t0 += per) {
    const int nv = std::min(per, count - t0);
    const cl_kernel k = k_zdot_[nv - 1];
    arg(k, 1, cl_int(2 * t0));
    arg(k, 3, um);
    arg(k, 4, vec(v[t0]));
    arg(k, 5, vec(v[t0 + nv - 1]));
    arg(k, 6, part_);
    launch(k, e_.groups, "zdots");
  }
  finish_dots(2 * count, "zdots (sum)");
  const std::size_t k = std::size_t(e_.k);
  // Quantity 2i + s, column j -> out[2(i k + j) + s].
  for (std::size_t i = 0; i < std::size_t(count); ++i)
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t s = 0; s < 2; ++s)
        out[2 * (i * k + j) + s] = get_value(dot_host_.data(), (2 * i + s) * k + j, e_.acc_f32);
}

void vector_ops::finish_dots(int quantities, const char* what) {
  arg(k_fin_, 2, part_);
  arg(k_fin_, 3, out_);
  launch(k_fin_, quantities, what);
  const std::size_t bytes = std::size_t(quantities) * std::size_t(e_.k) * as_;
  dot_host_.resize(bytes);
  read_now(*e_.cl, e_.queue, out_, bytes, dot_host_.data());
}

void vector_ops::init_ring(ring& r, int slots, std::size_t bytes) {
  r.bytes = bytes;
  r.host.assign(std::size_t(slots) * bytes, 0);
  r.done.assign(std::size_t(slots), nullptr);
  r.next = 0;
}

int vector_ops::put(ring& r, cl_mem dst, bool per_slot, const void* src) {
  const int s = r.next;
  r.next = (r.next + 1) % int(r.done.size());
  if (r.done[s]) {  // in practice already run: dots synchronizes far more often
    const cl_int w = e_.cl->WaitForEvents(1, &r.done[s]);
    e_.cl->ReleaseEvent(r.done[s]);
    r.done[s] = nullptr;
    check(w, "clWaitForEvents");
  }
  unsigned char* h = r.host.data() + std::size_t(s) * r.bytes;
  std::memcpy(h, src, r.bytes);
  check(e_.cl->EnqueueWriteBuffer(e_.queue, dst, CL_FALSE, per_slot ? std::size_t(s) * r.bytes : 0,
                                  r.bytes, h, 0, nullptr, &r.done[s]),
        "clEnqueueWriteBuffer");
  return s;
}

void vector_ops::release_ring(ring& r) {
  for (cl_event& ev : r.done) {
    if (!ev) continue;
    e_.cl->WaitForEvents(1, &ev);
    e_.cl->ReleaseEvent(ev);
    ev = nullptr;
  }
}

cl_mem vector_ops::make_buffer(std::size_t bytes, const char* what) {
  bytes = std::max<std::size_t>(bytes, 16);
  if ((e_.max_alloc && bytes > e_.max_alloc) || (e_.mem_left && used_ + bytes > e_.mem_left))
    throw error(CNC_ERR_OUT_OF_MEMORY, std::string("OpenCL: no room on the device for the ") +
                                           what + " (" + std::to_string(bytes) + " bytes)");
  if (fault::fire(fault::point::device_alloc))
    throw_error(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                std::string("clCreateBuffer (") + what + ")" + fault::note);
  cl_int err = CL_SUCCESS;
  cl_mem m = e_.cl->CreateBuffer(e_.ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS) throw_error(err, std::string("clCreateBuffer (") + what + ")");
  used_ += bytes;
  return m;
}

void vector_ops::drop_buffer(cl_mem& m, std::size_t bytes) {
  if (!m) return;
  used_ -= std::min<std::uint64_t>(used_, std::max<std::size_t>(bytes, 16));
  e_.cl->ReleaseMemObject(m);
  m = nullptr;
}

void vector_ops::ensure_dot_space(int count) {
  if (count <= dot_cap_) return;
  // The new buffers first: when they cannot be had, the old ones stay (spmv uses part_).
  const int cap = std::max({count, e_.dot_v, 2 * dot_cap_});
  const std::size_t quantities = std::size_t(cap) * e_.k, old = std::size_t(dot_cap_) * e_.k;
  cl_mem part = make_buffer(quantities * e_.groups * as_, "dot partials"), out = nullptr;
  try {
    out = make_buffer(quantities * as_, "dot products");
  } catch (...) {
    drop_buffer(part, quantities * e_.groups * as_);
    throw;
  }
  drop_buffer(part_, old * e_.groups * as_);  // queued commands keep them until they have run
  drop_buffer(out_, old * as_);
  part_ = part, out_ = out, dot_cap_ = cap;
}

void vector_ops::launch(cl_kernel k, int groups, const char* what) {
  const std::size_t global = std::size_t(groups) * e_.wg, local = std::size_t(e_.wg);
  const cl_int err = e_.cl->EnqueueNDRangeKernel(e_.queue, k, 1, nullptr, &global, &local, 0,
                                                 nullptr, e_.prof ? e_.prof->next(what) : nullptr);
  if (err != CL_SUCCESS) throw_error(err, std::string("clEnqueueNDRangeKernel (") + what + ")");
}

template <typename T>
void vector_ops::arg(cl_kernel k, cl_uint index, const T& v) {
  // NOLINTNEXTLINE(bugprone-sizeof-expression): T = cl_mem, a pointer: its size is what is asked
  check(e_.cl->SetKernelArg(k, index, sizeof(T), &v), "clSetKernelArg");
}

}  // namespace cnc::ocl
