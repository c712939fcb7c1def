/* Reordering inside cnc (CNC_REORDER): the unknowns renumbered by reverse Cuthill-McKee while x,
 * b, locked variables and every result stay in the caller's numbering. Checked against solves in
 * the caller's order and against the true residual computed here, on every backend present, for a
 * 3-D Poisson matrix whose unknowns are numbered at random:
 *   - CNC_REORDER_RCM with 2 right-hand sides (on CUDA b and x renumbered on the device, which
 *     the log says; on the host elsewhere): x in the caller's numbering, residual below the
 *     threshold, the statistics and strings say "rcm" and why;
 *   - the same arrays again: the kept ordering is reused (no reordering time), same x bits;
 *   - new values of the same pattern: solved correctly with the kept ordering;
 *   - RCM then NONE on the same matrix: the kept (permuted) system is not used for NONE;
 *   - mixed precision with RCM (P A Pᵀ then made on the host, where a GPU backend makes it on
 *     the device in double), twice: the second solve from the kept ordering;
 *   - locked variables through the assembly API: locked values unchanged, free values equal to
 *     the natural-order solve's;
 *   - CNC_REORDER_AUTO: rcm for the randomly numbered matrix, natural order for the same matrix
 *     numbered along the grid;
 *   - a reordered solve refused part way (no memory for the renumbered b and x) keeps nothing
 *     that the next solve of the same matrix could take for its own: same x bits as before. */
#define _POSIX_C_SOURCE 200809L
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

/* a with its unknowns renumbered at random: row and column p[i] of the result are row and
 * column i of a (rows sorted). */
static ts_csr renumbered(const ts_csr* a, uint64_t seed) {
  const int32_t n = a->n;
  int32_t* p = (int32_t*)malloc(sizeof(int32_t) * (size_t)n);
  ts_rng r;
  ts_rng_seed(&r, seed);
  for (int32_t i = 0; i < n; ++i) p[i] = i;
  for (int32_t i = n - 1; i > 0; --i) {
    const int32_t j = (int32_t)ts_rng_below(&r, (uint32_t)i + 1), t = p[i];
    p[i] = p[j], p[j] = t;
  }
  int32_t* ri = (int32_t*)malloc(sizeof(int32_t) * (size_t)a->nnz);
  int32_t* ci = (int32_t*)malloc(sizeof(int32_t) * (size_t)a->nnz);
  for (int32_t i = 0; i < n; ++i)
    for (int64_t t = a->row_ptr[i]; t < a->row_ptr[i + 1]; ++t) ri[t] = p[i], ci[t] = p[a->col[t]];
  ts_csr out = ts_csr_from_coo(n, a->nnz, ri, ci, a->val);
  free(p), free(ri), free(ci);
  return out;
}

static CNCuint* columns(const ts_csr* a) {
  CNCuint* c = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)(a->nnz ? a->nnz : 1));
  for (int64_t t = 0; t < a->nnz; ++t) c[t] = (CNCuint)a->col[t];
  return c;
}

/* Solves a x = b (k systems) with CNC_REORDER `order` in the current context; returns x. */
static double* solve(const ts_csr* a, const CNCuint* ci, const double* b, int k, CNCenum order) {
  double* x = (double*)calloc((size_t)a->n * (size_t)k, sizeof(double));
  assert_int_equal(cncSolverParameteri(CNC_REORDER, (CNCint)order), CNC_OK);
  assert_int_equal(cncSolveCSR((CNCuint)a->n, a->row_ptr, ci, a->val, 0, (CNCuint)k, b, x), CNC_OK);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
  for (int j = 0; j < k; ++j) {
    const double res =
        ts_rel_residual(a, x + (size_t)j * (size_t)a->n, b + (size_t)j * (size_t)a->n);
    if (!(res < 1e-9)) fail_msg("system %d: true residual %.3e", j, res);
  }
  return x;
}

static const char* string_of(CNCenum what) {
  static const char* s; /* static: the result outlives the call (GCC's dangling-pointer check) */
  s = NULL;
  assert_int_equal(cncGetString(what, &s), CNC_OK);
  return s;
}

static double max_diff(const double* x, const double* y, size_t n) {
  double d = 0;
  for (size_t i = 0; i < n; ++i) d = fmax(d, fabs(x[i] - y[i]));
  return d;
}

/* Whether a solve logged that the device renumbered b and x (the CUDA backend does). */
static int g_device_numbering;
static void watch_log(int level, const char* message, void* user_data) {
  (void)level, (void)user_data;
  if (strstr(message, "b and x renumbered on the device")) g_device_numbering = 1;
}

static void rcm_round(CNCenum backend) {
  ts_csr grid = ts_poisson_3d(24);
  ts_csr a = renumbered(&grid, 7);
  CNCuint* ci = columns(&a);
  const size_t n = (size_t)a.n;
  double* b = random_vector(2 * n, 11);
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)backend), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-11), CNC_OK);
  double* x_nat = solve(&a, ci, b, 2, CNC_REORDER_NONE);
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_REORDER_NONE);
  assert_string_equal(string_of(CNC_ORDERING_NAME), "natural");

  assert_int_equal(cncEnable(CNC_VERBOSE), CNC_OK);
  assert_int_equal(cncSetLogCallback(watch_log, NULL), CNC_OK);
  g_device_numbering = 0;
  double* x_rcm = solve(&a, ci, b, 2, CNC_REORDER_RCM);
  /* On CUDA, b and x are renumbered on the device (elsewhere on the host): x the same. */
  if (backend == CNC_BACKEND_CUDA && !g_device_numbering)
    fail_msg("CUDA: b and x were not renumbered on the device");
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_REORDER_RCM);
  assert_string_equal(string_of(CNC_ORDERING_NAME), "rcm");
  assert_non_null(strstr(string_of(CNC_CHOICE_REASON), "ordering rcm"));
  double t = -1;
  assert_int_equal(cncGetDoublev(CNC_REORDER_TIME, &t), CNC_OK);
  assert_true(t > 0);
  if (!(max_diff(x_rcm, x_nat, 2 * n) < 1e-8)) fail_msg("rcm and natural x differ");

  /* The same arrays again: the kept ordering and system, same bits. */
  double* x_again = solve(&a, ci, b, 2, CNC_REORDER_RCM);
  assert_int_equal(cncGetDoublev(CNC_REORDER_TIME, &t), CNC_OK);
  assert_true(t == 0);
  assert_memory_equal(x_again, x_rcm, 2 * n * sizeof(double));

  /* New values of the same pattern (A + 2 I): solved right with the kept ordering. */
  double* v = (double*)malloc(sizeof(double) * (size_t)a.nnz);
  memcpy(v, a.val, sizeof(double) * (size_t)a.nnz);
  for (int32_t i = 0; i < a.n; ++i)
    for (int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
      if (a.col[e] == i) a.val[e] += 2.0;
  double* x_new = solve(&a, ci, b, 2, CNC_REORDER_RCM);
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_REORDER_RCM);
  memcpy(a.val, v, sizeof(double) * (size_t)a.nnz);

  /* Back to NONE on the first matrix: the permuted system must not be taken for it. */
  double* x_none = solve(&a, ci, b, 2, CNC_REORDER_NONE);
  if (!(max_diff(x_none, x_nat, 2 * n) < 1e-8)) fail_msg("NONE after RCM differs");

  /* Mixed precision reads the reordered CSR on the host too (P A Pᵀ made there, not on the
   * device, and kept with the ordering): ordered anew, then the kept ordering and CSR. */
  assert_int_equal(cncSolverParameteri(CNC_PRECISION, CNC_MIXED), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-8), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_REORDER, CNC_REORDER_RCM), CNC_OK);
  double* x_mixed = (double*)calloc(2 * n, sizeof(double));
  for (int round = 0; round < 2; ++round) {
    memset(x_mixed, 0, 2 * n * sizeof(double));
    assert_int_equal(cncSolveCSR((CNCuint)a.n, a.row_ptr, ci, a.val, 0, 2, b, x_mixed), CNC_OK);
    assert_int_equal(cncGetDoublev(CNC_REORDER_TIME, &t), CNC_OK);
    if (round == 0 ? !(t > 0) : t != 0) fail_msg("mixed, round %d: reordering time %g", round, t);
    for (int j = 0; j < 2; ++j) {
      const double res = ts_rel_residual(&a, x_mixed + (size_t)j * n, b + (size_t)j * n);
      if (!(res < 1e-6)) fail_msg("mixed, round %d, system %d: true residual %.3e", round, j, res);
    }
  }
  free(x_mixed);

  cncDeleteContext(c);
  free(v), free(x_new), free(x_none), free(x_again), free(x_rcm), free(x_nat), free(b), free(ci);
  ts_csr_free(&a), ts_csr_free(&grid);
}

static void test_rcm_in_callers_numbering(void** state) {
  (void)state;
  const CNCenum backends[] = {CNC_BACKEND_CPU, CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL};
  for (int i = 0; i < 3; ++i) {
    if (!backend_present(backends[i])) {
      printf("[  SKIP    ] backend %d not available here\n", (int)backends[i]);
      continue;
    }
    rcm_round(backends[i]);
  }
}

/* Locked variables through the assembly API: every other variable locked at a known value. */
static double* assembled_solve(const ts_csr* a, const double* b, CNCenum order) {
  const CNCuint n = (CNCuint)a->n;
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)n), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_REORDER, (CNCint)order), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-11), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  for (CNCuint i = 0; i < n; i += 3) {
    assert_int_equal(cncSetVariable(i, 0.5 + 0.001 * i), CNC_OK);
    assert_int_equal(cncLockVariable(i), CNC_OK);
  }
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (int32_t i = 0; i < a->n; ++i) {
    for (int64_t t = a->row_ptr[i]; t < a->row_ptr[i + 1]; ++t)
      assert_int_equal(cncAddIJCoefficient((CNCuint)i, (CNCuint)a->col[t], a->val[t]), CNC_OK);
    assert_int_equal(cncAddIRightHandSide((CNCuint)i, b[i]), CNC_OK);
  }
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  double* x = (double*)malloc(sizeof(double) * n);
  for (CNCuint i = 0; i < n; ++i) assert_int_equal(cncGetVariable(i, &x[i]), CNC_OK);
  return x;
}

static void test_locked_variables(void** state) {
  (void)state;
  ts_csr grid = ts_poisson_3d(20);
  ts_csr a = renumbered(&grid, 5);
  double* b = random_vector((size_t)a.n, 3);
  CNCcontext c1 = cncNewContext(), c2 = cncNewContext();
  assert_int_equal(cncMakeCurrent(c1), CNC_OK);
  double* x_nat = assembled_solve(&a, b, CNC_REORDER_NONE);
  assert_int_equal(cncMakeCurrent(c2), CNC_OK);
  double* x_rcm = assembled_solve(&a, b, CNC_REORDER_RCM);
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_REORDER_RCM);
  for (int32_t i = 0; i < a.n; i += 3)
    if (x_rcm[i] != 0.5 + 0.001 * i) fail_msg("locked variable %d changed: %g", i, x_rcm[i]);
  if (!(max_diff(x_rcm, x_nat, (size_t)a.n) < 1e-8)) fail_msg("free variables differ");
  cncDeleteContext(c1), cncDeleteContext(c2);
  free(x_nat), free(x_rcm), free(b);
  ts_csr_free(&a), ts_csr_free(&grid);
}

static void test_auto_decision(void** state) {
  (void)state;
  ts_csr grid = ts_poisson_3d(52); /* 140 608 rows: above the size where AUTO considers it */
  ts_csr a = renumbered(&grid, 9);
  double* b = random_vector((size_t)a.n, 13);
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  CNCuint* ci = columns(&a);
  double* x = solve(&a, ci, b, 1, CNC_REORDER_AUTO);
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  if (used != CNC_REORDER_RCM)
    fail_msg("AUTO on random numbering: %s", string_of(CNC_CHOICE_REASON));
  CNCuint* cg = columns(&grid);
  double* xg = solve(&grid, cg, b, 1, CNC_REORDER_AUTO);
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  if (used != CNC_REORDER_NONE) fail_msg("AUTO on grid order: %s", string_of(CNC_CHOICE_REASON));
  assert_non_null(strstr(string_of(CNC_CHOICE_REASON), "locality good"));
  cncDeleteContext(c);
  free(x), free(xg), free(b), free(ci), free(cg);
  ts_csr_free(&a), ts_csr_free(&grid);
}

/* The kept ordering and system of a matrix, then a solve of it refused after the ordering was
 * taken up (the renumbered b and x, 64 MiB here, above CNC_MEMORY_LIMIT_BYTES): the next solve
 * must not read the kept (renumbered) system with b and x in the caller's numbering. */
static void test_refused_solve_keeps_no_order(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d((1 << 21) + 4096, 1); /* n x 16 bytes (b, x) x 2 systems > 64 MiB */
  CNCuint* ci = columns(&a);
  const size_t n = (size_t)a.n;
  double* b = random_vector(2 * n, 17);
  double* x1 = (double*)calloc(2 * n, sizeof(double));
  double* x2 = (double*)calloc(2 * n, sizeof(double));
  double* x3 = (double*)calloc(2 * n, sizeof(double));
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_REORDER, CNC_REORDER_RCM), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, 5), CNC_OK); /* x's bits, not x* */
  assert_int_equal(cncSolveCSR((CNCuint)a.n, a.row_ptr, ci, a.val, 0, 2, b, x1), CNC_OK);
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_REORDER_RCM);
  setenv("CNC_MEMORY_LIMIT_BYTES", "1", 1);
  const CNCstatus refused = cncSolveCSR((CNCuint)a.n, a.row_ptr, ci, a.val, 0, 2, b, x2);
  unsetenv("CNC_MEMORY_LIMIT_BYTES");
  assert_int_equal(refused, CNC_ERR_OUT_OF_MEMORY);
  for (size_t i = 0; i < 2 * n; ++i)
    if (x2[i] != 0) fail_msg("the refused solve wrote x[%zu] = %g", i, x2[i]);
  assert_int_equal(cncSolveCSR((CNCuint)a.n, a.row_ptr, ci, a.val, 0, 2, b, x3), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_REORDER_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_REORDER_RCM);
  if (memcmp(x1, x3, 2 * n * sizeof(double)) != 0)
    fail_msg("after the refused solve: x differs from the same solve's before it (max %.3e)",
             max_diff(x1, x3, 2 * n));
  cncDeleteContext(c);
  free(x1), free(x2), free(x3), free(b), free(ci);
  ts_csr_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rcm_in_callers_numbering),
      cmocka_unit_test(test_locked_variables),
      cmocka_unit_test(test_auto_decision),
      cmocka_unit_test(test_refused_solve_keeps_no_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
