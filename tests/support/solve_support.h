/* Helpers shared by the test_solve_* suites. Solutions of cncSolve are checked there against
 * independent references computed by the tests: a dense Cholesky solve on small generated SPD
 * systems, the residual ||b - A x|| / ||b|| recomputed by the test on large ones and on the SPD
 * matrices of shared/data/matrices, closed-form least-squares fits, and reduced dense solves for
 * locked variables; also the numerical outcomes (indefinite, singular, b = 0, zero diagonals, max
 * iterations) and the callbacks.
 *
 * Here: the options of a solve and the statistics it reports, a solve in a fresh context, random
 * vectors, the dense Cholesky reference, and the check of the reported residual. */
#ifndef CNC_SOLVE_SUPPORT_H
#define CNC_SOLVE_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cnc.h"
#include "test_support.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  CNCenum precision; /* 0: default */
  CNCenum format;    /* 0: default */
  double threshold;  /* 0: default */
  int max_iter;      /* 0: default */
  int nsys;          /* 0: 1 */
} opts;

void apply_opts(const opts* o);
/* Solves A x = b (nsys right-hand sides) in a fresh context; fills x and returns the stats. */
stats solve_with(const ts_csr* a, const double* b, const opts* o, double* x);
/* A⁻¹ b by dense Cholesky (caller frees). */
double* dense_reference(const ts_csr* a, const double* b);
/* The statistics must agree with the test's own residual, and CONVERGED must mean what cnc.h says
 * (recursive and true residual below the threshold). */
void check_reported_residual(const ts_csr* a, const double* x, const double* b, const stats* s,
                             double threshold, const char* what);
/* Whether `backend` can run here (a 1x1 solve on it, in a context of its own). */
int backend_present(CNCenum backend);
/* Whether all n entries of x equal v exactly (x left unchanged by a refused or failed solve). */
int all_equal(size_t n, const double* x, double v);
/* The current context's CNC_CHOICE_REASON (asserted readable). */
const char* choice_reason(void);

/* The direct solvers' not-positive-definite case (test_direct: CHOLMOD, test_cudss: cuDSS): the
 * 8 x 8 Laplacian with a_55 = -4 (symmetric, nonsingular, not positive definite), b random, x all
 * 7. A Cholesky solve of it must return CNC_OK with CNC_REASON_INDEFINITE_MATRIX, x unchanged and
 * CNC_CHOICE_REASON saying why (check_indefinite, given the solve's status). */
typedef struct {
  ts_csr a;
  size_t n;
  double *b, *x;
} indefinite_case;
indefinite_case indefinite_case_new(void);
void check_indefinite(const indefinite_case* t, CNCstatus solved);
void indefinite_case_free(indefinite_case* t);

#ifdef __cplusplus
}
#endif

#endif
