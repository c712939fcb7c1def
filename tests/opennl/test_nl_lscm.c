/* A small mesh parameterization written the OpenNL way (least squares, two locked vertices,
 * nlRowScaling per triangle). The mesh is a jittered planar grid: its own (x, y) coordinates are
 * a conformal map, so with the two pinned vertices at their (x, y) the answer is (u, v) = (x, y).
 */
/* cmocka.h needs the standard headers first. */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
/* clang-format on */

#include <cnc_nl.h>

#define G 7 /* G x G vertices */
#define NV (G * G)

static double P[NV][2];

static void build_mesh(void) {
  for (int j = 0; j < G; ++j) {
    for (int i = 0; i < G; ++i) {
      const int v = j * G + i;
      P[v][0] = i + 0.2 * sin(3.1 * v);
      P[v][1] = j + 0.2 * cos(2.3 * v);
    }
  }
}

/* Conformality of triangle (a, b, c): (U_c - U_a)(z_b - z_a) = (U_b - U_a)(z_c - z_a), with
 * complex U = u + i v and z = x + i y; real and imaginary parts are two rows. */
static void triangle_rows(int a, int b, int c) {
  const double e1x = P[b][0] - P[a][0], e1y = P[b][1] - P[a][1];
  const double e2x = P[c][0] - P[a][0], e2y = P[c][1] - P[a][1];
  const double area2 = fabs(e1x * e2y - e1y * e2x);
  const NLuint ua = 2 * a, va = 2 * a + 1, ub = 2 * b, vb = 2 * b + 1, uc = 2 * c, vc = 2 * c + 1;
  nlRowScaling(1.0 / sqrt(area2)); /* area-weighted conformal energy */
  nlBegin(NL_ROW);                 /* Re: e1x du_ca - e1y dv_ca - e2x du_ba + e2y dv_ba = 0 */
  nlCoefficient(uc, e1x);
  nlCoefficient(ua, -e1x + e2x);
  nlCoefficient(vc, -e1y);
  nlCoefficient(va, e1y - e2y);
  nlCoefficient(ub, -e2x);
  nlCoefficient(vb, e2y);
  nlEnd(NL_ROW);
  nlRowScaling(1.0 / sqrt(area2));
  nlBegin(NL_ROW); /* Im: e1y du_ca + e1x dv_ca - e2y du_ba - e2x dv_ba = 0 */
  nlCoefficient(uc, e1y);
  nlCoefficient(ua, -e1y + e2y);
  nlCoefficient(vc, e1x);
  nlCoefficient(va, -e1x + e2x);
  nlCoefficient(ub, -e2y);
  nlCoefficient(vb, -e2x);
  nlEnd(NL_ROW);
}

static void test_lscm_planar(void** state) {
  (void)state;
  build_mesh();
  const int pin0 = 0, pin1 = NV - 1;
  nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 2 * NV);
  nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);
  nlSolverParameteri(NL_MAX_ITERATIONS, 10 * 2 * NV);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlSetVariable(2 * pin0, P[pin0][0]);
  nlSetVariable(2 * pin0 + 1, P[pin0][1]);
  nlSetVariable(2 * pin1, P[pin1][0]);
  nlSetVariable(2 * pin1 + 1, P[pin1][1]);
  nlLockVariable(2 * pin0);
  nlLockVariable(2 * pin0 + 1);
  nlLockVariable(2 * pin1);
  nlLockVariable(2 * pin1 + 1);
  nlBegin(NL_MATRIX);
  for (int j = 0; j + 1 < G; ++j) {
    for (int i = 0; i + 1 < G; ++i) {
      const int v = j * G + i;
      triangle_rows(v, v + 1, v + G + 1);
      triangle_rows(v, v + G + 1, v + G);
    }
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  assert_true(nlSolve());
  double err = 0.0;
  for (int v = 0; v < NV; ++v) {
    err = fmax(err, fabs(nlGetVariable(2 * v) - P[v][0]));
    err = fmax(err, fabs(nlGetVariable(2 * v + 1) - P[v][1]));
  }
  printf("max |uv - xy| = %.3g\n", err);
  assert_true(err < 1e-6);
  NLint nnz = 0;
  nlGetIntegerv(NL_NNZ, &nnz);
  assert_true(nnz > 2 * NV);
  assert_int_equal(nlGetErrorCNC(), 0);
  nlDeleteContext(nlGetCurrent());
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_lscm_planar)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
