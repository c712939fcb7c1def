/* LSCM: least squares conformal map of a disk-like mesh (Lévy et al. 2002), the parameterization
 * demo of the Concurrent Number Cruncher paper.
 *
 *   cnc-lscm [--solver cg|cholmod|superlu] mesh.{obj,off} [out.obj] [out.png]
 *   cnc-lscm [--solver cg|cholmod|superlu] --disk N [out.obj] [out.png]
 *
 * --disk N generates the mesh instead of reading one: a hexagonal patch of the triangular lattice
 * (1 + 3 R (R + 1) >= N vertices, R rings around the centre) lifted onto a paraboloid, a curved
 * disk whose conformal map is not a similarity of its flat layout. --solver picks the method:
 * cg (the default, Jacobi-preconditioned CG), or the direct solvers cholmod / superlu (exit 77 when
 * their library is absent).
 *
 * Each triangle asks that its (u, v) image be a similarity of its own shape: with complex
 * U = u + i v and the triangle laid flat in its plane with corners z0, z1, z2,
 *     (U2 - U0)(z1 - z0) - (U1 - U0)(z2 - z0) = 0,
 * two real rows per triangle, weighted by 1/sqrt(area). Two vertices are pinned (locked), so the
 * least-squares problem over the other 2n - 4 unknowns is symmetric positive definite: cnc solves
 * the normal equations with Jacobi-preconditioned CG on whatever backend CNC_BACKEND picks (or
 * with the direct solver --solver names).
 * Writes an OBJ with texture coordinates and a PNG of the UV layout; checks the result (no NaN,
 * positive area, few flipped triangles, small residual) and exits 1 if a check fails. */
#include <cnc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/image.h"
#include "../common/mesh.h"
#include "../common/report.h"

static void sub(const double* a, const double* b, double* r) {
  for (int k = 0; k < 3; ++k) r[k] = a[k] - b[k];
}
static double dot(const double* a, const double* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static void cross(const double* a, const double* b, double* r) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}

static int compare_edges(const void* a, const void* b) {
  const long long x = *(const long long*)a, y = *(const long long*)b;
  return (x > y) - (x < y);
}

/* Boundary vertices are those of edges used by one triangle only; the pins are the two of them
 * farthest apart. Returns -1 for a closed mesh. */
static int boundary_pins(const mesh* m, int* pin0, int* pin1) {
  const size_t ne = 3 * (size_t)m->nf;
  long long* edges = (long long*)malloc(ne * sizeof(long long));
  for (int t = 0; t < m->nf; ++t) {
    for (int k = 0; k < 3; ++k) {
      const long long a = m->f[3 * t + k], b = m->f[3 * t + (k + 1) % 3];
      edges[3 * (size_t)t + k] = a < b ? a * m->nv + b : b * m->nv + a;
    }
  }
  qsort(edges, ne, sizeof(long long), compare_edges);
  int* boundary = (int*)malloc(2 * ne * sizeof(int));
  size_t nb = 0;
  for (size_t e = 0; e < ne;) {
    size_t same = e + 1;
    while (same < ne && edges[same] == edges[e]) ++same;
    if (same - e == 1) {
      boundary[nb++] = (int)(edges[e] / m->nv);
      boundary[nb++] = (int)(edges[e] % m->nv);
    }
    e = same;
  }
  double best = -1.0;
  for (size_t i = 0; i < nb; ++i) {
    for (size_t j = i + 1; j < nb; ++j) {
      double d[3];
      sub(m->v + 3 * boundary[i], m->v + 3 * boundary[j], d);
      if (dot(d, d) > best) best = dot(d, d), *pin0 = boundary[i], *pin1 = boundary[j];
    }
  }
  free(edges);
  free(boundary);
  return best > 0.0 ? 0 : -1;
}

/* Two rows (real and imaginary part) for triangle t; variables u_i = 2i, v_i = 2i + 1. */
static void triangle_rows(const mesh* m, int t) {
  const int* f = m->f + 3 * t;
  const double *p0 = m->v + 3 * f[0], *p1 = m->v + 3 * f[1], *p2 = m->v + 3 * f[2];
  double e1[3], e2[3], n[3], y[3];
  sub(p1, p0, e1);
  sub(p2, p0, e2);
  cross(e1, e2, n);
  const double area2 = sqrt(dot(n, n)), len1 = sqrt(dot(e1, e1));
  if (!(area2 > 0.0) || !(len1 > 0.0)) return; /* degenerate: no constraint */
  cross(n, e1, y);
  /* Local frame: z0 = 0, z1 = (a, 0), z2 = (c, d) with d > 0 (orientation kept). */
  const double a = len1, c = dot(e2, e1) / len1, d = dot(e2, y) / sqrt(dot(y, y));
  const CNCuint u0 = 2 * f[0], v0 = u0 + 1, u1 = 2 * f[1], v1 = u1 + 1, u2 = 2 * f[2], v2 = u2 + 1;
  const double w = 1.0 / sqrt(area2);
  cncBegin(CNC_ROW); /* Re: a (u2 - u0) - c (u1 - u0) + d (v1 - v0) = 0 */
  cncCoefficient(u0, c - a);
  cncCoefficient(u1, -c);
  cncCoefficient(u2, a);
  cncCoefficient(v0, -d);
  cncCoefficient(v1, d);
  cncRowScaling(w);
  cncEnd(CNC_ROW);
  cncBegin(CNC_ROW); /* Im: a (v2 - v0) - c (v1 - v0) - d (u1 - u0) = 0 */
  cncCoefficient(v0, c - a);
  cncCoefficient(v1, -c);
  cncCoefficient(v2, a);
  cncCoefficient(u0, d);
  cncCoefficient(u1, -d);
  cncRowScaling(w);
  cncEnd(CNC_ROW);
}

static double signed_area(const double* uv, const int* f) {
  const double *a = uv + 2 * f[0], *b = uv + 2 * f[1], *c = uv + 2 * f[2];
  return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]));
}

/* The --disk mesh: lattice points i a + j b (a = (1, 0), b = (1/2, sqrt(3)/2)) with hexagonal
 * distance max(|i|, |j|, |i + j|) <= R, two triangles per lattice cell whose corners are all in,
 * counter-clockwise; z = (x^2 + y^2) / (2 R). Returns 0, or -1 when out of memory. */
static int disk_mesh(int vertices, mesh* m) {
  int r = 0;
  while (1 + 3 * (long long)r * (r + 1) < vertices) ++r;
  const int side = 2 * r + 1;
  int* id = (int*)malloc(sizeof(int) * (size_t)side * side);
  m->nv = 1 + 3 * r * (r + 1);
  m->nf = 6 * r * r;
  m->v = (double*)malloc(sizeof(double) * 3 * (size_t)m->nv);
  m->f = (int*)malloc(sizeof(int) * 3 * (size_t)m->nf);
  if (!id || !m->v || !m->f) {
    free(id);
    mesh_free(m);
    return -1;
  }
  int nv = 0, nf = 0;
  for (int j = -r; j <= r; ++j) {
    for (int i = -r; i <= r; ++i) {
      const int inside = abs(i) <= r && abs(j) <= r && abs(i + j) <= r;
      id[(j + r) * side + (i + r)] = inside ? nv : -1;
      if (!inside) continue;
      const double x = i + 0.5 * j, y = 0.8660254037844386 * j;
      m->v[3 * nv] = x;
      m->v[3 * nv + 1] = y;
      m->v[3 * nv + 2] = (x * x + y * y) / (2.0 * (r > 0 ? r : 1));
      ++nv;
    }
  }
  for (int j = -r; j < r; ++j) {
    for (int i = -r; i < r; ++i) {
      const int a = id[(j + r) * side + (i + r)], b = id[(j + r) * side + (i + 1 + r)],
                c = id[(j + 1 + r) * side + (i + r)], d = id[(j + 1 + r) * side + (i + 1 + r)];
      if (a >= 0 && b >= 0 && c >= 0) {
        m->f[3 * nf] = a, m->f[3 * nf + 1] = b, m->f[3 * nf + 2] = c;
        ++nf;
      }
      if (b >= 0 && d >= 0 && c >= 0) {
        m->f[3 * nf] = b, m->f[3 * nf + 1] = d, m->f[3 * nf + 2] = c;
        ++nf;
      }
    }
  }
  free(id);
  m->nf = nf;
  return 0;
}

/* The UV layout, shaded by the 3D normal so the shape is recognisable; flipped triangles red. */
static int write_layout_png(const mesh* m, const double* uv, const char* path) {
  const int size = 1024, margin = 16;
  double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
  for (int i = 0; i < m->nv; ++i) {
    for (int k = 0; k < 2; ++k) {
      lo[k] = fmin(lo[k], uv[2 * i + k]);
      hi[k] = fmax(hi[k], uv[2 * i + k]);
    }
  }
  const double scale = (size - 2 * margin) / fmax(hi[0] - lo[0], hi[1] - lo[1]);
  /* Centre the layout: shift lo so that the unused space is split evenly. */
  for (int k = 0; k < 2; ++k) lo[k] -= 0.5 * ((size - 2 * margin) / scale - (hi[k] - lo[k]));
  image* im = image_new(size, size, 255, 255, 255);
  if (!im) return -1;
  const double light[3] = {0.267, 0.535, 0.802};
  for (int t = 0; t < m->nf; ++t) {
    const int* f = m->f + 3 * t;
    double p[3][3], e1[3], e2[3], n[3];
    for (int k = 0; k < 3; ++k) {
      p[k][0] = margin + (uv[2 * f[k]] - lo[0]) * scale;
      p[k][1] = size - margin - (uv[2 * f[k] + 1] - lo[1]) * scale; /* v up */
      p[k][2] = 0.0;
    }
    sub(m->v + 3 * f[1], m->v + 3 * f[0], e1);
    sub(m->v + 3 * f[2], m->v + 3 * f[0], e2);
    cross(e1, e2, n);
    const double shade = 0.35 + 0.65 * fabs(dot(n, light)) / fmax(sqrt(dot(n, n)), 1e-300);
    unsigned char rgb[3] = {(unsigned char)(170 * shade), (unsigned char)(200 * shade),
                            (unsigned char)(250 * shade)};
    if (signed_area(uv, f) <= 0.0) rgb[0] = 255, rgb[1] = 0, rgb[2] = 0;
    image_triangle(im, p[0], p[1], p[2], rgb);
  }
  const unsigned char edge[3] = {40, 40, 60};
  if (m->nf <= 40000) { /* wireframe while it stays readable */
    for (int t = 0; t < m->nf; ++t) {
      const int* f = m->f + 3 * t;
      for (int k = 0; k < 3; ++k) {
        const int a = f[k], b = f[(k + 1) % 3];
        image_line(im, margin + (uv[2 * a] - lo[0]) * scale,
                   size - margin - (uv[2 * a + 1] - lo[1]) * scale,
                   margin + (uv[2 * b] - lo[0]) * scale,
                   size - margin - (uv[2 * b + 1] - lo[1]) * scale, edge);
      }
    }
  }
  const int rc = image_write_png(im, path);
  image_free(im);
  return rc;
}

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s [--solver cg|cholmod|superlu] mesh.{obj,off} [out.obj] [out.png]\n"
          "       %s [--solver cg|cholmod|superlu] --disk N [out.obj] [out.png]\n",
          prog, prog);
}

int main(int argc, char** argv) {
  CNCenum solver = CNC_CG;
  const char* solver_name = "cg";
  int disk = 0, arg = 1;
  for (; arg < argc && strncmp(argv[arg], "--", 2) == 0; arg += 2) {
    if (arg + 1 >= argc) return usage(argv[0]), 2;
    if (strcmp(argv[arg], "--solver") == 0) {
      solver_name = argv[arg + 1];
      if (strcmp(solver_name, "cg") == 0) {
        solver = CNC_CG;
      } else if (strcmp(solver_name, "cholmod") == 0) {
        solver = CNC_CHOLMOD;
      } else if (strcmp(solver_name, "superlu") == 0) {
        solver = CNC_SUPERLU;
      } else {
        fprintf(stderr, "--solver %s: expected cg, cholmod or superlu\n", solver_name);
        return 2;
      }
    } else if (strcmp(argv[arg], "--disk") == 0) {
      char* end = NULL;
      const long n = strtol(argv[arg + 1], &end, 10);
      if (*end != '\0' || n < 7 || n > 50000000) {
        fprintf(stderr, "--disk %s: expected a vertex count from 7 to 50000000\n", argv[arg + 1]);
        return 2;
      }
      disk = (int)n;
    } else {
      return usage(argv[0]), 2;
    }
  }
  const int nfiles = argc - arg, first_out = disk ? arg : arg + 1;
  if ((!disk && nfiles < 1) || nfiles - (first_out - arg) > 2) return usage(argv[0]), 2;
  const char* mesh_name = disk ? "disk" : argv[arg];
  const char* out_obj = argc > first_out ? argv[first_out] : "lscm.obj";
  const char* out_png = argc > first_out + 1 ? argv[first_out + 1] : "lscm.png";
  if (solver != CNC_CG && !cncDirectSolverAvailable(solver)) {
    printf("skipped: the %s library is not available\n", solver_name);
    return 77;
  }
  mesh m;
  if (disk) {
    if (disk_mesh(disk, &m) != 0) {
      fprintf(stderr, "out of memory for a disk of %d vertices\n", disk);
      return 1;
    }
  } else {
    FILE* probe = fopen(mesh_name, "r");
    if (!probe) {
      printf("skipped: mesh %s not found (shared data absent)\n", mesh_name);
      return 77;
    }
    fclose(probe);
    char err[256];
    if (mesh_read(mesh_name, &m, err, sizeof err) != 0) {
      fprintf(stderr, "%s\n", err);
      return 1;
    }
  }

  /* Pins: the two boundary vertices farthest apart (pinning inside the surface would make
   * point singularities). The bounding box's two longest axes give an initial guess (a
   * projection), which CG then improves. */
  int pin0 = 0, pin1 = 0;
  if (boundary_pins(&m, &pin0, &pin1) != 0) {
    fprintf(stderr, "%s has no boundary: LSCM needs a disk-like mesh\n", mesh_name);
    return 1;
  }
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < m.nv; ++i) {
    for (int k = 0; k < 3; ++k) {
      lo[k] = fmin(lo[k], m.v[3 * i + k]);
      hi[k] = fmax(hi[k], m.v[3 * i + k]);
    }
  }
  int ax = 0;
  for (int k = 1; k < 3; ++k)
    if (hi[k] - lo[k] > hi[ax] - lo[ax]) ax = k;
  const int ay = (ax + 1) % 3, az = (ax + 2) % 3,
            ay2 = (hi[ay] - lo[ay] >= hi[az] - lo[az]) ? ay : az;

  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  cncSolverParameteri(CNC_NB_VARIABLES, 2 * m.nv);
  cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE);
  cncSolverParameterd(CNC_THRESHOLD, 1e-9);
  cncSolverParameteri(CNC_MAX_ITERATIONS, 20 * m.nv + 1000);
  cncSolverParameteri(CNC_SOLVER, (CNCint)solver);
  cncBegin(CNC_SYSTEM);
  for (int i = 0; i < m.nv; ++i) {
    cncSetVariable(2 * i, m.v[3 * i + ax] - m.v[3 * pin0 + ax]);
    cncSetVariable(2 * i + 1, m.v[3 * i + ay2] - m.v[3 * pin0 + ay2]);
  }
  double d[3];
  sub(m.v + 3 * pin1, m.v + 3 * pin0, d);
  cncSetVariable(2 * pin0, 0.0); /* pins: (0, 0) and (|p1 - p0|, 0) */
  cncSetVariable(2 * pin0 + 1, 0.0);
  cncSetVariable(2 * pin1, sqrt(dot(d, d)));
  cncSetVariable(2 * pin1 + 1, 0.0);
  cncLockVariable(2 * pin0);
  cncLockVariable(2 * pin0 + 1);
  cncLockVariable(2 * pin1);
  cncLockVariable(2 * pin1 + 1);
  cncBegin(CNC_MATRIX);
  for (int t = 0; t < m.nf; ++t) triangle_rows(&m, t);
  cncEnd(CNC_MATRIX);
  cncEnd(CNC_SYSTEM);
  if (cncSolve() != CNC_OK || cncGetError() != CNC_OK) {
    fprintf(stderr, "cnc: %s\n", cncGetErrorMessage());
    return 1;
  }

  printf("lscm: %s, %d vertices, %d triangles, pins %d and %d, solver %s\n", mesh_name, m.nv, m.nf,
         pin0, pin1, solver_name);
  demo_report("lscm");
  double residual = 0.0;
  cncGetDoublev(CNC_TRUE_ERROR, &residual);

  double* uv = (double*)malloc(sizeof(double) * 2 * (size_t)m.nv);
  int finite = 1;
  for (int i = 0; i < 2 * m.nv; ++i) {
    cncGetVariable((CNCuint)i, &uv[i]);
    finite &= isfinite(uv[i]);
  }
  double area = 0.0;
  int flipped = 0;
  for (int t = 0; t < m.nf; ++t) {
    const double a = signed_area(uv, m.f + 3 * t);
    area += a;
    flipped += a <= 0.0;
  }
  const double flipped_fraction = (double)flipped / m.nf;
  printf("uv area %.4g, flipped triangles %d (%.3f%%)\n", area, flipped, 100 * flipped_fraction);
  if (mesh_write_obj(out_obj, &m, uv) != 0 || write_layout_png(&m, uv, out_png) != 0) {
    fprintf(stderr, "cannot write %s or %s\n", out_obj, out_png);
    return 1;
  }
  printf("wrote %s and %s\n", out_obj, out_png);

  const int ok = finite && area > 0.0 && flipped_fraction < 0.01 && residual < 1e-6;
  printf("check: %s\n", ok ? "ok" : "FAILED (NaN, non-positive area, >1% flipped or residual)");
  free(uv);
  mesh_free(&m);
  cncDeleteContext(ctx);
  return ok ? 0 : 1;
}
