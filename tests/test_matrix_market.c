/* The shared Matrix Market reader (examples/common/matrix_market.c: cnc-solve, the tests, the
 * benchmarks). Valid files of every format, field and symmetry against hand-expanded entries;
 * gzip (written here with zlib: one member, concatenated members, from memory, truncated,
 * corrupt); lines of any length; and hostile or invalid files, each refused with -1, an empty
 * matrix and a message naming the problem, its line and, where there is one, its column. Under
 * the ASan build, LeakSanitizer checks that no path leaks. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "matrix_market.h"

static char dir[] = "/tmp/cnc-mm-XXXXXX";

static int make_dir(void** state) {
  (void)state;
  return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void** state) {
  (void)state;
  char command[64];
  snprintf(command, sizeof command, "rm -rf %s", dir);
  return system(command) == 0 ? 0 : -1;
}

static const char* path_of(const char* name) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

static const char* write_bytes(const char* name, const void* data, size_t size) {
  const char* path = path_of(name);
  FILE* f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  fclose(f);
  return path;
}

static const char* write_text(const char* name, const char* text) {
  return write_bytes(name, text, strlen(text));
}

/* `text` gzip-compressed by zlib's gz* calls, appended as a new member with `mode` "ab". */
static const char* write_gz(const char* name, const char* text, const char* mode) {
  const char* path = path_of(name);
  gzFile g = gzopen(path, mode);
  assert_non_null(g);
  assert_int_equal(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
  assert_int_equal(gzclose(g), Z_OK);
  return path;
}

static unsigned char* slurp(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  rewind(f);
  unsigned char* data = malloc(*size ? *size : 1);
  assert_non_null(data);
  assert_int_equal(fread(data, 1, *size, f), *size);
  fclose(f);
  return data;
}

typedef struct {
  int32_t i, j; /* 0-based */
  double re, im;
} entry;

/* m holds exactly `want` in order (mirrors right after their entry); imag only if complex. */
static void expect(const mm_matrix* m, int32_t rows, int32_t cols, const entry* want, int64_t n) {
  assert_int_equal(m->rows, rows);
  assert_int_equal(m->cols, cols);
  assert_int_equal(m->nnz, n);
  assert_int_equal(m->imag != NULL, m->field == MM_COMPLEX);
  assert_int_equal(m->symmetric, m->symmetry != MM_GENERAL);
  for (int64_t k = 0; k < n; ++k) {
    if (m->row[k] != want[k].i || m->col[k] != want[k].j || m->val[k] != want[k].re ||
        (m->imag && m->imag[k] != want[k].im))
      fail_msg("entry %lld: (%d, %d) %g%+gi, expected (%d, %d) %g%+gi", (long long)k, m->row[k],
               m->col[k], m->val[k], m->imag ? m->imag[k] : 0.0, want[k].i, want[k].j, want[k].re,
               want[k].im);
  }
}

/* Reads `text` from a file and from memory: both must succeed with the same header and entries
 * (the file's are left in *m). */
static void read_ok(const char* name, const char* text, mm_matrix* m) {
  char err[512] = "";
  if (mm_read(write_text(name, text), m, err, sizeof err) != 0) fail_msg("%s: %s", name, err);
  mm_matrix mem;
  if (mm_read_memory(text, strlen(text), name, &mem, err, sizeof err) != 0)
    fail_msg("%s from memory: %s", name, err);
  assert_int_equal(mem.nnz, m->nnz);
  assert_int_equal(mem.format, m->format);
  assert_int_equal(mem.field, m->field);
  assert_int_equal(mem.symmetry, m->symmetry);
  if (m->nnz) {
    assert_memory_equal(mem.row, m->row, sizeof(int32_t) * (size_t)m->nnz);
    assert_memory_equal(mem.val, m->val, sizeof(double) * (size_t)m->nnz);
  }
  mm_free(&mem);
}

/* mm_read refuses `text` (size bytes) with a message containing `want`; so does mm_read_memory,
 * with the same message; the matrix is left empty. */
static void refused_bytes(const char* name, const char* text, size_t size, const char* want) {
  mm_matrix m;
  char err[512] = "", mem_err[512] = "", prefixed[600];
  const int rc = mm_read(write_bytes(name, text, size), &m, err, sizeof err);
  print_message("  %-24s -> %s\n", name, rc ? err : "(accepted)");
  if (rc != -1) mm_free(&m);
  assert_int_equal(rc, -1);
  if (!strstr(err, want)) fail_msg("%s: '%s' does not say '%s'", name, err, want);
  snprintf(prefixed, sizeof prefixed, "%s: ", path_of(name));
  assert_int_equal(strncmp(err, prefixed, strlen(prefixed)), 0);
  static const mm_matrix empty; /* all zero, padding included */
  assert_memory_equal(&m, &empty, sizeof m);
  assert_int_equal(mm_read_memory(text, size, path_of(name), &m, mem_err, sizeof mem_err), -1);
  assert_memory_equal(&m, &empty, sizeof m);
  assert_string_equal(mem_err, err);
}

static void refused(const char* name, const char* text, const char* want) {
  refused_bytes(name, text, strlen(text), want);
}

#define BANNER(kind) "%%MatrixMarket matrix " kind "\n"
#define G BANNER("coordinate real general")

static void test_coordinate_real_general(void** state) {
  (void)state;
  mm_matrix m;
  /* Upper-case words, CRLF ends, comments and blank lines, leading blanks, no final newline. */
  read_ok("general.mtx",
          "%%MatrixMarket MATRIX Coordinate Real General\r\n% a comment\r\n\r\n2 3 3\r\n"
          "1 1 4.5\r\n  % another\r\n2 3 -2e-1\r\n\t1 2 7",
          &m);
  assert_int_equal(m.format, MM_COORDINATE);
  assert_int_equal(m.field, MM_REAL);
  assert_int_equal(m.symmetry, MM_GENERAL);
  const entry want[] = {{0, 0, 4.5, 0}, {1, 2, -0.2, 0}, {0, 1, 7, 0}};
  expect(&m, 2, 3, want, 3);
  mm_free(&m);
}

static void test_coordinate_integer_and_pattern(void** state) {
  (void)state;
  mm_matrix m;
  read_ok("integer.mtx", BANNER("coordinate integer symmetric") "3 3 3\n1 1 2\n3 1 -1\n3 3 2\n",
          &m);
  assert_int_equal(m.field, MM_INTEGER);
  const entry sym[] = {{0, 0, 2, 0}, {2, 0, -1, 0}, {0, 2, -1, 0}, {2, 2, 2, 0}};
  expect(&m, 3, 3, sym, 4);
  mm_free(&m);
  read_ok("pattern.mtx", BANNER("coordinate pattern symmetric") "3 3 2\n2 1\n3 3\n", &m);
  assert_int_equal(m.field, MM_PATTERN);
  const entry ones[] = {{1, 0, 1, 0}, {0, 1, 1, 0}, {2, 2, 1, 0}};
  expect(&m, 3, 3, ones, 3);
  mm_free(&m);
  /* A symmetric file may store the upper triangle instead. */
  read_ok("upper.mtx", BANNER("coordinate real symmetric") "2 2 2\n1 2 5\n2 2 1\n", &m);
  const entry upper[] = {{0, 1, 5, 0}, {1, 0, 5, 0}, {1, 1, 1, 0}};
  expect(&m, 2, 2, upper, 3);
  mm_free(&m);
}

static void test_coordinate_skew_symmetric(void** state) {
  (void)state;
  mm_matrix m;
  read_ok("skew.mtx", BANNER("coordinate real skew-symmetric") "3 3 2\n2 1 3.5\n3 2 -1\n", &m);
  assert_int_equal(m.symmetry, MM_SKEW_SYMMETRIC);
  const entry want[] = {{1, 0, 3.5, 0}, {0, 1, -3.5, 0}, {2, 1, -1, 0}, {1, 2, 1, 0}};
  expect(&m, 3, 3, want, 4);
  mm_free(&m);
  read_ok("skew-complex.mtx", BANNER("coordinate complex skew-symmetric") "2 2 1\n2 1 1 2\n", &m);
  const entry cwant[] = {{1, 0, 1, 2}, {0, 1, -1, -2}};
  expect(&m, 2, 2, cwant, 2);
  mm_free(&m);
}

static void test_coordinate_complex_and_hermitian(void** state) {
  (void)state;
  mm_matrix m;
  read_ok("complex.mtx", BANNER("coordinate complex general") "2 2 2\n1 1 1.5 -2\n2 1 0 3\n", &m);
  assert_int_equal(m.field, MM_COMPLEX);
  const entry general[] = {{0, 0, 1.5, -2}, {1, 0, 0, 3}};
  expect(&m, 2, 2, general, 2);
  mm_free(&m);
  read_ok("hermitian.mtx", BANNER("coordinate complex hermitian") "2 2 2\n1 1 2 0\n2 1 1 -1\n", &m);
  assert_int_equal(m.symmetry, MM_HERMITIAN);
  const entry conj[] = {{0, 0, 2, 0}, {1, 0, 1, -1}, {0, 1, 1, 1}};
  expect(&m, 2, 2, conj, 3);
  mm_free(&m);
  /* No entries still says complex (imag is not NULL). */
  read_ok("complex-empty.mtx", BANNER("coordinate complex general") "4 4 0\n", &m);
  expect(&m, 4, 4, NULL, 0);
  mm_free(&m);
}

static void test_array(void** state) {
  (void)state;
  mm_matrix m;
  read_ok("array.mtx", BANNER("array real general") "2 3\n1\n2\n3\n4\n5\n6\n", &m);
  assert_int_equal(m.format, MM_ARRAY);
  const entry general[] = {{0, 0, 1, 0}, {1, 0, 2, 0}, {0, 1, 3, 0},
                           {1, 1, 4, 0}, {0, 2, 5, 0}, {1, 2, 6, 0}};
  expect(&m, 2, 3, general, 6);
  mm_free(&m);
  /* The lower triangle by columns: a11 a21 a31 a22 a32 a33. */
  read_ok("array-sym.mtx", BANNER("array real symmetric") "3 3\n1\n2\n3\n4\n5\n6\n", &m);
  const entry sym[] = {{0, 0, 1, 0}, {1, 0, 2, 0}, {0, 1, 2, 0}, {2, 0, 3, 0}, {0, 2, 3, 0},
                       {1, 1, 4, 0}, {2, 1, 5, 0}, {1, 2, 5, 0}, {2, 2, 6, 0}};
  expect(&m, 3, 3, sym, 9);
  mm_free(&m);
  /* Below the diagonal only: a21 a31 a32. */
  read_ok("array-skew.mtx", BANNER("array real skew-symmetric") "3 3\n1\n2\n3\n", &m);
  const entry skew[] = {{1, 0, 1, 0},  {0, 1, -1, 0}, {2, 0, 2, 0},
                        {0, 2, -2, 0}, {2, 1, 3, 0},  {1, 2, -3, 0}};
  expect(&m, 3, 3, skew, 6);
  mm_free(&m);
  read_ok("array-skew-1.mtx", BANNER("array real skew-symmetric") "1 1\n", &m);
  expect(&m, 1, 1, NULL, 0);
  mm_free(&m);
  read_ok("array-herm.mtx", BANNER("array complex hermitian") "2 2\n1 0\n2 3\n4 0\n", &m);
  const entry herm[] = {{0, 0, 1, 0}, {1, 0, 2, 3}, {0, 1, 2, -3}, {1, 1, 4, 0}};
  expect(&m, 2, 2, herm, 4);
  mm_free(&m);
  /* Every stored value is an entry, zeros included. */
  read_ok("array-int.mtx", BANNER("array integer general") "1 2\n0\n-7\n", &m);
  const entry ints[] = {{0, 0, 0, 0}, {0, 1, -7, 0}};
  expect(&m, 1, 2, ints, 2);
  mm_free(&m);
}

/* Lines longer than the reader's 64 KiB blocks, plain and gzip: a comment, and a last line
 * without its newline. Before: a comment's tail past 1023 characters was taken for the size
 * line. */
static void test_long_lines(void** state) {
  (void)state;
  const size_t len = 200000;
  char* text = malloc(len + 200);
  assert_non_null(text);
  strcpy(text, G "%");
  size_t at = strlen(text);
  memset(text + at, 'c', len);
  memcpy(text + at + 1023, "3 3 3 ", 6);
  strcpy(text + at + len, "\n2 2 2\n1 1 4.0\n2 1 -1.5");
  mm_matrix m;
  char err[512];
  const entry want[] = {{0, 0, 4, 0}, {1, 0, -1.5, 0}};
  read_ok("long-comment.mtx", text, &m);
  expect(&m, 2, 2, want, 2);
  mm_free(&m);
  assert_int_equal(mm_read(write_gz("long-comment.mtx.gz", text, "wb"), &m, err, sizeof err), 0);
  expect(&m, 2, 2, want, 2);
  mm_free(&m);
  free(text);
}

static void test_gzip(void** state) {
  (void)state;
  const char* text = BANNER("coordinate integer symmetric") "3 3 3\n1 1 2\n3 1 -1\n3 3 2\n";
  const entry want[] = {{0, 0, 2, 0}, {2, 0, -1, 0}, {0, 2, -1, 0}, {2, 2, 2, 0}};
  mm_matrix m;
  char err[512] = "";
  /* Told by the magic bytes, not the name. */
  const char* path = write_gz("gzip-named.mtx", text, "wb");
  if (mm_read(path, &m, err, sizeof err)) fail_msg("%s", err);
  expect(&m, 3, 3, want, 4);
  mm_free(&m);
  /* Two members (gzip -c a b > c): one text, as gunzip reads them. */
  write_gz("members.mtx.gz", BANNER("coordinate integer symmetric") "3 3 3\n1 1 2\n3 ", "wb");
  path = write_gz("members.mtx.gz", "1 -1\n3 3 2\n", "ab");
  if (mm_read(path, &m, err, sizeof err)) fail_msg("%s", err);
  expect(&m, 3, 3, want, 4);
  mm_free(&m);
  /* From memory, whole; then cut short; then with a wrong CRC in the trailer. */
  size_t size;
  unsigned char* gz = slurp(write_gz("gzip.mtx.gz", text, "wb"), &size);
  assert_int_equal(mm_read_memory(gz, size, "gzip.mtx.gz", &m, err, sizeof err), 0);
  expect(&m, 3, 3, want, 4);
  mm_free(&m);
  refused_bytes("gzip-truncated.mtx.gz", (const char*)gz, size - 12,
                "the gzip data is truncated (reading line 4)");
  gz[size - 8] ^= 0xff;
  refused_bytes("gzip-bad-crc.mtx.gz", (const char*)gz, size,
                "corrupt gzip data (incorrect data check; reading line 1)");
  /* Bytes after the last member that are not another member. */
  unsigned char* junk = malloc(size + 4);
  assert_non_null(junk);
  gz[size - 8] ^= 0xff;
  memcpy(junk, gz, size);
  memcpy(junk + size, "abcd", 4);
  refused_bytes("gzip-junk.mtx.gz", (const char*)junk, size + 4, "corrupt gzip data");
  free(junk);
  free(gz);
}

/* Every banner word checked, and every combination the format does not define refused, naming
 * the column of the word. */
static void test_banner(void** state) {
  (void)state;
  static const struct {
    const char *name, *text, *want;
  } cases[] = {
      {"empty.mtx", "", "empty: expected the banner '%%MatrixMarket matrix <format> <field> "},
      {"no-banner.mtx", "2 2 1\n1 1 1\n",
       "line 1: expected the banner '%%MatrixMarket matrix <format> <field> <symmetry>', found "
       "'2 2 1'"},
      {"short-banner.mtx", "%%MatrixMarket matrix coordinate real\n",
       "line 1, column 38: the banner ends before its symmetry"},
      {"vector.mtx", "%%MatrixMarket vector coordinate real general\n",
       "line 1, column 16: object 'vector': only 'matrix' is defined"},
      {"sparse.mtx", BANNER("sparse real general"),
       "line 1, column 23: format 'sparse': expected coordinate or array"},
      {"quaternion.mtx", BANNER("coordinate quaternion general"), "field 'quaternion'"},
      {"diagonal.mtx", BANNER("coordinate real diagonal"), "symmetry 'diagonal'"},
      {"extra-word.mtx", BANNER("coordinate real general extra"),
       "line 1, column 47: unexpected 'extra' after the symmetry"},
      {"array-pattern.mtx", BANNER("array pattern general") "1 1\n1\n",
       "line 1, column 29: 'array pattern' is not a valid combination"},
      {"real-hermitian.mtx", BANNER("coordinate real hermitian") "1 1 1\n1 1 1\n",
       "line 1, column 39: 'real hermitian' is not a valid combination: hermitian needs a complex "
       "field"},
      {"integer-hermitian.mtx", BANNER("array integer hermitian"), "'integer hermitian'"},
      {"pattern-hermitian.mtx", BANNER("coordinate pattern hermitian"), "'pattern hermitian'"},
      {"pattern-skew.mtx", BANNER("coordinate pattern skew-symmetric"),
       "'pattern skew-symmetric' is not a valid combination"},
      {"symmetric-3x2.mtx", BANNER("coordinate real symmetric") "3 2 1\n1 1 1\n",
       "line 2: a symmetric matrix must be square, not 3 x 2"},
      {"skew-2x3.mtx", BANNER("array real skew-symmetric") "2 3\n", "skew-symmetric matrix must"},
      {"hermitian-2x1.mtx", BANNER("coordinate complex hermitian") "2 1 0\n",
       "a hermitian matrix must be square, not 2 x 1"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
    refused(cases[k].name, cases[k].text, cases[k].want);
}

/* Sizes: checked, and never believed beyond what the file can hold. */
static void test_size_line(void** state) {
  (void)state;
  static const struct {
    const char *name, *text, *want;
  } cases[] = {
      {"no-size.mtx", G "% only a comment\n", "the file ends before the size line"},
      {"short-size.mtx", G "2 2\n", "line 2, column 4: expected the entry count, found the end"},
      {"array-3-sizes.mtx", BANNER("array real general") "2 2 4\n",
       "line 2, column 5: unexpected '4' after the column count"},
      {"zero-rows.mtx", G "0 2 0\n", "line 2, column 1: row count 0 out of range 1..2147483647"},
      {"rows-past-32-bits.mtx", G "3000000000 2 0\n", "row count 3000000000 out of range"},
      {"cols-not-integer.mtx", G "2 2.0 1\n", "line 2, column 3: column count '2.0' is not an"},
      {"nnz-negative.mtx", G "2 2 -1\n", "entry count -1 out of range 0..9223372036854775807"},
      {"nnz-1e20.mtx", G "2 2 100000000000000000000\n", "entry count 100000000000000000000 out"},
      {"nnz-2e40.mtx", G "2 2 1099511627776\n1 1 1\n",
       "line 2: 1099511627776 entries cannot be in a file of this size"},
      {"nnz-2e62.mtx", G "2 2 4611686018427387904\n1 1 1\n", "cannot be in a file"},
      {"nnz-2e63.mtx", G "2 2 9223372036854775807\n1 1 1\n", "cannot be in a file"},
      {"array-huge.mtx", BANNER("array real general") "2000000000 2000000000\n1\n",
       "has 4000000000000000000 values: more than a file of this size holds"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
    refused(cases[k].name, cases[k].text, cases[k].want);
}

/* Entries: each error names its line (comments and blank lines counted) and column. */
static void test_entries(void** state) {
  (void)state;
  static const struct {
    const char *name, *text, *want;
  } cases[] = {
      {"column-zero.mtx", G "% 1\n% 2\n5 5 3\n1 1 1\n\n1 0 2\n",
       "line 7, column 3: column index 0 out of range 1..5"},
      {"row-past.mtx", G "2 2 2\n1 1 1\n3 1 1\n",
       "line 4, column 1: row index 3 out of range 1..2"},
      {"index-real.mtx", G "2 2 1\n1.0 1 1\n", "line 3, column 1: row index '1.0' is not an"},
      {"truncated.mtx", G "2 2 3\n1 1 1\n2 2 1\n",
       "the file ends after line 4, with 2 of its 3 entries"},
      {"bad-value.mtx", G "2 2 1\n1 1 abc\n", "line 3, column 5: value 'abc' is not a number"},
      {"missing-value.mtx", G "2 2 1\n1 1\n",
       "line 3, column 4: expected the value, found the end of the line"},
      {"extra-token.mtx", G "2 2 1\n1 1 1 7\n", "line 3, column 7: unexpected '7' after the value"},
      {"nan.mtx", G "2 2 1\n1 1 nan\n", "line 3, column 5: value 'nan' is not finite"},
      {"overflow.mtx", G "2 2 1\n1 1 1e999\n", "value '1e999' is not finite"},
      {"integer-real.mtx", BANNER("coordinate integer general") "2 2 1\n1 1 1.5\n",
       "value '1.5' is not an integer"},
      {"pattern-value.mtx", BANNER("coordinate pattern general") "2 2 1\n1 1 5\n",
       "unexpected '5' after the column index"},
      {"complex-real.mtx", BANNER("coordinate complex general") "2 2 1\n1 1 1\n",
       "line 3, column 6: expected the imaginary part"},
      {"skew-diagonal.mtx", BANNER("coordinate real skew-symmetric") "2 2 2\n2 1 1\n2 2 1\n",
       "line 4: diagonal entry (2, 2) in a skew-symmetric file: its diagonal is zero"},
      {"hermitian-diagonal.mtx", BANNER("coordinate complex hermitian") "2 2 1\n1 1 1 0.5\n",
       "line 3: diagonal entry (1, 1) of a hermitian matrix has imaginary part 0.5: it must be"},
      {"array-hermitian-diagonal.mtx", BANNER("array complex hermitian") "1 1\n1 -2\n",
       "line 3: diagonal entry (1, 1) of a hermitian"},
      {"both-triangles.mtx", BANNER("coordinate real symmetric") "2 2 2\n2 1 1\n1 2 1\n",
       "line 4: entry (1, 2) is above the diagonal but line 3's is below: a symmetric file "
       "stores one triangle"},
      {"more-entries.mtx", G "2 2 1\n1 1 1\n% fine\n2 2 1\n",
       "line 5, column 1: more data than the size line declares (coordinate entries)"},
      {"array-more.mtx", BANNER("array real general") "1 1\n1\n2\n", "(array values)"},
      {"array-truncated.mtx", BANNER("array real symmetric") "2 2\n1\n2\n",
       "the file ends after line 4, with 2 of its 3 values"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
    refused(cases[k].name, cases[k].text, cases[k].want);
  static const char nul[] = G "1 1 1\n1\0 1 1\n";
  refused_bytes("nul.mtx", nul, sizeof nul - 1, "line 3, column 2: a NUL byte: not a text file");
}

static void test_open_and_messages(void** state) {
  (void)state;
  mm_matrix m;
  char err[512] = "";
  assert_int_equal(mm_read(path_of("absent.mtx"), &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "absent.mtx: cannot open: No such file or directory"));
  assert_int_equal(mm_read(dir, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "cannot read: Is a directory"));
  /* A short buffer is cut, a NULL one left alone; neither overflows (ASan). */
  char small[8];
  const char* bad = write_text("small-err.mtx", G "2 2 1\n9 9 9\n");
  assert_int_equal(mm_read(bad, &m, small, sizeof small), -1);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_int_equal(mm_read(bad, &m, NULL, 0), -1);
  /* From memory without a name. */
  assert_int_equal(mm_read_memory("x", 1, NULL, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "(memory): line 1: expected the banner"));
  assert_int_equal(mm_read_memory(NULL, 0, NULL, &m, err, sizeof err), -1);
  assert_non_null(strstr(err, "(memory): empty"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_coordinate_real_general),
      cmocka_unit_test(test_coordinate_integer_and_pattern),
      cmocka_unit_test(test_coordinate_skew_symmetric),
      cmocka_unit_test(test_coordinate_complex_and_hermitian),
      cmocka_unit_test(test_array),
      cmocka_unit_test(test_long_lines),
      cmocka_unit_test(test_gzip),
      cmocka_unit_test(test_banner),
      cmocka_unit_test(test_size_line),
      cmocka_unit_test(test_entries),
      cmocka_unit_test(test_open_and_messages),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
