/* cncSolveCSRComplex on the backend named by argv[1] (cpu, opencl or cuda; an absent one skips
 * with 77), against references computed here in complex arithmetic: a magnetic Laplacian
 * (the graph Laplacian of a 2D grid with unit-modulus phases e^{i theta} on its edges, plus a
 * shift: Hermitian positive definite) solved by CG and compared with a dense complex Gaussian
 * elimination with partial pivoting, its arrays given 1-based with unsorted rows and duplicates;
 * several right-hand sides; a larger one checked by the complex residual computed here; a
 * non-Hermitian complex matrix, and an indefinite one the real-equivalent methods cannot solve,
 * by BiCGSTAB and GMRES against the dense solve; mixed precision;
 * and bad input (NaN in an imaginary part, a non-Hermitian matrix or a complex or negative
 * diagonal given to CG) refused with a clear status and x unchanged. */
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

/* A complex CSR: values are (re, im) pairs, as cncSolveCSRComplex takes them. */
typedef struct {
  CNCuint n;
  CNCint64* row_ptr;
  CNCuint* col;
  double complex* val;
  CNCint base;
} zcsr;

static void zcsr_free(zcsr* a) {
  free(a->row_ptr);
  free(a->col);
  free(a->val);
}

/* Magnetic Laplacian of an nx x ny grid: a_ij = -e^{i theta_ij} on each edge (a_ji its
 * conjugate), a_ii = degree + shift, plus `skew` * i on the diagonal (0: Hermitian). With
 * `messy`: 1-based, each row's entries in reverse column order and the diagonal split in two. */
static zcsr magnetic_laplacian(int nx, int ny, double shift, double skew, int messy) {
  zcsr a;
  a.n = (CNCuint)(nx * ny);
  a.base = messy ? 1 : 0;
  a.row_ptr = (CNCint64*)calloc(a.n + 1, sizeof(CNCint64));
  a.col = (CNCuint*)malloc(6 * a.n * sizeof(CNCuint));
  a.val = (double complex*)malloc(6 * a.n * sizeof(double complex));
  CNCint64 t = 0;
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      const int i = y * nx + x;
      int cols[6];
      double complex vals[6];
      int m = 0, degree = 0;
      const int nb[4][2] = {{x, y - 1}, {x - 1, y}, {x + 1, y}, {x, y + 1}};
      for (int k = 0; k < 4; ++k) {
        const int u = nb[k][0], v = nb[k][1];
        if (u < 0 || v < 0 || u >= nx || v >= ny) continue;
        const int j = v * nx + u;
        /* The phase of edge {i, j}, antisymmetric: theta_ij = -theta_ji. */
        const int lo = i < j ? i : j, hi = i < j ? j : i;
        const double theta = 0.7 * sin(0.37 * lo + 0.11 * hi) + 0.3 * (lo % 5);
        cols[m] = j;
        vals[m] = -cexp(I * (i < j ? theta : -theta));
        ++m, ++degree;
      }
      const double complex diag = degree + shift + I * skew;
      if (messy) {
        cols[m] = i, vals[m] = 0.5 * diag, ++m;
        cols[m] = i, vals[m] = 0.5 * diag, ++m;
      } else {
        cols[m] = i, vals[m] = diag, ++m;
      }
      /* sorted (insertion), then reversed when messy */
      for (int p = 1; p < m; ++p)
        for (int q = p; q > 0 && cols[q - 1] > cols[q]; --q) {
          int c = cols[q];
          cols[q] = cols[q - 1], cols[q - 1] = c;
          double complex w = vals[q];
          vals[q] = vals[q - 1], vals[q - 1] = w;
        }
      for (int p = 0; p < m; ++p) {
        const int s = messy ? m - 1 - p : p;
        a.col[t] = (CNCuint)(cols[s] + a.base);
        a.val[t] = vals[s];
        ++t;
      }
      a.row_ptr[i + 1] = t;
    }
  for (CNCuint i = 0; i <= a.n; ++i) a.row_ptr[i] += a.base;
  return a;
}

/* y = A x in complex arithmetic. */
static void zmul(const zcsr* a, const double complex* x, double complex* y) {
  for (CNCuint i = 0; i < a->n; ++i) {
    double complex s = 0;
    for (CNCint64 t = a->row_ptr[i] - a->base; t < a->row_ptr[i + 1] - a->base; ++t)
      s += a->val[t] * x[a->col[t] - (CNCuint)a->base];
    y[i] = s;
  }
}

/* Dense complex Gaussian elimination with partial pivoting: x = A^-1 b. */
static void dense_solve(const zcsr* a, const double complex* b, double complex* x) {
  const size_t n = a->n;
  double complex* m = (double complex*)calloc(n * n, sizeof(double complex));
  for (size_t i = 0; i < n; ++i) {
    for (CNCint64 t = a->row_ptr[i] - a->base; t < a->row_ptr[i + 1] - a->base; ++t)
      m[i * n + (a->col[t] - (CNCuint)a->base)] += a->val[t];
    x[i] = b[i];
  }
  for (size_t k = 0; k < n; ++k) {
    size_t p = k;
    for (size_t i = k + 1; i < n; ++i)
      if (cabs(m[i * n + k]) > cabs(m[p * n + k])) p = i;
    if (p != k) {
      for (size_t j = 0; j < n; ++j) {
        double complex w = m[k * n + j];
        m[k * n + j] = m[p * n + j], m[p * n + j] = w;
      }
      double complex w = x[k];
      x[k] = x[p], x[p] = w;
    }
    assert_true(cabs(m[k * n + k]) > 1e-300);
    for (size_t i = k + 1; i < n; ++i) {
      const double complex f = m[i * n + k] / m[k * n + k];
      if (f == 0) continue;
      for (size_t j = k; j < n; ++j) m[i * n + j] -= f * m[k * n + j];
      x[i] -= f * x[k];
    }
  }
  for (size_t k = n; k-- > 0;) {
    double complex s = x[k];
    for (size_t j = k + 1; j < n; ++j) s -= m[k * n + j] * x[j];
    x[k] = s / m[k * n + k];
  }
  free(m);
}

static double complex* random_complex(size_t n, unsigned seed) {
  double complex* v = (double complex*)malloc(n * sizeof(double complex));
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double re = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double im = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    v[i] = re + I * im;
  }
  return v;
}

static double rel_diff(size_t n, const double complex* x, const double complex* y) {
  double d = 0, s = 0;
  for (size_t i = 0; i < n; ++i) d += pow(cabs(x[i] - y[i]), 2), s += pow(cabs(y[i]), 2);
  return sqrt(d / s);
}

static CNCcontext new_context(CNCenum solver, CNCenum precision, double threshold) {
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)g_backend), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)solver), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_PRECISION, (CNCint)precision), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, threshold), CNC_OK);
  return c;
}

static CNCstatus solve(const zcsr* a, CNCuint nrhs, const double complex* b, double complex* x) {
  return cncSolveCSRComplex(a->n, a->row_ptr, a->col, (const double*)a->val, a->base, nrhs,
                            (const double*)b, (double*)x);
}

/* Solves and, on an absent backend, skips the whole program. */
static void solve_or_skip(const zcsr* a, CNCuint nrhs, const double complex* b, double complex* x) {
  const CNCstatus st = solve(a, nrhs, b, x);
  if (st == CNC_ERR_BACKEND_UNAVAILABLE) {
    printf("backend absent here: skipped (%s)\n", cncGetLastErrorMessage());
    exit(77);
  }
  if (st != CNC_OK) fail_msg("status %d: %s", st, cncGetLastErrorMessage());
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  if (reason != CNC_REASON_CONVERGED) fail_msg("reason 0x%x", reason);
}

/* A Hermitian positive definite system (1-based, unsorted, duplicates) with three right-hand
 * sides, against the dense solve. */
static void check_hermitian_vs_dense(CNCenum solver, CNCenum precision, double threshold,
                                     double tol, int zero_based) {
  zcsr a = magnetic_laplacian(15, 13, 0.05, 0.0, 1);
  if (zero_based) { /* the same unsorted rows and duplicates, 0-based (the device sees them) */
    for (CNCuint i = 0; i <= a.n; ++i) a.row_ptr[i] -= 1;
    for (CNCint64 t = 0; t < a.row_ptr[a.n]; ++t) a.col[t] -= 1;
    a.base = 0;
  }
  const size_t n = a.n;
  const CNCuint k = 3;
  double complex* b = random_complex(n * k, 7);
  double complex* x = (double complex*)calloc(n * k, sizeof(double complex));
  double complex* ref = (double complex*)malloc(n * sizeof(double complex));
  CNCcontext c = new_context(solver, precision, threshold);
  solve_or_skip(&a, k, b, x);
  for (CNCuint j = 0; j < k; ++j) {
    dense_solve(&a, b + j * n, ref);
    const double d = rel_diff(n, x + j * n, ref);
    printf("solver 0x%x precision 0x%x system %u: |x - x_dense| / |x_dense| = %.2e\n", solver,
           precision, j, d);
    if (!(d <= tol)) fail_msg("system %u: %.3e > %.1e", j, d, tol);
  }
  cncDeleteContext(c);
  free(b), free(x), free(ref);
  zcsr_free(&a);
}

static void test_hermitian_cg_vs_dense(void** unused) {
  (void)unused;
  check_hermitian_vs_dense(CNC_CG, CNC_DOUBLE, 1e-12, 1e-9, 0);
  check_hermitian_vs_dense(CNC_CG, CNC_DOUBLE, 1e-12, 1e-9, 1);
  check_hermitian_vs_dense(CNC_SOLVER_DEFAULT, CNC_DOUBLE, 1e-12, 1e-9, 0);
  check_hermitian_vs_dense(CNC_CG, CNC_MIXED, 1e-6, 1e-5, 0);
}

/* Textbook complex Jacobi-PCG (x0 = 0, stop when ||r|| <= thr ||b||): its iteration count. */
static int complex_pcg_iterations(const zcsr* a, const double complex* b, double thr) {
  const size_t n = a->n;
  double complex* x = (double complex*)calloc(n, sizeof(double complex));
  double complex* r = (double complex*)malloc(n * sizeof(double complex));
  double complex* z = (double complex*)malloc(n * sizeof(double complex));
  double complex* p = (double complex*)malloc(n * sizeof(double complex));
  double complex* q = (double complex*)malloc(n * sizeof(double complex));
  double* dinv = (double*)malloc(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    double d = 0;
    for (CNCint64 t = a->row_ptr[i] - a->base; t < a->row_ptr[i + 1] - a->base; ++t)
      if (a->col[t] - (CNCuint)a->base == i) d += creal(a->val[t]);
    dinv[i] = 1.0 / d;
  }
  double bb = 0, rz = 0;
  for (size_t i = 0; i < n; ++i) {
    r[i] = b[i], z[i] = dinv[i] * r[i], p[i] = z[i];
    bb += creal(conj(b[i]) * b[i]);
    rz += creal(conj(r[i]) * z[i]);
  }
  int it = 0;
  for (; it < 10000; ++it) {
    zmul(a, p, q);
    double complex pq = 0;
    for (size_t i = 0; i < n; ++i) pq += conj(p[i]) * q[i];
    const double alpha = rz / creal(pq); /* p^H A p is real for Hermitian A */
    double rr = 0, rz_new = 0;
    for (size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      z[i] = dinv[i] * r[i];
      rr += creal(conj(r[i]) * r[i]);
      rz_new += creal(conj(r[i]) * z[i]);
    }
    if (rr <= thr * thr * bb) break;
    for (size_t i = 0; i < n; ++i) p[i] = z[i] + (rz_new / rz) * p[i];
    rz = rz_new;
  }
  free(x), free(r), free(z), free(p), free(q), free(dinv);
  return it + 1;
}

/* CG on the real-equivalent system is complex PCG step for step: the same iteration count as
 * the textbook complex method written above. */
static void test_same_iterations_as_complex_pcg(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(30, 25, 0.02, 0.0, 0);
  double complex* b = random_complex(a.n, 17);
  double complex* x = (double complex*)calloc(a.n, sizeof(double complex));
  const double thr = 1e-8;
  CNCcontext c = new_context(CNC_CG, CNC_DOUBLE, thr);
  assert_int_equal(cncSolverParameteri(CNC_CHECK_INTERVAL, 1), CNC_OK);
  solve_or_skip(&a, 1, b, x);
  CNCint it = 0;
  assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &it), CNC_OK);
  const int ref = complex_pcg_iterations(&a, b, thr);
  printf("iterations: cnc %d, textbook complex PCG %d\n", it, ref);
  assert_true(abs(it - ref) <= 1);
  cncDeleteContext(c);
  free(b), free(x);
  zcsr_free(&a);
}

/* A larger Hermitian system, checked by its complex residual. */
static void test_hermitian_residual(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(160, 150, 0.01, 0.0, 0);
  const size_t n = a.n;
  double complex* b = random_complex(n, 3);
  double complex* x = (double complex*)calloc(n, sizeof(double complex));
  double complex* ax = (double complex*)malloc(n * sizeof(double complex));
  CNCcontext c = new_context(CNC_CG, CNC_DOUBLE, 1e-8);
  solve_or_skip(&a, 1, b, x);
  zmul(&a, x, ax);
  const double res = rel_diff(n, ax, b);
  double reported = 0;
  assert_int_equal(cncGetDoublev(CNC_TRUE_ERROR, &reported), CNC_OK);
  printf("n=%zu: ||b - A x|| / ||b|| = %.3e (reported %.3e)\n", n, res, reported);
  assert_true(res <= 2e-8);
  assert_true(fabs(res - reported) <= 1e-3 * res + 1e-15);
  cncDeleteContext(c);
  free(b), free(x), free(ax);
  zcsr_free(&a);
}

/* A complex non-Hermitian system (i on the diagonal) through BiCGSTAB and GMRES. */
static void test_general_complex_vs_dense(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(12, 11, 0.2, 1.5, 0);
  const size_t n = a.n;
  double complex* b = random_complex(n, 11);
  double complex* ref = (double complex*)malloc(n * sizeof(double complex));
  dense_solve(&a, b, ref);
  const CNCenum solvers[] = {CNC_BICGSTAB, CNC_GMRES};
  for (int s = 0; s < 2; ++s) {
    double complex* x = (double complex*)calloc(n, sizeof(double complex));
    CNCcontext c = new_context(solvers[s], CNC_DOUBLE, 1e-12);
    solve_or_skip(&a, 1, b, x);
    const double d = rel_diff(n, x, ref);
    printf("solver 0x%x: |x - x_dense| / |x_dense| = %.2e\n", solvers[s], d);
    assert_true(d <= 1e-9);
    cncDeleteContext(c);
    free(x);
  }
  free(b), free(ref);
  zcsr_free(&a);
}

/* The progress callback's iterate holds (re, im) pairs as x does; a second call with the same
 * arrays' content gives the same bits (the kept system). */
static double complex g_iterate[64 * 64];
static int g_checks = 0;
static int on_progress(CNCint iteration, double residual, void* user) {
  (void)iteration, (void)residual, (void)user;
  if (cncGetCurrentIterate((double*)g_iterate) == CNC_OK) ++g_checks;
  return 0;
}

static void test_iterate_and_kept_matrix(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(64, 64, 0.05, 0.0, 0);
  const size_t n = a.n;
  double complex* b = random_complex(n, 13);
  double complex* x = (double complex*)calloc(n, sizeof(double complex));
  double complex* x2 = (double complex*)calloc(n, sizeof(double complex));
  CNCcontext c = new_context(CNC_CG, CNC_DOUBLE, 1e-10);
  assert_int_equal(cncSetProgressCallback(on_progress, NULL), CNC_OK);
  solve_or_skip(&a, 1, b, x);
  printf("%d checks read the iterate; last one |x_check - x| / |x| = %.2e\n", g_checks,
         rel_diff(n, g_iterate, x));
  assert_true(g_checks > 0);
  assert_true(rel_diff(n, g_iterate, x) < 1e-3); /* the iterate of the last check: near x */
  solve_or_skip(&a, 1, b, x2);
  assert_memory_equal(x, x2, n * sizeof(double complex));
  cncDeleteContext(c);
  free(b), free(x), free(x2);
  zcsr_free(&a);
}

/* An indefinite complex system (shift -1 below the grid Laplacian's degree, damping 0.2 i on
 * the diagonal), two right-hand sides, the second from a nonzero initial guess, through BiCGSTAB
 * and GMRES(30) against the dense solve. The complex methods (complex inner products, Jacobi on
 * the complex diagonal) converge in a few hundred iterations; the real-equivalent's real methods
 * (spectrum symmetric about the real axis, around 0) break down or stall at 1e-1 (SciPy on the same
 * kind of matrix: BiCGSTAB breakdown, GMRES(30) at 0.18 after 3000 iterations). BiCGSTAB's progress
 * callback reads the iterate in the caller's unknowns (not the diagonally scaled ones solved). */
static void test_indefinite_complex_vs_dense(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(20, 20, -1.0, 0.2, 0);
  const size_t n = a.n;
  double complex* b = random_complex(2 * n, 17);
  double complex* ref = (double complex*)malloc(2 * n * sizeof(double complex));
  dense_solve(&a, b, ref);
  dense_solve(&a, b + n, ref + n);
  const CNCenum solvers[] = {CNC_BICGSTAB, CNC_GMRES};
  for (int s = 0; s < 2; ++s) {
    double complex* x = (double complex*)calloc(2 * n, sizeof(double complex));
    for (size_t i = n; i < 2 * n; ++i) x[i] = 0.5 - 0.25 * I;
    CNCcontext c = new_context(solvers[s], CNC_DOUBLE, 1e-10);
    assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 3000), CNC_OK);
    g_checks = 0;
    if (solvers[s] == CNC_BICGSTAB)
      assert_int_equal(cncSetProgressCallback(on_progress, NULL), CNC_OK);
    solve_or_skip(&a, 2, b, x);
    CNCint iters = 0;
    assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &iters), CNC_OK);
    const double d = rel_diff(2 * n, x, ref);
    printf("solver 0x%x: %d iterations, |x - x_dense| / |x_dense| = %.2e\n", solvers[s], iters, d);
    assert_true(d <= 1e-7);
    if (solvers[s] == CNC_BICGSTAB) {
      const double di = rel_diff(2 * n, g_iterate, x);
      printf("  %d checks read the iterate; last one |x_check - x| / |x| = %.2e\n", g_checks, di);
      assert_true(g_checks > 0);
      assert_true(di < 1e-3);
    }
    cncDeleteContext(c);
    free(x);
  }
  /* The same system given 1-based, rows reversed, the diagonal split in two (summed before its
   * complex part is read), through BiCGSTAB in the real-equivalent's BCRS2 and in mixed
   * precision (the scaled values then go through the real-equivalent CSR). */
  zcsr messy = magnetic_laplacian(20, 20, -1.0, 0.2, 1);
  for (int v = 0; v < 2; ++v) {
    double complex* x = (double complex*)calloc(2 * n, sizeof(double complex));
    CNCcontext c = new_context(CNC_BICGSTAB, v ? CNC_MIXED : CNC_DOUBLE, v ? 1e-7 : 1e-10);
    assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 3000), CNC_OK);
    if (!v) assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, CNC_FORMAT_BCRS2), CNC_OK);
    solve_or_skip(&messy, 2, b, x);
    const double d = rel_diff(2 * n, x, ref);
    printf("1-based, %s: |x - x_dense| / |x_dense| = %.2e\n", v ? "mixed" : "bcrs2", d);
    assert_true(d <= (v ? 1e-5 : 1e-7));
    cncDeleteContext(c);
    free(x);
  }
  zcsr_free(&messy);
  free(b), free(ref);
  zcsr_free(&a);
}

/* A diagonal entry below DBL_MIN (0 + 1e-310 i) counts as 1 in the complex Jacobi, as in the
 * device's: 1 / a_ii would overflow and A D^-1 hold Inf and NaN (once refused as NaN in an entry
 * the caller never gave). GMRES solves the 3 x 3 system exactly in 3 iterations. */
static void test_tiny_complex_diagonal(void** unused) {
  (void)unused;
  CNCint64 rp[4] = {0, 2, 5, 7};
  CNCuint col[7] = {0, 1, 0, 1, 2, 1, 2};
  double complex val[7] = {4 + I, -1, 1, 1e-310 * I, 1, -1, 4 + I};
  zcsr a = {3, rp, col, val, 0};
  const double complex b[3] = {1, 2 - I, 3 * I};
  double complex ref[3], x[3] = {0, 0, 0};
  dense_solve(&a, b, ref);
  CNCcontext c = new_context(CNC_GMRES, CNC_DOUBLE, 1e-12);
  solve_or_skip(&a, 1, b, x);
  const double d = rel_diff(3, x, ref);
  printf("|x - x_dense| / |x_dense| = %.2e\n", d);
  assert_true(d <= 1e-10);
  cncDeleteContext(c);
}

/* The log's messages of level g_keep_level, one a line. */
static char g_log[8192];
static int g_keep_level = CNC_LOG_WARNING;
static void keep_log(int level, const char* message, void* user_data) {
  (void)user_data;
  if (level == g_keep_level && strlen(g_log) + strlen(message) + 2 < sizeof g_log) {
    strcat(g_log, message);
    strcat(g_log, "\n");
  }
}

/* Jacobi on the complex diagonal is exact on a diagonal matrix: A D^-1 = I, so GMRES and
 * BiCGSTAB end after one iteration (Jacobi on the real parts would not: the diagonal's phases
 * reach +-3 rad, some real parts negative or near 0, a_00 = 3i has none). Through zcsr (D^-1
 * applied by the device to the vectors, as the log says) and with BCRS2 forced (A D^-1 built on
 * the host); x against b / a_ii, and no diagonal entry counted as zero (a_00's real part is). */
static void test_complex_jacobi_exact(void** unused) {
  (void)unused;
  enum { n = 300 };
  CNCint64 rp[n + 1];
  CNCuint col[n];
  double complex val[n], b[n], x[n];
  for (int i = 0; i < n; ++i) {
    rp[i] = i, col[i] = (CNCuint)i;
    val[i] = (1.0 + i % 7) * cexp(I * (-3.0 + 6.0 * i / (n - 1)));
    b[i] = 1.0 + 0.5 * i / n - 0.25 * I * (i % 5);
  }
  val[0] = 3.0 * I;
  rp[n] = n;
  zcsr a = {n, rp, col, val, 0};
  const CNCenum solvers[2] = {CNC_GMRES, CNC_BICGSTAB};
  const CNCenum formats[2] = {CNC_FORMAT_AUTO, CNC_FORMAT_BCRS2};
  for (int s = 0; s < 2; ++s)
    for (int f = 0; f < 2; ++f) {
      CNCcontext c = new_context(solvers[s], CNC_DOUBLE, 1e-12);
      assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, (CNCint)formats[f]), CNC_OK);
      g_log[0] = 0, g_keep_level = CNC_LOG_INFO;
      assert_int_equal(cncSetLogCallback(keep_log, NULL), CNC_OK);
      for (int i = 0; i < n; ++i) x[i] = 0;
      solve_or_skip(&a, 1, b, x);
      CNCint it = 0, zeros = -1;
      assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &it), CNC_OK);
      assert_int_equal(cncGetIntegerv(CNC_ZERO_DIAGONALS, &zeros), CNC_OK);
      assert_int_equal(zeros, 0);
      g_keep_level = CNC_LOG_WARNING;
      assert_non_null(
          strstr(g_log, f ? "D^-1 applied to the matrix" : "Jacobi on the complex diagonal\n"));
      double worst = 0;
      for (int i = 0; i < n; ++i)
        worst = fmax(worst, cabs(x[i] - b[i] / val[i]) / cabs(b[i] / val[i]));
      printf("%s, %s: %d iteration(s), max relative error %.2e\n", s ? "BiCGSTAB" : "GMRES",
             f ? "BCRS2 (A D^-1 on the host)" : "zcsr", it, worst);
      if (it != 1) fail_msg("%d iterations on a diagonal matrix (want 1)", it);
      assert_true(worst <= 1e-12);
      cncDeleteContext(c);
    }
}

/* The complex diagonal follows the ordering: a diagonal of widely varying phases coupled along
 * a chain whose unknowns are numbered at random, solved in the caller's order and with RCM
 * forced. The two are the same system renumbered, so they take the same iterations (within 1)
 * when D^-1 is renumbered with A, b and x; each against the dense solve. */
static void test_complex_jacobi_reordered(void** unused) {
  (void)unused;
  enum { n = 400 };
  CNCuint perm[n];
  for (int i = 0; i < n; ++i) perm[i] = (CNCuint)i;
  unsigned s = 12345u;
  for (int i = n - 1; i > 0; --i) { /* a fixed shuffle */
    s = s * 1103515245u + 12345u;
    const int j = (int)((s >> 8) % (unsigned)(i + 1));
    const CNCuint t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  CNCint64 rp[n + 1];
  CNCuint col[3 * n];
  double complex val[3 * n];
  /* Row perm[i] holds the chain's node i: its diagonal, then its neighbours i - 1 and i + 1,
   * columns sorted. */
  CNCuint node_of[n];
  for (int i = 0; i < n; ++i) node_of[perm[i]] = (CNCuint)i;
  CNCint64 t = 0;
  for (int r = 0; r < n; ++r) {
    rp[r] = t;
    const int i = (int)node_of[r];
    CNCuint cs[3];
    double complex vs[3];
    int m = 0;
    cs[m] = (CNCuint)r, vs[m++] = (1.0 + i % 7) * cexp(I * (-3.0 + 6.0 * i / (n - 1)));
    if (i > 0) cs[m] = perm[i - 1], vs[m++] = 0.3 + 0.1 * I;
    if (i < n - 1) cs[m] = perm[i + 1], vs[m++] = 0.3 - 0.2 * I;
    for (int u = 0; u < m; ++u) /* sort the row's columns */
      for (int w = u + 1; w < m; ++w)
        if (cs[w] < cs[u]) {
          const CNCuint tc = cs[u];
          const double complex tv = vs[u];
          cs[u] = cs[w], vs[u] = vs[w], cs[w] = tc, vs[w] = tv;
        }
    for (int u = 0; u < m; ++u) col[t] = cs[u], val[t] = vs[u], ++t;
  }
  rp[n] = t;
  zcsr a = {n, rp, col, val, 0};
  double complex b[n], ref[n], x[n];
  for (int i = 0; i < n; ++i) b[i] = 1.0 - 0.5 * I * (i % 3);
  dense_solve(&a, b, ref);
  const CNCenum orders[2] = {CNC_REORDER_NONE, CNC_REORDER_RCM};
  CNCint its[2] = {0, 0};
  for (int o = 0; o < 2; ++o) {
    CNCcontext c = new_context(CNC_GMRES, CNC_DOUBLE, 1e-12);
    assert_int_equal(cncSolverParameteri(CNC_REORDER, (CNCint)orders[o]), CNC_OK);
    for (int i = 0; i < n; ++i) x[i] = 0;
    solve_or_skip(&a, 1, b, x);
    CNCint used = 0;
    assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &its[o]), CNC_OK);
    assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
    assert_int_equal(used, (CNCint)orders[o]);
    const double d = rel_diff(n, x, ref);
    printf("%s: %d iterations, |x - x_dense| / |x_dense| = %.2e\n", o ? "RCM" : "caller's order",
           its[o], d);
    assert_true(d <= 1e-9);
    cncDeleteContext(c);
  }
  if (abs(its[1] - its[0]) > 1) fail_msg("%d iterations reordered, %d not", its[1], its[0]);
}

/* A diagonal entry above DBL_MIN but so small that A D^-1 overflows (1e10 / 1e-300): |D^-1| is
 * beyond 2^500, so A D^-1 is built and checked on the host, and as it overflows the system is
 * solved unscaled, Jacobi on the real parts of the diagonal, and a warning says so. Checked
 * against the dense solve; GMRES solves the 3 x 3 system in 3 iterations. */
static void test_complex_scaling_overflow(void** unused) {
  (void)unused;
  CNCint64 rp[4] = {0, 2, 5, 7};
  CNCuint col[7] = {0, 1, 0, 1, 2, 1, 2};
  double complex val[7] = {1e-300 * I, 1, 1e10, 4, 1, 1, 4 + I};
  zcsr a = {3, rp, col, val, 0};
  const double complex b[3] = {1, 2 - I, 3 * I};
  double complex ref[3], x[3] = {0, 0, 0};
  dense_solve(&a, b, ref);
  CNCcontext c = new_context(CNC_GMRES, CNC_DOUBLE, 1e-12);
  g_log[0] = 0;
  assert_int_equal(cncSetLogCallback(keep_log, NULL), CNC_OK);
  solve_or_skip(&a, 1, b, x);
  const double d = rel_diff(3, x, ref);
  printf("|x - x_dense| / |x_dense| = %.2e; warning: %s", d, g_log);
  assert_true(d <= 1e-8);
  assert_non_null(strstr(g_log, "overflows double: solved unscaled"));
  cncDeleteContext(c);
}

/* The kept system follows the caller's arrays: new values in the same arrays (same pattern) are
 * solved with those values, and a kept system outlives the arrays it was made from (freed
 * here; a copy of the same content then reuses it). Each against the dense solve. */
static void check_dense(const zcsr* a, const double complex* b, const double complex* x,
                        const char* what) {
  double complex* ref = (double complex*)malloc(a->n * sizeof(double complex));
  dense_solve(a, b, ref);
  const double d = rel_diff(a->n, x, ref);
  printf("%s: |x - x_dense| / |x_dense| = %.2e\n", what, d);
  if (!(d <= 1e-9)) fail_msg("%s: %.3e", what, d);
  free(ref);
}

static void test_kept_system_follows_arrays(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(14, 12, 0.05, 0.0, 0);
  const size_t n = a.n;
  double complex* b = random_complex(n, 23);
  double complex* x = (double complex*)calloc(n, sizeof(double complex));
  CNCcontext c = new_context(CNC_CG, CNC_DOUBLE, 1e-12);
  solve_or_skip(&a, 1, b, x);
  check_dense(&a, b, x, "first solve");
  for (CNCuint i = 0; i < a.n; ++i) /* new values, same pattern, same arrays */
    for (CNCint64 t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t)
      if (a.col[t] == i) a.val[t] += 1.0;
  memset(x, 0, n * sizeof(double complex));
  solve_or_skip(&a, 1, b, x);
  check_dense(&a, b, x, "new values in the same arrays");
  /* The arrays go; a copy of the same content is solved by the kept system. */
  zcsr copy = a;
  copy.row_ptr = (CNCint64*)malloc((n + 1) * sizeof(CNCint64));
  copy.col = (CNCuint*)malloc((size_t)a.row_ptr[n] * sizeof(CNCuint));
  copy.val = (double complex*)malloc((size_t)a.row_ptr[n] * sizeof(double complex));
  memcpy(copy.row_ptr, a.row_ptr, (n + 1) * sizeof(CNCint64));
  memcpy(copy.col, a.col, (size_t)a.row_ptr[n] * sizeof(CNCuint));
  memcpy(copy.val, a.val, (size_t)a.row_ptr[n] * sizeof(double complex));
  for (CNCint64 t = 0; t < a.row_ptr[n]; ++t) a.val[t] = NAN; /* what a freed block may hold */
  zcsr_free(&a);
  memset(x, 0, n * sizeof(double complex));
  solve_or_skip(&copy, 1, b, x);
  check_dense(&copy, b, x, "a copy, the first arrays freed");
  cncDeleteContext(c);
  free(b), free(x);
  zcsr_free(&copy);
}

/* Refused with `status` and a message holding `words` (nrhs systems, b of nrhs * n); x
 * unchanged. */
static void expect_refused_k(const zcsr* a, CNCuint nrhs, const double complex* b, CNCstatus status,
                             const char* words) {
  double complex x[400];
  assert_true(nrhs * a->n <= 400);
  for (CNCuint i = 0; i < nrhs * a->n; ++i) x[i] = 3.0 - 2.0 * I;
  const CNCstatus st = solve(a, nrhs, b, x);
  const char* m = cncGetLastErrorMessage();
  printf("%s\n", m);
  if (st == CNC_ERR_BACKEND_UNAVAILABLE) exit(77);
  if (st != status || !strstr(m, words))
    fail_msg("status %d (wanted %d), message \"%s\" (wanted \"%s\")", st, status, m, words);
  for (CNCuint i = 0; i < nrhs * a->n; ++i) assert_true(x[i] == 3.0 - 2.0 * I);
  assert_int_equal(cncClearError(), CNC_OK);
}

static void expect_refused(const zcsr* a, const double complex* b, CNCstatus status,
                           const char* words) {
  expect_refused_k(a, 1, b, status, words);
}

/* A kept system made for BiCGSTAB of a matrix that is not Hermitian, then asked for CG with the
 * same arrays: refused as any first CG solve of it is (not reused unchecked). */
/* A system solved and kept by BiCGSTAB (a diagonal that is not real: fine for it), then asked for
 * `solver`, which needs A Hermitian positive definite: checked then, refused, x unchanged. */
static void expect_kept_system_checked(CNCenum solver, unsigned seed) {
  zcsr a = magnetic_laplacian(10, 10, 0.2, 1.5, 0);
  double complex* b = random_complex(a.n, seed);
  double complex* x = (double complex*)calloc(a.n, sizeof(double complex));
  CNCcontext c = new_context(CNC_BICGSTAB, CNC_DOUBLE, 1e-10);
  solve_or_skip(&a, 1, b, x);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, solver), CNC_OK);
  expect_refused(&a, b, CNC_ERR_INVALID_VALUE, "is not real");
  cncDeleteContext(c);
  free(b), free(x);
  zcsr_free(&a);
}

static void test_kept_system_checked_for_cg(void** unused) {
  (void)unused;
  expect_kept_system_checked(CNC_CG, 29);
}

/* Block CG needs A Hermitian positive definite as CG does: a matrix that is not is refused by
 * both with the same status and message, x unchanged: through the zcsr path (one and two
 * right-hand sides), the real-equivalent one (BCRS2 forced), and for a kept system made for
 * BiCGSTAB then asked for block CG. */
static void test_block_cg_checked_hermitian(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(10, 10, 0.1, 0.0, 0);
  double complex* b = random_complex(2 * a.n, 31);
  const CNCenum solvers[2] = {CNC_CG, CNC_BLOCK_CG};
  for (int s = 0; s < 2; ++s) {
    CNCcontext c = new_context(solvers[s], CNC_DOUBLE, 1e-10);
    const double complex keep = a.val[1];
    a.val[1] = conj(keep); /* an off-diagonal entry that is not the conjugate of its mirror */
    expect_refused(&a, b, CNC_ERR_INVALID_VALUE, "not Hermitian");
    expect_refused_k(&a, 2, b, CNC_ERR_INVALID_VALUE, "not Hermitian");
    assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, CNC_FORMAT_BCRS2), CNC_OK);
    expect_refused_k(&a, 2, b, CNC_ERR_INVALID_VALUE, "not Hermitian");
    a.val[1] = keep;
    /* Restored, it solves. */
    double complex* x = (double complex*)calloc(2 * a.n, sizeof(double complex));
    solve_or_skip(&a, 2, b, x);
    free(x);
    cncDeleteContext(c);
  }
  free(b);
  zcsr_free(&a);
  expect_kept_system_checked(CNC_BLOCK_CG, 31);
}

static void test_bad_input(void** unused) {
  (void)unused;
  zcsr a = magnetic_laplacian(10, 10, 0.1, 0.0, 0);
  double complex* b = random_complex(a.n, 5);
  CNCcontext c = new_context(CNC_CG, CNC_DOUBLE, 1e-10);
  /* NaN in an imaginary part of the values, then of b. */
  double complex keep = a.val[7];
  ((double*)a.val)[2 * 7 + 1] = NAN;
  expect_refused(&a, b, CNC_ERR_NOT_FINITE, "imaginary part of entry 7");
  a.val[7] = keep;
  keep = b[4];
  ((double*)b)[2 * 4 + 1] = INFINITY;
  expect_refused(&a, b, CNC_ERR_NOT_FINITE, "b[9]");
  b[4] = keep;
  /* An off-diagonal entry that is not the conjugate of its mirror. */
  keep = a.val[1];
  a.val[1] = conj(keep);
  expect_refused(&a, b, CNC_ERR_INVALID_VALUE, "not Hermitian");
  a.val[1] = keep;
  /* A pattern that is not symmetric: row 0's entry (0, 10) moved to (0, 11), whose mirror
   * (11, 0) is absent (rows stay sorted), then the same in the lower triangle: row 10's
   * entry (10, 0) moved to (10, 1), whose mirror (1, 10) is absent. */
  const CNCuint c2 = a.col[2];
  assert_int_equal(c2, 10);
  a.col[2] = 11;
  expect_refused(&a, b, CNC_ERR_INVALID_VALUE, "not Hermitian");
  a.col[2] = c2;
  const CNCint64 t10 = a.row_ptr[10];
  assert_int_equal(a.col[t10], 0);
  a.col[t10] = 1;
  expect_refused(&a, b, CNC_ERR_INVALID_VALUE, "not Hermitian");
  a.col[t10] = 0;
  {
    /* A left entry with no mirror and nothing right of the diagonal to find it from. */
    CNCint64 rp[4] = {0, 1, 3, 4};
    CNCuint cl[4] = {0, 0, 1, 2};
    double complex v[4] = {2, 0.5 + 0.25 * I, 2, 2};
    const zcsr lone = {3, rp, cl, v, 0};
    double complex b3[3] = {1, 1, 1};
    expect_refused(&lone, b3, CNC_ERR_INVALID_VALUE, "a_1,0 = (0.5, 0.25) but a_0,1 = (0, 0)");
    /* Subnormal mirrors are Hermitian too (their scale would overflow 1 / max part). */
    CNCint64 rp2[3] = {0, 2, 4};
    CNCuint cl2[4] = {0, 1, 0, 1};
    double complex v2[4] = {2, 1e-310 - 3e-311 * I, 1e-310 + 3e-311 * I, 2};
    const zcsr tiny = {2, rp2, cl2, v2, 0};
    double complex x2[2] = {0, 0};
    solve_or_skip(&tiny, 1, b3, x2);
  }
  /* A complex diagonal, then a negative one (row 0's diagonal is its first entry). */
  keep = a.val[0];
  a.val[0] = creal(keep) + 0.5 * I;
  expect_refused(&a, b, CNC_ERR_INVALID_VALUE, "not real");
  a.val[0] = -creal(keep);
  expect_refused(&a, b, CNC_ERR_INVALID_VALUE, "not > 0");
  a.val[0] = keep;
  /* A column out of range. */
  const CNCuint col = a.col[3];
  a.col[3] = a.n;
  expect_refused(&a, b, CNC_ERR_INDEX_OUT_OF_RANGE, "col_idx[3]");
  a.col[3] = col;
  /* The matrix, restored, solves. */
  double complex* x = (double complex*)calloc(a.n, sizeof(double complex));
  solve_or_skip(&a, 1, b, x);
  cncDeleteContext(c);
  free(b), free(x);
  zcsr_free(&a);
}

int main(int argc, char** argv) {
  if (argc >= 2)
    g_backend = strcmp(argv[1], "cuda") == 0     ? CNC_BACKEND_CUDA
                : strcmp(argv[1], "opencl") == 0 ? CNC_BACKEND_OPENCL
                                                 : CNC_BACKEND_CPU;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bad_input),
                                     cmocka_unit_test(test_hermitian_cg_vs_dense),
                                     cmocka_unit_test(test_hermitian_residual),
                                     cmocka_unit_test(test_general_complex_vs_dense),
                                     cmocka_unit_test(test_indefinite_complex_vs_dense),
                                     cmocka_unit_test(test_tiny_complex_diagonal),
                                     cmocka_unit_test(test_complex_scaling_overflow),
                                     cmocka_unit_test(test_complex_jacobi_exact),
                                     cmocka_unit_test(test_complex_jacobi_reordered),
                                     cmocka_unit_test(test_iterate_and_kept_matrix),
                                     cmocka_unit_test(test_kept_system_follows_arrays),
                                     cmocka_unit_test(test_kept_system_checked_for_cg),
                                     cmocka_unit_test(test_block_cg_checked_hermitian),
                                     cmocka_unit_test(test_same_iterations_as_complex_pcg)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
