/* BiCGSTAB and GMRES on generated nonsymmetric problems, checked against dense LU (small systems)
 * and by the residual recomputed here (large ones): random diagonally dominant matrices and
 * convection-diffusion on 2D and 3D grids, several right-hand sides, the three precisions, the
 * OpenCL backend when one is present; GMRES restarts (full, short, capped at n), and the solver
 * CNC_SOLVER_DEFAULT picks from CNC_SYMMETRIC. */
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

/* x_ref (nsys columns) = A⁻¹ b by dense LU. */
static void lu_reference(const ts_csr* a, int nsys, const double* b, double* x_ref) {
  double* dense = ts_csr_to_dense(a);
  for (int s = 0; s < nsys; ++s)
    assert_int_equal(lu_solve(a->n, dense, b + (size_t)s * a->n, x_ref + (size_t)s * a->n), 0);
  free(dense);
}

/* Random nonsymmetric, strictly row diagonally dominant (diagonal of either sign). */
static ts_csr random_nonsymmetric(int32_t n, int per_row, uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  coo t = {0};
  for (int32_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int e = 0; e < per_row; ++e) {
      int32_t j = (int32_t)ts_rng_below(&r, (uint32_t)n);
      if (j == i) continue;
      double v = 2.0 * ts_rng_uniform(&r) - 1.0;
      sum += fabs(v);
      coo_add(&t, i, j, v);
    }
    coo_add(&t, i, i, (i % 3 == 0 ? -1.0 : 1.0) * (1.2 * sum + 0.5));
  }
  return coo_to_csr(n, &t);
}

static const char* precision_name(CNCenum p) {
  return p == CNC_SINGLE ? "single" : p == CNC_MIXED ? "mixed" : "double";
}

/* Threshold and accepted distance to the reference for each precision: single and mixed run the
 * SpMV with float matrix values; cnc restarts from the double true residual, so it reaches a
 * threshold of 1e-6 in every precision. */
static double threshold_for(CNCenum p) { return p == CNC_DOUBLE ? 1e-10 : 1e-6; }

/* Solves and checks every column against x_ref (relative max-norm) and by the residual. */
static void check_against(const ts_csr* a, const double* b, int nsys, const opts* o,
                          const double* x_ref, double tol, const char* what) {
  size_t n = (size_t)a->n;
  double* x = (double*)malloc(sizeof(double) * n * nsys);
  stats s = solve_with(a, b, nsys, o, x);
  double worst_res = 0.0, worst_diff = 0.0;
  for (int k = 0; k < nsys; ++k) {
    double res = ts_rel_residual(a, x + k * n, b + k * n);
    double diff = x_ref ? ts_rel_diff(n, x + k * n, x_ref + k * n) : 0.0;
    if (res > worst_res) worst_res = res;
    if (diff > worst_diff) worst_diff = diff;
  }
  printf("  %-28s %-8s %-6s n=%-6d k=%d: %-10s it=%4d res=%.2e (cnc true %.2e) diff=%.2e\n", what,
         solver_name(o->solver), precision_name(o->precision), a->n, nsys,
         s.reason == CNC_REASON_CONVERGED ? "converged" : "NOT", s.iters, worst_res, s.true_error,
         worst_diff);
  if (s.reason != CNC_REASON_CONVERGED) fail_msg("%s: reason 0x%x", what, s.reason);
  assert_true(worst_res <= 2.0 * o->threshold);
  /* cnc's own true residual agrees with the one computed here */
  assert_true(fabs(s.true_error - worst_res) <= 1e-3 * worst_res + 1e-15);
  if (x_ref) assert_true(worst_diff <= tol);
  free(x);
}

static const CNCenum precisions[] = {CNC_DOUBLE, CNC_SINGLE, CNC_MIXED};

/* ---- Generated problems ---------------------------------------------------------------------- */
static void test_random_dense_reference(void** state) {
  (void)state;
  ts_csr a = random_nonsymmetric(120, 6, 11);
  const int nsys = 3;
  double* b = random_vector((size_t)a.n * nsys, 12);
  double* x_ref = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  lu_reference(&a, nsys, b, x_ref);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {
          solvers[s], precisions[p], CNC_BACKEND_CPU, 0, threshold_for(precisions[p]), 0, 0, 0, 0,
          0};
      check_against(&a, b, nsys, &o, x_ref, precisions[p] == CNC_DOUBLE ? 1e-8 : 1e-4,
                    "random diag. dominant");
    }
  free(b), free(x_ref);
  ts_csr_free(&a);
}

static void test_convection_diffusion_2d(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 24, 0.45);
  assert_true(ts_csr_get(&a, 0, 1) != ts_csr_get(&a, 1, 0)); /* really nonsymmetric */
  const int nsys = 3;
  double* b = random_vector((size_t)a.n * nsys, 21);
  double* x_ref = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  lu_reference(&a, nsys, b, x_ref);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {
          solvers[s], precisions[p], CNC_BACKEND_CPU, 0, threshold_for(precisions[p]), 0, 0, 0, 1,
          0};
      check_against(&a, b, nsys, &o, x_ref, precisions[p] == CNC_DOUBLE ? 1e-7 : 1e-3,
                    "conv-diff 2D (assembled)");
    }
  free(b), free(x_ref);
  ts_csr_free(&a);
}

static void test_convection_diffusion_3d(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(3, 18, 0.6);
  const int nsys = 2;
  double* b = random_vector((size_t)a.n * nsys, 31);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {
          solvers[s], precisions[p], CNC_BACKEND_CPU, 0, threshold_for(precisions[p]), 0, 0, 0, 0,
          0};
      check_against(&a, b, nsys, &o, NULL, 0, "conv-diff 3D");
    }
  free(b);
  ts_csr_free(&a);
}

/* Full GMRES (restart >= n) converges in at most n iterations; a short restart needs more. */
static void test_gmres_restart(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 7, 0.9); /* n = 49 */
  double* b = random_vector((size_t)a.n, 41);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n);
  opts full = {CNC_GMRES, CNC_DOUBLE, CNC_BACKEND_CPU, 0, 1e-10, 0, 60, 0, 0, 0};
  stats s_full = solve_with(&a, b, 1, &full, x);
  assert_int_equal(s_full.reason, CNC_REASON_CONVERGED);
  assert_true(s_full.iters <= a.n);
  opts short_ = full;
  short_.restart = 2;
  stats s_short = solve_with(&a, b, 1, &short_, x);
  assert_int_equal(s_short.reason, CNC_REASON_CONVERGED);
  printf("  GMRES(60) %d iterations, GMRES(2) %d iterations\n", s_full.iters, s_short.iters);
  assert_true(s_short.iters > s_full.iters);
  assert_true(ts_rel_residual(&a, x, b) <= 2e-10);
  /* A restart past n is capped at n (a Krylov space has no more vectors): 10^5 asks for no
   * memory and runs exactly as GMRES(60) on n = 49. */
  double* x_full = (double*)malloc(sizeof(double) * (size_t)a.n);
  solve_with(&a, b, 1, &full, x_full);
  opts huge = full;
  huge.restart = 100000;
  stats s_huge = solve_with(&a, b, 1, &huge, x);
  assert_int_equal(s_huge.reason, CNC_REASON_CONVERGED);
  assert_int_equal(s_huge.iters, s_full.iters);
  assert_memory_equal(x, x_full, sizeof(double) * (size_t)a.n);
  free(b), free(x), free(x_full);
  ts_csr_free(&a);
}

/* CNC_SOLVER_DEFAULT follows CNC_SYMMETRIC (default 1): CG for a symmetric matrix, BiCGSTAB for
 * one declared nonsymmetric; each gives the same iterations and bits as that solver named. */
static void test_symmetric_picks_the_solver(void** state) {
  (void)state;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  CNCint v = 0;
  assert_int_equal(cncGetIntegerv(CNC_SYMMETRIC, &v), CNC_OK);
  assert_int_equal(v, 1);
  assert_int_equal(cncSolverParameteri(CNC_SYMMETRIC, 2), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncGetIntegerv(CNC_SYMMETRIC, &v), CNC_OK);
  assert_int_equal(v, 1);
  cncDeleteContext(c);

  ts_csr a = convection_diffusion(2, 12, 0.9); /* n = 144, nonsymmetric */
  double* b = random_vector((size_t)a.n, 5);
  const size_t bytes = sizeof(double) * (size_t)a.n;
  double *x_def = (double*)malloc(bytes), *x_named = (double*)malloc(bytes);
  for (int nonsym = 0; nonsym < 2; ++nonsym) {
    opts def = {CNC_SOLVER_DEFAULT, CNC_DOUBLE, CNC_BACKEND_CPU, 0, 1e-10, 400, 0, 1, 0, nonsym};
    opts named = def;
    named.solver = nonsym ? CNC_BICGSTAB : CNC_CG;
    const stats sd = solve_with(&a, b, 1, &def, x_def);
    const stats sn = solve_with(&a, b, 1, &named, x_named);
    printf("  CNC_SYMMETRIC %d: default solver %d iterations, %s %d\n", !nonsym, sd.iters,
           nonsym ? "BiCGSTAB" : "CG", sn.iters);
    assert_int_equal(sd.solver_used, named.solver);
    assert_int_equal(sn.solver_used, named.solver);
    assert_int_equal(sd.iters, sn.iters);
    assert_int_equal(sd.reason, sn.reason);
    assert_memory_equal(x_def, x_named, bytes);
    if (nonsym) assert_int_equal(sd.reason, CNC_REASON_CONVERGED);
  }
  free(b), free(x_def), free(x_named);
  ts_csr_free(&a);
}

/* The OpenCL backend runs the same solvers (its SpMV through device_system::apply). */
static void test_opencl(void** state) {
  (void)state;
  if (!cncBackendAvailable(CNC_BACKEND_OPENCL)) {
    printf("  no OpenCL device: OpenCL part not run\n");
    skip();
  }
  ts_csr a = convection_diffusion(2, 24, 0.45);
  const int nsys = 2;
  double* b = random_vector((size_t)a.n * nsys, 51);
  double* x_ref = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  lu_reference(&a, nsys, b, x_ref);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {solvers[s],
                precisions[p],
                CNC_BACKEND_OPENCL,
                0,
                threshold_for(precisions[p]),
                0,
                0,
                0,
                0,
                0};
      check_against(&a, b, nsys, &o, x_ref, precisions[p] == CNC_DOUBLE ? 1e-7 : 1e-3,
                    "conv-diff 2D on OpenCL");
    }
  free(b), free(x_ref);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_dense_reference),
      cmocka_unit_test(test_convection_diffusion_2d),
      cmocka_unit_test(test_convection_diffusion_3d),
      cmocka_unit_test(test_gmres_restart),
      cmocka_unit_test(test_symmetric_picks_the_solver),
      cmocka_unit_test(test_opencl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
