/* OpenNL's eigen solver (its ARPACK extension) on cnc, written as an OpenNL 4 program: the 1D
 * Dirichlet Laplacian's smallest eigenvalues against the closed form 2 - 2 cos(j pi/(n+1)) (real
 * OpenNL 4 with Debian 12's ARPACK returns none for it), eigenvectors through
 * nlMultiGetVariable(i, j) and bound buffers; a generalized problem with a mass matrix assembled
 * after nlMatrixMode(NL_MASS_MATRIX), row by row, checked by its own residual and
 * M-orthonormality; shift-invert around a shift inside the spectrum; misuse reported. Skips (77)
 * without ARPACK. */
#include <cnc.h>
#include <cnc_nl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nl_test_util.h"

#define PI 3.14159265358979323846
enum { N = 80, NEV = 5 };

static double closed_form(int j) { return 2 - 2 * cos(j * PI / (N + 1)); }

/* K = tridiag(-1, 2, -1) through nlAddIJCoefficient; M (when mass) = diag(1 + i % 4) row by row. */
static void assemble(int mass) {
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  nlMatrixMode(NL_STIFFNESS_MATRIX);
  for (NLuint i = 0; i < N; ++i) {
    nlAddIJCoefficient(i, i, 2.0);
    if (i > 0) nlAddIJCoefficient(i, i - 1, -1.0);
    if (i + 1 < N) nlAddIJCoefficient(i, i + 1, -1.0);
  }
  if (mass) {
    nlMatrixMode(NL_MASS_MATRIX);
    for (NLuint i = 0; i < N; ++i) {
      nlBegin(NL_ROW);
      nlCoefficient(i, 1.0 + (double)(i % 4));
      nlEnd(NL_ROW);
    }
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
}

static void test_laplacian(void** state) {
  (void)state;
  assert_true(nlInitExtension("ARPACK"));
  assert_true(nlExtensionIsInitialized("ARPACK"));
  NLContext ctx = nlNewContext();
  nlEigenSolverParameteri(NL_EIGEN_SOLVER, NL_ARPACK_EXT);
  nlEigenSolverParameteri(NL_NB_VARIABLES, N);
  nlEigenSolverParameteri(NL_NB_EIGENS, NEV);
  nlEigenSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlEigenSolverParameteri(NL_EIGEN_MAX_ITERATIONS, 1000);
  nlEigenSolverParameterd(NL_EIGEN_THRESHOLD, 1e-12);
  assemble(0);
  nlEigenSolve();
  assert_int_equal(nlGetErrorCNC(), CNC_OK);
  for (int j = 0; j < NEV; ++j) {
    assert_double_equal(nlGetEigenValue((NLuint)j), closed_form(j + 1), 1e-9);
    /* Eigenvector j is system j: the sine mode, unit norm, largest component positive. */
    double dot = 0, norm = 0;
    for (int i = 0; i < N; ++i) {
      const double s = sin((i + 1) * (j + 1) * PI / (N + 1));
      const double x = nlMultiGetVariable((NLuint)i, (NLuint)j);
      dot += s * x, norm += x * x;
    }
    assert_double_equal(norm, 1.0, 1e-10);
    assert_double_equal(fabs(dot) / sqrt((N + 1) / 2.0), 1.0, 1e-8);
  }
  /* Past the eigenvalues found: reported, 0. */
  assert_double_equal(nlGetEigenValue(NEV), 0.0, 0.0);
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INDEX_OUT_OF_RANGE);
  nlDeleteContext(ctx);
}

static void test_generalized_shift_invert(void** state) {
  (void)state;
  double smallest[NEV] = {0};
  double* buffer[NEV] = {0};
  for (int s = 0; s < 2; ++s) { /* without, then with shift-invert */
    NLContext ctx = nlNewContext();
    nlEigenSolverParameteri(NL_EIGEN_SOLVER, NL_ARPACK_EXT);
    nlEigenSolverParameteri(NL_NB_VARIABLES, N);
    nlEigenSolverParameteri(NL_NB_EIGENS, NEV);
    if (s == 1) {
      nlEigenSolverParameterd(NL_EIGEN_SHIFT, 0.5 * (smallest[1] + smallest[2]));
      nlEigenSolverParameteri(NL_EIGEN_SHIFT_INVERT, NL_TRUE);
      assert_true(nlIsEnabled(NL_EIGEN_SHIFT_INVERT));
      nlEnable(NL_VARIABLES_BUFFER);
      for (int e = 0; e < NEV; ++e) {
        buffer[e] = (double*)calloc(N, sizeof(double));
        nlBindBuffer(NL_VARIABLES_BUFFER, (NLuint)e, buffer[e], sizeof(double));
      }
    }
    assemble(1);
    nlEigenSolve();
    assert_int_equal(nlGetErrorCNC(), CNC_OK);
    double w[NEV];
    for (int e = 0; e < NEV; ++e) w[e] = nlGetEigenValue((NLuint)e);
    /* Residual and M-orthonormality, computed here. */
    for (int e = 0; e < NEV; ++e) {
      double r2 = 0;
      for (int i = 0; i < N; ++i) {
        const double xi = nlMultiGetVariable((NLuint)i, (NLuint)e);
        double kx = 2 * xi;
        if (i > 0) kx -= nlMultiGetVariable((NLuint)i - 1, (NLuint)e);
        if (i + 1 < N) kx -= nlMultiGetVariable((NLuint)i + 1, (NLuint)e);
        const double r = kx - w[e] * (1.0 + (double)(i % 4)) * xi;
        r2 += r * r;
        if (s == 1) assert_true(buffer[e][i] == xi); /* the bound buffer holds it */
      }
      assert_true(sqrt(r2) < 1e-9);
      for (int f = 0; f < NEV; ++f) {
        double d = 0;
        for (int i = 0; i < N; ++i)
          d += nlMultiGetVariable((NLuint)i, (NLuint)e) * (1.0 + (double)(i % 4)) *
               nlMultiGetVariable((NLuint)i, (NLuint)f);
        assert_double_equal(d, e == f ? 1.0 : 0.0, 1e-10);
      }
      if (e > 0) assert_true(w[e - 1] <= w[e]);
    }
    if (s == 0) {
      memcpy(smallest, w, sizeof w);
    } else { /* around a shift between the 2nd and 3rd: those two are among the five found */
      int found = 0;
      for (int e = 0; e < NEV; ++e)
        if (fabs(w[e] - smallest[1]) < 1e-10 || fabs(w[e] - smallest[2]) < 1e-10) ++found;
      assert_int_equal(found, 2);
      for (int e = 0; e < NEV; ++e) free(buffer[e]);
    }
    nlDeleteContext(ctx);
  }
}

static void test_misuse(void** state) {
  (void)state;
  NLContext ctx = nlNewContext();
  nlEigenSolverParameteri(NL_EIGEN_SOLVER, NL_SUPERLU_EXT); /* not an eigen solver */
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INVALID_ENUM);
  nlClearErrorCNC();
  nlMatrixMode(0x1234);
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INVALID_ENUM);
  nlClearErrorCNC();
  /* No eigen solver selected: K is not recorded, nlEigenSolve says so. */
  nlSolverParameteri(NL_NB_VARIABLES, N);
  nlSolverParameteri(NL_NB_SYSTEMS, NEV);
  assemble(0);
  nlEigenSolve();
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_STATE);
  nlClearErrorCNC();
  nlDeleteContext(ctx);
  /* NL_NB_EIGENS >= n: cnc's refusal, no eigenvalue. */
  ctx = nlNewContext();
  nlEigenSolverParameteri(NL_EIGEN_SOLVER, NL_ARPACK_EXT);
  nlEigenSolverParameteri(NL_NB_VARIABLES, 3);
  nlEigenSolverParameteri(NL_NB_EIGENS, 3);
  nlBegin(NL_SYSTEM);
  nlBegin(NL_MATRIX);
  for (NLuint i = 0; i < 3; ++i) nlAddIJCoefficient(i, i, 1.0 + i);
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  nlEigenSolve();
  assert_int_equal(nlGetErrorCNC(), CNC_ERR_INVALID_VALUE);
  nlDeleteContext(ctx);
}

int main(void) {
  if (!cncEigenSolverAvailable()) {
    printf("SKIP: ARPACK not available: %s\n", cncGetLastErrorMessage());
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_laplacian),
      cmocka_unit_test(test_generalized_shift_invert),
      cmocka_unit_test(test_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
