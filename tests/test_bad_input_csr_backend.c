/* Malformed CSR arrays handed to cncSolveCSR (row offsets, base, columns, sizes, NaN/Inf, the
 * states that refuse it), and absent backends (forced by parameter or through the CNC_BACKEND
 * environment variable): every refused call returns its documented status, never a silent
 * fallback, and the same context then still solves correctly (against dense Cholesky). */
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

/* A 4x4 SPD CSR and its solution, for cncSolveCSR. */
static const CNCint64 g_rp[5] = {0, 2, 5, 8, 10};
static const CNCuint g_ci[10] = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3};
static const double g_val[10] = {4, -1, -1, 4, -1, -1, 4, -1, -1, 4};
static const double g_b[4] = {1, 2, 3, 4};

static void check_good_csr_solve(void) {
  double x[4] = {0, 0, 0, 0}, x_ref[4], dense[16] = {0};
  for (int i = 0; i < 4; ++i)
    for (CNCint64 k = g_rp[i]; k < g_rp[i + 1]; ++k) dense[i * 4 + (int)g_ci[k]] = g_val[k];
  assert_int_equal(ts_cholesky_solve(4, dense, g_b, x_ref), 0);
  assert_int_equal(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_OK);
  assert_true(ts_rel_diff(4, x, x_ref) < 1e-5);
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
}

static void test_bad_csr(void** unused) {
  (void)unused;
  double x[4] = {0, 0, 0, 0};
  CNCint64 rp[5];
  CNCuint ci[10];
  double val[10], b[4];
  memcpy(ci, g_ci, sizeof ci);
  memcpy(val, g_val, sizeof val);
  memcpy(b, g_b, sizeof b);
  check_good_csr_solve();
  /* Non-monotone row_ptr. */
  memcpy(rp, g_rp, sizeof rp);
  rp[2] = 1;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  check_good_csr_solve();
  /* row_ptr[0] != base. */
  memcpy(rp, g_rp, sizeof rp);
  EXPECT(cncSolveCSR(4, rp, ci, val, 1, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  rp[0] = 1;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  check_good_csr_solve();
  /* Base other than 0 and 1. */
  memcpy(rp, g_rp, sizeof rp);
  EXPECT(cncSolveCSR(4, rp, ci, val, 2, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  EXPECT(cncSolveCSR(4, rp, ci, val, -1, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  /* Column out of range (0-based: 4 is too large). */
  ci[9] = 4;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSolveCSR");
  /* 1-based: column 0 is out of range. */
  memcpy(ci, g_ci, sizeof ci);
  CNCint64 rp1[5];
  CNCuint ci1[10];
  for (int i = 0; i < 5; ++i) rp1[i] = g_rp[i] + 1;
  for (int k = 0; k < 10; ++k) ci1[k] = g_ci[k] + 1;
  ci1[0] = 0;
  EXPECT(cncSolveCSR(4, rp1, ci1, val, 1, 1, b, x), CNC_ERR_INDEX_OUT_OF_RANGE, "cncSolveCSR");
  /* A correct 1-based call gives the same answer as the 0-based one. */
  ci1[0] = 1;
  double x1[4] = {0, 0, 0, 0}, x0[4] = {0, 0, 0, 0};
  assert_int_equal(cncSolveCSR(4, rp1, ci1, val, 1, 1, b, x1), CNC_OK);
  assert_int_equal(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x0), CNC_OK);
  assert_true(ts_rel_diff(4, x1, x0) < 1e-12);
  /* n = 0, nrhs = 0. */
  EXPECT(cncSolveCSR(0, rp, ci, val, 0, 1, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 0, b, x), CNC_ERR_INVALID_VALUE, "cncSolveCSR");
  /* NaN in the values, the right-hand side, the initial guess. */
  val[3] = NAN;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_NOT_FINITE, "cncSolveCSR");
  val[3] = g_val[3];
  b[2] = INFINITY;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_NOT_FINITE, "cncSolveCSR");
  b[2] = g_b[2];
  x[1] = NAN;
  EXPECT(cncSolveCSR(4, rp, ci, val, 0, 1, b, x), CNC_ERR_NOT_FINITE, "cncSolveCSR");
  check_good_csr_solve();
  /* cncSolveCSR is refused in MATRIX and ROW states. */
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  check_good_csr_solve(); /* allowed in SYSTEM */
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  double xs[4] = {0, 0, 0, 0};
  EXPECT(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, xs), CNC_ERR_STATE, "cncSolveCSR");
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  solve_tiny_and_check();
  check_good_csr_solve();
}

/* Forcing a backend that is absent is an error, never a silent fallback. */
/* cncSolveCSRn: row offsets that do not fit the arrays' length are refused before any entry is
 * read (x untouched); a consistent call solves as cncSolveCSR does. */
static void test_csr_with_length(void** unused) {
  (void)unused;
  double x[4] = {7, 7, 7, 7};
  assert_int_equal(cncSolveCSRn(4, 9, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_SIZE_MISMATCH);
  assert_non_null(strstr(cncGetLastErrorMessage(), "nnz=9"));
  assert_int_equal(cncSolveCSRn(4, -1, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_INVALID_VALUE);
  /* 1-based arrays declared 0-based: row_ptr[0] is not base. */
  const CNCint64 rp1[5] = {1, 3, 6, 9, 11};
  assert_int_equal(cncSolveCSRn(4, 10, rp1, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_SIZE_MISMATCH);
  /* A last offset past the arrays, which cncSolveCSR could not tell. */
  const CNCint64 rp_far[5] = {0, 2, 5, 8, 1000000};
  assert_int_equal(cncSolveCSRn(4, 10, rp_far, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_SIZE_MISMATCH);
  for (int i = 0; i < 4; ++i) assert_true(x[i] == 7.0);
  double y[4] = {0, 0, 0, 0}, z[4] = {0, 0, 0, 0};
  assert_int_equal(cncSolveCSRn(4, 10, g_rp, g_ci, g_val, 0, 1, g_b, y), CNC_OK);
  assert_int_equal(cncSolveCSRn(4, 12, g_rp, g_ci, g_val, 0, 1, g_b, z), CNC_OK); /* longer */
  assert_memory_equal(y, z, sizeof y);
  check_good_csr_solve();
}

static void test_absent_backend(void** unused) {
  (void)unused;
  static const CNCenum gpus[] = {CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL};
  for (int g = 0; g < 2; ++g) {
    CNCenum be = gpus[g];
    CNCcontext c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    CNCstatus set = cncSolverParameteri(CNC_BACKEND, be);
    if (cncBackendAvailable(be)) {
      assert_int_equal(set, CNC_OK);
      solve_tiny_and_check();
      CNCint used = 0;
      assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &used), CNC_OK);
      assert_int_equal(used, be); /* forced, even for a tiny system */
      print_message("backend 0x%x available: solved on it\n", be);
    } else if (set == CNC_ERR_BACKEND_UNAVAILABLE) {
      assert_int_equal(cncGetError(), CNC_ERR_BACKEND_UNAVAILABLE);
      assert_true(strlen(cncGetErrorMessage()) > 0);
      solve_tiny_and_check();
    } else {
      /* Accepted as a parameter: the solve must then fail. */
      assert_int_equal(set, CNC_OK);
      assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, N), CNC_OK);
      assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
      assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
      for (int i = 0; i < N; ++i) assert_int_equal(cncAddIJCoefficient(i, i, 1.0), CNC_OK);
      assert_int_equal(cncAddIRightHandSide(0, 1.0), CNC_OK);
      assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
      assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
      EXPECT(cncSolve(), CNC_ERR_BACKEND_UNAVAILABLE, "cncSolve");
      double x[4] = {0, 0, 0, 0};
      EXPECT(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_BACKEND_UNAVAILABLE,
             "cncSolveCSR");
      /* Back to the CPU: the same context solves. */
      assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
      solve_tiny_and_check();
    }
    cncDeleteContext(c);
  }
}

/* The CNC_BACKEND environment variable, and an explicit parameter overriding it. */
static void test_backend_environment(void** unused) {
  (void)unused;
  setenv("CNC_BACKEND", "cpu", 1);
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  solve_tiny_and_check();
  CNCint used = 0;
  assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &used), CNC_OK);
  assert_int_equal(used, CNC_BACKEND_CPU);
  const char* name = NULL;
  assert_int_equal(cncGetString(CNC_BACKEND_NAME, &name), CNC_OK);
  assert_string_equal(name, "cpu");
  cncDeleteContext(c);
  if (!cncBackendAvailable(CNC_BACKEND_CUDA)) {
    /* An absent backend asked through the environment is an error too... */
    setenv("CNC_BACKEND", "cuda", 1);
    c = cncNewContext();
    assert_int_equal(cncMakeCurrent(c), CNC_OK);
    double x[4] = {0, 0, 0, 0};
    EXPECT(cncSolveCSR(4, g_rp, g_ci, g_val, 0, 1, g_b, x), CNC_ERR_BACKEND_UNAVAILABLE,
           "cncSolveCSR");
    /* ...unless an explicit API call overrides it. */
    assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
    check_good_csr_solve();
    cncDeleteContext(c);
  }
  unsetenv("CNC_BACKEND");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_bad_csr, ts_setup_context, ts_teardown_context),
      cmocka_unit_test_setup_teardown(test_csr_with_length, ts_setup_context, ts_teardown_context),
      cmocka_unit_test(test_absent_backend),
      cmocka_unit_test(test_backend_environment),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
