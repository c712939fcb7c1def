/* Helpers shared by the test_solve_* suites (see solve_support.h). */
#include "solve_support.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

void apply_opts(const opts* o) {
  if (o->precision) assert_int_equal(cncSolverParameteri(CNC_PRECISION, o->precision), CNC_OK);
  if (o->format) assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, o->format), CNC_OK);
  if (o->threshold > 0) assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, o->threshold), CNC_OK);
  if (o->max_iter > 0)
    assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, o->max_iter), CNC_OK);
}

/* Solves A x = b (nsys right-hand sides) in a fresh context; fills x and returns the stats. */
stats solve_with(const ts_csr* a, const double* b, const opts* o, double* x) {
  int nsys = o->nsys > 0 ? o->nsys : 1;
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  apply_opts(o);
  int st = ts_assemble_solve(a, b, nsys, x);
  if (st != CNC_OK) fail_msg("solve failed: %s: %s", cncStatusString(st), cncGetErrorMessage());
  stats s = read_stats();
  cncDeleteContext(c);
  return s;
}

double* dense_reference(const ts_csr* a, const double* b) {
  double* d = ts_csr_to_dense(a);
  double* x = (double*)malloc(sizeof(double) * (size_t)a->n);
  assert_int_equal(ts_cholesky_solve(a->n, d, b, x), 0);
  free(d);
  return x;
}

/* The statistics must agree with the test's own residual, and CONVERGED must mean what cnc.h says
 * (recursive and true residual below the threshold). */
void check_reported_residual(const ts_csr* a, const double* x, const double* b, const stats* s,
                             double threshold, const char* what) {
  double mine = ts_rel_residual(a, x, b);
  if (!(fabs(mine - s->true_error) <= 0.05 * mine + 1e-12))
    fail_msg("%s: CNC_TRUE_ERROR %.3e but the test computes %.3e", what, s->true_error, mine);
  if (s->reason == CNC_REASON_CONVERGED) {
    if (!(s->error <= threshold * 1.0000001))
      fail_msg("%s: CONVERGED with CNC_ERROR %.3e > threshold %.3e", what, s->error, threshold);
    if (!(mine <= threshold * 1.05))
      fail_msg("%s: CONVERGED but true residual %.3e > threshold %.3e", what, mine, threshold);
  }
}

int backend_present(CNCenum backend) {
  CNCcontext keep = cncGetCurrent();
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, (CNCint)backend), CNC_OK);
  CNCint64 rp[2] = {0, 1};
  CNCuint ci[1] = {0};
  double v[1] = {2}, b[1] = {1}, x[1] = {0};
  const CNCstatus st = cncSolveCSR(1, rp, ci, v, 0, 1, b, x);
  cncDeleteContext(c);
  assert_int_equal(cncMakeCurrent(keep), CNC_OK);
  return st == CNC_OK;
}

int all_equal(size_t n, const double* x, double v) {
  for (size_t i = 0; i < n; ++i)
    if (x[i] != v) return 0;
  return 1;
}

const char* choice_reason(void) {
  const char* s = NULL;
  assert_int_equal(cncGetString(CNC_CHOICE_REASON, &s), CNC_OK);
  return s;
}

indefinite_case indefinite_case_new(void) {
  indefinite_case t;
  t.a = ts_laplacian_2d(8, 8);
  for (int64_t e = t.a.row_ptr[5]; e < t.a.row_ptr[6]; ++e)
    if (t.a.col[e] == 5) t.a.val[e] = -4.0; /* symmetric, not positive definite */
  t.n = (size_t)t.a.n;
  t.b = random_vector(t.n, 13);
  t.x = (double*)malloc(sizeof(double) * t.n);
  for (size_t i = 0; i < t.n; ++i) t.x[i] = 7.0;
  return t;
}

void check_indefinite(const indefinite_case* t, CNCstatus solved) {
  assert_int_equal(solved, CNC_OK);
  assert_int_equal(read_stats().reason, CNC_REASON_INDEFINITE_MATRIX);
  assert_true(all_equal(t->n, t->x, 7.0));
  assert_non_null(strstr(choice_reason(), "not positive definite"));
}

void indefinite_case_free(indefinite_case* t) {
  free(t->b), free(t->x);
  ts_csr_free(&t->a);
}
