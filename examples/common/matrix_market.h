/* The one Matrix Market reader of cnc's programs: cnc-solve, the tests, the examples and the
 * benchmarks. It reads every kind of matrix file the format defines:
 *   - `coordinate` (sparse triplets) and `array` (dense, column-major);
 *   - fields `real` (or `double`), `integer`, `pattern` (every value 1) and `complex` (real parts
 *     in `val`, imaginary parts in `imag`);
 *   - symmetries `general`, `symmetric`, `skew-symmetric` (mirror negated, no diagonal) and
 *     `hermitian` (mirror conjugated, real diagonal), with one triangle stored in the file and
 *     both returned;
 *   - plain text or gzip (told by the magic bytes, not the name; concatenated members too).
 * The result is 0-based COO triplets; duplicates are kept (callers sum them). An array file gives
 * every stored value, zeros included.
 *
 * Files are not trusted: the banner's every combination is checked (no `array pattern`, no
 * `hermitian` without `complex`, no `skew-symmetric pattern`, square sizes for the symmetric
 * kinds), lines may be of any length, declared counts are checked against what the input can hold
 * and the arrays grow as entries arrive, entries must lie in one triangle of a symmetric kind,
 * values must be finite, and text after the last entry is refused. Each error names the input,
 * the line and, where it helps, the column: "m.mtx: line 7, column 3: column index 0 out of range
 * 1..5". Nothing is left allocated after an error. */
#ifndef CNC_MATRIX_MARKET_H
#define CNC_MATRIX_MARKET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MM_COORDINATE = 0, MM_ARRAY = 1 } mm_format;
typedef enum { MM_REAL = 0, MM_INTEGER = 1, MM_PATTERN = 2, MM_COMPLEX = 3 } mm_field;
typedef enum {
  MM_GENERAL = 0,
  MM_SYMMETRIC = 1,
  MM_SKEW_SYMMETRIC = 2,
  MM_HERMITIAN = 3
} mm_symmetry;

typedef struct {
  int32_t rows, cols;
  int64_t nnz;   /* entries after expansion */
  int32_t* row;  /* 0-based */
  int32_t* col;  /* 0-based */
  double* val;   /* values; the real parts of a complex file */
  int symmetric; /* 1 if the file stored one triangle (any symmetry but general): both are here */
  double* imag;  /* the imaginary parts of a complex file; NULL for the other fields */
  mm_format format;
  mm_field field;
  mm_symmetry symmetry;
} mm_matrix;

/* Reads the file at `path`. Returns 0 on success; otherwise -1, a message in `err` (size
 * errlen) and `m` empty (all zero, nothing to free). */
int mm_read(const char* path, mm_matrix* m, char* err, int errlen);
/* The same from `size` bytes at `data` (text or gzip); `name` starts the messages. */
int mm_read_memory(const void* data, size_t size, const char* name, mm_matrix* m, char* err,
                   int errlen);
void mm_free(mm_matrix* m);

#ifdef __cplusplus
}
#endif
#endif
