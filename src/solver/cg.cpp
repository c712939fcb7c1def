// Preconditioned CG over the vector surface, for k systems at once: the method the fused PCG
// steps run, with z = M⁻¹ r as a vector of its own, so that any preconditioner the surface offers
// (SSOR) can be used. The statuses and their order are the steps' contract
// (kernels/pcg_contract.h); a recursive convergence is verified against the true residual as in
// the other methods (krylov_track::verify).
#include <algorithm>
#include <cmath>
#include <string>

#include "cnc.h"
#include "pcg_contract.h"
#include "solver/krylov.hpp"

namespace cnc {

namespace {
int reason_of_status(int s) {
  return s == CNC_ST_NOT_FINITE           ? CNC_REASON_NOT_FINITE
         : s == CNC_ST_INDEFINITE_MATRIX  ? CNC_REASON_INDEFINITE_MATRIX
         : s == CNC_ST_INDEFINITE_PRECOND ? CNC_REASON_INDEFINITE_PRECOND
                                          : CNC_REASON_CONVERGED;
}
}  // namespace

pcg_result cg_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                    const krylov_params& prm) {
  krylov_track tr(sys, a.n, k, b, x, prm.base.threshold);
  // prm.cg_indefinite (OpenNL's CG): negative curvature is logged once and the iteration goes
  // on; only a zero pᵀAp or rᵀz, which it cannot divide by, stops it.
  bool warned = false;
  auto on_indefinite = [&](const char* what) {
    if (!warned && prm.base.log)
      prm.base.log(CNC_LOG_WARNING, std::string("CG: ") + what +
                                        ": the matrix (or preconditioner) is not positive "
                                        "definite; iterating on");
    warned = true;
  };
  auto residual_status = [&](double rr, double rz_, double thr2) {
    const int s = cnc_status_of_residual(rr, rz_, thr2);
    if (s != CNC_ST_INDEFINITE_PRECOND || !prm.cg_indefinite || rz_ == 0.0) return s;
    on_indefinite("r'z < 0");
    return int(CNC_ST_RUNNING);
  };
  auto pq_status = [&](double pq_) {
    const int s = cnc_status_of_pq(pq_);
    if (s != CNC_ST_INDEFINITE_MATRIX || !prm.cg_indefinite || pq_ == 0.0) return s;
    on_indefinite("p'Ap < 0");
    return int(CNC_ST_RUNNING);
  };
  if (tr.all_zero) return tr.finish(sys, nullptr, a, b, x, prm, false, 0);
  krylov_ops ops(sys, k, prm);
  const std::size_t ks = std::size_t(k);
  const int X = device_system::vec_x, r = device_system::vec_r, p = device_system::vec_p,
            q = device_system::vec_q;
  const int z = ops.vec(), t = ops.vec();
  std::vector<double> rz(ks), pq(ks), alpha(ks), minus(ks), beta(ks), two(2 * ks), ones(ks, 1.0),
      zeros(ks, 0.0);
  std::vector<char> fresh(ks, 1);  // r is a true residual
  const int z_r[2] = {z, r};       // r·z and r·r in one read

  // r = b - A x; z = M⁻¹ r; p = z; rz, rr, for the systems in ops.active.
  auto restart = [&]() {
    ops.residual(X, r);
    ops.precond(r, z);
    ops.axpby(ones.data(), z, zeros.data(), p);
    ops.dots(r, z_r, 2, two.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      rz[j] = two[j], tr.res2[j] = two[ks + j];
      fresh[j] = 1;
    }
  };
  ops.active = tr.running_mask();
  restart();

  std::int64_t it = 0, spmvs = 0;
  bool stopped = false;
  for (;;) {
    for (int j = 0; j < k; ++j) {  // the contract's statuses, convergence verified below
      if (tr.reason[j] != 0) continue;
      const int s = residual_status(tr.res2[j], rz[j], tr.thr2[j]);
      if (s != CNC_ST_RUNNING && s != CNC_ST_CONVERGED) tr.reason[j] = reason_of_status(s);
    }
    if (tr.verify(ops, t, fresh, it, prm.base, "CG", restart)) continue;
    if (tr.done(it, prm.base, stopped, sys)) break;

    ops.active = tr.running_mask();
    ops.spmv(p, q);
    ++spmvs;
    ops.dot(p, q, pq.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      const int s = pq_status(pq[j]);
      if (s != CNC_ST_RUNNING) {
        tr.reason[j] = reason_of_status(s), ops.active[j] = 0;
        continue;
      }
      alpha[j] = rz[j] / pq[j], minus[j] = -alpha[j];
    }
    ops.axpby(alpha.data(), p, ones.data(), X);
    ops.axpby(minus.data(), q, ones.data(), r);
    ops.precond(r, z);
    ops.dots(r, z_r, 2, two.data());
    for (int j = 0; j < k; ++j) {
      if (!ops.active[j]) continue;
      const double rz_new = two[j], rr = two[ks + j];
      tr.res2[j] = rr, fresh[j] = 0;
      ++tr.iters[j];
      if (residual_status(rr, rz_new, tr.thr2[j]) == CNC_ST_RUNNING) {
        beta[j] = rz_new / rz[j];
      } else {
        ops.active[j] = 0;  // decided at the next check
      }
      rz[j] = rz_new;
    }
    ops.axpby(ones.data(), z, beta.data(), p);  // p = z + β p
    ++it;
  }
  return tr.finish(sys, &ops, a, b, x, prm, stopped, spmvs);
}

}  // namespace cnc
