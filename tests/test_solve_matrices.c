/* cncSolve on the SPD matrices of shared/data/matrices (those SOURCES.txt marks "likely SPD"):
 * b = A x_s for a random x_s, the residual ||b - A x|| / ||b|| recomputed by the test and compared
 * with the one cnc reports; well-conditioned matrices must converge. Exits 77 when the data
 * folder is absent. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cnc.h"
#include "solve_support.h"
#include "test_support.h"

/* ---- Real SPD matrices ----------------------------------------------------------------------- */
static int run_real_matrices(void) {
  const char* dir = ts_data_dir();
  char names[64][128];
  double cond[64];
  int count = dir ? ts_list_spd_matrices(names, cond, 64) : 0;
  if (!dir || count == 0) {
    printf("SKIP: shared/data/matrices (SOURCES.txt with 'likely SPD' entries) absent%s%s\n",
           dir ? " under " : "", dir ? dir : "");
    return TS_SKIP;
  }
  int failures = 0;
  for (int m = 0; m < count; ++m) {
    char path[9000], err[256];
    snprintf(path, sizeof path, "%s/matrices/%s", dir, names[m]);
    ts_csr a;
    if (ts_read_mtx(path, &a, err, sizeof err) != 0) {
      printf("FAIL %s: %s\n", names[m], err);
      failures++;
      continue;
    }
    const size_t n = (size_t)a.n;
    double* xs = random_vector(n, 3);
    double* b = (double*)malloc(sizeof(double) * n);
    double* x = (double*)calloc(n, sizeof(double));
    ts_csr_spmv(&a, xs, b);
    const int well = cond[m] > 0 && cond[m] <= 1e8;
    const double thr = 1e-8;
    CNCcontext c = cncNewContext();
    cncMakeCurrent(c);
    cncSolverParameterd(CNC_THRESHOLD, thr);
    int max_it = well ? (int)(20 * n < 20000 ? 20 * n : 20000) : 2000;
    if (max_it < 1000) max_it = 1000;
    cncSolverParameteri(CNC_MAX_ITERATIONS, max_it);
    int st = ts_assemble_solve(&a, b, 1, x);
    CNCint reason = 0, iters = 0;
    double true_err = -1;
    cncGetIntegerv(CNC_REASON, &reason);
    cncGetIntegerv(CNC_USED_ITERATIONS, &iters);
    cncGetDoublev(CNC_TRUE_ERROR, &true_err);
    double mine = ts_rel_residual(&a, x, b);
    const char* verdict = "ok";
    if (st != CNC_OK)
      verdict = "FAIL (status)";
    else if (!(fabs(mine - true_err) <= 0.05 * mine + 1e-12))
      verdict = "FAIL (reported true residual differs from the test's)";
    else if (reason == CNC_REASON_CONVERGED && !(mine <= thr * 1.05))
      verdict = "FAIL (CONVERGED but the true residual is above the threshold)";
    else if (well && reason != CNC_REASON_CONVERGED && reason != CNC_REASON_STAGNATED)
      verdict = "FAIL (did not converge)";
    else if (well && !(mine <= 1e-6))
      verdict = "FAIL (residual too large)";
    else if (reason == CNC_REASON_NOT_FINITE || reason == CNC_REASON_NONE)
      verdict = "FAIL (reason)";
    if (strncmp(verdict, "FAIL", 4) == 0) failures++;
    printf("%-28s n=%6d cond~%8.1e iters=%6d reason=0x%x residual=%.2e reported=%.2e %s%s\n",
           names[m], a.n, cond[m], iters, reason, mine, true_err, verdict,
           st != CNC_OK ? cncGetErrorMessage() : "");
    cncDeleteContext(c);
    free(xs);
    free(b);
    free(x);
    ts_csr_free(&a);
  }
  printf("%d matrices, %d failures\n", count, failures);
  return failures ? 1 : 0;
}

int main(void) { return run_real_matrices(); }
