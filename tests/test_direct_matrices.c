/* The direct solvers on the real matrices of shared/data/matrices: CHOLMOD on those SOURCES.txt
 * marks "likely SPD", SuperLU on the nonsymmetric ("general") ones. b = A x_s for a random x_s
 * (two right-hand sides), the residual ||b - A x|| / ||b|| recomputed by the test, which must be
 * small (a direct solve is backward stable), agree with the one cnc reports, and agree with
 * CNC_REASON. Exits 77 when the data folder is absent. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnc.h"
#include "solve_support.h"
#include "test_support.h"

/* The nonsymmetric matrices of the folder (SOURCES.txt: "real general"). */
static const char* const general[] = {"arc130.mtx",   "bp_1000.mtx", "cryg2500.mtx", "dw2048.mtx",
                                      "hor_131.mtx",  "olm1000.mtx", "rdb800l.mtx",  "sherman5.mtx",
                                      "tols1090.mtx", "west0497.mtx"};

/* 1 when the solve of `name` by `solver` checks out, else 0 (said on stdout). */
static int check_one(const char* dir, const char* name, CNCenum solver) {
  char path[9000], err[256];
  snprintf(path, sizeof path, "%s/matrices/%s", dir, name);
  ts_csr a;
  if (ts_read_mtx(path, &a, err, sizeof err) != 0) {
    printf("FAIL %s: %s\n", name, err);
    return 0;
  }
  const size_t n = (size_t)a.n;
  const int k = 2;
  double* xs = random_vector(n * k, 41);
  double* b = (double*)malloc(sizeof(double) * n * k);
  double* x = (double*)calloc(n * k, sizeof(double));
  for (int j = 0; j < k; ++j) ts_csr_spmv(&a, xs + j * n, b + j * n);
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  cncSolverParameteri(CNC_SOLVER, (CNCint)solver);
  const CNCstatus st =
      cncSolveCSR((CNCuint)a.n, a.row_ptr, (const CNCuint*)a.col, a.val, 0, (CNCuint)k, b, x);
  int ok = st == CNC_OK;
  if (ok) {
    const stats s = read_stats();
    double worst = 0;
    for (int j = 0; j < k; ++j) {
      const double r = ts_rel_residual(&a, x + j * n, b + j * n);
      worst = r > worst ? r : worst;
    }
    ok = s.reason == CNC_REASON_CONVERGED && s.solver_used == (CNCint)solver && s.iters == 0 &&
         worst < 1e-9 && fabs(s.true_error - worst) <= 1e-15 + 1e-3 * worst;
    printf("%s %s %s: n=%d residual %.2e (reported %.2e), %s\n", ok ? "ok  " : "FAIL",
           solver == CNC_CHOLMOD ? "CHOLMOD" : "SuperLU", name, a.n, worst, s.true_error,
           ok ? "converged" : "mismatch");
  } else {
    printf("FAIL %s: %s\n", name, cncGetLastErrorMessage());
  }
  cncDeleteContext(c);
  free(xs), free(b), free(x);
  ts_csr_free(&a);
  return ok;
}

int main(void) {
#ifndef CNC_TEST_DIRECT_BUILT
  printf("SKIP: cnc was built without CHOLMOD's or SuperLU's header\n");
  return TS_SKIP;
#endif
  const char* dir = ts_data_dir();
  char names[64][128];
  double cond[64];
  const int count = dir ? ts_list_spd_matrices(names, cond, 64) : 0;
  if (!dir || count == 0) {
    printf("SKIP: shared/data/matrices (SOURCES.txt with 'likely SPD' entries) absent%s%s\n",
           dir ? " under " : "", dir ? dir : "");
    return TS_SKIP;
  }
  int failures = 0;
  for (int m = 0; m < count; ++m) failures += !check_one(dir, names[m], CNC_CHOLMOD);
  for (size_t m = 0; m < sizeof general / sizeof *general; ++m)
    failures += !check_one(dir, general[m], CNC_SUPERLU);
  printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
