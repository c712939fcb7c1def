/* libFuzzer harness: cncSolveCSR (or cncSolveCSRn, told the arrays' length or less) on the CPU
 * backend with a small CSR (n <= 64) decoded from the input: well-formed SPD or diagonally
 * dominant systems (shuffled rows, split duplicates, either base), raw patterns (out-of-range,
 * unsorted, repeated columns), corrupted row offsets, NULL arrays, any solver, preconditioner,
 * precision, format and ordering, then sometimes a second call with the same arrays, new values
 * on the same pattern, or a new right-hand side (the context's kept matrix must follow). Aborts
 * on a crash, on a status outside cnc.h, on x changed by a failed call, on an inconsistent CSR
 * accepted, and on "converged" where the harness's own residual says otherwise. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnc.h"
#include "fuzz_input.h"

enum { max_n = 64, max_rhs = 3 };

typedef struct {
  uint32_t n, nrhs;
  int32_t base;
  int64_t* row_ptr;
  uint32_t* col;
  double* val;
  double *b, *x;
  int64_t nnz;    /* entries the arrays hold */
  int64_t length; /* what cncSolveCSRn is told they hold (-1: cncSolveCSR, told nothing) */
  int sized;      /* cncSolveCSRn is called (length may then be negative: refused) */
  int consistent; /* base 0 or 1, row offsets from base and never decreasing, columns in range */
} csr_case;

static void quiet(int level, const char* message, void* user) {
  (void)level, (void)message, (void)user;
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  /* One thread, no GPU runtime probed: the harness exercises the CPU path, fast. */
  setenv("CNC_NUM_THREADS", "1", 1);
  setenv("CNC_BACKEND", "cpu", 1);
  setenv("CNC_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
  return 0;
}

/* Says what failed, with the call's arrays and parameters when they are small enough to read. */
static void die(const char* what, const csr_case* c) {
  fprintf(stderr, "fuzz_solve_csr: %s (n=%u base=%d nrhs=%u nnz=%lld)\n", what, c->n, c->base,
          c->nrhs, (long long)c->nnz);
  static const CNCenum p[] = {CNC_SOLVER,        CNC_PRECONDITIONER,  CNC_PRECISION,
                              CNC_MATRIX_FORMAT, CNC_REORDER,         CNC_MAX_ITERATIONS,
                              CNC_REASON,        CNC_USED_ITERATIONS, CNC_FORMAT_USED};
  for (size_t k = 0; k < sizeof p / sizeof p[0]; ++k) {
    CNCint v = 0;
    cncGetIntegerv(p[k], &v);
    fprintf(stderr, "  parameter 0x%x = 0x%x (%d)\n", (unsigned)p[k], (unsigned)v, v);
  }
  double thr = 0, err = 0;
  cncGetDoublev(CNC_THRESHOLD, &thr);
  cncGetDoublev(CNC_TRUE_ERROR, &err);
  fprintf(stderr, "  threshold %g, cnc's true error %g\n", thr, err);
  if (c->n > 64 || c->nnz > 4096) abort();
  for (uint32_t i = 0; i <= c->n; ++i)
    fprintf(stderr, "  row_ptr[%u] = %lld\n", i, (long long)c->row_ptr[i]);
  for (int64_t k = 0; k < c->nnz; ++k)
    fprintf(stderr, "  col[%lld] = %u  val = %.17g\n", (long long)k, c->col[k], c->val[k]);
  for (size_t i = 0; i < (size_t)c->n * c->nrhs; ++i)
    fprintf(stderr, "  b[%zu] = %.17g  x = %.17g\n", i, c->b[i], c->x[i]);
  abort();
}

/* Exactly sized copies: AddressSanitizer then catches any read past what the caller gave. */
static void* copy_of(const void* p, size_t bytes) {
  void* q = malloc(bytes ? bytes : 1);
  if (!q) abort();
  if (bytes) memcpy(q, p, bytes);
  return q;
}

/* A well-formed CSR: symmetric positive definite (strictly diagonally dominant, positive
 * diagonal) or, when `general`, diagonally dominant without symmetry. Rows are shuffled and some
 * entries split in two (duplicates cnc must sum). */
static void build_dominant(fuzz_input* in, csr_case* c, int general) {
  static double dense[max_n * max_n];
  const uint32_t n = c->n;
  memset(dense, 0, sizeof dense);
  const unsigned per_row = fz_pick(in, 5);
  for (uint32_t i = 0; i < n; ++i) {
    for (unsigned t = 0; t < per_row; ++t) {
      const uint32_t j = fz_u8(in) % n;
      if (j == i) continue;
      const double v = (double)((int)fz_pick(in, 9) - 4) / (1 + fz_pick(in, 4));
      dense[i * n + j] += v;
      if (!general) dense[j * n + i] += v;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    double off = 0.0;
    for (uint32_t j = 0; j < n; ++j)
      if (j != i) off += fabs(dense[i * n + j]);
    dense[i * n + i] = off + 1.0 + fz_pick(in, 4);
  }
  const int split = fz_pick(in, 2);
  int64_t cap = 0;
  for (uint32_t i = 0; i < n * n; ++i) cap += dense[i] != 0.0 ? 2 : 0;
  int64_t* rp = malloc(sizeof(int64_t) * (n + 1));
  uint32_t* col = malloc(sizeof(uint32_t) * (size_t)(cap ? cap : 1));
  double* val = malloc(sizeof(double) * (size_t)(cap ? cap : 1));
  if (!rp || !col || !val) abort();
  int64_t at = 0;
  rp[0] = c->base;
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t row_start = at;
    for (uint32_t j = 0; j < n; ++j) {
      const double v = dense[i * n + j];
      if (v == 0.0) continue;
      if (split && (fz_u8(in) & 1)) { /* v/2 + v/2 == v exactly */
        col[at] = j + (uint32_t)c->base, val[at++] = v / 2;
        col[at] = j + (uint32_t)c->base, val[at++] = v / 2;
      } else {
        col[at] = j + (uint32_t)c->base, val[at++] = v;
      }
    }
    /* Shuffle the row (Fisher-Yates from the input). */
    for (int64_t k = at - 1; k > row_start; --k) {
      const int64_t r = row_start + fz_u8(in) % (k - row_start + 1);
      const uint32_t tc = col[k];
      const double tv = val[k];
      col[k] = col[r], val[k] = val[r];
      col[r] = tc, val[r] = tv;
    }
    rp[i + 1] = at + c->base;
  }
  c->row_ptr = copy_of(rp, sizeof(int64_t) * (n + 1));
  c->col = copy_of(col, sizeof(uint32_t) * (size_t)at);
  c->val = copy_of(val, sizeof(double) * (size_t)at);
  c->nnz = at;
  free(rp), free(col), free(val);
}

/* Any pattern: rows of 0..8 entries, columns mostly in range, values from fz_double; then,
 * sometimes, a few row offsets overwritten. For cncSolveCSR the arrays hold every entry any row
 * offset points at; for cncSolveCSRn, the rows as they were before the offsets were overwritten
 * (and it is told so). Either way a read past them is cnc's fault. */
static int build_raw(fuzz_input* in, csr_case* c, int corrupt) {
  const uint32_t n = c->n;
  int64_t* rp = malloc(sizeof(int64_t) * (n + 1));
  if (!rp) abort();
  rp[0] = c->base;
  for (uint32_t i = 0; i < n; ++i) rp[i + 1] = rp[i] + fz_pick(in, 9);
  const int64_t written = rp[n] - c->base;
  if (corrupt) {
    const unsigned hits = 1 + fz_pick(in, 3);
    for (unsigned h = 0; h < hits; ++h) {
      const uint32_t at = fz_u8(in) % (n + 1);
      switch (fz_pick(in, 4)) {
        case 0:
          rp[at] -= 1 + fz_pick(in, 4);
          break;
        case 1:
          rp[at] += 1 + fz_pick(in, 4);
          break;
        case 2:
          rp[at] = -(int64_t)fz_u8(in);
          break;
        default:
          rp[at] = (int64_t)fz_u64(in);
      }
    }
  }
  int64_t most = 0;
  for (uint32_t i = 0; i <= n; ++i) {
    int64_t d; /* rp[i] - base, which a corrupted offset near INT64_MAX would overflow */
    if (__builtin_sub_overflow(rp[i], (int64_t)c->base, &d)) d = INT64_MAX;
    if (d > most) most = d;
  }
  if (c->length >= 0) {
    most = written;
  } else if (most > (1 << 16)) { /* the caller's arrays would have to be this long */
    free(rp);
    return 0;
  }
  c->nnz = most;
  c->row_ptr = copy_of(rp, sizeof(int64_t) * (n + 1));
  c->col = malloc(sizeof(uint32_t) * (size_t)(most ? most : 1));
  c->val = malloc(sizeof(double) * (size_t)(most ? most : 1));
  if (!c->col || !c->val) abort();
  for (int64_t k = 0; k < most; ++k) {
    c->col[k] = fz_index(in, n) + (uint32_t)c->base;
    c->val[k] = fz_double(in);
  }
  free(rp);
  return 1;
}

/* Whether cnc may accept the arrays (values aside: it may refuse non-finite ones). */
static int consistent(const csr_case* c) {
  if ((c->base != 0 && c->base != 1) || c->row_ptr[0] != c->base) return 0;
  for (uint32_t i = 0; i < c->n; ++i)
    if (c->row_ptr[i + 1] < c->row_ptr[i]) return 0;
  if (c->sized && c->length < 0) return 0;
  if (c->row_ptr[c->n] - c->base > (c->sized ? c->length : c->nnz)) return 0;
  for (int64_t k = 0; k < c->row_ptr[c->n] - c->base; ++k)
    if (c->col[k] < (uint32_t)c->base || c->col[k] - (uint32_t)c->base >= c->n) return 0;
  return 1;
}

static void set_parameters(fuzz_input* in) {
  static const CNCenum solvers[] = {CNC_SOLVER_DEFAULT, CNC_CG, CNC_BICGSTAB, CNC_GMRES};
  static const CNCenum preconds[] = {CNC_PRECOND_JACOBI, CNC_PRECOND_NONE, CNC_PRECOND_SSOR};
  static const CNCenum precisions[] = {CNC_DOUBLE, CNC_SINGLE, CNC_MIXED};
  static const CNCenum formats[] = {CNC_FORMAT_AUTO, CNC_FORMAT_CSR, CNC_FORMAT_BCRS2,
                                    CNC_FORMAT_BCRS4, CNC_FORMAT_SELL};
  static const CNCenum orders[] = {CNC_REORDER_AUTO, CNC_REORDER_NONE, CNC_REORDER_RCM};
  static const double thresholds[] = {1e-6, 1e-10, 1e-3, 0.5, 1e-15};
  const uint8_t which = fz_u8(in);
  cncSolverParameteri(CNC_NB_THREADS, 1);
  cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
  if (which & 1) cncSolverParameteri(CNC_SOLVER, (CNCint)solvers[fz_pick(in, 4)]);
  if (which & 2) cncSolverParameteri(CNC_PRECONDITIONER, (CNCint)preconds[fz_pick(in, 3)]);
  if (which & 4) cncSolverParameteri(CNC_PRECISION, (CNCint)precisions[fz_pick(in, 3)]);
  if (which & 8) cncSolverParameteri(CNC_MATRIX_FORMAT, (CNCint)formats[fz_pick(in, 5)]);
  if (which & 16) cncSolverParameteri(CNC_REORDER, (CNCint)orders[fz_pick(in, 3)]);
  if (which & 32) cncSolverParameterd(CNC_THRESHOLD, thresholds[fz_pick(in, 5)]);
  if (which & 64) cncSolverParameteri(CNC_SYMMETRIC, fz_pick(in, 2));
  if (which & 128) {
    cncSolverParameteri(CNC_MAX_ITERATIONS, 1 + fz_u8(in) * 4);
    cncSolverParameteri(CNC_GMRES_RESTART, 1 + fz_pick(in, 40));
    cncSolverParameterd(CNC_SSOR_OMEGA, 0.2 + 0.2 * fz_pick(in, 9));
    if (fz_u8(in) & 1) cncDisable(CNC_KEEP_MATRIX);
  }
}

/* sqrt(sum v_i^2) without underflow or overflow in the squares. */
static double norm2(const double* v, uint32_t n) {
  double scale = 0.0, sum = 0.0;
  for (uint32_t i = 0; i < n; ++i) scale = fmax(scale, fabs(v[i]));
  if (scale == 0.0 || !isfinite(scale)) return scale;
  for (uint32_t i = 0; i < n; ++i) sum += (v[i] / scale) * (v[i] / scale);
  return scale * sqrt(sum);
}

/* The residual of system s, checked by the harness: ||b - A x|| <= 2 threshold ||b|| (the slack
 * cnc's solvers allow their own true residual, src/solver/pcg.hpp) plus the rounding both sides
 * may make. 1 when it holds or cannot be judged (overflow). */
static int residual_ok(const csr_case* c, uint32_t s, double threshold) {
  const double* b = c->b + (size_t)s * c->n;
  const double* x = c->x + (size_t)s * c->n;
  double r[max_n], tol[max_n];
  int zero_b = 1;
  for (uint32_t i = 0; i < c->n; ++i) {
    double ri = b[i], mag = fabs(b[i]);
    const int64_t k0 = c->row_ptr[i] - c->base, k1 = c->row_ptr[i + 1] - c->base;
    for (int64_t k = k0; k < k1; ++k) {
      const double t = c->val[k] * x[c->col[k] - (uint32_t)c->base];
      ri -= t;
      mag += fabs(t);
    }
    /* Each of the m + 1 operations rounds by at most eps relative, or by the smallest
     * subnormal absolute. */
    r[i] = ri;
    tol[i] = 8.0 * (double)(k1 - k0 + 2) * (DBL_EPSILON * mag + 4.9406564584124654e-324);
    zero_b = zero_b && b[i] == 0.0;
  }
  if (zero_b) { /* a zero right-hand side gives x = 0 */
    for (uint32_t i = 0; i < c->n; ++i)
      if (x[i] != 0.0) return 0;
    return 1;
  }
  const double rn = norm2(r, c->n), bn = norm2(b, c->n), tn = norm2(tol, c->n);
  if (!isfinite(rn) || !isfinite(bn) || !isfinite(tn)) return 1;
  return rn <= 2.0 * threshold * bn * (1 + 1e-12) + 2.0 * tn;
}

/* One cncSolveCSR (or cncSolveCSRn) call and every check on its outcome. */
static void solve_and_check(csr_case* c, unsigned nulls) {
  const size_t vec = (size_t)c->n * c->nrhs;
  double* x_before = copy_of(c->x, sizeof(double) * vec);
  const int64_t* rp = (nulls & 1) ? NULL : c->row_ptr;
  const uint32_t* col = (nulls & 2) ? NULL : c->col;
  const double* val = (nulls & 4) ? NULL : c->val;
  const double* b = (nulls & 8) ? NULL : c->b;
  double* x = (nulls & 16) ? NULL : c->x;
  const CNCstatus st = c->sized
                           ? cncSolveCSRn(c->n, c->length, rp, col, val, c->base, c->nrhs, b, x)
                           : cncSolveCSR(c->n, rp, col, val, c->base, c->nrhs, b, x);
  if (st > CNC_OK || st < CNC_ERR_NO_FP64) die("status outside cnc.h", c);
  if (st != CNC_OK) {
    if (memcmp(x_before, c->x, sizeof(double) * vec) != 0) die("x changed by a failed call", c);
    if (cncGetError() == CNC_OK) die("a failed call left no sticky error", c);
    if (*cncGetLastErrorMessage() == '\0') die("a failed call left no message", c);
    cncClearError();
    free(x_before);
    return;
  }
  free(x_before);
  if (nulls) die("a NULL array was accepted", c);
  if (!c->consistent) die("a CSR that breaks the contract was accepted", c);
  CNCint reason = 0;
  double threshold = 0.0;
  if (cncGetIntegerv(CNC_REASON, &reason) != CNC_OK) die("CNC_REASON unreadable", c);
  if (reason < CNC_REASON_NONE || reason > CNC_REASON_BREAKDOWN) die("unknown reason", c);
  if (reason != CNC_REASON_CONVERGED) return;
  cncGetDoublev(CNC_THRESHOLD, &threshold);
  for (size_t i = 0; i < vec; ++i)
    if (!isfinite(c->x[i])) die("converged with a non-finite x", c);
  for (uint32_t s = 0; s < c->nrhs; ++s) {
    if (!residual_ok(c, s, threshold)) die("converged, but b - A x is too large", c);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_input in = {data, size, 0};
  csr_case c;
  memset(&c, 0, sizeof c);
  c.n = fz_u8(&in) % (max_n + 1);
  const uint8_t base_tag = fz_u8(&in);
  c.base = base_tag < 240 ? (base_tag & 1) : (int32_t)(base_tag % 5) - 2; /* -2 .. 2 */
  const uint8_t rhs_tag = fz_u8(&in);
  c.nrhs = rhs_tag < 250 ? 1 + rhs_tag % max_rhs : 0;
  /* Shape, and whether cncSolveCSRn is told the arrays' length, or less (or a negative one). */
  const uint8_t shape_tag = fz_u8(&in);
  const unsigned shape = shape_tag % 4;
  c.length = -1;
  const unsigned nulls = (fz_u8(&in) >= 248) ? 1u << fz_pick(&in, 5) : 0;
  const int legal_base = c.base == 0 || c.base == 1;
  if (shape_tag & 4) c.length = 0, c.sized = 1; /* set below */
  if (shape <= 1 && c.n > 0 && legal_base) {
    build_dominant(&in, &c, shape == 1);
  } else if (!build_raw(&in, &c, shape == 3)) {
    return 0;
  }
  if (c.length >= 0) c.length = c.nnz - ((shape_tag & 8) ? 1 + (shape_tag >> 4) : 0);
  c.consistent = consistent(&c);
  const size_t vec = (size_t)c.n * c.nrhs;
  c.b = malloc(sizeof(double) * (vec ? vec : 1));
  c.x = malloc(sizeof(double) * (vec ? vec : 1));
  if (!c.b || !c.x) abort();
  const int plain_vectors = fz_pick(&in, 4) != 0; /* finite b, x = 0: the common case */
  for (size_t i = 0; i < vec; ++i) {
    c.b[i] = plain_vectors ? (double)((int)fz_pick(&in, 9) - 4) : fz_double(&in);
    c.x[i] = plain_vectors ? 0.0 : fz_double(&in);
  }

  CNCcontext ctx = cncNewContext();
  if (!ctx) abort();
  cncMakeCurrent(ctx);
  cncSetLogCallback(quiet, NULL);
  set_parameters(&in);
  solve_and_check(&c, nulls);

  /* A second call: the kept matrix must be reused only while the arrays' content is the same. */
  switch (fz_pick(&in, 4)) {
    case 1: { /* the same content at other addresses (the old ones freed) */
      int64_t* rp = copy_of(c.row_ptr, sizeof(int64_t) * (c.n + 1));
      uint32_t* col = copy_of(c.col, sizeof(uint32_t) * (size_t)c.nnz);
      double* val = copy_of(c.val, sizeof(double) * (size_t)c.nnz);
      free(c.row_ptr), free(c.col), free(c.val);
      c.row_ptr = rp, c.col = col, c.val = val;
      solve_and_check(&c, 0);
      break;
    }
    case 2: /* new values, same pattern */
      for (int64_t k = 0; k < c.nnz; ++k) {
        if (fz_u8(&in) & 1) c.val[k] *= (double)(1 + fz_pick(&in, 3));
      }
      for (size_t i = 0; i < vec; ++i) c.x[i] = 0.0;
      solve_and_check(&c, 0);
      break;
    case 3: /* a new right-hand side */
      for (size_t i = 0; i < vec; ++i) c.b[i] = (double)((int)fz_pick(&in, 9) - 4);
      solve_and_check(&c, 0);
      break;
    default:
      break;
  }
  cncDeleteContext(ctx);
  free(c.row_ptr), free(c.col), free(c.val), free(c.b), free(c.x);
  return 0;
}
