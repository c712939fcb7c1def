/* BiCGSTAB and GMRES on the nonsymmetric matrices of shared/data/matrices (exits 77 when the
 * folder is absent). */
/* cmocka.h needs the standard headers first. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
/* clang-format on */

#include "cnc.h"
#include "nonsymmetric_support.h"
#include "test_support.h"

/* ---- Real nonsymmetric matrices ---------------------------------------------------------------
 * Those Jacobi-preconditioned BiCGSTAB and GMRES(30) solve (west0497, rdb800l, olm1000, dw2048,
 * cryg2500, bp_1000 do not converge with a Jacobi preconditioner and are left out). b = A x_true;
 * checked by the residual, and against dense LU where n <= 1000. */
static int run_real_matrices(void) {
  static const char* names[] = {"sherman5.mtx", "gr_900_900_crg.mtx", "hor_131.mtx",
                                "tols1090.mtx", "arc130.mtx",         "Trefethen_20b.mtx",
                                "LFAT5.mtx",    "lap2D_5pt_n100.mtx"};
  const char* dir = ts_data_dir();
  char path[1024], err[256];
  if (dir) snprintf(path, sizeof path, "%s/matrices", dir);
  FILE* probe = NULL;
  if (dir) {
    snprintf(path, sizeof path, "%s/matrices/%s", dir, names[0]);
    probe = fopen(path, "r");
  }
  if (!probe) {
    printf("SKIP: shared/data/matrices absent (%s)\n", dir ? dir : "no data folder");
    return TS_SKIP;
  }
  fclose(probe);
  int failures = 0, count = 0;
  for (size_t m = 0; m < sizeof names / sizeof *names; ++m) {
    snprintf(path, sizeof path, "%s/matrices/%s", dir, names[m]);
    ts_csr a;
    if (ts_read_mtx(path, &a, err, sizeof err) != 0) {
      printf("%-22s missing or unreadable (%s)\n", names[m], err);
      ++failures;
      continue;
    }
    ++count;
    const int nsys = 2;
    size_t n = (size_t)a.n;
    double* xt = random_vector(n * nsys, 7 + m);
    double* b = (double*)malloc(sizeof(double) * n * nsys);
    double* x = (double*)malloc(sizeof(double) * n * nsys);
    double* x_ref = NULL;
    for (int k = 0; k < nsys; ++k) ts_csr_spmv(&a, xt + k * n, b + k * n);
    if (a.n <= 1000) {
      x_ref = (double*)malloc(sizeof(double) * n * nsys);
      double* dense = ts_csr_to_dense(&a);
      for (int k = 0; k < nsys; ++k) lu_solve(a.n, dense, b + k * n, x_ref + k * n);
      free(dense);
    }
    for (int s = 0; s < 2; ++s) {
      CNCcontext c = cncNewContext();
      cncMakeCurrent(c);
      const double thr = 1e-9;
      cncSolverParameteri(CNC_SOLVER, solvers[s]);
      cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
      cncSolverParameterd(CNC_THRESHOLD, thr);
      cncSolverParameteri(CNC_MAX_ITERATIONS, 20000);
      int st = ts_assemble_solve(&a, b, nsys, x);
      CNCint reason = 0, iters = 0;
      cncGetIntegerv(CNC_REASON, &reason);
      cncGetIntegerv(CNC_USED_ITERATIONS, &iters);
      cncDeleteContext(c);
      double res = 0.0, diff = 0.0;
      for (int k = 0; k < nsys; ++k) {
        res = fmax(res, ts_rel_residual(&a, x + k * n, b + k * n));
        /* LU's own residual bounds how far apart two good solutions may be */
        if (x_ref) diff = fmax(diff, ts_rel_diff(n, x + k * n, x_ref + k * n));
      }
      int ok = st == CNC_OK && reason == CNC_REASON_CONVERGED && res <= 2 * thr;
      printf("%-22s n=%-5d %-8s %-4s it=%5d res=%.2e diff_lu=%.2e\n", names[m], a.n,
             solver_name(solvers[s]), ok ? "ok" : "FAIL", iters, res, diff);
      failures += !ok;
    }
    free(xt), free(b), free(x), free(x_ref);
    ts_csr_free(&a);
  }
  printf("%d matrices, %d failures\n", count, failures);
  return failures ? 1 : 0;
}

int main(void) { return run_real_matrices(); }
