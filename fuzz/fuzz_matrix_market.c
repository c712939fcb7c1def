/* libFuzzer harness: the shared Matrix Market reader (examples/common/matrix_market.c) on any
 * bytes, written to an in-memory file (memfd) that mm_read opens by its /proc path. When the
 * reader accepts a file, the harness checks what mm_matrix promises (sizes, indices in range,
 * finite values, square when symmetric, the banner's words) and, when its own strict parser
 * accepts the file too (gzip inflated first), that both read the same entries: symmetric halves
 * expanded, skew ones negated, hermitian ones conjugated, arrays column-major. A difference is a
 * silent misread and aborts. When the reader refuses, it must say why and hand back an empty
 * matrix. */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "matrix_market.h"

static int fd = -1;
static char path[64];
static int trace; /* CNC_FUZZ_TRACE=1: the reader's verdict on stderr (reproductions) */

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  trace = getenv("CNC_FUZZ_TRACE") != NULL;
  fd = memfd_create("cnc-fuzz-mtx", 0);
  if (fd < 0) {
    perror("memfd_create");
    abort();
  }
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  return 0;
}

static void die(const char* what) {
  fprintf(stderr, "fuzz_matrix_market: %s\n", what);
  abort();
}

/* ---- The harness's own reader: strict, and written from the format, not from mm_read. ------- */

typedef struct {
  int64_t row, col;
  double re, im;
} triplet;

typedef struct {
  int64_t rows, cols, nnz;
  int format, field, symmetry; /* mm_format, mm_field, mm_symmetry */
  triplet* t;
} reference;

/* The next line of [*at, end) without its end of line ('\n', then trailing '\r's). */
static int take_line(const char** at, const char* end, const char** line, size_t* len) {
  if (*at >= end) return 0;
  const char* nl = memchr(*at, '\n', (size_t)(end - *at));
  const char* stop = nl ? nl : end;
  *line = *at;
  *len = (size_t)(stop - *at);
  while (*len > 0 && (*line)[*len - 1] == '\r') --*len;
  *at = nl ? nl + 1 : end;
  return 1;
}

/* Splits a line into at most `max` tokens separated by spaces and tabs: their count, or -1 when
 * there are more or one is too long. */
static int tokens(const char* s, size_t len, char tok[][80], int max) {
  int count = 0;
  size_t k = 0;
  for (;;) {
    while (k < len && (s[k] == ' ' || s[k] == '\t')) ++k;
    if (k == len) return count;
    if (count == max) return -1;
    size_t t = 0;
    while (k < len && s[k] != ' ' && s[k] != '\t') {
      if (t + 1 >= 80) return -1;
      tok[count][t++] = s[k++];
    }
    tok[count++][t] = '\0';
  }
}

/* The next line with data: not blank, not a comment ('%' in its first column). */
static int data_line(const char** at, const char* end, const char** line, size_t* len) {
  char tok[1][80];
  while (take_line(at, end, line, len))
    if (*len > 0 && (*line)[0] != '%' && tokens(*line, *len, tok, 0) != 0) return 1;
  return 0;
}

static int integer(const char* s, int64_t* v) {
  int neg = 0;
  if (*s == '+' || *s == '-') neg = *s++ == '-';
  if (!isdigit((unsigned char)*s)) return 0;
  int64_t x = 0;
  for (; *s; ++s) {
    if (!isdigit((unsigned char)*s) || x > (INT64_C(1) << 58)) return 0;
    x = 10 * x + (*s - '0');
  }
  *v = neg ? -x : x;
  return 1;
}

static int real(const char* s, double* v) {
  char* end;
  *v = strtod(s, &end);
  return end != s && *end == '\0';
}

static int word(const char* tok, const char* const* words, int count) {
  for (int w = 0; w < count; ++w)
    if (!strcmp(tok, words[w])) return w;
  return -1;
}

static int cmp_triplet(const void* a, const void* b) {
  const triplet *x = a, *y = b;
  if (x->row != y->row) return x->row < y->row ? -1 : 1;
  if (x->col != y->col) return x->col < y->col ? -1 : 1;
  const int c = memcmp(&x->re, &y->re, sizeof x->re);
  return c ? c : memcmp(&x->im, &y->im, sizeof x->im);
}

/* One stored value (two for complex) from tokens tok[first...]; 1 on success. */
static int entry_value(const reference* ref, char tok[][80], int first, double* re, double* im) {
  *re = 1.0, *im = 0.0;
  if (ref->field == 2) return 1;
  if (ref->field == 1) {
    int64_t v;
    if (!integer(tok[first], &v)) return 0;
    *re = (double)v;
    return 1;
  }
  return real(tok[first], re) && (ref->field != 3 || real(tok[first + 1], im));
}

static void add(reference* ref, int64_t i, int64_t j, double re, double im) {
  ref->t[ref->nnz++] = (triplet){i - 1, j - 1, re, im};
  if (ref->symmetry != 0 && i != j) {
    const double sign = ref->symmetry == 2 ? -1.0 : 1.0;
    const double mirror_im = ref->field != 3 ? 0.0 : ref->symmetry == 3 ? -im : sign * im;
    ref->t[ref->nnz++] = (triplet){j - 1, i - 1, sign * re, mirror_im};
  }
}

/* 1 when the text is a Matrix Market file; fills `ref` (caller frees ref->t). */
static int parse_reference(const char* data, size_t size, reference* ref) {
  static const char* const formats[] = {"coordinate", "array"};
  static const char* const fields[] = {"real", "integer", "pattern", "complex", "double"};
  static const char* const symmetries[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
  memset(ref, 0, sizeof *ref);
  if (memchr(data, '\0', size)) return 0; /* not text */
  const char *at = data, *end = data + size, *line;
  size_t len;
  char tok[5][80];
  if (!take_line(&at, end, &line, &len) || tokens(line, len, tok, 5) != 5 ||
      strcmp(tok[0], "%%MatrixMarket"))
    return 0;
  for (int t = 1; t < 5; ++t)
    for (char* c = tok[t]; *c; ++c) *c = (char)tolower((unsigned char)*c);
  ref->format = word(tok[2], formats, 2);
  ref->field = word(tok[3], fields, 5);
  ref->symmetry = word(tok[4], symmetries, 4);
  if (strcmp(tok[1], "matrix") || ref->format < 0 || ref->field < 0 || ref->symmetry < 0) return 0;
  if (ref->field == 4) ref->field = 0; /* double is real */
  const int values = ref->field == 2 ? 0 : ref->field == 3 ? 2 : 1;
  if (!data_line(&at, end, &line, &len)) return 0;
  int64_t nz = 0;
  const int size_words = ref->format == 0 ? 3 : 2;
  if (tokens(line, len, tok, size_words) != size_words || !integer(tok[0], &ref->rows) ||
      !integer(tok[1], &ref->cols) || (ref->format == 0 && !integer(tok[2], &nz)))
    return 0;
  if (ref->rows < 1 || ref->cols < 1 || ref->rows > INT32_MAX || ref->cols > INT32_MAX || nz < 0 ||
      (ref->symmetry != 0 && ref->rows != ref->cols))
    return 0;
  if (ref->format == 1) { /* every stored value of the (lower) triangle, column by column */
    nz = ref->symmetry == 0   ? ref->rows * ref->cols
         : ref->symmetry == 2 ? ref->rows * (ref->rows - 1) / 2
                              : ref->rows * (ref->rows + 1) / 2;
  }
  if (nz > (int64_t)size) return 0;
  ref->t = malloc(sizeof(triplet) * (size_t)(2 * nz + 1));
  if (!ref->t) abort();
  int64_t i = ref->symmetry == 2 ? 2 : 1, j = 1; /* the next array position */
  for (int64_t k = 0; k < nz; ++k) {
    if (!data_line(&at, end, &line, &len)) return 0;
    double re, im;
    if (ref->format == 0) {
      if (tokens(line, len, tok, 2 + values) != 2 + values || !integer(tok[0], &i) ||
          !integer(tok[1], &j) || i < 1 || j < 1 || i > ref->rows || j > ref->cols ||
          !entry_value(ref, tok, 2, &re, &im))
        return 0;
      add(ref, i, j, re, im);
    } else {
      if (tokens(line, len, tok, values) != values || !entry_value(ref, tok, 0, &re, &im)) return 0;
      add(ref, i, j, re, im);
      if (++i > ref->rows) ++j, i = ref->symmetry == 0 ? 1 : ref->symmetry == 2 ? j + 1 : j;
    }
  }
  return !data_line(&at, end, &line, &len); /* nothing after the last entry */
}

/* gzip members (concatenated) inflated into *text (at most 4 MiB); 0 when they are not valid. */
static int inflate_all(const uint8_t* data, size_t size, char** text, size_t* len) {
  enum { cap = 4 << 20 };
  *text = malloc(cap), *len = 0;
  if (!*text) abort();
  size_t used = 0;
  while (used < size) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) abort();
    z.next_in = (Bytef*)(data + used);
    z.avail_in = (uInt)(size - used);
    z.next_out = (Bytef*)*text + *len;
    z.avail_out = (uInt)(cap - *len);
    const int rc = inflate(&z, Z_FINISH);
    used = size - z.avail_in;
    *len = cap - z.avail_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) return 0;
  }
  return 1;
}

/* ---- The harness -------------------------------------------------------------------------- */

static void check_accepted(const mm_matrix* m) {
  if (m->rows < 1 || m->cols < 1 || m->nnz < 0) die("accepted a size below 1 or a negative count");
  if (m->nnz > 0 && (!m->row || !m->col || !m->val)) die("entries without arrays");
  if ((m->field == MM_COMPLEX) != (m->imag != NULL))
    die("imag set for a field that is not complex");
  if (m->symmetric != (m->symmetry != MM_GENERAL)) die("symmetric disagrees with symmetry");
  if (m->symmetric && m->rows != m->cols) die("a symmetric matrix that is not square");
  for (int64_t k = 0; k < m->nnz; ++k) {
    if (m->row[k] < 0 || m->row[k] >= m->rows || m->col[k] < 0 || m->col[k] >= m->cols)
      die("an entry outside the matrix");
    if (!isfinite(m->val[k]) || (m->imag && !isfinite(m->imag[k]))) die("a value not finite");
  }
}

/* The reader's entries against the reference's, in any order. */
static void compare(const mm_matrix* m, reference* ref) {
  if (ref->rows != m->rows || ref->cols != m->cols) die("misread: sizes differ from the file's");
  if (ref->format != (int)m->format || ref->field != (int)m->field ||
      ref->symmetry != (int)m->symmetry)
    die("misread: the banner's words differ from the file's");
  if (ref->nnz != m->nnz) die("misread: entry count differs from the file's");
  triplet* got = malloc(sizeof(triplet) * (size_t)(m->nnz + 1));
  if (!got) abort();
  for (int64_t k = 0; k < m->nnz; ++k)
    got[k] = (triplet){m->row[k], m->col[k], m->val[k], m->imag ? m->imag[k] : 0.0};
  qsort(got, (size_t)m->nnz, sizeof *got, cmp_triplet);
  qsort(ref->t, (size_t)ref->nnz, sizeof *ref->t, cmp_triplet);
  for (int64_t k = 0; k < m->nnz; ++k)
    if (cmp_triplet(&got[k], &ref->t[k]) != 0) die("misread: an entry differs from the file's");
  free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
  /* The message buffer's size varies with the input: a short one must be cut, not overrun. */
  const int errlen = size > 0 && data[0] == '%' ? 512 : 1 + (int)(size % 32);
  char* err = malloc((size_t)errlen);
  if (!err) abort();
  err[0] = '\0';
  mm_matrix m;
  const int rc = mm_read(path, &m, err, errlen);
  if (trace) fprintf(stderr, "mm_read: %d %s\n", rc, rc ? err : "");
  if (rc != 0) {
    if (rc != -1) die("mm_read returned neither 0 nor -1");
    if (errlen > 1 && err[0] == '\0') die("refused without a message");
    if (!memchr(err, '\0', (size_t)errlen)) die("message not terminated");
    static const mm_matrix empty;
    if (memcmp(&m, &empty, sizeof m) != 0) die("refused, but left a matrix");
    free(err);
    return 0;
  }
  free(err);
  check_accepted(&m);
  const int gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  char* text = NULL;
  size_t len = size;
  reference ref;
  memset(&ref, 0, sizeof ref);
  if ((!gz || inflate_all(data, size, &text, &len)) &&
      parse_reference(gz ? text : (const char*)data, len, &ref)) {
    compare(&m, &ref);
    if (trace) fprintf(stderr, "the same %lld entries as the harness's reader\n", (long long)m.nnz);
  }
  free(ref.t);
  free(text);
  mm_free(&m);
  return 0;
}
