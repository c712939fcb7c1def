/* Systems with constraints and several right-hand sides, checked against references computed
 * here: reduced dense solves for locked variables (assembled entry by entry and row by row),
 * closed-form least-squares fits (plain, a locked coefficient, row scaling, normalized rows), and
 * several right-hand sides against single solves and dense Cholesky, with a locked variable whose
 * value differs per system. */
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

/* ---- Locked variables ------------------------------------------------------------------------ */
/* Reduced dense reference: A_FF x_F = b_F - A_FL x_L. */
static void reduced_reference(const ts_csr* a, const double* b, const int* locked, const double* xl,
                              double* x_ref) {
  int n = a->n, nf = 0;
  int* map = (int*)malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) map[i] = locked[i] ? -1 : nf++;
  double* d = (double*)calloc((size_t)nf * (size_t)nf, sizeof(double));
  double* bf = (double*)calloc((size_t)nf, sizeof(double));
  double* xf = (double*)calloc((size_t)nf, sizeof(double));
  for (int i = 0; i < n; ++i) {
    if (locked[i]) continue;
    bf[map[i]] = b[i];
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      int j = a->col[k];
      if (locked[j])
        bf[map[i]] -= a->val[k] * xl[j];
      else
        d[(size_t)map[i] * (size_t)nf + (size_t)map[j]] += a->val[k];
    }
  }
  assert_int_equal(ts_cholesky_solve(nf, d, bf, xf), 0);
  for (int i = 0; i < n; ++i) x_ref[i] = locked[i] ? xl[i] : xf[map[i]];
  free(map);
  free(d);
  free(bf);
  free(xf);
}

static void test_locked_variables(void** unused) {
  (void)unused;
  ts_csr a = ts_random_spd(40, 4, 11);
  const int n = a.n;
  double* b = random_vector((size_t)n, 12);
  int locked[40] = {0};
  double xl[40] = {0};
  for (int i = 0; i < n; i += 7) locked[i] = 1, xl[i] = 0.5 + i;
  double x_ref[40], x[40];
  reduced_reference(&a, b, locked, xl, x_ref);
  for (int rowwise = 0; rowwise < 2; ++rowwise) {
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
    assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
    assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
    for (int i = 0; i < n; ++i) {
      assert_int_equal(cncSetVariable(i, locked[i] ? xl[i] : 0.0), CNC_OK);
      if (locked[i]) assert_int_equal(cncLockVariable(i), CNC_OK);
    }
    assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
    for (int i = 0; i < n; ++i) {
      if (rowwise) assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        if (rowwise)
          assert_int_equal(cncCoefficient(a.col[k], a.val[k]), CNC_OK);
        else
          assert_int_equal(cncAddIJCoefficient(i, a.col[k], a.val[k]), CNC_OK);
      }
      if (rowwise) {
        assert_int_equal(cncRightHandSide(b[i]), CNC_OK);
        assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
      } else {
        assert_int_equal(cncAddIRightHandSide(i, b[i]), CNC_OK);
      }
    }
    assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSolve(), CNC_OK);
    assert_int_equal(ts_read_x(n, 1, x), CNC_OK);
    stats s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    for (int i = 0; i < n; ++i)
      if (locked[i]) assert_true(x[i] == xl[i]); /* locked values untouched, bit for bit */
    double d = ts_rel_diff((size_t)n, x, x_ref);
    if (!(d < 1e-9)) fail_msg("%s locked: |x - x_ref| = %.3e", rowwise ? "row-wise" : "ij", d);
    CNCboolean lk = CNC_FALSE;
    assert_int_equal(cncVariableIsLocked(7, &lk), CNC_OK);
    assert_int_equal(lk, CNC_TRUE);
    cncDeleteContext(c);
  }
  free(b);
  ts_csr_free(&a);
}

/* ---- Least squares --------------------------------------------------------------------------- */
enum { NS = 12 };

static double sample_y(int k) {
  static const double noise[NS] = {0.3,  -0.2, 0.1, 0.05, -0.4, 0.25,
                                   -0.1, 0.0,  0.2, -0.3, 0.15, -0.05};
  return 2.0 - 0.5 * k + noise[k];
}

/* Weighted closed-form fit of y = a + b t (weights multiply the squared residuals); with
 * lock_a, a is fixed at a_fixed. */
static void fit_reference(const double* w2, int lock_a, double a_fixed, double* a, double* b) {
  double s1 = 0, st = 0, stt = 0, sy = 0, sty = 0;
  for (int k = 0; k < NS; ++k) {
    double t = k, y = sample_y(k);
    s1 += w2[k], st += w2[k] * t, stt += w2[k] * t * t, sy += w2[k] * y, sty += w2[k] * t * y;
  }
  if (lock_a) {
    *a = a_fixed;
    *b = (sty - a_fixed * st) / stt;
  } else {
    double det = s1 * stt - st * st;
    *a = (stt * sy - st * sty) / det;
    *b = (s1 * sty - st * sy) / det;
  }
}

/* mode: 0 plain, 1 locked a, 2 row scaling, 3 normalized rows. */
static void run_fit(int mode, double* a, double* b) {
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 2), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-13), CNC_OK);
  if (mode == 3) assert_int_equal(cncEnable(CNC_NORMALIZE_ROWS), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  if (mode == 1) {
    assert_int_equal(cncSetVariable(0, 1.25), CNC_OK);
    assert_int_equal(cncLockVariable(0), CNC_OK);
  }
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int k = 0; k < NS; ++k) {
    assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
    assert_int_equal(cncCoefficient(0, 1.0), CNC_OK);
    assert_int_equal(cncCoefficient(1, (double)k), CNC_OK);
    assert_int_equal(cncRightHandSide(sample_y(k)), CNC_OK);
    if (mode == 2) assert_int_equal(cncRowScaling(1.0 + 0.25 * k), CNC_OK);
    assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
  assert_int_equal(cncGetVariable(0, a), CNC_OK);
  assert_int_equal(cncGetVariable(1, b), CNC_OK);
  cncDeleteContext(c);
}

static void test_least_squares(void** unused) {
  (void)unused;
  double w2[NS], ra, rb, a, b;
  const char* names[4] = {"plain", "locked", "row scaling", "normalized rows"};
  for (int mode = 0; mode < 4; ++mode) {
    for (int k = 0; k < NS; ++k) {
      double w = mode == 2 ? 1.0 + 0.25 * k : mode == 3 ? 1.0 / sqrt(1.0 + (double)k * k) : 1.0;
      w2[k] = w * w;
    }
    fit_reference(w2, mode == 1, 1.25, &ra, &rb);
    run_fit(mode, &a, &b);
    if (!(fabs(a - ra) < 1e-8 && fabs(b - rb) < 1e-8))
      fail_msg("least squares %s: got (%.12g, %.12g), expected (%.12g, %.12g)", names[mode], a, b,
               ra, rb);
  }
  /* An exact fit (the example of cnc.h): a = 1, b = 3. */
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 2), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int k = 0; k < 10; ++k) {
    assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
    assert_int_equal(cncCoefficient(0, 1.0), CNC_OK);
    assert_int_equal(cncCoefficient(1, (double)k), CNC_OK);
    assert_int_equal(cncRightHandSide(1.0 + 3.0 * k), CNC_OK);
    assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(cncGetVariable(0, &a), CNC_OK);
  assert_int_equal(cncGetVariable(1, &b), CNC_OK);
  assert_true(fabs(a - 1.0) < 1e-9 && fabs(b - 3.0) < 1e-9);
  cncDeleteContext(c);
}

/* ---- Several right-hand sides ---------------------------------------------------------------- */
static void test_multiple_rhs(void** unused) {
  (void)unused;
  ts_csr a = ts_random_spd(150, 5, 21);
  const size_t n = (size_t)a.n;
  double* b = random_vector(3 * n, 22);
  for (size_t i = 0; i < n; ++i) b[n + i] *= 1000.0; /* different scales per system */
  double* x = (double*)calloc(3 * n, sizeof(double));
  double* x1 = (double*)calloc(n, sizeof(double));
  opts o = {0};
  o.threshold = 1e-12;
  o.nsys = 3;
  stats s3 = solve_with(&a, b, &o, x);
  assert_int_equal(s3.reason, CNC_REASON_CONVERGED);
  o.nsys = 1;
  CNCint max_single = 0;
  for (int k = 0; k < 3; ++k) {
    stats s1 = solve_with(&a, b + (size_t)k * n, &o, x1);
    assert_int_equal(s1.reason, CNC_REASON_CONVERGED);
    if (s1.iters > max_single) max_single = s1.iters;
    double d = ts_rel_diff(n, x + (size_t)k * n, x1);
    if (!(d < 1e-9)) fail_msg("system %d: multi vs single differ by %.3e", k, d);
    double* ref = dense_reference(&a, b + (size_t)k * n);
    d = ts_rel_diff(n, x + (size_t)k * n, ref);
    if (!(d < 1e-9)) fail_msg("system %d: multi vs cholesky differ by %.3e", k, d);
    free(ref);
  }
  assert_int_equal(s3.iters, max_single); /* max over systems */
  free(b);
  free(x);
  free(x1);
  ts_csr_free(&a);
}

/* Several systems with a locked variable whose value differs per system; one system with b = 0. */
static void test_multiple_rhs_locked(void** unused) {
  (void)unused;
  ts_csr a = ts_random_spd(30, 3, 31);
  const int n = a.n;
  double* b = random_vector(3 * (size_t)n, 32);
  for (int i = 0; i < n; ++i) b[2 * n + i] = 0.0;
  int locked[30] = {0};
  locked[3] = 1;
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_SYSTEMS, 3), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  for (int k = 0; k < 3; ++k) assert_int_equal(cncMultiSetVariable(3, k, 1.0 + k), CNC_OK);
  assert_int_equal(cncLockVariable(3), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int i = 0; i < n; ++i) {
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      assert_int_equal(cncAddIJCoefficient(i, a.col[k], a.val[k]), CNC_OK);
    for (int k = 0; k < 3; ++k)
      assert_int_equal(cncMultiAddIRightHandSide(i, k, b[k * n + i]), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  double x[3 * 30];
  assert_int_equal(ts_read_x(n, 3, x), CNC_OK);
  for (int k = 0; k < 3; ++k) {
    double xl[30] = {0}, x_ref[30];
    xl[3] = 1.0 + k;
    reduced_reference(&a, b + k * n, locked, xl, x_ref);
    double d = ts_rel_diff((size_t)n, x + k * n, x_ref);
    if (!(d < 1e-9)) fail_msg("system %d with locked x3=%g: error %.3e", k, 1.0 + k, d);
  }
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
  cncDeleteContext(c);
  free(b);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_locked_variables),
      cmocka_unit_test(test_least_squares),
      cmocka_unit_test(test_multiple_rhs),
      cmocka_unit_test(test_multiple_rhs_locked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
