/* Shared helpers of the cnc test suite: an independent reference implementation (CSR built and
 * multiplied by the test itself, a dense Cholesky solver), matrix generators, and small wrappers
 * that drive the public API. Nothing here calls cnc's internals, so a test that compares cnc
 * against these helpers compares two separate implementations. */
#ifndef CNC_TEST_SUPPORT_H
#define CNC_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "cnc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit code CTest treats as "skipped" (SKIP_RETURN_CODE 77). */
#define TS_SKIP 77

/* A square CSR matrix owned by the tests: sorted columns, no duplicates, 0-based. */
typedef struct {
  int32_t n;
  int64_t nnz;
  int64_t* row_ptr; /* n + 1 */
  int32_t* col;     /* nnz */
  double* val;      /* nnz */
} ts_csr;

/* Deterministic random numbers (xorshift64*), independent of libc's rand(). */
typedef struct {
  uint64_t s;
} ts_rng;
void ts_rng_seed(ts_rng* r, uint64_t seed);
uint64_t ts_rng_next(ts_rng* r);
double ts_rng_uniform(ts_rng* r); /* [0, 1) */
uint32_t ts_rng_below(ts_rng* r, uint32_t bound);
/* n values uniform in [-1, 1) (caller frees). */
double* random_vector(size_t n, uint64_t seed);

/* Builds a CSR from COO triplets: sorts by (row, col) and sums duplicates in input order. */
ts_csr ts_csr_from_coo(int32_t n, int64_t nnz, const int32_t* rows, const int32_t* cols,
                       const double* vals);
void ts_csr_free(ts_csr* a);
void ts_csr_spmv(const ts_csr* a, const double* x, double* y); /* y = A x */
/* Entry (i, j), 0 when absent. */
double ts_csr_get(const ts_csr* a, int32_t i, int32_t j);
/* Dense row-major copy (n*n, caller frees). */
double* ts_csr_to_dense(const ts_csr* a);

/* Generators (all symmetric). */
ts_csr ts_laplacian_2d(int32_t nx, int32_t ny);              /* 5-point, Dirichlet, SPD */
ts_csr ts_poisson_3d(int32_t m);                             /* 7-point on m^3, SPD */
ts_csr ts_random_spd(int32_t n, int per_row, uint64_t seed); /* strictly diagonally dominant */
/* Power-law-like degrees: rows 0, 1, 2 join `long_len`, long_len / 3 and 600 random others
 * (hubs, longer than any GPU block or SpMV piece), every 97th row 150 others, the rest 3;
 * strictly diagonally dominant (SPD). For the SpMV's long-row pieces. */
ts_csr ts_long_rows_spd(int32_t n, int32_t long_len, uint64_t seed);
/* Block tridiagonal with dense b x b SPD-ish blocks (diagonally dominant): nb blocks of size b. */
ts_csr ts_dense_blocks(int32_t nblocks, int b, uint64_t seed);

/* A strongly nonsymmetric, diagonally dominant matrix: up to 3 random off-diagonal entries a row,
 * a_ij for j > i 10x a_ji's size, so A and Aᵀ have clearly different solutions. */
ts_csr ts_nonsymmetric(int32_t n, uint64_t seed);

/* Dense Cholesky solve of the n x n row-major SPD matrix `a` (not modified): returns 0, or -1 if
 * a pivot is not positive. */
int ts_cholesky_solve(int n, const double* a, const double* b, double* x);
/* The same for k right-hand sides (b and x: k columns of n, one after the other), A factored
 * once. */
int ts_cholesky_solve_many(int n, const double* a, int k, const double* b, double* x);

/* Dense LU with partial pivoting of the n x n row-major `a` (not modified): x = A⁻¹ b; returns 0,
 * or -1 if a pivot is exactly zero (A singular). */
int ts_lu_solve(int n, const double* a, const double* b, double* x);

/* ||b - A x|| / ||b|| computed by the test in double. */
double ts_rel_residual(const ts_csr* a, const double* x, const double* b);
/* max_i |x_i - y_i| / max(max_i |y_i|, tiny) */
double ts_rel_diff(size_t n, const double* x, const double* y);
double ts_norm2(size_t n, const double* x);

/* Public API drivers (on the current context). Each returns the first non-CNC_OK status. */
/* Begin(SYSTEM), Begin(MATRIX), AddIJCoefficient for every entry, AddIRightHandSide (nsys
 * right-hand sides, system k at b + k*n; b may be NULL for zero), End(MATRIX), End(SYSTEM). */
/* cmocka fixtures: a fresh context made current for each test, deleted afterwards. */
int ts_setup_context(void** state);
int ts_teardown_context(void** state);

int ts_assemble(const ts_csr* a, const double* b, int nsys);
/* Sets NB_VARIABLES (and NB_SYSTEMS when nsys > 1), assembles, solves, reads x (nsys*n). */
int ts_assemble_solve(const ts_csr* a, const double* b, int nsys, double* x);
/* Reads x (nsys*n values) from the current context's variables. */
int ts_read_x(int32_t n, int nsys, double* x);

/* Test data: the folder of shared/data (from the CNC_TEST_DATA_DIR define, overridable with the
 * CNC_TEST_DATA environment variable). Returns NULL when it does not exist. */
const char* ts_data_dir(void);
/* Reads a Matrix Market file into a ts_csr (symmetric halves expanded). 0 on success. */
int ts_read_mtx(const char* path, ts_csr* a, char* err, int errlen);
/* The matrices SOURCES.txt marks "likely SPD", with the condition estimate it lists (0 if none).
 * Returns the count (at most `cap`); names are file names inside matrices/. */
int ts_list_spd_matrices(char names[][128], double* cond, int cap);

/* What a solve reports (cncGet* after it), read with assertions that each query succeeds. */
typedef struct {
  CNCint reason, iters, format_used, backend_used, solver_used, zero_diag;
  double error, true_error;
  CNCint64 nnz;
} stats;
stats read_stats(void);

#ifdef __cplusplus
}
#endif

#endif
