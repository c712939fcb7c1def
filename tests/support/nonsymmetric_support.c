/* Helpers shared by the nonsymmetric_* suites (see nonsymmetric_support.h). */
/* cmocka.h needs the standard headers first. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "nonsymmetric_support.h"

/* ---- Independent references ------------------------------------------------------------------ */

/* Dense LU with partial pivoting: solves the n x n row-major system a x = b (a is copied). */
int lu_solve(int n, const double* a_in, const double* b, double* x) {
  double* a = (double*)malloc(sizeof(double) * (size_t)n * n);
  memcpy(a, a_in, sizeof(double) * (size_t)n * n);
  memcpy(x, b, sizeof(double) * (size_t)n);
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (fabs(a[(size_t)r * n + c]) > fabs(a[(size_t)piv * n + c])) piv = r;
    if (a[(size_t)piv * n + c] == 0.0) {
      free(a);
      return -1;
    }
    if (piv != c) {
      for (int j = 0; j < n; ++j) {
        double t = a[(size_t)c * n + j];
        a[(size_t)c * n + j] = a[(size_t)piv * n + j];
        a[(size_t)piv * n + j] = t;
      }
      double t = x[c];
      x[c] = x[piv];
      x[piv] = t;
    }
    for (int r = c + 1; r < n; ++r) {
      double f = a[(size_t)r * n + c] / a[(size_t)c * n + c];
      if (f == 0.0) continue;
      for (int j = c; j < n; ++j) a[(size_t)r * n + j] -= f * a[(size_t)c * n + j];
      x[r] -= f * x[c];
    }
  }
  for (int r = n - 1; r >= 0; --r) {
    double s = x[r];
    for (int j = r + 1; j < n; ++j) s -= a[(size_t)r * n + j] * x[j];
    x[r] = s / a[(size_t)r * n + r];
  }
  free(a);
  return 0;
}

/* ---- Generators ------------------------------------------------------------------------------ */
void coo_add(coo* t, int32_t r, int32_t c, double v) {
  if (t->len == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 1024;
    t->r = (int32_t*)realloc(t->r, sizeof(int32_t) * (size_t)t->cap);
    t->c = (int32_t*)realloc(t->c, sizeof(int32_t) * (size_t)t->cap);
    t->v = (double*)realloc(t->v, sizeof(double) * (size_t)t->cap);
  }
  t->r[t->len] = r, t->c[t->len] = c, t->v[t->len] = v, ++t->len;
}

ts_csr coo_to_csr(int32_t n, coo* t) {
  ts_csr a = ts_csr_from_coo(n, t->len, t->r, t->c, t->v);
  free(t->r), free(t->c), free(t->v);
  return a;
}

/* -Δu + w·∇u on an m^dim grid (Dirichlet), central differences scaled by h²: diagonal 2*dim,
 * neighbour along axis d in the +/- direction: -1 ± beta_d (beta_d = w_d h / 2). */
ts_csr convection_diffusion(int dim, int32_t m, double beta) {
  const double b[3] = {beta, 0.6 * beta, -0.4 * beta};
  int32_t n = dim == 2 ? m * m : m * m * m;
  coo t = {0};
  for (int32_t i = 0; i < n; ++i) {
    int32_t idx[3] = {i % m, (i / m) % m, dim == 3 ? i / (m * m) : 0};
    int32_t stride[3] = {1, m, m * m};
    coo_add(&t, i, i, 2.0 * dim);
    for (int d = 0; d < dim; ++d) {
      if (idx[d] + 1 < m) coo_add(&t, i, i + stride[d], -1.0 + b[d]);
      if (idx[d] > 0) coo_add(&t, i, i - stride[d], -1.0 - b[d]);
    }
  }
  return coo_to_csr(n, &t);
}

/* ---- Driving the API ------------------------------------------------------------------------- */
void apply_opts(const opts* o) {
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, o->solver), CNC_OK);
  if (o->precision) assert_int_equal(cncSolverParameteri(CNC_PRECISION, o->precision), CNC_OK);
  if (o->backend) assert_int_equal(cncSolverParameteri(CNC_BACKEND, o->backend), CNC_OK);
  if (o->precond) assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, o->precond), CNC_OK);
  if (o->threshold > 0) assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, o->threshold), CNC_OK);
  if (o->max_iter > 0)
    assert_int_equal(cncSolverParameteri(CNC_MAX_ITERATIONS, o->max_iter), CNC_OK);
  if (o->restart > 0) assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, o->restart), CNC_OK);
  if (o->threads > 0) assert_int_equal(cncSolverParameteri(CNC_NB_THREADS, o->threads), CNC_OK);
  if (o->nonsymmetric) assert_int_equal(cncSolverParameteri(CNC_SYMMETRIC, 0), CNC_OK);
}

/* Solves A x = b (nsys columns, x: zero initial guess) in a fresh context. */
stats solve_with(const ts_csr* a, const double* b, int nsys, const opts* o, double* x) {
  CNCcontext c = cncNewContext();
  assert_non_null(c);
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  apply_opts(o);
  int st;
  if (o->assembled) {
    st = ts_assemble_solve(a, b, nsys, x);
  } else {
    CNCuint* col = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)(a->nnz ? a->nnz : 1));
    for (int64_t t = 0; t < a->nnz; ++t) col[t] = (CNCuint)a->col[t];
    memset(x, 0, sizeof(double) * (size_t)a->n * nsys);
    st = cncSolveCSR((CNCuint)a->n, a->row_ptr, col, a->val, 0, (CNCuint)nsys, b, x);
    free(col);
  }
  if (st != CNC_OK) fail_msg("solve failed: %s: %s", cncStatusString(st), cncGetErrorMessage());
  stats s = read_stats();
  cncDeleteContext(c);
  return s;
}

const char* solver_name(CNCenum s) { return s == CNC_GMRES ? "gmres" : "bicgstab"; }

const CNCenum solvers[] = {CNC_BICGSTAB, CNC_GMRES};
