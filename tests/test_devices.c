/* cncGetDeviceCount / cncGetDeviceName: the host is the CPU backend's one device; a GPU backend's
 * count agrees with cncBackendAvailable and with CNC_DEVICE_INDEX (the last listed index solves,
 * the next one is refused); bad arguments are answered with a status and change nothing. Needs
 * no context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h> /* after the headers it needs */

#include "cnc.h"

static void test_cpu(void** unused) {
  (void)unused;
  CNCint count = -1;
  assert_int_equal(cncGetDeviceCount(CNC_BACKEND_CPU, &count), CNC_OK);
  assert_int_equal(count, 1);
  const char* name = NULL;
  assert_int_equal(cncGetDeviceName(CNC_BACKEND_CPU, 0, &name), CNC_OK);
  assert_non_null(name);
  printf("cpu 0: %s\n", name);
  assert_non_null(strstr(name, "hardware threads"));
}

/* A 2x2 SPD solve on `backend`'s device `index` in a fresh context: its status. */
static CNCstatus solve_on(CNCenum backend, CNCint index) {
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)backend), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_DEVICE_INDEX, index), CNC_OK);
  const CNCint64 rp[3] = {0, 2, 4};
  const CNCuint col[4] = {0, 1, 0, 1};
  const double val[4] = {4, 1, 1, 3}, b[2] = {1, 2};
  double x[2] = {0, 0};
  const CNCstatus s = cncSolveCSR(2, rp, col, val, 0, 1, b, x);
  if (s == CNC_OK) { /* x = (1/11, 7/11) */
    assert_true(x[0] > 0.0909 && x[0] < 0.0910 && x[1] > 0.6363 && x[1] < 0.6364);
  }
  cncMakeCurrent(NULL);
  cncDeleteContext(c);
  return s;
}

static void check_gpu_backend(CNCenum backend, const char* what) {
  CNCint count = -1;
  assert_int_equal(cncGetDeviceCount(backend, &count), CNC_OK);
  printf("%s: %d device(s)%s%s\n", what, (int)count, count ? "" : ": ",
         count ? "" : cncGetLastErrorMessage());
  assert_true(count >= 0);
  assert_int_equal(count > 0, cncBackendAvailable(backend) == CNC_TRUE);
  for (CNCint i = 0; i < count; ++i) {
    const char* name = NULL;
    assert_int_equal(cncGetDeviceName(backend, i, &name), CNC_OK);
    assert_non_null(name);
    assert_true(strlen(name) > 0);
    printf("%s %d: %s\n", what, (int)i, name);
  }
  const char* unchanged = "unchanged";
  const char* name = unchanged;
  assert_int_equal(cncGetDeviceName(backend, count, &name), CNC_ERR_INDEX_OUT_OF_RANGE);
  assert_ptr_equal(name, unchanged);
  assert_non_null(strstr(cncGetLastErrorMessage(), "cncGetDeviceName(index="));
  if (count > 0) {
    /* CNC_DEVICE_INDEX counts as the list does: the last device solves, the next is refused. */
    assert_int_equal(solve_on(backend, count - 1), CNC_OK);
    assert_int_equal(solve_on(backend, count), CNC_ERR_BACKEND_UNAVAILABLE);
  }
}

static void test_opencl(void** unused) {
  (void)unused;
  check_gpu_backend(CNC_BACKEND_OPENCL, "opencl");
}

static void test_cuda(void** unused) {
  (void)unused;
  check_gpu_backend(CNC_BACKEND_CUDA, "cuda");
}

static void test_bad_arguments(void** unused) {
  (void)unused;
  CNCint count = 42;
  assert_int_equal(cncGetDeviceCount(CNC_BACKEND_AUTO, &count), CNC_ERR_INVALID_ENUM);
  assert_int_equal(count, 42);
  assert_non_null(strstr(cncGetLastErrorMessage(), "cncGetDeviceCount(backend="));
  assert_int_equal(cncGetDeviceCount(CNC_BACKEND_CPU, NULL), CNC_ERR_NULL_POINTER);
  assert_int_equal(cncGetDeviceName(CNC_BACKEND_CPU, 0, NULL), CNC_ERR_NULL_POINTER);
  const char* name = NULL;
  assert_int_equal(cncGetDeviceName(CNC_BACKEND_CPU, -1, &name), CNC_ERR_INDEX_OUT_OF_RANGE);
  assert_null(name);
  assert_int_equal(cncGetDeviceName(12345, 0, &name), CNC_ERR_INVALID_ENUM);
  assert_null(name);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cpu),
      cmocka_unit_test(test_opencl),
      cmocka_unit_test(test_cuda),
      cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
