/* cncGetCurrentIterate: inside the progress callback, the iterate is the solve's x in the caller's
 * numbering and scale. Checked against the test's own residual: ||b - A x_k|| / ||b|| recomputed
 * here from x_k must equal the relative residual the callback is given (CG's recursive residual
 * agrees with the true one to rounding), also when cnc reorders the unknowns (RCM forced) and when
 * it scales b (|b| near 2^1000); a solve stopped by the callback returns the last iterate it saw;
 * locked variables keep their values in cncSolve's iterate; BiCGSTAB's iterate decreases the
 * residual to convergence; GMRES, a call outside a callback and x = NULL are refused with a
 * status. On every backend present. */
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
#include "solve_support.h"
#include "test_support.h"

typedef struct {
  const ts_csr* a;
  const double* b;
  double scale; /* b's magnitude: the residual is computed on x / scale and b / scale */
  double* tmp;  /* len values */
  size_t len;   /* values cncGetCurrentIterate writes */
  double* x;    /* the last iterate read */
  int calls, stop_at;
  double worst;    /* max |own residual - reported| / reported over the calls */
  double last_own; /* own residual of the last iterate */
  CNCstatus status;
} probe;

static int on_progress(CNCint iteration, double rel, void* user) {
  probe* p = (probe*)user;
  ++p->calls;
  memset(p->x, 0xff, sizeof(double) * p->len); /* NaN: every value must be written */
  p->status = cncGetCurrentIterate(p->x);
  if (p->status != CNC_OK) return 1;
  for (size_t i = 0; i < p->len; ++i) p->x[i] /= p->scale, p->tmp[i] = p->b[i] / p->scale;
  const double own = ts_rel_residual(p->a, p->x, p->tmp);
  for (size_t i = 0; i < p->len; ++i) p->x[i] *= p->scale; /* exact: scale is a power of 2 */
  p->last_own = own;
  if (rel > 1e-13) {
    const double d = fabs(own - rel) / rel;
    if (!(d <= p->worst)) p->worst = d; /* NaN sticks */
  }
  return p->stop_at > 0 && iteration >= p->stop_at;
}

static CNCuint* columns(const ts_csr* a) {
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)a->nnz);
  assert_non_null(col);
  for (int64_t e = 0; e < a->nnz; ++e) col[e] = (CNCuint)a->col[e];
  return col;
}

static void csr_case(CNCenum backend, const char* name, CNCenum reorder, double scale,
                     CNCenum solver) {
  ts_csr a = ts_poisson_3d(20);
  const size_t n = (size_t)a.n;
  double* b = malloc(sizeof(double) * n);
  double* x = calloc(n, sizeof(double));
  double* it = malloc(sizeof(double) * n);
  double* tmp = malloc(sizeof(double) * n);
  assert_true(b && x && it && tmp);
  ts_rng r;
  ts_rng_seed(&r, 11);
  for (size_t i = 0; i < n; ++i) b[i] = scale * (ts_rng_uniform(&r) - 0.4);
  CNCuint* col = columns(&a);
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)backend), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_REORDER, (CNCint)reorder), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)solver), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_CHECK_INTERVAL, 1), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-9), CNC_OK);
  probe p = {&a, b, scale, tmp, n, it, 0, 25, 0.0, 0.0, CNC_OK};
  assert_int_equal(cncSetProgressCallback(on_progress, &p), CNC_OK);
  const CNCstatus st = cncSolveCSR((CNCuint)n, a.row_ptr, col, a.val, 0, 1, b, x);
  if (st != CNC_OK) fail_msg("%s: cncSolveCSR: %s", name, cncGetErrorMessage());
  if (p.status != CNC_OK) fail_msg("%s: cncGetCurrentIterate: %s", name, cncGetErrorMessage());
  CNCint reason = 0, reorder_used = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &reorder_used), CNC_OK);
  printf("%s: %d callbacks, own vs reported residual within %.2e, reorder 0x%x\n", name, p.calls,
         p.worst, (unsigned)reorder_used);
  assert_int_equal(reason, CNC_REASON_STOPPED);
  assert_true(p.calls >= 10);
  if (reorder == CNC_REORDER_RCM) assert_int_equal(reorder_used, CNC_REORDER_RCM);
  if (solver == CNC_CG) { /* the recursive residual is the true one, to rounding */
    if (!(p.worst <= 1e-6)) fail_msg("%s: residual of the iterate off by %.3e", name, p.worst);
  } else { /* BiCGSTAB: the callback's residual is the method's estimate; x must improve */
    assert_true(p.last_own < 0.5);
    assert_true(p.worst < 1.0);
  }
  /* The stopped solve returns the iterate the callback saw last. */
  if (ts_rel_diff(n, x, it) > 1e-14)
    fail_msg("%s: returned x differs from the last iterate by %.3e", name, ts_rel_diff(n, x, it));
  cncDeleteContext(c);
  free(col);
  free(b);
  free(x);
  free(it);
  free(tmp);
  ts_csr_free(&a);
}

static void check_backend(CNCenum backend, const char* name) {
  if (!backend_present(backend)) {
    printf("%s backend absent here: skipped\n", name);
    return;
  }
  char what[96];
  snprintf(what, sizeof what, "%s, CG", name);
  csr_case(backend, what, CNC_REORDER_NONE, 1.0, CNC_CG);
  snprintf(what, sizeof what, "%s, CG, RCM", name);
  csr_case(backend, what, CNC_REORDER_RCM, 1.0, CNC_CG);
  snprintf(what, sizeof what, "%s, CG, b ~ 2^1000 (scaled)", name);
  csr_case(backend, what, CNC_REORDER_RCM, 0x1p1000, CNC_CG);
  snprintf(what, sizeof what, "%s, BiCGSTAB, RCM", name);
  csr_case(backend, what, CNC_REORDER_RCM, 1.0, CNC_BICGSTAB);
}

static void test_cpu(void** unused) {
  (void)unused;
  check_backend(CNC_BACKEND_CPU, "cpu");
}
static void test_opencl(void** unused) {
  (void)unused;
  check_backend(CNC_BACKEND_OPENCL, "opencl");
}
static void test_cuda(void** unused) {
  (void)unused;
  check_backend(CNC_BACKEND_CUDA, "cuda");
}

/* cncSolve with locked variables: the iterate holds every variable, the locked ones at their
 * values, and the free ones satisfy the callback's residual on the reduced system. */
typedef struct {
  int32_t n;
  double* x;
  int calls, bad_locks;
  CNCstatus status;
} lock_probe;

static int on_progress_locked(CNCint iteration, double rel, void* user) {
  (void)iteration, (void)rel;
  lock_probe* p = (lock_probe*)user;
  ++p->calls;
  p->status = cncGetCurrentIterate(p->x);
  if (p->status != CNC_OK) return 1;
  for (int32_t i = 0; i < p->n; i += 7)
    if (p->x[i] != 0.5 * i) ++p->bad_locks;
  return 0;
}

static void test_locked_variables(void** unused) {
  (void)unused;
  ts_csr a = ts_laplacian_2d(30, 30);
  const int32_t n = a.n;
  double* x = calloc((size_t)n, sizeof(double));
  double* it = malloc(sizeof(double) * (size_t)n);
  assert_true(x && it);
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
  lock_probe p = {n, it, 0, 0, CNC_OK};
  assert_int_equal(cncSetProgressCallback(on_progress_locked, &p), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  for (int32_t i = 0; i < n; i += 7) {
    assert_int_equal(cncSetVariable((CNCuint)i, 0.5 * i), CNC_OK);
    assert_int_equal(cncLockVariable((CNCuint)i), CNC_OK);
  }
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int32_t i = 0; i < n; ++i) {
    for (int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
      assert_int_equal(cncAddIJCoefficient((CNCuint)i, (CNCuint)a.col[e], a.val[e]), CNC_OK);
    assert_int_equal(cncAddIRightHandSide((CNCuint)i, 1.0), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  if (cncSolve() != CNC_OK) fail_msg("cncSolve: %s", cncGetErrorMessage());
  if (p.status != CNC_OK) fail_msg("cncGetCurrentIterate: %s", cncGetErrorMessage());
  assert_true(p.calls > 0);
  assert_int_equal(p.bad_locks, 0);
  /* The last iterate is (to the last iterations' steps) the solution. */
  for (int32_t i = 0; i < n; ++i) assert_int_equal(cncGetVariable((CNCuint)i, &x[i]), CNC_OK);
  assert_true(ts_rel_diff((size_t)n, it, x) < 1e-3);
  cncDeleteContext(c);
  free(x);
  free(it);
  ts_csr_free(&a);
}

/* Refusals: outside a callback, x = NULL, GMRES (no iterate between cycles). */
static int on_progress_refused(CNCint iteration, double rel, void* user) {
  (void)iteration, (void)rel;
  CNCstatus* s = (CNCstatus*)user;
  double x[64];
  s[0] = cncGetCurrentIterate(x);
  s[1] = cncGetCurrentIterate(NULL);
  return 1;
}

static void test_refusals(void** unused) {
  (void)unused;
  double x[64] = {0};
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncGetCurrentIterate(x), CNC_ERR_STATE);
  assert_non_null(strstr(cncGetErrorMessage(), "progress callback"));
  ts_csr a = ts_laplacian_2d(8, 8);
  double b[64], sol[64] = {0};
  for (int i = 0; i < 64; ++i) b[i] = 1.0;
  CNCuint* col = columns(&a);
  CNCstatus seen[2] = {CNC_OK, CNC_OK};
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_GMRES), CNC_OK);
  assert_int_equal(cncSetProgressCallback(on_progress_refused, seen), CNC_OK);
  assert_int_equal(cncSolveCSR(64, a.row_ptr, col, a.val, 0, 1, b, sol), CNC_OK);
  assert_int_equal(seen[0], CNC_ERR_STATE);
  assert_int_equal(seen[1], CNC_ERR_NULL_POINTER);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_STOPPED);
  cncDeleteContext(c);
  free(col);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu),      cmocka_unit_test(test_opencl),
      cmocka_unit_test(test_cuda),     cmocka_unit_test(test_locked_variables),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
