/* cnc-solve's complex matrices: see cli_complex.h. */
#include "cli/cli_complex.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t col;
  double re, im;
} entry;

static int by_column(const void* a, const void* b) {
  const uint32_t x = ((const entry*)a)->col, y = ((const entry*)b)->col;
  return (x > y) - (x < y);
}

void cli_zcsr_free(cli_zcsr* a) {
  free(a->row_ptr);
  free(a->col);
  free(a->val);
  memset(a, 0, sizeof *a);
}

int cli_zcsr_from_mm(const mm_matrix* m, cli_zcsr* a) {
  memset(a, 0, sizeof *a);
  const int64_t n = m->rows, nnz = m->nnz;
  entry* e = malloc(sizeof(entry) * (size_t)(nnz > 0 ? nnz : 1));
  int64_t* next = calloc((size_t)n + 1, sizeof(int64_t));
  a->row_ptr = calloc((size_t)n + 1, sizeof(int64_t));
  if (!e || !next || !a->row_ptr) {
    free(e), free(next), cli_zcsr_free(a);
    return -1;
  }
  /* Counting sort by row, then each row by column, then duplicates summed. */
  for (int64_t t = 0; t < nnz; ++t) ++next[m->row[t] + 1];
  for (int64_t i = 0; i < n; ++i) next[i + 1] += next[i];
  for (int64_t t = 0; t < nnz; ++t) {
    entry* d = &e[next[m->row[t]]++];
    d->col = (uint32_t)m->col[t], d->re = m->val[t], d->im = m->imag ? m->imag[t] : 0.0;
  }
  int64_t out = 0, begin = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t end = next[i];
    qsort(e + begin, (size_t)(end - begin), sizeof(entry), by_column);
    for (int64_t t = begin; t < end; ++t) {
      if (out > a->row_ptr[i] && e[out - 1].col == e[t].col) {
        e[out - 1].re += e[t].re, e[out - 1].im += e[t].im;
      } else {
        e[out++] = e[t];
      }
    }
    a->row_ptr[i + 1] = out;
    begin = end;
  }
  free(next);
  a->n = n, a->nnz = out;
  a->col = malloc(sizeof(uint32_t) * (size_t)(out > 0 ? out : 1));
  a->val = malloc(2 * sizeof(double) * (size_t)(out > 0 ? out : 1));
  if (!a->col || !a->val) {
    free(e), cli_zcsr_free(a);
    return -1;
  }
  for (int64_t t = 0; t < out; ++t)
    a->col[t] = e[t].col, a->val[2 * t] = e[t].re, a->val[2 * t + 1] = e[t].im;
  free(e);
  return 0;
}

void cli_zcsr_mul(const cli_zcsr* a, int nrhs, const double* x, double* y) {
  for (int k = 0; k < nrhs; ++k) {
    const double* xk = x + 2 * (size_t)k * (size_t)a->n;
    double* yk = y + 2 * (size_t)k * (size_t)a->n;
    for (int64_t i = 0; i < a->n; ++i) {
      double re = 0, im = 0;
      for (int64_t t = a->row_ptr[i]; t < a->row_ptr[i + 1]; ++t) {
        const double ar = a->val[2 * t], ai = a->val[2 * t + 1];
        const double xr = xk[2 * a->col[t]], xi = xk[2 * a->col[t] + 1];
        re += ar * xr - ai * xi;
        im += ar * xi + ai * xr;
      }
      yk[2 * i] = re, yk[2 * i + 1] = im;
    }
  }
}

/* Entry (i, j) of A, or 0. */
static void entry_at(const cli_zcsr* a, int64_t i, uint32_t j, double* re, double* im) {
  int64_t lo = a->row_ptr[i], hi = a->row_ptr[i + 1];
  *re = *im = 0;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (a->col[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < a->row_ptr[i + 1] && a->col[lo] == j) *re = a->val[2 * lo], *im = a->val[2 * lo + 1];
}

int cli_zcsr_hermitian(const cli_zcsr* a, char* why, size_t len) {
  for (int64_t i = 0; i < a->n; ++i) {
    int diagonal = 0;
    for (int64_t t = a->row_ptr[i]; t < a->row_ptr[i + 1]; ++t) {
      const uint32_t j = a->col[t];
      const double re = a->val[2 * t], im = a->val[2 * t + 1];
      if ((int64_t)j == i) {
        diagonal = 1;
        if (!(re > 0) || fabs(im) > 1e-12 * hypot(re, im)) {
          snprintf(why, len, "diagonal entry (%lld, %lld) = (%g, %g) is %s", (long long)i + 1,
                   (long long)i + 1, re, im, re > 0 ? "not real" : "not > 0");
          return 0;
        }
        continue;
      }
      double tre, tim;
      entry_at(a, j, (uint32_t)i, &tre, &tim);
      if (hypot(re - tre, im + tim) > 1e-12 * fmax(hypot(re, im), hypot(tre, tim))) {
        snprintf(why, len, "a(%lld, %u) = (%g, %g) but a(%u, %lld) = (%g, %g) is not its conjugate",
                 (long long)i + 1, j + 1, re, im, j + 1, (long long)i + 1, tre, tim);
        return 0;
      }
    }
    if (!diagonal) {
      snprintf(why, len, "row %lld has no diagonal entry", (long long)i + 1);
      return 0;
    }
  }
  return 1;
}
