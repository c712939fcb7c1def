/* Same pattern, new values: cncSolveCSR handed arrays whose row offsets and columns equal those
 * of the matrix it keeps, and whose values differ. On the CUDA backend only the values go up and
 * are written into the kept device layout (a "same pattern, new values" log line); elsewhere the
 * matrix is prepared anew. Either way x must be bit for bit what a fresh context gives for the
 * same arrays, on every backend present and in every format, and the zero-diagonal count must
 * follow the new values. A non-finite new value is refused as it is on a first solve, with x
 * unchanged, and the next good call is solved correctly. */
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

/* [0]: solves refilled in place; [1]: solves that saw the same pattern and said why they
 * prepared the matrix anew (no silent fallback). */
static void count_refills(int level, const char* message, void* user) {
  (void)level;
  if (strstr(message, "same pattern, new values: values up")) ++((int*)user)[0];
  if (strstr(message, "same pattern, new values") && strstr(message, "anew")) ++((int*)user)[1];
}

/* The current context set up for one backend and format, threshold 1e-12. */
static void configure(CNCenum backend, CNCenum format) {
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)backend), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, (CNCint)format), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-12), CNC_OK);
}

/* x from a fresh context for the arrays as they are now (the reference of the refilled solve). */
static double* fresh_solve(CNCenum backend, CNCenum format, const ts_csr* a, const CNCuint* ci,
                           const double* b, CNCint* zero_diagonals) {
  const size_t n = (size_t)a->n;
  double* x = (double*)calloc(n, sizeof(double));
  CNCcontext keep = cncGetCurrent();
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  configure(backend, format);
  assert_int_equal(cncSolveCSR((CNCuint)n, a->row_ptr, ci, a->val, 0, 1, b, x), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_ZERO_DIAGONALS, zero_diagonals), CNC_OK);
  cncDeleteContext(c);
  assert_int_equal(cncMakeCurrent(keep), CNC_OK);
  return x;
}

/* Solves the arrays as they are now in the current (kept) context and compares x, bit for bit,
 * and the zero-diagonal count with a fresh context's. */
static void solve_and_compare(CNCenum backend, CNCenum format, const ts_csr* a, const CNCuint* ci,
                              const double* b, const char* what) {
  const size_t n = (size_t)a->n;
  CNCint zref = -1, z = -1;
  double* ref = fresh_solve(backend, format, a, ci, b, &zref);
  double* x = (double*)calloc(n, sizeof(double));
  assert_int_equal(cncSolveCSR((CNCuint)n, a->row_ptr, ci, a->val, 0, 1, b, x), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_ZERO_DIAGONALS, &z), CNC_OK);
  if (memcmp(x, ref, n * sizeof(double)) != 0)
    fail_msg("%s: x differs from a fresh context's (|dx|/|x| = %.3e)", what,
             ts_rel_diff(n, x, ref));
  if (z != zref) fail_msg("%s: %d zero diagonals, a fresh context counts %d", what, z, zref);
  if (!(ts_rel_residual(a, x, b) < 1e-10))
    fail_msg("%s: residual %.3e", what, ts_rel_residual(a, x, b));
  free(ref);
  free(x);
}

static void refill_round(CNCenum backend, CNCenum format) {
  /* Rows of 4 to 8 entries; 2000 rows: several SELL slices and BCRS block rows, a partial
   * last slice and block row. */
  ts_csr a = ts_random_spd(2001, 4, 171);
  const size_t n = (size_t)a.n, nnz = (size_t)a.nnz;
  CNCuint* ci = (CNCuint*)malloc(sizeof(CNCuint) * nnz);
  for (size_t k = 0; k < nnz; ++k) ci[k] = (CNCuint)a.col[k];
  double* b = random_vector(n, 172);
  int refills[2] = {0, 0};
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  configure(backend, format);
  assert_int_equal(cncSetLogCallback(count_refills, refills), CNC_OK);
  assert_int_equal(cncEnable(CNC_VERBOSE), CNC_OK);
  char what[96];
  snprintf(what, sizeof what, "backend %d format %d: first solve", (int)backend, (int)format);
  solve_and_compare(backend, format, &a, ci, b, what);
  assert_int_equal(refills[0] + refills[1], 0);
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &used), CNC_OK);
  const int expect = used == CNC_BACKEND_CUDA; /* refilled in place on CUDA only */

  /* New values, same pattern: every off-diagonal scaled, the diagonal changed. */
  double* orig = (double*)malloc(nnz * sizeof(double));
  memcpy(orig, a.val, nnz * sizeof(double));
  for (int32_t i = 0; i < a.n; ++i)
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      a.val[k] = a.col[k] == i ? a.val[k] * 1.5 + 0.25 : a.val[k] * 0.75;
  snprintf(what, sizeof what, "backend %d format %d: new values", (int)backend, (int)format);
  solve_and_compare(backend, format, &a, ci, b, what);
  assert_int_equal(refills[0], expect);
  assert_int_equal(refills[1], 1 - expect);
  /* The first values again: refilled back, not taken for the matrix kept before the change. */
  memcpy(a.val, orig, nnz * sizeof(double));
  snprintf(what, sizeof what, "backend %d format %d: first values again", (int)backend,
           (int)format);
  solve_and_compare(backend, format, &a, ci, b, what);
  assert_int_equal(refills[0], 2 * expect);
  assert_int_equal(refills[1], 2 * (1 - expect));
  free(orig);

  /* A non-finite value: refused as on a first solve, x unchanged. */
  const double saved = a.val[nnz / 2];
  a.val[nnz / 2] = NAN;
  double* x = (double*)malloc(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) x[i] = 7.0;
  assert_int_equal(cncSolveCSR((CNCuint)n, a.row_ptr, ci, a.val, 0, 1, b, x), CNC_ERR_NOT_FINITE);
  for (size_t i = 0; i < n; ++i) assert_true(x[i] == 7.0);
  assert_int_equal(refills[1], 2 * (1 - expect) + 1); /* said why it was prepared anew */
  a.val[nnz / 2] = saved;
  snprintf(what, sizeof what, "backend %d format %d: after NaN", (int)backend, (int)format);
  solve_and_compare(backend, format, &a, ci, b, what);

  /* Row and column 3 zero in the new values (their entries kept in the pattern), b[3] = 0: a
   * consistent semidefinite system whose zero diagonal is counted, and where the
   * preconditioner uses 1, as a fresh build does. */
  for (int32_t i = 0; i < a.n; ++i)
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (i == 3 || a.col[k] == 3) a.val[k] = 0.0;
  b[3] = 0.0;
  const int before = refills[0];
  snprintf(what, sizeof what, "backend %d format %d: zero diagonal", (int)backend, (int)format);
  CNCint zref = -1, z = -1;
  double* ref = fresh_solve(backend, format, &a, ci, b, &zref);
  assert_int_equal(zref, 1);
  memset(x, 0, n * sizeof(double));
  assert_int_equal(cncSolveCSR((CNCuint)n, a.row_ptr, ci, a.val, 0, 1, b, x), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_ZERO_DIAGONALS, &z), CNC_OK);
  if (z != 1) fail_msg("%s: %d zero diagonals counted, expected 1", what, z);
  if (memcmp(x, ref, n * sizeof(double)) != 0)
    fail_msg("%s: x differs from a fresh context's", what);
  assert_int_equal(refills[0], before + expect);
  free(ref);
  free(x);
  cncDeleteContext(c);
  free(ci);
  free(b);
  ts_csr_free(&a);
}

static void test_same_pattern_new_values(void** unused) {
  (void)unused;
  const CNCenum backends[] = {CNC_BACKEND_CPU, CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL};
  const CNCenum formats[] = {CNC_FORMAT_CSR, CNC_FORMAT_SELL, CNC_FORMAT_BCRS2, CNC_FORMAT_BCRS4,
                             CNC_FORMAT_AUTO};
  for (size_t bi = 0; bi < sizeof backends / sizeof *backends; ++bi) {
    if (!backend_present(backends[bi])) {
      printf("[  SKIP    ] backend %d not available here\n", (int)backends[bi]);
      continue;
    }
    for (size_t f = 0; f < sizeof formats / sizeof *formats; ++f)
      refill_round(backends[bi], formats[f]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_pattern_new_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
