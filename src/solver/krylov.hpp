// Nonsymmetric Krylov solvers (BiCGSTAB, restarted GMRES) and the small vector-operation layer
// they are written against.
//
// PCG drives a backend through fused device steps (backend.hpp). BiCGSTAB and GMRES need other
// recurrences, so they are written once against `krylov_ops`: k systems at once, column-major
// host vectors (system j at offset j*n), per-system scalars. The SpMV runs on the backend through
// device_system::apply; everything else (Jacobi scaling, dot products, axpby) runs on the host,
// multithreaded over fixed row chunks. GPU backends therefore move two vectors across the bus
// per SpMV: correct everywhere, but a device-resident version of these operations is future work.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "conversion/matrix.hpp"
#include "solver/pcg.hpp"

namespace cnc {

class thread_pool;

class krylov_ops {
 public:
  // `d`: the Jacobi inverse diagonal (at least a.n values), or nullptr for no preconditioner.
  // threads: host threads for the vector operations (0 = one per core).
  krylov_ops(device_system& sys, const csr_view& a, const double* d, int k, int threads);
  ~krylov_ops();

  std::size_t n() const { return n_; }
  int k() const { return k_; }
  std::vector<double> vec() const { return std::vector<double>(n_ * std::size_t(k_), 0.0); }

  // Columns the host operations touch; the others are left exactly as they are (dot gives 0).
  std::vector<char> active;

  void spmv(const double* x, double* y);     // y = A x, every column (backend precision)
  void precond(const double* v, double* z);  // z = d∘v (z = v without preconditioner)
  void dot(const double* u, const double* v, double* out);  // out[j] = u_j·v_j, fixed order
  // y_j = alpha_j x_j + beta_j y_j; beta_j == 0 overwrites y_j (NaN in y does not survive).
  void axpby(const double* alpha, const double* x, const double* beta, double* y);
  // r = b - A x with the double CSR matrix on the host (true residual, whatever the precision).
  void residual(const double* b, const double* x, double* r);

 private:
  template <class F>
  void over_chunks(F&& fn);  // fn(chunk, row0, row1) for every row chunk, in parallel

  device_system& sys_;
  csr_view a_;
  const double* d_;
  std::size_t n_;
  int k_;
  std::int64_t n_chunks_;
  std::vector<double> partial_;  // n_chunks_ * k partial sums of a dot product
  std::unique_ptr<thread_pool> pool_;
};

struct krylov_params {
  pcg_params base;            // max_iterations, threshold, max_restarts, progress, log
  int restart = 30;           // GMRES: Krylov vectors per cycle (>= 1)
  int threads = 0;            // host threads for vector operations (0 = one per core)
  const double* d = nullptr;  // Jacobi inverse diagonal, nullptr = no preconditioner
};

// Both solve a x = b for k systems (column-major, n = a.n rows; x: initial guess in, solution
// out) with right Jacobi preconditioning, stopping when ||b - A x|| <= threshold ||b||. They
// fill pcg_result like pcg_solve: `iterations` counts solver iterations (one BiCGSTAB iteration
// = two SpMVs, one GMRES iteration = one Arnoldi step), `iteration_steps` counts SpMVs (the unit
// of the context's flop and byte rates).
pcg_result bicgstab_solve(device_system& sys, const csr_view& a, int k, const double* b,
                          double* x, const krylov_params& prm);
pcg_result gmres_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                       const krylov_params& prm);

// Shared bookkeeping of the two solvers: norms of b, thresholds, per-system outcome, and the
// final true-residual check (converged but true residual above 2x threshold -> stagnated).
struct krylov_track {
  krylov_track(const csr_view& a, int k, const double* b, double* x, double threshold);
  int k;
  std::vector<double> bnorm2, thr2;
  std::vector<int> reason;  // 0 while running, else CNC_REASON_*
  std::vector<std::int64_t> iters;
  std::vector<double> res2;  // last recursive / estimated ||r||²
  std::vector<int> restarts;
  bool all_zero = true;
  bool any_running() const;
  double worst_relative() const;  // max sqrt(res2/bnorm2) over running systems
  std::vector<char> running_mask() const;
  pcg_result finish(const csr_view& a, const double* b, const double* x, bool stopped,
                    std::int64_t spmvs) const;
};

// How close two residuals must be for a converged system to count as converged (as in pcg).
constexpr double krylov_true_slack = 2.0;

}  // namespace cnc
