// CPU backend: the backend.hpp contract on a persistent thread pool with per-ISA SIMD kernels.
//
// Rows are cut into chunks by entries (cpu_partition.hpp: at most chunk_rows rows and about
// chunk_entries entries each, long CSR rows cut into pieces), fixed by the matrix alone; each
// chunk and piece writes its partial sums to its own slot and the calling thread adds the slots
// in chunk (piece) order, so a solve is bit-identical run to run and for any thread count.
// Threads claim work items dynamically (see for_items). The scalar logic of the contract runs on
// the host, between the parallel sweeps.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cpu/cpu_kernels.hpp"
#include "backends/cpu/cpu_partition.hpp"
#include "backends/interleave.hpp"
#include "cnc.h"
#include "conversion/reorder.hpp"
#include "util/environment.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/thread_pool.hpp"

namespace cnc {

const char* cpu_simd_level();

namespace {

constexpr std::int32_t chunk_rows = 8192;
// Entries of one chunk: 8192 rows of a 7-point stencil (57 K) fit, so stencils keep their row
// chunks; a 2 M-row power-law graph (22 M entries) gives ~340 chunks, enough for 16 threads to
// finish together. Rows longer than this are long (CNC_LONG_ROW_MIN = 0), cut into pieces of
// half of it, so a piece is never the largest work item.
constexpr std::int64_t chunk_entries = 65536;
constexpr std::int64_t piece_entries = chunk_entries / 2;
// Below this many rows (or entries) per thread, waking the pool costs more than the sweep saves.
constexpr std::int32_t min_rows_per_thread = 32768;
constexpr std::int64_t min_entries_per_thread = 4 * chunk_entries;

const cpu_kernel_table* kernels_for(precision p) {
  const std::string isa = cpu_simd_level();
  if (isa == "avx512") return cpu_kernels_avx512(p);
  if (isa == "avx2") return cpu_kernels_avx2(p);
  return cpu_kernels_generic(p);
}

// Plain vector of T whose pages are first touched by the pool, in the threads' own ranges. From
// 4 MiB on, in transparent huge pages where the kernel gives them on request
// (/sys/kernel/mm/transparent_hugepage/enabled "madvise", Debian's default): the SpMV gathers
// from x at random, and with 4 KiB pages a gather over more than the TLB's reach also costs a
// page walk.
template <class T>
class pool_vector {
  static_assert(std::is_trivial_v<T>, "allocated, not constructed");

 public:
  void allocate(thread_pool& pool, std::int64_t n) {
    const std::size_t count = std::size_t(n > 0 ? n : 1), bytes = count * sizeof(T);
    constexpr std::size_t huge = std::size_t(2) << 20;
    if (bytes >= 2 * huge) {
      void* m = std::aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
      if (!m) throw std::bad_alloc();
      madvise(m, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);  // a hint: ignored if refused
      data_.reset(static_cast<T*>(m));
    } else {
      data_.reset(static_cast<T*>(std::malloc(bytes)));
      if (!data_) throw std::bad_alloc();
    }
    T* d = data_.get();
    pool.run([&](int t) {
      std::int64_t b = n * t / pool.size(), e = n * (t + 1) / pool.size();
      std::memset(static_cast<void*>(d + b), 0, sizeof(T) * std::size_t(e - b));
    });
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](std::int64_t i) { return data_.get()[i]; }

 private:
  struct release {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, release> data_;
};

template <class VT, class MT>
class cpu_system final : public device_system {
 public:
  cpu_system(thread_pool& pool, const cpu_kernel_table* kt, const host_matrix& a,
             std::span<const double> d, int k)
      : pool_(pool), kt_(kt), k_(k), n_(a.csr.n) {
    std::span<const double> vals = a.csr.val;
    step_.a.fmt = a.fmt, step_.a.group = group_rows(a.fmt);
    if (is_block(a.fmt)) {
      step_.a.rows = a.bcrs->n_block_rows;
      step_.a.row_ptr = a.bcrs->row_ptr.data();
      step_.a.col = a.bcrs->col.data();
      vals = a.bcrs->val;
    } else if (a.fmt == format::zcsr) {
      step_.a.rows = a.zcsr->n;
      step_.a.row_ptr = a.zcsr->row_ptr.data();
      step_.a.col = a.zcsr->col.data();
      vals = a.zcsr->val;
    } else if (a.fmt == format::sell) {
      step_.a.rows = a.sell->n_slices;
      step_.a.row_ptr = a.sell->slice_ptr.data();
      step_.a.col = a.sell->col.data();
      vals = a.sell->val;
    } else {
      step_.a.rows = a.csr.n;
      step_.a.row_ptr = a.csr.row_ptr.data();
      step_.a.col = a.csr.col.data();
      // Prefetched gathers for scattered columns in an x beyond the caches
      // (CNC_CPU_GATHER_PREFETCH=0|1 forces it: tests and measurements).
      const long long forced = env::integer(env::var::cpu_gather_prefetch, -1);
      step_.a.prefetch_gathers =
          forced >= 0
              ? forced != 0
              : a.csr.n >= min_rows &&
                    gather_lines_per_entry(a.csr.n, step_.a.row_ptr,
                                           reinterpret_cast<const std::uint32_t*>(step_.a.col), 0,
                                           pool_.size()) > poor_locality;
    }
    const std::int64_t nvals = static_cast<std::int64_t>(vals.size());
    const double* v = vals.data();
    if constexpr (std::is_same_v<MT, double>) {
      step_.a.val = v;  // the caller keeps the host matrix alive (backend.hpp)
    } else {
      values_.resize(std::size_t(nvals));
      for (std::int64_t t = 0; t < nvals; ++t) values_[t] = MT(v[t]);
      step_.a.val = values_.data();
    }
    np_ = a.n_padded();
    const std::int64_t len = std::int64_t(np_) * k;
    for (auto* vec : {&x_, &r_, &p_, &q_, &b_}) vec->allocate(pool_, len);
    vectors_ = {x_.data(), r_.data(), p_.data(), q_.data(), b_.data()};
    csr_ = a.csr;  // the caller keeps the host matrix alive (keeps_host_matrix)
    mask_.assign(std::size_t(k), 1);
    d_.allocate(pool_, np_);
    for (std::int32_t i = 0; i < np_; ++i) d_[i] = VT(d[i]);
    step_.k = k;
    step_.x = x_.data(), step_.r = r_.data(), step_.p = p_.data(), step_.q = q_.data();
    step_.b = b_.data(), step_.d = d_.data();
    make_partition(a.fmt);
    part_.assign(std::size_t(n_chunks_) * 2 * k, 0.0);
    alpha_.assign(std::size_t(k), 0.0);
    beta_.assign(std::size_t(k), 0.0);
    active_.assign(std::size_t(k), 0);
    stepped_.assign(std::size_t(k), 0);
    state_.assign(std::size_t(k), rhs_state{0, 0, 0, 0, 0, converged, 0});
    step_.alpha = alpha_.data(), step_.beta = beta_.data(), step_.active = active_.data();
    step_.stepped = stepped_.data();
  }

  void set_vectors(const double* b, const double* x) override {
    interleave(b, n_, k_, n_, b_.data(), 1);
    interleave(x, n_, k_, n_, x_.data(), 1);
  }

  void init(const double* thr2) override {
    spmv_sweep(
        step_.x, r_.data(),
        [&](std::int32_t c) { kt_->init(step_, first_row(c), last_row(c), slot(2, c)); },
        [&](std::int32_t c) { kt_->init_tail(step_, first_row(c), last_row(c), slot(2, c)); });
    for (int j = 0; j < k_; ++j) {
      rhs_state& s = state_[j];
      s.rz = sum(2, 2 * j), s.rr = sum(2, 2 * j + 1), s.rz_new = 0, s.pq = 0, s.thr2 = thr2[j];
      s.iters = 0;
      s.status = cnc_status_of_residual(s.rr, s.rz, s.thr2);
    }
  }

  void spmv_dot() override {
    if (!refresh_active()) return;
    spmv_sweep(
        step_.p, q_.data(),
        [&](std::int32_t c) { kt_->spmv_dot(step_, first_row(c), last_row(c), slot(1, c)); },
        [&](std::int32_t c) { kt_->spmv_dot_tail(step_, first_row(c), last_row(c), slot(1, c)); });
    for (int j = 0; j < k_; ++j)
      if (active_[j]) state_[j].pq = sum(1, j);
  }

  void update_xr() override {
    for (int j = 0; j < k_; ++j) {
      rhs_state& s = state_[j];
      if (s.status != running) continue;
      s.status = cnc_status_of_pq(s.pq);
      if (s.status == running) alpha_[j] = s.rz / s.pq;
    }
    if (!refresh_active()) return;
    for_chunks(
        [&](std::int32_t c) { kt_->update_xr(step_, first_row(c), last_row(c), slot(2, c)); });
    for (int j = 0; j < k_; ++j)
      if (active_[j]) {
        state_[j].rz_new = sum(2, 2 * j), state_[j].rr = sum(2, 2 * j + 1);
        state_[j].iters += 1;
      }
  }

  void update_p() override {
    bool any = false;
    for (int j = 0; j < k_; ++j) {
      rhs_state& s = state_[j];
      stepped_[j] = s.status == running;  // update_xr took its step: rz, pq are still its own
      if (!stepped_[j]) continue;
      any = true;
      alpha_[j] = s.rz / s.pq;
      s.status = cnc_status_of_residual(s.rr, s.rz_new, s.thr2);
      if (s.status == running) beta_[j] = s.rz_new / s.rz, s.rz = s.rz_new;
    }
    refresh_active();
    if (!any) return;
    for_chunks([&](std::int32_t c) { kt_->update_p(step_, first_row(c), last_row(c)); });
  }

  void read_state(rhs_state* out) override {
    std::memcpy(out, state_.data(), sizeof(rhs_state) * std::size_t(k_));
  }
  void write_state(const rhs_state* in) override {
    std::memcpy(state_.data(), in, sizeof(rhs_state) * std::size_t(k_));
  }

  void get_x(double* x) override { deinterleave(x_.data(), n_, k_, x, 1); }

  void apply(const double* x, double* y) override {
    interleave(x, n_, k_, np_, p_.data(), 1);
    step_.in = p_.data(), step_.out = q_.data();
    spmv_sweep(
        step_.in, q_.data(), [&](std::int32_t c) { kt_->apply(step_, first_row(c), last_row(c)); },
        [](std::int32_t) {});
    deinterleave(q_.data(), n_, k_, y, 1);
  }

  // The vector surface: plain loops over fixed row chunks (the compiler vectorizes them);
  // masked columns are skipped, dots sum their chunk partials in chunk order.
  int add_vectors(int count) override {
    memory::reserve(double(count) * np_ * k_ * sizeof(VT), [&] {
      return "the CPU backend's " + std::to_string(count) + " work vector(s) (" +
             std::to_string(np_) + " rows, " + std::to_string(k_) + " system(s), " +
             std::to_string(sizeof(VT)) + " bytes)";
    });
    const int first = int(vectors_.size());
    for (int c = 0; c < count; ++c) {
      extra_.push_back(std::make_unique<pool_vector<VT>>());
      extra_.back()->allocate(pool_, std::int64_t(np_) * k_);
      vectors_.push_back(extra_.back()->data());
    }
    return first;
  }

  void release_vectors() override {
    extra_.clear();
    vectors_.resize(vec_first_extra);
  }

  void set_mask(const std::uint8_t* active) override { mask_.assign(active, active + k_); }

  void spmv(int in, int out) override {
    step_.in = vectors_.at(in), step_.out = scratch();
    VT* o = vectors_.at(out);
    auto copy = [&](std::int32_t c) {
      over_rows(c, [&](std::int64_t e, std::int64_t, int) { o[e] = y_[e]; });
    };
    apply_then(copy);
  }

  void precondition(int in, int out) override {
    const VT *d = d_.data(), *v = vectors_.at(in);
    VT* o = vectors_.at(out);
    for_chunks([&](std::int32_t c) {
      over_rows(c, [&](std::int64_t e, std::int64_t i, int) { o[e] = d[i] * v[e]; });
    });
  }

  // Forward sweep w = (D/ω + L)⁻¹ in, then out = (2 - ω) (D/ω + U)⁻¹ (D/ω) w, row by row on
  // one thread (each row needs the rows before it), every unmasked column in the same pass.
  void ssor(int in, int out, double omega) override {
    if (!(omega > 0.0 && omega < 2.0))
      throw error(CNC_ERR_INVALID_VALUE, ": SSOR needs 0 < omega < 2");
    const VT* v = vectors_.at(in);
    VT* o = vectors_.at(out);
    if (v == o) throw error(CNC_ERR_INVALID_VALUE, ": ssor into its own input");
    VT* w = scratch();
    const csr_view& a = csr_;
    std::vector<double> s(static_cast<std::size_t>(k_));
    for (std::int32_t i = 0; i < n_; ++i) {  // (D/ω + L) w = v
      std::fill(s.begin(), s.end(), 0.0);
      for (std::int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1] && a.col[t] < i; ++t)
        for (int j = 0; j < k_; ++j) s[j] += a.val[t] * double(w[std::int64_t(a.col[t]) * k_ + j]);
      const double dw = omega * double(d_[i]);  // (a_ii / ω)⁻¹
      for (int j = 0; j < k_; ++j)
        if (mask_[j])
          w[std::int64_t(i) * k_ + j] = VT((double(v[std::int64_t(i) * k_ + j]) - s[j]) * dw);
    }
    for (std::int32_t i = n_ - 1; i >= 0; --i) {  // (D/ω + U) out = (D/ω) w
      std::fill(s.begin(), s.end(), 0.0);
      for (std::int64_t t = a.row_ptr[i + 1] - 1; t >= a.row_ptr[i] && a.col[t] > i; --t)
        for (int j = 0; j < k_; ++j) s[j] += a.val[t] * double(o[std::int64_t(a.col[t]) * k_ + j]);
      const double dw = omega * double(d_[i]);
      for (int j = 0; j < k_; ++j)
        if (mask_[j]) {
          const std::int64_t e = std::int64_t(i) * k_ + j;
          o[e] = VT((double(w[e]) / dw - s[j]) * dw);
        }
    }
    const VT scale = VT(2.0 - omega);
    for (std::int32_t i = 0; i < n_; ++i)
      for (int j = 0; j < k_; ++j)
        if (mask_[j]) o[std::int64_t(i) * k_ + j] *= scale;
  }

  void residual(int in, int out) override {
    step_.in = vectors_.at(in), step_.out = scratch();
    const VT* b = b_.data();
    VT* o = vectors_.at(out);
    auto subtract = [&](std::int32_t c) {
      over_rows(c, [&](std::int64_t e, std::int64_t, int) { o[e] = b[e] - y_[e]; });
    };
    apply_then(subtract);
  }

  // y_ = A step_.in, then finish(c) for every chunk c once its rows of y_ are final (right after
  // the chunk's product, or after the pieces of a long row are added).
  template <class F>
  void apply_then(const F& finish) {
    spmv_sweep(
        step_.in, y_.data(),
        [&](std::int32_t c) {
          kt_->apply(step_, first_row(c), last_row(c));
          finish(c);
        },
        finish);
  }

  void dots(int u, const int* v, int count, double* out) override {
    const std::size_t width = std::size_t(count) * k_;
    dot_part_.assign(std::size_t(n_chunks_) * width, 0.0);
    const VT* uu = vectors_.at(u);
    std::vector<const VT*> vv(static_cast<std::size_t>(count));
    for (int t = 0; t < count; ++t) vv[t] = vectors_.at(v[t]);
    for_chunks([&](std::int32_t c) {
      double* part = dot_part_.data() + std::size_t(c) * width;
      const std::int64_t i0 = scalar_row(first_row(c)), i1 = scalar_row(last_row(c));
      for (int t = 0; t < count; ++t)
        for (int j = 0; j < k_; ++j) {
          if (!mask_[j]) continue;
          double s = 0.0;
          for (std::int64_t i = i0; i < i1; ++i)
            s += double(uu[i * k_ + j]) * double(vv[t][i * k_ + j]);
          part[std::size_t(t) * k_ + j] = s;
        }
    });
    for (std::size_t e = 0; e < width; ++e) {
      double s = 0.0;
      for (std::int32_t c = 0; c < n_chunks_; ++c) s += dot_part_[std::size_t(c) * width + e];
      out[e] = s;
    }
  }

  void axpby(const double* alpha, int x, const double* beta, int y) override {
    std::vector<VT> al(static_cast<std::size_t>(k_)), be(al.size());
    bool overwrite = true, accumulate = true;
    for (int j = 0; j < k_; ++j) {
      al[j] = VT(alpha[j]), be[j] = VT(beta[j]);
      if (mask_[j])
        overwrite = overwrite && beta[j] == 0.0, accumulate = accumulate && beta[j] == 1.0;
    }
    const VT* xv = vectors_.at(x);
    VT* yv = vectors_.at(y);
    for_chunks([&](std::int32_t c) {
      if (overwrite)
        over_rows(c, [&](std::int64_t e, std::int64_t, int j) { yv[e] = al[j] * xv[e]; });
      else if (accumulate)
        over_rows(c, [&](std::int64_t e, std::int64_t, int j) { yv[e] += al[j] * xv[e]; });
      else
        over_rows(c, [&](std::int64_t e, std::int64_t, int j) {
          yv[e] = be[j] == VT(0) ? al[j] * xv[e] : al[j] * xv[e] + be[j] * yv[e];
        });
    });
  }

  // Pairs by the chunk holding their re row (each pair once, whatever the chunk boundaries),
  // re and im read before either is written (x == y).
  void zaxpby(const double* alpha, int x, const double* beta, int y) override {
    std::vector<VT> ar(static_cast<std::size_t>(k_)), ai(ar.size()), br(ar.size()), bi(ar.size());
    std::vector<char> over(ar.size());
    for (int j = 0; j < k_; ++j) {
      ar[j] = VT(alpha[2 * j]), ai[j] = VT(alpha[2 * j + 1]);
      br[j] = VT(beta[2 * j]), bi[j] = VT(beta[2 * j + 1]);
      over[j] = beta[2 * j] == 0.0 && beta[2 * j + 1] == 0.0;
    }
    const VT* xv = vectors_.at(x);
    VT* yv = vectors_.at(y);
    for_chunks([&](std::int32_t c) {
      over_pairs(c, [&](std::int64_t re, std::int64_t im, std::int64_t, int j) {
        const VT xr = xv[re], xi = xv[im];
        VT sr = ar[j] * xr - ai[j] * xi, si = ar[j] * xi + ai[j] * xr;
        if (!over[j]) {
          const VT yr = yv[re], yi = yv[im];
          sr += br[j] * yr - bi[j] * yi, si += br[j] * yi + bi[j] * yr;
        }
        yv[re] = sr, yv[im] = si;
      });
    });
  }

  // One pass over y per chunk of rows: each element takes its whole sum in i order, in the
  // vectors' precision like axpby.
  void combine(const int* v, int count, const double* coef, const double* beta, int y) override {
    std::vector<const VT*> vv(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) vv[i] = vectors_.at(v[i]);
    VT* yv = vectors_.at(y);
    for (const VT* p : vv)
      if (p == yv) throw error(CNC_ERR_INVALID_VALUE, ": combine into one of its inputs");
    std::vector<VT> cf(std::size_t(count) * k_), be(static_cast<std::size_t>(k_));
    for (std::size_t e = 0; e < cf.size(); ++e) cf[e] = VT(coef[e]);
    for (int j = 0; j < k_; ++j) be[j] = VT(beta[j]);
    for_chunks([&](std::int32_t c) {
      over_rows(c, [&](std::int64_t e, std::int64_t, int j) {
        VT s = be[j] == VT(0) ? VT(0) : be[j] * yv[e];
        for (int i = 0; i < count; ++i) s += cf[std::size_t(i) * k_ + j] * vv[i][e];
        yv[e] = s;
      });
    });
  }

  void set_complex_jacobi(const double* dinv) override {
    if (!zd_.data()) zd_.allocate(pool_, np_);
    for (std::int32_t i = 0; i < np_; ++i) zd_[i] = i < n_ ? VT(dinv[i]) : VT(0);
  }
  void zprecondition(int in, int out) override {
    if (!zd_.data())
      throw error(CNC_ERR_INVALID_VALUE, ": zprecondition before set_complex_jacobi");
    const VT* v = vectors_.at(in);
    VT* o = vectors_.at(out);
    for_chunks([&](std::int32_t c) {
      over_pairs(c, [&](std::int64_t re, std::int64_t im, std::int64_t q, int) {
        const VT dr = zd_[2 * q], di = zd_[2 * q + 1], vr = v[re], vi = v[im];
        o[re] = dr * vr - di * vi, o[im] = dr * vi + di * vr;
      });
    });
  }

  // The fused complex forms (backend.hpp), over pairs by the chunk holding their re row as
  // zaxpby; zdots' chunk partials summed in chunk order as dots'.
  bool fused_complex() const override { return true; }
  void zdots(int u, const int* v, int count, double* out) override {
    const std::size_t width = 2 * std::size_t(count) * k_;
    dot_part_.assign(std::size_t(n_chunks_) * width, 0.0);
    const VT* uu = vectors_.at(u);
    std::vector<const VT*> vv(static_cast<std::size_t>(count));
    for (int t = 0; t < count; ++t) vv[t] = vectors_.at(v[t]);
    const std::int64_t k = k_;
    for_chunks([&](std::int32_t c) {
      double* part = dot_part_.data() + std::size_t(c) * width;
      const auto [q0, q1] = chunk_pairs(c);
      for (int t = 0; t < count; ++t)
        for (int j = 0; j < k_; ++j) {
          if (!mask_[j]) continue;
          double sr = 0.0, si = 0.0;
          for (std::int64_t q = q0; q < q1; ++q) {
            const std::int64_t re = 2 * q * k + j, im = re + k;
            const double ur = double(uu[re]), ui = double(uu[im]);
            const double vr = double(vv[t][re]), vi = double(vv[t][im]);
            sr += ur * vr + ui * vi, si += ur * vi - ui * vr;
          }
          part[2 * (std::size_t(t) * k_ + j)] = sr, part[2 * (std::size_t(t) * k_ + j) + 1] = si;
        }
    });
    for (std::size_t e = 0; e < width; ++e) {
      double s = 0.0;
      for (std::int32_t c = 0; c < n_chunks_; ++c) s += dot_part_[std::size_t(c) * width + e];
      out[e] = s;
    }
  }
  void zcombine(const int* v, int count, const double* coef, const double* beta, int y) override {
    std::vector<const VT*> vv(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) vv[i] = vectors_.at(v[i]);
    VT* yv = vectors_.at(y);
    for (const VT* p : vv)
      if (p == yv) throw error(CNC_ERR_INVALID_VALUE, ": zcombine into one of its inputs");
    std::vector<VT> cf(2 * std::size_t(count) * k_), be(static_cast<std::size_t>(k_));
    for (std::size_t e = 0; e < cf.size(); ++e) cf[e] = VT(coef[e]);
    for (int j = 0; j < k_; ++j) be[j] = VT(beta[j]);
    for_chunks([&](std::int32_t c) {
      over_pairs(c, [&](std::int64_t re, std::int64_t im, std::int64_t, int j) {
        VT sr = VT(0), si = VT(0);
        if (be[j] != VT(0)) sr = be[j] * yv[re], si = be[j] * yv[im];
        for (int i = 0; i < count; ++i) {
          const VT cr = cf[2 * (std::size_t(i) * k_ + j)],
                   ci = cf[2 * (std::size_t(i) * k_ + j) + 1];
          const VT vr = vv[i][re], vi = vv[i][im];
          sr += cr * vr - ci * vi, si += cr * vi + ci * vr;
        }
        yv[re] = sr, yv[im] = si;
      });
    });
  }

  // Cross-column products (the kernel table's gram and combine): chunk partials summed in chunk
  // order.
  void block_dots(int u, int v, double* out) override {
    const std::size_t width = std::size_t(k_) * k_;
    const VT *uu = vectors_.at(u), *vv = vectors_.at(v);
    dot_part_.assign(std::size_t(n_chunks_) * width, 0.0);
    for_chunks([&](std::int32_t c) {
      kt_->gram(uu, vv, k_, scalar_row(first_row(c)), scalar_row(last_row(c)), mask_.data(),
                dot_part_.data() + std::size_t(c) * width);
    });
    sum_chunks(width, out);
  }
  // out[e] = Σ_c dot_part_[c * width + e] in chunk order.
  void sum_chunks(std::size_t width, double* out) const {
    for (std::size_t e = 0; e < width; ++e) {
      double s = 0.0;
      for (std::int32_t c = 0; c < n_chunks_; ++c) s += dot_part_[std::size_t(c) * width + e];
      out[e] = s;
    }
  }
  void block_combine(int v, const double* coef, const double* beta, int y) override {
    const VT* vv = vectors_.at(v);
    VT* yv = vectors_.at(y);
    if (vv == yv) throw error(CNC_ERR_INVALID_VALUE, ": block_combine into its input");
    std::vector<VT> cf(std::size_t(k_) * k_), be(static_cast<std::size_t>(k_));
    for (std::size_t e = 0; e < cf.size(); ++e) cf[e] = VT(coef[e]);
    for (int j = 0; j < k_; ++j) be[j] = VT(beta[j]);
    for_chunks([&](std::int32_t c) {
      kt_->combine(vv, nullptr, cf.data(), be.data(), k_, scalar_row(first_row(c)),
                   scalar_row(last_row(c)), mask_.data(), yv);
    });
  }

  // Block CG's fused steps: each chunk's rows in one pass (the products' partials summed in
  // chunk order). Real systems only.
  bool has_block_fused() const override { return step_.a.fmt != format::zcsr; }
  bool block_grams(const int* u, const int* v, int count, double* out) override {
    if (!has_block_fused() || count < 1 || count > block_max_pairs) return false;
    const std::size_t kk = std::size_t(k_) * k_, width = std::size_t(count) * kk;
    std::vector<const VT*> uu(static_cast<std::size_t>(count)), vv(static_cast<std::size_t>(count));
    for (int c = 0; c < count; ++c) uu[c] = vectors_.at(u[c]), vv[c] = vectors_.at(v[c]);
    const std::vector<std::uint8_t> all(std::size_t(k_), 1);
    dot_part_.assign(std::size_t(n_chunks_) * width, 0.0);
    for_chunks([&](std::int32_t ch) {
      // The pairs one after another over the chunk's rows, which they read again from cache.
      for (int c = 0; c < count; ++c)
        kt_->gram(uu[c], vv[c], k_, scalar_row(first_row(ch)), scalar_row(last_row(ch)), all.data(),
                  dot_part_.data() + std::size_t(ch) * width + std::size_t(c) * kk);
    });
    sum_chunks(width, out);
    return true;
  }
  static_assert(cpu_block_update::grams == block_update_grams, "update's products");
  bool block_update(int p, int q, const double* a, int x, int r, int z, double* out) override {
    if (!has_block_fused()) return false;
    const std::size_t kk = std::size_t(k_) * k_, width = block_update_size(k_);
    std::vector<VT> cf(kk);
    for (std::size_t e = 0; e < kk; ++e) cf[e] = VT(a[e]);
    cpu_block_update u;
    u.p = vectors_.at(p), u.q = vectors_.at(q), u.coef = cf.data(), u.d = d_.data();
    u.x = vectors_.at(x), u.r = vectors_.at(r), u.z = z == no_vector ? nullptr : vectors_.at(z);
    u.k = k_, u.mask = mask_.data();
    for (const void* w : {u.x, u.r, u.z})
      if (w && (w == u.p || w == u.q))
        throw error(CNC_ERR_INVALID_VALUE, ": block_update into its input");
    dot_part_.assign(std::size_t(n_chunks_) * width, 0.0);
    for_chunks([&](std::int32_t ch) {
      kt_->block_update(u, scalar_row(first_row(ch)), scalar_row(last_row(ch)),
                        dot_part_.data() + std::size_t(ch) * width);
    });
    sum_chunks(width, out);
    return true;
  }
  bool block_combine2(int v1, const double* c1, int v2, const double* c2, int y,
                      bool scale_v1) override {
    if (!has_block_fused()) return false;
    const VT *a = vectors_.at(v1), *b = vectors_.at(v2);
    VT* yv = vectors_.at(y);
    if (yv == a || yv == b) throw error(CNC_ERR_INVALID_VALUE, ": block_combine2 into its input");
    const std::size_t kk = std::size_t(k_) * k_;
    std::vector<VT> f1(kk), f2(kk), zero(std::size_t(k_), VT(0)), one(std::size_t(k_), VT(1));
    for (std::size_t e = 0; e < kk; ++e) f1[e] = VT(c1[e]), f2[e] = VT(c2[e]);
    const bool second = std::any_of(f2.begin(), f2.end(), [](VT c) { return c != VT(0); });
    const std::vector<std::uint8_t> all(std::size_t(k_), 1);
    for_chunks([&](std::int32_t ch) {  // y's chunk written, then added to while in cache
      const std::int64_t r0 = scalar_row(first_row(ch)), r1 = scalar_row(last_row(ch));
      kt_->combine(a, scale_v1 ? d_.data() : nullptr, f1.data(), zero.data(), k_, r0, r1,
                   all.data(), yv);
      if (second) kt_->combine(b, nullptr, f2.data(), one.data(), k_, r0, r1, all.data(), yv);
    });
    return true;
  }

  std::int64_t long_rows() const override { return parts_.long_rows(); }

  // Halo operations (backend.hpp): the halo block kept as a CSR of its own, applied row-parallel
  // in fixed pieces of rows (each row's sum in entry order: the same bits for any thread count).
  bool set_halo(const csr_view& halo, std::int32_t halo_size, const std::int32_t* send_rows,
                std::int32_t send_count) override {
    halo_.n = halo.n;
    halo_.row_ptr.assign(halo.row_ptr.begin(), halo.row_ptr.end());
    halo_.col.assign(halo.col.begin(), halo.col.end());
    halo_.val.assign(halo.val.begin(), halo.val.end());
    halo_size_ = halo_size;
    send_rows_.assign(send_rows, send_rows + send_count);
    halo_send_.assign(std::size_t(send_count) * std::size_t(k_), 0.0);
    halo_recv_.assign(std::size_t(halo_size) * std::size_t(k_), 0.0);
    return true;
  }
  double* halo_send() override { return halo_send_.data(); }
  double* halo_recv() override { return halo_recv_.data(); }

  void gather_halo(int v) override {
    const VT* src = vectors_.at(v);
    double* out = halo_send_.data();
    const std::size_t count = send_rows_.size();
    for (std::size_t t = 0; t < count; ++t)
      for (int j = 0; j < k_; ++j)
        out[t * std::size_t(k_) + std::size_t(j)] =
            double(src[std::int64_t(send_rows_[t]) * k_ + j]);
  }

  void add_halo(double alpha, int y) override {
    if (halo_.nnz() == 0) return;
    VT* yv = vectors_.at(y);
    const double* h = halo_recv_.data();
    constexpr std::int32_t rows_per_item = 4096;
    const std::int32_t items = (halo_.n + rows_per_item - 1) / rows_per_item;
    for_items(items, [&](std::int32_t w) {
      const std::int32_t r1 = std::min(halo_.n, (w + 1) * rows_per_item);
      for (std::int32_t r = w * rows_per_item; r < r1; ++r) {
        const std::int64_t e0 = halo_.row_ptr[std::size_t(r)],
                           e1 = halo_.row_ptr[std::size_t(r) + 1];
        if (e0 == e1) continue;
        for (int j = 0; j < k_; ++j) {
          if (!mask_[std::size_t(j)]) continue;
          double s = 0.0;
          for (std::int64_t e = e0; e < e1; ++e)
            s += halo_.val[std::size_t(e)] *
                 h[std::size_t(halo_.col[std::size_t(e)]) * std::size_t(k_) + std::size_t(j)];
          yv[std::int64_t(r) * k_ + j] += VT(alpha * s);
        }
      }
    });
  }

  void read(int v, double* out) override { deinterleave(vectors_.at(v), n_, k_, out, 1); }

 private:
  // The chunks and long rows of this matrix (cpu_partition.hpp); long rows in CSR only, by
  // CNC_LONG_ROW_MIN: > 0 rows longer are cut, < 0 none, 0 (unset) those over chunk_entries.
  // A ZCSR entry (a complex multiply, 4 real ones) weighs as a BCRS 2x2 block; its rows are not
  // cut (a complex row is one work item however long).
  void make_partition(format f) {
    const std::int64_t b = block_size(f), forced = env::integer(env::var::long_row_min, 0);
    const std::int64_t long_min = f != format::csr || forced < 0 ? 0
                                  : forced > 0                   ? forced
                                                                 : chunk_entries;
    const std::int64_t weight = is_block(f) ? b * b : f == format::zcsr ? 4 : 1;
    parts_ = make_cpu_partition(step_.a.rows, step_.a.row_ptr, weight, chunk_rows / step_.a.group,
                                chunk_entries, long_min, piece_entries);
    n_chunks_ = parts_.chunks();
    piece_sums_.assign(std::size_t(parts_.pieces()) * k_, VT(0));
    const std::int64_t entries = step_.a.rows > 0 ? step_.a.row_ptr[step_.a.rows] * weight : 0;
    const std::int64_t by_work =
        std::max<std::int64_t>(np_ / min_rows_per_thread, entries / min_entries_per_thread);
    threads_ = int(std::clamp<std::int64_t>(by_work, 1, pool_.size()));
  }
  std::int32_t first_row(std::int32_t c) const { return parts_.bound[std::size_t(c)]; }
  std::int32_t last_row(std::int32_t c) const { return parts_.bound[std::size_t(c) + 1]; }
  // Chunk c's `width * k` partial slot.
  double* slot(int width, std::int32_t c) { return part_.data() + std::size_t(c) * width * k_; }
  // Runs fn(w) for every work item w < count. Threads claim items from a shared counter, so a
  // thread slowed by another process (shared machines) does not hold the sweep up; results stay
  // bit-identical because each item writes its own slot. Inline when one thread suffices.
  template <class F>
  void for_items(std::int32_t count, F&& fn) {
    if (threads_ == 1) {
      for (std::int32_t w = 0; w < count; ++w) fn(w);
      return;
    }
    next_chunk_.store(0, std::memory_order_relaxed);
    pool_.run([&](int t) {
      if (t >= threads_) return;
      for (std::int32_t w = next_chunk_.fetch_add(1, std::memory_order_relaxed); w < count;
           w = next_chunk_.fetch_add(1, std::memory_order_relaxed))
        fn(w);
    });
  }
  template <class F>
  void for_chunks(F&& fn) {
    for_items(n_chunks_, fn);
  }
  // out = A in: chunk(c) for every chunk of short rows (its kernel writes out over its rows),
  // and the long rows' pieces as work items of their own, claimed first (so that the sweep ends
  // on the small chunks). Then, on this thread, each long row's pieces added in piece order into
  // out, and tail(c) for its chunk: the rest of the fused step over that row.
  template <class C, class T>
  void spmv_sweep(const void* in, VT* out, C&& chunk, T&& tail) {
    const std::int32_t pieces = parts_.pieces();
    const std::int64_t* rp = step_.a.row_ptr;
    for_items(pieces + n_chunks_, [&](std::int32_t w) {
      if (w >= pieces) {
        if (!parts_.long_chunk[std::size_t(w - pieces)]) chunk(w - pieces);
        return;
      }
      const std::int32_t l = parts_.piece_row[std::size_t(w)];
      const std::int32_t row = parts_.long_row[std::size_t(l)];
      const std::int64_t e0 = rp[row] + (w - parts_.piece_ptr[std::size_t(l)]) * parts_.piece;
      kt_->piece(step_, in, e0, std::min(e0 + parts_.piece, rp[row + 1]),
                 piece_sums_.data() + std::size_t(w) * k_);
    });
    for (std::size_t l = 0; l < parts_.long_row.size(); ++l) {
      for (int j = 0; j < k_; ++j) {
        VT s = VT(0);
        for (std::int32_t w = parts_.piece_ptr[l]; w < parts_.piece_ptr[l + 1]; ++w)
          s += piece_sums_[std::size_t(w) * k_ + j];
        out[std::int64_t(parts_.long_row[l]) * k_ + j] = s;
      }
      tail(parts_.long_of[l]);
    }
  }
  // Sum of partial `idx` over chunks, in chunk order.
  double sum(int width, int idx) const {
    double s = 0.0;
    for (std::int32_t c = 0; c < n_chunks_; ++c) s += part_[std::size_t(c) * width * k_ + idx];
    return s;
  }
  // y = A in for the masked operations: written whole, then copied where the mask allows.
  VT* scratch() {
    if (!y_.data()) y_.allocate(pool_, std::int64_t(np_) * k_);
    return y_.data();
  }
  // Scalar row of the first row of (block or slice) row r; the padded length past the end.
  std::int64_t scalar_row(std::int32_t r) const {
    return std::min<std::int64_t>(np_, std::int64_t(r) * step_.a.group);
  }
  // The complex pairs [q0, q1) whose re row (2q) lies in chunk c: each pair in one chunk.
  std::pair<std::int64_t, std::int64_t> chunk_pairs(std::int32_t c) const {
    return {(scalar_row(first_row(c)) + 1) / 2,
            std::min<std::int64_t>((scalar_row(last_row(c)) + 1) / 2, np_ / 2)};
  }
  // fn(re, im, q, j) for every pair q of chunk c (chunk_pairs) and every unmasked column j: its
  // elements re = 2 q k + j and im = re + k.
  template <class F>
  void over_pairs(std::int32_t c, F&& fn) const {
    const auto [q0, q1] = chunk_pairs(c);
    const std::int64_t k = k_;
    for (std::int64_t q = q0; q < q1; ++q)
      for (int j = 0; j < k_; ++j)
        if (mask_[j]) fn(2 * q * k + j, 2 * q * k + j + k, q, j);
  }
  // fn(element, row, column) for every row of chunk c and every unmasked column.
  template <class F>
  void over_rows(std::int32_t c, F&& fn) const {
    const std::int64_t i0 = scalar_row(first_row(c)), i1 = scalar_row(last_row(c));
    if (k_ == 1) {
      if (mask_[0])
        for (std::int64_t i = i0; i < i1; ++i) fn(i, i, 0);
      return;
    }
    for (std::int64_t i = i0; i < i1; ++i)
      for (int j = 0; j < k_; ++j)
        if (mask_[j]) fn(i * k_ + j, i, j);
  }
  bool refresh_active() {
    bool any = false;
    for (int j = 0; j < k_; ++j) {
      active_[j] = state_[j].status == running;
      any = any || active_[j];
    }
    return any;
  }

  thread_pool& pool_;
  const cpu_kernel_table* kt_;
  int k_;
  std::int32_t n_, np_ = 0;
  cpu_step step_;
  std::vector<MT> values_;
  pool_vector<VT> x_, r_, p_, q_, b_, d_;
  pool_vector<VT> zd_;  // D⁻¹ of set_complex_jacobi, (re, im) per pair; empty until set
  pool_vector<VT> y_;   // scratch of spmv and residual, made on first use
  cpu_partition parts_;
  std::vector<VT> piece_sums_;  // per piece of a long row, k sums
  std::int32_t n_chunks_ = 0;
  int threads_ = 1;
  std::atomic<std::int32_t> next_chunk_{0};
  std::vector<double> part_, alpha_, beta_;
  std::vector<std::uint8_t> active_, stepped_;
  std::vector<rhs_state> state_;
  csr_view csr_;              // the double CSR: SSOR's sweeps
  std::vector<VT*> vectors_;  // by index: x, r, p, q, b, then add_vectors' ones
  std::vector<std::unique_ptr<pool_vector<VT>>> extra_;
  std::vector<std::uint8_t> mask_;
  std::vector<double> dot_part_;
  csr_matrix halo_;  // set_halo's block and plan (libcnc_mpi); empty elsewhere
  std::int32_t halo_size_ = 0;
  std::vector<std::int32_t> send_rows_;
  std::vector<double> halo_send_, halo_recv_;
};

class cpu_backend final : public backend {
 public:
  explicit cpu_backend(int threads) : pool_(threads) {}
  const char* name() const override { return "cpu"; }
  int api_id() const override { return CNC_BACKEND_CPU; }
  bool keeps_host_matrix() const override { return true; }
  std::string device_name() const override {
    return std::to_string(pool_.size()) + " CPU thread" + (pool_.size() > 1 ? "s" : "") + ", " +
           cpu_simd_level();
  }
  std::unique_ptr<device_system> create_system(const host_matrix& a, std::span<const double> d,
                                               precision p, int nrhs) override {
    const double vb = p == precision::f32 ? 4 : 8, mb = p == precision::f64 ? 8 : 4;
    const double values = double(is_block(a.fmt)         ? a.bcrs->val.size()
                                 : a.fmt == format::sell ? a.sell->val.size()
                                 : a.fmt == format::zcsr ? a.zcsr->val.size()
                                                         : a.csr.val.size());
    memory::reserve(memory::cpu_system(a.n_padded(), values, nrhs, vb, mb, 0), [&] {
      return "the CPU backend's system (" + std::to_string(a.n_padded()) + " rows, " +
             std::to_string(nrhs) + " system(s): " + std::to_string(memory::cpu_vectors) +
             " vectors and the diagonal of " + std::to_string(int(vb)) + " bytes" +
             (mb < 8 ? ", the matrix's values in float)" : ")");
    });
    switch (p) {
      case precision::f64:
        return std::make_unique<cpu_system<double, double>>(pool_, kernels_for(precision::f64), a,
                                                            d, nrhs);
      case precision::f32:
        return std::make_unique<cpu_system<float, float>>(pool_, kernels_for(precision::f32), a, d,
                                                          nrhs);
      case precision::mixed:
        return std::make_unique<cpu_system<double, float>>(pool_, kernels_for(precision::mixed), a,
                                                           d, nrhs);
    }
    throw error(CNC_ERR_INTERNAL, "unknown precision");
  }

 private:
  thread_pool pool_;
};

}  // namespace

// The best kernel build this CPU runs, capped by CNC_CPU_ISA=generic|avx2|avx512 if set.
const char* cpu_simd_level() {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const std::string c = env::text(env::var::cpu_isa).value_or("");
  if (avx512 && (c.empty() || c == "avx512")) return "avx512";
  if (avx2 && (c.empty() || c == "avx512" || c == "avx2")) return "avx2";
  return "generic";
}

std::vector<std::string> list_cpu_devices(std::string&) {
  // The host, as one device: its model name (Linux's /proc/cpuinfo) and what cnc runs on it.
  std::string model;
  if (std::FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (model.empty() && std::fgets(line, sizeof line, f))
      if (!std::strncmp(line, "model name", 10))
        if (const char* c = std::strchr(line, ':')) {
          model = c + 1 + std::strspn(c + 1, " \t");
          while (!model.empty() && (model.back() == '\n' || model.back() == ' ')) model.pop_back();
        }
    std::fclose(f);
  }
  if (model.empty()) model = "host CPU";
  const unsigned t = std::thread::hardware_concurrency();
  return {model + ", " + std::to_string(t ? t : 1) + " hardware threads, " + cpu_simd_level() +
          " kernels"};
}

std::unique_ptr<backend> make_cpu_backend(const backend_options& o, std::string&) {
  int threads = o.threads;
  if (threads <= 0) threads = int(std::thread::hardware_concurrency());
  if (threads <= 0) threads = 1;
  return std::make_unique<cpu_backend>(threads);
}

}  // namespace cnc
