// Right-preconditioned BiCGSTAB (van der Vorst 1992) for k systems at once, M⁻¹ = Jacobi.
// Each system keeps its own scalars and status; finished systems are masked out of the host
// operations (the backend SpMV still runs on every column, which is harmless).
// The residual starts as the true residual b - A x in double. When the recursive residual
// converges, the true one is checked; if it is more than 2x above the threshold the system
// restarts from it (at most max_restarts times), as pcg does.
// Breakdown: (r̂, r) or (r̂, A p̂) vanishing relative to the norms, or ω = 0 (t ⟂ s).
#include <algorithm>
#include <cmath>

#include "cnc.h"
#include "solver/krylov.hpp"

namespace cnc {

namespace {
constexpr double breakdown_cos = 1e-15;  // |(u,v)| <= this * |u| |v| counts as zero
}

pcg_result bicgstab_solve(device_system& sys, const csr_view& a, int k, const double* b,
                          double* x, const krylov_params& prm) {
  krylov_track tr(a, k, b, x, prm.base.threshold);
  if (tr.all_zero) return tr.finish(a, b, x, false, 0);
  krylov_ops ops(sys, a, prm.d, k, prm.threads);
  const std::size_t ks = std::size_t(k);
  std::vector<double> r = ops.vec(), rhat = ops.vec(), p = ops.vec(), v = ops.vec(), ph = ops.vec(),
                      sh = ops.vec(), t = ops.vec();
  std::vector<double> rho(ks), alpha(ks), omega(ks), rhat2(ks), tmp(ks), tmp2(ks), coef(ks),
      ones(ks, 1.0), zeros(ks, 0.0);
  std::vector<char> fresh(ks, 1);  // r is a true residual (no verification needed)

  // (Re)starts the recurrences of the systems in `ops.active` from r = b - A x.
  auto restart = [&]() {
    ops.residual(b, x, r.data());
    ops.dot(r.data(), r.data(), tmp.data());
    ops.axpby(ones.data(), r.data(), zeros.data(), rhat.data());
    ops.axpby(zeros.data(), r.data(), zeros.data(), p.data());
    ops.axpby(zeros.data(), r.data(), zeros.data(), v.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      tr.res2[j] = rhat2[j] = tmp[j];
      rho[j] = alpha[j] = omega[j] = 1.0;
      fresh[j] = 1;
    }
  };
  ops.active = tr.running_mask();
  restart();

  std::int64_t it = 0, spmvs = 0;
  bool stopped = false;
  for (;;) {
    // Check: statuses from the current residuals; verify recursive convergence in double.
    std::vector<char> verify(ks, 0);
    bool any_verify = false;
    for (int j = 0; j < k; ++j) {
      if (tr.reason[j] != 0) continue;
      if (!std::isfinite(tr.res2[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE;
      } else if (tr.res2[j] <= tr.thr2[j]) {
        if (fresh[j])
          tr.reason[j] = CNC_REASON_CONVERGED;
        else
          verify[j] = 1, any_verify = true;
      }
    }
    if (any_verify) {
      ops.active = verify;
      ops.residual(b, x, t.data());
      ops.dot(t.data(), t.data(), tmp.data());
      std::vector<char> again(ks, 0);
      bool any_again = false;
      for (int j = 0; j < k; ++j) {
        if (!verify[j]) continue;
        const double slack2 = krylov_true_slack * krylov_true_slack;
        if (tmp[j] <= slack2 * tr.thr2[j] || tr.restarts[j] >= prm.base.max_restarts ||
            it >= prm.base.max_iterations) {
          tr.reason[j] = CNC_REASON_CONVERGED;  // finish() marks it stagnated if it is off
        } else {
          ++tr.restarts[j];
          again[j] = 1, any_again = true;
        }
      }
      if (any_again) {
        if (prm.base.log)
          prm.base.log(CNC_LOG_INFO, "true residual above threshold: restarting BiCGSTAB from x");
        ops.active = again;
        restart();
      }
      continue;  // re-check the restarted systems
    }
    if (!tr.any_running()) break;
    if (prm.base.progress && prm.base.progress(it, tr.worst_relative())) {
      stopped = true;
      break;
    }
    if (it >= prm.base.max_iterations) break;

    // One iteration on the running systems.
    ops.active = tr.running_mask();
    std::vector<double> rho_new(ks), beta(ks), rv(ks), vv(ks), ss(ks), tt(ks), ts(ks);
    ops.dot(rhat.data(), r.data(), rho_new.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      if (!std::isfinite(rho_new[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE, ops.active[j] = 0;
      } else if (std::fabs(rho_new[j]) <= breakdown_cos * std::sqrt(rhat2[j] * tr.res2[j])) {
        tr.reason[j] = CNC_REASON_BREAKDOWN, ops.active[j] = 0;
      } else {
        beta[j] = (rho_new[j] / rho[j]) * (alpha[j] / omega[j]);
        coef[j] = -omega[j];
      }
    }
    ops.axpby(coef.data(), v.data(), ones.data(), p.data());  // p = r + β (p - ω v)
    ops.axpby(ones.data(), r.data(), beta.data(), p.data());
    ops.precond(p.data(), ph.data());
    ops.spmv(ph.data(), v.data());
    ++spmvs;
    ops.dot(rhat.data(), v.data(), rv.data());
    ops.dot(v.data(), v.data(), vv.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      if (!std::isfinite(rv[j]) || !std::isfinite(vv[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE, ops.active[j] = 0;
      } else if (std::fabs(rv[j]) <= breakdown_cos * std::sqrt(rhat2[j] * vv[j])) {
        tr.reason[j] = CNC_REASON_BREAKDOWN, ops.active[j] = 0;
      } else {
        alpha[j] = rho_new[j] / rv[j];
        coef[j] = -alpha[j];
      }
    }
    ops.axpby(coef.data(), v.data(), ones.data(), r.data());  // r becomes s = r - α v
    ops.dot(r.data(), r.data(), ss.data());
    std::vector<char> half(ks, 0);
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      rho[j] = rho_new[j];
      fresh[j] = 0;
      ++tr.iters[j];
      if (!(ss[j] > tr.thr2[j])) {  // converged (or NaN) at the half step: x += α p̂
        tr.res2[j] = ss[j];
        tmp[j] = alpha[j];
        ops.active[j] = 0;
        half[j] = 1;
      }
    }
    {  // x += α p̂ for the systems that stop at the half step
      std::vector<char> keep = ops.active;
      ops.active = half;
      ops.axpby(tmp.data(), ph.data(), ones.data(), x);
      ops.active = keep;
    }
    ops.precond(r.data(), sh.data());
    ops.spmv(sh.data(), t.data());
    ++spmvs;
    ops.dot(t.data(), t.data(), tt.data());
    ops.dot(t.data(), r.data(), ts.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      if (!std::isfinite(tt[j]) || !std::isfinite(ts[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE, ops.active[j] = 0;
      } else if (tt[j] == 0.0 || std::fabs(ts[j]) <= breakdown_cos * std::sqrt(tt[j] * ss[j])) {
        // ω = 0: BiCGSTAB cannot progress. Keep the half step's progress, then stop.
        tr.reason[j] = CNC_REASON_BREAKDOWN;
        omega[j] = 0.0;
        tr.res2[j] = ss[j];
      } else {
        omega[j] = ts[j] / tt[j];
      }
    }
    ops.axpby(alpha.data(), ph.data(), ones.data(), x);  // x += α p̂ + ω ŝ
    ops.axpby(omega.data(), sh.data(), ones.data(), x);
    for (int j = 0; j < k; ++j) {
      coef[j] = -omega[j];
      if (tr.reason[j] == CNC_REASON_BREAKDOWN && ops.active[j]) ops.active[j] = 0;
    }
    ops.axpby(coef.data(), t.data(), ones.data(), r.data());  // r = s - ω t
    ops.dot(r.data(), r.data(), tmp2.data());
    for (int j = 0; j < k; ++j)
      if (ops.active[j]) tr.res2[j] = tmp2[j];
    ++it;
  }
  return tr.finish(a, b, x, stopped, spmvs);
}

}  // namespace cnc
