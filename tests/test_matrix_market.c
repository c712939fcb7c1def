/* The shared Matrix Market reader (examples/common/matrix_market.c, used by cnc-solve and the
 * tests) on valid and hostile files written here: a comment line of 5000 characters, declared
 * entry counts the file cannot hold (2^40, 2^62, 2^63 - 1, 10^20), a symmetric header on a
 * non-square size, truncated files, entries out of range, complex and array files. Each hostile
 * file gives -1 and a message naming the problem (and its line), never a crash or a misread. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "matrix_market.h"

static int failures = 0;
static char dir[] = "/tmp/cnc-mm-XXXXXX";

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      printf("%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

static const char* write_file(const char* name, const char* text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  return path;
}

/* mm_read must refuse `text` with a message containing `expect`. */
static void refused(const char* name, const char* text, const char* expect) {
  mm_matrix m;
  char err[512] = "";
  const int rc = mm_read(write_file(name, text), &m, err, sizeof err);
  printf("  %-22s -> %s\n", name, rc ? err : "(accepted)");
  CHECK(rc == -1);
  CHECK(strstr(err, expect) != NULL);
  CHECK(m.row == NULL && m.col == NULL && m.val == NULL && m.nnz == 0);
}

static void test_long_comment(void) {
  /* Before: a line was read in pieces of 1023 characters, so this comment's tail, "3 3 3 ...",
   * was taken for the size line and the 2 x 2 file read as 3 x 3. */
  const size_t len = 5000;
  char* text = malloc(len + 200);
  strcpy(text, "%%MatrixMarket matrix coordinate real general\n");
  size_t at = strlen(text);
  text[at++] = '%';
  for (size_t i = 1; i < len; ++i) text[at++] = 'c';
  memcpy(text + at - len + 1023, "3 3 3 ", 6);
  strcpy(text + at, "\n2 2 3\n1 1 4.0\n2 1 -1.5\n2 2 5.0\n");
  mm_matrix m;
  char err[512] = "";
  const int rc = mm_read(write_file("long-comment.mtx", text), &m, err, sizeof err);
  free(text);
  printf("  %-22s -> %s\n", "long-comment.mtx", rc ? err : "2 x 2, as written");
  CHECK(rc == 0);
  if (rc) return;
  CHECK(m.rows == 2 && m.cols == 2 && m.nnz == 3);
  CHECK(m.row[1] == 1 && m.col[1] == 0 && m.val[1] == -1.5);
  mm_free(&m);
}

static void test_symmetric_and_skew(void) {
  mm_matrix m;
  char err[512] = "";
  int rc = mm_read(write_file("sym.mtx",
                              "%%MatrixMarket matrix coordinate real symmetric\n"
                              "3 3 3\n1 1 2\n3 1 -1\n\n3 3 2\n"),
                   &m, err, sizeof err);
  CHECK(rc == 0);
  if (rc == 0) { /* (3,1) mirrored to (1,3) */
    CHECK(m.symmetric == 1 && m.nnz == 4);
    CHECK(m.row[2] == 0 && m.col[2] == 2 && m.val[2] == -1);
    mm_free(&m);
  }
  rc = mm_read(write_file("skew.mtx",
                          "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                          "2 2 1\n2 1 3.5\n"),
               &m, err, sizeof err);
  CHECK(rc == 0);
  if (rc == 0) {
    CHECK(m.nnz == 2 && m.val[0] == 3.5 && m.val[1] == -3.5);
    mm_free(&m);
  }
  rc = mm_read(write_file("pattern.mtx",
                          "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n2 2\n"),
               &m, err, sizeof err);
  CHECK(rc == 0);
  if (rc == 0) {
    CHECK(m.nnz == 2 && m.val[0] == 1.0 && m.val[1] == 1.0);
    mm_free(&m);
  }
}

int main(void) {
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  printf("valid files:\n");
  test_long_comment();
  test_symmetric_and_skew();
  printf("hostile files:\n");
#define G "%%MatrixMarket matrix coordinate real general\n"
  static const struct {
    const char *name, *text, *expect;
  } hostile[] = {
      {"no-banner.mtx", "2 2 1\n1 1 1\n", "%%MatrixMarket"},
      {"empty.mtx", "", "%%MatrixMarket"},
      {"nnz-2e40.mtx", G "2 2 1099511627776\n1 1 1\n", "cannot be in a file"},
      {"nnz-2e62.mtx", G "2 2 4611686018427387904\n1 1 1\n", "cannot be in a file"},
      {"nnz-2e63.mtx", G "2 2 9223372036854775807\n1 1 1\n", "cannot be in a file"},
      {"nnz-1e20.mtx", G "2 2 100000000000000000000\n1 1 1\n", "bad size line"},
      {"nnz-negative.mtx", G "2 2 -1\n", "negative entry count"},
      {"zero-rows.mtx", G "0 2 0\n", "bad size line"},
      {"rows-past-32-bits.mtx", G "3000000000 2 0\n", "bad size line"},
      {"short-size-line.mtx", G "2 2\n", "bad size line"},
      {"symmetric-3x2.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n1 1 1\n",
       "must be square"},
      {"truncated.mtx", G "2 2 3\n1 1 1\n2 2 1\n", "ends after 2 of its 3 entries"},
      {"row-out-of-range.mtx", G "2 2 2\n1 1 1\n3 1 1\n", ":4: entry (3, 1) outside"},
      {"row-zero.mtx", G "2 2 1\n0 1 1\n", "outside"},
      {"bad-value.mtx", G "2 2 1\n1 1 abc\n", "bad entry"},
      {"missing-value.mtx", G "2 2 1\n1 1\n", "bad entry"},
      {"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
       "complex"},
      {"array.mtx", "%%MatrixMarket matrix array real general\n1 1\n1\n", "array"},
      {"hermitian.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
       "symmetry"},
  };
#undef G
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; ++i)
    refused(hostile[i].name, hostile[i].text, hostile[i].expect);
  char text[512];
  mm_matrix m;
  char err[512] = "";
  snprintf(text, sizeof text, "%s/absent.mtx", dir);
  CHECK(mm_read(text, &m, err, sizeof err) == -1 && strstr(err, "cannot open"));
  char command[600];
  snprintf(command, sizeof command, "rm -rf %s", dir);
  if (system(command) != 0) printf("note: %s not removed\n", dir);
  printf("%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
