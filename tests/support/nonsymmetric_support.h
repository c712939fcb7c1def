/* Helpers shared by the nonsymmetric_* suites: BiCGSTAB and GMRES (CNC_SOLVER) on nonsymmetric
 * systems, through the public API only. References computed by the tests: a dense LU solve with
 * partial pivoting for small systems, the residual ||b - A x|| / ||b|| recomputed by the test for
 * large ones. Generated problems: convection-diffusion on 2D and 3D grids (central differences),
 * random diagonally dominant matrices.
 *
 * Here: the dense LU reference, COO triplets and the convection-diffusion generator, random
 * vectors, the options of a solve and the statistics it reports, a solve in a fresh context
 * (assembled or through cncSolveCSR), and the two nonsymmetric methods. */
#ifndef CNC_NONSYMMETRIC_SUPPORT_H
#define CNC_NONSYMMETRIC_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cnc.h"
#include "test_support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Dense LU with partial pivoting: solves the n x n row-major system a x = b (a is copied).
 * Returns 0, or -1 on a zero pivot. */
int lu_solve(int n, const double* a_in, const double* b, double* x);

/* COO triplets, grown by coo_add; coo_to_csr builds the CSR and frees them. */
typedef struct {
  int32_t* r;
  int32_t* c;
  double* v;
  int64_t len, cap;
} coo;
void coo_add(coo* t, int32_t r, int32_t c, double v);
ts_csr coo_to_csr(int32_t n, coo* t);

/* -Δu + w·∇u on an m^dim grid (Dirichlet), central differences scaled by h²: diagonal 2*dim,
 * neighbour along axis d in the +/- direction: -1 ± beta_d (beta_d = w_d h / 2). */
ts_csr convection_diffusion(int dim, int32_t m, double beta);

typedef struct {
  CNCenum solver, precision, backend, precond;
  double threshold;
  int max_iter, restart, threads;
  int assembled;    /* 1: cncBegin/.../cncSolve; 0: cncSolveCSR */
  int nonsymmetric; /* 1: CNC_SYMMETRIC 0 */
} opts;

void apply_opts(const opts* o);
/* Solves A x = b (nsys columns, x: zero initial guess) in a fresh context. */
stats solve_with(const ts_csr* a, const double* b, int nsys, const opts* o, double* x);
const char* solver_name(CNCenum s);

/* CNC_BICGSTAB, CNC_GMRES. */
extern const CNCenum solvers[2];

#ifdef __cplusplus
}
#endif

#endif
