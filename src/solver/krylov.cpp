// Host vector operations for the nonsymmetric solvers, and their shared bookkeeping.
// Rows are cut into fixed chunks (independent of the thread count); a dot product sums each
// chunk in row order, then the chunk partials in chunk order, so results are bit-identical for
// any number of threads. Small problems run on the calling thread: waking a pool costs more.
#include "solver/krylov.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "util/thread_pool.hpp"
#include "cnc.h"

namespace cnc {

namespace {
constexpr std::int64_t chunk_rows = 4096;
constexpr std::size_t parallel_min_work = std::size_t(1) << 16;  // n*k below which: one thread
}  // namespace

krylov_ops::krylov_ops(device_system& sys, const csr_view& a, const double* d, int k, int threads)
    : sys_(sys), a_(a), d_(d), n_(std::size_t(a.n)), k_(k) {
  active.assign(std::size_t(k), 1);
  n_chunks_ = std::max<std::int64_t>(1, (std::int64_t(n_) + chunk_rows - 1) / chunk_rows);
  partial_.assign(std::size_t(n_chunks_) * std::size_t(k), 0.0);
  int t = threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
  t = int(std::min<std::int64_t>(t, n_chunks_));
  if (t > 1 && n_ * std::size_t(k) >= parallel_min_work) pool_ = std::make_unique<thread_pool>(t);
}

krylov_ops::~krylov_ops() = default;

template <class F>
void krylov_ops::over_chunks(F&& fn) {
  auto run = [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c)
      fn(c, c * chunk_rows, std::min<std::int64_t>(std::int64_t(n_), (c + 1) * chunk_rows));
  };
  if (!pool_) {
    run(0, n_chunks_);
    return;
  }
  const std::int64_t T = pool_->size();
  pool_->run([&](int t) { run(n_chunks_ * t / T, n_chunks_ * (t + 1) / T); });
}

void krylov_ops::spmv(const double* x, double* y) { sys_.apply(x, y); }

void krylov_ops::precond(const double* v, double* z) {
  over_chunks([&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    for (int j = 0; j < k_; ++j) {
      if (!active[j]) continue;
      const std::size_t o = std::size_t(j) * n_;
      if (d_)
        for (std::int64_t i = i0; i < i1; ++i) z[o + i] = d_[i] * v[o + i];
      else
        std::copy(v + o + i0, v + o + i1, z + o + i0);
    }
  });
}

void krylov_ops::dot(const double* u, const double* v, double* out) {
  over_chunks([&](std::int64_t c, std::int64_t i0, std::int64_t i1) {
    for (int j = 0; j < k_; ++j) {
      if (!active[j]) continue;
      const std::size_t o = std::size_t(j) * n_;
      double s = 0.0;
      for (std::int64_t i = i0; i < i1; ++i) s += u[o + i] * v[o + i];
      partial_[std::size_t(c) * k_ + j] = s;
    }
  });
  for (int j = 0; j < k_; ++j) {
    double s = 0.0;
    if (active[j])
      for (std::int64_t c = 0; c < n_chunks_; ++c) s += partial_[std::size_t(c) * k_ + j];
    out[j] = s;
  }
}

void krylov_ops::axpby(const double* alpha, const double* x, const double* beta, double* y) {
  over_chunks([&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    for (int j = 0; j < k_; ++j) {
      if (!active[j]) continue;
      const std::size_t o = std::size_t(j) * n_;
      const double al = alpha[j], be = beta[j];
      if (be == 0.0)
        for (std::int64_t i = i0; i < i1; ++i) y[o + i] = al * x[o + i];
      else if (be == 1.0)
        for (std::int64_t i = i0; i < i1; ++i) y[o + i] += al * x[o + i];
      else
        for (std::int64_t i = i0; i < i1; ++i) y[o + i] = al * x[o + i] + be * y[o + i];
    }
  });
}

void krylov_ops::residual(const double* b, const double* x, double* r) {
  over_chunks([&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    for (int j = 0; j < k_; ++j) {
      if (!active[j]) continue;
      const std::size_t o = std::size_t(j) * n_;
      for (std::int64_t i = i0; i < i1; ++i) {
        double ax = 0.0;
        for (std::int64_t t = a_.row_ptr[i]; t < a_.row_ptr[i + 1]; ++t)
          ax += a_.val[t] * x[o + a_.col[t]];
        r[o + i] = b[o + i] - ax;
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------

krylov_track::krylov_track(const csr_view& a, int nsys, const double* b, double* x,
                           double threshold)
    : k(nsys) {
  const std::size_t n = std::size_t(a.n), ks = std::size_t(nsys);
  bnorm2.assign(ks, 0.0), thr2.assign(ks, 0.0), reason.assign(ks, 0), iters.assign(ks, 0);
  res2.assign(ks, 0.0), restarts.assign(ks, 0);
  for (std::size_t j = 0; j < ks; ++j) {
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i) s += b[j * n + i] * b[j * n + i];
    bnorm2[j] = s;
    thr2[j] = threshold * threshold * s;
    if (s == 0.0) {  // b = 0: x = 0 at once
      std::fill(x + j * n, x + (j + 1) * n, 0.0);
      reason[j] = CNC_REASON_CONVERGED;
    }
    all_zero = all_zero && s == 0.0;
  }
}

bool krylov_track::any_running() const {
  return std::any_of(reason.begin(), reason.end(), [](int r) { return r == 0; });
}

double krylov_track::worst_relative() const {
  double w = 0.0;
  for (int j = 0; j < k; ++j)
    if (reason[j] == 0) w = std::max(w, std::sqrt(std::max(res2[j], 0.0) / bnorm2[j]));
  return w;
}

std::vector<char> krylov_track::running_mask() const {
  std::vector<char> m(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) m[j] = reason[j] == 0;
  return m;
}

pcg_result krylov_track::finish(const csr_view& a, const double* b, const double* x, bool stopped,
                                std::int64_t spmvs) const {
  pcg_result res;
  const std::size_t ks = std::size_t(k);
  res.iters = iters;
  res.reasons.assign(ks, CNC_REASON_CONVERGED);
  res.residual.assign(ks, 0.0);
  res.true_residual.assign(ks, 0.0);
  res.iteration_steps = spmvs;
  std::vector<double> tr2(ks, 0.0);
  if (!all_zero) residual_norms(a, k, b, x, tr2.data());
  int worst = CNC_REASON_CONVERGED;
  for (int j = 0; j < k; ++j) {
    if (bnorm2[j] == 0.0) continue;
    int r = reason[j] != 0 ? reason[j] : stopped ? CNC_REASON_STOPPED : CNC_REASON_MAX_ITERATIONS;
    res.residual[j] = std::sqrt(std::max(res2[j], 0.0) / bnorm2[j]);
    res.true_residual[j] = std::sqrt(tr2[j] / bnorm2[j]);
    if (r == CNC_REASON_CONVERGED && !(tr2[j] <= krylov_true_slack * krylov_true_slack * thr2[j]))
      r = CNC_REASON_STAGNATED;
    res.reasons[j] = r;
    res.iterations = std::max(res.iterations, iters[j]);
    if (reason_severity(r) > reason_severity(worst)) worst = r;
  }
  res.reason = worst;
  return res;
}

}  // namespace cnc
