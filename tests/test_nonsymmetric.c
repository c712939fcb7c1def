/* BiCGSTAB and GMRES (CNC_SOLVER) on nonsymmetric systems, through the public API only.
 * References computed here: a dense LU solve with partial pivoting for small systems, the
 * residual ||b - A x|| / ||b|| recomputed by the test for large ones. Generated problems:
 * convection-diffusion on 2D and 3D grids (central differences), random diagonally dominant
 * matrices. Also: several right-hand sides, the three precisions, the OpenCL backend when one
 * is present, the numerical outcomes (breakdown, not finite, max iterations, stopped, b = 0),
 * parameter checks (bad enums, CNC_GMRES_RESTART), SSOR (CPU) against Jacobi, determinism.
 *
 * `test_nonsymmetric` runs the generated cases; `test_nonsymmetric matrices` solves the
 * nonsymmetric matrices of shared/data/matrices (exits 77 when the folder is absent). */
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

#include "cnc.h"
#include "test_support.h"

/* ---- Independent references ------------------------------------------------------------------ */

/* Dense LU with partial pivoting: solves the n x n row-major system a x = b (a is copied). */
static int lu_solve(int n, const double* a_in, const double* b, double* x) {
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

/* x_ref (nsys columns) = A⁻¹ b by dense LU. */
static void lu_reference(const ts_csr* a, int nsys, const double* b, double* x_ref) {
  double* dense = ts_csr_to_dense(a);
  for (int s = 0; s < nsys; ++s)
    assert_int_equal(lu_solve(a->n, dense, b + (size_t)s * a->n, x_ref + (size_t)s * a->n), 0);
  free(dense);
}

/* ---- Generators ------------------------------------------------------------------------------ */
typedef struct {
  int32_t* r;
  int32_t* c;
  double* v;
  int64_t len, cap;
} coo;

static void coo_add(coo* t, int32_t r, int32_t c, double v) {
  if (t->len == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 1024;
    t->r = (int32_t*)realloc(t->r, sizeof(int32_t) * (size_t)t->cap);
    t->c = (int32_t*)realloc(t->c, sizeof(int32_t) * (size_t)t->cap);
    t->v = (double*)realloc(t->v, sizeof(double) * (size_t)t->cap);
  }
  t->r[t->len] = r, t->c[t->len] = c, t->v[t->len] = v, ++t->len;
}

static ts_csr coo_to_csr(int32_t n, coo* t) {
  ts_csr a = ts_csr_from_coo(n, t->len, t->r, t->c, t->v);
  free(t->r), free(t->c), free(t->v);
  return a;
}

/* -Δu + w·∇u on an m^dim grid (Dirichlet), central differences scaled by h²: diagonal 2*dim,
 * neighbour along axis d in the +/- direction: -1 ± beta_d (beta_d = w_d h / 2). */
static ts_csr convection_diffusion(int dim, int32_t m, double beta) {
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

/* Random nonsymmetric, strictly row diagonally dominant (diagonal of either sign). */
static ts_csr random_nonsymmetric(int32_t n, int per_row, uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  coo t = {0};
  for (int32_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int e = 0; e < per_row; ++e) {
      int32_t j = (int32_t)ts_rng_below(&r, (uint32_t)n);
      if (j == i) continue;
      double v = 2.0 * ts_rng_uniform(&r) - 1.0;
      sum += fabs(v);
      coo_add(&t, i, j, v);
    }
    coo_add(&t, i, i, (i % 3 == 0 ? -1.0 : 1.0) * (1.2 * sum + 0.5));
  }
  return coo_to_csr(n, &t);
}

static double* random_vector(size_t n, uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  double* v = (double*)malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; ++i) v[i] = ts_rng_uniform(&r) * 2.0 - 1.0;
  return v;
}

/* ---- Driving the API ------------------------------------------------------------------------- */
typedef struct {
  CNCenum solver, precision, backend, precond;
  double threshold;
  int max_iter, restart, threads;
  int assembled;    /* 1: cncBegin/.../cncSolve; 0: cncSolveCSR */
  int nonsymmetric; /* 1: CNC_SYMMETRIC 0 */
} opts;

typedef struct {
  CNCint reason, iters, backend_used;
  double error, true_error;
} stats;

static void apply_opts(const opts* o) {
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

static stats read_stats(void) {
  stats s;
  memset(&s, 0, sizeof s);
  assert_int_equal(cncGetIntegerv(CNC_REASON, &s.reason), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &s.iters), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &s.backend_used), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_ERROR, &s.error), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_TRUE_ERROR, &s.true_error), CNC_OK);
  return s;
}

/* Solves A x = b (nsys columns, x: zero initial guess) in a fresh context. */
static stats solve_with(const ts_csr* a, const double* b, int nsys, const opts* o, double* x) {
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

static const char* solver_name(CNCenum s) { return s == CNC_GMRES ? "gmres" : "bicgstab"; }
static const char* precision_name(CNCenum p) {
  return p == CNC_SINGLE ? "single" : p == CNC_MIXED ? "mixed" : "double";
}

/* Threshold and accepted distance to the reference for each precision: single and mixed run the
 * SpMV with float matrix values; cnc restarts from the double true residual, so it reaches a
 * threshold of 1e-6 in every precision. */
static double threshold_for(CNCenum p) { return p == CNC_DOUBLE ? 1e-10 : 1e-6; }

/* Solves and checks every column against x_ref (relative max-norm) and by the residual. */
static void check_against(const ts_csr* a, const double* b, int nsys, const opts* o,
                          const double* x_ref, double tol, const char* what) {
  size_t n = (size_t)a->n;
  double* x = (double*)malloc(sizeof(double) * n * nsys);
  stats s = solve_with(a, b, nsys, o, x);
  double worst_res = 0.0, worst_diff = 0.0;
  for (int k = 0; k < nsys; ++k) {
    double res = ts_rel_residual(a, x + k * n, b + k * n);
    double diff = x_ref ? ts_rel_diff(n, x + k * n, x_ref + k * n) : 0.0;
    if (res > worst_res) worst_res = res;
    if (diff > worst_diff) worst_diff = diff;
  }
  printf("  %-28s %-8s %-6s n=%-6d k=%d: %-10s it=%4d res=%.2e (cnc true %.2e) diff=%.2e\n", what,
         solver_name(o->solver), precision_name(o->precision), a->n, nsys,
         s.reason == CNC_REASON_CONVERGED ? "converged" : "NOT", s.iters, worst_res, s.true_error,
         worst_diff);
  if (s.reason != CNC_REASON_CONVERGED) fail_msg("%s: reason 0x%x", what, s.reason);
  assert_true(worst_res <= 2.0 * o->threshold);
  /* cnc's own true residual agrees with the one computed here */
  assert_true(fabs(s.true_error - worst_res) <= 1e-3 * worst_res + 1e-15);
  if (x_ref) assert_true(worst_diff <= tol);
  free(x);
}

static const CNCenum solvers[] = {CNC_BICGSTAB, CNC_GMRES};
static const CNCenum precisions[] = {CNC_DOUBLE, CNC_SINGLE, CNC_MIXED};

/* ---- Generated problems ---------------------------------------------------------------------- */
static void test_random_dense_reference(void** state) {
  (void)state;
  ts_csr a = random_nonsymmetric(120, 6, 11);
  const int nsys = 3;
  double* b = random_vector((size_t)a.n * nsys, 12);
  double* x_ref = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  lu_reference(&a, nsys, b, x_ref);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {
          solvers[s], precisions[p], CNC_BACKEND_CPU, 0, threshold_for(precisions[p]), 0, 0, 0, 0,
          0};
      check_against(&a, b, nsys, &o, x_ref, precisions[p] == CNC_DOUBLE ? 1e-8 : 1e-4,
                    "random diag. dominant");
    }
  free(b), free(x_ref);
  ts_csr_free(&a);
}

static void test_convection_diffusion_2d(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 24, 0.45);
  assert_true(ts_csr_get(&a, 0, 1) != ts_csr_get(&a, 1, 0)); /* really nonsymmetric */
  const int nsys = 3;
  double* b = random_vector((size_t)a.n * nsys, 21);
  double* x_ref = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  lu_reference(&a, nsys, b, x_ref);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {
          solvers[s], precisions[p], CNC_BACKEND_CPU, 0, threshold_for(precisions[p]), 0, 0, 0, 1,
          0};
      check_against(&a, b, nsys, &o, x_ref, precisions[p] == CNC_DOUBLE ? 1e-7 : 1e-3,
                    "conv-diff 2D (assembled)");
    }
  free(b), free(x_ref);
  ts_csr_free(&a);
}

static void test_convection_diffusion_3d(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(3, 18, 0.6);
  const int nsys = 2;
  double* b = random_vector((size_t)a.n * nsys, 31);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {
          solvers[s], precisions[p], CNC_BACKEND_CPU, 0, threshold_for(precisions[p]), 0, 0, 0, 0,
          0};
      check_against(&a, b, nsys, &o, NULL, 0, "conv-diff 3D");
    }
  free(b);
  ts_csr_free(&a);
}

/* Full GMRES (restart >= n) converges in at most n iterations; a short restart needs more. */
static void test_gmres_restart(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 7, 0.9); /* n = 49 */
  double* b = random_vector((size_t)a.n, 41);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n);
  opts full = {CNC_GMRES, CNC_DOUBLE, CNC_BACKEND_CPU, 0, 1e-10, 0, 60, 0, 0, 0};
  stats s_full = solve_with(&a, b, 1, &full, x);
  assert_int_equal(s_full.reason, CNC_REASON_CONVERGED);
  assert_true(s_full.iters <= a.n);
  opts short_ = full;
  short_.restart = 2;
  stats s_short = solve_with(&a, b, 1, &short_, x);
  assert_int_equal(s_short.reason, CNC_REASON_CONVERGED);
  printf("  GMRES(60) %d iterations, GMRES(2) %d iterations\n", s_full.iters, s_short.iters);
  assert_true(s_short.iters > s_full.iters);
  assert_true(ts_rel_residual(&a, x, b) <= 2e-10);
  /* A restart past n is capped at n (a Krylov space has no more vectors): 10^5 asks for no
   * memory and runs exactly as GMRES(60) on n = 49. */
  double* x_full = (double*)malloc(sizeof(double) * (size_t)a.n);
  solve_with(&a, b, 1, &full, x_full);
  opts huge = full;
  huge.restart = 100000;
  stats s_huge = solve_with(&a, b, 1, &huge, x);
  assert_int_equal(s_huge.reason, CNC_REASON_CONVERGED);
  assert_int_equal(s_huge.iters, s_full.iters);
  assert_memory_equal(x, x_full, sizeof(double) * (size_t)a.n);
  free(b), free(x), free(x_full);
  ts_csr_free(&a);
}

/* CNC_SOLVER_DEFAULT follows CNC_SYMMETRIC (default 1): CG for a symmetric matrix, BiCGSTAB for
 * one declared nonsymmetric; each gives the same iterations and bits as that solver named. */
static void test_symmetric_picks_the_solver(void** state) {
  (void)state;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  CNCint v = 0;
  assert_int_equal(cncGetIntegerv(CNC_SYMMETRIC, &v), CNC_OK);
  assert_int_equal(v, 1);
  assert_int_equal(cncSolverParameteri(CNC_SYMMETRIC, 2), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncGetIntegerv(CNC_SYMMETRIC, &v), CNC_OK);
  assert_int_equal(v, 1);
  cncDeleteContext(c);

  ts_csr a = convection_diffusion(2, 12, 0.9); /* n = 144, nonsymmetric */
  double* b = random_vector((size_t)a.n, 5);
  const size_t bytes = sizeof(double) * (size_t)a.n;
  double *x_def = (double*)malloc(bytes), *x_named = (double*)malloc(bytes);
  for (int nonsym = 0; nonsym < 2; ++nonsym) {
    opts def = {CNC_SOLVER_DEFAULT, CNC_DOUBLE, CNC_BACKEND_CPU, 0, 1e-10, 400, 0, 1, 0, nonsym};
    opts named = def;
    named.solver = nonsym ? CNC_BICGSTAB : CNC_CG;
    const stats sd = solve_with(&a, b, 1, &def, x_def);
    const stats sn = solve_with(&a, b, 1, &named, x_named);
    printf("  CNC_SYMMETRIC %d: default solver %d iterations, %s %d\n", !nonsym, sd.iters,
           nonsym ? "BiCGSTAB" : "CG", sn.iters);
    assert_int_equal(sd.iters, sn.iters);
    assert_int_equal(sd.reason, sn.reason);
    assert_memory_equal(x_def, x_named, bytes);
    if (nonsym) assert_int_equal(sd.reason, CNC_REASON_CONVERGED);
  }
  free(b), free(x_def), free(x_named);
  ts_csr_free(&a);
}

/* The OpenCL backend runs the same solvers (its SpMV through device_system::apply). */
static void test_opencl(void** state) {
  (void)state;
  if (!cncBackendAvailable(CNC_BACKEND_OPENCL)) {
    printf("  no OpenCL device: OpenCL part not run\n");
    skip();
  }
  ts_csr a = convection_diffusion(2, 24, 0.45);
  const int nsys = 2;
  double* b = random_vector((size_t)a.n * nsys, 51);
  double* x_ref = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  lu_reference(&a, nsys, b, x_ref);
  for (int s = 0; s < 2; ++s)
    for (int p = 0; p < 3; ++p) {
      opts o = {solvers[s],
                precisions[p],
                CNC_BACKEND_OPENCL,
                0,
                threshold_for(precisions[p]),
                0,
                0,
                0,
                0,
                0};
      check_against(&a, b, nsys, &o, x_ref, precisions[p] == CNC_DOUBLE ? 1e-7 : 1e-3,
                    "conv-diff 2D on OpenCL");
    }
  free(b), free(x_ref);
  ts_csr_free(&a);
}

/* ---- Numerical outcomes ---------------------------------------------------------------------- */
static ts_csr dense_csr(int32_t n, const double* d) {
  coo t = {0};
  for (int32_t i = 0; i < n; ++i)
    for (int32_t j = 0; j < n; ++j)
      if (d[i * n + j] != 0.0) coo_add(&t, i, j, d[i * n + j]);
  return coo_to_csr(n, &t);
}

static void test_breakdown(void** state) {
  (void)state;
  /* The permutation [[0,1],[1,0]] with b = e1: (r̂, A p) = 0 at the first step of BiCGSTAB. */
  const double perm[4] = {0, 1, 1, 0};
  ts_csr a = dense_csr(2, perm);
  const double b[2] = {1, 0};
  double x[2];
  opts o = {CNC_BICGSTAB, 0, CNC_BACKEND_CPU, 0, 0, 0, 0, 0, 0, 0};
  stats s = solve_with(&a, b, 1, &o, x);
  assert_int_equal(s.reason, CNC_REASON_BREAKDOWN);
  /* GMRES has no such breakdown: it solves it (x = e2). */
  o.solver = CNC_GMRES;
  s = solve_with(&a, b, 1, &o, x);
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  assert_true(fabs(x[0]) < 1e-12 && fabs(x[1] - 1.0) < 1e-12);
  ts_csr_free(&a);
  /* A nonsingular 3x3 system where BiCGSTAB's second rho = (r^, r1) is exactly 0 with r1 != 0:
   * restarted from x (r^ = r1), it converges instead of reporting a breakdown. */
  const double lucky[9] = {3, 0, 0, -1, 3, 2, 0, 1, 2};
  ts_csr l3 = dense_csr(3, lucky);
  const double e1[3] = {1, 0, 0};
  double x3[3];
  o.solver = CNC_BICGSTAB;
  o.threshold = 1e-12;
  s = solve_with(&l3, e1, 1, &o, x3);
  assert_int_equal(s.reason, CNC_REASON_CONVERGED);
  /* x = A^-1 e1 = (1/3, 1/6, -1/12) */
  assert_true(fabs(x3[0] - 1.0 / 3) < 1e-12 && fabs(x3[1] - 1.0 / 6) < 1e-12 &&
              fabs(x3[2] + 1.0 / 12) < 1e-12);
  ts_csr_free(&l3);
  o.threshold = 0;
  /* A singular on the Krylov space: A e1 = 0, b = e1. Both solvers report a breakdown. */
  const double sing[4] = {0, 0, 0, 1};
  a = dense_csr(2, sing);
  for (int k = 0; k < 2; ++k) {
    o.solver = solvers[k];
    s = solve_with(&a, b, 1, &o, x);
    assert_int_equal(s.reason, CNC_REASON_BREAKDOWN);
    CNCcontext c = cncNewContext();
    cncMakeCurrent(c);
    apply_opts(&o);
    assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
    const char* name = NULL;
    assert_int_equal(cncGetString(CNC_REASON_NAME, &name), CNC_OK);
    assert_string_equal(name, "breakdown");
    cncDeleteContext(c);
  }
  ts_csr_free(&a);
}

static void test_not_finite(void** state) {
  (void)state;
  /* Entries of 1e200 without preconditioner: |A p|² overflows to infinity. */
  const double big[4] = {1e200, 1e200, -1e200, 1e200};
  ts_csr a = dense_csr(2, big);
  const double b[2] = {1, 1};
  double x[2];
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, CNC_PRECOND_NONE, 0, 0, 0, 0, 0, 0};
    stats s = solve_with(&a, b, 1, &o, x);
    assert_int_equal(s.reason, CNC_REASON_NOT_FINITE);
  }
  ts_csr_free(&a);
}

static int stop_at_two(CNCint iteration, double residual, void* user) {
  (void)residual;
  ++*(int*)user;
  return iteration >= 2;
}

static void test_limits_and_stop(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 30, 0.45);
  double* b = random_vector((size_t)a.n, 61);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, 0, 1e-10, 3, 0, 0, 0, 0};
    stats s = solve_with(&a, b, 1, &o, x);
    assert_int_equal(s.reason, CNC_REASON_MAX_ITERATIONS);
    assert_int_equal(s.iters, 3);
    assert_true(s.true_error < 1.0); /* progress was kept */
    assert_true(fabs(s.true_error - ts_rel_residual(&a, x, b)) <= 1e-10);

    CNCcontext c = cncNewContext();
    cncMakeCurrent(c);
    o.max_iter = 0;
    apply_opts(&o);
    int calls = 0;
    assert_int_equal(cncSetProgressCallback(stop_at_two, &calls), CNC_OK);
    assert_int_equal(ts_assemble_solve(&a, b, 1, x), CNC_OK);
    s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_STOPPED);
    assert_int_equal(s.iters, 2);
    assert_int_equal(calls, 3); /* iterations 0, 1, 2 */
    assert_true(ts_rel_residual(&a, x, b) < 1.0);
    cncDeleteContext(c);
  }
  free(b), free(x);
  ts_csr_free(&a);
}

/* One cncSolveCSR context, one matrix, the method changed between calls: the prepared matrix is
 * kept across CG, BiCGSTAB and GMRES (the methods share the device system; each sets its own
 * mask), and each answer is right. */
static int kept_logs;
static void count_kept(int level, const char* message, void* user) {
  (void)level, (void)user;
  if (strstr(message, "already holds this matrix")) ++kept_logs;
}

static void test_methods_share_the_kept_matrix(void** state) {
  (void)state;
  ts_csr a = ts_laplacian_2d(12, 12);
  double* b = random_vector((size_t)a.n * 2, 91);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n * 2);
  CNCuint* col = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)a.nnz);
  for (int64_t t = 0; t < a.nnz; ++t) col[t] = (CNCuint)a.col[t];
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncSetLogCallback(count_kept, NULL), CNC_OK);
  kept_logs = 0;
  const CNCenum order[4] = {CNC_GMRES, CNC_CG, CNC_BICGSTAB, CNC_GMRES};
  for (int m = 0; m < 4; ++m) {
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, (CNCint)order[m]), CNC_OK);
    memset(x, 0, sizeof(double) * (size_t)a.n * 2);
    assert_int_equal(cncSolveCSR((CNCuint)a.n, a.row_ptr, col, a.val, 0, 2, b, x), CNC_OK);
    stats s = read_stats();
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    for (int k = 0; k < 2; ++k)
      assert_true(ts_rel_residual(&a, x + (size_t)k * a.n, b + (size_t)k * a.n) <= 2e-10);
  }
  assert_int_equal(kept_logs, 3);
  cncDeleteContext(c);
  free(col), free(b), free(x);
  ts_csr_free(&a);
}

static void test_zero_rhs(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 10, 0.45);
  const int nsys = 2;
  double* b = random_vector((size_t)a.n * nsys, 71);
  memset(b, 0, sizeof(double) * (size_t)a.n); /* system 0: b = 0 */
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n * nsys);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, 0, 1e-10, 0, 0, 0, 1, 0};
    stats s = solve_with(&a, b, nsys, &o, x);
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    for (int i = 0; i < a.n; ++i) assert_true(x[i] == 0.0);
    assert_true(ts_rel_residual(&a, x + a.n, b + a.n) <= 2e-10);
    memset(b + a.n, 0, sizeof(double) * (size_t)a.n); /* now both zero */
    s = solve_with(&a, b, nsys, &o, x);
    assert_int_equal(s.reason, CNC_REASON_CONVERGED);
    assert_int_equal(s.iters, 0);
    for (int i = 0; i < a.n * nsys; ++i) assert_true(x[i] == 0.0);
    free(b);
    b = random_vector((size_t)a.n * nsys, 72);
    memset(b, 0, sizeof(double) * (size_t)a.n);
  }
  free(b), free(x);
  ts_csr_free(&a);
}

/* ---- Parameters ------------------------------------------------------------------------------ */
static void test_parameters(void** state) {
  (void)state;
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  CNCint v = 0;
  assert_int_equal(cncGetIntegerv(CNC_GMRES_RESTART, &v), CNC_OK);
  assert_int_equal(v, 30);
  assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, 7), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_GMRES_RESTART, &v), CNC_OK);
  assert_int_equal(v, 7);
  assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, 0), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncSolverParameteri(CNC_GMRES_RESTART, -3), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncGetIntegerv(CNC_GMRES_RESTART, &v), CNC_OK);
  assert_int_equal(v, 7);
  const CNCenum good_solvers[] = {CNC_SOLVER_DEFAULT, CNC_CG, CNC_BICGSTAB, CNC_GMRES};
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(cncSolverParameteri(CNC_SOLVER, good_solvers[i]), CNC_OK);
    assert_int_equal(cncGetIntegerv(CNC_SOLVER, &v), CNC_OK);
    assert_int_equal(v, good_solvers[i]);
  }
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, 0x204), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, CNC_PRECOND_JACOBI), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncSolverParameteri(CNC_SOLVER, -1), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncGetIntegerv(CNC_SOLVER, &v), CNC_OK);
  assert_int_equal(v, CNC_GMRES); /* unchanged by the failures */
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_SSOR), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, 0x303), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_BICGSTAB), CNC_ERR_INVALID_ENUM);
  assert_int_equal(cncGetIntegerv(CNC_PRECONDITIONER, &v), CNC_OK);
  assert_int_equal(v, CNC_PRECOND_SSOR);
  cncDeleteContext(c);
}

/* SSOR is SSOR: on a 2D Poisson problem (SPD) CG with SSOR converges to the answer in fewer
 * iterations than with Jacobi; BiCGSTAB and GMRES with SSOR solve a convection-diffusion system;
 * k = 2 systems at once. AUTO runs it on the CPU; a GPU backend named explicitly is refused with
 * nothing changed; CNC_SSOR_OMEGA is checked. */
static void test_ssor(void** state) {
  (void)state;
  ts_csr lap = ts_laplacian_2d(40, 40);
  double* b = random_vector((size_t)lap.n * 2, 81);
  double* xj = (double*)malloc(sizeof(double) * (size_t)lap.n * 2);
  double* xs = (double*)malloc(sizeof(double) * (size_t)lap.n * 2);
  opts o = {CNC_CG, 0, CNC_BACKEND_AUTO, CNC_PRECOND_JACOBI, 1e-10, 0, 0, 0, 0, 0};
  stats sj = solve_with(&lap, b, 2, &o, xj);
  o.precond = CNC_PRECOND_SSOR;
  stats ss = solve_with(&lap, b, 2, &o, xs);
  assert_int_equal(sj.reason, CNC_REASON_CONVERGED);
  assert_int_equal(ss.reason, CNC_REASON_CONVERGED);
  assert_int_equal(ss.backend_used, CNC_BACKEND_CPU);
  for (int k = 0; k < 2; ++k)
    assert_true(ts_rel_residual(&lap, xs + (size_t)k * lap.n, b + (size_t)k * lap.n) <= 2e-10);
  /* SSOR(1.5) on the 5-point Laplacian: far fewer iterations than Jacobi (about half or less). */
  assert_true(2 * ss.iters <= sj.iters + 10);

  ts_csr cd = convection_diffusion(2, 16, 0.45);
  for (int m = 0; m < 2; ++m) {
    opts on = {solvers[m], 0, CNC_BACKEND_CPU, CNC_PRECOND_JACOBI, 1e-10, 0, 0, 0, 1, 0};
    stats nj = solve_with(&cd, b, 1, &on, xj);
    on.precond = CNC_PRECOND_SSOR;
    stats ns = solve_with(&cd, b, 1, &on, xs);
    assert_int_equal(ns.reason, CNC_REASON_CONVERGED);
    assert_true(ts_rel_residual(&cd, xs, b) <= 2e-10);
    assert_true(ns.iters < nj.iters);
  }

  /* Explicit GPU backends refuse it, whether or not one is present; x is left as it was. */
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  double omega = 0;
  assert_int_equal(cncGetDoublev(CNC_SSOR_OMEGA, &omega), CNC_OK);
  assert_true(omega == 1.5);
  const double bad[] = {0.0, 2.0, -1.0, 2.5};
  for (int i = 0; i < 4; ++i)
    assert_int_equal(cncSolverParameterd(CNC_SSOR_OMEGA, bad[i]), CNC_ERR_INVALID_VALUE);
  assert_int_equal(cncSolverParameterd(CNC_SSOR_OMEGA, NAN), CNC_ERR_NOT_FINITE);
  assert_int_equal(cncGetError(), CNC_ERR_INVALID_VALUE); /* the first error sticks */
  assert_int_equal(cncClearError(), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_SSOR_OMEGA, 1.2), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_SSOR_OMEGA, &omega), CNC_OK);
  assert_true(omega == 1.2);
  assert_int_equal(cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_SSOR), CNC_OK);
  CNCuint* col = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)lap.nnz);
  for (int64_t t = 0; t < lap.nnz; ++t) col[t] = (CNCuint)lap.col[t];
  const CNCenum gpus[2] = {CNC_BACKEND_CUDA, CNC_BACKEND_OPENCL};
  for (int g = 0; g < 2; ++g) {
    assert_int_equal(cncSolverParameteri(CNC_BACKEND, gpus[g]), CNC_OK);
    for (CNCint i = 0; i < lap.n; ++i) xj[i] = 7.0;
    assert_int_equal(cncSolveCSR((CNCuint)lap.n, lap.row_ptr, col, lap.val, 0, 1, b, xj),
                     CNC_ERR_UNSUPPORTED);
    assert_non_null(strstr(cncGetLastErrorMessage(), "SSOR"));
    assert_int_equal(cncGetError(), CNC_ERR_UNSUPPORTED);
    assert_int_equal(cncClearError(), CNC_OK);
    for (CNCint i = 0; i < lap.n; ++i) assert_true(xj[i] == 7.0);
  }
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolveCSR((CNCuint)lap.n, lap.row_ptr, col, lap.val, 0, 1, b, xj), CNC_OK);
  assert_true(ts_rel_residual(&lap, xj, b) <= 2e-6);
  cncDeleteContext(c);
  free(col), free(b), free(xj), free(xs);
  ts_csr_free(&lap), ts_csr_free(&cd);
}

/* The Jacobi preconditioner is applied: with badly scaled columns (A = A0 S), right Jacobi
 * preconditioning undoes the scaling, and both solvers need many more iterations without it. */
static void test_jacobi_matters(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(2, 20, 0.45);
  ts_rng r;
  ts_rng_seed(&r, 91);
  double* scale = (double*)malloc(sizeof(double) * (size_t)a.n);
  for (int32_t j = 0; j < a.n; ++j) scale[j] = pow(10.0, 4.0 * ts_rng_uniform(&r));
  for (int64_t t = 0; t < a.nnz; ++t) a.val[t] *= scale[a.col[t]];
  free(scale);
  double* b = random_vector((size_t)a.n, 92);
  double* x = (double*)malloc(sizeof(double) * (size_t)a.n);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, CNC_PRECOND_JACOBI, 1e-8, 2000, 0, 0, 0, 0};
    stats sj = solve_with(&a, b, 1, &o, x);
    assert_int_equal(sj.reason, CNC_REASON_CONVERGED);
    assert_true(ts_rel_residual(&a, x, b) <= 2e-8);
    o.precond = CNC_PRECOND_NONE;
    stats sn = solve_with(&a, b, 1, &o, x);
    printf("  %s: Jacobi %d iterations, none %d (%s)\n", solver_name(o.solver), sj.iters, sn.iters,
           sn.reason == CNC_REASON_CONVERGED ? "converged" : "not converged");
    assert_true(sn.reason != CNC_REASON_CONVERGED || sn.iters > 2 * sj.iters);
  }
  free(b), free(x);
  ts_csr_free(&a);
}

/* Reductions in a fixed order: the same bits for 1 and 2 threads, and on a second run. */
static void test_deterministic(void** state) {
  (void)state;
  ts_csr a = convection_diffusion(3, 30, 0.6); /* 27000 rows x 3 systems: threaded path */
  const int nsys = 3;
  size_t len = (size_t)a.n * nsys;
  double* b = random_vector(len, 101);
  double* x1 = (double*)malloc(sizeof(double) * len);
  double* x2 = (double*)malloc(sizeof(double) * len);
  for (int k = 0; k < 2; ++k) {
    opts o = {solvers[k], 0, CNC_BACKEND_CPU, 0, 1e-9, 0, 0, 1, 0, 0};
    stats s1 = solve_with(&a, b, nsys, &o, x1);
    o.threads = 2;
    stats s2 = solve_with(&a, b, nsys, &o, x2);
    assert_int_equal(s1.reason, CNC_REASON_CONVERGED);
    assert_int_equal(s1.iters, s2.iters);
    assert_memory_equal(x1, x2, sizeof(double) * len);
    solve_with(&a, b, nsys, &o, x1);
    assert_memory_equal(x1, x2, sizeof(double) * len);
  }
  free(b), free(x1), free(x2);
  ts_csr_free(&a);
}

/* ---- Real nonsymmetric matrices ---------------------------------------------------------------
 * Those Jacobi-preconditioned BiCGSTAB and GMRES(30) solve (west0497, rdb800l, olm1000, dw2048,
 * cryg2500, bp_1000 do not converge with a Jacobi preconditioner and are left out). b = A x_true;
 * checked by the residual, and against dense LU where n <= 1000. */
static int run_real_matrices(void) {
  static const char* names[] = {"sherman5.mtx", "gr_900_900_crg.mtx", "hor_131.mtx",
                                "tols1090.mtx", "arc130.mtx",         "Trefethen_20b.mtx",
                                "LFAT5.mtx",    "lap2D_5pt_n100.mtx"};
  const char* dir = ts_data_dir();
  char path[1024], err[256];
  if (dir) snprintf(path, sizeof path, "%s/matrices", dir);
  FILE* probe = NULL;
  if (dir) {
    snprintf(path, sizeof path, "%s/matrices/%s", dir, names[0]);
    probe = fopen(path, "r");
  }
  if (!probe) {
    printf("SKIP: shared/data/matrices absent (%s)\n", dir ? dir : "no data folder");
    return TS_SKIP;
  }
  fclose(probe);
  int failures = 0, count = 0;
  for (size_t m = 0; m < sizeof names / sizeof *names; ++m) {
    snprintf(path, sizeof path, "%s/matrices/%s", dir, names[m]);
    ts_csr a;
    if (ts_read_mtx(path, &a, err, sizeof err) != 0) {
      printf("%-22s missing or unreadable (%s)\n", names[m], err);
      ++failures;
      continue;
    }
    ++count;
    const int nsys = 2;
    size_t n = (size_t)a.n;
    double* xt = random_vector(n * nsys, 7 + m);
    double* b = (double*)malloc(sizeof(double) * n * nsys);
    double* x = (double*)malloc(sizeof(double) * n * nsys);
    double* x_ref = NULL;
    for (int k = 0; k < nsys; ++k) ts_csr_spmv(&a, xt + k * n, b + k * n);
    if (a.n <= 1000) {
      x_ref = (double*)malloc(sizeof(double) * n * nsys);
      double* dense = ts_csr_to_dense(&a);
      for (int k = 0; k < nsys; ++k) lu_solve(a.n, dense, b + k * n, x_ref + k * n);
      free(dense);
    }
    for (int s = 0; s < 2; ++s) {
      CNCcontext c = cncNewContext();
      cncMakeCurrent(c);
      const double thr = 1e-9;
      cncSolverParameteri(CNC_SOLVER, solvers[s]);
      cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
      cncSolverParameterd(CNC_THRESHOLD, thr);
      cncSolverParameteri(CNC_MAX_ITERATIONS, 20000);
      int st = ts_assemble_solve(&a, b, nsys, x);
      CNCint reason = 0, iters = 0;
      cncGetIntegerv(CNC_REASON, &reason);
      cncGetIntegerv(CNC_USED_ITERATIONS, &iters);
      cncDeleteContext(c);
      double res = 0.0, diff = 0.0;
      for (int k = 0; k < nsys; ++k) {
        res = fmax(res, ts_rel_residual(&a, x + k * n, b + k * n));
        /* LU's own residual bounds how far apart two good solutions may be */
        if (x_ref) diff = fmax(diff, ts_rel_diff(n, x + k * n, x_ref + k * n));
      }
      int ok = st == CNC_OK && reason == CNC_REASON_CONVERGED && res <= 2 * thr;
      printf("%-22s n=%-5d %-8s %-4s it=%5d res=%.2e diff_lu=%.2e\n", names[m], a.n,
             solver_name(solvers[s]), ok ? "ok" : "FAIL", iters, res, diff);
      failures += !ok;
    }
    free(xt), free(b), free(x), free(x_ref);
    ts_csr_free(&a);
  }
  printf("%d matrices, %d failures\n", count, failures);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "matrices")) return run_real_matrices();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parameters),
      cmocka_unit_test(test_random_dense_reference),
      cmocka_unit_test(test_convection_diffusion_2d),
      cmocka_unit_test(test_convection_diffusion_3d),
      cmocka_unit_test(test_gmres_restart),
      cmocka_unit_test(test_symmetric_picks_the_solver),
      cmocka_unit_test(test_opencl),
      cmocka_unit_test(test_breakdown),
      cmocka_unit_test(test_not_finite),
      cmocka_unit_test(test_limits_and_stop),
      cmocka_unit_test(test_zero_rhs),
      cmocka_unit_test(test_ssor),
      cmocka_unit_test(test_methods_share_the_kept_matrix),
      cmocka_unit_test(test_jacobi_matters),
      cmocka_unit_test(test_deterministic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
