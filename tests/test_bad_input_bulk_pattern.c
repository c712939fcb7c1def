/* Bad input to the bulk and pattern-first assembly calls: cncAddIJCoefficients refuses a whole
 * call for one bad entry and adds nothing (the same bits as one call per entry otherwise), and
 * every refused call of the pattern entry points (row lengths, slots, full rows, states) changes
 * nothing: the same context then solves to the bits of a clean run. */
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

#include "bad_input_support.h"
#include "cnc.h"
#include "test_support.h"

/* cncAddIJCoefficients: the same bits as one call per entry (a random SPD matrix in random
 * order, with duplicates), and a bad entry anywhere refuses the whole call and adds nothing. */
static void solve_entries(const ts_csr* a, const double* b, int bulk, int with_bad_calls,
                          double* x) {
  const int32_t n = a->n;
  uint32_t* ri = malloc(sizeof(uint32_t) * (size_t)(a->nnz * 2));
  uint32_t* ci = malloc(sizeof(uint32_t) * (size_t)(a->nnz * 2));
  double* vi = malloc(sizeof(double) * (size_t)(a->nnz * 2));
  int64_t m = 0;
  for (int32_t i = 0; i < n; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) { /* each entry in two parts */
      ri[m] = (uint32_t)i, ci[m] = (uint32_t)a->col[k], vi[m++] = a->val[k] * 0.3;
      ri[m] = (uint32_t)i, ci[m] = (uint32_t)a->col[k], vi[m++] = a->val[k] * 0.7;
    }
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  if (with_bad_calls) {
    uint32_t keep = ri[m / 2];
    ri[m / 2] = (uint32_t)n; /* one index out of range in the middle */
    assert_int_equal(cncAddIJCoefficients(m, ri, ci, vi), CNC_ERR_INDEX_OUT_OF_RANGE);
    ri[m / 2] = keep;
    double v = vi[m - 1];
    vi[m - 1] = NAN; /* one value not finite at the end */
    assert_int_equal(cncAddIJCoefficients(m, ri, ci, vi), CNC_ERR_NOT_FINITE);
    vi[m - 1] = v;
    assert_int_equal(cncAddIJCoefficients(-1, ri, ci, vi), CNC_ERR_INVALID_VALUE);
    assert_int_equal(cncAddIJCoefficients(m, NULL, ci, vi), CNC_ERR_NULL_POINTER);
    assert_int_equal(cncAddIJCoefficients(0, NULL, NULL, NULL), CNC_OK);
    assert_true(strstr(cncGetErrorMessage(), "entry") != NULL);
    cncClearError();
  }
  if (bulk) {
    assert_int_equal(cncAddIJCoefficients(m / 3, ri, ci, vi), CNC_OK);
    assert_int_equal(cncAddIJCoefficients(m - m / 3, ri + m / 3, ci + m / 3, vi + m / 3), CNC_OK);
  } else {
    for (int64_t t = 0; t < m; ++t)
      assert_int_equal(cncAddIJCoefficient(ri[t], ci[t], vi[t]), CNC_OK);
  }
  for (int32_t i = 0; i < n; ++i) assert_int_equal(cncAddIRightHandSide((CNCuint)i, b[i]), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  assert_int_equal(ts_read_x(n, 1, x), CNC_OK);
  free(ri), free(ci), free(vi);
}

static void test_bulk_coefficients(void** state) {
  (void)state;
  ts_csr a = ts_random_spd(3000, 6, 77);
  double* b = malloc(sizeof(double) * 3000);
  double *x1 = malloc(sizeof(double) * 3000), *x2 = malloc(sizeof(double) * 3000);
  for (int i = 0; i < 3000; ++i) b[i] = 1.0 + (i % 13) * 0.25;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  solve_entries(&a, b, 0, 0, x1);
  cncDeleteContext(c);
  c = cncNewContext();
  cncMakeCurrent(c);
  solve_entries(&a, b, 1, 1, x2);
  cncDeleteContext(c);
  assert_memory_equal(x1, x2, sizeof(double) * 3000);
  assert_true(ts_rel_residual(&a, x2, b) < 1e-9);
  /* Outside Begin/End(MATRIX): a state error. */
  c = cncNewContext();
  cncMakeCurrent(c);
  uint32_t zero = 0;
  double one = 1.0;
  assert_int_equal(cncAddIJCoefficients(1, &zero, &zero, &one), CNC_ERR_STATE);
  cncDeleteContext(c);
  ts_csr_free(&a);
  free(b), free(x1), free(x2);
}

/* Pattern-first assembly: every refused call of every new entry point answers with its status and
 * a message naming the call, and changes nothing: after all of them, the same context assembles
 * the tiny system through the pattern and solves it to the same bits as a clean per-entry run. */
static void pattern_lengths(const double* a, CNCuint* len) {
  for (int i = 0; i < N; ++i) {
    len[i] = 0;
    for (int j = 0; j < N; ++j) len[i] += a[i * N + j] != 0;
  }
}

/* Fills the tiny system through the pattern: row 0 (and row 1 unless plain adds filled it) by
 * row offsets, the other rows by global slot indices; right-hand sides too. */
static void fill_tiny_by_slots(const double* a, const double* b, const CNCuint* len,
                               int with_row1) {
  CNCint64 start = 0;
  for (int i = 0; i < N; ++i) {
    int slot = 0;
    for (int j = 0; j < N; ++j) {
      if (a[i * N + j] == 0) continue;
      if (i == 0 || (with_row1 && i == 1))
        assert_int_equal(
            cncSetIJCoefficientAtRowOffset((CNCuint)i, (CNCuint)j, a[i * N + j], (CNCuint)slot),
            CNC_OK);
      else if (i >= 2)
        assert_int_equal(cncAddIJCoefficientAt((CNCuint)i, (CNCuint)j, a[i * N + j], start + slot),
                         CNC_OK);
      ++slot;
    }
    start += len[i];
    assert_int_equal(cncAddIRightHandSide((CNCuint)i, b[i]), CNC_OK);
  }
}

/* Ends the matrix and the system, solves from x = 0: the solution must be x_clean, bit for bit
 * (the refused calls before changed nothing). */
static void finish_and_expect(const double* x_clean) {
  double x[N];
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  for (int i = 0; i < N; ++i) assert_int_equal(cncSetVariable((CNCuint)i, 0.0), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  for (int i = 0; i < N; ++i) assert_int_equal(cncGetVariable((CNCuint)i, &x[i]), CNC_OK);
  assert_memory_equal(x, x_clean, sizeof x);
}

static void test_pattern_bad_input(void** unused) {
  (void)unused;
  double a[N * N], b[N], x_ref[N], x_clean[N];
  tiny_system(a, b, x_ref);
  /* The clean run: one cncAddIJCoefficient per entry, no pattern. */
  CNCcontext clean = cncNewContext();
  cncMakeCurrent(clean);
  solve_tiny_and_check();
  for (int i = 0; i < N; ++i) assert_int_equal(cncGetVariable((CNCuint)i, &x_clean[i]), CNC_OK);
  cncDeleteContext(clean);

  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  CNCuint len[N];
  pattern_lengths(a, len);
  len[0] += 1; /* one spare slot in row 0 */
  CNCint st = 0;
  /* States: not in INITIAL, not twice, slot calls need a pattern in MATRIX. */
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncEnd(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncEnd");
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  EXPECT(cncSetRowLength(0, 3), CNC_ERR_STATE, "cncSetRowLength");
  EXPECT(cncSetRowLengths(len), CNC_ERR_STATE, "cncSetRowLengths");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, 0), CNC_ERR_STATE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncAddIJCoefficientAt(0, 0, 1.0, 0), CNC_ERR_STATE, "cncAddIJCoefficientAt");
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, 0), CNC_ERR_STATE,
         "cncSetIJCoefficientAtRowOffset"); /* no pattern */
  assert_true(strstr(cncGetLastErrorMessage(), "no pattern") != NULL);
  EXPECT(cncAddIJCoefficientAt(0, 0, 1.0, 0), CNC_ERR_STATE, "cncAddIJCoefficientAt");
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);

  /* Inside the pattern: bad rows, NULL, an overflowing sum (the pattern stays open). */
  assert_int_equal(cncBegin(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_MATRIX_PATTERN);
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncBegin(CNC_MATRIX), CNC_ERR_STATE, "cncBegin");
  EXPECT(cncSolve(), CNC_ERR_STATE, "cncSolve");
  EXPECT(cncSetRowLength(N, 3), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSetRowLength");
  EXPECT(cncSetRowLengths(NULL), CNC_ERR_NULL_POINTER, "cncSetRowLengths");
  EXPECT(cncEnd(CNC_MATRIX), CNC_ERR_STATE, "cncEnd");
  assert_int_equal(cncSetRowLengths(len), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SYSTEM_CONSTRUCTED); /* back where it came from */
  EXPECT(cncSetRowLength(0, 3), CNC_ERR_STATE, "cncSetRowLength");

  /* In MATRIX with the pattern: each bad argument of each entry point. Row 0 holds columns
   * 0, 1 and 3 (3 slots + 1 spare); row 1 holds 0, 1, 2, 4. */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  const CNCint64 row1 = (CNCint64)len[0];
  EXPECT(cncSetIJCoefficientAtRowOffset(N, 0, 1.0, 0), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, N, 1.0, 0), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, NAN, 0), CNC_ERR_NOT_FINITE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, INFINITY, 0), CNC_ERR_NOT_FINITE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, len[0]), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 0, 1.0, 0xFFFFFFFFu), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncSetIJCoefficientAtRowOffset");
  EXPECT(cncAddIJCoefficientAt(N, 0, 1.0, 0), CNC_ERR_INDEX_OUT_OF_RANGE, "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, row1 - 1), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncAddIJCoefficientAt"); /* row 0's last slot, not row 1's */
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, row1 + len[1]), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, -1), CNC_ERR_INDEX_OUT_OF_RANGE, "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, 1.0, INT64_MAX), CNC_ERR_INDEX_OUT_OF_RANGE,
         "cncAddIJCoefficientAt");
  EXPECT(cncAddIJCoefficientAt(1, 0, -INFINITY, row1), CNC_ERR_NOT_FINITE, "cncAddIJCoefficientAt");
  /* A slot that holds another column: set it, then try the others on it. */
  assert_int_equal(cncSetIJCoefficientAtRowOffset(0, 0, a[0], 0), CNC_OK);
  EXPECT(cncSetIJCoefficientAtRowOffset(0, 1, 5.0, 0), CNC_ERR_INVALID_VALUE,
         "cncSetIJCoefficientAtRowOffset");
  assert_true(strstr(cncGetLastErrorMessage(), "holds column 0") != NULL);
  EXPECT(cncAddIJCoefficientAt(0, 3, 5.0, 0), CNC_ERR_INVALID_VALUE, "cncAddIJCoefficientAt");
  /* Plain adds fill row 1 (4 slots); a fifth column finds it full, alone or in a bulk call. */
  int filled = 0;
  for (int j = 0; j < N; ++j)
    if (a[1 * N + j] != 0)
      assert_int_equal(cncAddIJCoefficient(1, (CNCuint)j, a[1 * N + j]), CNC_OK), ++filled;
  assert_int_equal(filled, (int)len[1]);
  EXPECT(cncAddIJCoefficient(1, 6, 1.0), CNC_ERR_OVERFLOW, "cncAddIJCoefficient");
  assert_true(strstr(cncGetLastErrorMessage(), "full") != NULL);
  {
    const CNCuint bi[3] = {2, 2, 1}, bj[3] = {2, 3, 5};
    const double bv[3] = {100.0, 100.0, 100.0};
    EXPECT(cncAddIJCoefficients(3, bi, bj, bv), CNC_ERR_OVERFLOW, "cncAddIJCoefficients");
    assert_true(strstr(cncGetLastErrorMessage(), "entry 2") != NULL);
  }
  /* Finish the system: row 0 by offsets (column 0 is set again, same column: allowed), the
   * other rows by global indices, then solve: the refused calls above changed nothing. */
  fill_tiny_by_slots(a, b, len, 0);
  finish_and_expect(x_clean);

  /* The row-wise API with the pattern: a row with more columns than slots is refused and
   * dropped; the matrix assembled next to it is the same. */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
  for (int j = 0; j < N; ++j) assert_int_equal(cncCoefficient((CNCuint)j, 1.0), CNC_OK);
  assert_int_equal(cncRightHandSide(3.0), CNC_OK);
  EXPECT(cncEnd(CNC_ROW), CNC_ERR_OVERFLOW, "cncEnd");
  fill_tiny_by_slots(a, b, len, 1);
  finish_and_expect(x_clean);

  /* A new pattern from SOLVED: End(MATRIX_PATTERN) goes back to SOLVED, which still solves. */
  assert_int_equal(cncBegin(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncSetRowLengths(len), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SOLVED);
  assert_int_equal(cncSolve(), CNC_OK);
  cncDeleteContext(c);

  /* Row lengths adding up past 2^40: refused, the pattern stays open; zero lengths then discard
   * the pattern (hash assembly again, no row limits). */
  c = cncNewContext();
  cncMakeCurrent(c);
  enum { BIG = 300 };
  static CNCuint huge[BIG];
  for (int i = 0; i < BIG; ++i) huge[i] = 0xFFFFFFFFu; /* 300 * (2^32 - 1) > 2^40 */
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, BIG), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncBegin(CNC_MATRIX_PATTERN), CNC_OK);
  assert_int_equal(cncSetRowLengths(huge), CNC_OK);
  EXPECT(cncEnd(CNC_MATRIX_PATTERN), CNC_ERR_OVERFLOW, "cncEnd");
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_MATRIX_PATTERN);
  for (int i = 0; i < BIG; ++i) assert_int_equal(cncSetRowLength((CNCuint)i, 0), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX_PATTERN), CNC_OK); /* all zero: no pattern */
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SYSTEM);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  EXPECT(cncAddIJCoefficientAt(0, 0, 1.0, 0), CNC_ERR_STATE, "cncAddIJCoefficientAt");
  for (CNCuint i = 0; i < BIG; ++i) assert_int_equal(cncAddIJCoefficient(i, i, 2.0), CNC_OK);
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  cncDeleteContext(c);

  /* Least squares has no pattern-first assembly. */
  c = cncNewContext();
  cncMakeCurrent(c);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, 3), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  EXPECT(cncBegin(CNC_MATRIX_PATTERN), CNC_ERR_STATE, "cncBegin");
  assert_true(strstr(cncGetLastErrorMessage(), "least-squares") != NULL);
  assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
  assert_int_equal(st, CNC_STATE_SYSTEM);
  cncDeleteContext(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bulk_coefficients),
      cmocka_unit_test(test_pattern_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
