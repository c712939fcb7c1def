/* OpenNL 4's user functions (issue 12, part 5): nlSetFunction(NL_FUNC_MATRIX) solves with the
 * program's y = A x over the free variables in place of the assembled matrix, and
 * nlSetFunction(NL_FUNC_PRECONDITIONER) applies the program's M⁻¹ (NL_PRECOND_USER). References:
 * the closed-form answer of a 1D Poisson problem (a straight line between two locked ends), a
 * scaled function (its answer scales), and the iterations of NL_PRECOND_JACOBI for a Jacobi
 * function. nlSetFunction(NL_FUNC_SOLVER) replaces the solver: a program's solver that writes a
 * known x, and one that fails. What OpenNL asserts on (a function matrix with Jacobi,
 * NL_SOLVER_USER without a function) fails with a message. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include <cnc.h>
#include <cnc_nl.h>
#include <cnc_nl_matrix.h>

#include "nl_messages.h"
#include "nl_test_util.h"

enum { kN = 100 }; /* variables; 0 and kN-1 locked */

/* OpenNL's functions take no user pointer: what they apply is global, as in OpenNL programs. */
static double g_scale = 1.0;
static int g_matrix_calls = 0, g_precond_calls = 0;
static const double* g_inv_diag = NULL;
static int g_n = 0;

/* y = scale * tridiag(-1, 2, -1) x over the kN - 2 free variables. */
static void chain(const double* x, double* y) {
  ++g_matrix_calls;
  const int n = kN - 2;
  for (int i = 0; i < n; ++i) {
    double s = 2.0 * x[i];
    if (i > 0) s -= x[i - 1];
    if (i + 1 < n) s -= x[i + 1];
    y[i] = g_scale * s;
  }
}

static void jacobi(const double* x, double* y) {
  ++g_precond_calls;
  for (int i = 0; i < g_n; ++i) y[i] = g_inv_diag[i] * x[i];
}

/* The 1D Poisson system over kN variables with x_0 = 0 and x_{kN-1} = 1 locked: rows assembled
 * (the locked ones' coefficients move to the right-hand side). */
static void assemble_line(NLenum solver) {
  nlSolverParameteri(NL_NB_VARIABLES, kN);
  if (solver != NL_SOLVER_DEFAULT) nlSolverParameteri(NL_SOLVER, (NLint)solver);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE); /* NL_SOLVER_DEFAULT: Jacobi CG */
  nlSolverParameteri(NL_MAX_ITERATIONS, 1000);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlSetVariable(0, 0.0);
  nlSetVariable(kN - 1, 1.0);
  nlLockVariable(0);
  nlLockVariable(kN - 1);
  nlBegin(NL_MATRIX);
  for (int i = 1; i + 1 < kN; ++i) { /* one row per free variable, as OpenNL counts them */
    nlBegin(NL_ROW);
    nlCoefficient((NLuint)i - 1, -1.0);
    nlCoefficient((NLuint)i, 2.0);
    nlCoefficient((NLuint)i + 1, -1.0);
    nlEnd(NL_ROW);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
}

static void test_matrix_function(void** state) {
  (void)state;
  const double scales[2] = {1.0, 2.0};
  for (int t = 0; t < 2; ++t) {
    NLContext ctx = nlNewContext();
    assemble_line(NL_CG); /* explicit CG: OpenNL's default is then no preconditioner */
    g_scale = scales[t], g_matrix_calls = 0;
    nlSetFunction(NL_FUNC_MATRIX, (NLfunc)chain);
    NLfunc back = NULL;
    nlGetFunction(NL_FUNC_MATRIX, &back);
    assert_true(back == (NLfunc)chain);
    assert_true(nlSolve());
    NLint used = 0;
    nlGetIntegerv(NL_USED_ITERATIONS, &used);
    assert_true(used > 0 && g_matrix_calls >= used);
    /* (scale A) x = b: the line divided by scale; the locked ends as they were. */
    for (int i = 1; i + 1 < kN; ++i)
      assert_double_equal(nlGetVariable((NLuint)i), (double)i / (kN - 1) / g_scale, 1e-9);
    assert_double_equal(nlGetVariable(0), 0.0, 0.0);
    assert_double_equal(nlGetVariable(kN - 1), 1.0, 0.0);
    /* nlGetCurrentMatrix: the function's matrix, as OpenNL's M after nlSetFunction. */
    NLMatrix M = nlGetCurrentMatrix();
    assert_non_null(M);
    assert_int_equal(M->type, NL_MATRIX_FUNCTION);
    assert_true(nlMatrixGetFunction(M) == (NLMatrixFunc)chain);
    nlDeleteContext(ctx);
  }
}

/* NL_SOLVER_DEFAULT picks Jacobi CG; a function matrix has no diagonal: OpenNL asserts, cnc says
 * why and nlSolve returns NL_FALSE with the variables untouched. */
static void test_matrix_function_jacobi(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  assemble_line(NL_SOLVER_DEFAULT);
  nlSetFunction(NL_FUNC_MATRIX, (NLfunc)chain);
  nl_capture();
  g_matrix_calls = 0;
  assert_false(nlSolve());
  nl_release();
  assert_non_null(strstr(nl_messages, "JACOBI"));
  assert_int_equal(g_matrix_calls, 0);
  assert_double_equal(nlGetVariable(50), 0.0, 0.0);
  /* With NL_PRECOND_NONE it solves. */
  nlSolverParameteri(NL_PRECONDITIONER, NL_PRECOND_NONE);
  g_scale = 1.0;
  assert_true(nlSolve());
  assert_double_equal(nlGetVariable(50), 50.0 / (kN - 1), 1e-9);
  nlDeleteContext(ctx);
}

/* A badly scaled SPD system (D L D, D over two decades) with Jacobi given as a function: the
 * iterations of NL_PRECOND_JACOBI, far fewer than without. */
static NLint solve_scaled(NLint precond, int with_function, double* x) {
  enum { m = 300 };
  static double diag[m], inv[m];
  double d[m];
  unsigned long long s = 12345;
  for (int i = 0; i < m; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    d[i] = pow(10.0, 2.0 * (double)(s >> 11) / 9007199254740992.0);
  }
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, m);
  nlSolverParameteri(NL_SOLVER, NL_CG);
  nlSolverParameteri(NL_MAX_ITERATIONS, 5000);
  nlSolverParameterd(NL_THRESHOLD, 1e-10);
  if (precond >= 0) nlSolverParameteri(NL_PRECONDITIONER, precond);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (int i = 0; i < m; ++i) {
    diag[i] = 2.01 * d[i] * d[i];
    inv[i] = 1.0 / diag[i];
    nlAddIJCoefficient((NLuint)i, (NLuint)i, diag[i]);
    if (i > 0) nlAddIJCoefficient((NLuint)i, (NLuint)i - 1, -d[i] * d[i - 1]);
    if (i + 1 < m) nlAddIJCoefficient((NLuint)i, (NLuint)i + 1, -d[i] * d[i + 1]);
    nlAddIRightHandSide((NLuint)i, 1.0);
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  if (with_function) {
    g_inv_diag = inv, g_n = m, g_precond_calls = 0;
    nlSetFunction(NL_FUNC_PRECONDITIONER, (NLfunc)jacobi);
    NLint p = -1;
    nlGetIntegerv(NL_PRECONDITIONER, &p);
    assert_int_equal(p, NL_PRECOND_USER);
  }
  assert_true(nlSolve());
  NLint used = 0;
  nlGetIntegerv(NL_USED_ITERATIONS, &used);
  if (with_function) assert_true(g_precond_calls >= used);
  for (int i = 0; i < m; ++i) x[i] = nlGetVariable((NLuint)i);
  nlDeleteContext(ctx);
  return used;
}

static void test_preconditioner_function(void** state) {
  (void)state;
  double x_jacobi[300], x_user[300], x_none[300];
  const NLint jacobi = solve_scaled(NL_PRECOND_JACOBI, 0, x_jacobi);
  const NLint user = solve_scaled(-1, 1, x_user);
  const NLint none = solve_scaled(NL_PRECOND_NONE, 0, x_none);
  assert_true(abs(user - jacobi) <= 1);
  assert_true(2 * jacobi < none);
  for (int i = 0; i < 300; ++i)
    assert_double_equal(x_user[i], x_jacobi[i], 1e-7 * fabs(x_jacobi[i]) + 1e-12);
}

/* NL_FUNC_SOLVER: OpenNL's NLSolverFunc, NLboolean f(void), runs in nlSolve in place of the
 * solver and its result is nlSolve's. It reads M through nlGetCurrentMatrix and writes x with
 * nlSetVariable (OpenNL's writes its internal x). */
static int g_solver_calls = 0;
static NLuint g_seen_rows = 0;
static NLboolean user_solver(void) {
  ++g_solver_calls;
  NLMatrix M = nlGetCurrentMatrix();
  g_seen_rows = M != NULL ? M->m : 0;
  for (NLuint i = 1; i + 1 < kN; ++i) nlSetVariable(i, 0.5 * i); /* a known x */
  return NL_TRUE;
}
static NLboolean failing_solver(void) {
  ++g_solver_calls;
  return NL_FALSE;
}

static void test_solver_function(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nlSetFunction(NL_FUNC_SOLVER, (NLfunc)user_solver);
  NLfunc back = NULL;
  nlGetFunction(NL_FUNC_SOLVER, &back);
  assert_ptr_equal(back, (NLfunc)user_solver);
  NLint solver = 0;
  nlGetIntegerv(NL_SOLVER, &solver);
  assert_int_equal(solver, NL_SOLVER_USER); /* as OpenNL's nlSetFunction */
  g_solver_calls = 0;
  assert_false(nlSolve()); /* nothing constructed: refused, the function not called */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_STATE);
  assert_int_equal(g_solver_calls, 0);
  nlClearErrorCNC();
  assemble_line(NL_SOLVER_DEFAULT);
  assert_true(nlSolve());
  assert_int_equal(g_solver_calls, 1);
  assert_int_equal(g_seen_rows, kN - 2); /* M over the free variables */
  for (NLuint i = 1; i + 1 < kN; ++i) assert_double_equal(nlGetVariable(i), 0.5 * i, 0.0);
  assert_double_equal(nlGetVariable(0), 0.0, 0.0);
  assert_double_equal(nlGetVariable(kN - 1), 1.0, 0.0);
  /* Its result is nlSolve's. */
  nlSetFunction(NL_FUNC_SOLVER, (NLfunc)failing_solver);
  assert_false(nlSolve());
  assert_int_equal(g_solver_calls, 2);
  /* Cleared: cnc's solver again (NL_SOLVER_DEFAULT), the line x_i = i / (kN - 1). */
  nlSetFunction(NL_FUNC_SOLVER, NULL);
  nlGetIntegerv(NL_SOLVER, &solver);
  assert_int_equal(solver, NL_SOLVER_DEFAULT);
  assert_true(nlSolve());
  assert_int_equal(g_solver_calls, 2);
  for (NLuint i = 0; i < kN; ++i) assert_double_equal(nlGetVariable(i), (double)i / (kN - 1), 1e-9);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(ctx);
}

/* NL_SOLVER_USER with no function: nlSolve fails with a message (OpenNL would call NULL). */
static void test_solver_user_without_function(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nl_capture();
  nlSolverParameteri(NL_SOLVER, NL_SOLVER_USER);
  assemble_line(NL_SOLVER_USER);
  assert_false(nlSolve());
  nl_release();
  assert_non_null(strstr(nl_messages, "NL_FUNC_SOLVER"));
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_UNSUPPORTED);
  nlClearErrorCNC();
  nlSetFunction(0x6ff, (NLfunc)user_solver); /* not a function name */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INVALID_ENUM);
  nlDeleteContext(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matrix_function),
      cmocka_unit_test(test_matrix_function_jacobi),
      cmocka_unit_test(test_preconditioner_function),
      cmocka_unit_test(test_solver_function),
      cmocka_unit_test(test_solver_user_without_function),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
