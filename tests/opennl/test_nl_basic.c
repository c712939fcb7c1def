/* OpenNL-style programs written against cnc_nl.h: small plain-mode systems, locked variables,
 * initial guess, several systems with strided variable buffers, extensions, and misuse that
 * OpenNL would abort on (here: reported, the context keeps working). References are closed-form. */
/* cmocka.h needs the standard headers first. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include <cnc.h>
#include <cnc_nl.h>

#include "nl_test_util.h"

/* Solves [4 1; 1 3] x = [1; 2] row by row: x = (1/11, 7/11). */
static void test_2x2(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  assert_non_null(ctx);
  assert_ptr_equal(nlGetCurrent(), ctx);
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  nlBegin(NL_ROW);
  nlCoefficient(0, 4.0);
  nlCoefficient(1, 1.0);
  nlRightHandSide(1.0);
  nlEnd(NL_ROW);
  nlBegin(NL_ROW);
  nlCoefficient(0, 1.0);
  nlCoefficient(1, 1.0);
  nlCoefficient(1, 2.0); /* summed with the previous one: 3 */
  nlRightHandSide(7.0);  /* overwritten by the next call, as in OpenNL */
  nlRightHandSide(2.0);
  nlEnd(NL_ROW);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  assert_double_equal(nlGetVariable(0), 1.0 / 11.0, 1e-9);
  assert_double_equal(nlGetVariable(1), 7.0 / 11.0, 1e-9);
  NLint it = -1, nnz = -1;
  double err = -1.0, t = -1.0;
  nlGetIntegerv(NL_USED_ITERATIONS, &it);
  nlGetIntegerv(NL_NNZ, &nnz);
  nlGetDoublev(NL_ERROR, &err);
  nlGetDoublev(NL_ELAPSED_TIME, &t);
  assert_true(it >= 1 && it <= 10); /* OpenNL's default limit: 5 x 2 free variables */
  assert_true(nnz >= 4);
  assert_true(err >= 0.0 && err < 1e-9);
  assert_true(t >= 0.0);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
  assert_null(nlGetCurrent());
}

/* 1D Laplacian on 5 nodes, ends locked at 1 and 0: rows are given for the 3 free variables only
 * (OpenNL's plain mode numbers rows over free variables); the answer is linear. */
static void test_locked_plain(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 5);
  nlSolverParameteri(NL_SOLVER, NL_CG);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlSetVariable(0, 1.0);
  nlSetVariable(4, 0.0);
  nlLockVariable(0);
  nlLockVariable(4);
  assert_true(nlVariableIsLocked(0));
  assert_false(nlVariableIsLocked(2));
  nlBegin(NL_MATRIX);
  for (NLuint i = 1; i <= 3; ++i) {
    nlBegin(NL_ROW);
    nlCoefficient(i - 1, -1.0);
    nlCoefficient(i, 2.0);
    nlCoefficient(i + 1, -1.0);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  for (NLuint i = 0; i < 5; ++i) assert_double_equal(nlGetVariable(i), 1.0 - 0.25 * i, 1e-9);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
}

/* The initial guess is the variables' values at nlBegin(NL_MATRIX): one CG iteration from a guess
 * near the answer stays near it (CG never increases the A-norm error), from zero it does not. */
static double one_iteration_error(int with_guess) {
  const double exact[5] = {5.0 / 6, 4.0 / 6, 3.0 / 6, 2.0 / 6,
                           1.0 / 6}; /* -u''=0, u(-1)=1, u(5)=0 */
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 5);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSolverParameteri(NL_MAX_ITERATIONS, 1);
  nlSolverParameterd(NL_THRESHOLD, 1e-14);
  nlBegin(NL_SYSTEM);
  for (NLuint i = 0; i < 5; ++i)
    nlSetVariable(i, with_guess ? exact[i] + 1e-4 * (i % 2 ? 1 : -1) : 0.0);
  nlBegin(NL_MATRIX);
  for (NLuint i = 0; i < 5; ++i) {
    nlBegin(NL_ROW);
    if (i > 0) nlCoefficient(i - 1, -1.0);
    nlCoefficient(i, 2.0);
    if (i < 4) nlCoefficient(i + 1, -1.0);
    nlRightHandSide(i == 0 ? 1.0 : 0.0);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  nlSolve();
  double e = 0.0;
  for (NLuint i = 0; i < 5; ++i) e = fmax(e, fabs(nlGetVariable(i) - exact[i]));
  nlDeleteContext(ctx);
  return e;
}

static void test_initial_guess(void** state) {
  (void)state;
  assert_true(one_iteration_error(1) < 1e-3);
  assert_true(one_iteration_error(0) > 1e-2);
}

/* Two systems sharing one matrix, variables in strided user buffers (NL_VARIABLES_BUFFER). */
typedef struct {
  double value;
  double other; /* must stay untouched: the stride skips it */
} Sample;

static void test_multi_buffers(void** state) {
  (void)state;
  Sample s0[3], s1[3];
  for (int i = 0; i < 3; ++i) {
    s0[i].value = s1[i].value = 0.0;
    s0[i].other = s1[i].other = 42.0;
  }
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 3);
  nlSolverParameteri(NL_NB_SYSTEMS, 2);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlEnable(NL_VARIABLES_BUFFER);
  nlBegin(NL_SYSTEM);
  nlBindBuffer(NL_VARIABLES_BUFFER, 0, &s0[0].value, (NLuint)sizeof(Sample));
  nlBindBuffer(NL_VARIABLES_BUFFER, 1, &s1[0].value, (NLuint)sizeof(Sample));
  nlMultiSetVariable(2, 1, 3.0); /* written into the buffer, then locked */
  nlLockVariable(2);
  nlBegin(NL_MATRIX);
  /* diag(2, 4) on the free variables; x2 couples to row 1 with -1 (moves to the rhs). */
  nlBegin(NL_ROW);
  nlCoefficient(0, 2.0);
  nlMultiRightHandSide(0, 2.0);
  nlMultiRightHandSide(1, 6.0);
  nlEnd(NL_ROW);
  nlBegin(NL_ROW);
  nlCoefficient(1, 4.0);
  nlCoefficient(2, -1.0);
  nlMultiRightHandSide(0, 8.0);
  nlMultiRightHandSide(1, 1.0);
  nlEnd(NL_ROW);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  /* system 0: x2 = 0 -> x = (1, 2); system 1: x2 = 3 -> 4 x1 = 1 + 3 -> x = (3, 1). */
  assert_double_equal(s0[0].value, 1.0, 1e-9);
  assert_double_equal(s0[1].value, 2.0, 1e-9);
  assert_double_equal(s1[0].value, 3.0, 1e-9);
  assert_double_equal(s1[1].value, 1.0, 1e-9);
  assert_double_equal(s1[2].value, 3.0, 0.0);
  assert_double_equal(nlMultiGetVariable(1, 1), 1.0, 1e-9);
  for (int i = 0; i < 3; ++i) {
    assert_double_equal(s0[i].other, 42.0, 0.0);
    assert_double_equal(s1[i].other, 42.0, 0.0);
  }
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
}

/* OpenNL's first example, a nonsymmetric system: [1 2; 3 4] x = [5; 6], x = (-4, 4.5). */
static void build_2x2_nonsym(void) {
  nlSolverParameteri(NL_NB_VARIABLES, 2);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  nlBegin(NL_ROW);
  nlCoefficient(0, 1.0);
  nlCoefficient(1, 2.0);
  nlRightHandSide(5.0);
  nlEnd(NL_ROW);
  nlBegin(NL_ROW);
  nlCoefficient(0, 3.0);
  nlCoefficient(1, 4.0);
  nlRightHandSide(6.0);
  nlEnd(NL_ROW);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
}

/* The default solver (BiCGSTAB for a plain system not declared symmetric, as in OpenNL),
 * NL_BICGSTAB and NL_GMRES, with Jacobi or SSOR (run as Jacobi), solve it. */
static void test_nonsymmetric_solvers(void** state) {
  (void)state;
  const NLint solvers[] = {-1, NL_SOLVER_DEFAULT, NL_BICGSTAB, NL_GMRES};
  const NLint preconds[] = {NL_PRECOND_JACOBI, NL_PRECOND_SSOR, NL_PRECOND_NONE};
  for (size_t s = 0; s < sizeof solvers / sizeof solvers[0]; ++s)
    for (size_t p = 0; p < sizeof preconds / sizeof preconds[0]; ++p) {
      NLContext ctx = nlNewContext();
      if (solvers[s] >= 0) nlSolverParameteri(NL_SOLVER, solvers[s]);
      if (solvers[s] >= 0) nlSolverParameteri(NL_PRECONDITIONER, preconds[p]);
      build_2x2_nonsym();
      assert_true(nlSolve());
      assert_double_equal(nlGetVariable(0), -4.0, 1e-5);
      assert_double_equal(nlGetVariable(1), 4.5, 1e-5);
      NLint it = -1;
      nlGetIntegerv(NL_USED_ITERATIONS, &it);
      assert_true(it >= 1 && it <= 4);
      assert_int_equal(nlGetErrorCNC(), 0);
      CNCint solver = 0;
      cncGetIntegerv(CNC_SOLVER_USED, &solver); /* the cnc context is current with the NL one */
      assert_int_equal(solver, solvers[s] == NL_GMRES ? CNC_GMRES : CNC_BICGSTAB);
      nlDeleteContext(ctx);
      if (solvers[s] < 0) break;
    }
}

/* NL_INNER_ITERATIONS is GMRES's restart: OpenNL's default 5, values >= 1. */
static void test_gmres_restart(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  NLint v = 0;
  nlGetIntegerv(NL_INNER_ITERATIONS, &v);
  assert_int_equal(v, 5);
  CNCint restart = 0;
  cncGetIntegerv(CNC_GMRES_RESTART, &restart);
  assert_int_equal(restart, 5);
  nlSolverParameteri(NL_INNER_ITERATIONS, 12);
  cncGetIntegerv(CNC_GMRES_RESTART, &restart);
  assert_int_equal(restart, 12);
  nlGetIntegerv(NL_INNER_ITERATIONS, &v);
  assert_int_equal(v, 12);
  nlSolverParameteri(NL_INNER_ITERATIONS, 0);
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INVALID_VALUE);
  nlGetIntegerv(NL_INNER_ITERATIONS, &v);
  assert_int_equal(v, 12);
  nlDeleteContext(ctx);
}

/* Solvers cnc does not provide (a user solver, AMGCL): nlSolve fails cleanly. (The direct
 * solvers are tested in test_nl_direct.c.) */
static void test_unsupported_solvers(void** state) {
  (void)state;
  const NLenum solvers[] = {NL_SOLVER_USER, NL_AMGCL_EXT};
  for (size_t s = 0; s < sizeof solvers / sizeof solvers[0]; ++s) {
    NLContext ctx = nlNewContext();
    nlSolverParameteri(NL_SOLVER, (NLint)solvers[s]);
    build_2x2_nonsym();
    assert_false(nlSolve());
    assert_int_equal(nlGetErrorCNC(), CNC_ERR_UNSUPPORTED);
    nlDeleteContext(ctx);
  }
}

static void test_extensions(void** state) {
  (void)state;
  assert_false(nlInitExtension("MKL"));
  assert_false(nlExtensionIsInitialized("MKL"));
  /* ARPACK (cnc's eigen solver): NL_TRUE exactly when it loads. */
  assert_int_equal(nlInitExtension("ARPACK"), cncEigenSolverAvailable());
  assert_int_equal(nlExtensionIsInitialized("ARPACK"), cncEigenSolverAvailable());
  /* The direct solvers: NL_TRUE exactly when their library loads. */
  assert_int_equal(nlInitExtension("SUPERLU"), cncDirectSolverAvailable(CNC_SUPERLU));
  assert_int_equal(nlExtensionIsInitialized("SUPERLU"), cncDirectSolverAvailable(CNC_SUPERLU));
  assert_int_equal(nlInitExtension("CHOLMOD"), cncDirectSolverAvailable(CNC_CHOLMOD));
  assert_int_equal(nlInitExtension("CUDA"),
                   cncBackendAvailable(CNC_BACKEND_CUDA) ? NL_TRUE : NL_FALSE);
  assert_int_equal(nlInitExtension("OPENCL"),
                   cncBackendAvailable(CNC_BACKEND_OPENCL) ? NL_TRUE : NL_FALSE);
  assert_true(nlInitExtension("CNC")); /* back to cnc's own choice for the next tests */
  assert_true(nlExtensionIsInitialized("CNC"));
}

/* Misuse OpenNL aborts on: reported, nothing done, and the context still solves afterwards. */
static void test_misuse_carries_on(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 1);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlCoefficient(0, 1.0); /* no row */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_STATE);
  nlClearErrorCNC();
  nlSolverParameteri(0x7777, 1); /* unknown parameter */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INVALID_ENUM);
  nlClearErrorCNC();
  nlBegin(NL_SYSTEM);
  nlBegin(NL_ROW); /* not in a matrix */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_STATE);
  nlClearErrorCNC();
  nlBegin(NL_MATRIX);
  nlBegin(NL_ROW);
  nlCoefficient(7, 1.0); /* out of range */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INDEX_OUT_OF_RANGE);
  nlClearErrorCNC();
  nlCoefficient(0, 2.0);
  nlRightHandSide(6.0);
  nlEnd(NL_ROW);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  assert_double_equal(nlGetVariable(0), 3.0, 1e-12);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlUpdateRightHandSide(NULL); /* OpenNL would copy from NULL: reported */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_NULL_POINTER);
  nlDeleteContext(ctx);
  nlSolve(); /* no context: reported, no crash */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_NO_CONTEXT);
}

/* NL_FUNC_PROGRESS: called during the solve with iteration counts up to the limit. */
static int progress_calls;
static NLuint progress_last_iter, progress_max_iter;
static void on_progress(NLuint it, NLuint max_it, double err2, double max_err2) {
  (void)err2;
  (void)max_err2;
  ++progress_calls;
  progress_last_iter = it;
  progress_max_iter = max_it;
}

static void test_progress_function(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 20);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSetFunction(NL_FUNC_PROGRESS, (NLfunc)on_progress);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (NLuint i = 0; i < 20; ++i) {
    nlBegin(NL_ROW);
    if (i > 0) nlCoefficient(i - 1, -1.0);
    nlCoefficient(i, 2.0);
    if (i < 19) nlCoefficient(i + 1, -1.0);
    nlRightHandSide(1.0);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  progress_calls = 0;
  assert_true(nlSolve());
  NLint it = 0;
  nlGetIntegerv(NL_USED_ITERATIONS, &it);
  assert_true(progress_calls >= 1);
  assert_true(progress_last_iter <= (NLuint)it);
  assert_int_equal(progress_max_iter, 100); /* OpenNL's default: 5 x 20 free variables */
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_2x2),
      cmocka_unit_test(test_locked_plain),
      cmocka_unit_test(test_initial_guess),
      cmocka_unit_test(test_multi_buffers),
      cmocka_unit_test(test_nonsymmetric_solvers),
      cmocka_unit_test(test_gmres_restart),
      cmocka_unit_test(test_unsupported_solvers),
      cmocka_unit_test(test_extensions),
      cmocka_unit_test(test_misuse_carries_on),
      cmocka_unit_test(test_progress_function),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
