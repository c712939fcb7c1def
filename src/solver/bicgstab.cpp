// Right-preconditioned BiCGSTAB (van der Vorst 1992) for k systems at once, M⁻¹ = Jacobi, over
// the device's vector surface. Each system keeps its own scalars and status; finished systems are
// masked out of every later device operation. Per iteration: two SpMVs and four host reads of
// scalars (ρ, then v·r̂ and v·v, then s·s, then t·t and t·s).
// The residual starts as the true residual b - A x in double. When the recursive residual
// converges, the true one is checked; if it is more than 2x above the threshold the system
// restarts from it (at most max_restarts times), as pcg does.
// Breakdown: (r̂, r) or (r̂, A p̂) vanishing relative to the norms, or ω = 0 (t ⟂ s).
// Written once for T = double and, for complex systems (krylov_params::complex), T = complex:
// the scalars complex, inner products conjugated ((u, v) = conj(u)·v), norms real.
#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>

#include "cnc.h"
#include "solver/krylov.hpp"

namespace cnc {

namespace {
constexpr double breakdown_cos = 1e-15;  // |(u,v)| <= this * |u| |v| counts as zero

bool finite(double v) { return std::isfinite(v); }
bool finite(std::complex<double> v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }
double conj_of(double v) { return v; }
std::complex<double> conj_of(std::complex<double> v) { return std::conj(v); }
double real_of(double v) { return v; }
double real_of(std::complex<double> v) { return v.real(); }
template <class T>
T from_parts(double re, [[maybe_unused]] double im) {  // im dropped where T is real
  if constexpr (std::is_same_v<T, double>)
    return re;
  else
    return T(re, im);
}

template <class T>
pcg_result run(device_system& sys, const csr_view& a, int k, const double* b, double* x,
               const krylov_params& prm, krylov_track& tr) {
  krylov_ops ops(sys, k, prm);
  const std::size_t ks = std::size_t(k);
  // The steps' r, p and q serve as r, p and v; four more device vectors.
  const int X = device_system::vec_x, r = device_system::vec_r, p = device_system::vec_p,
            v = device_system::vec_q;
  const int rhat = ops.vec(), ph = ops.vec(), sh = ops.vec(), t = ops.vec();
  // Complex: the backend's fused complex inner products (zf), else i r̂ (kept with r̂) and i s
  // (each iteration) make every inner product real dots in one synchronization, with
  // conj(a)·b = b·a + i b·(i a) = a·b - i a·(i b).
  constexpr bool cx = !std::is_same_v<T, double>;
  const bool zf = cx && ops.fused_complex();
  const int irhat = cx && !zf ? ops.vec() : -1, is = cx && !zf ? ops.vec() : -1;
  std::vector<double> d3(cx ? 3 * ks : 0);
  std::vector<T> i_unit(ks, T(0));
  const std::vector<T> zero_t(ks, T(0));
  if constexpr (cx) std::fill(i_unit.begin(), i_unit.end(), T(0, 1));
  std::vector<T> rho(ks), alpha(ks), omega(ks), coef(ks), ones(ks, T(1)), half_step(ks),
      two(2 * ks);
  std::vector<double> rhat2(ks), tmp(ks), tmp2(ks), dones(ks, 1.0), zeros(ks, 0.0);
  std::vector<char> fresh(ks, 1);  // r is a true residual (no verification needed)
  // Per-iteration scalars, made once (every entry a running system reads is written first).
  std::vector<T> rho_new(ks), beta(ks), rv(ks), ts(ks);
  std::vector<double> vv(ks), ss(ks), tt(ks);
  std::vector<char> redo(ks), half(ks), halt(ks);

  // (Re)starts the recurrences of the systems in `ops.active` from r = b - A x.
  auto restart = [&]() {
    ops.residual(X, r);
    ops.dot(r, r, tmp.data());
    ops.axpby(dones.data(), r, zeros.data(), rhat);
    if constexpr (cx)
      if (!zf) ops.axpby(i_unit.data(), r, zero_t.data(), irhat);
    ops.axpby(zeros.data(), r, zeros.data(), p);
    ops.axpby(zeros.data(), r, zeros.data(), v);
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      tr.res2[j] = rhat2[j] = tmp[j];
      rho[j] = alpha[j] = omega[j] = T(1);
      fresh[j] = 1;
    }
  };
  ops.active = tr.running_mask();
  restart();

  std::int64_t it = 0, spmvs = 0;
  bool stopped = false;
  for (;;) {
    // Check: statuses from the current residuals; recursive convergence verified in double.
    for (int j = 0; j < k; ++j)
      if (tr.reason[j] == 0 && !std::isfinite(tr.res2[j])) tr.reason[j] = CNC_REASON_NOT_FINITE;
    if (tr.verify(ops, t, fresh, it, prm.base, "BiCGSTAB", restart)) continue;
    if (tr.done(it, prm.base, stopped, sys)) break;

    // One iteration on the running systems.
    ops.active = tr.running_mask();
    // A vanishing inner product: restart that system from its true residual (r̂ = r makes the
    // product ‖r‖² again), at most max_restarts times; after that it is a breakdown.
    std::fill(redo.begin(), redo.end(), 0);
    auto broke = [&](int j) {
      ops.active[j] = 0;
      if (tr.restarts[j] < prm.base.max_restarts && it < prm.base.max_iterations)
        ++tr.restarts[j], redo[j] = 1;
      else
        tr.reason[j] = CNC_REASON_BREAKDOWN;
    };
    if (cx && !zf) {  // (r̂, r) = r·r̂ + i r·(i r̂)
      const int w[2] = {rhat, irhat};
      ops.dots(r, w, 2, d3.data());
      for (int j = 0; j < k; ++j)
        rho_new[j] = from_parts<T>(d3[std::size_t(j)], d3[ks + std::size_t(j)]);
    } else {  // real, or complex fused: conj(r̂)·r
      ops.dots(rhat, &r, 1, rho_new.data());
    }
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      if (!finite(rho_new[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE, ops.active[j] = 0;
      } else if (std::abs(rho_new[j]) <= breakdown_cos * std::sqrt(rhat2[j] * tr.res2[j])) {
        broke(j);
      } else {
        beta[j] = (rho_new[j] / rho[j]) * (alpha[j] / omega[j]);
        coef[j] = -omega[j];
      }
    }
    ops.axpby(coef.data(), v, ones.data(), p);  // p = r + β (p - ω v)
    ops.axpby(ones.data(), r, beta.data(), p);
    ops.precond(p, ph);
    ops.spmv(ph, v);
    ++spmvs;
    if (zf) {  // conj(v)·r̂ = conj((r̂, v)), and conj(v)·v = v·v
      const int rhat_v[2] = {rhat, v};
      ops.dots(v, rhat_v, 2, two.data());
      for (int j = 0; j < k; ++j)
        rv[j] = conj_of(two[std::size_t(j)]), vv[j] = real_of(two[ks + std::size_t(j)]);
    } else if constexpr (cx) {  // (r̂, v) = v·r̂ + i v·(i r̂), and v·v
      const int w[3] = {rhat, irhat, v};
      ops.dots(v, w, 3, d3.data());
      for (int j = 0; j < k; ++j) {
        rv[j] = T(d3[std::size_t(j)], d3[ks + std::size_t(j)]);
        vv[j] = d3[2 * ks + std::size_t(j)];
      }
    } else {
      const int rhat_v[2] = {rhat, v};  // v·r̂ and v·v in one synchronization
      ops.dots(v, rhat_v, 2, two.data());
      for (int j = 0; j < k; ++j) rv[j] = two[std::size_t(j)], vv[j] = two[ks + std::size_t(j)];
    }
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      if (!finite(rv[j]) || !std::isfinite(vv[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE, ops.active[j] = 0;
      } else if (std::abs(rv[j]) <= breakdown_cos * std::sqrt(rhat2[j] * vv[j])) {
        broke(j);
      } else {
        alpha[j] = rho_new[j] / rv[j];
        coef[j] = -alpha[j];
      }
    }
    ops.axpby(coef.data(), v, ones.data(), r);  // r becomes s = r - α v
    ops.dot(r, r, ss.data());
    std::fill(half.begin(), half.end(), 0);
    std::fill(halt.begin(), halt.end(), 0);
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      rho[j] = rho_new[j];
      fresh[j] = 0;
      ++tr.iters[j];
      if (!(ss[j] > tr.thr2[j])) {  // converged (or NaN) at the half step: x += α p̂
        tr.res2[j] = ss[j];
        half_step[j] = alpha[j];
        ops.active[j] = 0;
        half[j] = 1;
      }
    }
    {  // x += α p̂ for the systems that stop at the half step
      std::vector<char> keep = ops.active;
      ops.active = half;
      ops.axpby(half_step.data(), ph, ones.data(), X);
      ops.active = keep;
    }
    ops.precond(r, sh);
    ops.spmv(sh, t);
    ++spmvs;
    if (zf) {  // conj(t)·t = t·t, and conj(t)·s = (t, s)
      const int t_r[2] = {t, r};
      ops.dots(t, t_r, 2, two.data());
      for (int j = 0; j < k; ++j)
        tt[j] = real_of(two[std::size_t(j)]), ts[j] = two[ks + std::size_t(j)];
    } else if constexpr (cx) {  // t·t, and (t, s) = t·s - i t·(i s)
      ops.axpby(i_unit.data(), r, zero_t.data(), is);
      const int w[3] = {t, r, is};
      ops.dots(t, w, 3, d3.data());
      for (int j = 0; j < k; ++j) {
        tt[j] = d3[std::size_t(j)];
        ts[j] = T(d3[ks + std::size_t(j)], -d3[2 * ks + std::size_t(j)]);
      }
    } else {
      const int t_r[2] = {t, r};  // t·t and t·s in one synchronization
      ops.dots(t, t_r, 2, two.data());
      for (int j = 0; j < k; ++j) tt[j] = two[std::size_t(j)], ts[j] = two[ks + std::size_t(j)];
    }
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      if (!std::isfinite(tt[j]) || !finite(ts[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE, ops.active[j] = 0;
      } else if (tt[j] == 0.0 || std::abs(ts[j]) <= breakdown_cos * std::sqrt(tt[j] * ss[j])) {
        // ω = 0: BiCGSTAB cannot progress. Keep the half step's progress, then restart or stop.
        halt[j] = 1;
        omega[j] = T(0);
        tr.res2[j] = ss[j];
      } else {
        omega[j] = ts[j] / tt[j];
      }
    }
    ops.axpby(alpha.data(), ph, ones.data(), X);  // x += α p̂ + ω ŝ
    ops.axpby(omega.data(), sh, ones.data(), X);
    for (int j = 0; j < k; ++j) {
      coef[j] = -omega[j];
      if (halt[j] && ops.active[j]) broke(j);
    }
    ops.axpby(coef.data(), t, ones.data(), r);  // r = s - ω t
    ops.dot(r, r, tmp2.data());
    for (int j = 0; j < k; ++j)
      if (ops.active[j]) tr.res2[j] = tmp2[j];
    ++it;
    if (std::any_of(redo.begin(), redo.end(), [](char c) { return c != 0; })) {
      if (prm.base.log) prm.base.log(CNC_LOG_INFO, "BiCGSTAB breakdown: restarting from x");
      ops.active = redo;
      restart();
    }
  }
  return tr.finish(sys, &ops, a, b, x, prm, stopped, spmvs);
}

}  // namespace

pcg_result bicgstab_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                          const krylov_params& prm) {
  krylov_track tr(sys, a.n, k, b, x, prm.base.threshold);
  if (tr.all_zero) return tr.finish(sys, nullptr, a, b, x, prm, false, 0);
  return prm.complex ? run<std::complex<double>>(sys, a, k, b, x, prm, tr)
                     : run<double>(sys, a, k, b, x, prm, tr);
}

}  // namespace cnc
