/* What a solve reports. Its numerical outcomes, which are not errors: indefinite matrix or
 * preconditioner, a singular inconsistent system, b = 0, zero diagonals, the iteration limit (the
 * partial answer's residual checked by the test). The progress and log callbacks (called in order,
 * silent once removed; a progress callback that stops the solve). The statistics (times, bytes,
 * nonzeros, backend, device, reason and state). */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      /* Numerical outcomes. */
      cmocka_unit_test(test_indefinite),
      cmocka_unit_test(test_singular_inconsistent),
      cmocka_unit_test(test_zero_rhs),
      cmocka_unit_test(test_zero_diagonals),
      cmocka_unit_test(test_max_iterations),
      /* Callbacks. */
      cmocka_unit_test(test_progress_callback),
      cmocka_unit_test(test_log_callback),
      /* Statistics. */
      cmocka_unit_test(test_statistics),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
