// The CUDA device_system, construction and the PCG steps (the vector surface is in
// cuda_surface.cpp).
//
// The matrix is uploaded once (values in double, or float for single/mixed) and kept. The k
// right-hand sides are split into groups of at most 8; a group stores its vectors interleaved
// (cuda_kernels.hpp) so that one matrix pass serves the whole group. Each step of backend.hpp is
// one kernel per group; iterate(count) records `count` iterations into a CUDA graph once and
// replays it, so a small system pays one graph launch per check instead of 3 launches and a
// host synchronization per iteration. Smaller still (a SELL matrix in one group, at most
// persistent_rows rows x systems): iterate(count) is ONE cooperative launch running the count
// iterations with two grid barriers per iteration (pcg_persistent.cu), since there the
// kernel boundaries, not the bytes, set the time. Only read_state, get_x, apply, read and dots
// synchronize.
#include "backends/cuda/cuda_system.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_kernels.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc::cuda_host {
namespace {

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
// load of a row in flight together. At least one lane per block element: the width is bb lanes
// (one per element) times the blocks read side by side, a power of two (at least 2 when b is 1).
int choose_width(int b, double avg_per_row, int unroll) {
  const int bb = b * b;
  int blocks = bb == 1 ? 2 : 1;
  while (blocks * bb < 32 && double(unroll) * blocks < avg_per_row) blocks *= 2;
  return blocks * bb;
}

bool valid_width(int b, int w) {
  if (w < 2 || w > 32 || (w & (w - 1)) != 0) return false;
  return b == 1 || w % (b * b) == 0;
}

// Rows x systems up to which iterate() uses the persistent kernel (CNC_CUDA_PERSISTENT_ROWS
// overrides; 0 turns it off). Above, the kernels stream from HBM and kernel boundaries cost a
// small share; measured on the H200 in bench/results/cuda.md.
constexpr int persistent_rows = 1 << 19;
constexpr int max_graph_iters = 32;  // iterations recorded into one graph

}  // namespace

cuda_system::cuda_system(int dev, int sm_count, bool cooperative, stager& st, const host_matrix& a,
                         std::span<const double> d, precision p, int nrhs)
    : stager_(&st), dev_(dev), pr_(p), nrhs_(nrhs) {
  if (nrhs < 1) throw error(CNC_ERR_INVALID_VALUE, "CUDA backend: nrhs must be >= 1");
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  n_real_ = a.csr.n;
  n_ = a.n_padded();
  if (static_cast<std::int64_t>(d.size()) < n_)
    throw error(CNC_ERR_SIZE_MISMATCH, "CUDA backend: inverse diagonal shorter than n_padded");
  const bool f32_values = pr_ != precision::f64;
  vsize_ = pr_ == precision::f32 ? sizeof(float) : sizeof(double);

  double avg = 0.0;
  if (a.fmt == format::csr) {
    const csr_view m = a.csr;
    mat_.fmt = format::csr;
    mat_.rows = m.n;
    row_ptr_ = upload(*stager_, m.row_ptr.data(), m.row_ptr.size(), stream_);
    col_ = upload(*stager_, m.col.data(), m.col.size(), stream_);
    val_ = upload_values(*stager_, m.val, f32_values, stream_);
    avg = m.n ? static_cast<double>(m.nnz()) / m.n : 0.0;
  } else if (a.fmt == format::zcsr) {
    const zcsr_view& m = *a.zcsr;
    mat_.fmt = format::zcsr;
    mat_.rows = m.n;
    row_ptr_ = upload(*stager_, m.row_ptr.data(), m.row_ptr.size(), stream_);
    col_ = upload(*stager_, m.col.data(), m.col.size(), stream_);
    val_ = upload_values(*stager_, m.val, f32_values, stream_);
    avg = m.n ? static_cast<double>(m.nnz()) / m.n : 0.0;
  } else if (a.fmt == format::zsell) {
    build_zsell(*a.zcsr, f32_values);
  } else if (a.fmt == format::sell && !a.sell) {
    build_sell(a.csr, f32_values);
  } else if (a.fmt == format::sell) {
    const sell_matrix& m = *a.sell;
    mat_.fmt = format::sell;
    mat_.rows = m.n_slices;
    row_ptr_ = upload(*stager_, m.slice_ptr.data(), m.slice_ptr.size(), stream_);
    col_ = upload(*stager_, m.col.data(), m.col.size(), stream_);
    val_ = upload_values(*stager_, m.val, f32_values, stream_);
  } else {
    const bcrs_matrix& m = *a.bcrs;
    mat_.fmt = a.fmt;
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
  split_long_rows(a.csr.nnz());  // CSR only

  if (pr_ == precision::f32) {
    std::vector<float> df(d.begin(), d.begin() + n_);
    d_ = upload(*stager_, df.data(), df.size(), stream_);
    check(cudaStreamSynchronize(stream_), "upload");
  } else {
    d_ = upload(*stager_, d.data(), static_cast<std::size_t>(n_), stream_);
  }
  setup_groups(sm_count, cooperative);
}

// From a canonical CSR in device memory (the caller's arrays), double precision: CSR (and a
// complex CSR, zcsr) is copied device to device, SELL built from it, the inverse diagonal
// computed here.
cuda_system::cuda_system(int dev, int sm_count, bool cooperative, stager& st, const device_csr& a,
                         format f, bool jacobi, int nrhs, bool keep_pattern, device_build& info)
    : stager_(&st), dev_(dev), pr_(precision::f64), nrhs_(nrhs) {
  if (nrhs < 1) throw error(CNC_ERR_INVALID_VALUE, "CUDA backend: nrhs must be >= 1");
  if (is_complex(f) && keep_pattern)  // (the pipeline never asks: it prepares anew)
    throw error(CNC_ERR_INTERNAL, "CUDA backend: a complex system is not refilled");
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  const std::int32_t rows = is_complex(f) ? 2 * a.n : a.n;  // the real-equivalent's (complex)
  n_real_ = rows;
  n_ = padded_rows(rows, f);
  if (f == format::sell || f == format::zsell) {
    info.stored = build_sell(a.row_ptr, a.col, a.val, a.n, false, f == format::zsell);
  } else if (f == format::csr || f == format::zcsr) {
    mat_.fmt = f;
    mat_.rows = a.n;
    row_ptr_ = device_buffer(sizeof(std::int64_t) * (std::size_t(a.n) + 1));
    col_ = device_buffer(sizeof(std::int32_t) * std::size_t(a.nnz));
    val_ = device_buffer(sizeof(double) * std::size_t(a.nnz) * (f == format::zcsr ? 2 : 1));
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
    mat_.fmt = f;
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
  check(is_complex(f)
            ? cuda::zcsr_inverse_diagonal(a.n, n_, a.row_ptr, a.col, a.val, jacobi, d_.as<double>(),
                                          zeros.as<unsigned long long>(), stream_)
            : cuda::inverse_diagonal(a.n, n_, a.row_ptr, a.col, a.val, jacobi, d_.as<double>(),
                                     zeros.as<unsigned long long>(), stream_),
        "inverse diagonal");
  unsigned long long z = 0;
  check(cudaMemcpyAsync(&z, zeros.get(), sizeof z, cudaMemcpyDeviceToHost, stream_),
        "inverse diagonal");
  if (keep_pattern && f != format::csr) {
    pattern_rp_ = device_buffer(sizeof(std::int64_t) * (std::size_t(a.n) + 1));
    check(cudaMemcpyAsync(pattern_rp_.get(), a.row_ptr, pattern_rp_.bytes(),
                          cudaMemcpyDeviceToDevice, stream_),
          "pattern copy");
    if (is_block(f) && a.nnz) {
      pattern_col_ = device_buffer(sizeof(std::int32_t) * std::size_t(a.nnz));
      check(cudaMemcpyAsync(pattern_col_.get(), a.col, pattern_col_.bytes(),
                            cudaMemcpyDeviceToDevice, stream_),
            "pattern copy");
    }
  }
  refillable_ = keep_pattern;
  nnz_ = a.nnz;
  split_long_rows(a.nnz);               // CSR only
  setup_groups(sm_count, cooperative);  // synchronizes
  info.zero_diagonals = std::int64_t(z);
}

// The values of the same pattern rewritten where the build put them (the layout is untouched,
// so a captured graph and the launch set-up stay valid), then the diagonal, as the build does.
bool cuda_system::refill_values(const double* val, bool jacobi, std::int64_t* zero_diagonals) {
  if (!refillable_) return false;
  check(cudaSetDevice(dev_), "cudaSetDevice");
  device_buffer zeros(sizeof(unsigned long long));
  check(cudaMemsetAsync(zeros.get(), 0, zeros.bytes(), stream_), "cudaMemset");
  auto* const z = zeros.as<unsigned long long>();
  if (mat_.fmt == format::sell) {
    check(cuda::sell_refill(n_real_, pattern_rp_.as<std::int64_t>(), val,
                            row_ptr_.as<std::int64_t>(), col_.as<std::int32_t>(), val_.as<double>(),
                            jacobi, d_.as<double>(), z, stream_),
          "SELL refill");
  } else if (mat_.fmt == format::csr) {
    if (nnz_)
      check(cudaMemcpyAsync(val_.get(), val, sizeof(double) * std::size_t(nnz_),
                            cudaMemcpyDeviceToDevice, stream_),
            "CSR refill");
    check(cuda::inverse_diagonal(n_real_, n_, row_ptr_.as<std::int64_t>(), col_.as<std::int32_t>(),
                                 val_.as<double>(), jacobi, d_.as<double>(), z, stream_),
          "inverse diagonal");
  } else {
    const std::int64_t* rp = pattern_rp_.as<std::int64_t>();
    const std::int32_t* col = pattern_col_.as<std::int32_t>();
    check(cuda::bcrs_fill(block_size(mat_.fmt), n_real_, rp, col, val, row_ptr_.as<std::int64_t>(),
                          col_.as<std::int32_t>(), val_.as<double>(), stream_),
          "BCRS refill");
    check(cuda::inverse_diagonal(n_real_, n_, rp, col, val, jacobi, d_.as<double>(), z, stream_),
          "inverse diagonal");
  }
  unsigned long long count = 0;
  check(cudaMemcpyAsync(&count, z, sizeof count, cudaMemcpyDeviceToHost, stream_), "refill");
  check(cudaStreamSynchronize(stream_), "refill");
  *zero_diagonals = std::int64_t(count);
  return true;
}

// Work vectors, groups, launch configuration; the matrix and d_ are on the device already.
void cuda_system::setup_groups(int sm_count, bool cooperative) {
  mat_.stream = env_int(env::var::cuda_stream_loads, 1) != 0;  // 0: through __ldg (tuning)
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
    if (mat_.fmt == format::sell || mat_.fmt == format::zsell) {
      g.width = sell_slice;  // one warp per slice, a lane per (complex) row
    } else {
      g.width = choose_width(block_size(mat_.fmt), avg_per_row_,
                             std::max(2, cuda::spmv_unroll(kc, pr_ == precision::f64 ? 8 : 4)));
      const int forced = env_int(env::var::cuda_spmv_width, 0);  // tuning and tests
      if (forced && valid_width(block_size(mat_.fmt), forced)) g.width = forced;
    }
    const long long rows_per_block = cuda::block_threads / g.width;
    int smax = cuda::spmv_max_grid(pr_, mat_.fmt, g.width, kc, sm_count);
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
    g.mask = (1u << k) - 1u;  // the vector surface: every system active
    groups_.push_back(std::move(g));
  }
  // The persistent kernel: one group, SELL, small enough that launches dominate.
  const long long limit = env_int(env::var::cuda_persistent_rows, persistent_rows);
  if (cooperative && mat_.fmt == format::sell && groups_.size() == 1 && n_ > 0 &&
      static_cast<long long>(n_) * groups_[0].view.kc <= limit) {
    const int kc = groups_[0].view.kc;
    int most = cuda::pcg_persistent_max_grid(pr_, kc, sm_count);
    if (most <= 0) check(cudaGetLastError(), "kernel occupancy query");
    const int per_sm = env_int(env::var::cuda_persistent_blocks_per_sm, 0);  // tuning
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
    mat_.sell_split = false;
  }
  check(cudaStreamSynchronize(stream_), "upload");
}

cuda_system::~cuda_system() {
  cudaSetDevice(dev_);
  for (auto& [count, exec] : graphs_) cudaGraphExecDestroy(exec);
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}

void cuda_system::set_vectors(const double* b, const double* x) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  scatter_all(
      b, [](group& g) { return g.b.get(); }, numbering());
  if (x) {
    scatter_all(
        x, [](group& g) { return g.x.get(); }, numbering());
  } else {
    for (group& g : groups_)
      check(cudaMemsetAsync(g.x.get(), 0, g.x.bytes(), stream_), "cudaMemset");
  }
  check(cudaStreamSynchronize(stream_), "set_vectors");
}

void cuda_system::init(const double* thr2) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  std::vector<rhs_state> st(nrhs_);
  for (int j = 0; j < nrhs_; ++j) st[j] = rhs_state{0, 0, 0, 0, thr2[j], running, 0};
  check(cudaMemcpyAsync(state_.get(), st.data(), sizeof(rhs_state) * nrhs_, cudaMemcpyHostToDevice,
                        stream_),
        "state upload");
  for (group& g : groups_) {
    check(cuda::spmv(pr_, matrix_for(g), g.view, false, g.x.get(), g.q.get(), stream_),
          "SpMV launch");
    check(cuda::init_vectors(pr_, g.view, stream_), "init launch");
  }
  check(cudaStreamSynchronize(stream_), "init");  // `st` must outlive the copy
}

void cuda_system::spmv_dot() {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check(launch_spmv_dot(), "SpMV launch");
}

void cuda_system::update_xr() {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check(launch_update_xr(), "update_xr launch");
}

void cuda_system::update_p() {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check(launch_update_p(), "update_p launch");
}

void cuda_system::iterate(int count) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  if (persistent_grid_ > 0) {
    const group& g = groups_[0];
    check(cuda::pcg_persistent(pr_, matrix_for(g), g.view, persistent_p_.get(),
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

void cuda_system::read_state(rhs_state* out) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  check(cudaMemcpyAsync(out, state_.get(), sizeof(rhs_state) * nrhs_, cudaMemcpyDeviceToHost,
                        stream_),
        "state read-back");
  check(cudaStreamSynchronize(stream_), "iterations");
}

void cuda_system::write_state(const rhs_state* in) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  // From pageable memory: staged before the call returns, then queued behind the steps before.
  check(
      cudaMemcpyAsync(state_.get(), in, sizeof(rhs_state) * nrhs_, cudaMemcpyHostToDevice, stream_),
      "state upload");
}

void cuda_system::get_x(double* x) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  gather_all(
      n_real_, [](group& g) { return g.x.get(); }, x, n_real_, numbering());
}

bool cuda_system::set_numbering(std::span<const std::int32_t> perm) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  numbering_ = device_buffer{};
  if (perm.empty()) return true;
  if (perm.size() != std::size_t(n_real_))
    throw error(CNC_ERR_INTERNAL, ": set_numbering: the ordering is not of the system's rows");
  numbering_ = upload(*stager_, perm.data(), perm.size(), stream_);
  return true;
}

void cuda_system::apply(const double* x, double* y) {
  check(cudaSetDevice(dev_), "cudaSetDevice");
  scatter_all(
      x, [](group& g) { return g.p.get(); }, numbering());
  for (group& g : groups_)
    check(cuda::spmv(pr_, matrix_for(g), g.view, false, g.p.get(), g.q.get(), stream_),
          "SpMV launch");
  gather_all(
      n_real_, [](group& g) { return g.q.get(); }, y, n_real_, numbering());
}

void cuda_system::read_vector(cuda::vec_id v, double* out) {
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

std::string cuda_system::config() const {
  std::string s = format_name(mat_.fmt);
  if (persistent_grid_ > 0) s += " persistent_grid=" + std::to_string(persistent_grid_);
  if (mat_.n_long > 0)
    s += " long_rows=" + std::to_string(mat_.n_long) + " (> " + std::to_string(mat_.long_min) +
         " entries) pieces=" + std::to_string(mat_.pieces);
  for (const group& g : groups_)
    s += " [kc=" + std::to_string(g.view.kc) + " width=" + std::to_string(g.width) +
         " spmv_grid=" + std::to_string(g.spmv_grid) + " vec_grid=" + std::to_string(g.view.grid) +
         "]";
  return s;
}

// SELL built on the device from the caller's CSR (backend::builds_on_device): the CSR goes up
// once, the padded layout is written where it is read, and the CSR is freed.
void cuda_system::build_sell(const csr_view& m, bool f32_values) {
  device_buffer rp = upload(*stager_, m.row_ptr.data(), m.row_ptr.size(), stream_);
  device_buffer col = upload(*stager_, m.col.data(), m.col.size(), stream_);
  device_buffer val = upload_values(*stager_, m.val, f32_values, stream_);
  build_sell(rp.as<std::int64_t>(), col.as<std::int32_t>(), val.get(), m.n, f32_values);
}

// ZSELL from the host's complex CSR the same way.
void cuda_system::build_zsell(const zcsr_view& m, bool f32_values) {
  device_buffer rp = upload(*stager_, m.row_ptr.data(), m.row_ptr.size(), stream_);
  device_buffer col = upload(*stager_, m.col.data(), m.col.size(), stream_);
  device_buffer val = upload_values(*stager_, m.val, f32_values, stream_);
  build_sell(rp.as<std::int64_t>(), col.as<std::int32_t>(), val.get(), m.n, f32_values, true);
}

// The same from a CSR in device memory (values already in the device's precision; with `pairs`
// a complex CSR of n complex rows, into ZSELL). Returns the entries stored.
std::int64_t cuda_system::build_sell(const std::int64_t* rp, const std::int32_t* col,
                                     const void* val, std::int32_t n, bool f32_values, bool pairs) {
  mat_.fmt = pairs ? format::zsell : format::sell;
  mat_.rows = (n + sell_slice - 1) / sell_slice;
  row_ptr_ = device_buffer(sizeof(std::int64_t) * (static_cast<std::size_t>(mat_.rows) + 1));
  std::size_t scratch_bytes = 0;
  check(cuda::sell_slice_offsets(n, nullptr, row_ptr_.as<std::int64_t>(), nullptr, &scratch_bytes,
                                 stream_),
        "SELL offsets (size)");
  device_buffer scratch(std::max<std::size_t>(scratch_bytes, 16));
  check(cuda::sell_slice_offsets(n, rp, row_ptr_.as<std::int64_t>(), scratch.get(), &scratch_bytes,
                                 stream_),
        "SELL offsets");
  std::int64_t entries = 0;
  check(cudaMemcpyAsync(&entries, row_ptr_.as<std::int64_t>() + mat_.rows, sizeof entries,
                        cudaMemcpyDeviceToHost, stream_),
        "SELL size read-back");
  check(cudaStreamSynchronize(stream_), "SELL offsets");
  col_ = device_buffer(sizeof(std::int32_t) * static_cast<std::size_t>(entries));
  val_ = device_buffer((f32_values ? sizeof(float) : sizeof(double)) * (pairs ? 2 : 1) *
                       static_cast<std::size_t>(entries));
  check(cuda::sell_fill(f32_values, pairs, n, rp, col, val, row_ptr_.as<std::int64_t>(),
                        col_.as<std::int32_t>(), val_.get(), stream_),
        "SELL fill");
  check(cudaStreamSynchronize(stream_), "SELL fill");  // before the CSR buffers go
  return entries;
}

// BCRS block-row offsets of a device CSR into block_ptr; returns the block count.
std::int64_t cuda_system::bcrs_offsets(const device_csr& a, int b, std::int64_t* block_ptr,
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

cuda::matrix_view cuda_system::matrix_for(const group& g) const {
  cuda::matrix_view m = mat_;
  m.grid = g.spmv_grid;
  m.width = g.width;
  return m;
}

cudaError_t cuda_system::launch_spmv_dot() {
  for (group& g : groups_) {
    const cudaError_t e = cuda::spmv(pr_, matrix_for(g), g.view, true, nullptr, nullptr, stream_);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t cuda_system::launch_update_xr() {
  for (group& g : groups_) {
    const cudaError_t e = cuda::update_xr(pr_, g.view, stream_);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t cuda_system::launch_update_p() {
  for (group& g : groups_) {
    const cudaError_t e = cuda::update_p(pr_, g.view, stream_);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// The executable graph of `count` iterations, recorded on first use.
cudaGraphExec_t cuda_system::graph_for(int count) {
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

}  // namespace cnc::cuda_host
