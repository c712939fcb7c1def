/* Minimal Matrix Market reader shared by cnc-solve, the examples and the tests.
 * Reads `coordinate` matrices (real, integer or pattern; general, symmetric or skew-symmetric)
 * into 0-based COO triplets with symmetric halves expanded. Complex and array files are
 * refused with a message: cnc solves real systems. */
#ifndef CNC_MATRIX_MARKET_H
#define CNC_MATRIX_MARKET_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t rows, cols;
  int64_t nnz;  /* entries after expansion */
  int32_t* row; /* 0-based */
  int32_t* col; /* 0-based */
  double* val;
  int symmetric; /* 1 if the file said symmetric (both halves are present in the arrays) */
} mm_matrix;

/* Returns 0 on success; otherwise -1 and a message in `err` (size errlen). */
int mm_read(const char* path, mm_matrix* m, char* err, int errlen);
void mm_free(mm_matrix* m);

#ifdef __cplusplus
}
#endif
#endif
