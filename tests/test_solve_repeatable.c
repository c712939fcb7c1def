/* Same bits run to run on every backend present: the same system solved again in a fresh context
 * gives x identical to the bit, in every format, on matrices with long rows (cut into pieces on
 * every backend) and on a stencil. The GPU backends have no floating-point atomics: pieces and
 * partial sums are added in a fixed order (README, "Reproducible results"). */
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

static void solve_once(const ts_csr* a, const double* b, CNCenum backend, CNCenum format,
                       double* x) {
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)backend), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, (CNCint)format), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  const int64_t nnz = a->row_ptr[a->n];
  CNCuint* col = malloc(sizeof(CNCuint) * (size_t)nnz);
  assert_non_null(col);
  for (int64_t e = 0; e < nnz; ++e) col[e] = (CNCuint)a->col[e];
  memset(x, 0, sizeof(double) * (size_t)a->n);
  const CNCstatus st = cncSolveCSR((CNCuint)a->n, a->row_ptr, col, a->val, 0, 1, b, x);
  if (st != CNC_OK) fail_msg("cncSolveCSR: %s", cncGetErrorMessage());
  CNCint reason = 0;
  assert_int_equal(cncGetIntegerv(CNC_REASON, &reason), CNC_OK);
  assert_int_equal(reason, CNC_REASON_CONVERGED);
  cncDeleteContext(c);
  free(col);
}

static void check_backend(CNCenum backend, const char* name) {
  if (!backend_present(backend)) {
    printf("%s backend absent here: skipped\n", name);
    return;
  }
  ts_csr mats[2] = {ts_long_rows_spd(30000, 6000, 5), ts_poisson_3d(24)};
  const CNCenum formats[] = {CNC_FORMAT_AUTO, CNC_FORMAT_CSR, CNC_FORMAT_SELL, CNC_FORMAT_BCRS2};
  for (int m = 0; m < 2; ++m) {
    const size_t n = (size_t)mats[m].n;
    double* b = malloc(sizeof(double) * n);
    double* x0 = malloc(sizeof(double) * n);
    double* x1 = malloc(sizeof(double) * n);
    assert_non_null(b);
    assert_non_null(x0);
    assert_non_null(x1);
    ts_rng r;
    ts_rng_seed(&r, 3);
    for (size_t i = 0; i < n; ++i) b[i] = ts_rng_uniform(&r) - 0.3;
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; ++f) {
      solve_once(&mats[m], b, backend, formats[f], x0);
      for (int rep = 0; rep < 2; ++rep) {
        solve_once(&mats[m], b, backend, formats[f], x1);
        if (memcmp(x0, x1, sizeof(double) * n) != 0)
          fail_msg("%s, matrix %d, format 0x%x: x differs between two identical solves", name, m,
                   (unsigned)formats[f]);
      }
    }
    free(b);
    free(x0);
    free(x1);
  }
  ts_csr_free(&mats[0]);
  ts_csr_free(&mats[1]);
}

static void test_cpu(void** state) {
  (void)state;
  check_backend(CNC_BACKEND_CPU, "CPU");
}
static void test_opencl(void** state) {
  (void)state;
  check_backend(CNC_BACKEND_OPENCL, "OpenCL");
}
static void test_cuda(void** state) {
  (void)state;
  check_backend(CNC_BACKEND_CUDA, "CUDA");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu),
      cmocka_unit_test(test_opencl),
      cmocka_unit_test(test_cuda),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
