/* cncSolveCSRComplex's native complex format (CNC_FORMAT_ZCSR) on the backend named by argv[1]
 * (cpu, opencl or cuda; an absent one skips with 77): the default (AUTO) and CNC_FORMAT_CSR solve
 * in zcsr, CNC_FORMAT_BCRS2 in the real-equivalent BCRS 2x2, and both agree with a dense complex
 * Gaussian elimination written here, for a Hermitian matrix with rows of one entry and a row of
 * 600 entries (longer than a GPU piece of 512), three right-hand sides, in every precision;
 * a general complex matrix with an empty row by BiCGSTAB and GMRES; RCM (complex unknowns
 * renumbered as (re, im) pairs) and no reordering; CNC_FORMAT_USED / CNC_FORMAT_NAME report the
 * format; a real solve with CNC_FORMAT_ZCSR is refused with CNC_ERR_UNSUPPORTED, x unchanged.
 * CNC_FORMAT_ZSELL (complex SELL) forced on CUDA solves the same systems to the same answers, and
 * AUTO picks it there for a matrix of rows of equal length (not for the one with a row of 600);
 * on the other backends, and for a real solve, forced ZSELL is refused with CNC_ERR_UNSUPPORTED,
 * x unchanged.
 */
#include <complex.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h> /* after the headers it needs */

#include "cnc.h"

static CNCenum g_backend = CNC_BACKEND_CPU;
static CNCenum g_reorder = CNC_REORDER_AUTO; /* CNC_REORDER of the solves */
static int g_base = 0;                       /* index base of the arrays handed over */

enum { N = 600 };

typedef struct {
  CNCint64 row_ptr[N + 1];
  CNCuint col[8 * N];
  double complex val[8 * N];
} zmatrix;

static double complex entry(int i, int j) {
  const int lo = i < j ? i : j, hi = i < j ? j : i;
  const double theta = 0.9 * sin(0.31 * lo + 0.17 * hi);
  const double complex z = -(0.3 + 0.2 * cos(0.5 * (lo + hi))) * cexp(I * theta);
  return i < j ? z : conj(z);
}

/* Row 0 couples with every row (600 entries), rows i % 50 == 25 hold their diagonal alone,
 * the others their ring neighbours. Hermitian with a dominant real diagonal, or (general) with
 * i * skew added to the diagonal and row `empty` (>= 0) left empty. */
static void make(zmatrix* a, double skew, int empty) {
  CNCint64 t = 0;
  for (int i = 0; i < N; ++i) {
    a->row_ptr[i] = t;
    if (i == empty) continue;
    const int alone = i % 50 == 25;
    double off = 0;
    const CNCint64 diag = t;
    a->col[t] = (CNCuint)i, a->val[t] = 0, ++t;
    for (int j = 0; j < N; ++j) {
      if (j == i) continue;
      const int ring = !alone && j % 50 != 25 && (j == i - 1 || j == i + 1);
      const int arrow = (i == 0 && !(j % 50 == 25)) || (j == 0 && !alone);
      if (!ring && !arrow) continue;
      a->col[t] = (CNCuint)j, a->val[t] = arrow && !ring ? 0.05 * entry(i, j) : entry(i, j);
      off += cabs(a->val[t]), ++t;
    }
    a->val[diag] = off + 0.5 + I * skew;
  }
  a->row_ptr[N] = t;
}

/* Dense complex Gaussian elimination with partial pivoting; an empty row is replaced by the
 * identity's (x_i = b_i = 0 there: what a Krylov method from x = 0 leaves). */
static void dense_solve(const zmatrix* a, const double complex* b, double complex* x) {
  double complex* m = (double complex*)calloc((size_t)N * N, sizeof(double complex));
  for (int i = 0; i < N; ++i) {
    for (CNCint64 t = a->row_ptr[i]; t < a->row_ptr[i + 1]; ++t) m[i * N + a->col[t]] += a->val[t];
    if (a->row_ptr[i] == a->row_ptr[i + 1]) m[i * N + i] = 1;
    x[i] = b[i];
  }
  for (int k = 0; k < N; ++k) {
    int p = k;
    for (int i = k + 1; i < N; ++i)
      if (cabs(m[i * N + k]) > cabs(m[p * N + k])) p = i;
    for (int j = 0; j < N && p != k; ++j) {
      const double complex w = m[k * N + j];
      m[k * N + j] = m[p * N + j], m[p * N + j] = w;
    }
    const double complex w = x[k];
    x[k] = x[p], x[p] = w;
    for (int i = k + 1; i < N; ++i) {
      const double complex f = m[i * N + k] / m[k * N + k];
      if (f == 0) continue;
      for (int j = k; j < N; ++j) m[i * N + j] -= f * m[k * N + j];
      x[i] -= f * x[k];
    }
  }
  for (int k = N - 1; k >= 0; --k) {
    double complex s = x[k];
    for (int j = k + 1; j < N; ++j) s -= m[k * N + j] * x[j];
    x[k] = s / m[k * N + k];
  }
  free(m);
}

/* Hermitian ring: every row its diagonal and its two neighbours (rows of equal length). */
static void make_ring(zmatrix* a) {
  CNCint64 t = 0;
  for (int i = 0; i < N; ++i) {
    a->row_ptr[i] = t;
    const int lo = (i + N - 1) % N, hi = (i + 1) % N;
    int c[3] = {lo, i, hi}; /* sorted below: the columns in increasing order */
    for (int p = 0; p < 3; ++p)
      for (int q = p + 1; q < 3; ++q)
        if (c[q] < c[p]) {
          const int w = c[p];
          c[p] = c[q], c[q] = w;
        }
    for (int e = 0; e < 3; ++e) {
      a->col[t] = (CNCuint)c[e];
      a->val[t] = c[e] == i ? 3.0 + 0.1 * (i % 7) : entry(i, c[e]);
      ++t;
    }
  }
  a->row_ptr[N] = t;
}

static double rel_diff(const double complex* x, const double complex* y) {
  double d = 0, s = 0;
  for (int i = 0; i < N; ++i) d += pow(cabs(x[i] - y[i]), 2), s += pow(cabs(y[i]), 2);
  return sqrt(d / s);
}

static void fill_b(double complex* b, int k, int empty) {
  for (int i = 0; i < N * k; ++i) b[i] = i % N == empty ? 0 : sin(0.7 * i + 0.2) + I * cos(1.3 * i);
}

/* Solves with `format` and returns the format used; skips the program on an absent backend. With
 * `status`, a failing solve returns -1 with its status there (x left as it was: zeros). */
static CNCint solve_or(const zmatrix* a, CNCenum solver, CNCenum precision, double thr,
                       CNCenum format, int k, const double complex* b, double complex* x,
                       CNCstatus* status) {
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)g_backend), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)solver), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_PRECISION, (CNCint)precision), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, (CNCint)format), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, thr), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_REORDER, (CNCint)g_reorder), CNC_OK);
  memset(x, 0, sizeof(double complex) * N * (size_t)k);
  /* g_base 1: the same matrix 1-based (on CUDA the host path: the device takes 0-based arrays) */
  static zmatrix one;
  if (g_base == 1) {
    for (int i = 0; i <= N; ++i) one.row_ptr[i] = a->row_ptr[i] + 1;
    for (CNCint64 t = 0; t < a->row_ptr[N]; ++t) one.col[t] = a->col[t] + 1, one.val[t] = a->val[t];
  }
  const zmatrix* h = g_base == 1 ? &one : a;
  const CNCstatus st =
      cncSolveCSRComplex(N, h->row_ptr, h->col, (const double*)h->val, (CNCuint)g_base, (CNCuint)k,
                         (const double*)b, (double*)x);
  if (st == CNC_ERR_BACKEND_UNAVAILABLE || st == CNC_ERR_NO_FP64) {
    printf("backend absent here: skipped (%s)\n", cncGetLastErrorMessage());
    exit(77);
  }
  if (status) *status = st;
  if (st != CNC_OK && status) {
    printf("refused (%d): %s\n", st, cncGetLastErrorMessage());
    cncDeleteContext(c);
    return -1;
  }
  if (st != CNC_OK) fail_msg("status %d: %s", st, cncGetLastErrorMessage());
  CNCint reason = 0, used = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  if (reason != CNC_REASON_CONVERGED) fail_msg("reason 0x%x", reason);
  assert_int_equal(cncGetIntegerv(CNC_FORMAT_USED, &used), CNC_OK);
  const char* name = NULL;
  assert_int_equal(cncGetString(CNC_FORMAT_NAME, &name), CNC_OK);
  assert_non_null(name);
  if (used == CNC_FORMAT_ZCSR) assert_string_equal(name, "zcsr");
  if (used == CNC_FORMAT_ZSELL) assert_string_equal(name, "zsell");
  if (used == CNC_FORMAT_BCRS2) assert_string_equal(name, "bcrs2");
  CNCint reordered = 0;
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &reordered), CNC_OK);
  if (g_reorder != CNC_REORDER_AUTO) assert_int_equal(reordered, g_reorder);
  cncDeleteContext(c);
  return used;
}

static CNCint solve(const zmatrix* a, CNCenum solver, CNCenum precision, double thr, CNCenum format,
                    int k, const double complex* b, double complex* x) {
  return solve_or(a, solver, precision, thr, format, k, b, x, NULL);
}

/* x from forced CNC_FORMAT_ZSELL: solved on CUDA (1 returned), refused elsewhere with
 * CNC_ERR_UNSUPPORTED naming it and x unchanged (0 returned). */
static int solve_zsell(const zmatrix* a, CNCenum solver, CNCenum precision, double thr, int k,
                       const double complex* b, double complex* x) {
  CNCstatus st = CNC_OK;
  const CNCint used = solve_or(a, solver, precision, thr, CNC_FORMAT_ZSELL, k, b, x, &st);
  if (g_backend == CNC_BACKEND_CUDA) {
    if (st != CNC_OK) fail_msg("forced ZSELL on CUDA: status %d", st);
    assert_int_equal(used, CNC_FORMAT_ZSELL);
    return 1;
  }
  assert_int_equal(st, CNC_ERR_UNSUPPORTED);
  for (int i = 0; i < N * k; ++i)
    if (x[i] != 0) fail_msg("a refused ZSELL solve changed x[%d]", i);
  return 0;
}

static void check(const zmatrix* a, CNCenum solver, CNCenum precision, double thr, double tol,
                  int k, int empty) {
  double complex* b = (double complex*)malloc(sizeof(double complex) * N * (size_t)k);
  double complex* xz = (double complex*)malloc(sizeof(double complex) * N * (size_t)k);
  double complex* xb = (double complex*)malloc(sizeof(double complex) * N * (size_t)k);
  double complex ref[N];
  fill_b(b, k, empty);
  double complex* xs = (double complex*)malloc(sizeof(double complex) * N * (size_t)k);
  const CNCenum formats[] = {CNC_FORMAT_AUTO, CNC_FORMAT_CSR, CNC_FORMAT_ZCSR};
  for (int f = 0; f < 3; ++f)
    assert_int_equal(solve(a, solver, precision, thr, formats[f], k, b, xz), CNC_FORMAT_ZCSR);
  assert_int_equal(solve(a, solver, precision, thr, CNC_FORMAT_BCRS2, k, b, xb), CNC_FORMAT_BCRS2);
  const int zsell = solve_zsell(a, solver, precision, thr, k, b, xs);
  for (int j = 0; j < k; ++j) {
    dense_solve(a, b + (size_t)j * N, ref);
    const double dz = rel_diff(xz + (size_t)j * N, ref), db = rel_diff(xb + (size_t)j * N, ref),
                 zb = rel_diff(xz + (size_t)j * N, xb + (size_t)j * N);
    const double ds = zsell ? rel_diff(xs + (size_t)j * N, ref) : 0;
    printf(
        "solver 0x%x precision 0x%x system %d: zcsr %.2e, bcrs2 %.2e, zsell %.2e from dense; "
        "zcsr-bcrs2 %.2e\n",
        solver, precision, j, dz, db, ds, zb);
    if (!(dz <= tol && db <= tol && zb <= tol && ds <= tol))
      fail_msg("system %d: beyond %.1e", j, tol);
  }
  free(b), free(xz), free(xb), free(xs);
}

static void test_hermitian_every_precision(void** unused) {
  (void)unused;
  zmatrix* a = (zmatrix*)malloc(sizeof *a);
  make(a, 0.0, -1);
  assert_true(a->row_ptr[1] - a->row_ptr[0] > 512);
  assert_true(a->row_ptr[26] - a->row_ptr[25] == 1);
  check(a, CNC_CG, CNC_DOUBLE, 1e-12, 1e-9, 3, -1);
  check(a, CNC_CG, CNC_MIXED, 1e-7, 1e-5, 3, -1);
  check(a, CNC_CG, CNC_SINGLE, 1e-5, 1e-3, 3, -1);
  check(a, CNC_CG, CNC_DOUBLE, 1e-12, 1e-9, 1, -1);
  free(a);
}

static void test_general_with_empty_row(void** unused) {
  (void)unused;
  zmatrix* a = (zmatrix*)malloc(sizeof *a);
  make(a, 0.8, 137);
  check(a, CNC_BICGSTAB, CNC_DOUBLE, 1e-12, 1e-9, 2, 137);
  check(a, CNC_GMRES, CNC_DOUBLE, 1e-12, 1e-9, 1, 137);
  free(a);
}

/* Renumbered by RCM: under zcsr the complex unknowns move as (re, im) pairs. */
static void test_reordered(void** unused) {
  (void)unused;
  zmatrix* a = (zmatrix*)malloc(sizeof *a);
  make(a, 0.0, -1);
  g_reorder = CNC_REORDER_RCM;
  check(a, CNC_CG, CNC_DOUBLE, 1e-12, 1e-9, 2, -1);
  g_reorder = CNC_REORDER_NONE;
  check(a, CNC_CG, CNC_DOUBLE, 1e-12, 1e-9, 1, -1);
  g_reorder = CNC_REORDER_AUTO;
  make(a, 0.8, 137);
  g_reorder = CNC_REORDER_RCM;
  check(a, CNC_BICGSTAB, CNC_DOUBLE, 1e-12, 1e-9, 1, 137);
  g_reorder = CNC_REORDER_AUTO;
  free(a);
}

static void test_real_solve_refuses_zcsr(void** unused) {
  (void)unused;
  const CNCint64 rp[3] = {0, 2, 4};
  const CNCuint col[4] = {0, 1, 0, 1};
  const double val[4] = {4, 1, 1, 3}, b[2] = {1, 2};
  const CNCenum formats[2] = {CNC_FORMAT_ZCSR, CNC_FORMAT_ZSELL};
  const char* names[2] = {"CNC_FORMAT_ZCSR", "CNC_FORMAT_ZSELL"};
  for (int f = 0; f < 2; ++f) {
    double x[2] = {7, 8};
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)g_backend), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, (CNCint)formats[f]), CNC_OK);
    const CNCstatus st = cncSolveCSR(2, rp, col, val, 0, 1, b, x);
    printf("%s\n", cncGetLastErrorMessage());
    assert_int_equal(st, CNC_ERR_UNSUPPORTED);
    assert_non_null(strstr(cncGetLastErrorMessage(), names[f]));
    assert_true(x[0] == 7 && x[1] == 8);
    cncDeleteContext(c);
  }
}

/* Rows of equal length: AUTO stores them as ZSELL on CUDA (ZCSR elsewhere), with the answer of
 * the dense solve and of forced ZCSR, for CG in double (one and three systems) and BiCGSTAB,
 * from 0-based arrays (on CUDA checked and converted on the device) and 1-based ones (on the
 * host), and for CG in CNC_MIXED (the real-equivalent handed over). */
static void test_auto_zsell(void** unused) {
  (void)unused;
  zmatrix* a = (zmatrix*)malloc(sizeof *a);
  make_ring(a);
  const int k = 3;
  double complex* b = (double complex*)malloc(sizeof(double complex) * N * (size_t)k);
  double complex* xa = (double complex*)malloc(sizeof(double complex) * N * (size_t)k);
  double complex* xz = (double complex*)malloc(sizeof(double complex) * N * (size_t)k);
  double complex ref[N];
  fill_b(b, k, -1);
  const CNCenum solvers[2] = {CNC_CG, CNC_BICGSTAB};
  for (int base = 0; base < 2; ++base)
    for (int s = 0; s < 2; ++s)
      for (int kk = 1; kk <= k; kk += 2) {
        g_base = base;
        const CNCint used = solve(a, solvers[s], CNC_DOUBLE, 1e-12, CNC_FORMAT_AUTO, kk, b, xa);
        assert_int_equal(used, g_backend == CNC_BACKEND_CUDA ? CNC_FORMAT_ZSELL : CNC_FORMAT_ZCSR);
        assert_int_equal(solve(a, solvers[s], CNC_DOUBLE, 1e-12, CNC_FORMAT_ZCSR, kk, b, xz),
                         CNC_FORMAT_ZCSR);
        g_base = 0;
        for (int j = 0; j < kk; ++j) {
          dense_solve(a, b + (size_t)j * N, ref);
          const double da = rel_diff(xa + (size_t)j * N, ref),
                       dz = rel_diff(xz + (size_t)j * N, ref);
          printf(
              "ring, base %d, solver 0x%x, k %d, system %d: auto (0x%x) %.2e, zcsr %.2e from "
              "dense\n",
              base, solvers[s], kk, j, used, da, dz);
          if (!(da <= 1e-9 && dz <= 1e-9)) fail_msg("system %d: beyond 1e-9", j);
        }
      }
  /* CNC_MIXED: the real-equivalent is handed over, and AUTO's choice made from it the same. */
  for (int kk = 1; kk <= k; kk += 2) {
    const CNCint used = solve(a, CNC_CG, CNC_MIXED, 1e-7, CNC_FORMAT_AUTO, kk, b, xa);
    assert_int_equal(used, g_backend == CNC_BACKEND_CUDA ? CNC_FORMAT_ZSELL : CNC_FORMAT_ZCSR);
    for (int j = 0; j < kk; ++j) {
      dense_solve(a, b + (size_t)j * N, ref);
      const double da = rel_diff(xa + (size_t)j * N, ref);
      printf("ring, mixed, k %d, system %d: auto (0x%x) %.2e from dense\n", kk, j, used, da);
      if (!(da <= 1e-5)) fail_msg("mixed system %d: beyond 1e-5", j);
    }
  }
  free(a), free(b), free(xa), free(xz);
}

int main(int argc, char** argv) {
  if (argc >= 2)
    g_backend = strcmp(argv[1], "cuda") == 0     ? CNC_BACKEND_CUDA
                : strcmp(argv[1], "opencl") == 0 ? CNC_BACKEND_OPENCL
                                                 : CNC_BACKEND_CPU;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_real_solve_refuses_zcsr),
      cmocka_unit_test(test_hermitian_every_precision), cmocka_unit_test(test_auto_zsell),
      cmocka_unit_test(test_general_with_empty_row), cmocka_unit_test(test_reordered)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
