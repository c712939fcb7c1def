// The OpenCL device_system (see opencl_system.hpp).
//
// Device layout: vectors interleave the k systems (entry i of system j at i*k + j) over n_padded
// rows; the matrix keeps its host format (CSR, BCRS with row-major b x b blocks, or SELL with
// column-major slices of sell_slice rows and slice_ptr as its row offsets) with values in the
// precision's matrix type. The SpMV kernel's units are rows (CSR, SELL), block rows (BCRS) or
// complex rows (ZCSR, two real rows each); a
// CSR's long rows are summed in pieces by csr_pieces just before it (opencl_long_rows.hpp). Each
// step is one kernel launch (two with long rows) on an in-order queue with all arguments bound
// once at creation, so iterate(count) only enqueues. Per-group partial sums go to partA (pq) and
// partB (Σ d r², Σ r²) and are finished by the next kernel (pcg_steps.cl). The state array stays on
// the device; read_state is the only read between two solves' uploads. The vector surface (the
// operations of BiCGSTAB and GMRES) is opencl_vectors.cpp, over the same queue, program and matrix.
#include "backends/opencl/opencl_system.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "backends/interleave.hpp"
#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/opencl_long_rows.hpp"
#include "backends/opencl/opencl_profile.hpp"
#include "backends/opencl/opencl_stager.hpp"
#include "backends/opencl/opencl_vectors.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "util/environment.hpp"
#include "util/error.hpp"
#include "util/fault.hpp"
#include "util/lease.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

namespace cnc::ocl {
namespace {

// The state layout of devices without fp64 (ACC_T = float in common.cl).
struct rhs_state_f32 {
  float rz, rz_new, rr, pq, thr2;
  std::int32_t status, iters;
};
static_assert(sizeof(rhs_state_f32) == 28, "rhs_state_f32 must match common.cl");

// Columns from which spmv_fused takes a work-item per row and column (COLS in spmv.cl): on an
// H200 (run 111) slower at k = 4 and 8, faster at 16.
constexpr int kColsMin = 16;

int env_int(env::var v, int fallback) {
  return int(std::clamp<long long>(env::integer(v, fallback), INT_MIN, INT_MAX));
}

int floor_pow2(long v) {
  int p = 1;
  while (2L * p <= v) p *= 2;
  return p;
}

class opencl_system final : public device_system {
 public:
  opencl_system(const api& cl, const device_info& dev, const host_matrix& a,
                std::span<const double> d, precision prec, int k, bool fp64, const tuning& t)
      : cl_(cl), dev_(dev), k_(k) {
    // SELL: one work-item per row, padding rows included (they are identity rows of the slices).
    const bool blocked = is_block(a.fmt), sell = a.fmt == format::sell;
    const bool zc = a.fmt == format::zcsr;
    // SELL without its host layout: filled on the device from the CSR (builds_on_device).
    if ((!zc && a.csr.row_ptr.empty()) || (blocked && !a.bcrs) || (sell && !a.sell && !fp64) ||
        (zc && !a.zcsr))
      throw error(CNC_ERR_INVALID_VALUE,
                  "OpenCL backend: the matrix of the chosen format is missing");
    if (sell && !a.sell) slice_ptr_ = sell_slice_offsets(a.csr);
    n_ = blocked ? a.bcrs->n : a.csr.n;
    np_ = a.n_padded();
    fmt_ = zc ? 3 : group_rows(a.fmt);
    units_ = blocked ? a.bcrs->n_block_rows : zc ? a.zcsr->n : np_;
    val_f32_ = prec != precision::f64;
    vec_f32_ = prec == precision::f32;
    acc_f32_ = !fp64;
    vs_ = vec_f32_ ? 4 : 8;
    if (static_cast<std::int64_t>(d.size()) < np_)
      throw error(CNC_ERR_SIZE_MISMATCH, "OpenCL backend: inverse diagonal shorter than n_padded");

    ctx_ = shared_context(cl_, dev_);
    cl_int err = CL_SUCCESS;
    if (kernel_profile::wanted()) prof_ = std::make_unique<kernel_profile>(cl_);
    queue_ = cl_.CreateCommandQueue(ctx_, dev_.id, prof_ ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    check(err, "clCreateCommandQueue");

    try {
      const double t0 = now_seconds();
      build(a, t);
      times_[0] = now_seconds() - t0;
      upload_matrix(a, d);
      make_vector_ops();
      if (t.log) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "OpenCL upload: program %.3f ms, matrix %.3f ms (%.1f GB/s), SELL fill "
                      "%.3f ms, diagonal %.3f ms, vectors %.3f ms",
                      1e3 * times_[0], 1e3 * times_[1], 1e-9 * double(matrix_bytes_) / times_[1],
                      1e3 * times_[2], 1e3 * times_[3], 1e3 * times_[4]);
        t.log(CNC_LOG_INFO, line);
      }
    } catch (...) {
      release();
      throw;
    }
  }

  ~opencl_system() override { release(); }

  void set_vectors(const double* b, const double* x) override {
    upload_vectors(bv_, b);
    upload_vectors(x_, x);
  }

  void init(const double* thr2) override {
    std::vector<unsigned char> t(static_cast<std::size_t>(k_) * acc_size());
    for (int j = 0; j < k_; ++j) put_value(t.data(), j, thr2[j], acc_f32_);
    write(thr2_, t.data(), t.size());
    spmv_launch(kp_init_, k_init_, "init");
    finalize(0);
    pending_ = 0;
  }

  void spmv_dot() override {
    spmv_launch(kp_dot_, k_dot_, "spmv_dot");
    pending_ = 1;
  }
  void update_xr() override {
    launch(k_xr_, groups_, "update_xr");
    pending_ = 2;
  }
  void update_p() override {
    launch(k_p_, groups_, "update_p");
    pending_ = 0;
  }
  void iterate(int count) override {
    for (int c = 0; c < count; ++c) {
      spmv_launch(kp_dot_, k_dot_, "spmv_dot");
      launch(k_xr_, groups_, "update_xr");
      launch(k_p_, groups_, "update_p");
    }
    pending_ = 0;
    check(cl_.Flush(queue_), "clFlush");
  }

  void read_state(rhs_state* out) override {
    if (pending_) finalize(pending_);
    pending_ = 0;
    if (!acc_f32_) {
      read(state_, out, sizeof(rhs_state) * k_);
      return;
    }
    std::vector<rhs_state_f32> s(k_);
    read(state_, s.data(), sizeof(rhs_state_f32) * k_);
    for (int j = 0; j < k_; ++j)
      out[j] =
          rhs_state{s[j].rz, s[j].rz_new, s[j].rr, s[j].pq, s[j].thr2, s[j].status, s[j].iters};
  }

  // The steps read pq (update_xr) and rz_new, rr (update_p) from the previous kernel's per-group
  // partials, not from the state: those are written too, each value as partial 0 and zeros
  // after it (the sum the next step forms is then that value), with aux_rz = rz and the step
  // taken where the status is running (what update_xr would have recorded). Blocking writes: the
  // caller's array may change when this returns.
  void write_state(const rhs_state* in) override {
    const std::size_t as = acc_size(), g = std::size_t(groups_), k = std::size_t(k_);
    std::vector<unsigned char> a(as * k * g, 0), b(2 * as * k * g, 0), rz(as * 2 * k);
    for (std::size_t j = 0; j < k; ++j) {
      put_value(rz.data(), k + j, in[j].status == running ? 1.0 : 0.0, acc_f32_);
      put_value(a.data(), j * g, in[j].pq, acc_f32_);
      put_value(b.data(), 2 * j * g, in[j].rz_new, acc_f32_);
      put_value(b.data(), (2 * j + 1) * g, in[j].rr, acc_f32_);
      put_value(rz.data(), j, in[j].rz, acc_f32_);
    }
    write(partA_, a.data(), a.size());
    write(partB_, b.data(), b.size());
    write(aux_, rz.data(), rz.size());
    if (!acc_f32_) {
      write(state_, in, sizeof(rhs_state) * k);
    } else {
      std::vector<rhs_state_f32> s(k);
      for (std::size_t j = 0; j < k; ++j)
        s[j] =
            rhs_state_f32{float(in[j].rz),   float(in[j].rz_new), float(in[j].rr), float(in[j].pq),
                          float(in[j].thr2), in[j].status,        in[j].iters};
      write(state_, s.data(), sizeof(rhs_state_f32) * k);
    }
    pending_ = 0;  // the state is what was written
  }

  void get_x(double* x) override { download_vectors(x_, x); }

  void apply(const double* x, double* y) override {
    upload_vectors(p_, x);
    spmv_launch(kp_apply_, k_apply_, "apply");
    download_vectors(q_, y);
  }

  int add_vectors(int count) override { return vops_->add(count); }
  void release_vectors() override { vops_->release_vectors(); }
  void set_mask(const std::uint8_t* active) override { vops_->set_mask(active); }
  void spmv(int in, int out) override { vops_->spmv(in, out); }
  void precondition(int in, int out) override { vops_->precondition(in, out); }
  void set_complex_jacobi(const double* dinv) override { vops_->set_complex_jacobi(dinv, n_); }
  void zprecondition(int in, int out) override { vops_->zprecondition(in, out); }
  void residual(int in, int out) override { vops_->residual(in, out); }
  void dots(int u, const int* v, int count, double* out) override { vops_->dots(u, v, count, out); }
  void axpby(const double* alpha, int x, const double* beta, int y) override {
    vops_->axpby(alpha, x, beta, y);
  }
  void zaxpby(const double* alpha, int x, const double* beta, int y) override {
    vops_->zaxpby(alpha, x, beta, y);
  }
  bool fused_complex() const override { return true; }
  void zdots(int u, const int* v, int count, double* out) override {
    vops_->zdots(u, v, count, out);
  }
  void zcombine(const int* v, int count, const double* coef, const double* beta, int y) override {
    vops_->zcombine(v, count, coef, beta, y);
  }
  void combine(const int* v, int count, const double* coef, const double* beta, int y) override {
    vops_->combine(v, count, coef, beta, y);
  }
  void read(int v, double* out) override { download_vectors(vops_->vec(v), out); }
  void block_dots(int u, int v, double* out) override { vops_->block_dots(u, v, out); }
  void block_combine(int v, const double* coef, const double* beta, int y) override {
    vops_->block_combine(v, coef, beta, y);
  }
  std::int64_t long_rows() const override { return plan_.n_long; }

  // Halo operations (backend.hpp): the vector surface's (opencl_halo.cpp).
  bool set_halo(const csr_view& halo, std::int32_t halo_size, const std::int32_t* send_rows,
                std::int32_t send_count) override {
    return vops_->set_halo(halo, halo_size, send_rows, send_count);
  }
  double* halo_send() override { return vops_->halo_send(); }
  double* halo_recv() override { return vops_->halo_recv(); }
  void gather_halo(int v) override { vops_->gather_halo(v); }
  void add_halo(double alpha, int y) override { vops_->add_halo(alpha, y); }

 private:
  std::size_t acc_size() const { return acc_f32_ ? 4 : 8; }
  std::size_t vec_bytes() const { return static_cast<std::size_t>(np_) * k_ * vs_; }

  void build(const host_matrix& a, const tuning& t) {
    const std::int64_t entries = a.fmt == format::csr    ? a.csr.nnz()
                                 : a.fmt == format::zcsr ? 2 * a.zcsr->nnz()  // value offsets
                                 : a.fmt == format::sell
                                     ? (a.sell ? a.sell->entries() : slice_ptr_.back())
                                     : a.bcrs->n_blocks() * fmt_ * fmt_;
    wide_idx_ = entries >= INT_MAX;
    const bool wide_off = static_cast<std::int64_t>(np_) * k_ >= INT_MAX;

    int wg = env_int(env::var::opencl_work_group, t.work_group);
    // CPU devices: one work-item per group, so each core streams one contiguous range of rows
    // (work-items of a group would interleave rows and defeat the prefetchers).
    if (wg <= 0) wg = dev_.gpu ? 256 : 1;
    wg = std::min<long>(floor_pow2(wg), floor_pow2(static_cast<long>(dev_.max_work_group)));
    int width = 1;
    if (a.fmt == format::csr) {
      width = env_int(env::var::opencl_csr_width, t.csr_width);
      if (width == 0) {
        // GPUs: short rows stream through local memory in double (float values: one
        // work-item per row, which the H200 sweep in bench/results/opencl.md found faster),
        // longer rows get about one lane per entry of a mean row (consecutive lanes read
        // consecutive entries of the row: coalesced loads, few lanes idle).
        // CPUs: one work-item per row.
        const double mean = a.csr.n ? static_cast<double>(a.csr.nnz()) / a.csr.n : 1.0;
        width = !dev_.gpu ? 1 : mean > 12 ? floor_pow2(static_cast<long>(mean)) : val_f32_ ? 1 : -1;
      }
      width = width < 0 ? 0 : std::clamp(floor_pow2(width), 1, 32);  // 0 = stream
      plan_ = plan_rows(a.csr, dev_.gpu, std::min(width, wg), group_count(t, wg));
    } else if (a.fmt == format::zcsr) {
      // The lanes of a complex row (no stream mode, no long-row pieces): on GPUs about one lane
      // for 6 entries of the mean row, at least 4 from rows of 4 entries; one work-item per row
      // on CPUs. H200: rows of 7 and 8 entries fastest at 4 lanes (2 and 8 slower by
      // 1.03-1.3x), rows of 25-27 as fast at 4 as at 8 and 1.3x slower at 16 (runs 112-115),
      // rows of ~118 (the 125-point stencil) fastest at 16 (8: 1.2x slower, 32: 1.06x; run 120).
      width = env_int(env::var::opencl_csr_width, t.csr_width);
      if (width <= 0) {
        const double mean = a.zcsr->n ? static_cast<double>(a.zcsr->nnz()) / a.zcsr->n : 1.0;
        width = !dev_.gpu || mean < 4 ? 1 : std::max(4, floor_pow2(long(mean / 6)));
      }
      width = std::clamp(floor_pow2(width), 1, 32);
    }

    // The vector surface's axpby and zaxpby take their 2k, 4k coefficients as a kernel argument
    // when zaxpby's fit.
    std::size_t max_param = 0;
    check(cl_.GetDeviceInfo(dev_.id, CL_DEVICE_MAX_PARAMETER_SIZE, sizeof max_param, &max_param,
                            nullptr),
          "clGetDeviceInfo");
    coef_args_ = coef_args_fit(k_, vs_, max_param);
    const char* val_t = val_f32_ ? "float" : "double";
    const char* vec_t = vec_f32_ ? "float" : "double";
    const char* acc_t = acc_f32_ ? "float" : "double";
    for (;;) {
      width_ = std::min(width, wg);  // stays 0 for stream
      std::string opt = "-cl-std=CL1.2";
      opt += std::string(" -DVAL_T=") + val_t + " -DVEC_T=" + vec_t + " -DACC_T=" + acc_t;
      opt += std::string(" -DHAS_FP64=") + (acc_f32_ ? "0" : "1");
      opt += std::string(" -DIDX_T=") + (wide_idx_ ? "long" : "int");
      opt += std::string(" -DOFF_T=") + (wide_off ? "long" : "int");
      opt += " -DNRHS=" + std::to_string(k_) + " -DWG=" + std::to_string(wg);
      // Stream tiles: about 8 entries per row of the tile, within half the local memory.
      const long tile = std::max<long>(
          wg, std::min<long>(8L * wg / k_, static_cast<long>(dev_.local_mem / 2 / (vs_ * k_))));
      // SELL entries loaded per work-item before use (CNC_OPENCL_SELL_U: tuning, 1..16).
      opt += " -DSELL_U=" +
             std::to_string(std::clamp(env_int(env::var::opencl_sell_unroll, 8), 1, 16));
      opt += " -DFMT=" + std::to_string(fmt_) + " -DSELL_C=" + std::to_string(sell_slice) +
             " -DCSR_W=" + std::to_string(width_) + " -DTILE=" + std::to_string(tile);
      opt += std::string(" -DCOEF_ARGS=") + (coef_args_ ? "1" : "0");
      // spmv.cl's STAGE: several systems, CSR or SELL, a flat walk (k <= wg), and a tile of wg
      // rows' products fits in local memory beside the kernel's other arrays.
      const std::size_t vs = vs_, others = std::size_t(wg) * (acc_size() + vs) +
                                           (width_ == 0 ? std::size_t(tile) * k_ * vs : 0) + 256;
      // Or COLS (a work-item per row and column) for CSR with one work-item a row, or SELL,
      // from k = kColsMin; CNC_OPENCL_SPMV_COLS=0|1 decides instead where COLS can run.
      const bool flat = k_ > 1 && k_ <= wg && (fmt_ == 1 || fmt_ == sell_slice);
      const int cols_env = env_int(env::var::opencl_spmv_columns, -1);
      const bool cols = flat && (fmt_ == sell_slice || width_ == 1) &&
                        (cols_env < 0 ? k_ >= kColsMin : cols_env != 0);
      const bool stage = flat && !cols && std::size_t(wg) * k_ * vs + others <= dev_.local_mem;
      opt += std::string(" -DSTAGE=") + (stage ? "1" : "0") + " -DCOLS=" + (cols ? "1" : "0");
      opt += std::string(" -DLONG_ROWS=") + (plan_.n_long ? "1" : "0") +
             " -DBALANCED=" + (plan_.balance ? "1" : "0");
      cl_program prog = get_program(cl_, dev_, opt);
      prog_ = prog;
      release_kernels();
      k_init_ = kernel(prog, "spmv_fused");
      k_dot_ = kernel(prog, "spmv_fused");
      k_apply_ = kernel(prog, "spmv_fused");
      k_xr_ = kernel(prog, "update_xr");
      k_p_ = kernel(prog, "update_p");
      k_fin_ = kernel(prog, "finalize");
      if (plan_.n_long) {
        kp_init_ = kernel(prog, "csr_pieces");
        kp_dot_ = kernel(prog, "csr_pieces");
        kp_apply_ = kernel(prog, "csr_pieces");
      }
      std::size_t fit = vector_kernels_fit(cl_, prog, dev_.id);
      for (cl_kernel kk : {k_init_, k_xr_, k_p_, k_fin_, plan_.n_long ? kp_init_ : k_init_}) {
        std::size_t s = 0;
        check(cl_.GetKernelWorkGroupInfo(kk, dev_.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof s, &s,
                                         nullptr),
              "clGetKernelWorkGroupInfo");
        fit = std::min(fit, s);
      }
      if (static_cast<std::size_t>(wg) <= fit || wg <= 1) break;
      wg = floor_pow2(static_cast<long>(fit));  // too many registers for this size: shrink
    }
    wg_ = wg;
    groups_ = group_count(t, wg_);
    if (plan_.balance) bounds_ = row_bounds(a.csr, plan_, groups_);
    // csr_pieces: the pieces spread over at most as many groups as spmv_fused's.
    const std::int64_t per = std::min(wg_, 32);
    piece_groups_ = int(std::clamp<std::int64_t>((plan_.n_pieces() + per - 1) / per, 1, groups_));
  }

  int group_count(const tuning& t, int wg) const {
    int groups = env_int(env::var::opencl_groups, t.groups);
    if (groups <= 0)
      groups = static_cast<int>(dev_.compute_units) * (dev_.gpu ? std::max(1, 2048 / wg) : 4);
    // No more groups than chunks of 64 rows: tiny systems do not pay for idle groups.
    return static_cast<int>(std::clamp<std::int64_t>(groups, 1, (np_ + 63) / 64));
  }

  // spmv_fused `k`, after csr_pieces `pieces` (bound to the same vector) where rows are cut.
  void spmv_launch(cl_kernel pieces, cl_kernel k, const char* what) {
    if (plan_.n_long) launch(pieces, piece_groups_, what);
    launch(k, groups_, what);
  }

  cl_kernel kernel(cl_program prog, const char* name) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = cl_.CreateKernel(prog, name, &err);
    check(err, "clCreateKernel");
    return k;
  }

  cl_mem alloc(std::size_t bytes, const char* what) {
    bytes = std::max<std::size_t>(bytes, 16);
    if (dev_.max_alloc && bytes > dev_.max_alloc)
      throw error(CNC_ERR_OUT_OF_MEMORY, std::string("OpenCL: the ") + what + " needs " +
                                             std::to_string(bytes) + " bytes, more than " +
                                             dev_.name + " allows in one buffer (" +
                                             std::to_string(dev_.max_alloc) + ")");
    if (fault::fire(fault::point::device_alloc))
      throw_error(CL_MEM_OBJECT_ALLOCATION_FAILURE,
                  std::string("clCreateBuffer (") + what + ")" + fault::note);
    cl_int err = CL_SUCCESS;
    cl_mem m = cl_.CreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err != CL_SUCCESS) throw_error(err, std::string("clCreateBuffer (") + what + ")");
    mems_.push_back(m);
    allocated_ += bytes;
    return m;
  }

  // Zeros written by the device (no host buffer of zeros crosses the bus).
  void zero(cl_mem m, std::size_t bytes, std::size_t offset = 0) {
    if (bytes == 0) return;
    const cl_uint z4 = 0;
    const unsigned char z1 = 0;
    const bool words = bytes % 4 == 0 && offset % 4 == 0;
    check(cl_.EnqueueFillBuffer(queue_, m, words ? static_cast<const void*>(&z4) : &z1,
                                words ? 4 : 1, offset, bytes, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
  }
  void write(cl_mem m, const void* src, std::size_t bytes) {
    if (bytes >= 2 * stager::chunk_min) {
      // Kept even when pinning failed (ok() false): not tried again.
      const lease<cl_device_id, stager> st(dev_.id, [&] { return new stager(cl_, ctx_, queue_); });
      if (st->ok()) return st->write(queue_, m, src, bytes);
    }
    check(cl_.EnqueueWriteBuffer(queue_, m, CL_TRUE, 0, bytes, src, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
  }
  void read(cl_mem m, void* dst, std::size_t bytes) { read_now(cl_, queue_, m, bytes, dst); }

  template <typename T>
  void arg(cl_kernel k, cl_uint index, const T& v) {
    // NOLINTNEXTLINE(bugprone-sizeof-expression): T = cl_mem, a pointer: its size is what is asked
    check(cl_.SetKernelArg(k, index, sizeof(T), &v), "clSetKernelArg");
  }

  void launch(cl_kernel k, int groups, const char* what) {
    const std::size_t global = static_cast<std::size_t>(groups) * wg_;
    const std::size_t local = static_cast<std::size_t>(wg_);
    const cl_int err = cl_.EnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, &local, 0, nullptr,
                                                prof_ ? prof_->next(what) : nullptr);
    if (err != CL_SUCCESS) throw_error(err, std::string("clEnqueueNDRangeKernel (") + what + ")");
    check(CL_SUCCESS, "clEnqueueNDRangeKernel");  // a fault injected here (util/fault.hpp)
  }

  void finalize(int mode) {
    arg(k_fin_, 0, static_cast<cl_int>(mode));
    launch(k_fin_, 1, "finalize");
  }

  void upload_matrix(const host_matrix& a, std::span<const double> d) {
    // SELL's slice_ptr plays the part of the row offsets (in entries, 64-bit on the host).
    const bool csr = a.fmt == format::csr, sell = a.fmt == format::sell;
    const bool zc = a.fmt == format::zcsr;
    const bool fill = sell && !a.sell;  // SELL filled here from the CSR
    const std::span<const std::int64_t> rp = csr    ? a.csr.row_ptr
                                             : zc   ? std::span<const std::int64_t>(a.zcsr->row_ptr)
                                             : fill ? std::span<const std::int64_t>(slice_ptr_)
                                             : sell
                                                 ? std::span<const std::int64_t>(a.sell->slice_ptr)
                                                 : std::span<const std::int64_t>(a.bcrs->row_ptr);
    const std::span<const std::int32_t> col =
        csr || fill ? a.csr.col
        : zc        ? std::span<const std::int32_t>(a.zcsr->col)
                    : std::span<const std::int32_t>(sell ? a.sell->col : a.bcrs->col);
    const std::span<const double> val =
        csr || fill ? a.csr.val
        : zc        ? std::span<const double>(a.zcsr->val)
                    : std::span<const double>(sell ? a.sell->val : a.bcrs->val);

    double t = now_seconds();
    rowp_ = alloc(rp.size() * (wide_idx_ ? 8 : 4), "row offsets");
    matrix_bytes_ = rp.size() * (wide_idx_ ? 8 : 4);
    if (wide_idx_) {
      write(rowp_, rp.data(), rp.size() * 8);
    } else {
      host_vector<std::int32_t> r32(rp.size());
      parallel_pieces(std::int64_t(rp.size()), std::int64_t(1) << 16, host_threads(),
                      [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                        for (std::int64_t i = i0; i < i1; ++i)
                          r32[std::size_t(i)] = std::int32_t(rp[std::size_t(i)]);
                      });
      write(rowp_, r32.data(), r32.size() * 4);
    }
    const std::size_t vsz = val_f32_ ? 4 : 8;
    if (fill) {
      fill_sell(a.csr, vsz);
    } else {
      col_ = alloc(col.size() * 4, "column indices");
      if (!col.empty()) write(col_, col.data(), col.size() * 4);
      val_ = alloc(val.size() * vsz, "matrix values");
      matrix_bytes_ += col.size() * 4 + val.size() * vsz;
      if (!val.empty() && !val_f32_) {
        write(val_, val.data(), val.size() * vsz);  // doubles go as they are: no host copy
      } else if (!val.empty()) {
        const std::vector<float> v(val.begin(), val.end());
        write(val_, v.data(), v.size() * vsz);
      }
    }
    times_[1] = now_seconds() - t - times_[2];
    t = now_seconds();
    dv_ = alloc(static_cast<std::size_t>(np_) * vs_, "inverse diagonal");
    if (!vec_f32_) {
      write(dv_, d.data(), static_cast<std::size_t>(np_) * 8);  // as it is: no host copy
    } else {
      host_vector<float> v(static_cast<std::size_t>(np_));
      parallel_pieces(np_, std::int64_t(1) << 16, host_threads(),
                      [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                        for (std::int64_t i = i0; i < i1; ++i) v[std::size_t(i)] = float(d[i]);
                      });
      write(dv_, v.data(), v.size() * 4);
    }
    times_[3] = now_seconds() - t;
    t = now_seconds();
    x_ = alloc(vec_bytes(), "vector x");
    r_ = alloc(vec_bytes(), "vector r");
    p_ = alloc(vec_bytes(), "vector p");
    q_ = alloc(vec_bytes(), "vector q");
    bv_ = alloc(vec_bytes(), "vector b");
    for (cl_mem m : {x_, r_, p_, q_, bv_}) zero(m, vec_bytes());
    const std::size_t sts = acc_f32_ ? sizeof(rhs_state_f32) : sizeof(rhs_state);
    state_ = alloc(sts * k_, "state");
    zero(state_, sts * k_);                    // status 0 = running, all zero
    aux_ = alloc(acc_size() * 2 * k_, "aux");  // rz for update_p; whether update_xr stepped
    thr2_ = alloc(acc_size() * k_, "thresholds");
    partA_ = alloc(acc_size() * k_ * groups_, "partials");
    partB_ = alloc(acc_size() * 2 * k_ * groups_, "partials");
    // Every group sums every system's partials (running or not): start them at zero.
    zero(partA_, acc_size() * k_ * groups_);
    zero(partB_, acc_size() * 2 * k_ * groups_);
    zero(aux_, acc_size() * 2 * k_);
    times_[4] = now_seconds() - t;

    upload_rows();
    // Bind every argument once; only finalize's mode changes between launches.
    const cl_int units = units_, np = np_, groups = groups_;
    struct spmv_binding {
      cl_kernel k, pieces;  // spmv_fused, the csr_pieces launched before it (or none)
      cl_int mode;
      cl_mem v, out, part;
    };
    for (const spmv_binding& s : {spmv_binding{k_dot_, kp_dot_, 0, p_, q_, partA_},
                                  spmv_binding{k_init_, kp_init_, 1, x_, r_, partB_},
                                  spmv_binding{k_apply_, kp_apply_, 2, p_, q_, partA_}}) {
      arg(s.k, 0, s.mode);
      arg(s.k, 1, units);
      arg(s.k, 2, rowp_);
      arg(s.k, 3, col_);
      arg(s.k, 4, val_);
      arg(s.k, 5, s.v);
      arg(s.k, 6, s.out);
      arg(s.k, 7, p_);
      arg(s.k, 8, bv_);
      arg(s.k, 9, dv_);
      arg(s.k, 10, state_);
      arg(s.k, 11, s.part);
      if (!plan_.n_long && !plan_.balance) continue;
      arg(s.k, 12, cl_long{plan_.long_min});
      arg(s.k, 13, cl_int{plan_.n_long});
      cl_uint at = 14;
      for (cl_mem m : {bounds_m_, lrow_m_, psum_}) arg(s.k, at++, m);
      if (!s.pieces) continue;
      arg(s.pieces, 0, s.mode);
      arg(s.pieces, 1, cl_int(plan_.n_pieces()));
      at = 2;
      for (cl_mem m : {pieces_m_, col_, val_, s.v, state_, psum_}) arg(s.pieces, at++, m);
    }
    cl_uint i = 0;
    for (const auto& v : {np, groups}) arg(k_xr_, i++, v);
    for (cl_mem m : {r_, q_, dv_, state_, aux_, partA_, partB_}) arg(k_xr_, i++, m);
    i = 0;
    for (const auto& v : {np, groups}) arg(k_p_, i++, v);
    for (cl_mem m : {x_, p_, r_, dv_, state_, aux_, partB_}) arg(k_p_, i++, m);
    arg(k_fin_, 0, cl_int{0});
    arg(k_fin_, 1, groups);
    i = 2;
    for (cl_mem m : {state_, aux_, partA_, partB_, thr2_}) arg(k_fin_, i++, m);
  }

  // The buffers of the long rows and of the balanced ranges (spmv_fused takes them all when it
  // takes any: 16-byte stand-ins for those this matrix does not use).
  void upload_rows() {
    if (!plan_.n_long && !plan_.balance) return;
    auto ints = [&](const std::vector<std::int32_t>& v, const char* what) {
      cl_mem m = alloc(v.size() * 4, what);
      if (!v.empty()) write(m, v.data(), v.size() * 4);
      return m;
    };
    bounds_m_ = ints(bounds_, "row ranges");
    lrow_m_ = ints(plan_.lrow, "long rows");
    if (!plan_.n_long) {
      psum_ = alloc(16, "piece sums");
      return;
    }
    const std::vector<std::int64_t>& pc = plan_.pieces;
    pieces_m_ = alloc(pc.size() * (wide_idx_ ? 8 : 4), "long-row pieces");
    if (wide_idx_) {
      write(pieces_m_, pc.data(), pc.size() * 8);
    } else {
      const std::vector<std::int32_t> p32(pc.begin(), pc.end());
      write(pieces_m_, p32.data(), p32.size() * 4);
    }
    psum_ = alloc(std::size_t(plan_.n_pieces()) * k_ * vs_, "piece sums");
  }

  // The SELL layout written on the device (sell_fill in spmv.cl) from the CSR, which goes up as
  // it is into buffers freed at the end: 12 bytes an entry cross the bus instead of SELL's 12
  // bytes a stored entry, and the host does not convert.
  void fill_sell(const csr_view& c, std::size_t vsz) {
    const std::int64_t entries = slice_ptr_.back();
    col_ = alloc(std::size_t(entries) * 4, "column indices");
    val_ = alloc(std::size_t(entries) * vsz, "matrix values");
    struct temporaries {
      const api& cl;
      cl_mem m[3] = {nullptr, nullptr, nullptr};
      cl_kernel k = nullptr;
      ~temporaries() {
        for (cl_mem x : m)
          if (x) cl.ReleaseMemObject(x);
        if (k) cl.ReleaseKernel(k);
      }
    } t{cl_};
    const std::span<const std::byte> parts[3] = {std::as_bytes(c.row_ptr), std::as_bytes(c.col),
                                                 std::as_bytes(c.val)};
    for (int i = 0; i < 3; ++i) {
      const std::size_t bytes = std::max<std::size_t>(parts[i].size(), 16);
      if (dev_.max_alloc && bytes > dev_.max_alloc)
        throw error(CNC_ERR_OUT_OF_MEMORY, "OpenCL: the CSR for the SELL build needs a buffer of " +
                                               std::to_string(bytes) + " bytes, more than " +
                                               dev_.name + " allows");
      cl_int err = CL_SUCCESS;
      t.m[i] = cl_.CreateBuffer(ctx_, CL_MEM_READ_ONLY, bytes, nullptr, &err);
      if (err != CL_SUCCESS) throw_error(err, "clCreateBuffer (CSR for the SELL build)");
      if (!parts[i].empty()) write(t.m[i], parts[i].data(), parts[i].size());
      matrix_bytes_ += parts[i].size();
    }
    const double t0 = now_seconds();
    t.k = kernel(prog_, "sell_fill");
    const cl_int n = n_, np = np_;
    arg(t.k, 0, n);
    arg(t.k, 1, np);
    for (cl_uint i = 0; i < 3; ++i) arg(t.k, 2 + i, t.m[i]);
    arg(t.k, 5, rowp_);
    arg(t.k, 6, col_);
    arg(t.k, 7, val_);
    const std::size_t local = std::size_t(wg_),
                      global = (std::size_t(np_) + local - 1) / local * local;
    const cl_int err =
        cl_.EnqueueNDRangeKernel(queue_, t.k, 1, nullptr, &global, &local, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) throw_error(err, "clEnqueueNDRangeKernel (sell_fill)");
    check(cl_.Finish(queue_), "clFinish (sell_fill)");  // before the CSR buffers go
    times_[2] = now_seconds() - t0;
  }

  void make_vector_ops() {
    vector_env e;
    e.cl = &cl_, e.device = dev_.id, e.ctx = ctx_, e.queue = queue_, e.prog = prog_;
    e.np = np_, e.units = units_, e.k = k_, e.wg = wg_, e.groups = groups_;
    e.prof = prof_.get();
    e.vec_f32 = vec_f32_, e.acc_f32 = acc_f32_, e.val_f32 = val_f32_, e.coef_args = coef_args_;
    e.dot_v = dot_vectors(k_, wg_);
    e.max_alloc = dev_.max_alloc;
    cl_ulong mem = 0;  // a bound for drivers that promise buffers they cannot back
    if (cl_.GetDeviceInfo(dev_.id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, nullptr) ==
            CL_SUCCESS &&
        mem > allocated_)
      e.mem_left = mem - allocated_;
    e.rowp = rowp_, e.col = col_, e.val = val_, e.d = dv_;
    e.rows_args = plan_.n_long || plan_.balance;
    e.long_min = plan_.long_min, e.n_long = plan_.n_long;
    e.n_pieces = cl_int(plan_.n_pieces()), e.piece_groups = piece_groups_;
    e.bounds = bounds_m_, e.lrow = lrow_m_, e.pieces = pieces_m_, e.psum = psum_;
    e.fixed = {x_, r_, p_, q_, bv_};
    vops_ = std::make_unique<vector_ops>(e);
  }

  // Host column-major (n rows per system) -> device interleaved over n_padded rows, through a
  // host copy (backends/interleave.hpp: a row at a time, on the host threads).
  void upload_vectors(cl_mem m, const double* src) {
    if (!src) return zero(m, vec_bytes());
    if (k_ == 1 && !vec_f32_) {  // the layout is the caller's: no host copy; padding zeroed
      write(m, src, std::size_t(n_) * sizeof(double));
      return zero(m, vec_bytes() - std::size_t(n_) * sizeof(double),
                  std::size_t(n_) * sizeof(double));
    }
    vec_f32_ ? upload_via(m, src, host_f_) : upload_via(m, src, host_d_);
  }
  void download_vectors(cl_mem m, double* dst) {
    if (k_ == 1 && !vec_f32_) return read(m, dst, std::size_t(n_) * sizeof(double));
    vec_f32_ ? download_via(m, dst, host_f_) : download_via(m, dst, host_d_);
  }
  // The host copy h (host_f_ or host_d_, the vectors' type) is kept between calls (a fresh one
  // page-faults on every solve: 54 against 12 ms for 2.1 M x 8 on the build box) while it is at
  // most host_keep_max bytes, and freed after each use when larger rather than held as long as
  // the system.
  template <class T>
  void upload_via(cl_mem m, const double* src, std::vector<T>& h) {
    h.resize(std::size_t(np_) * k_);
    interleave(src, n_, k_, np_, h.data(), host_threads());
    write(m, h.data(), vec_bytes());
    keep_or_free(h);
  }
  template <class T>
  void download_via(cl_mem m, double* dst, std::vector<T>& h) {
    h.resize(std::size_t(np_) * k_);
    read(m, h.data(), vec_bytes());
    deinterleave(h.data(), n_, k_, dst, host_threads());
    keep_or_free(h);
  }
  template <class T>
  static void keep_or_free(std::vector<T>& h) {
    if (h.size() * sizeof(T) > host_keep_max) std::vector<T>().swap(h);
  }

  void release_kernels() {
    for (cl_kernel* k :
         {&k_init_, &k_dot_, &k_apply_, &k_xr_, &k_p_, &k_fin_, &kp_init_, &kp_dot_, &kp_apply_}) {
      if (*k) cl_.ReleaseKernel(*k);
      *k = nullptr;
    }
  }
  void release() {
    if (queue_) cl_.Finish(queue_);
    if (prof_ && queue_) {
      try {
        const std::string title = "n " + std::to_string(n_) + ", k " + std::to_string(k_) +
                                  ", FMT " + std::to_string(fmt_) + ", WG " + std::to_string(wg_) +
                                  ", groups " + std::to_string(groups_);
        prof_->report(queue_, title.c_str());
      } catch (...) {  // a diagnostic must not throw out of the destructor (out of memory)
      }
    }
    vops_.reset();
    release_kernels();
    for (cl_mem m : mems_) cl_.ReleaseMemObject(m);
    mems_.clear();
    if (queue_) cl_.ReleaseCommandQueue(queue_);
    queue_ = nullptr;
  }

  const api& cl_;
  device_info dev_;
  int k_;
  std::int32_t n_ = 0, np_ = 0, units_ = 0;
  int fmt_ = 1;  // FMT of the kernels: group_rows(format), 3 for ZCSR
  bool val_f32_ = false, vec_f32_ = false, acc_f32_ = false, wide_idx_ = false;
  bool coef_args_ = true;        // COEF_ARGS of the kernels (opencl_vectors.hpp)
  std::uint64_t allocated_ = 0;  // bytes of mems_
  std::size_t vs_ = 8;
  int wg_ = 64, groups_ = 1, width_ = 1;
  int pending_ = 0;  // finalize mode owed before a state read: 1 after spmv_dot, 2 after update_xr
  cl_context ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program prog_ = nullptr;             // shared, cached by get_program: not released here
  std::unique_ptr<kernel_profile> prof_;  // CNC_OPENCL_PROFILE (before vops_, which uses it)
  std::unique_ptr<vector_ops> vops_;
  std::vector<cl_mem> mems_;
  std::vector<float> host_f_;   // upload_via / download_via's host copy, f32 vectors
  std::vector<double> host_d_;  // the same, f64 vectors
  static constexpr std::size_t host_keep_max = std::size_t(256) << 20;
  std::vector<std::int64_t> slice_ptr_;  // SELL filled on the device: its slice offsets
  // Upload phase times (s): program, matrix writes, SELL fill, diagonal, vectors; bytes written.
  double times_[5] = {0, 0, 0, 0, 0};
  std::size_t matrix_bytes_ = 0;
  cl_mem rowp_ = nullptr, col_ = nullptr, val_ = nullptr, dv_ = nullptr;
  cl_mem x_ = nullptr, r_ = nullptr, p_ = nullptr, q_ = nullptr, bv_ = nullptr;
  cl_mem state_ = nullptr, aux_ = nullptr, thr2_ = nullptr, partA_ = nullptr, partB_ = nullptr;
  cl_kernel k_init_ = nullptr, k_dot_ = nullptr, k_apply_ = nullptr, k_xr_ = nullptr,
            k_p_ = nullptr, k_fin_ = nullptr;
  // Long rows and balanced ranges (opencl_long_rows.hpp): the plan, the groups' row bounds
  // (BALANCED), csr_pieces for spmv_fused's three bindings, its groups, the buffers.
  row_plan plan_;
  std::vector<std::int32_t> bounds_;
  cl_kernel kp_init_ = nullptr, kp_dot_ = nullptr, kp_apply_ = nullptr;
  int piece_groups_ = 1;
  cl_mem bounds_m_ = nullptr, lrow_m_ = nullptr, pieces_m_ = nullptr, psum_ = nullptr;
};

}  // namespace

std::unique_ptr<device_system> make_system(const api& cl, const device_info& dev,
                                           const host_matrix& a, std::span<const double> d,
                                           precision p, int nrhs, bool fp64, const tuning& t) {
  return std::make_unique<opencl_system>(cl, dev, a, d, p, nrhs, fp64, t);
}

}  // namespace cnc::ocl
