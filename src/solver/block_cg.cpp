// Block CG (O'Leary 1980) for the k systems of a device_system, in the breakdown-free form of
// Ji & Li (2017): with X, R = B - A X, Z = M⁻¹ R (k columns each) and P an orthonormal search
// block of s <= k columns,
//
//   Q = A P,  α = (PᵀQ)⁻¹ PᵀR,  X += P α,  R -= Q α,
//   Z = M⁻¹ R,  β = -(PᵀQ)⁻¹ QᵀZ,  P = orth(Z + P β).
//
// orth keeps the directions of Z + P β that are linearly independent: the Gram matrix of its
// columns, each scaled to unit norm (so a column whose residual is far smaller than the others'
// is not taken for a dependent one), is diagonalized, and eigenvalues below a relative tolerance
// are dropped. Linearly dependent right-hand sides (b₂ = 2 b₁) or a block that loses rank as the
// Krylov space fills give s < k instead of a singular PᵀAP. A system leaves the block when its
// own residual reaches the threshold (its x and r are then left as they are); its iteration count
// is the iteration where that happened. The k×k algebra runs on the host (Eigen); the vectors
// stay on the device, touched through the vector surface and its cross-column products
// (device_system::spmv_gram, block_grams, block_update, block_combine2: fused where the backend
// has them).
// P occupies the first s columns of its vector; the others are kept at zero.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cnc.h"
#include "pcg_contract.h"
#include "solver/krylov.hpp"
#include "util/timer.hpp"

namespace cnc {

namespace {

using matrix = Eigen::MatrixXd;

// Relative tolerance on the eigenvalues of the scaled Gram matrix (squared singular values): a
// direction below it is dropped as dependent. Vectors in float carry less.
double drop_tolerance(int vector_bytes) { return vector_bytes == 4 ? 1e-9 : 1e-12; }

// Z + P β's Gram matrix is summed from its terms' unless a diagonal entry falls below this
// fraction of its largest term (the sum's relative error grows by the inverse of that ratio).
constexpr double cancellation = 1e-2;

}  // namespace

pcg_result block_cg_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                          const krylov_params& prm) {
  krylov_track tr(sys, a.n, k, b, x, prm.base.threshold);
  if (tr.all_zero) return tr.finish(sys, nullptr, a, b, x, prm, false, 0);
  krylov_ops ops(sys, k, prm);
  const std::size_t ks = std::size_t(k), kk = ks * ks;
  const int X = device_system::vec_x, R = device_system::vec_r, Q = device_system::vec_q;
  // P and the block the next P is made in, swapped each time.
  int P = device_system::vec_p, W = ops.vec();
  const int Z = ops.vec(), T = ops.vec();
  const double tol = drop_tolerance(prm.vector_bytes);
  std::vector<double> rz(ks), two(2 * ks), ones(ks, 1.0);
  std::vector<double> g2(2 * kk), g6(device_system::block_update_size(k)), coef(kk), coef2(kk);
  std::vector<char> fresh(ks, 1);
  const int z_r[2] = {Z, R};
  // The Gram products of an iteration: PᵀQ with the SpMV; after the update QᵀZ (for β), the
  // diagonals of RᵀZ and RᵀR, and, where the update is fused, ZᵀZ, PᵀZ, PᵀP, from which the
  // Gram matrix of Z + P β is formed on the host instead of reading Z + P β once more, and RᵀZ,
  // from which the next P's PᵀR is formed: three passes over the vectors an iteration (the
  // SpMV with PᵀQ where the backend fuses them, else a Gram pass after it; the update with its
  // Grams, which does not store Z = d∘R; the new P, made from d∘R). PᵀR is read in a Gram pass
  // where it is not known (the first iteration, after a restart, without the fused update). Without
  // the fused update each product is a pass of its own, so only QᵀZ and the diagonals are taken,
  // and Z + P β is made and its Gram matrix read.
  enum { qz_, zz_, pz_, pp_, rz_ };  // g6's blocks (block_update's order), then r·z and r·r
  const bool fused = ops.block_fused();
  const double* rz_new_of = g6.data() + device_system::block_update_grams * kk;
  const double* rr_of = rz_new_of + ks;
  int s = 0;  // columns of P
  matrix G;   // PᵀAP (s x s) of the current P
  // PᵀR of the current P and R (pr[i*k + j] = p_i·r_j), where pr_known: after the update
  // PᵀR - PᵀQ α (zero but for rounding, carried as computed), and for the next P = Z C1 + P C2,
  // C1ᵀ ZᵀR + C2ᵀ PᵀR, with ZᵀR from the update pass's RᵀZ.
  std::vector<double> pr(kk, 0.0);
  bool pr_known = false;

  auto entry = [&](const std::vector<double>& gm, int c, int i, int j) {
    return gm[std::size_t(c) * kk + std::size_t(i) * ks + std::size_t(j)];
  };
  auto columns_of = [&](const std::vector<char>& S) {
    std::vector<int> v;
    for (int j = 0; j < k; ++j)
      if (S[j]) v.push_back(j);
    return v;
  };

  // Ends every system still in the block (S: their columns) with `reason`; no search block left.
  auto end_block = [&](const std::vector<char>& S, int reason, const std::string& why) {
    for (int j = 0; j < k; ++j)
      if (S[j] && tr.reason[j] == 0) tr.reason[j] = reason;
    if (prm.base.log) prm.base.log(CNC_LOG_WARNING, "block CG: " + why);
    s = 0;
  };

  // P = orth(Z_cols + P beta): h is the Gram matrix of those columns (m x m), beta s x m (or
  // empty: P is not in it). s becomes the new P's columns (0 when the block ended). rzm: RᵀZ
  // (block_update's order) of the current R and Z, from which the new P's PᵀR is formed, or
  // nullptr (then it is read with the next PᵀQ). from_r: Z is not stored (the fused update): the
  // combination reads R scaled by d instead.
  auto orthonormalize = [&](const std::vector<char>& S, const std::vector<int>& cols,
                            const matrix& h0, const matrix& beta, const double* rzm, bool from_r) {
    pr_known = false;
    std::vector<int> kept;
    std::vector<double> scale;
    for (int p = 0; p < int(cols.size()); ++p) {
      const double d = h0(p, p);
      if (!std::isfinite(d)) {
        end_block(S, CNC_REASON_NOT_FINITE, "the search block holds NaN or Inf");
        return;
      }
      if (d > 0) kept.push_back(p), scale.push_back(1.0 / std::sqrt(d));
    }
    const int m = int(kept.size());
    if (m == 0) {
      end_block(S, CNC_REASON_BREAKDOWN, "the search block vanished before convergence");
      return;
    }
    matrix h(m, m);
    for (int p = 0; p < m; ++p)
      for (int q = 0; q < m; ++q) h(p, q) = h0(kept[p], kept[q]) * scale[p] * scale[q];
    h = 0.5 * (h + h.transpose());
    Eigen::SelfAdjointEigenSolver<matrix> eig(h);
    if (eig.info() != Eigen::Success || !eig.eigenvalues().allFinite()) {
      end_block(S, CNC_REASON_NOT_FINITE, "the search block's Gram matrix is not finite");
      return;
    }
    const double top = eig.eigenvalues()(m - 1);
    matrix c = matrix::Zero(int(cols.size()), m);  // new P = (Z_cols + P beta) c
    int made = 0;
    for (int e = m - 1; e >= 0; --e) {  // largest first
      const double lambda = eig.eigenvalues()(e);
      if (!(lambda > tol * top)) break;
      const double inv = 1.0 / std::sqrt(lambda);
      for (int p = 0; p < m; ++p) c(kept[p], made) = eig.eigenvectors()(p, e) * scale[p] * inv;
      ++made;
    }
    if (made < m && prm.base.log)
      prm.base.log(CNC_LOG_INFO, "block CG: " + std::to_string(m - made) + " of " +
                                     std::to_string(m) +
                                     " search directions dropped as linearly dependent");
    std::fill(coef.begin(), coef.end(), 0.0);
    std::fill(coef2.begin(), coef2.end(), 0.0);
    for (int p = 0; p < int(cols.size()); ++p)
      for (int e = 0; e < made; ++e) coef[std::size_t(cols[p]) * ks + std::size_t(e)] = c(p, e);
    if (beta.size() > 0) {
      const matrix bc = beta * c;  // s x made
      for (int p = 0; p < int(bc.rows()); ++p)
        for (int e = 0; e < made; ++e) coef2[std::size_t(p) * ks + std::size_t(e)] = bc(p, e);
    }
    if (rzm) {  // new PᵀR[e][j] = Σ_i coef[i][e] (ZᵀR)[i][j] + Σ_p coef2[p][e] PᵀR[p][j]
      std::vector<double> next_pr(kk, 0.0);
      for (int e = 0; e < made; ++e)
        for (std::size_t j = 0; j < ks; ++j) {
          double v = 0.0;
          for (std::size_t i = 0; i < ks; ++i)
            v += coef[i * ks + std::size_t(e)] * rzm[j * ks + i] +
                 coef2[i * ks + std::size_t(e)] * pr[i * ks + j];
          next_pr[std::size_t(e) * ks + j] = v;
        }
      pr.swap(next_pr);
      pr_known = true;
    }
    // Every column of the new P written: those past `made` are zero.
    ops.block_combine2(from_r ? R : Z, coef.data(), P, coef2.data(), W, from_r);
    std::swap(P, W);
    s = made;
  };

  // Z's Gram matrix over cols, read from the device.
  auto gram_of_z = [&](const std::vector<int>& cols) {
    const int zz[1] = {Z};
    ops.block_grams(zz, zz, 1, g6.data());
    matrix h(int(cols.size()), int(cols.size()));
    for (int p = 0; p < int(cols.size()); ++p)
      for (int q = 0; q < int(cols.size()); ++q) h(p, q) = entry(g6, 0, cols[p], cols[q]);
    return h;
  };

  // r = b - A x for the systems in ops.active; then z, r·z, r·r and P for the whole block.
  auto restart = [&]() {
    ops.residual(X, R);
    ops.active = tr.running_mask();
    ops.precond(R, Z);
    ops.dots(R, z_r, 2, two.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      rz[j] = two[j], tr.res2[j] = two[ks + j];
      fresh[j] = 1;
    }
    const std::vector<char> S = tr.running_mask();
    const std::vector<int> cols = columns_of(S);
    orthonormalize(S, cols, gram_of_z(cols), matrix(), nullptr, false);
  };
  ops.active = tr.running_mask();
  restart();

  auto residual_status = [&](double rr, double rz_, double thr2) {
    return cnc_status_of_residual(rr, rz_, thr2);
  };
  auto reason_of = [](int st) {
    return st == CNC_ST_NOT_FINITE           ? CNC_REASON_NOT_FINITE
           : st == CNC_ST_INDEFINITE_PRECOND ? CNC_REASON_INDEFINITE_PRECOND
                                             : CNC_REASON_INDEFINITE_MATRIX;
  };

  std::int64_t it = 0, spmvs = 0;
  bool stopped = false;
  // Where an iteration's wall time goes, logged at the end (INFO): the SpMV with the Gram pass
  // (launch to results on the host), the update pass likewise, the next P (launched, not waited
  // for) and the rest (the k x k algebra, the checks).
  double t_grams = 0, t_update = 0, t_next = 0;
  const double t_loop = now_seconds();
  for (;;) {
    for (int j = 0; j < k; ++j) {
      if (tr.reason[j] != 0) continue;
      const int st = residual_status(tr.res2[j], rz[j], tr.thr2[j]);
      if (st != CNC_ST_RUNNING && st != CNC_ST_CONVERGED) tr.reason[j] = reason_of(st);
    }
    if (tr.verify(ops, T, fresh, it, prm.base, "block CG", restart)) continue;
    if (tr.done(it, prm.base, stopped, sys)) break;
    const std::vector<char> J = tr.running_mask();
    if (s == 0) {  // nothing to search along: the systems left end here
      end_block(J, CNC_REASON_BREAKDOWN, "no search direction left");
      continue;
    }

    // Q = A P over P's s columns; G = PᵀQ, and PᵀR in the same Gram pass where it is not known.
    std::vector<char> first_s(ks, 0);
    std::fill(first_s.begin(), first_s.begin() + s, 1);
    ops.active = first_s;
    double t = now_seconds();
    if (pr_known) {  // PᵀQ from the SpMV's own pass where the backend has it
      ops.spmv_gram(P, Q, g2.data());
    } else {
      ops.spmv(P, Q);
      const int u2[2] = {P, P}, v2[2] = {Q, R};
      ops.block_grams(u2, v2, 2, g2.data());
      std::copy(g2.begin() + std::ptrdiff_t(kk), g2.end(), pr.begin());
    }
    ++spmvs;
    t_grams += now_seconds() - t;
    G.resize(s, s);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < s; ++q) G(p, q) = entry(g2, 0, p, q);
    G = 0.5 * (G + G.transpose());
    if (!G.allFinite()) {
      end_block(J, CNC_REASON_NOT_FINITE, "PᵀAP holds NaN or Inf");
      continue;
    }
    const Eigen::LLT<matrix> llt(G);
    if (llt.info() != Eigen::Success) {
      end_block(J, CNC_REASON_INDEFINITE_MATRIX,
                "PᵀAP is not positive definite: A is not symmetric positive definite");
      continue;
    }
    // α = G⁻¹ PᵀR over the running systems; X += P α, R -= Q α, Z = M⁻¹ R and the products.
    const std::vector<int> cols = columns_of(J);
    const int m = int(cols.size());
    matrix rhs(s, m);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < m; ++q) rhs(p, q) = pr[std::size_t(p) * ks + std::size_t(cols[q])];
    const matrix alpha = llt.solve(rhs);
    const matrix pr_after = rhs - G * alpha;  // PᵀR after R -= Q α
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < m; ++q) pr[std::size_t(p) * ks + std::size_t(cols[q])] = pr_after(p, q);
    std::fill(coef.begin(), coef.end(), 0.0);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < m; ++q) coef[std::size_t(p) * ks + std::size_t(cols[q])] = alpha(p, q);
    ops.active = J;
    t = now_seconds();
    if (fused) {  // Z = d∘R not stored: the next P is made from R
      ops.block_update(P, Q, coef.data(), X, R, device_system::no_vector, g6.data());
    } else {  // the same, its products limited to what this path uses
      ops.block_combine(P, coef.data(), ones.data(), X);
      for (double& v : coef) v = -v;
      ops.block_combine(Q, coef.data(), ones.data(), R);
      ops.precond(R, Z);
      ops.dots(R, z_r, 2, g6.data() + device_system::block_update_grams * kk);
      ops.block_dots(Q, Z, g6.data());
    }
    t_update += now_seconds() - t;
    std::vector<char> next(ks, 0);
    bool any_next = false;
    for (int j = 0; j < k; ++j) {
      if (!J[j]) continue;
      const double rz_new = rz_new_of[j], rr = rr_of[j];
      tr.res2[j] = rr, fresh[j] = 0, rz[j] = rz_new;
      ++tr.iters[j];
      if (residual_status(rr, rz_new, tr.thr2[j]) == CNC_ST_RUNNING) next[j] = 1, any_next = true;
    }
    ++it;
    if (!any_next) continue;  // decided at the next check

    // β = -G⁻¹ QᵀZ over the systems still running; P = orth(Z + P β), whose Gram matrix is
    // ZᵀZ + (PᵀZ)ᵀβ + βᵀPᵀZ + βᵀ(PᵀP)β. Where a column of Z + P β is much shorter than its
    // terms that sum loses the digits the dependence test needs: then Z + P β is made and its
    // Gram matrix read instead.
    const std::vector<int> nc = columns_of(next);
    const int mn = int(nc.size());
    matrix qz(s, mn);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < mn; ++q) qz(p, q) = entry(g6, qz_, p, nc[q]);
    const matrix beta = -llt.solve(qz);
    ops.active = next;
    if (fused) {
      matrix pz(s, mn), zz(mn, mn), pp(s, s);
      for (int p = 0; p < s; ++p)
        for (int q = 0; q < mn; ++q) pz(p, q) = entry(g6, pz_, p, nc[q]);
      for (int p = 0; p < mn; ++p)
        for (int q = 0; q < mn; ++q) zz(p, q) = entry(g6, zz_, nc[p], nc[q]);
      for (int p = 0; p < s; ++p)
        for (int q = 0; q < s; ++q) pp(p, q) = entry(g6, pp_, p, q);
      const matrix pb = beta.transpose() * pp * beta;
      const matrix h = zz + pz.transpose() * beta + beta.transpose() * pz + pb;
      bool lost = false;
      for (int p = 0; p < mn; ++p)
        lost = lost || !(h(p, p) >= cancellation * std::max(zz(p, p), pb(p, p)));
      if (!lost) {
        t = now_seconds();
        orthonormalize(next, nc, h, beta, g6.data() + std::size_t(rz_) * kk, true);
        t_next += now_seconds() - t;
        continue;
      }
    }
    std::fill(coef.begin(), coef.end(), 0.0);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < mn; ++q) coef[std::size_t(p) * ks + std::size_t(nc[q])] = beta(p, q);
    if (fused) ops.precond(R, Z);  // the fused update did not store it
    ops.block_combine(P, coef.data(), ones.data(), Z);
    orthonormalize(next, nc, gram_of_z(nc), matrix(), nullptr, false);
  }
  if (prm.base.log && it > 0) {
    const double all = now_seconds() - t_loop, per = 1e3 / double(it);
    char line[240];
    std::snprintf(line, sizeof line,
                  "block CG: %lld iterations, %.3f ms each: SpMV and Gram pass %.3f ms and update "
                  "pass %.3f ms (each to its results on the host), next P %.3f ms (launched), the "
                  "rest %.3f ms",
                  (long long)it, all * per, t_grams * per, t_update * per, t_next * per,
                  (all - t_grams - t_update - t_next) * per);
    prm.base.log(CNC_LOG_INFO, line);
  }
  return tr.finish(sys, &ops, a, b, x, prm, stopped, spmvs);
}

}  // namespace cnc
