/* Minimal Matrix Market reader: see matrix_market.h. */
#include "matrix_market.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char* err, int errlen, const char* what, const char* path) {
  snprintf(err, (size_t)errlen, "%s: %s", path, what);
  return -1;
}

static void lower(char* s) {
  for (; *s; ++s) *s = (char)tolower((unsigned char)*s);
}

int mm_read(const char* path, mm_matrix* m, char* err, int errlen) {
  memset(m, 0, sizeof *m);
  FILE* f = fopen(path, "r");
  if (!f) return fail(err, errlen, "cannot open", path);
  char line[1024], obj[64] = "", fmt[64] = "", field[64] = "", sym[64] = "";
  if (!fgets(line, sizeof line, f) ||
      sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4) {
    fclose(f);
    return fail(err, errlen, "missing %%MatrixMarket banner", path);
  }
  lower(obj), lower(fmt), lower(field), lower(sym);
  if (strcmp(obj, "matrix") || strcmp(fmt, "coordinate")) {
    fclose(f);
    return fail(err, errlen, "only 'matrix coordinate' files are supported", path);
  }
  int pattern = !strcmp(field, "pattern");
  if (!pattern && strcmp(field, "real") && strcmp(field, "integer") && strcmp(field, "double")) {
    fclose(f);
    return fail(err, errlen, "only real, integer or pattern fields are supported", path);
  }
  int skew = !strcmp(sym, "skew-symmetric");
  m->symmetric = !strcmp(sym, "symmetric") || skew;
  if (!m->symmetric && strcmp(sym, "general")) {
    fclose(f);
    return fail(err, errlen, "unsupported symmetry (general, symmetric, skew-symmetric)", path);
  }
  do {
    if (!fgets(line, sizeof line, f)) {
      fclose(f);
      return fail(err, errlen, "missing size line", path);
    }
  } while (line[0] == '%' || line[strspn(line, " \t\r\n")] == '\0');
  long long r, c, nz;
  if (sscanf(line, "%lld %lld %lld", &r, &c, &nz) != 3 || r <= 0 || c <= 0 || nz < 0 ||
      r > INT32_MAX || c > INT32_MAX) {
    fclose(f);
    return fail(err, errlen, "bad size line", path);
  }
  m->rows = (int32_t)r, m->cols = (int32_t)c;
  int64_t cap = m->symmetric ? 2 * nz : nz;
  m->row = malloc(sizeof(int32_t) * (size_t)(cap ? cap : 1));
  m->col = malloc(sizeof(int32_t) * (size_t)(cap ? cap : 1));
  m->val = malloc(sizeof(double) * (size_t)(cap ? cap : 1));
  if (!m->row || !m->col || !m->val) {
    fclose(f);
    mm_free(m);
    return fail(err, errlen, "out of memory", path);
  }
  for (long long k = 0; k < nz; ++k) {
    long long i, j;
    double v = 1.0;
    int got = pattern ? fscanf(f, "%lld %lld", &i, &j) : fscanf(f, "%lld %lld %lf", &i, &j, &v);
    if (got != (pattern ? 2 : 3) || i < 1 || j < 1 || i > r || j > c) {
      fclose(f);
      mm_free(m);
      return fail(err, errlen, "bad or missing entry", path);
    }
    m->row[m->nnz] = (int32_t)(i - 1), m->col[m->nnz] = (int32_t)(j - 1), m->val[m->nnz] = v;
    m->nnz++;
    if (m->symmetric && i != j) {
      m->row[m->nnz] = (int32_t)(j - 1), m->col[m->nnz] = (int32_t)(i - 1);
      m->val[m->nnz] = skew ? -v : v;
      m->nnz++;
    }
  }
  fclose(f);
  return 0;
}

void mm_free(mm_matrix* m) {
  free(m->row);
  free(m->col);
  free(m->val);
  memset(m, 0, sizeof *m);
}
