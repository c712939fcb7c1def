/* The PCG step contract, written once for every side that implements or checks it: the host
 * (C++: src/backends/backend.hpp, the CPU backend, the solver), the CUDA kernels, the OpenCL
 * kernels (this file is compiled first in their program) and the tests. ASCII only (the OpenCL
 * sources are embedded byte for byte).
 *
 * Vectors per right-hand side j: x, r, p, q, b and d (d: Jacobi inverse diagonal, 1 without a
 * preconditioner). Each step applies to the systems whose status is RUNNING when it starts;
 * the others are left untouched, so extra iterations after convergence are no-ops.
 *   init(thr2):  for EVERY j: r = b - A x; p = d r; rz = sum d r^2; rr = sum r^2; pq = 0;
 *                iters = 0; status = cnc_status_of_residual(rr, rz, thr2).
 *   spmv_dot():  q = A p; pq = sum p q.
 *   update_xr(): status = cnc_status_of_pq(pq); if still running: alpha = rz / pq;
 *                r -= alpha q; rz_new = sum d r^2; rr = sum r^2; iters += 1.
 *   update_p():  x += alpha p with alpha = rz / pq (update_xr's step, which a system running
 *                here has just taken; x is read and written in the pass that reads p anyway,
 *                one vector pass fewer than in update_xr); then
 *                status = cnc_status_of_residual(rr, rz_new, thr2); if still running:
 *                beta = rz_new / rz; rz = rz_new; p = d r + beta p.
 * So x is the iterate of the step only after update_p (the sequence is always the three steps).
 * Dot products accumulate in double in every precision (float only on OpenCL devices without
 * fp64). Reductions use a fixed blocking (no floating-point atomics), so one backend with one
 * configuration is bit-reproducible. */
#ifndef CNC_PCG_CONTRACT_H
#define CNC_PCG_CONTRACT_H

#if defined(__OPENCL_VERSION__)
#if HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define CNC_CONTRACT_FN
#define CNC_CONTRACT_REAL ACC_T /* double, or float on devices without fp64 */
#define CNC_IS_FINITE(v) isfinite(v)
#elif defined(__CUDACC__)
#define CNC_CONTRACT_FN __host__ __device__ inline
#define CNC_CONTRACT_REAL double
#define CNC_IS_FINITE(v) isfinite(v)
#else
#include <cmath>
#define CNC_CONTRACT_FN inline
#define CNC_CONTRACT_REAL double
#define CNC_IS_FINITE(v) std::isfinite(v)
#endif

/* Statuses of a system. RUNNING until a step ends it; the others hold until the next init. */
#define CNC_ST_RUNNING 0
#define CNC_ST_CONVERGED 1
#define CNC_ST_INDEFINITE_MATRIX 2
#define CNC_ST_INDEFINITE_PRECOND 3
#define CNC_ST_NOT_FINITE 4

/* Per right-hand-side scalars, the same 48-byte layout on every backend (GPU backends keep an
 * array of these in device memory and copy it back whole). */
typedef struct cnc_rhs_state { /* named: nvcc's front end fails on an unnamed one in templates */
  CNC_CONTRACT_REAL rz;        /* r'z of the current residual */
  CNC_CONTRACT_REAL rz_new;    /* r'z after the last update_xr */
  CNC_CONTRACT_REAL rr;        /* r'r after the last init or update_xr */
  CNC_CONTRACT_REAL pq;        /* p'Ap of the last spmv_dot */
  CNC_CONTRACT_REAL thr2;      /* converged when rr <= thr2 (threshold^2 ||b||^2) */
  int status;
  int iters;
} cnc_rhs_state;

/* After init and after update_xr: the status given r'r, r'z (rz, or rz_new) and thr2. */
CNC_CONTRACT_FN int cnc_status_of_residual(CNC_CONTRACT_REAL rr, CNC_CONTRACT_REAL rz,
                                           CNC_CONTRACT_REAL thr2) {
  return !CNC_IS_FINITE(rr) || !CNC_IS_FINITE(rz) ? CNC_ST_NOT_FINITE
         : rr <= thr2                             ? CNC_ST_CONVERGED
         : rz <= 0                                ? CNC_ST_INDEFINITE_PRECOND
                                                  : CNC_ST_RUNNING;
}

CNC_CONTRACT_FN int cnc_status_of_pq(CNC_CONTRACT_REAL pq) {
  return !CNC_IS_FINITE(pq) ? CNC_ST_NOT_FINITE
         : pq <= 0          ? CNC_ST_INDEFINITE_MATRIX
                            : CNC_ST_RUNNING;
}

#ifdef __cplusplus
namespace cnc {
enum rhs_status : int {
  running = CNC_ST_RUNNING,
  converged = CNC_ST_CONVERGED,
  indefinite_matrix = CNC_ST_INDEFINITE_MATRIX,
  indefinite_precond = CNC_ST_INDEFINITE_PRECOND,
  not_finite = CNC_ST_NOT_FINITE,
};
using rhs_state = cnc_rhs_state;
static_assert(sizeof(rhs_state) == 48, "rhs_state layout is shared with device code");
}  // namespace cnc
#endif

#endif /* CNC_PCG_CONTRACT_H */
