// Restarted GMRES(m) (Saad & Schultz 1986) with right Jacobi preconditioning, classical
// Gram-Schmidt with selective reorthogonalization and Givens rotations, for k systems at once,
// over the device's vector surface (only scalars come to the host). Each cycle starts from the true
// residual b - A x in double, so a cycle whose estimate converged is verified by the next one:
// if the true residual is more than 2x above the threshold, more cycles run (at most
// max_restarts times), as pcg does. Inside a cycle, a system leaves when its residual estimate
// converges, the iteration limit or a stop request comes, or the Krylov space is exhausted; its
// x is updated at the end of the cycle from the columns it built.
// Breakdown: the rotated Hessenberg column is zero (A singular on the Krylov space), so the
// least-squares residual can no longer decrease.
// Written once for T = double and, for complex systems (krylov_params::complex), T = complex:
// Hessenberg entries h_ij = (v_i, w) = conj(v_i)·w, complex Givens rotations (c real, s complex).
#include <algorithm>
#include <cmath>
#include <complex>

#include "cnc.h"
#include "solver/krylov.hpp"

namespace cnc {

namespace {
constexpr double happy_ratio = 1e-14;     // h_{j+1,j} <= this * |A z_j|: Krylov space exhausted
constexpr double singular_ratio = 1e-16;  // rotated diagonal <= this * |A z_j|: R is singular
// A second Gram-Schmidt pass runs for the systems whose w lost more than this fraction of its
// norm in the first (Daniel, Gragg, Kaufman and Stewart's criterion): twice is enough.
constexpr double reorthogonalize_below = 0.7071067811865476;

double conj_of(double v) { return v; }
std::complex<double> conj_of(std::complex<double> v) { return std::conj(v); }
double abs2(double v) { return v * v; }
double abs2(std::complex<double> v) { return std::norm(v); }

// The rotation [c s; -conj(s) c] taking (a, b) to (r, 0), den = sqrt(|a|² + |b|²) > 0: r = den
// for real values; r = den a / |a| (den where a = 0) for complex ones.
void rotation(double a, double b, double den, double& c, double& s, double& r) {
  c = a / den, s = b / den, r = den;
}
void rotation(std::complex<double> a, std::complex<double> b, double den, double& c,
              std::complex<double>& s, std::complex<double>& r) {
  const double aa = std::abs(a);
  if (aa == 0.0) {
    c = 0.0, s = std::conj(b) / den, r = den;
    return;
  }
  const std::complex<double> phase = a / aa;
  c = aa / den, s = phase * std::conj(b) / den, r = phase * den;
}

// Classical Gram-Schmidt of w against V[0..c], repeated where the criterion asks: h (layout
// h[i*k + j]) gets the coefficients, norm0 ‖w‖² before and tmp ‖w‖² after. The projection
// w -= Σ h_i V_i is one combine (w read and written once per pass, not c + 1 times). ‖w‖² after
// it is Pythagoras' ‖w‖² - Σ |h_i|² where that keeps more than half of ‖w‖² (it then loses at most
// a bit, and no second pass is due), so the common step costs one host read (the dots); a
// system with more cancellation gets its norm measured and, by the criterion, a second pass.
// The dots give (w, V_i); h takes their conjugates, (V_i, w).
template <class T>
void orthogonalize(krylov_ops& ops, const std::vector<int>& V, int c, int w, std::vector<T>& h,
                   std::vector<T>& h2, std::vector<double>& norm0, std::vector<double>& tmp,
                   std::vector<T>& coef, const std::vector<double>& ones) {
  const int k = ops.k();
  std::vector<int> against(V.begin(), V.begin() + c + 1);
  against.push_back(w);  // ‖w‖² in the same read
  ops.dots(w, against.data(), c + 2, h.data());
  for (int j = 0; j < k; ++j) norm0[j] = std::real(h[std::size_t(c + 1) * k + j]);
  for (std::size_t e = 0; e < std::size_t(c + 1) * k; ++e) h[e] = conj_of(h[e]);
  auto subtract = [&](const std::vector<T>& hh) {
    for (std::size_t e = 0; e < std::size_t(c + 1) * k; ++e) coef[e] = -hh[e];
    ops.combine(V.data(), c + 1, coef.data(), ones.data(), w);
  };
  subtract(h);
  const double keep2 = reorthogonalize_below * reorthogonalize_below;
  const std::vector<char> outer = ops.active;
  std::vector<char> measure(outer.size(), 0);
  bool any = false;
  for (int j = 0; j < k; ++j) {
    if (!outer[j]) continue;
    double est = norm0[j];
    for (int i = 0; i <= c; ++i) est -= abs2(h[std::size_t(i) * k + j]);
    tmp[j] = est;
    if (!(est > keep2 * norm0[j])) measure[j] = 1, any = true;  // NaN measured too
  }
  if (!any) return;
  ops.active = measure;
  std::vector<double> exact(static_cast<std::size_t>(k));
  ops.dot(w, w, exact.data());
  std::vector<char> again(outer.size(), 0);
  any = false;
  for (int j = 0; j < k; ++j) {
    if (!measure[j]) continue;
    tmp[j] = exact[j];
    if (exact[j] < keep2 * norm0[j]) again[j] = 1, any = true;
  }
  if (!any) {
    ops.active = outer;
    return;
  }
  ops.active = again;
  const std::vector<double> kept = tmp;
  ops.dots(w, against.data(), c + 1, h2.data());
  for (std::size_t e = 0; e < std::size_t(c + 1) * k; ++e) h2[e] = conj_of(h2[e]);
  subtract(h2);
  ops.dot(w, w, tmp.data());
  for (int j = 0; j < k; ++j) {
    if (!again[j]) {
      tmp[j] = kept[j];
      continue;
    }
    for (int i = 0; i <= c; ++i) h[std::size_t(i) * k + j] += h2[std::size_t(i) * k + j];
  }
  ops.active = outer;
}
template <class T>
pcg_result run(device_system& sys, const csr_view& a, int k, const double* b, double* x,
               const krylov_params& prm, krylov_track& tr) {
  krylov_ops ops(sys, k, prm);
  const std::size_t ks = std::size_t(k);
  // At most n columns: a Krylov space has no more (and a huge restart asks for no memory). n is
  // every process's rows where the system is split (a.n is this process's).
  double rows = double(a.n);
  sys.sum_over_ranks(&rows, 1);
  const int m = int(std::max<double>(1, std::min<double>(prm.restart, rows)));
  // V[0] is the steps' r, w their q, z their p; V[1..m-1] are made here.
  const int X = device_system::vec_x, w = device_system::vec_q, z = device_system::vec_p;
  std::vector<int> V(static_cast<std::size_t>(m) + 1);  // V[c] for c <= m; V[m] is w's slot
  V[0] = device_system::vec_r;
  if (m > 1) {
    const int first = ops.vecs(m - 1);
    for (int c = 1; c < m; ++c) V[c] = first + c - 1;
  }
  V[m] = w;
  // Per system: R (upper triangle after rotations, column-major m x m), rotations, g.
  std::vector<T> R(ks * m * m), sn(ks * m), g(ks * (m + 1));
  std::vector<double> cs(ks * m);
  std::vector<T> h(ks * (m + 1)), h2(h.size()), coef(h.size());
  std::vector<double> tmp(ks), ones(ks, 1.0), zeros(ks, 0.0), norm0(ks);
  std::vector<std::vector<T>> hcol(ks, std::vector<T>(std::size_t(m) + 1));
  std::vector<int> len(ks, 0);         // Arnoldi columns built this cycle
  std::vector<char> estimated(ks, 0);  // the last cycle's estimate converged
  std::vector<char> in_cycle(ks, 0);

  std::int64_t it = 0, spmvs = 0;
  bool stopped = false;
  for (;;) {
    // Cycle start: true residual of the running systems.
    ops.active = tr.running_mask();
    ops.residual(X, V[0]);
    ops.dot(V[0], V[0], tmp.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      tr.res2[j] = tmp[j];
      const double slack2 = true_residual_slack * true_residual_slack;
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
                g.begin() + std::ptrdiff_t(j + 1) * (m + 1), T(0));
      g[std::size_t(j) * (m + 1)] = beta;
    }
    ops.axpby(tmp.data(), V[0], zeros.data(), V[0]);

    for (int c = 0; c < m; ++c) {
      // The iterate is formed at the end of a cycle only: no reader.
      if (prm.base.progress && prm.base.progress(it, tr.worst_relative(), nullptr)) {
        stopped = true;
        break;
      }
      if (it >= prm.base.max_iterations) break;
      ops.active = in_cycle;
      ops.precond(V[c], z);
      ops.spmv(z, w);
      ++spmvs;
      orthogonalize(ops, V, c, w, h, h2, norm0, tmp, coef, ones);
      for (int j = 0; j < k; ++j)
        if (in_cycle[j])
          for (int i = 0; i <= c; ++i) hcol[j][i] = h[std::size_t(i) * k + j];
      ++it;
      for (int j = 0; j < k; ++j) {
        if (!in_cycle[j]) continue;
        ++tr.iters[j];
        T* col = hcol[j].data();
        const double hn = std::sqrt(tmp[j]);
        const double az2 = norm0[j];  // |A z|², measured before the projection
        col[c + 1] = hn;
        if (!std::isfinite(az2)) {
          tr.reason[j] = CNC_REASON_NOT_FINITE;
          in_cycle[j] = 0, len[j] = 0;  // this cycle's x update is dropped
          continue;
        }
        double* cj = cs.data() + std::size_t(j) * m;
        T* sj = sn.data() + std::size_t(j) * m;
        T* gj = g.data() + std::size_t(j) * (m + 1);
        for (int i = 0; i < c; ++i) {  // previous rotations
          const T t0 = cj[i] * col[i] + sj[i] * col[i + 1];
          col[i + 1] = -conj_of(sj[i]) * col[i] + cj[i] * col[i + 1];
          col[i] = t0;
        }
        const double den = std::hypot(std::abs(col[c]), std::abs(col[c + 1]));
        if (!(den > singular_ratio * std::sqrt(az2))) {
          tr.reason[j] = CNC_REASON_BREAKDOWN;  // R singular: x keeps the previous columns
          in_cycle[j] = 0;
          continue;
        }
        T* Rj = R.data() + std::size_t(j) * m * m;
        rotation(col[c], col[c + 1], den, cj[c], sj[c], Rj[std::size_t(c) * m + c]);
        for (int i = 0; i < c; ++i) Rj[std::size_t(c) * m + i] = col[i];
        gj[c + 1] = -conj_of(sj[c]) * gj[c];
        gj[c] = cj[c] * gj[c];
        len[j] = c + 1;
        tr.res2[j] = abs2(gj[c + 1]);
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
      ops.axpby(tmp.data(), w, zeros.data(), V[c + 1]);
    }

    // x += M⁻¹ (V y) with R y = g, for every system that built columns this cycle.
    std::vector<T> y(ks * m, T(0));
    std::vector<char> update(ks, 0);
    int cmax = 0;
    for (int j = 0; j < k; ++j) {
      if (len[j] == 0) continue;
      update[j] = 1;
      cmax = std::max(cmax, len[j]);
      const T* Rj = R.data() + std::size_t(j) * m * m;
      const T* gj = g.data() + std::size_t(j) * (m + 1);
      T* yj = y.data() + std::size_t(j) * m;
      for (int i = len[j] - 1; i >= 0; --i) {
        T s = gj[i];
        for (int l = i + 1; l < len[j]; ++l) s -= Rj[std::size_t(l) * m + i] * yj[l];
        yj[i] = s / Rj[std::size_t(i) * m + i];
      }
    }
    if (cmax > 0) {
      ops.active = update;
      for (int i = 0; i < cmax; ++i)
        for (int j = 0; j < k; ++j)
          coef[std::size_t(i) * k + j] = i < len[j] ? y[std::size_t(j) * m + i] : T(0);
      ops.combine(V.data(), cmax, coef.data(), zeros.data(), w);
      ops.precond(w, z);
      ops.axpby(ones.data(), z, ones.data(), X);
    }
  }
  return tr.finish(sys, &ops, a, b, x, prm, stopped, spmvs);
}

}  // namespace

pcg_result gmres_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                       const krylov_params& prm) {
  krylov_track tr(sys, a.n, k, b, x, prm.base.threshold);
  if (tr.all_zero) return tr.finish(sys, nullptr, a, b, x, prm, false, 0);
  return prm.complex ? run<std::complex<double>>(sys, a, k, b, x, prm, tr)
                     : run<double>(sys, a, k, b, x, prm, tr);
}

}  // namespace cnc
