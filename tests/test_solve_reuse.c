/* Solving again: repeated cncSolve calls on the same context (from the solution, from a new
 * initial guess, with a new right-hand side), cncSolveCSR against assembling the same matrix, and
 * the prepared matrix kept between solves (CNC_KEEP_MATRIX) by cncSolveCSR and by cncSolve, every
 * answer against dense Cholesky. */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_repeated_solves),
      cmocka_unit_test(test_solve_csr_matches_assembly),
      cmocka_unit_test(test_solve_csr_reuse),
      cmocka_unit_test(test_keep_matrix_assembled),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
