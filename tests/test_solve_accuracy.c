/* Solutions of cncSolve checked against independent references computed here: a dense Cholesky
 * solve on small generated SPD systems and the residual ||b - A x|| / ||b|| recomputed by the test
 * on large ones; the three precisions and the forced matrix formats (CSR, BCRS 2x2 and 4x4) against
 * the same dense reference; the other methods: BiCGSTAB and GMRES (full and restarted) on a small
 * nonsymmetric system against dense LU, and CG with the SSOR preconditioner. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cnc.h"
#include "solve_support.h"
#include "test_support.h"

/* ---- Small systems against dense Cholesky ---------------------------------------------------- */
static void check_against_cholesky(const ts_csr* a, const opts* o, double tol, const char* what) {
  double* b = random_vector((size_t)a->n, 99 + (uint64_t)a->n);
  double* x_ref = dense_reference(a, b);
  double* x = (double*)calloc((size_t)a->n, sizeof(double));
  stats s = solve_with(a, b, o, x);
  double thr = o->threshold > 0 ? o->threshold : 1e-6;
  if (s.reason != CNC_REASON_CONVERGED)
    fail_msg("%s: reason 0x%x after %d iterations", what, s.reason, s.iters);
  double d = ts_rel_diff((size_t)a->n, x, x_ref);
  if (!(d <= tol)) fail_msg("%s: |x - x_cholesky| = %.3e > %.1e", what, d, tol);
  assert_true(s.iters > 0);
  check_reported_residual(a, x, b, &s, thr, what);
  free(b);
  free(x_ref);
  free(x);
}

static void test_small_spd_vs_cholesky(void** unused) {
  (void)unused;
  opts o = {0};
  o.threshold = 1e-12;
  ts_csr a = ts_random_spd(60, 3, 1);
  check_against_cholesky(&a, &o, 1e-9, "random spd 60");
  ts_csr_free(&a);
  a = ts_random_spd(300, 6, 2);
  check_against_cholesky(&a, &o, 1e-9, "random spd 300");
  ts_csr_free(&a);
  a = ts_laplacian_2d(17, 13);
  check_against_cholesky(&a, &o, 1e-9, "laplacian 17x13");
  ts_csr_free(&a);
  /* Default threshold (1e-6): the answer is accordingly less exact, but still right. */
  o.threshold = 0;
  a = ts_laplacian_2d(10, 10);
  check_against_cholesky(&a, &o, 1e-4, "laplacian 10x10 default threshold");
  ts_csr_free(&a);
}

/* ---- Large systems: residual recomputed by the test ------------------------------------------ */
static void test_poisson_3d_residual(void** unused) {
  (void)unused;
  static const int sizes[] = {20, 30, 40};
  for (int s_i = 0; s_i < 3; ++s_i) {
    ts_csr a = ts_poisson_3d(sizes[s_i]);
    double* b = random_vector((size_t)a.n, 7);
    double* x = (double*)calloc((size_t)a.n, sizeof(double));
    opts o = {0};
    o.threshold = 1e-8;
    stats s = solve_with(&a, b, &o, x);
    char what[64];
    snprintf(what, sizeof what, "poisson %d^3", sizes[s_i]);
    if (s.reason != CNC_REASON_CONVERGED) fail_msg("%s: reason 0x%x", what, s.reason);
    check_reported_residual(&a, x, b, &s, 1e-8, what);
    if (s.format_used == CNC_FORMAT_CSR) assert_int_equal(s.nnz, a.nnz);
    print_message("%s: %d iterations, true residual %.2e\n", what, s.iters, s.true_error);
    free(b);
    free(x);
    ts_csr_free(&a);
  }
}

/* ---- Precisions ------------------------------------------------------------------------------ */
static void test_precisions(void** unused) {
  (void)unused;
  static const CNCenum precs[3] = {CNC_DOUBLE, CNC_SINGLE, CNC_MIXED};
  static const double thr[3] = {1e-10, 1e-5, 1e-5};
  static const double tol[3] = {1e-8, 2e-3, 2e-4};
  static const char* names[3] = {"double", "single", "mixed"};
  for (int m = 0; m < 2; ++m) {
    ts_csr a = m == 0 ? ts_laplacian_2d(20, 20) : ts_random_spd(300, 5, 41);
    for (int p = 0; p < 3; ++p) {
      opts o = {0};
      o.precision = precs[p];
      o.threshold = thr[p];
      char what[64];
      snprintf(what, sizeof what, "%s on %s", names[p], m == 0 ? "laplacian" : "random spd");
      double* b = random_vector((size_t)a.n, 43);
      double* x_ref = dense_reference(&a, b);
      double* x = (double*)calloc((size_t)a.n, sizeof(double));
      stats s = solve_with(&a, b, &o, x);
      if (s.reason != CNC_REASON_CONVERGED) fail_msg("%s: reason 0x%x", what, s.reason);
      double d = ts_rel_diff((size_t)a.n, x, x_ref);
      if (!(d < tol[p])) fail_msg("%s: |x - x_cholesky| = %.3e > %.1e", what, d, tol[p]);
      check_reported_residual(&a, x, b, &s, thr[p], what);
      print_message("%s: %d iterations, true residual %.2e, error %.2e\n", what, s.iters,
                    s.true_error, d);
      free(b);
      free(x_ref);
      free(x);
    }
    ts_csr_free(&a);
  }
}

/* ---- Formats --------------------------------------------------------------------------------- */
static void test_forced_formats(void** unused) {
  (void)unused;
  static const CNCenum fmts[3] = {CNC_FORMAT_CSR, CNC_FORMAT_BCRS2, CNC_FORMAT_BCRS4};
  static const char* names[3] = {"csr", "bcrs2", "bcrs4"};
  static const int sizes[] = {16, 13, 14, 15, 101};
  for (int f = 0; f < 3; ++f)
    for (int si = 0; si < 5; ++si)
      for (int prec = 0; prec < 2; ++prec) {
        ts_csr a = si == 4 ? ts_laplacian_2d(101, 3) : ts_random_spd(sizes[si], 3, 50 + si);
        opts o = {0};
        o.format = fmts[f];
        o.threshold = prec ? 1e-6 : 1e-12;
        o.precision = prec ? CNC_SINGLE : CNC_DOUBLE;
        double* b = random_vector((size_t)a.n, 51);
        double* x_ref = dense_reference(&a, b);
        double* x = (double*)calloc((size_t)a.n, sizeof(double));
        CNCcontext c = cncNewContext();
        assert_int_equal(cncMakeCurrent(c), CNC_OK);
        apply_opts(&o);
        assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
        stats s = read_stats();
        const char* fname = NULL;
        assert_int_equal(cncGetString(CNC_FORMAT_NAME, &fname), CNC_OK);
        char what[64];
        snprintf(what, sizeof what, "%s n=%d %s", names[f], a.n, prec ? "single" : "double");
        if (s.format_used != fmts[f]) fail_msg("%s: format used 0x%x", what, s.format_used);
        assert_string_equal(fname, names[f]);
        if (s.reason != CNC_REASON_CONVERGED) fail_msg("%s: reason 0x%x", what, s.reason);
        double d = ts_rel_diff((size_t)a.n, x, x_ref);
        if (!(d < (prec ? 1e-3 : 1e-9))) fail_msg("%s: |x - x_cholesky| = %.3e", what, d);
        double fill = 0;
        assert_int_equal(cncGetDoublev(CNC_BLOCK_FILL_RATIO, &fill), CNC_OK);
        assert_true(fill >= 1.0);
        if (f == 0) {
          assert_true(fill == 1.0);
          assert_int_equal(s.nnz, a.nnz);
        }
        cncDeleteContext(c);
        free(b);
        free(x_ref);
        free(x);
        ts_csr_free(&a);
      }
}

/* ---- Nonsymmetric solvers (BiCGSTAB, GMRES) and SSOR ------------------------------------------
 */
static void test_nonsymmetric_solvers(void** unused) {
  (void)unused;
  /* Convection-diffusion-like: a 2D Laplacian plus an unsymmetric first-order term. */
  ts_csr l = ts_laplacian_2d(12, 10);
  const int n = l.n;
  double* d = ts_csr_to_dense(&l);
  for (int i = 0; i < n; ++i) {
    if (i + 1 < n) d[i * n + i + 1] += 0.6;
    if (i > 0) d[i * n + i - 1] -= 0.6;
  }
  double* b = random_vector((size_t)n, 131);
  double* x_ref = (double*)malloc(sizeof(double) * (size_t)n);
  double* x = (double*)malloc(sizeof(double) * (size_t)n);
  assert_int_equal(ts_lu_solve(n, d, b, x_ref), 0);
  static const CNCenum solvers[] = {CNC_BICGSTAB, CNC_GMRES, CNC_GMRES};
  static const int restarts[] = {0, 0, 5};
  for (int s = 0; s < 3; ++s) {
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, solvers[s]), CNC_OK);
    if (restarts[s]) assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, restarts[s]), CNC_OK);
    assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-11), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 5000), CNC_OK);
    assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        if (d[i * n + j] != 0) assert_int_equal(cncAddIJCoefficient(i, j, d[i * n + j]), CNC_OK);
      assert_int_equal(cncAddIRightHandSide(i, b[i]), CNC_OK);
    }
    assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSolve(), CNC_OK);
    assert_int_equal(ts_read_x(n, 1, x), CNC_OK);
    stats st = read_stats();
    double diff = ts_rel_diff((size_t)n, x, x_ref);
    if (st.reason != CNC_REASON_CONVERGED || !(diff < 1e-8))
      fail_msg("solver 0x%x restart %d: reason 0x%x, %d iterations, |x - x_lu| = %.3e", solvers[s],
               restarts[s], st.reason, st.iters, diff);
    cncDeleteContext(c);
  }
  /* CNC_GMRES_RESTART: >= 1, default 30; the default solver is CG. */
  CNCint v = 0;
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, 0), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncGetIntegerv(CNC_GMRES_RESTART, &v), CNC_OK);
  assert_int_equal(v, 30);
  assert_int_equal(cncGetIntegerv(CNC_SOLVER, &v), CNC_OK);
  assert_true(v == CNC_SOLVER_DEFAULT || v == CNC_CG);
  cncDeleteContext(c);
  free(d);
  free(b);
  free(x_ref);
  free(x);
  ts_csr_free(&l);
}

/* CG with SSOR (on the CPU backend, chosen by AUTO) reaches the dense reference's answer. */
static void test_ssor_accepted(void** unused) {
  (void)unused;
  ts_csr a = ts_laplacian_2d(15, 15);
  double* b = random_vector((size_t)a.n, 141);
  double* x_ref = dense_reference(&a, b);
  double* x = (double*)calloc((size_t)a.n, sizeof(double));
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_SSOR), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
  assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
  stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_true(ts_rel_diff((size_t)a.n, x, x_ref) < 1e-9);
  cncDeleteContext(c);
  free(b);
  free(x_ref);
  free(x);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_spd_vs_cholesky),
      cmocka_unit_test(test_poisson_3d_residual),
      cmocka_unit_test(test_precisions),
      cmocka_unit_test(test_forced_formats),
      cmocka_unit_test(test_nonsymmetric_solvers),
      cmocka_unit_test(test_ssor_accepted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
