/* cnc-solve's complex matrices (Matrix Market `complex`, `hermitian`): the complex CSR that
 * cncSolveCSRComplex takes, built from the reader's triplets, its product, and the Hermitian
 * check behind `--solver auto`. No cnc call here. Complex numbers are (re, im) pairs of doubles. */
#ifndef CNC_CLI_COMPLEX_H
#define CNC_CLI_COMPLEX_H

#include <stddef.h>
#include <stdint.h>

#include "common/matrix_market.h"

/* 0-based, rows sorted, duplicates summed. */
typedef struct {
  int64_t n, nnz;
  int64_t* row_ptr; /* n + 1 */
  uint32_t* col;    /* nnz */
  double* val;      /* 2 nnz: (re, im) per entry */
} cli_zcsr;

/* From a complex (square) mm_matrix. Returns 0, or -1 when out of memory (a left empty). */
int cli_zcsr_from_mm(const mm_matrix* m, cli_zcsr* a);
void cli_zcsr_free(cli_zcsr* a);
/* y = A x for nrhs columns of n complex values each. */
void cli_zcsr_mul(const cli_zcsr* a, int nrhs, const double* x, double* y);
/* 1 when A is Hermitian (to 1e-12 relative) with every diagonal entry real and > 0, else 0 with
 * the first offending entry in `why`. */
int cli_zcsr_hermitian(const cli_zcsr* a, char* why, size_t len);

#endif
