/* Matrix Market reader: see matrix_market.h. The input is read in blocks (inflated first when it
 * is gzip) and cut into lines of any length here; counts the file declares are checked against
 * the most its bytes can hold before they are believed, the arrays grow as entries arrive, and
 * every size computation is checked for overflow. */
#define _POSIX_C_SOURCE 200809L
#include "matrix_market.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <zlib.h>

#define BLOCK (1 << 16)
/* Blanks between tokens (a loop, not strspn: it builds a table on every call). */
static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static const char* skip_blanks(const char* s) {
  while (is_blank(*s)) ++s;
  return s;
}
/* Passed through %s: in a format string its %% would print as one. */
static const char banner[] = "'%%MatrixMarket matrix <format> <field> <symmetry>'";

typedef struct {
  FILE* f; /* the bytes come from f, or from mem[0, mem_len) */
  const unsigned char* mem;
  size_t mem_len, mem_at;
  int gz;          /* the bytes are gzip, inflated through z */
  int z_ready;     /* inflateEnd owed */
  int member_done; /* a gzip member ended: more input must be another member */
  z_stream z;
  unsigned char in[BLOCK];  /* raw bytes (gzip) */
  unsigned char out[BLOCK]; /* text */
  size_t out_len, out_at;
  char* line; /* the current line, NUL-terminated, without its end of line */
  size_t cap;
  long long number; /* of the line in `line`, from 1 */
  int64_t bytes;    /* the most text the input can hold */
  int64_t entries_cap;
  const char* name;
  char* err;
  int errlen;
} reader;

static int fail_at(reader* r, long long line, long column, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(reader* r, long long line, long column, const char* fmt, ...) {
  if (!r->err || r->errlen <= 0) return -1;
  char what[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const size_t len = (size_t)r->errlen;
  if (line > 0 && column > 0)
    snprintf(r->err, len, "%s: line %lld, column %ld: %s", r->name, line, column, what);
  else if (line > 0)
    snprintf(r->err, len, "%s: line %lld: %s", r->name, line, what);
  else
    snprintf(r->err, len, "%s: %s", r->name, what);
  return -1;
}

/* Where in the current line `s` points, from 1. */
static long column_of(const reader* r, const char* s) { return (long)(s - r->line) + 1; }

/* Raw bytes into dst: how many (0 at the end), or -1 on a read error. */
static long raw_read(reader* r, unsigned char* dst, size_t cap) {
  if (!r->f) {
    const size_t n = r->mem_len - r->mem_at < cap ? r->mem_len - r->mem_at : cap;
    if (n) memcpy(dst, r->mem + r->mem_at, n);
    r->mem_at += n;
    return (long)n;
  }
  const size_t n = fread(dst, 1, cap, r->f);
  return n == 0 && ferror(r->f) ? -1 : (long)n;
}

/* The next block of text into r->out: 1, 0 at the end of the input, -1 after an error. */
static int fill(reader* r) {
  r->out_at = r->out_len = 0;
  if (!r->gz) {
    const long n = raw_read(r, r->out, sizeof r->out);
    if (n < 0) return fail_at(r, 0, 0, "cannot read line %lld: %s", r->number + 1, strerror(errno));
    r->out_len = (size_t)n;
    return n > 0;
  }
  for (;;) {
    if (r->z.avail_in == 0) {
      const long n = raw_read(r, r->in, sizeof r->in);
      if (n < 0)
        return fail_at(r, 0, 0, "cannot read line %lld: %s", r->number + 1, strerror(errno));
      if (n == 0 && r->member_done) return 0;
      if (n == 0)
        return fail_at(r, 0, 0, "the gzip data is truncated (reading line %lld)", r->number + 1);
      r->z.next_in = r->in;
      r->z.avail_in = (uInt)n;
    }
    if (r->member_done) { /* concatenated members are one text (as gunzip reads them) */
      if (inflateReset(&r->z) != Z_OK) return fail_at(r, 0, 0, "zlib failed");
      r->member_done = 0;
    }
    r->z.next_out = r->out;
    r->z.avail_out = sizeof r->out;
    const int rc = inflate(&r->z, Z_NO_FLUSH);
    r->out_len = sizeof r->out - r->z.avail_out;
    if (rc == Z_STREAM_END)
      r->member_done = 1;
    else if (rc != Z_OK && rc != Z_BUF_ERROR)
      return fail_at(r, 0, 0, "corrupt gzip data (%s; reading line %lld)",
                     r->z.msg ? r->z.msg : zError(rc), r->number + 1);
    if (r->out_len > 0) return 1;
  }
}

/* Appends n bytes to the line being built (len so far), keeping room for its NUL. */
static int append(reader* r, size_t* len, const unsigned char* s, size_t n) {
  if (n > SIZE_MAX - 1 - *len) return fail_at(r, r->number + 1, 0, "line too long");
  const size_t need = *len + n + 1;
  if (need > r->cap) {
    size_t cap = r->cap ? r->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : 2 * cap;
    char* line = realloc(r->line, cap);
    if (!line) return fail_at(r, r->number + 1, 0, "out of memory (a line of %zu bytes)", need);
    r->line = line, r->cap = cap;
  }
  if (n) memcpy(r->line + *len, s, n);
  *len += n;
  return 0;
}

/* The next line into r->line: 1, 0 at the end of the input, -1 after an error. */
static int next_line(reader* r) {
  size_t len = 0;
  int any = 0;
  for (;;) {
    if (r->out_at == r->out_len) {
      const int got = fill(r);
      if (got < 0) return -1;
      if (got == 0) {
        if (!any) return 0;
        break; /* a last line without its end of line */
      }
    }
    any = 1;
    const unsigned char* s = r->out + r->out_at;
    const unsigned char* nl = memchr(s, '\n', r->out_len - r->out_at);
    const size_t take = nl ? (size_t)(nl - s) : r->out_len - r->out_at;
    if (append(r, &len, s, take)) return -1;
    r->out_at += take + (nl != NULL);
    if (nl) break;
  }
  ++r->number;
  r->line[len] = '\0';
  /* A NUL would end the line early for every string function below: a binary file. */
  const char* nul = memchr(r->line, '\0', len);
  if (nul) return fail_at(r, r->number, column_of(r, nul), "a NUL byte: not a text file");
  while (len > 0 && r->line[len - 1] == '\r') r->line[--len] = '\0';
  return 1;
}

/* The next line that is neither blank nor a comment. */
static int data_line(reader* r) {
  int got;
  while ((got = next_line(r)) == 1) {
    const char* s = skip_blanks(r->line);
    if (*s != '\0' && *s != '%') break;
  }
  return got;
}

/* The next token at *s (blanks skipped): its length, 0 at the end of the line; *s at its start. */
static size_t token(const char** s) {
  *s = skip_blanks(*s);
  size_t n = 0;
  while ((*s)[n] != '\0' && !is_blank((*s)[n])) ++n;
  return n;
}

static int is_word(const char* t, size_t n, const char* word) {
  return n == strlen(word) && strncasecmp(t, word, n) == 0;
}

/* Shown tokens are cut to 40 characters. */
#define TOK(n) (int)((n) > 40 ? 40 : (n))

/* An integer in lo..hi named `what`, from the next token of the line; *s moves past it. */
static int read_int(reader* r, const char** s, const char* what, long long lo, long long hi,
                    long long* out) {
  const size_t n = token(s);
  if (n == 0)
    return fail_at(r, r->number, column_of(r, *s), "expected the %s, found the end of the line",
                   what);
  char* end;
  errno = 0;
  const long long v = strtoll(*s, &end, 10);
  if (end != *s + n)
    return fail_at(r, r->number, column_of(r, *s), "%s '%.*s' is not an integer", what, TOK(n), *s);
  if (errno == ERANGE || v < lo || v > hi)
    return fail_at(r, r->number, column_of(r, *s), "%s %.*s out of range %lld..%lld", what, TOK(n),
                   *s, lo, hi);
  *s += n;
  *out = v;
  return 0;
}

/* A finite value named `what` from the next token (an integer one for an integer field). */
static int read_value(reader* r, const char** s, const char* what, int integer, double* out) {
  const size_t n = token(s);
  if (n == 0)
    return fail_at(r, r->number, column_of(r, *s), "expected the %s, found the end of the line",
                   what);
  char* end;
  errno = 0;
  double v;
  if (integer) {
    const long long i = strtoll(*s, &end, 10);
    if (end == *s + n && errno == ERANGE)
      return fail_at(r, r->number, column_of(r, *s), "%s %.*s is out of the 64-bit range", what,
                     TOK(n), *s);
    v = (double)i;
  } else {
    v = strtod(*s, &end);
  }
  if (end != *s + n)
    return fail_at(r, r->number, column_of(r, *s), "%s '%.*s' is not %s", what, TOK(n), *s,
                   integer ? "an integer (the field is integer)" : "a number");
  if (!isfinite(v))
    return fail_at(r, r->number, column_of(r, *s), "%s '%.*s' is not finite", what, TOK(n), *s);
  *s += n;
  *out = v;
  return 0;
}

static int end_of_line(reader* r, const char* s, const char* after) {
  const size_t n = token(&s);
  if (n == 0) return 0;
  return fail_at(r, r->number, column_of(r, s), "unexpected '%.*s' after the %s", TOK(n), s, after);
}

/* Room for `need` entries (need <= limit, the most the file can give): doubled as they come. */
static int reserve(reader* r, mm_matrix* m, int64_t need, int64_t limit) {
  if (need <= r->entries_cap) return 0;
  int64_t next = r->entries_cap > 512 ? r->entries_cap : 512;
  while (next < need) next = next > limit / 2 ? limit : 2 * next;
  if (next > limit) next = limit;
  if ((uint64_t)next > SIZE_MAX / sizeof(double)) return fail_at(r, r->number, 0, "out of memory");
  int32_t* row = realloc(m->row, sizeof(int32_t) * (size_t)next);
  if (row) m->row = row;
  int32_t* col = row ? realloc(m->col, sizeof(int32_t) * (size_t)next) : NULL;
  if (col) m->col = col;
  double* val = col ? realloc(m->val, sizeof(double) * (size_t)next) : NULL;
  if (val) m->val = val;
  int ok = val != NULL;
  if (ok && m->field == MM_COMPLEX) {
    double* imag = realloc(m->imag, sizeof(double) * (size_t)next);
    if (imag) m->imag = imag;
    ok = imag != NULL;
  }
  if (!ok) return fail_at(r, r->number, 0, "out of memory (%lld entries)", (long long)next);
  r->entries_cap = next;
  return 0;
}

/* Entry (i, j) (1-based, checked) and, for the symmetric kinds off the diagonal, its mirror. */
static int put(reader* r, mm_matrix* m, long long i, long long j, double re, double im,
               int64_t limit) {
  const int mirror = m->symmetry != MM_GENERAL && i != j;
  if (reserve(r, m, m->nnz + 1 + mirror, limit)) return -1;
  m->row[m->nnz] = (int32_t)(i - 1), m->col[m->nnz] = (int32_t)(j - 1), m->val[m->nnz] = re;
  if (m->imag) m->imag[m->nnz] = im;
  m->nnz++;
  if (mirror) {
    const double sign = m->symmetry == MM_SKEW_SYMMETRIC ? -1.0 : 1.0;
    m->row[m->nnz] = (int32_t)(j - 1), m->col[m->nnz] = (int32_t)(i - 1);
    m->val[m->nnz] = sign * re;
    if (m->imag) m->imag[m->nnz] = m->symmetry == MM_HERMITIAN ? -im : sign * im;
    m->nnz++;
  }
  return 0;
}

static const char* const format_names[] = {"coordinate", "array"};
static const char* const field_names[] = {"real", "integer", "pattern", "complex"};
static const char* const symmetry_names[] = {"general", "symmetric", "skew-symmetric", "hermitian"};

/* The banner, line 1: every word known, every combination valid. */
static int read_banner(reader* r, mm_matrix* m) {
  const int got = next_line(r);
  if (got < 0) return -1;
  if (got == 0) return fail_at(r, 0, 0, "empty: expected the banner %s", banner);
  const char* s = r->line;
  size_t n = token(&s);
  if (!is_word(s, n, "%%MatrixMarket"))
    return fail_at(r, 1, 0, "expected the banner %s, found '%.40s'", banner, r->line);
  static const char* const words[] = {"object", "format", "field", "symmetry"};
  const char* at[4];
  size_t len[4];
  for (int w = 0; w < 4; ++w) {
    s += n;
    n = token(&s);
    if (n == 0)
      return fail_at(r, 1, column_of(r, s), "the banner ends before its %s: expected %s", words[w],
                     banner);
    at[w] = s, len[w] = n;
  }
  s += n;
  if (end_of_line(r, s, "symmetry")) return -1;
  if (!is_word(at[0], len[0], "matrix"))
    return fail_at(r, 1, column_of(r, at[0]), "object '%.*s': only 'matrix' is defined",
                   TOK(len[0]), at[0]);
  if (is_word(at[1], len[1], "coordinate"))
    m->format = MM_COORDINATE;
  else if (is_word(at[1], len[1], "array"))
    m->format = MM_ARRAY;
  else
    return fail_at(r, 1, column_of(r, at[1]), "format '%.*s': expected coordinate or array",
                   TOK(len[1]), at[1]);
  if (is_word(at[2], len[2], "real") || is_word(at[2], len[2], "double"))
    m->field = MM_REAL;
  else if (is_word(at[2], len[2], "integer"))
    m->field = MM_INTEGER;
  else if (is_word(at[2], len[2], "pattern"))
    m->field = MM_PATTERN;
  else if (is_word(at[2], len[2], "complex"))
    m->field = MM_COMPLEX;
  else
    return fail_at(r, 1, column_of(r, at[2]),
                   "field '%.*s': expected real, double, integer, pattern or complex", TOK(len[2]),
                   at[2]);
  if (is_word(at[3], len[3], "general"))
    m->symmetry = MM_GENERAL;
  else if (is_word(at[3], len[3], "symmetric"))
    m->symmetry = MM_SYMMETRIC;
  else if (is_word(at[3], len[3], "skew-symmetric"))
    m->symmetry = MM_SKEW_SYMMETRIC;
  else if (is_word(at[3], len[3], "hermitian"))
    m->symmetry = MM_HERMITIAN;
  else
    return fail_at(r, 1, column_of(r, at[3]),
                   "symmetry '%.*s': expected general, symmetric, skew-symmetric or hermitian",
                   TOK(len[3]), at[3]);
  m->symmetric = m->symmetry != MM_GENERAL;
  if (m->format == MM_ARRAY && m->field == MM_PATTERN)
    return fail_at(r, 1, column_of(r, at[2]),
                   "'array pattern' is not a valid combination: an array stores every value");
  if (m->symmetry == MM_HERMITIAN && m->field != MM_COMPLEX)
    return fail_at(r, 1, column_of(r, at[3]),
                   "'%s hermitian' is not a valid combination: hermitian needs a complex field",
                   field_names[m->field]);
  if (m->symmetry == MM_SKEW_SYMMETRIC && m->field == MM_PATTERN)
    return fail_at(r, 1, column_of(r, at[3]),
                   "'pattern skew-symmetric' is not a valid combination: a pattern has no signs");
  return 0;
}

/* A value (two for complex) of the current line at *s; 1 for a pattern. */
static int read_entry_value(reader* r, const mm_matrix* m, const char** s, double* re, double* im) {
  *re = 1.0, *im = 0.0;
  if (m->field == MM_PATTERN) return end_of_line(r, *s, "column index");
  if (m->field == MM_COMPLEX)
    return read_value(r, s, "real part", 0, re) || read_value(r, s, "imaginary part", 0, im) ||
           end_of_line(r, *s, "imaginary part");
  return read_value(r, s, "value", m->field == MM_INTEGER, re) || end_of_line(r, *s, "value");
}

/* The diagonal of a skew-symmetric matrix is zero and that of a hermitian one real. */
static int check_diagonal(reader* r, const mm_matrix* m, long long i, double im) {
  if (m->symmetry == MM_SKEW_SYMMETRIC)
    return fail_at(r, r->number, 0,
                   "diagonal entry (%lld, %lld) in a skew-symmetric file: its diagonal is zero", i,
                   i);
  if (m->symmetry == MM_HERMITIAN && im != 0.0)
    return fail_at(r, r->number, 0,
                   "diagonal entry (%lld, %lld) of a hermitian matrix has imaginary part %g: it "
                   "must be real",
                   i, i, im);
  return 0;
}

static int read_coordinate(reader* r, mm_matrix* m, long long nz) {
  /* Every entry takes at least 4 bytes ("1 1\n"): a count the input cannot hold is refused
   * before anything is allocated. */
  if (nz > r->bytes / 4 + 1)
    return fail_at(r, r->number, 0, "%lld entries cannot be in a file of this size", nz);
  const int64_t limit = m->symmetric ? 2 * (int64_t)nz : (int64_t)nz; /* nz < 2^62 */
  long long lower = 0, upper = 0; /* a line with an entry below / above the diagonal */
  for (long long k = 0; k < nz; ++k) {
    const int got = data_line(r);
    if (got < 0) return -1;
    if (got == 0)
      return fail_at(r, 0, 0, "the file ends after line %lld, with %lld of its %lld entries",
                     r->number, k, nz);
    const char* s = r->line;
    long long i, j;
    double re, im;
    if (read_int(r, &s, "row index", 1, m->rows, &i) ||
        read_int(r, &s, "column index", 1, m->cols, &j) || read_entry_value(r, m, &s, &re, &im))
      return -1;
    if (i == j && m->symmetric && check_diagonal(r, m, i, im)) return -1;
    if (m->symmetric && i != j) { /* mirrored: the other triangle must be absent */
      long long* mine = i > j ? &lower : &upper;
      const long long other = i > j ? upper : lower;
      if (other)
        return fail_at(r, r->number, 0,
                       "entry (%lld, %lld) is %s the diagonal but line %lld's is %s: a %s file "
                       "stores one triangle",
                       i, j, i > j ? "below" : "above", other, i > j ? "above" : "below",
                       symmetry_names[m->symmetry]);
      if (!*mine) *mine = r->number;
    }
    if (put(r, m, i, j, re, im, limit)) return -1;
  }
  return 0;
}

/* Column-major; the symmetric kinds store the lower triangle (skew-symmetric: below the
 * diagonal). */
static int read_array(reader* r, mm_matrix* m) {
  const int64_t rows = m->rows, cols = m->cols;
  int64_t count, limit; /* the values in the file, the entries they give (< 2^62) */
  if (m->symmetry == MM_GENERAL)
    count = limit = rows * cols;
  else if (m->symmetry == MM_SKEW_SYMMETRIC)
    count = rows * (rows - 1) / 2, limit = rows * (rows - 1);
  else
    count = rows * (rows + 1) / 2, limit = rows * rows;
  /* At least 2 bytes a value ("0\n"). */
  if (count > r->bytes / 2 + 1)
    return fail_at(r, r->number, 0,
                   "a %s %lld x %lld array has %lld values: more than a file of this size holds",
                   symmetry_names[m->symmetry], (long long)rows, (long long)cols, (long long)count);
  long long i = m->symmetry == MM_SKEW_SYMMETRIC ? 2 : 1, j = 1;
  for (int64_t k = 0; k < count; ++k) {
    const int got = data_line(r);
    if (got < 0) return -1;
    if (got == 0)
      return fail_at(r, 0, 0, "the file ends after line %lld, with %lld of its %lld values",
                     r->number, (long long)k, (long long)count);
    const char* s = r->line;
    double re, im;
    if (read_entry_value(r, m, &s, &re, &im)) return -1;
    if (i == j && m->symmetric && check_diagonal(r, m, i, im)) return -1;
    if (put(r, m, i, j, re, im, limit)) return -1;
    if (++i > rows) { /* the next column, from its first stored row */
      ++j;
      i = m->symmetry == MM_GENERAL ? 1 : m->symmetry == MM_SKEW_SYMMETRIC ? j + 1 : j;
    }
  }
  return 0;
}

static int read_matrix(reader* r, mm_matrix* m) {
  if (read_banner(r, m)) return -1;
  const int got = data_line(r);
  if (got < 0) return -1;
  if (got == 0) return fail_at(r, 0, 0, "the file ends before the size line");
  const char* s = r->line;
  long long rows, cols, nz = 0;
  if (read_int(r, &s, "row count", 1, INT32_MAX, &rows) ||
      read_int(r, &s, "column count", 1, INT32_MAX, &cols))
    return -1;
  if (m->format == MM_COORDINATE && read_int(r, &s, "entry count", 0, INT64_MAX, &nz)) return -1;
  static const char* const last[] = {"entry count",
                                     "column count (an array's size line has two numbers)"};
  if (end_of_line(r, s, last[m->format])) return -1;
  if (m->symmetric && rows != cols)
    return fail_at(r, r->number, 0, "a %s matrix must be square, not %lld x %lld",
                   symmetry_names[m->symmetry], rows, cols);
  m->rows = (int32_t)rows, m->cols = (int32_t)cols;
  if (m->field == MM_COMPLEX) {
    m->imag = malloc(sizeof(double)); /* non-NULL from the start: the mark of a complex file */
    if (!m->imag) return fail_at(r, r->number, 0, "out of memory");
  }
  if (m->format == MM_COORDINATE ? read_coordinate(r, m, nz) : read_array(r, m)) return -1;
  const int more = data_line(r);
  if (more < 0) return -1;
  if (more > 0)
    return fail_at(r, r->number, column_of(r, skip_blanks(r->line)),
                   "more data than the size line declares (%s %s)", format_names[m->format],
                   m->format == MM_COORDINATE ? "entries" : "values");
  return 0;
}

/* The most text `size` raw bytes can give: gzip's deflate expands at most 1032 to 1. */
static int64_t most_text(int64_t size, int gz) {
  if (!gz) return size;
  return size > INT64_MAX / 1032 ? INT64_MAX : size * 1032;
}

/* Reads from r (its source set), then releases everything r holds. */
static int read_source(reader* r, mm_matrix* m, int64_t size) {
  int rc = 0;
  const long n = raw_read(r, r->in, sizeof r->in);
  if (n < 0) rc = fail_at(r, 0, 0, "cannot read: %s", strerror(errno));
  if (rc == 0 && n >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
    r->gz = 1;
    r->z.next_in = r->in;
    r->z.avail_in = (uInt)n;
    if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK)
      rc = fail_at(r, 0, 0, "zlib cannot start: %s", r->z.msg ? r->z.msg : "out of memory");
    else
      r->z_ready = 1;
  } else if (rc == 0) {
    memcpy(r->out, r->in, (size_t)n);
    r->out_len = (size_t)n;
  }
  r->bytes = size < 0 ? INT64_MAX / 4 : most_text(size, r->gz);
  if (rc == 0) rc = read_matrix(r, m);
  if (r->z_ready) inflateEnd(&r->z);
  free(r->line);
  if (rc != 0) mm_free(m);
  return rc;
}

int mm_read(const char* path, mm_matrix* m, char* err, int errlen) {
  memset(m, 0, sizeof *m);
  reader* r = calloc(1, sizeof *r);
  if (!r) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: out of memory", path);
    return -1;
  }
  r->name = path, r->err = err, r->errlen = errlen;
  int rc;
  r->f = fopen(path, "rb");
  if (!r->f) {
    rc = fail_at(r, 0, 0, "cannot open: %s", strerror(errno));
  } else {
    /* Only a regular file's size bounds what it holds (a pipe's is unknown). */
    struct stat st;
    const int sized = fstat(fileno(r->f), &st) == 0 && S_ISREG(st.st_mode);
    rc = read_source(r, m, sized ? (int64_t)st.st_size : -1);
    fclose(r->f);
  }
  free(r);
  return rc;
}

int mm_read_memory(const void* data, size_t size, const char* name, mm_matrix* m, char* err,
                   int errlen) {
  memset(m, 0, sizeof *m);
  if (!name) name = "(memory)";
  reader* r = calloc(1, sizeof *r);
  if (!r) {
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s: out of memory", name);
    return -1;
  }
  r->name = name, r->err = err, r->errlen = errlen;
  r->mem = data, r->mem_len = data ? size : 0;
  const int rc = read_source(r, m, size > INT64_MAX ? INT64_MAX : (int64_t)size);
  free(r);
  return rc;
}

void mm_free(mm_matrix* m) {
  free(m->row);
  free(m->col);
  free(m->val);
  free(m->imag);
  memset(m, 0, sizeof *m);
}
