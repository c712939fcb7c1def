// Nonsymmetric Krylov solvers (BiCGSTAB, restarted GMRES), written once over the backend's
// vector surface (backend.hpp): every vector lives on the device, in the backend's precision; the
// host sees only the per-system scalars that `dots` returns. k systems run at once, each with its
// own scalars and status; a finished system is masked out of every later operation.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/backend.hpp"
#include "matrix/matrix.hpp"
#include "solver/pcg.hpp"

namespace cnc {

// The solvers' view of a device_system: vector indices, the current mask, and the bytes and
// flops of every operation issued (the statistics of the method actually run).
struct krylov_params;

class krylov_ops {
 public:
  // Sizes for the byte and flop counts, and the preconditioner, from the method's parameters.
  krylov_ops(device_system& sys, int k, const krylov_params& prm);
  ~krylov_ops();  // frees the vectors made by vec()
  krylov_ops(const krylov_ops&) = delete;
  krylov_ops& operator=(const krylov_ops&) = delete;

  int k() const { return k_; }
  int vec();            // a new device vector, zero-filled
  int vecs(int count);  // `count` of them; the index of the first

  // Columns the operations touch; the others are left exactly as they are (dot gives 0).
  std::vector<char> active;

  void spmv(int x, int y);              // y = A x
  void precond(int v, int z);           // z = d∘v, or D⁻¹ v (complex_dinv); z = v without
  void residual(int x, int r);          // r = b - A x
  void dot(int u, int v, double* out);  // out[j] = u_j·v_j, fixed order
  void dots(int u, const int* v, int count, double* out);  // out[i*k + j] = u_j·v[i]_j
  // y_j = alpha_j x_j + beta_j y_j; beta_j == 0 overwrites y_j (NaN in y does not survive).
  void axpby(const double* alpha, int x, const double* beta, int y);
  // y_j = beta_j y_j + Σ_i coef[i*k + j] v[i]_j (backend.hpp: y read and written once per
  // several v, not once per v); y is none of v.
  void combine(const int* v, int count, const double* coef, const double* beta, int y);
  // Cross-column products (backend.hpp: the mask selects v's, resp. y's, columns).
  void block_dots(int u, int v, double* out);  // out[i*k + j] = u_i·v_j
  void block_combine(int v, const double* coef, const double* beta, int y);
  // Block CG's fused steps (device_system::block_grams, block_update, block_combine2: one pass
  // each). block_grams and block_combine2 are composed from the two products above where the
  // backend has no fused form (the same arithmetic in more passes) and take every column;
  // block_update updates the mask's columns, only where block_fused() (else CNC_ERR_INTERNAL);
  // its z may be device_system::no_vector, block_combine2's v1 scaled by d (backend.hpp; the
  // scaled form also only with the fused passes).
  void block_grams(const int* u, const int* v, int count, double* out);
  // y = A x over the active columns, and out = xᵀ y (block_grams of the pair (x, y)): one pass
  // where the backend fuses them (device_system::spmv_gram), else spmv and block_grams.
  void spmv_gram(int x, int y, double* out);
  void block_update(int p, int q, const double* a, int x, int r, int z, double* out);
  void block_combine2(int v1, const double* c1, int v2, const double* c2, int y, bool scale_v1);
  // Whether block_update runs as the backend's one fused pass here.
  bool block_fused() const;

  // Complex systems (krylov_params::complex: (re, im) pairs): the same operations in complex
  // arithmetic, in one pass each where the backend has them fused (device_system::zdots and
  // zcombine), else over the real ones and device_system::zaxpby (i u is zaxpby(i, u, 0, t)):
  //   dots: out[i*k + j] = conj(u_j)·v[i]_j: Re is the real dot, Im = (i u_j)·v[i]_j.
  //   axpby: y_j = alpha_j x_j + beta_j y_j.
  //   combine: y_j = beta_j y_j + Σ_i coef[i*k + j] v[i]_j: the real parts' combine into y, the
  //   imaginary parts' into a work vector t, then y += i t.
  bool fused_complex() const { return sys_.fused_complex(); }
  using complex = std::complex<double>;
  void dots(int u, const int* v, int count, complex* out);
  void axpby(const complex* alpha, int x, const complex* beta, int y);
  void combine(const int* v, int count, const complex* coef, const double* beta, int y);

  double bytes = 0, flops = 0;  // totals over the operations issued, active columns only

 private:
  void send_mask();
  double columns() const;  // active columns
  int work();              // the complex operations' work vector, made on first use
  void zaxpby(const double* alpha, int x, const double* beta, int y);  // 2k each

  device_system& sys_;
  int k_;
  double rows_, nnz_, matrix_bytes_, vb_;
  double ssor_omega_;               // > 0: precond applies SSOR with this omega
  bool zjacobi_;                    // precond applies the complex diagonal (zprecondition)
  std::vector<std::uint8_t> sent_;  // the mask the device holds
  int work_ = -1;
  std::vector<double> re_, im_, two_a_, two_b_;
};

struct krylov_params {
  pcg_params base;          // max_iterations, threshold, max_restarts, progress, log, ...
  int restart = 30;         // GMRES: Krylov vectors per cycle (>= 1)
  std::int64_t rows = 0;    // padded rows of the device vectors
  std::int64_t nnz = 0;     // matrix entries (flops of one SpMV: 2 nnz per system)
  double matrix_bytes = 0;  // bytes of the matrix read by one SpMV
  int vector_bytes = 8;     // bytes of one vector value on the device
  double ssor_omega = 0;    // > 0: SSOR with this omega in place of Jacobi (device_system::ssor)
  // cg_solve: on past pᵀAp <= 0 / rᵀz < 0, as OpenNL's CG (CNC_INTERNAL_CG_INDEFINITE).
  bool cg_indefinite = false;
  // BiCGSTAB and GMRES in complex arithmetic: the system is the real-equivalent of a complex
  // matrix, its rows (re, im) pairs, with a preconditioner that acts on both parts alike (Jacobi
  // on the real diagonal). Run in real arithmetic, the same methods on the real-equivalent have
  // its spectrum (A's and its conjugate's, symmetric about the real axis) and stall or break
  // down on matrices the complex methods solve (young1c).
  bool complex = false;
  // Complex only: Jacobi on the complex diagonal, D⁻¹ as (re, im) pairs in the system's numbering
  // (device_system::set_complex_jacobi), in place of the device's real Jacobi; null: the latter.
  const double* complex_dinv = nullptr;
};

// Both solve A x = b for k systems (column-major host b and x, n = a.n rows; x: initial guess in,
// solution out, written once at the end) with right Jacobi preconditioning (the device's d, or
// the complex diagonal of krylov_params::complex_dinv),
// stopping when ||b - A x|| <= threshold ||b||. `a` is read on the host only for the final true
// residual when the device does not hold A in double (base.device_residual false). They fill
// pcg_result like pcg_solve: `iterations` counts solver iterations (one BiCGSTAB iteration = two
// SpMVs, one GMRES iteration = one Arnoldi step), `iteration_steps` counts SpMVs, and `bytes` and
// `flops` what the device operations moved and computed.
pcg_result bicgstab_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                          const krylov_params& prm);
pcg_result gmres_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                       const krylov_params& prm);
// Preconditioned CG over the same surface, for preconditioners the fused PCG steps do not have
// (SSOR); same statuses as the steps' contract (kernels/pcg_contract.h).
pcg_result cg_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                    const krylov_params& prm);

// Block CG (O'Leary) for k systems sharing one Krylov space, breakdown-free (Ji & Li 2017): the
// search block is orthonormalized each iteration and directions that are linearly dependent
// dropped, so dependent right-hand sides and columns converging at different iterations work.
// Jacobi or no preconditioner (the device's d); statistics per system as the other methods.
pcg_result block_cg_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                          const krylov_params& prm);

// Shared bookkeeping of the two solvers: b and x on the device, norms of b, thresholds,
// per-system outcome, and the final true-residual check (converged but true residual above the
// slack -> stagnated).
struct krylov_track {
  // Uploads b and x (x = 0 for systems whose b is 0) and computes ‖b‖² on the host (over every
  // process's rows where the system is split: device_system::sum_over_ranks).
  krylov_track(device_system& sys, int n, int k, const double* b, const double* x,
               double threshold);
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
  // Whether to end before iteration `it`: no system running, the progress callback asked to stop
  // (sets `stopped`), or the iteration limit reached. The callback may read the iterate, which
  // the method keeps in sys's x (BiCGSTAB, CG).
  bool done(std::int64_t it, const pcg_params& prm, bool& stopped, device_system& sys) const;
  // Running systems whose res2 is at or below the threshold: converged when `fresh` (res2 is a
  // true residual); otherwise b - A x is computed into device vector t and compared with the
  // threshold times true_residual_slack: converged when it agrees (or no restart is left), else
  // restarted through `restart` (called with ops.active = the systems to restart). Returns
  // whether any system was restarted (its status must then be checked again).
  bool verify(krylov_ops& ops, int t, const std::vector<char>& fresh, std::int64_t it,
              const pcg_params& prm, const char* method, const std::function<void()>& restart);
  // True residuals (device in double, else host), x copied back, statuses combined.
  pcg_result finish(device_system& sys, krylov_ops* ops, const csr_view& a, const double* b,
                    double* x, const krylov_params& prm, bool stopped, std::int64_t spmvs) const;
};

}  // namespace cnc
