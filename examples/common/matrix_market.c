/* Matrix Market reader: see matrix_market.h. Hostile files are answered with a message naming the
 * line: no line length is assumed (getline), the declared entry count is checked against the
 * file's size before anything is allocated and the arrays grow as entries arrive, and every size
 * computation is checked for overflow. */
#define _POSIX_C_SOURCE 200809L
#include "matrix_market.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  FILE* f;
  char* line;
  size_t cap;
  long long number; /* of the line in `line`, from 1 */
  const char* path;
  char* err;
  int errlen;
} reader;

static int fail(reader* r, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader* r, const char* fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (r->number > 0)
    snprintf(r->err, (size_t)r->errlen, "%s:%lld: %s", r->path, r->number, what);
  else
    snprintf(r->err, (size_t)r->errlen, "%s: %s", r->path, what);
  return -1;
}

/* The next line (any length), without its end of line; 0 at the end of the file. */
static int next_line(reader* r) {
  const ssize_t got = getline(&r->line, &r->cap, r->f);
  if (got < 0) return 0;
  ++r->number;
  size_t len = (size_t)got;
  while (len > 0 && (r->line[len - 1] == '\n' || r->line[len - 1] == '\r')) r->line[--len] = '\0';
  return 1;
}

static int blank(const char* s) { return s[strspn(s, " \t")] == '\0'; }

static void lower(char* s) {
  for (; *s; ++s) *s = (char)tolower((unsigned char)*s);
}

/* A decimal integer token at *s (leading blanks skipped), advancing *s; 0 when there is none or
 * it overflows. */
static int read_integer(const char** s, long long* out) {
  char* end;
  errno = 0;
  const long long v = strtoll(*s, &end, 10);
  if (end == *s || errno == ERANGE) return 0;
  *s = end;
  *out = v;
  return 1;
}

static int read_real(const char** s, double* out) {
  char* end;
  const double v = strtod(*s, &end);
  if (end == *s) return 0;
  *s = end;
  *out = v;
  return 1;
}

/* Room for `need` entries (need <= limit, the most the file can hold): doubled as they come. */
static int reserve(mm_matrix* m, int64_t* cap, int64_t need, int64_t limit) {
  if (need <= *cap) return 1;
  int64_t next = *cap ? *cap : 1024;
  while (next < need) next = next > limit / 2 ? limit : 2 * next;
  if ((uint64_t)next > SIZE_MAX / sizeof(double)) return 0;
  int32_t* row = realloc(m->row, sizeof(int32_t) * (size_t)next);
  if (row) m->row = row;
  int32_t* col = row ? realloc(m->col, sizeof(int32_t) * (size_t)next) : NULL;
  if (col) m->col = col;
  double* val = col ? realloc(m->val, sizeof(double) * (size_t)next) : NULL;
  if (val) m->val = val;
  if (!val) return 0;
  *cap = next;
  return 1;
}

static int read_file(reader* r, mm_matrix* m) {
  char obj[64] = "", fmt[64] = "", field[64] = "", sym[64] = "";
  if (!next_line(r) ||
      sscanf(r->line, "%%%%MatrixMarket %63s %63s %63s %63s", obj, fmt, field, sym) != 4)
    return fail(r, "missing %s banner", "%%MatrixMarket matrix <format> <field> <symmetry>");
  lower(obj), lower(fmt), lower(field), lower(sym);
  if (strcmp(obj, "matrix")) return fail(r, "object '%s': only 'matrix' is supported", obj);
  if (!strcmp(fmt, "array"))
    return fail(r, "'array' (dense) files are not supported: convert to 'coordinate'");
  if (strcmp(fmt, "coordinate")) return fail(r, "format '%s': expected 'coordinate'", fmt);
  const int pattern = !strcmp(field, "pattern");
  if (!strcmp(field, "complex"))
    return fail(r, "'complex' values are not supported: cnc solves real systems");
  if (!pattern && strcmp(field, "real") && strcmp(field, "integer") && strcmp(field, "double"))
    return fail(r, "field '%s': expected real, integer, double or pattern", field);
  const int skew = !strcmp(sym, "skew-symmetric");
  m->symmetric = !strcmp(sym, "symmetric") || skew;
  if (!m->symmetric && strcmp(sym, "general"))
    return fail(r, "symmetry '%s': expected general, symmetric or skew-symmetric", sym);
  do {
    if (!next_line(r)) return fail(r, "missing size line");
  } while (r->line[0] == '%' || blank(r->line));
  const char* s = r->line;
  long long rows, cols, nz;
  if (!read_integer(&s, &rows) || !read_integer(&s, &cols) || !read_integer(&s, &nz) || !blank(s))
    return fail(r, "bad size line '%.60s': expected 'rows columns entries'", r->line);
  if (rows <= 0 || cols <= 0 || rows > INT32_MAX || cols > INT32_MAX)
    return fail(r, "bad size line: %lld x %lld is outside 1 .. 2^31-1", rows, cols);
  if (m->symmetric && rows != cols)
    return fail(r, "bad size line: a %s matrix must be square, not %lld x %lld", sym, rows, cols);
  /* Every entry takes at least 4 bytes ("1 1\n"): a count the file cannot hold is refused
   * before any allocation. */
  struct stat st;
  const long long most = fstat(fileno(r->f), &st) == 0 && S_ISREG(st.st_mode)
                             ? (long long)st.st_size / 4 + 1
                             : INT64_MAX / 2;
  if (nz < 0) return fail(r, "bad size line: a negative entry count (%lld)", nz);
  if (nz > most) return fail(r, "bad size line: %lld entries cannot be in a file of this size", nz);
  m->rows = (int32_t)rows, m->cols = (int32_t)cols;
  const int64_t limit = m->symmetric ? 2 * (int64_t)nz : (int64_t)nz; /* nz <= 2^61: no overflow */
  int64_t cap = 0;
  for (long long k = 0; k < nz; ++k) {
    do {
      if (!next_line(r)) return fail(r, "the file ends after %lld of its %lld entries", k, nz);
    } while (blank(r->line) || r->line[0] == '%');
    s = r->line;
    long long i, j;
    double v = 1.0;
    if (!read_integer(&s, &i) || !read_integer(&s, &j) || (!pattern && !read_real(&s, &v)) ||
        !blank(s))
      return fail(r, "bad entry '%.60s': expected 'row column%s'", r->line,
                  pattern ? "" : " value");
    if (i < 1 || j < 1 || i > rows || j > cols)
      return fail(r, "entry (%lld, %lld) outside the %lld x %lld matrix", i, j, rows, cols);
    if (!reserve(m, &cap, m->nnz + 2, limit + 2)) return fail(r, "out of memory");
    m->row[m->nnz] = (int32_t)(i - 1), m->col[m->nnz] = (int32_t)(j - 1), m->val[m->nnz] = v;
    m->nnz++;
    if (m->symmetric && i != j) {
      m->row[m->nnz] = (int32_t)(j - 1), m->col[m->nnz] = (int32_t)(i - 1);
      m->val[m->nnz] = skew ? -v : v;
      m->nnz++;
    }
  }
  return 0;
}

int mm_read(const char* path, mm_matrix* m, char* err, int errlen) {
  memset(m, 0, sizeof *m);
  reader r = {NULL, NULL, 0, 0, path, err, errlen};
  r.f = fopen(path, "r");
  if (!r.f) return fail(&r, "cannot open: %s", strerror(errno));
  const int rc = read_file(&r, m);
  free(r.line);
  fclose(r.f);
  if (rc != 0) mm_free(m);
  return rc;
}

void mm_free(mm_matrix* m) {
  free(m->row);
  free(m->col);
  free(m->val);
  memset(m, 0, sizeof *m);
}
