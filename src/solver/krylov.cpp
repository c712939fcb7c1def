// The nonsymmetric solvers' view of the device (krylov_ops) and their shared bookkeeping.
#include "solver/krylov.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "cnc.h"
#include "util/error.hpp"

namespace cnc {

krylov_ops::krylov_ops(device_system& sys, int k, const krylov_params& prm)
    : sys_(sys),
      k_(k),
      rows_(double(prm.rows)),
      nnz_(double(prm.nnz)),
      matrix_bytes_(prm.matrix_bytes),
      vb_(prm.vector_bytes),
      ssor_omega_(prm.ssor_omega),
      zjacobi_(prm.complex && prm.complex_dinv) {
  if (zjacobi_) sys_.set_complex_jacobi(prm.complex_dinv);
  // Every column active, whatever an earlier method left (the system may be a kept one).
  active.assign(std::size_t(k), 1);
  sent_.assign(std::size_t(k), 1);
  sys_.set_mask(sent_.data());
}

krylov_ops::~krylov_ops() { sys_.release_vectors(); }

int krylov_ops::vec() { return sys_.add_vectors(1); }
int krylov_ops::vecs(int count) { return sys_.add_vectors(count); }

void krylov_ops::send_mask() {
  bool same = true;
  for (int j = 0; j < k_; ++j) same = same && (sent_[j] != 0) == (active[j] != 0);
  if (same) return;
  for (int j = 0; j < k_; ++j) sent_[j] = active[j] ? 1 : 0;
  sys_.set_mask(sent_.data());
}

double krylov_ops::columns() const {
  return double(std::count_if(active.begin(), active.end(), [](char c) { return c != 0; }));
}

// Byte counts: each vector read or written once per active column; the matrix once per SpMV.
void krylov_ops::spmv(int x, int y) {
  send_mask();
  sys_.spmv(x, y);
  bytes += matrix_bytes_ + 2 * rows_ * vb_ * columns();
  flops += 2 * nnz_ * columns();
}

void krylov_ops::precond(int v, int z) {
  send_mask();
  if (ssor_omega_ > 0) {  // two triangular sweeps: the matrix twice, v read, z written twice
    sys_.ssor(v, z, ssor_omega_);
    bytes += 2 * matrix_bytes_ + 4 * rows_ * vb_ * columns();
    flops += (2 * nnz_ + 4 * rows_) * columns();
    return;
  }
  if (zjacobi_)
    sys_.zprecondition(v, z);
  else
    sys_.precondition(v, z);
  bytes += rows_ * vb_ * (1 + 2 * columns());
  flops += (zjacobi_ ? 3 : 1) * rows_ * columns();
}

void krylov_ops::residual(int x, int r) {
  send_mask();
  sys_.residual(x, r);
  bytes += matrix_bytes_ + 3 * rows_ * vb_ * columns();
  flops += (2 * nnz_ + rows_) * columns();
}

void krylov_ops::dot(int u, int v, double* out) { dots(u, &v, 1, out); }

void krylov_ops::dots(int u, const int* v, int count, double* out) {
  send_mask();
  sys_.dots(u, v, count, out);
  bytes += (1 + count) * rows_ * vb_ * columns();
  flops += 2 * count * rows_ * columns();
}

void krylov_ops::axpby(const double* alpha, int x, const double* beta, int y) {
  send_mask();
  sys_.axpby(alpha, x, beta, y);
  bytes += 3 * rows_ * vb_ * columns();
  flops += 3 * rows_ * columns();
}

void krylov_ops::combine(const int* v, int count, const double* coef, const double* beta, int y) {
  if (count <= 0) return;
  send_mask();
  sys_.combine(v, count, coef, beta, y);
  // Counted as the GPUs run it: y read (but where every beta is 0, in the first pass) and
  // written once per device_system::combine_pass vectors.
  const int passes = (count + device_system::combine_pass - 1) / device_system::combine_pass;
  bool overwrite = true;
  for (int j = 0; j < k_; ++j) overwrite = overwrite && (!active[j] || beta[j] == 0.0);
  bytes += (count + 2 * passes - (overwrite ? 1 : 0)) * rows_ * vb_ * columns();
  flops += 2 * count * rows_ * columns();
}

// Every column of the other vector read, the mask's columns of v (block_dots) or y
// (block_combine) read or written.
void krylov_ops::block_dots(int u, int v, double* out) {
  send_mask();
  sys_.block_dots(u, v, out);
  bytes += (k_ + columns()) * rows_ * vb_;
  flops += 2.0 * k_ * rows_ * columns();
}

void krylov_ops::block_combine(int v, const double* coef, const double* beta, int y) {
  send_mask();
  sys_.block_combine(v, coef, beta, y);
  bytes += (k_ + 2 * columns()) * rows_ * vb_;
  flops += 2.0 * k_ * rows_ * columns();
}

void krylov_ops::block_grams(const int* u, const int* v, int count, double* out) {
  std::vector<int> distinct;
  for (int c = 0; c < count; ++c)
    for (const int w : {u[c], v[c]})
      if (std::find(distinct.begin(), distinct.end(), w) == distinct.end()) distinct.push_back(w);
  if (sys_.block_grams(u, v, count, out)) {
    bytes += double(distinct.size()) * k_ * rows_ * vb_;
    flops += 2.0 * count * k_ * k_ * rows_;
    return;
  }
  const std::vector<char> kept = active;
  active.assign(std::size_t(k_), 1);
  const std::size_t kk = std::size_t(k_) * std::size_t(k_);
  for (int c = 0; c < count; ++c) block_dots(u[c], v[c], out + std::size_t(c) * kk);
  active = kept;
}

void krylov_ops::spmv_gram(int x, int y, double* out) {
  send_mask();
  if (sys_.spmv_gram(x, y, out)) {
    bytes += matrix_bytes_ + 2 * rows_ * vb_ * columns();
    flops += 2 * nnz_ * columns() + 2.0 * k_ * k_ * rows_;
    return;
  }
  spmv(x, y);
  block_grams(&x, &y, 1, out);
}

bool krylov_ops::block_fused() const {
  return ssor_omega_ <= 0 && !zjacobi_ && sys_.has_block_fused();
}

void krylov_ops::block_update(int p, int q, const double* a, int x, int r, int z, double* out) {
  send_mask();
  // Only the fused pass: without it block CG builds a leaner iteration of its own
  // (block_cg.cpp), so a composed copy of this one would never run.
  if (!block_fused() || !sys_.block_update(p, q, a, x, r, z, out))
    throw error(CNC_ERR_INTERNAL, ": block_update without the backend's fused pass");
  // p and q read whole, x and r read and written, z written (where stored), over the active
  // columns; d.
  const int grams = device_system::block_update_grams;
  bytes += (2.0 * k_ + (z == device_system::no_vector ? 4 : 5) * columns() + 1) * rows_ * vb_;
  flops += (4.0 * k_ * columns() + columns() + 2.0 * (grams * k_ + 2) * k_) * rows_;
}

void krylov_ops::block_combine2(int v1, const double* c1, int v2, const double* c2, int y,
                                bool scale_v1) {
  if (sys_.block_combine2(v1, c1, v2, c2, y, scale_v1)) {
    bytes += (3.0 * k_ + (scale_v1 ? 1 : 0)) * rows_ * vb_;
    flops += (4.0 * k_ * k_ + (scale_v1 ? k_ : 0)) * rows_;
    return;
  }
  // Z unstored comes only with the backend's fused passes (block_fused), which include this one.
  if (scale_v1) throw error(CNC_ERR_INTERNAL, ": block_combine2 of d∘v without the fused pass");
  const std::vector<char> kept = active;
  active.assign(std::size_t(k_), 1);
  std::vector<double> zeros(std::size_t(k_), 0.0), ones(std::size_t(k_), 1.0);
  block_combine(v1, c1, zeros.data(), y);
  const std::size_t kk = std::size_t(k_) * std::size_t(k_);
  if (std::any_of(c2, c2 + kk, [](double c) { return c != 0.0; }))
    block_combine(v2, c2, ones.data(), y);
  active = kept;
}

int krylov_ops::work() {
  if (work_ < 0) work_ = vec();
  return work_;
}

void krylov_ops::zaxpby(const double* alpha, int x, const double* beta, int y) {
  send_mask();
  sys_.zaxpby(alpha, x, beta, y);
  bool overwrite = true;
  for (int j = 0; j < k_; ++j)
    overwrite = overwrite && (!active[j] || (beta[2 * j] == 0.0 && beta[2 * j + 1] == 0.0));
  bytes += (overwrite ? 2 : 3) * rows_ * vb_ * columns();
  flops += (overwrite ? 6 : 14) * rows_ / 2 * columns();
}

void krylov_ops::dots(int u, const int* v, int count, complex* out) {
  const std::size_t n = std::size_t(count) * std::size_t(k_);
  if (sys_.fused_complex()) {  // one pass: u and the v read once
    send_mask();
    re_.resize(2 * n);
    sys_.zdots(u, v, count, re_.data());
    for (std::size_t e = 0; e < n; ++e) out[e] = complex(re_[2 * e], re_[2 * e + 1]);
    bytes += (1 + count) * rows_ * vb_ * columns();
    flops += 4 * count * rows_ * columns();
    return;
  }
  re_.resize(n), im_.resize(n);
  dots(u, v, count, re_.data());
  two_a_.assign(2 * std::size_t(k_), 0.0), two_b_.assign(2 * std::size_t(k_), 0.0);
  for (int j = 0; j < k_; ++j) two_a_[2 * j + 1] = 1.0;
  const int t = work();
  zaxpby(two_a_.data(), u, two_b_.data(), t);  // t = i u
  dots(t, v, count, im_.data());
  for (std::size_t e = 0; e < n; ++e) out[e] = complex(re_[e], im_[e]);
}

void krylov_ops::axpby(const complex* alpha, int x, const complex* beta, int y) {
  two_a_.resize(2 * std::size_t(k_)), two_b_.resize(2 * std::size_t(k_));
  for (int j = 0; j < k_; ++j) {
    two_a_[2 * j] = alpha[j].real(), two_a_[2 * j + 1] = alpha[j].imag();
    two_b_[2 * j] = beta[j].real(), two_b_[2 * j + 1] = beta[j].imag();
  }
  zaxpby(two_a_.data(), x, two_b_.data(), y);
}

void krylov_ops::combine(const int* v, int count, const complex* coef, const double* beta, int y) {
  if (count <= 0) return;
  const std::size_t n = std::size_t(count) * std::size_t(k_);
  if (sys_.fused_complex()) {  // one pass per combine_pass vectors, as the real combine
    send_mask();
    re_.resize(2 * n);
    for (std::size_t e = 0; e < n; ++e)
      re_[2 * e] = coef[e].real(), re_[2 * e + 1] = coef[e].imag();
    sys_.zcombine(v, count, re_.data(), beta, y);
    const int passes = (count + device_system::combine_pass - 1) / device_system::combine_pass;
    bool overwrite = true;
    for (int j = 0; j < k_; ++j) overwrite = overwrite && (!active[j] || beta[j] == 0.0);
    bytes += (count + 2 * passes - (overwrite ? 1 : 0)) * rows_ * vb_ * columns();
    flops += 4 * count * rows_ * columns();
    return;
  }
  re_.resize(n), im_.resize(n);
  bool imaginary = false;
  for (std::size_t e = 0; e < n; ++e) {
    re_[e] = coef[e].real(), im_[e] = coef[e].imag();
    imaginary = imaginary || (active[e % std::size_t(k_)] && im_[e] != 0.0);
  }
  combine(v, count, re_.data(), beta, y);
  if (!imaginary) return;
  const int t = work();
  const std::vector<double> zeros(std::size_t(k_), 0.0);
  combine(v, count, im_.data(), zeros.data(), t);
  two_a_.assign(2 * std::size_t(k_), 0.0), two_b_.assign(2 * std::size_t(k_), 0.0);
  for (int j = 0; j < k_; ++j) two_a_[2 * j + 1] = 1.0, two_b_[2 * j] = 1.0;
  zaxpby(two_a_.data(), t, two_b_.data(), y);  // y += i t
}

// ---------------------------------------------------------------------------------------------

krylov_track::krylov_track(device_system& sys, int n, int nsys, const double* b, const double* x,
                           double threshold)
    : k(nsys) {
  const std::size_t ks = std::size_t(nsys), nn = std::size_t(n);
  bnorm2.assign(ks, 0.0), thr2.assign(ks, 0.0), reason.assign(ks, 0), iters.assign(ks, 0);
  res2.assign(ks, 0.0), restarts.assign(ks, 0);
  const bool x_zero = host_norms(b, x, nn, nsys, bnorm2.data());  // this process's rows
  sys.sum_over_ranks(bnorm2.data(), nsys);  // every process's rows (backend.hpp)
  bool any_zero = false;
  for (std::size_t j = 0; j < ks; ++j) {
    thr2[j] = threshold * threshold * bnorm2[j];
    if (bnorm2[j] == 0.0) reason[j] = CNC_REASON_CONVERGED, any_zero = true;  // x = 0 at once
    all_zero = all_zero && bnorm2[j] == 0.0;
  }
  if (all_zero) return;
  if (any_zero && !x_zero) {
    std::vector<double> x0(x, x + nn * ks);
    for (std::size_t j = 0; j < ks; ++j)
      if (bnorm2[j] == 0.0) std::fill(x0.begin() + j * nn, x0.begin() + (j + 1) * nn, 0.0);
    sys.set_vectors(b, x0.data());
  } else {
    sys.set_vectors(b, x_zero ? nullptr : x);
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

bool krylov_track::done(std::int64_t it, const pcg_params& prm, bool& stopped,
                        device_system& sys) const {
  if (!any_running()) return true;
  const iterate_reader read_x = [&](double* out) { sys.get_x(out); };
  if (prm.progress && prm.progress(it, worst_relative(), prm.vectors_on_device ? nullptr : &read_x))
    return stopped = true;
  return it >= prm.max_iterations;
}

bool krylov_track::verify(krylov_ops& ops, int t, const std::vector<char>& fresh, std::int64_t it,
                          const pcg_params& prm, const char* method,
                          const std::function<void()>& restart) {
  std::vector<char> check(static_cast<std::size_t>(k), 0);
  bool any = false;
  for (int j = 0; j < k; ++j) {
    if (reason[j] != 0 || !(res2[j] <= thr2[j])) continue;
    if (fresh[j])
      reason[j] = CNC_REASON_CONVERGED;
    else
      check[j] = 1, any = true;
  }
  if (!any) return false;
  ops.active = check;
  std::vector<double> tr2(static_cast<std::size_t>(k));
  ops.residual(device_system::vec_x, t);
  ops.dot(t, t, tr2.data());
  std::vector<char> again(static_cast<std::size_t>(k), 0);
  bool any_again = false;
  for (int j = 0; j < k; ++j) {
    if (!check[j]) continue;
    const double slack2 = true_residual_slack * true_residual_slack;
    if (tr2[j] <= slack2 * thr2[j] || restarts[j] >= prm.max_restarts || it >= prm.max_iterations) {
      reason[j] = CNC_REASON_CONVERGED;  // finish() marks it stagnated if it is off
    } else {
      ++restarts[j];
      again[j] = 1, any_again = true;
    }
  }
  if (!any_again) return false;
  if (prm.log)
    prm.log(CNC_LOG_INFO,
            std::string("true residual above threshold: restarting ") + method + " from x");
  ops.active = again;
  restart();
  return true;
}

pcg_result krylov_track::finish(device_system& sys, krylov_ops* ops, const csr_view& a,
                                const double* b, double* x, const krylov_params& prm, bool stopped,
                                std::int64_t spmvs) const {
  pcg_result res;
  const std::size_t ks = std::size_t(k), n = std::size_t(a.n);
  res.iters = iters;
  res.reasons.assign(ks, CNC_REASON_CONVERGED);
  res.residual.assign(ks, 0.0);
  res.true_residual.assign(ks, 0.0);
  res.iteration_steps = spmvs;
  std::vector<double> tr2(ks, 0.0);
  if (all_zero) {
    std::fill(x, x + n * ks, 0.0);
    res.reason = CNC_REASON_CONVERGED;
    return res;
  }
  if (prm.base.device_residual) {  // b - A x on the device, in double
    ops->active.assign(ks, 1);
    const int t = device_system::vec_q;  // no method needs its q any more
    ops->residual(device_system::vec_x, t);
    ops->dot(t, t, tr2.data());
    sys.get_x(x);
  } else {
    sys.get_x(x);
    residual_norms(a, k, b, x, tr2.data());
  }
  for (int j = 0; j < k; ++j)  // b = 0: x = 0 (the device's is already, up to -0)
    if (bnorm2[j] == 0.0) std::fill(x + j * n, x + (j + 1) * n, 0.0);
  int worst = CNC_REASON_CONVERGED;
  for (int j = 0; j < k; ++j) {
    if (bnorm2[j] == 0.0) continue;
    int r = reason[j] != 0 ? reason[j] : stopped ? CNC_REASON_STOPPED : CNC_REASON_MAX_ITERATIONS;
    res.residual[j] = std::sqrt(std::max(res2[j], 0.0) / bnorm2[j]);
    res.true_residual[j] = std::sqrt(tr2[j] / bnorm2[j]);
    if (r == CNC_REASON_CONVERGED &&
        !(tr2[j] <= true_residual_slack * true_residual_slack * thr2[j]))
      r = CNC_REASON_STAGNATED;
    res.reasons[j] = r;
    res.iterations = std::max(res.iterations, iters[j]);
    if (reason_severity(r) > reason_severity(worst)) worst = r;
  }
  res.reason = worst;
  res.bytes = ops->bytes, res.flops = ops->flops;
  return res;
}

}  // namespace cnc
