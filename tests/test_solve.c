/* Solutions of cncSolve checked against independent references computed here: a dense Cholesky
 * solve on small generated SPD systems, the residual ||b - A x|| / ||b|| recomputed by the test on
 * large ones and on the SPD matrices of shared/data/matrices, closed-form least-squares fits, and
 * reduced dense solves for locked variables. Also the numerical outcomes (indefinite, singular,
 * b = 0, zero diagonals, max iterations) and the callbacks.
 *
 * `test_solve` runs the generated cases; `test_solve matrices` runs the real matrices (and exits
 * 77 when the data folder is absent). */
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
#include "test_support.h"

/* ---- Helpers --------------------------------------------------------------------------------- */
typedef struct {
  CNCenum precision; /* 0: default */
  CNCenum format;    /* 0: default */
  double threshold;  /* 0: default */
  int max_iter;      /* 0: default */
  int nsys;          /* 0: 1 */
} opts;

typedef struct {
  CNCint reason, iters, format_used, backend_used, zero_diag;
  double error, true_error;
  CNCint64 nnz;
} stats;

static stats read_stats(void) {
  stats s;
  memset(&s, 0, sizeof s);
  assert_int_equal(cncGetIntegerv(CNC_REASON, &s.reason), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &s.iters), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_FORMAT_USED, &s.format_used), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &s.backend_used), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_ZERO_DIAGONALS, &s.zero_diag), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_ERROR, &s.error), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_TRUE_ERROR, &s.true_error), CNC_OK);
  assert_int_equal(cncGetInteger64v(CNC_NNZ, &s.nnz), CNC_OK);
  return s;
}

static void apply_opts(const opts* o) {
  if (o->precision) assert_int_equal(cncSolverParameteri(CNC_PRECISION, o->precision), CNC_OK);
  if (o->format) assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, o->format), CNC_OK);
  if (o->threshold > 0) assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, o->threshold), CNC_OK);
  if (o->max_iter > 0)
    assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, o->max_iter), CNC_OK);
}

/* Solves A x = b (nsys right-hand sides) in a fresh context; fills x and returns the stats. */
static stats solve_with(const ts_csr* a, const double* b, const opts* o, double* x) {
  int nsys = o->nsys > 0 ? o->nsys : 1;
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  apply_opts(o);
  int st = ts_assemble_solve(a, b, nsys, x);
  if (st != CNC_OK) fail_msg("solve failed: %s: %s", cncStatusString(st), cncGetErrorMessage());
  stats s = read_stats();
  cncDeleteContext(c);
  return s;
}

static double* random_vector(size_t n, uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  double* v = (double*)malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; ++i) v[i] = ts_rng_uniform(&r) * 2.0 - 1.0;
  return v;
}

static double* dense_reference(const ts_csr* a, const double* b) {
  double* d = ts_csr_to_dense(a);
  double* x = (double*)malloc(sizeof(double) * (size_t)a->n);
  assert_int_equal(ts_cholesky_solve(a->n, d, b, x), 0);
  free(d);
  return x;
}

/* The statistics must agree with the test's own residual, and CONVERGED must mean what cnc.h says
 * (recursive and true residual below the threshold). */
static void check_reported_residual(const ts_csr* a, const double* x, const double* b,
                                    const stats* s, double threshold, const char* what) {
  double mine = ts_rel_residual(a, x, b);
  if (!(fabs(mine - s->true_error) <= 0.05 * mine + 1e-12))
    fail_msg("%s: CNC_TRUE_ERROR %.3e but the test computes %.3e", what, s->true_error, mine);
  if (s->reason == CNC_REASON_CONVERGED) {
    if (!(s->error <= threshold * 1.0000001))
      fail_msg("%s: CONVERGED with CNC_ERROR %.3e > threshold %.3e", what, s->error, threshold);
    if (!(mine <= threshold * 1.05))
      fail_msg("%s: CONVERGED but true residual %.3e > threshold %.3e", what, mine, threshold);
  }
}

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

/* ---- Numerical outcomes ---------------------------------------------------------------------- */
static stats solve_small_dense(int n, const double* dense, const double* b, CNCenum precond,
                               int max_iter, double* x) {
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
  if (precond) assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, precond), CNC_OK);
  if (max_iter) assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, max_iter), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      if (dense[i * n + j] != 0) assert_int_equal(cncAddIJCoefficient(i, j, dense[i * n + j]), 0);
    assert_int_equal(cncAddIRightHandSide(i, b[i]), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK); /* numerical outcomes are not errors */
  assert_int_equal(ts_read_x(n, 1, x), CNC_OK);
  stats s = read_stats();
  assert_int_equal(cncGetError(), CNC_OK);
  cncDeleteContext(c);
  return s;
}

static void test_indefinite(void** unused) {
  (void)unused;
  /* [[1,2],[2,1]] has eigenvalues 3 and -1; with b = (1,-1), the first pᵀAp is -2. */
  double a[4] = {1, 2, 2, 1}, b[2] = {1, -1}, x[2];
  stats s = solve_small_dense(2, a, b, 0, 0, x);
  assert_int_equal(s.reason, CNC_REASON_INDEFINITE_MATRIX);
  s = solve_small_dense(2, a, b, CNC_PRECOND_NONE, 0, x);
  assert_int_equal(s.reason, CNC_REASON_INDEFINITE_MATRIX);
  /* A negative definite matrix (negative diagonal): Jacobi gives rᵀz < 0 at once. */
  ts_csr l = ts_laplacian_2d(6, 6);
  double* d = ts_csr_to_dense(&l);
  for (int i = 0; i < 36 * 36; ++i) d[i] = -d[i];
  double bb[36], xx[36];
  for (int i = 0; i < 36; ++i) bb[i] = 1.0 + i % 3;
  s = solve_small_dense(36, d, bb, 0, 0, xx);
  assert_int_equal(s.reason, CNC_REASON_INDEFINITE_PRECOND);
  assert_int_equal(s.iters, 0);
  /* Without preconditioner, the same matrix fails on pᵀAp instead. */
  s = solve_small_dense(36, d, bb, CNC_PRECOND_NONE, 0, xx);
  assert_int_equal(s.reason, CNC_REASON_INDEFINITE_MATRIX);
  free(d);
  ts_csr_free(&l);
}

static void test_singular_inconsistent(void** unused) {
  (void)unused;
  /* 1D Neumann Laplacian (singular, null space = constants) with b = e_0: no solution. */
  enum { M = 30 };
  double a[M * M] = {0}, b[M] = {0}, x[M];
  for (int i = 0; i < M; ++i) {
    a[i * M + i] = (i == 0 || i == M - 1) ? 1.0 : 2.0;
    if (i > 0) a[i * M + i - 1] = -1.0;
    if (i + 1 < M) a[i * M + i + 1] = -1.0;
  }
  b[0] = 1.0;
  stats s = solve_small_dense(M, a, b, 0, 300, x);
  if (s.reason == CNC_REASON_CONVERGED || s.reason == CNC_REASON_NONE ||
      s.reason == CNC_REASON_STOPPED)
    fail_msg("singular inconsistent system: reason 0x%x", s.reason);
  assert_true(s.iters <= 300);
  print_message("singular: reason 0x%x after %d iterations\n", s.reason, s.iters);
}

static void test_zero_rhs(void** unused) {
  (void)unused;
  ts_csr a = ts_laplacian_2d(8, 8);
  /* Initial guess 7 everywhere, b = 0. */
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, a.n), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  for (int i = 0; i < a.n; ++i) assert_int_equal(cncSetVariable(i, 7.0), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int i = 0; i < a.n; ++i)
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      assert_int_equal(cncAddIJCoefficient(i, a.col[k], a.val[k]), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  for (int i = 0; i < a.n; ++i) {
    double v = -1;
    assert_int_equal(cncGetVariable(i, &v), CNC_OK);
    assert_true(v == 0.0);
  }
  stats s = read_stats();
  assert_int_equal(s.iters, 0);
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  /* Two systems through cncSolveCSR, the first with b = 0, both from x0 = 7: the first gives
   * x = 0, the second its own answer (dense Cholesky). */
  const size_t n = (size_t)a.n;
  CNCuint* ci = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)a.nnz);
  for (int64_t k = 0; k < a.nnz; ++k) ci[k] = (CNCuint)a.col[k];
  double* b2 = (double*)calloc(2 * n, sizeof(double));
  double* x2 = (double*)malloc(sizeof(double) * 2 * n);
  double* rhs = random_vector(n, 61);
  memcpy(b2 + n, rhs, sizeof(double) * n);
  for (size_t i = 0; i < 2 * n; ++i) x2[i] = 7.0;
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
  assert_int_equal(cncSolveCSR((CNCuint)n, a.row_ptr, ci, a.val, 0, 2, b2, x2), CNC_OK);
  for (size_t i = 0; i < n; ++i) assert_true(x2[i] == 0.0);
  double* ref = dense_reference(&a, rhs);
  assert_true(ts_rel_diff(n, x2 + n, ref) < 1e-9);
  s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  free(ref);
  free(rhs);
  free(x2);
  free(b2);
  free(ci);
  cncDeleteContext(c);
  ts_csr_free(&a);
}

static void test_zero_diagonals(void** unused) {
  (void)unused;
  /* Diagonal 2 except: row 0 has no diagonal entry, row 1 an explicit 0 (1 - 1). The system is
   * consistent (b = 0 on those rows). */
  enum { M = 8 };
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, M), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncAddIJCoefficient(1, 1, 1.0), CNC_OK);
  assert_int_equal(cncAddIJCoefficient(1, 1, -1.0), CNC_OK);
  for (int i = 2; i < M; ++i) {
    assert_int_equal(cncAddIJCoefficient(i, i, 2.0), CNC_OK);
    assert_int_equal(cncAddIRightHandSide(i, 1.0 + i), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  stats s = read_stats();
  assert_int_equal(s.zero_diag, 2);
  for (int i = 2; i < M; ++i) {
    double v;
    assert_int_equal(cncGetVariable(i, &v), CNC_OK);
    assert_true(fabs(v - (1.0 + i) / 2.0) < 1e-9);
  }
  /* A regular matrix reports none. */
  ts_csr a = ts_laplacian_2d(5, 5);
  double* b = random_vector((size_t)a.n, 5);
  double x[25];
  opts o = {0};
  s = solve_with(&a, b, &o, x);
  assert_int_equal(s.zero_diag, 0);
  free(b);
  ts_csr_free(&a);
  cncDeleteContext(c);
}

static void test_max_iterations(void** unused) {
  (void)unused;
  ts_csr a = ts_poisson_3d(20);
  double* b = random_vector((size_t)a.n, 61);
  double* x = (double*)calloc((size_t)a.n, sizeof(double));
  opts o = {0};
  o.threshold = 1e-14;
  o.max_iter = 7;
  stats s = solve_with(&a, b, &o, x);
  assert_int_equal(s.reason, CNC_REASON_MAX_ITERATIONS);
  if (s.backend_used == CNC_BACKEND_CPU)
    assert_int_equal(s.iters, 7);
  else
    assert_true(s.iters <= 7 && s.iters > 0);
  /* The partial answer is reported honestly. */
  check_reported_residual(&a, x, b, &s, 1e-14, "max iterations");
  assert_true(s.true_error > 1e-6);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* ---- Callbacks ------------------------------------------------------------------------------- */
typedef struct {
  int calls, last_iter, stop_at, increasing;
  double last_res;
} progress_log;

static int on_progress(CNCint iteration, double rel, void* user) {
  progress_log* p = (progress_log*)user;
  if (p->calls > 0 && iteration <= p->last_iter) p->increasing = 0;
  if (!isfinite(rel) || rel < 0) p->increasing = 0;
  p->calls++;
  p->last_iter = iteration;
  p->last_res = rel;
  return p->stop_at > 0 && iteration >= p->stop_at;
}

static void test_progress_callback(void** unused) {
  (void)unused;
  ts_csr a = ts_poisson_3d(12);
  double* b = random_vector((size_t)a.n, 71);
  double* x = (double*)calloc((size_t)a.n, sizeof(double));
  for (int stop = 0; stop < 2; ++stop) {
    progress_log log = {0, -1, stop ? 5 : 0, 1, 0};
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
    assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
    assert_int_equal(cncSetProgressCallback(on_progress, &log), CNC_OK);
    assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
    stats s = read_stats();
    assert_true(log.calls > 0);
    assert_true(log.increasing);
    if (stop) {
      assert_int_equal(s.reason, CNC_REASON_STOPPED);
      assert_int_equal(log.last_iter, 5);
      assert_int_equal(s.iters, 5);
    } else {
      assert_int_equal(s.reason, CNC_REASON_CONVERGED);
      assert_true(log.last_iter <= s.iters);
      assert_true(log.calls >= s.iters); /* every iteration on the CPU */
    }
    /* Removing the callback: no further calls. */
    assert_int_equal(cncSetProgressCallback(NULL, NULL), CNC_OK);
    int calls = log.calls;
    assert_int_equal(cncSolve(), CNC_OK);
    assert_int_equal(log.calls, calls);
    cncDeleteContext(c);
  }
  free(b);
  free(x);
  ts_csr_free(&a);
}

typedef struct {
  int info, total, bad;
} log_count;

static void on_log(int level, const char* message, void* user) {
  log_count* l = (log_count*)user;
  l->total++;
  if (level == CNC_LOG_INFO) l->info++;
  if (!message || !*message || level < CNC_LOG_ERROR || level > CNC_LOG_INFO) l->bad++;
}

static void test_log_callback(void** unused) {
  (void)unused;
  ts_csr a = ts_laplacian_2d(10, 10);
  double* b = random_vector((size_t)a.n, 81);
  double x[100];
  log_count lc = {0, 0, 0};
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSetLogCallback(on_log, &lc), CNC_OK);
  assert_int_equal(cncEnable(CNC_VERBOSE), CNC_OK);
  CNCboolean on = CNC_FALSE;
  assert_int_equal(cncIsEnabled(CNC_VERBOSE, &on), CNC_OK);
  assert_int_equal(on, CNC_TRUE);
  assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
  assert_true(lc.info > 0);
  assert_int_equal(lc.bad, 0);
  assert_true(ts_rel_residual(&a, x, b) < 1e-5);
  /* Removed: silence. */
  assert_int_equal(cncSetLogCallback(NULL, NULL), CNC_OK);
  assert_int_equal(cncDisable(CNC_VERBOSE), CNC_OK);
  int total = lc.total;
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(lc.total, total);
  cncDeleteContext(c);
  free(b);
  ts_csr_free(&a);
}

/* ---- Repeated solves ------------------------------------------------------------------------- */
static void test_repeated_solves(void** unused) {
  (void)unused;
  ts_csr a = ts_poisson_3d(10);
  const size_t n = (size_t)a.n;
  double* b1 = random_vector(n, 91);
  double* b2 = random_vector(n, 92);
  double* x = (double*)calloc(n, sizeof(double));
  double* x2 = (double*)calloc(n, sizeof(double));
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(ts_assemble_solve(&a, b1, 1, x), CNC_OK);
  stats s1 = read_stats();
  assert_int_equal(s1.reason, CNC_REASON_CONVERGED);
  assert_true(s1.iters > 5);
  assert_true(ts_rel_residual(&a, x, b1) < 2e-10);
  /* Solving again starts from the current variables (the solution): nothing left to do. */
  assert_int_equal(cncSolve(), CNC_OK);
  stats s2 = read_stats();
  assert_int_equal(s2.reason, CNC_REASON_CONVERGED);
  assert_true(s2.iters <= 1);
  assert_int_equal(ts_read_x(a.n, 1, x2), CNC_OK);
  assert_true(ts_rel_diff(n, x2, x) < 1e-9);
  /* A new initial guess: the same answer again. */
  for (size_t i = 0; i < n; ++i) assert_int_equal(cncSetVariable((CNCuint)i, 0.0), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(ts_read_x(a.n, 1, x2), CNC_OK);
  assert_true(ts_rel_residual(&a, x2, b1) < 2e-10);
  /* cncSolveCSR of another system in between leaves the assembled one alone. */
  {
    CNCint64 rp[3] = {0, 1, 2};
    CNCuint ci[2] = {0, 1};
    double v[2] = {2, 4}, bb[2] = {2, 2}, xx[2] = {0, 0};
    assert_int_equal(cncSolveCSR(2, rp, ci, v, 0, 1, bb, xx), CNC_OK);
    assert_true(fabs(xx[0] - 1.0) < 1e-9 && fabs(xx[1] - 0.5) < 1e-9);
    CNCint st = 0;
    assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
    assert_int_equal(st, CNC_STATE_SOLVED);
  }
  for (size_t i = 0; i < n; ++i) assert_int_equal(cncSetVariable((CNCuint)i, 0.0), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(ts_read_x(a.n, 1, x2), CNC_OK);
  assert_true(ts_rel_residual(&a, x2, b1) < 2e-10);
  /* Same matrix, a new right-hand side: Begin(MATRIX) from SOLVED. */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int i = 0; i < a.n; ++i) {
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      assert_int_equal(cncAddIJCoefficient(i, a.col[k], a.val[k]), CNC_OK);
    assert_int_equal(cncAddIRightHandSide(i, b2[i]), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(ts_read_x(a.n, 1, x2), CNC_OK);
  assert_true(ts_rel_residual(&a, x2, b2) < 2e-10);
  cncDeleteContext(c);
  free(b1);
  free(b2);
  free(x);
  free(x2);
  ts_csr_free(&a);
}

/* cncSolveCSR keeps the matrix it prepared while the arrays it is handed hold the same bytes
 * (wherever they lie): a new right-hand side reuses it; values or a pattern changed in place
 * (same pointers, same sizes) are seen and solved anew; CNC_KEEP_MATRIX off keeps nothing.
 * Every answer against dense Cholesky. */
static void count_reuse(int level, const char* message, void* user) {
  (void)level;
  if (strstr(message, "already holds this matrix")) ++*(int*)user;
}

/* A new current context (threshold 1e-12) that counts in *hits the solves that found the matrix
 * kept from the last one. */
static CNCcontext new_reuse_counting_context(int* hits) {
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
  assert_int_equal(cncSetLogCallback(count_reuse, hits), CNC_OK);
  assert_int_equal(cncEnable(CNC_VERBOSE), CNC_OK);
  return c;
}

/* Solves with cncSolveCSR and checks x against dense Cholesky of the arrays' current content,
 * the number of reuses so far, and that a reuse moved no matrix. */
static void solve_csr_check(const ts_csr* a, const CNCuint* ci, const double* b, int expect_hits,
                            const int* hits, const char* what) {
  const size_t n = (size_t)a->n;
  double* x = (double*)calloc(n, sizeof(double));
  const int before = *hits;
  assert_int_equal(cncSolveCSR((CNCuint)n, a->row_ptr, ci, a->val, 0, 1, b, x), CNC_OK);
  if (*hits != expect_hits) fail_msg("%s: %d reuses, expected %d", what, *hits, expect_hits);
  double* ref = dense_reference(a, b);
  const double d = ts_rel_diff(n, x, ref);
  if (!(d < 1e-9)) fail_msg("%s: |x - x_cholesky| = %.3e", what, d);
  double upload = -1;
  assert_int_equal(cncGetDoublev(CNC_UPLOAD_TIME, &upload), CNC_OK);
  if (*hits > before && upload != 0.0) fail_msg("%s: reused, but upload time %g", what, upload);
  free(ref);
  free(x);
}

static void test_solve_csr_reuse(void** unused) {
  (void)unused;
  ts_csr a = ts_random_spd(300, 4, 131);
  const size_t n = (size_t)a.n, nnz = (size_t)a.nnz;
  CNCuint* ci = (CNCuint*)malloc(sizeof(CNCuint) * nnz);
  for (size_t k = 0; k < nnz; ++k) ci[k] = (CNCuint)a.col[k];
  double* b1 = random_vector(n, 132);
  double* b2 = random_vector(n, 133);
  int hits = 0;
  CNCcontext c = new_reuse_counting_context(&hits);
  /* The first solve from copies, which are then overwritten: what is kept must not point at
   * the caller's arrays, and the same content at other addresses is still recognised. */
  ts_csr copy = a;
  copy.row_ptr = (int64_t*)malloc(sizeof(int64_t) * (n + 1));
  copy.val = (double*)malloc(sizeof(double) * nnz);
  CNCuint* ci2 = (CNCuint*)malloc(sizeof(CNCuint) * nnz);
  memcpy(copy.row_ptr, a.row_ptr, sizeof(int64_t) * (n + 1));
  memcpy(copy.val, a.val, sizeof(double) * nnz);
  memcpy(ci2, ci, sizeof(CNCuint) * nnz);
  solve_csr_check(&copy, ci2, b1, 0, &hits, "first solve");
  for (size_t k = 0; k < nnz; ++k) copy.val[k] = 1e300, ci2[k] = 0;
  for (size_t r = 0; r <= n; ++r) copy.row_ptr[r] = 0;
  free(copy.row_ptr);
  free(copy.val);
  free(ci2);
  solve_csr_check(&a, ci, b2, 1, &hits, "reused for a new b, other arrays");
  solve_csr_check(&a, ci, b1, 2, &hits, "reused again");
  /* Values changed in place. */
  for (size_t k = 0; k < nnz; ++k) a.val[k] *= 2.0;
  solve_csr_check(&a, ci, b1, 2, &hits, "values changed");
  /* The pattern changed in place (unknowns numbered backwards), same sizes. */
  int64_t* rp = (int64_t*)malloc(sizeof(int64_t) * (n + 1));
  CNCuint* cj = (CNCuint*)malloc(sizeof(CNCuint) * nnz);
  int32_t* cj32 = (int32_t*)malloc(sizeof(int32_t) * nnz);
  double* v = (double*)malloc(sizeof(double) * nnz);
  rp[0] = 0;
  for (size_t r = 0; r < n; ++r) { /* new row r is old row n-1-r, columns mirrored, reversed */
    const size_t o = n - 1 - r;
    int64_t t = rp[r];
    for (int64_t e = a.row_ptr[o + 1] - 1; e >= a.row_ptr[o]; --e, ++t) {
      cj[t] = (CNCuint)(n - 1 - (size_t)a.col[e]);
      cj32[t] = (int32_t)cj[t];
      v[t] = a.val[e];
    }
    rp[r + 1] = t;
  }
  int changed = 0;
  for (size_t r = 0; r <= n; ++r) changed |= rp[r] != a.row_ptr[r];
  assert_true(changed); /* the row lengths differ, not only the columns */
  memcpy(a.row_ptr, rp, sizeof(int64_t) * (n + 1));
  memcpy(ci, cj, sizeof(CNCuint) * nnz);
  memcpy(a.col, cj32, sizeof(int32_t) * nnz);
  memcpy(a.val, v, sizeof(double) * nnz);
  solve_csr_check(&a, ci, b1, 2, &hits, "pattern changed");
  solve_csr_check(&a, ci, b2, 3, &hits, "reused after the change");
  /* CNC_KEEP_MATRIX off: nothing kept, nothing reused; back on: kept again from the next call. */
  CNCboolean on = CNC_FALSE;
  assert_int_equal(cncIsEnabled(CNC_KEEP_MATRIX, &on), CNC_OK);
  assert_int_equal(on, CNC_TRUE);
  assert_int_equal(cncDisable(CNC_KEEP_MATRIX), CNC_OK);
  assert_int_equal(cncIsEnabled(CNC_KEEP_MATRIX, &on), CNC_OK);
  assert_int_equal(on, CNC_FALSE);
  solve_csr_check(&a, ci, b1, 3, &hits, "not kept (1)");
  solve_csr_check(&a, ci, b2, 3, &hits, "not kept (2)");
  assert_int_equal(cncEnable(CNC_KEEP_MATRIX), CNC_OK);
  solve_csr_check(&a, ci, b1, 3, &hits, "kept again");
  solve_csr_check(&a, ci, b2, 4, &hits, "reused again");
  cncDeleteContext(c);
  free(rp);
  free(cj);
  free(cj32);
  free(v);
  free(ci);
  free(b1);
  free(b2);
  ts_csr_free(&a);
}

/* cncSolve keeps the assembled matrix for the next solve unless CNC_KEEP_MATRIX is off; the
 * answers (dense Cholesky) are the same either way. */
static void test_keep_matrix_assembled(void** unused) {
  (void)unused;
  ts_csr a = ts_random_spd(150, 4, 141);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 142);
  double* x = (double*)calloc(n, sizeof(double));
  double* ref = dense_reference(&a, b);
  int hits = 0;
  CNCcontext c = new_reuse_counting_context(&hits);
  assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
  assert_true(ts_rel_diff(n, x, ref) < 1e-9);
  assert_int_equal(hits, 0);
  assert_int_equal(cncSolve(), CNC_OK); /* kept: the second solve finds it */
  assert_int_equal(hits, 1);
  assert_int_equal(cncDisable(CNC_KEEP_MATRIX), CNC_OK);
  for (int round = 0; round < 2; ++round) { /* freed at once, and after every solve */
    assert_int_equal(cncSolve(), CNC_OK);
    assert_int_equal(hits, 1);
  }
  for (size_t i = 0; i < n; ++i) assert_int_equal(cncGetVariable((CNCuint)i, &x[i]), CNC_OK);
  assert_true(ts_rel_diff(n, x, ref) < 1e-9);
  cncDeleteContext(c);
  free(ref);
  free(x);
  free(b);
  ts_csr_free(&a);
}

/* cncSolveCSR gives the same answer as assembling the same matrix. */
static void test_solve_csr_matches_assembly(void** unused) {
  (void)unused;
  ts_csr a = ts_random_spd(200, 4, 101);
  const size_t n = (size_t)a.n;
  double* b = random_vector(2 * n, 102);
  double* xa = (double*)calloc(2 * n, sizeof(double));
  double* xc = (double*)calloc(2 * n, sizeof(double));
  opts o = {0};
  o.threshold = 1e-12;
  o.nsys = 2;
  solve_with(&a, b, &o, xa);
  CNCuint* ci = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)a.nnz);
  for (int64_t k = 0; k < a.nnz; ++k) ci[k] = (CNCuint)a.col[k];
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
  assert_int_equal(cncSolveCSR((CNCuint)n, a.row_ptr, ci, a.val, 0, 2, b, xc), CNC_OK);
  stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_true(ts_rel_diff(2 * n, xc, xa) < 1e-9);
  assert_true(ts_rel_residual(&a, xc + n, b + n) < 1e-11);
  CNCint st = 0;
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_INITIAL); /* the context's own system is untouched */
  cncDeleteContext(c);
  free(ci);
  free(b);
  free(xa);
  free(xc);
  ts_csr_free(&a);
}

static void test_statistics(void** unused) {
  (void)unused;
  ts_csr a = ts_poisson_3d(16);
  double* b = random_vector((size_t)a.n, 111);
  double* x = (double*)calloc((size_t)a.n, sizeof(double));
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, CNC_FORMAT_CSR), CNC_OK);
  assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
  static const CNCenum times[] = {CNC_ELAPSED_TIME,     CNC_ASSEMBLY_TIME, CNC_CONVERSION_TIME,
                                  CNC_UPLOAD_TIME,      CNC_SOLVE_TIME,    CNC_GFLOPS,
                                  CNC_GBYTES_PER_SECOND};
  for (size_t i = 0; i < sizeof times / sizeof times[0]; ++i) {
    double v = -1;
    assert_int_equal(cncGetDoublev(times[i], &v), CNC_OK);
    assert_true(v >= 0 && isfinite(v));
  }
  double el = 0, so = 0;
  cncGetDoublev(CNC_ELAPSED_TIME, &el);
  cncGetDoublev(CNC_SOLVE_TIME, &so);
  assert_true(el > 0 && so <= el);
  CNCint64 bytes = 0, nnz = 0;
  assert_int_equal(cncGetInteger64v(CNC_BYTES_PER_ITERATION, &bytes), CNC_OK);
  /* At least the CSR matrix once: 8-byte values and 4-byte column indices. */
  assert_true(bytes >= a.nnz * 12);
  assert_int_equal(cncGetInteger64v(CNC_NNZ, &nnz), CNC_OK);
  assert_true(nnz == a.nnz);
  const char* s = NULL;
  assert_int_equal(cncGetString(CNC_BACKEND_NAME, &s), CNC_OK);
  assert_true(!strcmp(s, "cpu") || !strcmp(s, "opencl") || !strcmp(s, "cuda"));
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &used), CNC_OK);
  assert_int_equal(used, !strcmp(s, "cpu")      ? CNC_BACKEND_CPU
                         : !strcmp(s, "opencl") ? CNC_BACKEND_OPENCL
                                                : CNC_BACKEND_CUDA);
  assert_int_equal(cncGetString(CNC_DEVICE_NAME, &s), CNC_OK);
  assert_true(strlen(s) > 0);
  assert_int_equal(cncGetString(CNC_REASON_NAME, &s), CNC_OK);
  assert_string_equal(s, "converged");
  assert_int_equal(cncGetString(CNC_CPU_SIMD, &s), CNC_OK);
  assert_true(strlen(s) > 0);
  CNCint st = 0;
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SOLVED);
  double tmin = -1, tmax = -1;
  assert_int_equal(cncGetDoublev(CNC_TRUE_ERROR_MIN, &tmin), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_TRUE_ERROR, &tmax), CNC_OK);
  assert_true(tmin == tmax); /* one system */
  cncDeleteContext(c);
  free(b);
  free(x);
  ts_csr_free(&a);
}

/* ---- Nonsymmetric solvers (BiCGSTAB, GMRES) and SSOR ------------------------------------------
 */
/* Dense Gaussian elimination with partial pivoting (row-major a, modified copy). */
static void dense_lu_solve(int n, const double* a_in, const double* b, double* x) {
  double* a = (double*)malloc(sizeof(double) * (size_t)n * (size_t)n);
  double* y = (double*)malloc(sizeof(double) * (size_t)n);
  memcpy(a, a_in, sizeof(double) * (size_t)n * (size_t)n);
  memcpy(y, b, sizeof(double) * (size_t)n);
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (fabs(a[r * n + c]) > fabs(a[piv * n + c])) piv = r;
    if (piv != c) {
      for (int k = 0; k < n; ++k) {
        double t = a[c * n + k];
        a[c * n + k] = a[piv * n + k], a[piv * n + k] = t;
      }
      double t = y[c];
      y[c] = y[piv], y[piv] = t;
    }
    for (int r = c + 1; r < n; ++r) {
      double f = a[r * n + c] / a[c * n + c];
      for (int k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      y[r] -= f * y[c];
    }
  }
  for (int r = n - 1; r >= 0; --r) {
    double v = y[r];
    for (int k = r + 1; k < n; ++k) v -= a[r * n + k] * x[k];
    x[r] = v / a[r * n + r];
  }
  free(a);
  free(y);
}

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
  dense_lu_solve(n, d, b, x_ref);
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

/* ---- Real SPD matrices ----------------------------------------------------------------------- */
static int run_real_matrices(void) {
  const char* dir = ts_data_dir();
  char names[64][128];
  double cond[64];
  int count = dir ? ts_list_spd_matrices(names, cond, 64) : 0;
  if (!dir || count == 0) {
    printf("SKIP: shared/data/matrices (SOURCES.txt with 'likely SPD' entries) absent%s%s\n",
           dir ? " under " : "", dir ? dir : "");
    return TS_SKIP;
  }
  int failures = 0;
  for (int m = 0; m < count; ++m) {
    char path[9000], err[256];
    snprintf(path, sizeof path, "%s/matrices/%s", dir, names[m]);
    ts_csr a;
    if (ts_read_mtx(path, &a, err, sizeof err) != 0) {
      printf("FAIL %s: %s\n", names[m], err);
      failures++;
      continue;
    }
    const size_t n = (size_t)a.n;
    double* xs = random_vector(n, 3);
    double* b = (double*)malloc(sizeof(double) * n);
    double* x = (double*)calloc(n, sizeof(double));
    ts_csr_spmv(&a, xs, b);
    const int well = cond[m] > 0 && cond[m] <= 1e8;
    const double thr = 1e-8;
    CNCcontext c = cncNewContext();
    cncMakeCurrent(c);
    cncSolverParameterd(CNC_THRESHOLD, thr);
    int max_it = well ? (int)(20 * n < 20000 ? 20 * n : 20000) : 2000;
    if (max_it < 1000) max_it = 1000;
    cncSolverParameteri(CNC_MAX_ITERATIONS, max_it);
    int st = ts_assemble_solve(&a, b, 1, x);
    CNCint reason = 0, iters = 0;
    double true_err = -1;
    cncGetIntegerv(CNC_REASON, &reason);
    cncGetIntegerv(CNC_USED_ITERATIONS, &iters);
    cncGetDoublev(CNC_TRUE_ERROR, &true_err);
    double mine = ts_rel_residual(&a, x, b);
    const char* verdict = "ok";
    if (st != CNC_OK)
      verdict = "FAIL (status)";
    else if (!(fabs(mine - true_err) <= 0.05 * mine + 1e-12))
      verdict = "FAIL (reported true residual differs from the test's)";
    else if (reason == CNC_REASON_CONVERGED && !(mine <= thr * 1.05))
      verdict = "FAIL (CONVERGED but the true residual is above the threshold)";
    else if (well && reason != CNC_REASON_CONVERGED && reason != CNC_REASON_STAGNATED)
      verdict = "FAIL (did not converge)";
    else if (well && !(mine <= 1e-6))
      verdict = "FAIL (residual too large)";
    else if (reason == CNC_REASON_NOT_FINITE || reason == CNC_REASON_NONE)
      verdict = "FAIL (reason)";
    if (strncmp(verdict, "FAIL", 4) == 0) failures++;
    printf("%-28s n=%6d cond~%8.1e iters=%6d reason=0x%x residual=%.2e reported=%.2e %s%s\n",
           names[m], a.n, cond[m], iters, reason, mine, true_err, verdict,
           st != CNC_OK ? cncGetErrorMessage() : "");
    cncDeleteContext(c);
    free(xs);
    free(b);
    free(x);
    ts_csr_free(&a);
  }
  printf("%d matrices, %d failures\n", count, failures);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "matrices")) return run_real_matrices();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_spd_vs_cholesky),
      cmocka_unit_test(test_poisson_3d_residual),
      cmocka_unit_test(test_locked_variables),
      cmocka_unit_test(test_least_squares),
      cmocka_unit_test(test_multiple_rhs),
      cmocka_unit_test(test_multiple_rhs_locked),
      cmocka_unit_test(test_precisions),
      cmocka_unit_test(test_forced_formats),
      cmocka_unit_test(test_indefinite),
      cmocka_unit_test(test_singular_inconsistent),
      cmocka_unit_test(test_zero_rhs),
      cmocka_unit_test(test_zero_diagonals),
      cmocka_unit_test(test_max_iterations),
      cmocka_unit_test(test_progress_callback),
      cmocka_unit_test(test_log_callback),
      cmocka_unit_test(test_repeated_solves),
      cmocka_unit_test(test_solve_csr_matches_assembly),
      cmocka_unit_test(test_solve_csr_reuse),
      cmocka_unit_test(test_keep_matrix_assembled),
      cmocka_unit_test(test_statistics),
      cmocka_unit_test(test_nonsymmetric_solvers),
      cmocka_unit_test(test_ssor_accepted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
