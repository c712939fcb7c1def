/* Reference implementations and API drivers for the tests: see test_support.h. Written plainly
 * (no SIMD, no threads) so that it is obviously right and independent of cnc's code. */
#include "test_support.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "cnc.h"
#include "matrix_market.h"

/* ---- Random numbers -------------------------------------------------------------------------- */
double* random_vector(size_t n, uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  double* v = (double*)malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; ++i) v[i] = ts_rng_uniform(&r) * 2.0 - 1.0;
  return v;
}

void ts_rng_seed(ts_rng* r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 1; }

uint64_t ts_rng_next(ts_rng* r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1Dull;
}

double ts_rng_uniform(ts_rng* r) { return (double)(ts_rng_next(r) >> 11) * 0x1.0p-53; }

uint32_t ts_rng_below(ts_rng* r, uint32_t bound) {
  return (uint32_t)(ts_rng_next(r) % (uint64_t)bound);
}

/* ---- CSR ------------------------------------------------------------------------------------- */
typedef struct {
  int32_t r, c;
  int64_t order;
  double v;
} coo_entry;

static int cmp_entry(const void* a, const void* b) {
  const coo_entry* x = (const coo_entry*)a;
  const coo_entry* y = (const coo_entry*)b;
  if (x->r != y->r) return x->r < y->r ? -1 : 1;
  if (x->c != y->c) return x->c < y->c ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

ts_csr ts_csr_from_coo(int32_t n, int64_t nnz, const int32_t* rows, const int32_t* cols,
                       const double* vals) {
  coo_entry* e = (coo_entry*)malloc(sizeof(coo_entry) * (size_t)(nnz ? nnz : 1));
  for (int64_t k = 0; k < nnz; ++k) {
    e[k].r = rows[k], e[k].c = cols[k], e[k].v = vals[k], e[k].order = k;
  }
  qsort(e, (size_t)nnz, sizeof(coo_entry), cmp_entry);
  ts_csr a;
  a.n = n;
  a.row_ptr = (int64_t*)calloc((size_t)n + 1, sizeof(int64_t));
  a.col = (int32_t*)malloc(sizeof(int32_t) * (size_t)(nnz ? nnz : 1));
  a.val = (double*)malloc(sizeof(double) * (size_t)(nnz ? nnz : 1));
  int64_t out = 0;
  for (int64_t k = 0; k < nnz; ++k) {
    if (out > 0 && k > 0 && e[k].r == e[k - 1].r && e[k].c == e[k - 1].c) {
      a.val[out - 1] += e[k].v;
    } else {
      a.col[out] = e[k].c;
      a.val[out] = e[k].v;
      a.row_ptr[e[k].r + 1]++;
      out++;
    }
  }
  for (int32_t i = 0; i < n; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
  a.nnz = out;
  free(e);
  return a;
}

void ts_csr_free(ts_csr* a) {
  free(a->row_ptr);
  free(a->col);
  free(a->val);
  memset(a, 0, sizeof *a);
}

void ts_csr_spmv(const ts_csr* a, const double* x, double* y) {
  for (int32_t i = 0; i < a->n; ++i) {
    double s = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) s += a->val[k] * x[a->col[k]];
    y[i] = s;
  }
}

double ts_csr_get(const ts_csr* a, int32_t i, int32_t j) {
  for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
    if (a->col[k] == j) return a->val[k];
  return 0.0;
}

double* ts_csr_to_dense(const ts_csr* a) {
  double* d = (double*)calloc((size_t)a->n * (size_t)a->n, sizeof(double));
  for (int32_t i = 0; i < a->n; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      d[(size_t)i * (size_t)a->n + (size_t)a->col[k]] += a->val[k];
  return d;
}

/* ---- Generators ------------------------------------------------------------------------------ */
typedef struct {
  int32_t *r, *c;
  double* v;
  int64_t n, cap;
} coo_list;

static void push(coo_list* l, int32_t r, int32_t c, double v) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 1024;
    l->r = (int32_t*)realloc(l->r, sizeof(int32_t) * (size_t)l->cap);
    l->c = (int32_t*)realloc(l->c, sizeof(int32_t) * (size_t)l->cap);
    l->v = (double*)realloc(l->v, sizeof(double) * (size_t)l->cap);
  }
  l->r[l->n] = r, l->c[l->n] = c, l->v[l->n] = v;
  l->n++;
}

static ts_csr finish(coo_list* l, int32_t n) {
  ts_csr a = ts_csr_from_coo(n, l->n, l->r, l->c, l->v);
  free(l->r);
  free(l->c);
  free(l->v);
  return a;
}

ts_csr ts_laplacian_2d(int32_t nx, int32_t ny) {
  coo_list l = {0};
  for (int32_t y = 0; y < ny; ++y)
    for (int32_t x = 0; x < nx; ++x) {
      int32_t i = y * nx + x;
      push(&l, i, i, 4.0);
      if (x > 0) push(&l, i, i - 1, -1.0);
      if (x + 1 < nx) push(&l, i, i + 1, -1.0);
      if (y > 0) push(&l, i, i - nx, -1.0);
      if (y + 1 < ny) push(&l, i, i + nx, -1.0);
    }
  return finish(&l, nx * ny);
}

ts_csr ts_poisson_3d(int32_t m) {
  coo_list l = {0};
  for (int32_t z = 0; z < m; ++z)
    for (int32_t y = 0; y < m; ++y)
      for (int32_t x = 0; x < m; ++x) {
        int32_t i = (z * m + y) * m + x;
        push(&l, i, i, 6.0);
        if (x > 0) push(&l, i, i - 1, -1.0);
        if (x + 1 < m) push(&l, i, i + 1, -1.0);
        if (y > 0) push(&l, i, i - m, -1.0);
        if (y + 1 < m) push(&l, i, i + m, -1.0);
        if (z > 0) push(&l, i, i - m * m, -1.0);
        if (z + 1 < m) push(&l, i, i + m * m, -1.0);
      }
  return finish(&l, m * m * m);
}

ts_csr ts_random_spd(int32_t n, int per_row, uint64_t seed) {
  ts_rng rng;
  ts_rng_seed(&rng, seed);
  coo_list l = {0};
  double* rowsum = (double*)calloc((size_t)n, sizeof(double));
  for (int32_t i = 0; i < n; ++i)
    for (int k = 0; k < per_row; ++k) {
      int32_t j = (int32_t)ts_rng_below(&rng, (uint32_t)n);
      if (j == i) continue;
      double v = ts_rng_uniform(&rng) * 2.0 - 1.0;
      push(&l, i, j, v);
      push(&l, j, i, v);
      rowsum[i] += fabs(v);
      rowsum[j] += fabs(v);
    }
  for (int32_t i = 0; i < n; ++i) push(&l, i, i, rowsum[i] + 0.5 + ts_rng_uniform(&rng));
  free(rowsum);
  return finish(&l, n);
}

ts_csr ts_long_rows_spd(int32_t n, int32_t long_len, uint64_t seed) {
  ts_rng rng;
  ts_rng_seed(&rng, seed);
  coo_list l = {0};
  double* rowsum = (double*)calloc((size_t)n, sizeof(double));
  for (int32_t i = 0; i < n; ++i) {
    const int32_t links = i == 0        ? long_len
                          : i == 1      ? long_len / 3
                          : i == 2      ? 600
                          : i % 97 == 0 ? 150
                                        : 3;
    for (int32_t k = 0; k < links; ++k) {
      int32_t j = (int32_t)ts_rng_below(&rng, (uint32_t)n);
      if (j == i) continue;
      double v = -(0.25 + ts_rng_uniform(&rng));
      push(&l, i, j, v);
      push(&l, j, i, v);
      rowsum[i] += fabs(v);
      rowsum[j] += fabs(v);
    }
  }
  for (int32_t i = 0; i < n; ++i) push(&l, i, i, rowsum[i] * 1.01 + 0.5 + ts_rng_uniform(&rng));
  free(rowsum);
  return finish(&l, n);
}

ts_csr ts_dense_blocks(int32_t nblocks, int b, uint64_t seed) {
  ts_rng rng;
  ts_rng_seed(&rng, seed);
  coo_list l = {0};
  int32_t n = nblocks * b;
  double* rowsum = (double*)calloc((size_t)n, sizeof(double));
  /* Off-diagonal blocks (I, I+1) and their transposes, fully dense. */
  for (int32_t bi = 0; bi + 1 < nblocks; ++bi)
    for (int r = 0; r < b; ++r)
      for (int c = 0; c < b; ++c) {
        int32_t i = bi * b + r, j = (bi + 1) * b + c;
        double v = -(0.1 + ts_rng_uniform(&rng));
        push(&l, i, j, v);
        push(&l, j, i, v);
        rowsum[i] += fabs(v);
        rowsum[j] += fabs(v);
      }
  /* Diagonal blocks: dense symmetric, then a dominant diagonal. */
  for (int32_t bi = 0; bi < nblocks; ++bi)
    for (int r = 0; r < b; ++r)
      for (int c = r + 1; c < b; ++c) {
        int32_t i = bi * b + r, j = bi * b + c;
        double v = 0.1 + ts_rng_uniform(&rng);
        push(&l, i, j, v);
        push(&l, j, i, v);
        rowsum[i] += fabs(v);
        rowsum[j] += fabs(v);
      }
  for (int32_t i = 0; i < n; ++i) push(&l, i, i, rowsum[i] + 1.0);
  free(rowsum);
  return finish(&l, n);
}

/* A strongly nonsymmetric, diagonally dominant matrix: a_ij for j > i is 10x a_ji's size, so A
 * and Aᵀ have clearly different solutions. */
ts_csr ts_nonsymmetric(int32_t n, uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  int64_t cap = (int64_t)n * 7, nnz = 0;
  int32_t* ri = (int32_t*)malloc(sizeof(int32_t) * (size_t)cap);
  int32_t* ci = (int32_t*)malloc(sizeof(int32_t) * (size_t)cap);
  double* v = (double*)malloc(sizeof(double) * (size_t)cap);
  for (int32_t i = 0; i < n; ++i) {
    double off = 0;
    for (int e = 0; e < 3; ++e) {
      const int32_t j = (int32_t)ts_rng_below(&r, (uint32_t)n);
      if (j == i) continue;
      const double w = (ts_rng_uniform(&r) + 0.5) * (j > i ? 10.0 : 1.0);
      ri[nnz] = i, ci[nnz] = j, v[nnz++] = w;
      off += w;
    }
    ri[nnz] = i, ci[nnz] = i, v[nnz++] = off + 1.0;
  }
  ts_csr a = ts_csr_from_coo(n, nnz, ri, ci, v);
  free(ri);
  free(ci);
  free(v);
  return a;
}

/* ---- Dense LU with partial pivoting ------------------------------------------------------------
 */
int ts_lu_solve(int n, const double* a, const double* b, double* x) {
  double* m = (double*)malloc(sizeof(double) * (size_t)n * (size_t)n);
  double* y = (double*)malloc(sizeof(double) * (size_t)n);
  memcpy(m, a, sizeof(double) * (size_t)n * (size_t)n);
  memcpy(y, b, sizeof(double) * (size_t)n);
  int ok = 0;
  for (int c = 0; c < n && ok == 0; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (fabs(m[(size_t)r * n + c]) > fabs(m[(size_t)p * n + c])) p = r;
    if (m[(size_t)p * n + c] == 0) ok = -1;
    if (ok) break;
    for (int t = 0; t < n; ++t) {
      const double s = m[(size_t)c * n + t];
      m[(size_t)c * n + t] = m[(size_t)p * n + t], m[(size_t)p * n + t] = s;
    }
    const double s = y[c];
    y[c] = y[p], y[p] = s;
    for (int r = c + 1; r < n; ++r) {
      const double f = m[(size_t)r * n + c] / m[(size_t)c * n + c];
      for (int t = c; t < n; ++t) m[(size_t)r * n + t] -= f * m[(size_t)c * n + t];
      y[r] -= f * y[c];
    }
  }
  for (int r = n - 1; r >= 0 && ok == 0; --r) {
    double s = y[r];
    for (int t = r + 1; t < n; ++t) s -= m[(size_t)r * n + t] * x[t];
    x[r] = s / m[(size_t)r * n + r];
  }
  free(m);
  free(y);
  return ok;
}

/* ---- Dense Cholesky -------------------------------------------------------------------------- */
int ts_cholesky_solve(int n, const double* a, const double* b, double* x) {
  return ts_cholesky_solve_many(n, a, 1, b, x);
}

int ts_cholesky_solve_many(int n, const double* a, int k, const double* b, double* x) {
  double* l = (double*)malloc(sizeof(double) * (size_t)n * (size_t)n);
  int* first = (int*)malloc(sizeof(int) * (size_t)(n ? n : 1));
  memcpy(l, a, sizeof(double) * (size_t)n * (size_t)n);
  /* Row i's first entry left of the diagonal (its envelope's start): the factor has no entry
   * left of it either, so every sum starts there (a banded matrix costs n bw^2, not n^3 / 3). */
  for (int i = 0; i < n; ++i) {
    int f = 0;
    while (f < i && a[(size_t)i * n + f] == 0.0) ++f;
    first[i] = f;
  }
  for (int j = 0; j < n; ++j) {
    double d = l[(size_t)j * n + j];
    for (int q = first[j]; q < j; ++q) d -= l[(size_t)j * n + q] * l[(size_t)j * n + q];
    if (!(d > 0)) {
      free(l), free(first);
      return -1;
    }
    d = sqrt(d);
    l[(size_t)j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      if (first[i] > j) continue; /* l[i][j] is 0, as a's */
      double s = l[(size_t)i * n + j];
      for (int q = first[i] > first[j] ? first[i] : first[j]; q < j; ++q)
        s -= l[(size_t)i * n + q] * l[(size_t)j * n + q];
      l[(size_t)i * n + j] = s / d;
    }
  }
  for (int c = 0; c < k; ++c) {
    const double* bc = b + (size_t)c * (size_t)n;
    double* xc = x + (size_t)c * (size_t)n;
    for (int i = 0; i < n; ++i) { /* L y = b */
      double s = bc[i];
      for (int q = first[i]; q < i; ++q) s -= l[(size_t)i * n + q] * xc[q];
      xc[i] = s / l[(size_t)i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) { /* Lᵀ x = y */
      double s = xc[i];
      for (int q = i + 1; q < n; ++q) s -= l[(size_t)q * n + i] * xc[q];
      xc[i] = s / l[(size_t)i * n + i];
    }
  }
  free(l), free(first);
  return 0;
}

double ts_norm2(size_t n, const double* x) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += x[i] * x[i];
  return sqrt(s);
}

double ts_rel_residual(const ts_csr* a, const double* x, const double* b) {
  double* r = (double*)malloc(sizeof(double) * (size_t)a->n);
  ts_csr_spmv(a, x, r);
  for (int32_t i = 0; i < a->n; ++i) r[i] = b[i] - r[i];
  double res = ts_norm2((size_t)a->n, r) / ts_norm2((size_t)a->n, b);
  free(r);
  return res;
}

double ts_rel_diff(size_t n, const double* x, const double* y) {
  double m = 0, d = 0;
  for (size_t i = 0; i < n; ++i) {
    if (fabs(y[i]) > m) m = fabs(y[i]);
    double e = fabs(x[i] - y[i]);
    if (!(e <= d)) d = e; /* NaN propagates as a failure */
  }
  return d / (m > 1e-300 ? m : 1e-300);
}

/* ---- API drivers ----------------------------------------------------------------------------- */
#define TRY(call)                  \
  do {                             \
    int st_ = (call);              \
    if (st_ != CNC_OK) return st_; \
  } while (0)

int ts_assemble(const ts_csr* a, const double* b, int nsys) {
  TRY(cncBegin(CNC_SYSTEM));
  TRY(cncBegin(CNC_MATRIX));
  for (int32_t i = 0; i < a->n; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
      TRY(cncAddIJCoefficient((CNCuint)i, (CNCuint)a->col[k], a->val[k]));
  if (b)
    for (int s = 0; s < nsys; ++s)
      for (int32_t i = 0; i < a->n; ++i)
        TRY(nsys == 1 ? cncAddIRightHandSide((CNCuint)i, b[i])
                      : cncMultiAddIRightHandSide((CNCuint)i, (CNCuint)s,
                                                  b[(size_t)s * (size_t)a->n + (size_t)i]));
  TRY(cncEnd(CNC_MATRIX));
  TRY(cncEnd(CNC_SYSTEM));
  return CNC_OK;
}

int ts_read_x(int32_t n, int nsys, double* x) {
  for (int s = 0; s < nsys; ++s)
    for (int32_t i = 0; i < n; ++i)
      TRY(cncMultiGetVariable((CNCuint)i, (CNCuint)s, &x[(size_t)s * (size_t)n + (size_t)i]));
  return CNC_OK;
}

int ts_assemble_solve(const ts_csr* a, const double* b, int nsys, double* x) {
  TRY(cncSolverParameteri(CNC_NB_VARIABLES, a->n));
  if (nsys > 1) TRY(cncSolverParameteri(CNC_NB_SYSTEMS, nsys));
  TRY(ts_assemble(a, b, nsys));
  TRY(cncSolve());
  return ts_read_x(a->n, nsys, x);
}

/* ---- Data ------------------------------------------------------------------------------------ */
const char* ts_data_dir(void) {
  const char* d = getenv("CNC_TEST_DATA");
#ifdef CNC_TEST_DATA_DIR
  if (!d || !*d) d = CNC_TEST_DATA_DIR;
#endif
  struct stat st;
  if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
  return d;
}

int ts_read_mtx(const char* path, ts_csr* a, char* err, int errlen) {
  mm_matrix m;
  if (mm_read(path, &m, err, errlen) != 0) return -1;
  if (m.rows != m.cols || m.imag) { /* the reader gives complex files too: not cnc's systems */
    snprintf(err, (size_t)errlen, "%s: %s", path, m.imag ? "complex" : "not square");
    mm_free(&m);
    return -1;
  }
  *a = ts_csr_from_coo(m.rows, m.nnz, m.row, m.col, m.val);
  mm_free(&m);
  return 0;
}

int ts_list_spd_matrices(char names[][128], double* cond, int cap) {
  const char* dir = ts_data_dir();
  if (!dir) return 0;
  char path[1024];
  snprintf(path, sizeof path, "%s/matrices/SOURCES.txt", dir);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[2048], current[128] = "";
  double current_cond = 0;
  int count = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "== ", 3)) {
      if (sscanf(line + 3, "%127s", current) != 1) current[0] = '\0';
      current_cond = 0;
    }
    const char* c = strstr(line, "cond~");
    if (c) current_cond = atof(c + 5);
    if (strstr(line, "SPD") && strstr(line, ": likely SPD") && current[0] && count < cap) {
      snprintf(names[count], 128, "%s", current);
      cond[count] = current_cond;
      count++;
    }
  }
  fclose(f);
  return count;
}

int ts_setup_context(void** state) {
  CNCcontext c = cncNewContext();
  if (!c) return -1;
  cncMakeCurrent(c);
  *state = c;
  return 0;
}

int ts_teardown_context(void** state) {
  cncDeleteContext((CNCcontext)*state);
  return 0;
}

/* ---- Solve statistics ------------------------------------------------------------------------ */
stats read_stats(void) {
  stats s;
  memset(&s, 0, sizeof s);
  assert_int_equal(cncGetIntegerv(CNC_REASON, &s.reason), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_USED_ITERATIONS, &s.iters), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_FORMAT_USED, &s.format_used), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_BACKEND_USED, &s.backend_used), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_SOLVER_USED, &s.solver_used), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_ZERO_DIAGONALS, &s.zero_diag), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_ERROR, &s.error), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_TRUE_ERROR, &s.true_error), CNC_OK);
  assert_int_equal(cncGetInteger64v(CNC_NNZ, &s.nnz), CNC_OK);
  return s;
}
