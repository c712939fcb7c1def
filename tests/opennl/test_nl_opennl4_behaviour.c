/* OpenNL 4's behaviour where cnc's own API differs (issue 12, part 2): CG on a symmetric indefinite
 * system, an explicit solver's defaults, the process-wide current context, the statistics of
 * several systems, OpenNL's pattern positions and NL_NNZ, and single precision that cannot reach
 * the threshold. References: closed-form answers and dense computations written here. */
#define _POSIX_C_SOURCE 200809L /* pthreads */
/* clang-format off */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include <cnc_nl.h>

#include "nl_messages.h"
#include "nl_test_util.h"

/* The symmetric indefinite 2x2 system [1 -5; -5 4] x = (5, 6) (eigenvalues of both signs):
 * x = (-50/21, -31/21). */
static void assemble_indefinite(NLenum solver, int symmetric, NLint max_iterations) {
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  if (solver != NL_SOLVER_DEFAULT) nlSolverParameteri(NL_SOLVER, (NLint)solver);
  if (symmetric) nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  if (max_iterations > 0) nlSolverParameteri(NL_MAX_ITERATIONS, max_iterations);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  nlAddIJCoefficient(0, 0, 1.0);
  nlAddIJCoefficient(0, 1, -5.0);
  nlAddIJCoefficient(1, 0, -5.0);
  nlAddIJCoefficient(1, 1, 4.0);
  nlAddIRightHandSide(0, 5.0);
  nlAddIRightHandSide(1, 6.0);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
}

/* OpenNL's CG iterates on (p'Ap < 0 at the first step) and, on 2 unknowns, ends in 2 iterations
 * with the solution; the indefinite curvature is reported, not fatal. */
static void test_indefinite_cg(void** state) {
  (void)state;
  const NLenum solvers[2] = {NL_CG, NL_SOLVER_DEFAULT}; /* plain CG; Jacobi CG (NL_SYMMETRIC) */
  for (int s = 0; s < 2; ++s) {
    nl_capture();
    NLContext ctx = nlNewContext();
    assemble_indefinite(solvers[s], s == 1, 0);
    assert_true(nlSolve());
    assert_double_equal(nlGetVariable(0), -50.0 / 21.0, 1e-9);
    assert_double_equal(nlGetVariable(1), -31.0 / 21.0, 1e-9);
    NLint it = -1;
    nlGetIntegerv(NL_USED_ITERATIONS, &it);
    assert_int_equal(it, 2);
    double err = 1.0;
    nlGetDoublev(NL_ERROR, &err);
    assert_true(err < 1e-10);
    assert_non_null(strstr(nl_messages, "not positive definite"));
    assert_int_equal(nlGetErrorCNC(), 0);
    nlDeleteContext(ctx);
    nl_release();
  }
}

/* The same from the initial guess (1, 1) in a bound variable buffer (r0 = (9, 7), p'Ap = -353):
 * the restart takes the guess from the buffer again. */
static void test_indefinite_cg_buffer(void** state) {
  (void)state;
  double x[2] = {1.0, 1.0};
  nl_capture();
  NLContext ctx = nlNewContext();
  nlEnable(NL_VARIABLES_BUFFER);
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nlSolverParameteri(NL_SOLVER, NL_CG);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlBindBuffer(NL_VARIABLES_BUFFER, 0, x, (NLuint)sizeof(double));
  nlBegin(NL_MATRIX);
  nlAddIJCoefficient(0, 0, 1.0);
  nlAddIJCoefficient(0, 1, -5.0);
  nlAddIJCoefficient(1, 0, -5.0);
  nlAddIJCoefficient(1, 1, 4.0);
  nlAddIRightHandSide(0, 5.0);
  nlAddIRightHandSide(1, 6.0);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  assert_double_equal(x[0], -50.0 / 21.0, 1e-9);
  assert_double_equal(x[1], -31.0 / 21.0, 1e-9);
  NLint it = -1;
  nlGetIntegerv(NL_USED_ITERATIONS, &it);
  assert_int_equal(it, 2);
  nlDeleteContext(ctx);
  nl_release();
}

/* Stopped after one step, x is that step's iterate, never zeros: x1 = (r'r / p'Ap) b with
 * r = p = b = (5, 6), A b = (-25, -1), so x1 = (61 / -131) (5, 6). */
static void test_indefinite_last_iterate(void** state) {
  (void)state;
  nl_capture();
  NLContext ctx = nlNewContext();
  assemble_indefinite(NL_CG, 0, 1);
  assert_true(nlSolve()); /* the iteration limit is not a failure in OpenNL */
  assert_double_equal(nlGetVariable(0), 5.0 * 61.0 / -131.0, 1e-12);
  assert_double_equal(nlGetVariable(1), 6.0 * 61.0 / -131.0, 1e-12);
  NLint it = -1;
  nlGetIntegerv(NL_USED_ITERATIONS, &it);
  assert_int_equal(it, 1);
  nlDeleteContext(ctx);
  nl_release();
}

/* diag(1, 4, 9, ..., n^2) x = 1: condition number n^2; plain CG needs far more than 100
 * iterations, Jacobi CG one. */
enum { kDiag = 300 };

static NLint solve_diagonal(NLint solver, NLint preconditioner, NLint* max_it, NLint* precond,
                            double* worst) {
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, kDiag);
  if (solver >= 0) nlSolverParameteri(NL_SOLVER, solver);
  if (solver < 0) nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  if (preconditioner >= 0) nlSolverParameteri(NL_PRECONDITIONER, preconditioner);
  nlSolverParameterd(NL_THRESHOLD, 1e-10);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (NLuint i = 0; i < kDiag; ++i) {
    nlAddIJCoefficient(i, i, (double)(i + 1) * (i + 1));
    nlAddIRightHandSide(i, 1.0);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  nlGetIntegerv(NL_MAX_ITERATIONS, max_it);
  nlGetIntegerv(NL_PRECONDITIONER, precond);
  assert_true(nlSolve());
  *worst = 0.0;
  for (NLuint i = 0; i < kDiag; ++i)
    *worst = fmax(*worst, fabs(nlGetVariable(i) - 1.0 / ((double)(i + 1) * (i + 1))));
  NLint it = -1;
  nlGetIntegerv(NL_USED_ITERATIONS, &it);
  nlDeleteContext(ctx);
  return it;
}

static void test_explicit_solver_defaults(void** state) {
  (void)state;
  NLint max_it = 0, precond = -1;
  double worst = 0.0;
  /* nlNewContext's values until nlBegin(NL_MATRIX) applies the solver's defaults. */
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, kDiag);
  nlGetIntegerv(NL_MAX_ITERATIONS, &max_it);
  nlGetIntegerv(NL_PRECONDITIONER, &precond);
  assert_int_equal(max_it, 100);
  assert_int_equal(precond, NL_PRECOND_NONE);
  nlDeleteContext(ctx);
  /* NL_SOLVER = NL_CG: OpenNL's 100 iterations, no preconditioner. */
  assert_int_equal(solve_diagonal(NL_CG, -1, &max_it, &precond, &worst), 100);
  assert_int_equal(max_it, 100);
  assert_int_equal(precond, NL_PRECOND_NONE);
  assert_true(worst > 1e-8); /* not converged in 100 plain CG iterations */
  /* NL_SOLVER_DEFAULT on a symmetric system: Jacobi CG, 5 n iterations. */
  assert_int_equal(solve_diagonal(-1, -1, &max_it, &precond, &worst), 1);
  assert_int_equal(max_it, 5 * kDiag);
  assert_int_equal(precond, NL_PRECOND_JACOBI);
  assert_true(worst < 1e-12);
  /* Explicit CG with the preconditioner set: Jacobi, still 100 iterations allowed. */
  assert_int_equal(solve_diagonal(NL_CG, NL_PRECOND_JACOBI, &max_it, &precond, &worst), 1);
  assert_int_equal(max_it, 100);
  assert_int_equal(precond, NL_PRECOND_JACOBI);
  /* Explicit BiCGSTAB: no preconditioner either. */
  solve_diagonal(NL_BICGSTAB, -1, &max_it, &precond, &worst);
  assert_int_equal(max_it, 100);
  assert_int_equal(precond, NL_PRECOND_NONE);
}

/* The current context is process-wide: a worker thread sees it and reads its variables. */
typedef struct {
  NLContext ctx;
  NLContext seen;
  double x[3];
  NLint iterations;
} Worker;

static void* worker_reads(void* arg) {
  Worker* w = (Worker*)arg;
  w->seen = nlGetCurrent();
  for (NLuint i = 0; i < 3; ++i) w->x[i] = nlGetVariable(i);
  nlGetIntegerv(NL_USED_ITERATIONS, &w->iterations);
  return NULL;
}

static void* worker_solves(void* arg) {
  (void)arg;
  /* Assembles and solves in the context the main thread made current. */
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (NLuint i = 0; i < 3; ++i) {
    nlAddIJCoefficient(i, i, 2.0);
    nlAddIRightHandSide(i, (double)(i + 1));
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  nlSolve();
  return NULL;
}

static void test_process_wide_context(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 3);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, worker_solves, NULL), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  /* Back on the main thread: the worker's solve is there. */
  for (NLuint i = 0; i < 3; ++i) assert_double_equal(nlGetVariable(i), (i + 1) / 2.0, 1e-12);
  Worker w;
  memset(&w, 0, sizeof w);
  assert_int_equal(pthread_create(&t, NULL, worker_reads, &w), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_ptr_equal(w.seen, ctx);
  for (NLuint i = 0; i < 3; ++i) assert_double_equal(w.x[i], (i + 1) / 2.0, 1e-12);
  assert_int_equal(w.iterations, 1);
  /* nlMakeCurrent(NULL) on the main thread is seen by a worker too. */
  nlMakeCurrent(NULL);
  assert_int_equal(pthread_create(&t, NULL, worker_reads, &w), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_null(w.seen);
  nlMakeCurrent(ctx);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
  assert_null(nlGetCurrent());
}

/* tridiag(-1, 4, -1), n = 10: sin(pi (i + 1) / 11) is an eigenvector, solved by Jacobi CG in one
 * iteration; e_0 needs several. NL_USED_ITERATIONS / NL_ERROR are those of the last system. */
enum { kTri = 10 };

static double tri_mult_row(const double* x, NLuint i) {
  double y = 4.0 * x[i];
  if (i > 0) y -= x[i - 1];
  if (i + 1 < kTri) y -= x[i + 1];
  return y;
}

static void solve_two_systems(int easy_last, NLint* it, double* err, double* true_err) {
  const double pi = 3.14159265358979323846;
  double b[2][kTri];
  for (NLuint i = 0; i < kTri; ++i) {
    const double easy = sin(pi * (i + 1) / (kTri + 1)), hard = i == 0 ? 1.0 : 0.0;
    b[0][i] = easy_last ? hard : easy;
    b[1][i] = easy_last ? easy : hard;
  }
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, kTri);
  nlSolverParameteri(NL_NB_SYSTEMS, 2);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSolverParameterd(NL_THRESHOLD, 1e-10);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (NLuint i = 0; i < kTri; ++i) {
    nlAddIJCoefficient(i, i, 4.0);
    if (i > 0) nlAddIJCoefficient(i, i - 1, -1.0);
    if (i + 1 < kTri) nlAddIJCoefficient(i, i + 1, -1.0);
    nlMultiAddIRightHandSide(i, 0, b[0][i]);
    nlMultiAddIRightHandSide(i, 1, b[1][i]);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  nlGetIntegerv(NL_USED_ITERATIONS, it);
  nlGetDoublev(NL_ERROR, err);
  double x[kTri], r2 = 0.0, b2 = 0.0;
  for (NLuint i = 0; i < kTri; ++i) x[i] = nlMultiGetVariable(i, 1);
  for (NLuint i = 0; i < kTri; ++i) {
    const double r = b[1][i] - tri_mult_row(x, i);
    r2 += r * r;
    b2 += b[1][i] * b[1][i];
  }
  *true_err = sqrt(r2 / b2);
  nlDeleteContext(ctx);
}

static void test_several_systems_statistics(void** state) {
  (void)state;
  NLint it_easy = -1, it_hard = -1;
  double err = -1.0, true_err = -1.0;
  solve_two_systems(0, &it_hard, &err, &true_err); /* the hard system is the last one */
  assert_true(it_hard > 1);
  assert_true(err < 1e-10);
  assert_double_equal(err, true_err, 1e-13);
  solve_two_systems(1, &it_easy, &err, &true_err); /* the easy one last: OpenNL reports its 1 */
  assert_int_equal(it_easy, 1);
  assert_double_equal(err, true_err, 1e-13);
}

/* OpenNL's CRS pattern: nlAddIJCoefficient returns the slot (rows' slots follow each other in
 * the order of their declared lengths), nlAddIJCoefficientAt adds there, and
 * nlSetIJCoefficientAtRowOffset sets a slot. tridiag(-1, 2, -1) x = A (1, 2, 3, 4, 5). */
static void test_pattern_positions(void** state) {
  (void)state;
  const NLuint n = 5;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, (NLint)n);
  nlSolverParameteri(NL_SOLVER, NL_BICGSTAB);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX_PATTERN);
  for (NLuint i = 0; i < n; ++i) nlSetRowLength(i, i == 0 || i == n - 1 ? 2 : 3);
  nlEnd(NL_MATRIX_PATTERN);
  NLlong nnz = 0;
  nlGetIntegervL(NL_NNZ, &nnz);
  assert_int_equal(nnz, 13); /* OpenNL counts the declared slots */
  nlBegin(NL_MATRIX);
  NLulong row_start = 0;
  for (NLuint i = 0; i < n; ++i) {
    /* The diagonal first: half of it now, the other half at its returned slot. */
    const NLulong at = nlAddIJCoefficient(i, i, 1.0);
    assert_int_equal(at, row_start);
    nlAddIJCoefficientAt(i, i, 1.0, at);
    assert_int_equal(nlAddIJCoefficient(i, i, 0.0), at); /* the slot holding (i, i) again */
    NLuint offset = 1;
    if (i > 0) nlSetIJCoefficientAtRowOffset(i, i - 1, -1.0, offset++);
    if (i + 1 < n) {
      assert_int_equal(nlAddIJCoefficient(i, i + 1, -1.0), row_start + offset);
      ++offset;
    }
    row_start += offset;
    double b = 2.0 * (i + 1);
    if (i > 0) b -= i;
    if (i + 1 < n) b -= i + 2;
    nlAddIRightHandSide(i, b);
  }
  /* A full row is refused with a message, not an abort. */
  nl_capture();
  assert_int_equal(nlAddIJCoefficient(0, 3, 1.0), (NLulong)-1);
  assert_non_null(strstr(nl_messages, "full"));
  nl_release();
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  nlClearErrorCNC();
  assert_true(nlSolve());
  for (NLuint i = 0; i < n; ++i) assert_double_equal(nlGetVariable(i), i + 1.0, 1e-9);
  nlDeleteContext(ctx);
}

/* NL_SYMMETRIC with a pattern: OpenNL keeps the lower triangle (j > i is dropped, the product
 * mirrors it), and NL_NNZ counts one triangle. Both triangles given: the same matrix. */
static void test_symmetric_pattern(void** state) {
  (void)state;
  const NLuint n = 5;
  for (int both = 0; both < 2; ++both) {
    NLContext ctx = nlNewContext();
    nlSolverParameteri(NL_NB_VARIABLES, (NLint)n);
    nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
    nlSolverParameterd(NL_THRESHOLD, 1e-12);
    nlBegin(NL_SYSTEM);
    nlBegin(NL_MATRIX_PATTERN);
    for (NLuint i = 0; i < n; ++i) nlSetRowLength(i, i == 0 ? 1 : 2);
    nlEnd(NL_MATRIX_PATTERN);
    nlBegin(NL_MATRIX);
    for (NLuint i = 0; i < n; ++i) {
      if (i > 0) assert_int_equal(nlAddIJCoefficient(i, i - 1, -1.0), 2 * i - 1);
      assert_int_equal(nlAddIJCoefficient(i, i, 2.0), i == 0 ? 0 : 2 * i);
      if (both && i + 1 < n) assert_int_equal(nlAddIJCoefficient(i, i + 1, -1.0), (NLulong)-1);
    }
    nlAddIRightHandSide(n - 1, 6.0); /* A (1, 2, 3, 4, 5) = (0, 0, 0, 0, 6) */
    nlEnd(NL_MATRIX);
    nlEnd(NL_SYSTEM);
    NLint nnz = 0;
    nlGetIntegerv(NL_NNZ, &nnz);
    assert_int_equal(nnz, 9);
    assert_true(nlSolve());
    for (NLuint i = 0; i < n; ++i) assert_double_equal(nlGetVariable(i), i + 1.0, 1e-9);
    assert_int_equal(nlGetErrorCNC(), 0);
    nlDeleteContext(ctx);
  }
}

/* NL_NNZ without a pattern: OpenNL stores the lower triangle only for NL_SYMMETRIC with SSOR
 * (tridiagonal, n = 5: 5 + 4 entries), the whole matrix otherwise (13). */
static void test_nnz_without_pattern(void** state) {
  (void)state;
  for (int ssor = 0; ssor < 2; ++ssor) {
    NLContext ctx = nlNewContext();
    nlSolverParameteri(NL_NB_VARIABLES, 5);
    nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
    if (ssor) nlSolverParameteri(NL_PRECONDITIONER, NL_PRECOND_SSOR);
    nlSolverParameterd(NL_THRESHOLD, 1e-12);
    nlBegin(NL_SYSTEM);
    nlBegin(NL_MATRIX);
    for (NLuint i = 0; i < 5; ++i) {
      if (i > 0) nlAddIJCoefficient(i, i - 1, -1.0);
      nlAddIJCoefficient(i, i, 2.0);
      if (i < 4) nlAddIJCoefficient(i, i + 1, -1.0);
    }
    nlAddIRightHandSide(4, 6.0);
    nlEnd(NL_MATRIX);
    nlEnd(NL_SYSTEM);
    assert_true(nlSolve());
    for (NLuint i = 0; i < 5; ++i) assert_double_equal(nlGetVariable(i), i + 1.0, 1e-9);
    NLint nnz = 0;
    nlGetIntegerv(NL_NNZ, &nnz);
    assert_int_equal(nnz, ssor ? 9 : 13);
    nlDeleteContext(ctx);
  }
}

/* Single precision (the original CNC's NL_CNC_FLOAT_CRS, 0x220) cannot bring the true residual
 * of a 1D Laplacian to 1e-10: nlSolve says so and returns NL_FALSE; at 1e-4 it succeeds. */
static NLboolean solve_float(double threshold, double* true_err) {
  const NLuint n = 60;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, (NLint)n);
  nlSolverParameteri(NL_SOLVER, 0x220 /* NL_CNC_FLOAT_CRS */);
  nlSolverParameteri(NL_MAX_ITERATIONS, 1000);
  nlSolverParameterd(NL_THRESHOLD, threshold);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (NLuint i = 0; i < n; ++i) {
    nlAddIJCoefficient(i, i, 2.0 + 1e-3);
    if (i > 0) nlAddIJCoefficient(i, i - 1, -1.0);
    if (i + 1 < n) nlAddIJCoefficient(i, i + 1, -1.0);
    nlAddIRightHandSide(i, 1.0 + 0.37 * sin((double)i));
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  const NLboolean ok = nlSolve();
  nlGetDoublev(NL_ERROR, true_err);
  nlDeleteContext(ctx);
  return ok;
}

static void test_single_precision_shortfall(void** state) {
  (void)state;
  double err = 0.0;
  nl_capture();
  assert_false(solve_float(1e-10, &err));
  assert_true(err > 1e-10);
  assert_non_null(strstr(nl_messages, "NL_THRESHOLD"));
  nl_messages[0] = 0;
  assert_true(solve_float(1e-4, &err));
  assert_true(err <= 2e-4);
  nl_release();
}

/* Extensions cnc does not have answer NL_FALSE, with a message, and are not initialized. */
static void test_missing_extensions(void** state) {
  (void)state;
  const char* names[] = {"MKL", "AMGCL"}; /* SUPERLU, CHOLMOD, ARPACK: test_nl_direct/eigen.c */
  for (size_t e = 0; e < sizeof names / sizeof names[0]; ++e) {
    nl_capture();
    assert_false(nlInitExtension(names[e]));
    assert_non_null(strstr(nl_messages, names[e]));
    assert_false(nlExtensionIsInitialized(names[e]));
    nl_release();
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_indefinite_cg),
      cmocka_unit_test(test_indefinite_cg_buffer),
      cmocka_unit_test(test_indefinite_last_iterate),
      cmocka_unit_test(test_explicit_solver_defaults),
      cmocka_unit_test(test_process_wide_context),
      cmocka_unit_test(test_several_systems_statistics),
      cmocka_unit_test(test_pattern_positions),
      cmocka_unit_test(test_symmetric_pattern),
      cmocka_unit_test(test_nnz_without_pattern),
      cmocka_unit_test(test_single_precision_shortfall),
      cmocka_unit_test(test_missing_extensions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
