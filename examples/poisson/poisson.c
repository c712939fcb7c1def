/* Poisson and heat equations on the unit cube by finite differences (7-point stencil), u = 0 on
 * the boundary, n^3 interior unknowns, h = 1 / (n + 1).
 *
 *   poisson [-n N] [--heat STEPS] [-o PREFIX]      writes PREFIX.vtk (ParaView) and PREFIX.png
 *
 * Poisson (default): -Δu = f with u = p(x) p(y) p(z), p(t) = t (1 - t²), so
 * f = 6 x p(y) p(z) + 6 y p(x) p(z) + 6 z p(x) p(y). Central second differences are exact on
 * cubics, so the discrete solution equals the analytic u at the grid points: the check compares
 * with u directly (to the solver's tolerance). The stencil matrix K has 6 on the diagonal and -1
 * per neighbour; K u = h² f.
 *
 * Heat (--heat S): u_t = Δu from u(0) = sin(πx) sin(πy) sin(πz), S backward-Euler steps of
 * dt = 0.1/S, each (I + dt/h² K) u' = u, a new assembly and solve per step. u(0) is an
 * eigenvector of K with eigenvalue μ = 12 sin²(πh/2), so the discrete answer is
 * u(0) / (1 + dt μ/h²)^S, checked to 1e-6; the continuous one, u(0) exp(-3π² t), is printed.
 * Exit 1 if a check fails. */
#include <cnc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/image.h"
#include "../common/report.h"

static const double PI = 3.14159265358979323846;

static CNCuint index_of(int n, int i, int j, int k) { return (CNCuint)(i + n * (j + n * k)); }

/* a I + b K over the interior; neighbours on the boundary are 0 and drop out. */
static void assemble(int n, double a, double b) {
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        const CNCuint r = index_of(n, i, j, k);
        cncAddIJCoefficient(r, r, a + 6.0 * b);
        if (i > 0) cncAddIJCoefficient(r, index_of(n, i - 1, j, k), -b);
        if (i + 1 < n) cncAddIJCoefficient(r, index_of(n, i + 1, j, k), -b);
        if (j > 0) cncAddIJCoefficient(r, index_of(n, i, j - 1, k), -b);
        if (j + 1 < n) cncAddIJCoefficient(r, index_of(n, i, j + 1, k), -b);
        if (k > 0) cncAddIJCoefficient(r, index_of(n, i, j, k - 1), -b);
        if (k + 1 < n) cncAddIJCoefficient(r, index_of(n, i, j, k + 1), -b);
      }
    }
  }
}

static int write_vtk(const char* path, int n, const double* u) {
  FILE* out = fopen(path, "w");
  if (!out) return -1;
  const int m = n + 2; /* with the boundary */
  const double h = 1.0 / (n + 1);
  fprintf(out, "# vtk DataFile Version 3.0\ncnc finite-difference solution\nASCII\n");
  fprintf(out, "DATASET STRUCTURED_POINTS\nDIMENSIONS %d %d %d\nORIGIN 0 0 0\nSPACING %g %g %g\n",
          m, m, m, h, h, h);
  fprintf(out, "POINT_DATA %d\nSCALARS u double 1\nLOOKUP_TABLE default\n", m * m * m);
  for (int k = 0; k < m; ++k)
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) {
        const int inside = i > 0 && j > 0 && k > 0 && i <= n && j <= n && k <= n;
        fprintf(out, "%.9g\n", inside ? u[index_of(n, i - 1, j - 1, k - 1)] : 0.0);
      }
  return fclose(out) == 0 ? 0 : -1;
}

/* Value at grid coordinates (gx, gy) of plane k, boundary (index -1 or n) included: bilinear. */
static double sample(int n, const double* u, int k, double gx, double gy) {
  const int i0 = (int)floor(gx), j0 = (int)floor(gy);
  const double fx = gx - i0, fy = gy - j0;
  double v = 0.0;
  for (int dj = 0; dj < 2; ++dj)
    for (int di = 0; di < 2; ++di) {
      const int i = i0 + di, j = j0 + dj;
      const double w = (di ? fx : 1 - fx) * (dj ? fy : 1 - fy);
      if (i >= 0 && j >= 0 && i < n && j < n) v += w * u[index_of(n, i, j, k)];
    }
  return v;
}

/* The slice z = 1/2 (nearest grid plane): 0 blue, max/2 white, max red. */
static int write_slice_png(const char* path, int n, const double* u) {
  const int size = 512, k = n / 2;
  double umax = 1e-300;
  for (size_t i = 0; i < (size_t)n * n * n; ++i) umax = fmax(umax, fabs(u[i]));
  image* im = image_new(size, size, 0, 0, 0);
  if (!im) return -1;
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) { /* pixel centre -> grid coordinate, boundary at -1 and n */
      const double gx = (x + 0.5) / size * (n + 1) - 1, gy = (size - y - 0.5) / size * (n + 1) - 1;
      unsigned char rgb[3];
      image_colormap(sample(n, u, k, gx, gy) / umax, rgb);
      image_set(im, x, y, rgb);
    }
  }
  const int rc = image_write_png(im, path);
  image_free(im);
  return rc;
}

int main(int argc, char** argv) {
  int n = 32, steps = 0;
  const char* prefix = "poisson";
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "-n") == 0 && a + 1 < argc)
      n = atoi(argv[++a]);
    else if (strcmp(argv[a], "--heat") == 0 && a + 1 < argc)
      steps = atoi(argv[++a]);
    else if (strcmp(argv[a], "-o") == 0 && a + 1 < argc)
      prefix = argv[++a];
    else {
      fprintf(stderr, "usage: %s [-n N] [--heat STEPS] [-o PREFIX]\n", argv[0]);
      return 2;
    }
  }
  if (n < 2 || n > 400 || steps < 0) {
    fprintf(stderr, "need 2 <= n <= 400 and STEPS >= 0\n");
    return 2;
  }
  const size_t nn = (size_t)n * n * n;
  const double h = 1.0 / (n + 1), mu = 12.0 * pow(sin(PI * h / 2), 2);
  double* exact = (double*)malloc(nn * sizeof(double)); /* the analytic answer's shape */
  double* f = (double*)malloc(nn * sizeof(double));
  double* u = (double*)malloc(nn * sizeof(double));
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double x = (i + 1) * h, y = (j + 1) * h, z = (k + 1) * h;
        const double px = x * (1 - x * x), py = y * (1 - y * y), pz = z * (1 - z * z);
        const CNCuint r = index_of(n, i, j, k);
        if (steps == 0) {
          exact[r] = px * py * pz;
          f[r] = 6 * (x * py * pz + y * px * pz + z * px * py);
        } else {
          exact[r] = sin(PI * x) * sin(PI * y) * sin(PI * z);
        }
      }

  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)nn);
  cncSolverParameteri(CNC_SYMMETRIC, CNC_TRUE);
  cncSolverParameterd(CNC_THRESHOLD, 1e-10);
  cncBegin(CNC_SYSTEM);
  double discrete_factor, analytic_factor;
  char what[64];
  if (steps == 0) {
    cncBegin(CNC_MATRIX); /* K u = h² f */
    assemble(n, 0.0, 1.0);
    for (size_t r = 0; r < nn; ++r) cncAddIRightHandSide((CNCuint)r, h * h * f[r]);
    cncEnd(CNC_MATRIX);
    cncEnd(CNC_SYSTEM);
    if (cncSolve() != CNC_OK) goto fail;
    snprintf(what, sizeof what, "poisson n=%d (%zu unknowns)", n, nn);
    demo_report(what);
    discrete_factor = analytic_factor = 1.0; /* exact on cubics */
  } else {
    const double dt = 0.1 / steps;
    for (size_t r = 0; r < nn; ++r) cncSetVariable((CNCuint)r, exact[r]);
    for (int s = 0; s < steps; ++s) { /* (I + dt/h² K) u' = u, the previous u as initial guess */
      cncBegin(CNC_MATRIX);           /* after a solve: a new system for the same variables */
      assemble(n, 1.0, dt / (h * h));
      for (size_t r = 0; r < nn; ++r) {
        double value;
        cncGetVariable((CNCuint)r, &value);
        cncAddIRightHandSide((CNCuint)r, value);
      }
      cncEnd(CNC_MATRIX);
      cncEnd(CNC_SYSTEM);
      if (cncSolve() != CNC_OK) goto fail;
      snprintf(what, sizeof what, "heat n=%d step %d/%d", n, s + 1, steps);
      demo_report(what);
    }
    discrete_factor = pow(1.0 + dt * mu / (h * h), -steps);
    analytic_factor = exp(-3 * PI * PI * 0.1);
  }

  double err_discrete = 0.0, err_analytic = 0.0, umax = 0.0;
  int finite = 1;
  for (size_t r = 0; r < nn; ++r) {
    cncGetVariable((CNCuint)r, &u[r]);
    finite &= isfinite(u[r]);
    err_discrete = fmax(err_discrete, fabs(u[r] - discrete_factor * exact[r]));
    err_analytic = fmax(err_analytic, fabs(u[r] - analytic_factor * exact[r]));
    umax = fmax(umax, fabs(analytic_factor * exact[r]));
  }
  err_discrete /= umax;
  err_analytic /= umax;
  printf(
      "relative max error: vs the discrete solution %.3g, vs the analytic solution %.3g (h = "
      "%.4g)\n",
      err_discrete, err_analytic, h);
  char vtk[1024], png[1024];
  snprintf(vtk, sizeof vtk, "%s.vtk", prefix);
  snprintf(png, sizeof png, "%s.png", prefix);
  if (write_vtk(vtk, n, u) != 0 || write_slice_png(png, n, u) != 0) {
    fprintf(stderr, "cannot write %s or %s\n", vtk, png);
    return 1;
  }
  printf("wrote %s and %s\n", vtk, png);
  /* Heat: backward Euler's O(dt) error is large for few steps, so only the discrete answer is
   * checked; Poisson: both are the same. */
  const int ok = finite && err_discrete < 1e-6;
  printf("check: %s\n", ok ? "ok" : "FAILED");
  free(exact);
  free(f);
  free(u);
  cncDeleteContext(ctx);
  return ok ? 0 : 1;

fail:
  fprintf(stderr, "cnc: %s\n", cncGetErrorMessage());
  return 1;
}
