/* cnc-solve's helpers that do not call cnc: the symmetry check behind `--solver auto`, the
 * residual history (`--history` CSV, `--history-plot` PNG), JSON string output and the
 * numeric option parsers. See cnc-solve.c for how they are used. */
#ifndef CNC_CLI_IO_H
#define CNC_CLI_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What the symmetry check found of an n x n matrix given as COO triplets (duplicates summed,
 * explicit zeros equal to absent entries). */
typedef struct {
  int symmetric;         /* a_ij == a_ji for every pair, to 1e-12 relative */
  int positive_diagonal; /* every a_ii > 0 (so the Jacobi preconditioner is SPD) */
  char why[256];         /* the first pair that differs, or the first diagonal entry <= 0 */
} cli_symmetry;

/* Checks in O(n + nnz) time (two counting sorts and a transpose). Returns 0, or -1 when out of
 * memory. */
int cli_check_symmetry(int64_t n, int64_t nnz, const int32_t* row, const int32_t* col,
                       const double* val, cli_symmetry* out);

/* The residual history gathered through the progress callback. */
typedef struct {
  int64_t* iteration;
  double* residual;
  double* seconds;
  size_t count, capacity;
} cli_history;

/* Appends one sample. Returns 0, or -1 when out of memory (the history is left as it was). */
int cli_history_add(cli_history* h, int64_t iteration, double residual, double seconds);
void cli_history_clear(cli_history* h);
void cli_history_free(cli_history* h);
/* CSV with the header `iteration,relative_residual,seconds`, full precision. */
void cli_history_write_csv(const cli_history* h, FILE* out);
/* A 720 x 450 PNG: log10 of the relative residual (a grid line per decade, labelled) against
 * the iteration, the threshold in red. Returns 0, or -1 with a message in err. Needs libpng
 * (CNC_HAVE_PNG): without it, -1 and a message. */
int cli_history_plot(const cli_history* h, double threshold, const char* path, char* err,
                     size_t errlen);

/* Writes s as a JSON string (quoted, escaped). */
void cli_json_string(FILE* out, const char* s);
/* Writes v as a JSON number (full precision), or null when it is not finite. */
void cli_json_number(FILE* out, double v);

/* Strict numeric option values: the whole text must be the number (no trailing text), within
 * [min, max]. Return 0, or -1 after printing why on stderr (naming the option). */
int cli_parse_int64(const char* option, const char* text, int64_t min, int64_t max, int64_t* out);
/* A finite double in (min, max) when open is 1, else in [min, max]. */
int cli_parse_double(const char* option, const char* text, double min, double max, int open,
                     double* out);

#endif
