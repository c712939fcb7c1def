/* Implicit Laplacian smoothing of a closed mesh, the smoothing demo of the Concurrent Number
 * Cruncher paper: one backward-Euler step of the diffusion of the vertex positions,
 *
 *     (I + t L) p' = p,      L = D - W, the uniform graph Laplacian of the mesh edges,
 *
 * solved for x, y and z together: three right-hand sides sharing one matrix (CNC_NB_SYSTEMS = 3),
 * assembled entry by entry. I + t L is symmetric positive definite, so CG applies.
 *
 *   smoothing mesh.{obj,off} [t = 3] [out.obj] [out.png]
 *
 * Writes the smoothed mesh and a before | after PNG (orthographic, z-buffered, flat shaded).
 * Checks (exit 1 if one fails): finite result, centroid unchanged (the rows of L sum to zero, so
 * 1^T p' = 1^T p exactly), the Laplacian energy |L p|^2 at least halved, small residual. */
#include <cnc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/image.h"
#include "../common/mesh.h"
#include "../common/render.h"
#include "../common/report.h"

/* Each triangle edge (a, b) adds weight 1/2: an edge shared by two triangles weighs 1. */
static void assemble_laplacian(const mesh* m, double t) {
  for (int i = 0; i < m->nv; ++i) cncAddIJCoefficient(i, i, 1.0);
  for (int f = 0; f < m->nf; ++f) {
    for (int k = 0; k < 3; ++k) {
      const CNCuint a = m->f[3 * f + k], b = m->f[3 * f + (k + 1) % 3];
      cncAddIJCoefficient(a, a, 0.5 * t);
      cncAddIJCoefficient(b, b, 0.5 * t);
      cncAddIJCoefficient(a, b, -0.5 * t);
      cncAddIJCoefficient(b, a, -0.5 * t);
    }
  }
}

/* |L p|^2 summed over the three coordinates (same uniform Laplacian, t = 1). */
static double laplacian_energy(const mesh* m, const double* p) {
  double* lp = (double*)calloc(3 * (size_t)m->nv, sizeof(double));
  for (int f = 0; f < m->nf; ++f) {
    for (int k = 0; k < 3; ++k) {
      const int a = m->f[3 * f + k], b = m->f[3 * f + (k + 1) % 3];
      for (int c = 0; c < 3; ++c) {
        const double diff = 0.5 * (p[3 * a + c] - p[3 * b + c]);
        lp[3 * a + c] += diff;
        lp[3 * b + c] -= diff;
      }
    }
  }
  double e = 0.0;
  for (int i = 0; i < 3 * m->nv; ++i) e += lp[i] * lp[i];
  free(lp);
  return e;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s mesh.{obj,off} [t] [out.obj] [out.png]\n", argv[0]);
    return 2;
  }
  const double t = argc > 2 ? atof(argv[2]) : 3.0;
  const char* out_obj = argc > 3 ? argv[3] : "smoothed.obj";
  const char* out_png = argc > 4 ? argv[4] : "smoothing.png";
  FILE* probe = fopen(argv[1], "r");
  if (!probe) {
    printf("skipped: mesh %s not found (shared data absent)\n", argv[1]);
    return 77;
  }
  fclose(probe);
  mesh m;
  char err[256];
  if (mesh_read(argv[1], &m, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }

  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  cncSolverParameteri(CNC_NB_VARIABLES, m.nv);
  cncSolverParameteri(CNC_NB_SYSTEMS, 3);
  cncSolverParameteri(CNC_SYMMETRIC, CNC_TRUE);
  cncSolverParameterd(CNC_THRESHOLD, 1e-10);
  cncBegin(CNC_SYSTEM);
  for (int i = 0; i < m.nv; ++i) /* initial guess: the original positions */
    for (CNCuint c = 0; c < 3; ++c) cncMultiSetVariable(i, c, m.v[3 * i + c]);
  cncBegin(CNC_MATRIX);
  assemble_laplacian(&m, t);
  for (int i = 0; i < m.nv; ++i)
    for (CNCuint c = 0; c < 3; ++c) cncMultiAddIRightHandSide(i, c, m.v[3 * i + c]);
  cncEnd(CNC_MATRIX);
  cncEnd(CNC_SYSTEM);
  if (cncSolve() != CNC_OK || cncGetError() != CNC_OK) {
    fprintf(stderr, "cnc: %s\n", cncGetErrorMessage());
    return 1;
  }

  printf("smoothing: %s, %d vertices, %d triangles, t = %g, 3 right-hand sides\n", argv[1], m.nv,
         m.nf, t);
  demo_report("smoothing");
  double residual = 0.0;
  cncGetDoublev(CNC_TRUE_ERROR, &residual);

  double* p = (double*)malloc(sizeof(double) * 3 * (size_t)m.nv);
  int finite = 1;
  double c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0}, lo[3] = {INFINITY, INFINITY, INFINITY},
         hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < m.nv; ++i) {
    for (CNCuint c = 0; c < 3; ++c) {
      cncMultiGetVariable(i, c, &p[3 * i + c]);
      finite &= isfinite(p[3 * i + c]);
      c0[c] += m.v[3 * i + c] / m.nv;
      c1[c] += p[3 * i + c] / m.nv;
      lo[c] = fmin(lo[c], m.v[3 * i + c]);
      hi[c] = fmax(hi[c], m.v[3 * i + c]);
    }
  }
  const double diag = sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                           (hi[2] - lo[2]) * (hi[2] - lo[2]));
  const double drift = sqrt((c1[0] - c0[0]) * (c1[0] - c0[0]) + (c1[1] - c0[1]) * (c1[1] - c0[1]) +
                            (c1[2] - c0[2]) * (c1[2] - c0[2]));
  const double e0 = laplacian_energy(&m, m.v), e1 = laplacian_energy(&m, p);
  printf("centroid drift %.3g (of diagonal %.3g), Laplacian energy %.4g -> %.4g\n", drift, diag, e0,
         e1);

  const int size = 512;
  image* im = image_new(2 * size, size, 255, 255, 255);
  const double scale = 0.9 * size / fmax(hi[0] - lo[0], hi[1] - lo[1]);
  render_mesh(im, 0, size, &m, m.v, lo, scale, NULL, 0, 0);
  render_mesh(im, size, size, &m, p, lo, scale, NULL, 0, 0);
  double* orig = m.v;
  m.v = p;
  const int written = mesh_write_obj(out_obj, &m, NULL) == 0 && image_write_png(im, out_png) == 0;
  m.v = orig;
  image_free(im);
  if (!written) {
    fprintf(stderr, "cannot write %s or %s\n", out_obj, out_png);
    return 1;
  }
  printf("wrote %s and %s (before | after)\n", out_obj, out_png);

  const int ok = finite && drift <= 1e-6 * diag && e1 < 0.5 * e0 && residual < 1e-8;
  printf("check: %s\n", ok ? "ok" : "FAILED (NaN, centroid moved, energy not halved or residual)");
  free(p);
  mesh_free(&m);
  cncDeleteContext(ctx);
  return ok ? 0 : 1;
}
