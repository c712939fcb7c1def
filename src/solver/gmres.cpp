// Restarted GMRES(m) (Saad & Schultz 1986) with right Jacobi preconditioning, modified
// Gram-Schmidt and Givens rotations, for k systems at once. Each cycle starts from the true
// residual b - A x in double, so a cycle whose estimate converged is verified by the next one:
// if the true residual is more than 2x above the threshold, more cycles run (at most
// max_restarts times), as pcg does. Inside a cycle, a system leaves when its residual estimate
// converges, the iteration limit or a stop request comes, or the Krylov space is exhausted; its
// x is updated at the end of the cycle from the columns it built.
// Breakdown: the rotated Hessenberg column is zero (A singular on the Krylov space), so the
// least-squares residual can no longer decrease.
#include <algorithm>
#include <cmath>

#include "cnc.h"
#include "solver/krylov.hpp"

namespace cnc {

namespace {
constexpr double happy_ratio = 1e-14;     // h_{j+1,j} <= this * |A z_j|: Krylov space exhausted
constexpr double singular_ratio = 1e-16;  // rotated diagonal <= this * |A z_j|: R is singular
}  // namespace

pcg_result gmres_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                       const krylov_params& prm) {
  krylov_track tr(a, k, b, x, prm.base.threshold);
  if (tr.all_zero) return tr.finish(a, b, x, false, 0);
  krylov_ops ops(sys, a, prm.d, k, prm.threads);
  const std::size_t ks = std::size_t(k);
  const int m = std::max(1, prm.restart);
  std::vector<std::vector<double>> V(static_cast<std::size_t>(m));  // V[m] is never needed
  for (auto& vj : V) vj = ops.vec();
  std::vector<double> w = ops.vec(), z = ops.vec();
  // Per system: R (upper triangle after rotations, column-major m x m), rotations, g.
  std::vector<double> R(ks * m * m), cs(ks * m), sn(ks * m), g(ks * (m + 1));
  std::vector<double> h(ks), tmp(ks), coef(ks), ones(ks, 1.0), zeros(ks, 0.0);
  std::vector<std::vector<double>> hcol(ks, std::vector<double>(std::size_t(m) + 1));
  std::vector<int> len(ks, 0);         // Arnoldi columns built this cycle
  std::vector<char> estimated(ks, 0);  // the last cycle's estimate converged
  std::vector<char> in_cycle(ks, 0);

  std::int64_t it = 0, spmvs = 0;
  bool stopped = false;
  for (;;) {
    // Cycle start: true residual of the running systems.
    ops.active = tr.running_mask();
    ops.residual(b, x, V[0].data());
    ops.dot(V[0].data(), V[0].data(), tmp.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      tr.res2[j] = tmp[j];
      const double slack2 = krylov_true_slack * krylov_true_slack;
      if (!std::isfinite(tmp[j])) {
        tr.reason[j] = CNC_REASON_NOT_FINITE;
      } else if (tmp[j] <= tr.thr2[j] || (estimated[j] && tmp[j] <= slack2 * tr.thr2[j])) {
        tr.reason[j] = CNC_REASON_CONVERGED;
      } else if (estimated[j]) {
        if (tr.restarts[j] >= prm.base.max_restarts || it >= prm.base.max_iterations) {
          tr.reason[j] = CNC_REASON_CONVERGED;  // finish() marks it stagnated
        } else {
          ++tr.restarts[j];
          if (prm.base.log)
            prm.base.log(CNC_LOG_INFO, "true residual above threshold: GMRES cycles on");
        }
      }
      estimated[j] = 0;
    }
    if (!tr.any_running() || stopped || it >= prm.base.max_iterations) break;

    ops.active = in_cycle = tr.running_mask();
    for (int j = 0; j < k; ++j) {
      len[j] = 0;
      if (!in_cycle[j]) continue;
      const double beta = std::sqrt(tr.res2[j]);
      tmp[j] = 1.0 / beta;
      std::fill(g.begin() + std::ptrdiff_t(j) * (m + 1),
                g.begin() + std::ptrdiff_t(j + 1) * (m + 1), 0.0);
      g[std::size_t(j) * (m + 1)] = beta;
    }
    ops.axpby(tmp.data(), V[0].data(), zeros.data(), V[0].data());

    for (int c = 0; c < m; ++c) {
      if (prm.base.progress && prm.base.progress(it, tr.worst_relative())) {
        stopped = true;
        break;
      }
      if (it >= prm.base.max_iterations) break;
      ops.active = in_cycle;
      ops.precond(V[c].data(), z.data());
      ops.spmv(z.data(), w.data());
      ++spmvs;
      for (int i = 0; i <= c; ++i) {  // modified Gram-Schmidt
        ops.dot(w.data(), V[i].data(), h.data());
        for (int j = 0; j < k; ++j) hcol[j][i] = h[j], coef[j] = -h[j];
        ops.axpby(coef.data(), V[i].data(), ones.data(), w.data());
      }
      ops.dot(w.data(), w.data(), tmp.data());
      ++it;
      for (int j = 0; j < k; ++j) {
        if (!in_cycle[j]) continue;
        ++tr.iters[j];
        double* col = hcol[j].data();
        const double hn = std::sqrt(tmp[j]);
        double az2 = tmp[j];  // |A z|² = Σ h_i² + h_{c+1,c}² (orthogonal decomposition)
        for (int i = 0; i <= c; ++i) az2 += col[i] * col[i];
        col[c + 1] = hn;
        if (!std::isfinite(az2)) {
          tr.reason[j] = CNC_REASON_NOT_FINITE;
          in_cycle[j] = 0, len[j] = 0;  // this cycle's x update is dropped
          continue;
        }
        double* cj = cs.data() + std::size_t(j) * m;
        double* sj = sn.data() + std::size_t(j) * m;
        double* gj = g.data() + std::size_t(j) * (m + 1);
        for (int i = 0; i < c; ++i) {  // previous rotations
          const double t0 = cj[i] * col[i] + sj[i] * col[i + 1];
          col[i + 1] = -sj[i] * col[i] + cj[i] * col[i + 1];
          col[i] = t0;
        }
        const double den = std::hypot(col[c], col[c + 1]);
        if (!(den > singular_ratio * std::sqrt(az2))) {
          tr.reason[j] = CNC_REASON_BREAKDOWN;  // R singular: x keeps the previous columns
          in_cycle[j] = 0;
          continue;
        }
        cj[c] = col[c] / den, sj[c] = col[c + 1] / den;
        double* Rj = R.data() + std::size_t(j) * m * m;
        for (int i = 0; i < c; ++i) Rj[std::size_t(c) * m + i] = col[i];
        Rj[std::size_t(c) * m + c] = den;
        gj[c + 1] = -sj[c] * gj[c];
        gj[c] = cj[c] * gj[c];
        len[j] = c + 1;
        tr.res2[j] = gj[c + 1] * gj[c + 1];
        if (tr.res2[j] <= tr.thr2[j]) {
          estimated[j] = 1, in_cycle[j] = 0;
        } else if (hn <= happy_ratio * std::sqrt(az2)) {
          in_cycle[j] = 0;  // invariant Krylov space: the next cycle starts afresh
        } else {
          tmp[j] = 1.0 / hn;
        }
      }
      if (c + 1 == m || std::none_of(in_cycle.begin(), in_cycle.end(), [](char v) { return v; }))
        break;
      ops.active = in_cycle;
      ops.axpby(tmp.data(), w.data(), zeros.data(), V[c + 1].data());
    }

    // x += M⁻¹ (V y) with R y = g, for every system that built columns this cycle.
    std::vector<double> y(ks * m, 0.0);
    std::vector<char> update(ks, 0);
    int cmax = 0;
    for (int j = 0; j < k; ++j) {
      if (len[j] == 0) continue;
      update[j] = 1;
      cmax = std::max(cmax, len[j]);
      const double* Rj = R.data() + std::size_t(j) * m * m;
      const double* gj = g.data() + std::size_t(j) * (m + 1);
      double* yj = y.data() + std::size_t(j) * m;
      for (int i = len[j] - 1; i >= 0; --i) {
        double s = gj[i];
        for (int l = i + 1; l < len[j]; ++l) s -= Rj[std::size_t(l) * m + i] * yj[l];
        yj[i] = s / Rj[std::size_t(i) * m + i];
      }
    }
    if (cmax > 0) {
      ops.active = update;
      for (int i = 0; i < cmax; ++i) {
        for (int j = 0; j < k; ++j) coef[j] = i < len[j] ? y[std::size_t(j) * m + i] : 0.0;
        ops.axpby(coef.data(), V[i].data(), i == 0 ? zeros.data() : ones.data(), w.data());
      }
      ops.precond(w.data(), z.data());
      ops.axpby(ones.data(), z.data(), ones.data(), x);
    }
  }
  return tr.finish(a, b, x, stopped, spmvs);
}

}  // namespace cnc
