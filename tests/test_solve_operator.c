/* Matrix-free solves and the caller's preconditioner (cncSetOperator, cncSolveOperator). Checked
 * against independent references computed here: a dense Cholesky solve, the test's own residual
 * ||b - A x|| / ||b||, and the same method run by cnc on the assembled matrix (the iteration counts
 * must agree: the operator path runs the same CG). The operator is shown to be the one applied
 * (a scaled operator scales the answer; its calls are counted), locked variables keep their
 * values under cncSolve, and every refusal (no operator, a failing operator, parameters the host
 * solve cannot honour, NULL, NaN) is a status with x left as it was. */
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
  double scale; /* y = scale * A x */
  int calls;    /* how many times cnc called it */
  int fail_at;  /* > 0: return fail_code on that call */
  int fail_code;
  CNCuint n_seen; /* the n it was called with */
} op_data;

static int apply_matrix(const double* x, double* y, CNCuint n, void* user) {
  op_data* d = (op_data*)user;
  ++d->calls;
  d->n_seen = n;
  if (d->fail_at > 0 && d->calls == d->fail_at) return d->fail_code;
  ts_csr_spmv(d->a, x, y);
  if (d->scale != 1.0)
    for (CNCuint i = 0; i < n; ++i) y[i] *= d->scale;
  return 0;
}

typedef struct {
  const double* inv_diag;
  int calls;
} precond_data;

static int apply_jacobi(const double* x, double* y, CNCuint n, void* user) {
  precond_data* d = (precond_data*)user;
  ++d->calls;
  for (CNCuint i = 0; i < n; ++i) y[i] = d->inv_diag[i] * x[i];
  return 0;
}

static double* inverse_diagonal(const ts_csr* a) {
  double* d = malloc(sizeof(double) * (size_t)a->n);
  assert_non_null(d);
  for (int32_t i = 0; i < a->n; ++i) d[i] = 1.0 / ts_csr_get(a, i, i);
  return d;
}

/* D A D with D spread over two decades: Jacobi matters there. */
static ts_csr badly_scaled(int32_t nx) {
  ts_csr a = ts_laplacian_2d(nx, nx);
  ts_rng r;
  ts_rng_seed(&r, 17);
  double* d = malloc(sizeof(double) * (size_t)a.n);
  assert_non_null(d);
  for (int32_t i = 0; i < a.n; ++i) d[i] = pow(10.0, 2.0 * ts_rng_uniform(&r));
  for (int32_t i = 0; i < a.n; ++i)
    for (int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) a.val[e] *= d[i] * d[a.col[e]];
  free(d);
  return a;
}

/* The same system through cncSolveCSR on the CPU backend, with `precond`: its iterations. */
static CNCint csr_iterations(const ts_csr* a, const double* b, CNCenum precond, double thr) {
  CNCcontext c = cncNewContext();
  CNCcontext prev = cncGetCurrent();
  cncMakeCurrent(c);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, precond), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, thr), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_REORDER, CNC_REORDER_NONE), CNC_OK);
  int64_t* rp = malloc(sizeof(int64_t) * (size_t)(a->n + 1));
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)a->nnz);
  double* x = calloc((size_t)a->n, sizeof(double));
  assert_true(rp && col && x);
  for (int32_t i = 0; i <= a->n; ++i) rp[i] = a->row_ptr[i];
  for (int64_t e = 0; e < a->nnz; ++e) col[e] = (CNCuint)a->col[e];
  assert_int_equal(cncSolveCSR((CNCuint)a->n, rp, col, a->val, 0, 1, b, x), CNC_OK);
  const stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  free(rp), free(col), free(x);
  cncMakeCurrent(prev);
  cncDeleteContext(c);
  return s.iters;
}

/* Matrix-free CG: the dense solution, and the iterations of CG on the assembled matrix. */
static void matrix_free_cg(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(24, 24);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 1);
  double* x = calloc(n, sizeof(double));
  double* ref = dense_reference(&a, b);
  op_data d = {&a, 1.0, 0, 0, 0, 0};
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, &d), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x), CNC_OK);
  const stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_int_equal(s.solver_used, CNC_CG);
  assert_int_equal(s.backend_used, CNC_BACKEND_CPU);
  assert_true(d.n_seen == (CNCuint)n);
  assert_true(d.calls >= s.iters && s.iters > 10);
  assert_true(ts_rel_diff(n, x, ref) < 1e-8);
  assert_true(ts_rel_residual(&a, x, b) <= 1e-10 * 2.0);
  /* The same CG without preconditioner on the assembled matrix: the same iterations (rounding
   * may move the last one). */
  const CNCint it = csr_iterations(&a, b, CNC_PRECOND_NONE, 1e-10);
  assert_true(abs(it - s.iters) <= 1);
  /* An operator scaled by 4 is what is solved: x / 4. */
  op_data d4 = {&a, 4.0, 0, 0, 0, 0};
  double* x4 = calloc(n, sizeof(double));
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, &d4), CNC_OK);
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x4), CNC_OK);
  for (size_t i = 0; i < n; ++i) x4[i] *= 4.0;
  assert_true(ts_rel_diff(n, x4, ref) < 1e-8);
  free(x4), free(b), free(x), free(ref);
  ts_csr_free(&a);
}

/* b of extreme magnitude (1e-300: its squared norm underflows to 0; 1e+300: overflows): solved
 * scaled by a power of two as cncSolveCSR does, x scaled back, the same digits as b of order 1. */
static void extreme_right_hand_sides(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(16, 16);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 3);
  double* ref = dense_reference(&a, b);
  op_data d = {&a, 1.0, 0, 0, 0, 0};
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, &d), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  const double scales[2] = {1e-300, 1e+300};
  for (int t = 0; t < 2; ++t) {
    double* bs = malloc(n * sizeof(double));
    double* x = calloc(n, sizeof(double));
    for (size_t i = 0; i < n; ++i) bs[i] = b[i] * scales[t];
    assert_int_equal(cncSolveOperator((CNCuint)n, 1, bs, x), CNC_OK);
    const stats s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    assert_true(s.iters > 10); /* not a "converged" x = 0 */
    for (size_t i = 0; i < n; ++i) x[i] /= scales[t];
    assert_true(ts_rel_diff(n, x, ref) < 1e-8);
    free(bs), free(x);
  }
  free(b), free(ref);
  ts_csr_free(&a);
}

/* The caller's preconditioner: Jacobi through it takes CG's Jacobi iterations, matrix-free, on
 * cncSolveCSR and on cncSolve; far fewer than without on a badly scaled matrix. */
static void user_preconditioner(void** state) {
  (void)state;
  ts_csr a = badly_scaled(20);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 2);
  double* x = calloc(n, sizeof(double));
  double* inv = inverse_diagonal(&a);
  const CNCint jacobi_it = csr_iterations(&a, b, CNC_PRECOND_JACOBI, 1e-9);
  const CNCint none_it = csr_iterations(&a, b, CNC_PRECOND_NONE, 1e-9);
  assert_true(jacobi_it * 2 < none_it);
  op_data d = {&a, 1.0, 0, 0, 0, 0};
  precond_data p = {inv, 0};
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-9), CNC_OK);
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, &d), CNC_OK);
  assert_int_equal(cncSetOperator(CNC_OPERATOR_PRECONDITIONER, apply_jacobi, &p), CNC_OK);
  CNCint pre = 0;
  assert_int_equal(cncGetIntegerv(CNC_PRECONDITIONER, &pre), CNC_OK);
  assert_int_equal(pre, CNC_PRECOND_USER);
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x), CNC_OK);
  stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_true(abs(s.iters - jacobi_it) <= 1);
  assert_true(p.calls >= s.iters);
  assert_true(ts_rel_residual(&a, x, b) <= 2e-9);

  /* cncSolveCSR with the caller's preconditioner (the matrix operator cleared): the CSR's
   * product on the host, the caller's M. */
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, NULL, NULL), CNC_OK);
  int64_t* rp = malloc(sizeof(int64_t) * (n + 1));
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)a.nnz);
  assert_true(rp && col);
  for (size_t i = 0; i <= n; ++i) rp[i] = a.row_ptr[i];
  for (int64_t e = 0; e < a.nnz; ++e) col[e] = (CNCuint)a.col[e];
  memset(x, 0, sizeof(double) * n);
  p.calls = 0;
  assert_int_equal(cncSolveCSR((CNCuint)n, rp, col, a.val, 0, 1, b, x), CNC_OK);
  s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_true(abs(s.iters - jacobi_it) <= 1);
  assert_true(p.calls >= s.iters);
  assert_int_equal(s.format_used, CNC_FORMAT_CSR);
  assert_true(ts_rel_residual(&a, x, b) <= 2e-9);

  /* cncSolve on the assembled system, with the caller's preconditioner. */
  p.calls = 0;
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, a.n), CNC_OK);
  assert_int_equal(ts_assemble(&a, b, 1), 0);
  assert_int_equal(cncSolve(), CNC_OK);
  s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_true(abs(s.iters - jacobi_it) <= 1);
  assert_true(p.calls >= s.iters);
  assert_int_equal(ts_read_x(a.n, 1, x), 0);
  assert_true(ts_rel_residual(&a, x, b) <= 2e-9);

  /* Cleared while selected: back to the default (Jacobi), and USER cannot be chosen again. */
  assert_int_equal(cncSetOperator(CNC_OPERATOR_PRECONDITIONER, NULL, NULL), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_PRECONDITIONER, &pre), CNC_OK);
  assert_int_equal(pre, CNC_PRECOND_JACOBI);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_USER), CNC_ERR_STATE);
  assert_int_equal(cncGetIntegerv(CNC_PRECONDITIONER, &pre), CNC_OK);
  assert_int_equal(pre, CNC_PRECOND_JACOBI);
  free(rp), free(col), free(inv), free(b), free(x);
  ts_csr_free(&a);
}

/* A = tridiag(-1.2, 2.5, -0.8) (nonsymmetric) by BiCGSTAB and GMRES through an operator, several
 * right-hand sides, one of them zero. */
static void nonsymmetric_several(void** state) {
  (void)state;
  const int32_t n = 400;
  int32_t* r = malloc(sizeof(int32_t) * 3 * (size_t)n);
  int32_t* c = malloc(sizeof(int32_t) * 3 * (size_t)n);
  double* v = malloc(sizeof(double) * 3 * (size_t)n);
  assert_true(r && c && v);
  int64_t e = 0;
  for (int32_t i = 0; i < n; ++i) {
    r[e] = i, c[e] = i, v[e++] = 2.5;
    if (i > 0) r[e] = i, c[e] = i - 1, v[e++] = -1.2;
    if (i + 1 < n) r[e] = i, c[e] = i + 1, v[e++] = -0.8;
  }
  ts_csr a = ts_csr_from_coo(n, e, r, c, v);
  const int k = 3;
  double* b = random_vector((size_t)n * k, 3);
  memset(b + n, 0, sizeof(double) * (size_t)n); /* system 1: b = 0 */
  const CNCenum methods[2] = {CNC_BICGSTAB, CNC_GMRES};
  for (int m = 0; m < 2; ++m) {
    double* x = malloc(sizeof(double) * (size_t)n * k);
    for (size_t i = 0; i < (size_t)n * k; ++i) x[i] = 1.0; /* a non-zero guess everywhere */
    op_data d = {&a, 1.0, 0, 0, 0, 0};
    assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, &d), CNC_OK);
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, methods[m]), CNC_OK);
    assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
    assert_int_equal(cncSolveOperator((CNCuint)n, (CNCuint)k, b, x), CNC_OK);
    const stats s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    assert_int_equal(s.solver_used, methods[m]);
    for (int j = 0; j < k; ++j) {
      if (j == 1) {
        for (int32_t i = 0; i < n; ++i) assert_true(x[(size_t)n + (size_t)i] == 0.0);
        continue;
      }
      const double res = ts_rel_residual(&a, x + (size_t)j * n, b + (size_t)j * n);
      assert_true(res <= 2e-10);
    }
    free(x);
  }
  free(r), free(c), free(v), free(b);
  ts_csr_free(&a);
}

/* cncSolve with a matrix operator (OpenNL's nlSetFunction(NL_FUNC_MATRIX)): it replaces the
 * assembled matrix over the free variables; locked variables keep their values. */
typedef struct {
  int32_t n; /* free variables */
  double scale;
  int calls;
} chain_data;

static int apply_chain(const double* x, double* y, CNCuint n, void* user) {
  chain_data* d = (chain_data*)user;
  ++d->calls;
  if ((int32_t)n != d->n) return 99;
  for (int32_t i = 0; i < d->n; ++i) {
    double s = 2.0 * x[i];
    if (i > 0) s -= x[i - 1];
    if (i + 1 < d->n) s -= x[i + 1];
    y[i] = d->scale * s;
  }
  return 0;
}

static void assembled_system_operator(void** state) {
  (void)state;
  const CNCuint nv = 50; /* 0 and 49 locked at 1 and 3: the 48 free ones lie on a line */
  double got[50], want[50];
  for (int pass = 0; pass < 2; ++pass) {
    CNCcontext c = cncNewContext();
    CNCcontext prev = cncGetCurrent();
    cncMakeCurrent(c);
    assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)nv), CNC_OK);
    assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
    assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSetVariable(0, 1.0), CNC_OK);
    assert_int_equal(cncSetVariable(nv - 1, 3.0), CNC_OK);
    assert_int_equal(cncLockVariable(0), CNC_OK);
    assert_int_equal(cncLockVariable(nv - 1), CNC_OK);
    assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
    for (CNCuint i = 0; i < nv; ++i) { /* row i: variable i's (the locked ones' are dropped) */
      assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
      if (i > 0) assert_int_equal(cncCoefficient(i - 1, -1.0), CNC_OK);
      assert_int_equal(cncCoefficient(i, 2.0), CNC_OK);
      if (i + 1 < nv) assert_int_equal(cncCoefficient(i + 1, -1.0), CNC_OK);
      assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
    }
    assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
    chain_data d = {(int32_t)nv - 2, 1.0, 0};
    if (pass == 1) assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_chain, &d), CNC_OK);
    assert_int_equal(cncSolve(), CNC_OK);
    const stats s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    for (CNCuint i = 0; i < nv; ++i)
      assert_int_equal(cncGetVariable(i, &(pass ? got : want)[i]), CNC_OK);
    if (pass == 1) assert_true(d.calls >= s.iters && s.iters > 0);
    cncMakeCurrent(prev);
    cncDeleteContext(c);
  }
  /* The exact answer is the line from 1 to 3. */
  for (CNCuint i = 0; i < nv; ++i) {
    const double line = 1.0 + 2.0 * i / (nv - 1.0);
    assert_true(fabs(want[i] - line) < 1e-9);
    assert_true(fabs(got[i] - line) < 1e-9);
  }
}

/* Refusals: a status and x as it was. */
static void refusals(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(8, 8);
  const size_t n = (size_t)a.n;
  double* b = random_vector(n, 4);
  double* x = random_vector(n, 5);
  double* x0 = malloc(sizeof(double) * n);
  memcpy(x0, x, sizeof(double) * n);
  op_data d = {&a, 1.0, 0, 0, 0, 0};
  /* No matrix operator. */
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x), CNC_ERR_STATE);
  cncClearError();
  assert_int_equal(cncSetOperator(0x123, apply_matrix, &d), CNC_ERR_INVALID_ENUM);
  cncClearError();
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_USER), CNC_ERR_STATE);
  cncClearError();
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, &d), CNC_OK);
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, NULL, x), CNC_ERR_NULL_POINTER);
  assert_int_equal(cncSolveOperator(0, 1, b, x), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncSolveOperator((CNCuint)n, 0, b, x), CNC_ERR_INVALID_VALUE);
  b[3] = NAN;
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x), CNC_ERR_NOT_FINITE);
  b[3] = 0.25;
  assert_int_equal(d.calls, 0);
  cncClearError();
  /* The operator fails on its 5th call: CNC_ERR_CALLBACK, its code in the message. */
  d.fail_at = 5, d.fail_code = 7;
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x), CNC_ERR_CALLBACK);
  assert_non_null(strstr(cncGetErrorMessage(), "returned 7"));
  assert_int_equal(d.calls, 5);
  cncClearError();
  d.fail_at = 0, d.calls = 0;
  /* What the host solve cannot honour, set explicitly: refused, never replaced. */
  const CNCenum bad[5][2] = {{CNC_PRECONDITIONER, CNC_PRECOND_JACOBI},
                             {CNC_PRECISION, CNC_SINGLE},
                             {CNC_BACKEND, CNC_BACKEND_CUDA},
                             {CNC_SOLVER, CNC_CHOLMOD},
                             {CNC_SOLVER, CNC_SUPERLU}};
  for (int t = 0; t < 5; ++t) {
    CNCint old = 0;
    assert_int_equal(cncGetIntegerv(bad[t][0], &old), CNC_OK);
    assert_int_equal(cncSolverParameteri(bad[t][0], bad[t][1]), CNC_OK);
    assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x), CNC_ERR_UNSUPPORTED);
    cncClearError();
    assert_int_equal(cncSolverParameteri(bad[t][0], old), CNC_OK);
  }
  assert_int_equal(d.calls, 0);
  assert_memory_equal(x, x0, sizeof(double) * n);
  /* A matrix operator set: cncSolveCSR refuses (it would not solve the CSR it was given). */
  int64_t* rp = malloc(sizeof(int64_t) * (n + 1));
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)a.nnz);
  for (size_t i = 0; i <= n; ++i) rp[i] = a.row_ptr[i];
  for (int64_t e = 0; e < a.nnz; ++e) col[e] = (CNCuint)a.col[e];
  assert_int_equal(cncSolveCSR((CNCuint)n, rp, col, a.val, 0, 1, b, x), CNC_ERR_UNSUPPORTED);
  assert_memory_equal(x, x0, sizeof(double) * n);
  cncClearError();
  /* Explicit none is honoured; the solve then succeeds. */
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_NONE), CNC_OK);
  assert_int_equal(cncSolveOperator((CNCuint)n, 1, b, x), CNC_OK);
  assert_true(ts_rel_residual(&a, x, b) <= 2e-6);
  free(rp), free(col), free(b), free(x), free(x0);
  ts_csr_free(&a);
}

/* The progress callback stops a matrix-free solve and reads its iterate. */
typedef struct {
  const ts_csr* a;
  const double* b;
  double last_rel, own;
  int calls;
} watch;

static int on_progress(CNCint it, double rel, void* user) {
  watch* w = (watch*)user;
  ++w->calls;
  double x[64];
  if (cncGetCurrentIterate(x) != CNC_OK) return 1;
  w->last_rel = rel;
  w->own = ts_rel_residual(w->a, x, w->b);
  return it >= 5;
}

static void progress_stop(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(8, 8);
  double* b = random_vector(64, 6);
  double x[64] = {0};
  op_data d = {&a, 1.0, 0, 0, 0, 0};
  watch w = {&a, b, 0, 0, 0};
  assert_int_equal(cncSetOperator(CNC_OPERATOR_MATRIX, apply_matrix, &d), CNC_OK);
  assert_int_equal(cncSetProgressCallback(on_progress, &w), CNC_OK);
  assert_int_equal(cncSolveOperator(64, 1, b, x), CNC_OK);
  const stats s = read_stats();
  assert_int_equal(s.reason, CNC_REASON_STOPPED);
  assert_int_equal(s.iters, 5);
  assert_true(fabs(w.own - w.last_rel) <= 1e-8 * w.last_rel); /* the iterate is x_k */
  free(b);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(matrix_free_cg, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(user_preconditioner, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(extreme_right_hand_sides, ts_setup_context,
                                      ts_teardown_context),
      cmocka_unit_test_setup_teardown(nonsymmetric_several, ts_setup_context, ts_teardown_context),
      cmocka_unit_test(assembled_system_operator),
      cmocka_unit_test_setup_teardown(refusals, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(progress_stop, ts_setup_context, ts_teardown_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
