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
// (device_system::block_dots, block_combine). P occupies the first s columns of its vector; the
// others are kept at zero.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cnc.h"
#include "pcg_contract.h"
#include "solver/krylov.hpp"

namespace cnc {

namespace {

using matrix = Eigen::MatrixXd;

// Relative tolerance on the eigenvalues of the scaled Gram matrix (squared singular values): a
// direction below it is dropped as dependent. Vectors in float carry less.
double drop_tolerance(int vector_bytes) { return vector_bytes == 4 ? 1e-9 : 1e-12; }

}  // namespace

pcg_result block_cg_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                          const krylov_params& prm) {
  krylov_track tr(sys, a.n, k, b, x, prm.base.threshold);
  if (tr.all_zero) return tr.finish(sys, nullptr, a, b, x, prm, false, 0);
  krylov_ops ops(sys, k, prm);
  const std::size_t ks = std::size_t(k), kk = ks * ks;
  const int X = device_system::vec_x, R = device_system::vec_r, P = device_system::vec_p,
            Q = device_system::vec_q;
  const int Z = ops.vec(), T = ops.vec();
  const double tol = drop_tolerance(prm.vector_bytes);
  std::vector<double> rz(ks), two(2 * ks), ones(ks, 1.0), zeros(ks, 0.0);
  std::vector<double> g(kk), c(kk), coef(kk);
  std::vector<char> fresh(ks, 1);
  const int z_r[2] = {Z, R};
  int s = 0;  // columns of P
  matrix G;   // PᵀAP (s x s) of the current P

  // Ends every system still in the block (S: their columns) with `reason`; no search block left.
  auto end_block = [&](const std::vector<char>& S, int reason, const std::string& why) {
    for (int j = 0; j < k; ++j)
      if (S[j] && tr.reason[j] == 0) tr.reason[j] = reason;
    if (prm.base.log) prm.base.log(CNC_LOG_WARNING, "block CG: " + why);
    s = 0;
  };

  // P = orth(Z) over the columns in S; s its columns (0 when the block ended).
  auto orthonormalize = [&](const std::vector<char>& S) {
    s = 0;
    ops.active = S;
    ops.block_dots(Z, Z, g.data());
    std::vector<int> cols;
    std::vector<double> scale;
    for (int j = 0; j < k; ++j) {
      if (!S[j]) continue;
      const double d = g[std::size_t(j) * ks + std::size_t(j)];
      if (!std::isfinite(d)) {
        end_block(S, CNC_REASON_NOT_FINITE, "the search block holds NaN or Inf");
        return;
      }
      if (d > 0) cols.push_back(j), scale.push_back(1.0 / std::sqrt(d));
    }
    const int m = int(cols.size());
    if (m == 0) {
      end_block(S, CNC_REASON_BREAKDOWN, "the search block vanished before convergence");
      return;
    }
    matrix h(m, m);
    for (int p = 0; p < m; ++p)
      for (int q = 0; q < m; ++q)
        h(p, q) = g[std::size_t(cols[p]) * ks + std::size_t(cols[q])] * scale[p] * scale[q];
    h = 0.5 * (h + h.transpose());
    Eigen::SelfAdjointEigenSolver<matrix> eig(h);
    if (eig.info() != Eigen::Success || !eig.eigenvalues().allFinite()) {
      end_block(S, CNC_REASON_NOT_FINITE, "the search block's Gram matrix is not finite");
      return;
    }
    const double top = eig.eigenvalues()(m - 1);
    std::fill(coef.begin(), coef.end(), 0.0);
    s = 0;
    for (int e = m - 1; e >= 0; --e) {  // largest first
      const double lambda = eig.eigenvalues()(e);
      if (!(lambda > tol * top)) break;
      const double inv = 1.0 / std::sqrt(lambda);
      for (int p = 0; p < m; ++p)
        coef[std::size_t(cols[p]) * ks + std::size_t(s)] =
            eig.eigenvectors()(p, e) * scale[p] * inv;
      ++s;
    }
    if (s < m && prm.base.log)
      prm.base.log(CNC_LOG_INFO, "block CG: " + std::to_string(m - s) + " of " + std::to_string(m) +
                                     " search directions dropped as linearly dependent");
    ops.active.assign(ks, 1);  // P's columns past s are zeroed (coefficients 0, beta 0)
    ops.block_combine(Z, coef.data(), zeros.data(), P);
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
    orthonormalize(tr.running_mask());
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

    // Q = A P over P's s columns; G = PᵀQ.
    std::vector<char> first_s(ks, 0);
    std::fill(first_s.begin(), first_s.begin() + s, 1);
    ops.active = first_s;
    ops.spmv(P, Q);
    ++spmvs;
    ops.block_dots(P, Q, g.data());
    G.resize(s, s);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < s; ++q) G(p, q) = g[std::size_t(p) * ks + std::size_t(q)];
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
    // α = G⁻¹ PᵀR over the running systems; X += P α, R -= Q α.
    ops.active = J;
    ops.block_dots(P, R, c.data());
    const std::vector<int> cols = [&] {
      std::vector<int> v;
      for (int j = 0; j < k; ++j)
        if (J[j]) v.push_back(j);
      return v;
    }();
    const int m = int(cols.size());
    matrix rhs(s, m);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < m; ++q) rhs(p, q) = c[std::size_t(p) * ks + std::size_t(cols[q])];
    matrix alpha = llt.solve(rhs);
    std::fill(coef.begin(), coef.end(), 0.0);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < m; ++q) coef[std::size_t(p) * ks + std::size_t(cols[q])] = alpha(p, q);
    ops.block_combine(P, coef.data(), ones.data(), X);
    for (double& v : coef) v = -v;
    ops.block_combine(Q, coef.data(), ones.data(), R);
    ops.precond(R, Z);
    ops.dots(R, z_r, 2, two.data());
    std::vector<char> next(ks, 0);
    bool any_next = false;
    for (int j = 0; j < k; ++j) {
      if (!J[j]) continue;
      const double rz_new = two[j], rr = two[ks + j];
      tr.res2[j] = rr, fresh[j] = 0, rz[j] = rz_new;
      ++tr.iters[j];
      if (residual_status(rr, rz_new, tr.thr2[j]) == CNC_ST_RUNNING) next[j] = 1, any_next = true;
    }
    ++it;
    if (!any_next) continue;  // decided at the next check

    // β = -G⁻¹ QᵀZ over the systems still running; P = orth(Z + P β).
    ops.active = next;
    ops.block_dots(Q, Z, c.data());
    std::vector<int> nc;
    for (int j = 0; j < k; ++j)
      if (next[j]) nc.push_back(j);
    matrix qz(s, int(nc.size()));
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < int(nc.size()); ++q)
        qz(p, q) = c[std::size_t(p) * ks + std::size_t(nc[std::size_t(q)])];
    const matrix beta = -llt.solve(qz);
    std::fill(coef.begin(), coef.end(), 0.0);
    for (int p = 0; p < s; ++p)
      for (int q = 0; q < int(nc.size()); ++q)
        coef[std::size_t(p) * ks + std::size_t(nc[std::size_t(q)])] = beta(p, q);
    ops.block_combine(P, coef.data(), ones.data(), Z);
    orthonormalize(next);
  }
  return tr.finish(sys, &ops, a, b, x, prm, stopped, spmvs);
}

}  // namespace cnc
