/* The eigen solver (cncEigenSolveCSR, ARPACK) against references the test computes itself: the
 * closed-form spectra of the 1D and 2D Dirichlet Laplacians (lambda_j = 2 - 2 cos(j pi/(n+1)),
 * sums of two for 2D), and for a generalized problem with a diagonal mass matrix the residual
 * ||K v - lambda M v|| and M-orthonormality computed here, two ARPACK modes agreeing. Also the
 * refusals (nothing written) and, run with the argument "unavailable" (CTest sets
 * CNC_ARPACK_LIBRARY to a missing file), a clean refusal without ARPACK. */
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

#define PI 3.14159265358979323846

static CNCstatus eigen(const ts_csr* k, const ts_csr* m, CNCuint nev, CNCenum which, double sigma,
                       double* w, double* v) {
  return cncEigenSolveCSR((CNCuint)k->n, k->row_ptr, (const CNCuint*)k->col, k->val,
                          m ? m->row_ptr : NULL, m ? (const CNCuint*)m->col : NULL,
                          m ? m->val : NULL, 0, nev, which, sigma, w, v);
}

/* The 1D Dirichlet Laplacian tridiag(-1, 2, -1). */
static ts_csr laplacian_1d(int32_t n) {
  int32_t* r = (int32_t*)malloc(sizeof(int32_t) * 3 * (size_t)n);
  int32_t* c = (int32_t*)malloc(sizeof(int32_t) * 3 * (size_t)n);
  double* v = (double*)malloc(sizeof(double) * 3 * (size_t)n);
  int64_t e = 0;
  for (int32_t i = 0; i < n; ++i) {
    r[e] = i, c[e] = i, v[e++] = 2.0;
    if (i > 0) r[e] = i, c[e] = i - 1, v[e++] = -1.0;
    if (i + 1 < n) r[e] = i, c[e] = i + 1, v[e++] = -1.0;
  }
  ts_csr a = ts_csr_from_coo(n, e, r, c, v);
  free(r), free(c), free(v);
  return a;
}

static ts_csr diagonal(int32_t n, const double* d) {
  int32_t* r = (int32_t*)malloc(sizeof(int32_t) * (size_t)n);
  for (int32_t i = 0; i < n; ++i) r[i] = i;
  ts_csr a = ts_csr_from_coo(n, n, r, r, d);
  free(r);
  return a;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* max_i ||K v_i - w_i M v_i|| and max |V' M V - I| (M NULL: identity). */
static void check_pairs(const ts_csr* k, const ts_csr* m, int nev, const double* w, const double* v,
                        double residual_bound) {
  const size_t n = (size_t)k->n;
  double* kv = (double*)malloc(sizeof(double) * n);
  double* mv = (double*)malloc(sizeof(double) * n);
  for (int i = 0; i < nev; ++i) {
    const double* vi = v + (size_t)i * n;
    ts_csr_spmv(k, vi, kv);
    if (m)
      ts_csr_spmv(m, vi, mv);
    else
      memcpy(mv, vi, sizeof(double) * n);
    double r2 = 0;
    for (size_t t = 0; t < n; ++t) r2 += (kv[t] - w[i] * mv[t]) * (kv[t] - w[i] * mv[t]);
    assert_true(sqrt(r2) <= residual_bound);
    if (i > 0) assert_true(w[i - 1] <= w[i]); /* ascending */
    for (int j = 0; j < nev; ++j) {
      const double* vj = v + (size_t)j * n;
      double d = 0;
      for (size_t t = 0; t < n; ++t) d += vj[t] * mv[t];
      assert_true(fabs(d - (i == j ? 1.0 : 0.0)) < 1e-10);
    }
  }
  free(kv), free(mv);
}

static double reported_residual(void) {
  double r = -1;
  cncGetDoublev(CNC_TRUE_ERROR, &r);
  return r;
}

static CNCint reason(void) {
  CNCint r = 0;
  cncGetIntegerv(CNC_REASON, &r);
  return r;
}

/* ---- Closed forms ---------------------------------------------------------------------------- */
/* Shift-invert and a mass matrix need a factorization: CHOLMOD (a positive definite K - sigma M,
 * or M) or SuperLU (any). Where this machine has neither, the solve must be refused with
 * CNC_ERR_UNSUPPORTED, nothing written (checked), and what needs it is skipped. */
static int can_factor(int indefinite) {
  return cncDirectSolverAvailable(CNC_SUPERLU) ||
         (!indefinite && cncDirectSolverAvailable(CNC_CHOLMOD));
}

static void refused_without_factor(const ts_csr* k, const ts_csr* m, CNCenum which, double sigma) {
  double w[2] = {-7.0, -7.0};
  double* v = (double*)malloc(sizeof(double) * 2 * (size_t)k->n);
  assert_non_null(v);
  for (int32_t i = 0; i < 2 * k->n; ++i) v[i] = -7.0;
  assert_int_equal(eigen(k, m, 2, which, sigma, w, v), CNC_ERR_UNSUPPORTED);
  assert_true(w[0] == -7.0 && w[1] == -7.0 && v[0] == -7.0);
  cncClearError();
  free(v);
  print_message("no direct solver can factor here (CHOLMOD, SuperLU): its part skipped\n");
}

static void test_laplacian_1d(void** unused) {
  (void)unused;
  const int32_t n = 100;
  ts_csr k = laplacian_1d(n);
  double w[6], v[6 * 100];
  /* The smallest (Lanczos on K alone), the largest, and the nearest 1.0 (shift-invert, K - I is
   * indefinite: SuperLU factors it). */
  const CNCenum whiches[3] = {CNC_EIGEN_SMALLEST, CNC_EIGEN_LARGEST, CNC_EIGEN_NEAREST};
  const int cases = can_factor(1) ? 3 : 2;
  if (cases == 2) refused_without_factor(&k, NULL, CNC_EIGEN_NEAREST, 1.0);
  for (int c = 0; c < cases; ++c) {
    assert_int_equal(eigen(&k, NULL, 6, whiches[c], 1.0, w, v), CNC_OK);
    assert_int_equal(reason(), CNC_REASON_CONVERGED);
    double expected[6];
    if (c == 0)
      for (int j = 0; j < 6; ++j) expected[j] = 2 - 2 * cos((j + 1) * PI / (n + 1));
    if (c == 1)
      for (int j = 0; j < 6; ++j) expected[j] = 2 - 2 * cos((n - 5 + j) * PI / (n + 1));
    if (c == 2) { /* the six nearest 1.0 among all n, ascending */
      double all[100], dist[100];
      for (int j = 0; j < n; ++j) all[j] = 2 - 2 * cos((j + 1) * PI / (n + 1));
      for (int j = 0; j < n; ++j) dist[j] = fabs(all[j] - 1.0);
      qsort(dist, (size_t)n, sizeof(double), cmp_double);
      int m = 0;
      for (int j = 0; j < n; ++j)
        if (fabs(all[j] - 1.0) <= dist[5]) expected[m++] = all[j];
      assert_int_equal(m, 6);
    }
    for (int j = 0; j < 6; ++j) assert_true(fabs(w[j] - expected[j]) < 1e-10);
    check_pairs(&k, NULL, 6, w, v, 1e-9);
    assert_true(reported_residual() >= 0 && reported_residual() < 1e-10);
    /* Each vector is the sine mode, largest component positive. */
    const int mode = (int)lround(acos(1 - w[0] / 2) * (n + 1) / PI);
    double norm = 0, dot = 0;
    for (int t = 0; t < n; ++t) {
      const double s = sin((t + 1) * mode * PI / (n + 1));
      norm += s * s, dot += s * v[t];
    }
    assert_true(fabs(fabs(dot) / sqrt(norm) - 1) < 1e-8);
  }
  const char* why = "";
  cncGetString(CNC_CHOICE_REASON, &why);
  assert_non_null(strstr(why, cases == 3 ? "mode 3" : "mode 1"));
  ts_csr_free(&k);
}

static void test_laplacian_2d(void** unused) {
  (void)unused;
  const int nx = 20, ny = 15, nev = 8;
  ts_csr k = ts_laplacian_2d(nx, ny);
  if (!can_factor(0)) {
    refused_without_factor(&k, NULL, CNC_EIGEN_NEAREST, 0.0);
    ts_csr_free(&k);
    skip();
  }
  double all[20 * 15];
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j)
      all[i * ny + j] = 4 - 2 * cos((i + 1) * PI / (nx + 1)) - 2 * cos((j + 1) * PI / (ny + 1));
  qsort(all, (size_t)(nx * ny), sizeof(double), cmp_double);
  double w[8];
  double* v = (double*)malloc(sizeof(double) * (size_t)(nev * nx * ny));
  /* sigma = 0 below the spectrum: K is SPD, CHOLMOD factors it. */
  assert_int_equal(eigen(&k, NULL, (CNCuint)nev, CNC_EIGEN_NEAREST, 0.0, w, v), CNC_OK);
  for (int j = 0; j < nev; ++j) assert_true(fabs(w[j] - all[j]) < 1e-10);
  check_pairs(&k, NULL, nev, w, v, 1e-9);
  const char* why = "";
  cncGetString(CNC_CHOICE_REASON, &why);
  if (cncDirectSolverAvailable(CNC_CHOLMOD)) assert_non_null(strstr(why, "CHOLMOD"));
  free(v);
  ts_csr_free(&k);
}

/* ---- Generalized: K v = lambda M v, M diagonal -------------------------------------------------
 */
static void test_generalized(void** unused) {
  (void)unused;
  const int32_t n = 120;
  const int nev = 5;
  ts_csr k = laplacian_1d(n);
  double d[120];
  for (int i = 0; i < n; ++i) d[i] = 1.0 + (double)(i % 3) + 0.01 * i;
  ts_csr m = diagonal(n, d);
  if (!can_factor(0)) {
    refused_without_factor(&k, &m, CNC_EIGEN_SMALLEST, 0.0);
    ts_csr_free(&k), ts_csr_free(&m);
    skip();
  }
  double w2[5], w3[5], wl[5];
  double* v2 = (double*)malloc(sizeof(double) * (size_t)(nev * n));
  double* v3 = (double*)malloc(sizeof(double) * (size_t)(nev * n));
  /* Mode 2 (M factored, Lanczos on M⁻¹K) and mode 3 around 0 must find the same smallest. */
  assert_int_equal(eigen(&k, &m, (CNCuint)nev, CNC_EIGEN_SMALLEST, 0.0, w2, v2), CNC_OK);
  assert_int_equal(reason(), CNC_REASON_CONVERGED);
  check_pairs(&k, &m, nev, w2, v2, 1e-9);
  assert_int_equal(eigen(&k, &m, (CNCuint)nev, CNC_EIGEN_NEAREST, 0.0, w3, v3), CNC_OK);
  check_pairs(&k, &m, nev, w3, v3, 1e-9);
  for (int j = 0; j < nev; ++j) assert_true(fabs(w2[j] - w3[j]) < 1e-10 * fabs(w3[j]) + 1e-13);
  /* The same vectors up to the sign rule: equal. */
  for (size_t t = 0; t < (size_t)(nev * n); ++t) assert_true(fabs(v2[t] - v3[t]) < 1e-7);
  /* Rayleigh quotients bound the spectrum: the largest are above every smallest one. */
  assert_int_equal(eigen(&k, &m, (CNCuint)nev, CNC_EIGEN_LARGEST, 0.0, wl, v2), CNC_OK);
  check_pairs(&k, &m, nev, wl, v2, 1e-9);
  assert_true(wl[0] > w2[nev - 1]);
  /* Shift-invert inside the spectrum: the pairs nearest sigma, none closer left out (those
   * found by mode 2 near the bottom are the nearest 0.01 too). */
  const double sigma = 0.5 * (w2[1] + w2[2]);
  if (can_factor(1)) {
    assert_int_equal(eigen(&k, &m, 2, CNC_EIGEN_NEAREST, sigma, w3, v3), CNC_OK);
    assert_true(fabs(w3[0] - w2[1]) < 1e-10 && fabs(w3[1] - w2[2]) < 1e-10);
  } else {
    refused_without_factor(&k, &m, CNC_EIGEN_NEAREST, sigma);
  }
  free(v2), free(v3);
  ts_csr_free(&k), ts_csr_free(&m);
}

/* ---- Refusals: a clear status, nothing written ------------------------------------------------
 */
static int untouched(size_t len, const double* a) {
  for (size_t i = 0; i < len; ++i)
    if (a[i] != -7.0) return 0;
  return 1;
}

static void test_bad_input(void** unused) {
  (void)unused;
  const int32_t n = 10;
  ts_csr k = laplacian_1d(n);
  double w[10], v[100];
  for (int i = 0; i < 10; ++i) w[i] = -7.0;
  for (int i = 0; i < 100; ++i) v[i] = -7.0;
  assert_int_equal(eigen(&k, NULL, 10, CNC_EIGEN_SMALLEST, 0, w, v), CNC_ERR_INVALID_VALUE);
  assert_non_null(strstr(cncGetLastErrorMessage(), "nev"));
  assert_int_equal(eigen(&k, NULL, 0, CNC_EIGEN_SMALLEST, 0, w, v), CNC_ERR_INVALID_VALUE);
  assert_int_equal(eigen(&k, NULL, 2, 0x1234, 0, w, v), CNC_ERR_INVALID_ENUM);
  assert_int_equal(eigen(&k, NULL, 2, CNC_EIGEN_NEAREST, NAN, w, v), CNC_ERR_NOT_FINITE);
  assert_int_equal(eigen(&k, NULL, 2, CNC_EIGEN_SMALLEST, 0, NULL, v), CNC_ERR_NULL_POINTER);
  assert_int_equal(cncEigenSolveCSR((CNCuint)n, k.row_ptr, (const CNCuint*)k.col, k.val, k.row_ptr,
                                    NULL, NULL, 0, 2, CNC_EIGEN_SMALLEST, 0, w, v),
                   CNC_ERR_NULL_POINTER);
  assert_int_equal(cncEigenSolveCSR((CNCuint)n, k.row_ptr, (const CNCuint*)k.col, k.val, NULL, NULL,
                                    NULL, 2, 2, CNC_EIGEN_SMALLEST, 0, w, v),
                   CNC_ERR_INVALID_VALUE);
  /* A NaN coefficient; a nonsymmetric K (named); M with a zero on its diagonal. */
  const double saved = k.val[1];
  k.val[1] = NAN;
  assert_int_equal(eigen(&k, NULL, 2, CNC_EIGEN_SMALLEST, 0, w, v), CNC_ERR_NOT_FINITE);
  k.val[1] = -3.0;
  assert_int_equal(eigen(&k, NULL, 2, CNC_EIGEN_SMALLEST, 0, w, v), CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "symmetric"));
  k.val[1] = saved;
  double d[10] = {1, 1, 1, 0, 1, 1, 1, 1, 1, 1};
  ts_csr m = diagonal(n, d);
  assert_int_equal(eigen(&k, &m, 2, CNC_EIGEN_SMALLEST, 0, w, v), CNC_ERR_INVALID_VALUE);
  assert_non_null(strstr(cncGetLastErrorMessage(), "positive definite"));
  /* Not in MATRIX state. */
  cncSolverParameteri(CNC_NB_VARIABLES, 3);
  cncBegin(CNC_SYSTEM);
  cncBegin(CNC_MATRIX);
  assert_int_equal(eigen(&k, NULL, 2, CNC_EIGEN_SMALLEST, 0, w, v), CNC_ERR_STATE);
  assert_true(untouched(10, w) && untouched(100, v));
  /* Bad parameter values. */
  cncEnd(CNC_MATRIX);
  assert_int_equal(cncSolverParameterd(CNC_EIGEN_THRESHOLD, -1.0), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncSolverParameterd(CNC_EIGEN_THRESHOLD, 1e-12), CNC_OK);
  double t = 0;
  cncGetDoublev(CNC_EIGEN_THRESHOLD, &t);
  assert_true(t == 1e-12);
  ts_csr_free(&k), ts_csr_free(&m);
}

/* K − σI singular (σ = 0 on a Neumann Laplacian, whose row sums are 0): said, nothing written. */
static void test_singular_shift(void** unused) {
  (void)unused;
  const int32_t n = 12;
  ts_csr k = laplacian_1d(n);
  k.val[0] = 1.0, k.val[k.nnz - 1] = 1.0; /* the end rows: 1, -1 */
  if (!can_factor(1)) {
    refused_without_factor(&k, NULL, CNC_EIGEN_NEAREST, 0.0);
    ts_csr_free(&k);
    skip();
  }
  double w[2] = {-7.0, -7.0}, v[24];
  for (int i = 0; i < 24; ++i) v[i] = -7.0;
  const CNCstatus s = eigen(&k, NULL, 2, CNC_EIGEN_NEAREST, 0.0, w, v);
  assert_int_equal(s, CNC_ERR_INVALID_VALUE);
  assert_non_null(strstr(cncGetLastErrorMessage(), "singular"));
  assert_true(untouched(2, w) && untouched(24, v));
  /* Slightly off an eigenvalue it works, and finds 0. */
  assert_int_equal(eigen(&k, NULL, 2, CNC_EIGEN_NEAREST, -1e-3, w, v), CNC_OK);
  assert_true(fabs(w[0]) < 1e-12);
  assert_true(fabs(w[1] - (2 - 2 * cos(PI / n))) < 1e-10);
  ts_csr_free(&k);
}

/* An iteration limit too small: MAX_ITERATIONS, CNC_OK, nothing written. */
static void test_iteration_limit(void** unused) {
  (void)unused;
  const int32_t n = 400;
  ts_csr k = laplacian_1d(n);
  double w[4] = {-7.0, -7.0, -7.0, -7.0};
  double* v = (double*)malloc(sizeof(double) * 4 * (size_t)n);
  for (size_t i = 0; i < 4 * (size_t)n; ++i) v[i] = -7.0;
  assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 1), CNC_OK);
  assert_int_equal(eigen(&k, NULL, 4, CNC_EIGEN_SMALLEST, 0, w, v), CNC_OK);
  assert_int_equal(reason(), CNC_REASON_MAX_ITERATIONS);
  assert_true(untouched(4, w) && untouched(4 * (size_t)n, v));
  free(v);
  ts_csr_free(&k);
}

/* ---- Without ARPACK (CNC_ARPACK_LIBRARY naming a missing file) ----------------------------------
 */
static void test_unavailable(void** unused) {
  (void)unused;
  assert_int_equal(cncEigenSolverAvailable(), CNC_FALSE);
  assert_non_null(strstr(cncGetLastErrorMessage(), "CNC_ARPACK_LIBRARY"));
  ts_csr k = laplacian_1d(10);
  double w[2] = {-7.0, -7.0}, v[20];
  for (int i = 0; i < 20; ++i) v[i] = -7.0;
  assert_int_equal(eigen(&k, NULL, 2, CNC_EIGEN_SMALLEST, 0, w, v), CNC_ERR_UNSUPPORTED);
  assert_non_null(strstr(cncGetLastErrorMessage(), "ARPACK is not available"));
  assert_true(untouched(2, w) && untouched(20, v));
  ts_csr_free(&k);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "unavailable") == 0) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unavailable, ts_setup_context, ts_teardown_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  if (!cncEigenSolverAvailable()) {
    printf("skipped: %s\n", cncGetLastErrorMessage());
    return TS_SKIP;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_laplacian_1d, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_laplacian_2d, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_generalized, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_bad_input, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_singular_shift, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_iteration_limit, ts_setup_context, ts_teardown_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
