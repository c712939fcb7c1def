/* The parameters of the nonsymmetric solvers: checks of bad enums and CNC_GMRES_RESTART, SSOR
 * (CPU) against Jacobi (and refused by the GPU backends, CNC_SSOR_OMEGA), the Jacobi
 * preconditioner on badly scaled columns, and determinism over thread counts and runs. */
/* cmocka.h needs the standard headers first. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "cnc.h"
#include "nonsymmetric_support.h"
#include "test_support.h"

/* ---- Parameters ------------------------------------------------------------------------------ */
static void test_parameters(void** state) {
  (void)state;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  CNCint v = 0;
  assert_int_equal(cncGetIntegerv(CNC_GMRES_RESTART, &v), CNC_OK);
  assert_int_equal(v, 30);
  assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, 7), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_GMRES_RESTART, &v), CNC_OK);
  assert_int_equal(v, 7);
  assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, 0), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, -3), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncGetIntegerv(CNC_GMRES_RESTART, &v), CNC_OK);
  assert_int_equal(v, 7);
  const CNCenum good_solvers[] = {CNC_SOLVER_DEFAULT, CNC_CHOLMOD,  CNC_SUPERLU, CNC_CG,
                                  CNC_BLOCK_CG,       CNC_BICGSTAB, CNC_GMRES};
  for (int i = 0; i < 7; ++i) {
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, good_solvers[i]), CNC_OK);
    assert_int_equal(cncGetIntegerv(CNC_SOLVER, &v), CNC_OK);
    assert_int_equal(v, good_solvers[i]);
  }
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, 0x208), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_PRECOND_JACOBI), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, -1), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncGetIntegerv(CNC_SOLVER, &v), CNC_OK);
  assert_int_equal(v, CNC_GMRES); /* unchanged by the failures */
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_SSOR), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, 0x304), CNC_ERR_INVALID_ENUM);
  /* CNC_PRECOND_USER needs the caller's operator first (cncSetOperator). */
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_USER), CNC_ERR_STATE);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_BICGSTAB), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncGetIntegerv(CNC_PRECONDITIONER, &v), CNC_OK);
  assert_int_equal(v, CNC_PRECOND_SSOR);
  cncDeleteContext(c);
}

/* SSOR is SSOR: on a 2D Poisson problem (SPD) CG with SSOR converges to the answer in fewer
 * iterations than with Jacobi; BiCGSTAB and GMRES with SSOR solve a convection-diffusion system;
 * k = 2 systems at once. AUTO runs it on the CPU; a GPU backend named explicitly is refused with
 * nothing changed; CNC_SSOR_OMEGA is checked. */
static void test_ssor(void** state) {
  (void)state;
  ts_csr lap = ts_laplacian_2d(40, 40);
  double* b = random_vector((size_t)lap.n * 2, 81);
  double* xj = (double*)malloc(sizeof(double) * (size_t)lap.n * 2);
  double* xs = (double*)malloc(sizeof(double) * (size_t)lap.n * 2);
  opts o = {CNC_CG, 0, CNC_BACKEND_AUTO, CNC_PRECOND_JACOBI, 1e-10, 0, 0, 0, 0, 0};
  stats sj = solve_with(&lap, b, 2, &o, xj);
  o.precond = CNC_PRECOND_SSOR;
  stats ss = solve_with(&lap, b, 2, &o, xs);
  assert_int_equal(sj.reason, CNC_REASON_CONVERGED);
  assert_int_equal(ss.reason, CNC_REASON_CONVERGED);
  assert_int_equal(ss.backend_used, CNC_BACKEND_CPU);
  for (int k = 0; k < 2; ++k)
    assert_true(ts_rel_residual(&lap, xs + (size_t)k * lap.n, b + (size_t)k * lap.n) <= 2e-10);
  /* SSOR(1.5) on the 5-point Laplacian: far fewer iterations than Jacobi (about half or less). */
  assert_true(2 * ss.iters <= sj.iters + 10);

  ts_csr cd = convection_diffusion(2, 16, 0.45);
  for (int m = 0; m < 2; ++m) {
    opts on = {solvers[m], 0, CNC_BACKEND_CPU, CNC_PRECOND_JACOBI, 1e-10, 0, 0, 0, 1, 0};
    stats nj = solve_with(&cd, b, 1, &on, xj);
    on.precond = CNC_PRECOND_SSOR;
    stats ns = solve_with(&cd, b, 1, &on, xs);
    assert_int_equal(ns.reason, CNC_REASON_CONVERGED);
    assert_true(ts_rel_residual(&cd, xs, b) <= 2e-10);
    assert_true(ns.iters < nj.iters);
  }

  /* Explicit GPU backends refuse it, whether or not one is present; x is left as it was. */
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  double omega = 0;
  assert_int_equal(cncGetDoublev(CNC_SSOR_OMEGA, &omega), CNC_OK);
  assert_true(omega == 1.5);
  const double bad[] = {0.0, 2.0, -1.0, 2.5};
  for (int i = 0; i < 4; ++i)
    assert_int_equal(cncSolverParameterd(CNC_SSOR_OMEGA, bad[i]), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncSolverParameterd(CNC_SSOR_OMEGA, NAN), CNC_ERR_NOT_FINITE);
  assert_int_equal(cncGetError(), CNC_ERR_INVALID_VALUE); /* the first error sticks */
  assert_int_equal(cncClearError(), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_SSOR_OMEGA, 1.2), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_SSOR_OMEGA, &omega), CNC_OK);
  assert_true(omega == 1.2);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_SSOR), CNC_OK);
  CNCuint* col = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)lap.nnz);
  for (int64_t t = 0; t < lap.nnz; ++t) col[t] = (CNCuint)lap.col[t];
  const CNCenum gpus[2] = {CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL};
  for (int g = 0; g < 2; ++g) {
    assert_int_equal(cncSolverParameteri(CNC_BACKEND, gpus[g]), CNC_OK);
    for (CNCint i = 0; i < lap.n; ++i) xj[i] = 7.0;
    assert_int_equal(cncSolveCSR((CNCuint)lap.n, lap.row_ptr, col, lap.val, 0, 1, b, xj),
                     CNC_ERR_UNSUPPORTED);
    assert_non_null(strstr(cncGetLastErrorMessage(), "SSOR"));
    assert_int_equal(cncGetError(), CNC_ERR_UNSUPPORTED);
    assert_int_equal(cncClearError(), CNC_OK);
    for (CNCint i = 0; i < lap.n; ++i) assert_true(xj[i] == 7.0);
  }
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolveCSR((CNCuint)lap.n, lap.row_ptr, col, lap.val, 0, 1, b, xj), CNC_OK);
  assert_true(ts_rel_residual(&lap, xj, b) <= 2e-6);
  cncDeleteContext(c);
  free(col), free(b), free(xj), free(xs);
  ts_csr_free(&lap), ts_csr_free(&cd);
}

/* The Jacobi preconditioner is applied: with badly scaled columns (A = A0 S), right Jacobi
 * preconditioning undoes the scaling, and both solvers need many more iterations without it. */
static void test_jacobi_matters(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 20, 0.45);
  ts_rng r;
  ts_rng_seed(&r, 91);
  double* scale = (double*)malloc(sizeof(double) * (size_t)a.n);
  for (int32_t j = 0; j < a.n; ++j) scale[j] = pow(10.0, 4.0 * ts_rng_uniform(&r));
  for (int64_t t = 0; t < a.nnz; ++t) a.val[t] *= scale[a.col[t]];
  free(scale);
  double* b = random_vector((size_t)a.n, 92);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, CNC_PRECOND_JACOBI, 1e-8, 2000, 0, 0, 0, 0};
    stats sj = solve_with(&a, b, 1, &o, x);
    assert_int_equal(sj.reason, CNC_REASON_CONVERGED);
    assert_true(ts_rel_residual(&a, x, b) <= 2e-8);
    o.precond = CNC_PRECOND_NONE;
    stats sn = solve_with(&a, b, 1, &o, x);
    printf("  %s: Jacobi %d iterations, none %d (%s)\n", solver_name(o.solver), sj.iters, sn.iters,
           sn.reason == CNC_REASON_CONVERGED ? "converged" : "not converged");
    assert_true(sn.reason != CNC_REASON_CONVERGED || sn.iters > 2 * sj.iters);
  }
  free(b), free(x);
  ts_csr_free(&a);
}

/* Reductions in a fixed order: the same bits for 1 and 2 threads, and on a second run. */
static void test_deterministic(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(3, 30, 0.6); /* 27000 rows x 3 systems: threaded path */
  const int nsys = 3;
  size_t len = (size_t)a.n * nsys;
  double* b = random_vector(len, 101);
  double* x1 = (double*)malloc(sizeof(double) * len);
  double* x2 = (double*)malloc(sizeof(double) * len);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, 0, 1e-9, 0, 0, 1, 0, 0};
    stats s1 = solve_with(&a, b, nsys, &o, x1);
    o.threads = 2;
    stats s2 = solve_with(&a, b, nsys, &o, x2);
    assert_int_equal(s1.reason, CNC_REASON_CONVERGED);
    assert_int_equal(s1.iters, s2.iters);
    assert_memory_equal(x1, x2, sizeof(double) * len);
    solve_with(&a, b, nsys, &o, x1);
    assert_memory_equal(x1, x2, sizeof(double) * len);
  }
  free(b), free(x1), free(x2);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parameters),
      cmocka_unit_test(test_ssor),
      cmocka_unit_test(test_jacobi_matters),
      cmocka_unit_test(test_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
