/* Manifold harmonics (Vallet and Levy 2008): the eigenfunctions of the Laplace-Beltrami operator
 * of a triangle mesh, the "Fourier basis" of functions on the surface,
 *
 *     K v = lambda M v,   K the cotangent Laplacian (symmetric, positive semi-definite),
 *                         M the lumped mass matrix (a third of each incident triangle's area),
 *
 * the nev smallest eigenpairs by ARPACK's shift-invert mode through cncEigenSolveCSR: K - sigma M
 * is factored once (sigma just below 0: SPD, so CHOLMOD) and Lanczos runs on its inverse.
 *
 *   harmonics mesh.{obj,off} [nev = 20] [out.png] [subdivisions = 0]
 *
 * The mesh is scaled to area 1 (so the eigenvalues do not depend on its size), optionally split
 * `subdivisions` times (each triangle into four at its edge midpoints: 4x the triangles, the same
 * surface), and the PNG shows it coloured by eigenvectors 1, 2, 3 and nev-1 (blue < 0 < red).
 * Checks (exit 1 if one fails): every residual |K v - lambda M v| <= 1e-8, M-orthonormal vectors,
 * ascending eigenvalues, and on a closed mesh lambda_0 ~ 0 with a constant eigenvector. */
#include <cnc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/image.h"
#include "../common/mesh.h"
#include "../common/render.h"

/* Splits each triangle into four at its edge midpoints (one new vertex per edge, found in an
 * open-addressing table keyed by the edge's two vertices). */
static int subdivide(mesh* m) {
  const size_t slots = (size_t)1 << (int)ceil(log2(6.0 * m->nf + 16));
  int64_t* key = (int64_t*)malloc(sizeof(int64_t) * slots);
  int* mid = (int*)malloc(sizeof(int) * slots);
  double* v = (double*)malloc(sizeof(double) * 3 * ((size_t)m->nv + 3 * (size_t)m->nf));
  int* f = (int*)malloc(sizeof(int) * 12 * (size_t)m->nf);
  if (!key || !mid || !v || !f) {
    free(key), free(mid), free(v), free(f);
    return -1;
  }
  memset(key, 0xff, sizeof(int64_t) * slots);
  memcpy(v, m->v, sizeof(double) * 3 * (size_t)m->nv);
  int nv = m->nv;
  for (int t = 0; t < m->nf; ++t) {
    int e[3];
    for (int k = 0; k < 3; ++k) {
      const int a = m->f[3 * t + k], b = m->f[3 * t + (k + 1) % 3];
      const int64_t id = (int64_t)(a < b ? a : b) * m->nv + (a < b ? b : a);
      size_t s = (size_t)((uint64_t)id * 0x9E3779B97F4A7C15ull) & (slots - 1);
      while (key[s] != -1 && key[s] != id) s = (s + 1) & (slots - 1);
      if (key[s] == -1) {
        key[s] = id, mid[s] = nv;
        for (int c = 0; c < 3; ++c) v[3 * nv + c] = 0.5 * (m->v[3 * a + c] + m->v[3 * b + c]);
        ++nv;
      }
      e[k] = mid[s];
    }
    const int* c = m->f + 3 * t;
    const int tri[4][3] = {
        {c[0], e[0], e[2]}, {e[0], c[1], e[1]}, {e[2], e[1], c[2]}, {e[0], e[1], e[2]}};
    memcpy(f + 12 * t, tri, sizeof tri);
  }
  free(key), free(mid);
  free(m->v), free(m->f);
  m->v = v, m->f = f, m->nv = nv, m->nf *= 4;
  return 0;
}

static void sub3(const double* a, const double* b, double* d) {
  for (int c = 0; c < 3; ++c) d[c] = a[c] - b[c];
}
static double dot3(const double* a, const double* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static double cross_norm(const double* a, const double* b) {
  const double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
               z = a[0] * b[1] - a[1] * b[0];
  return sqrt(x * x + y * y + z * z);
}

/* The cotangent Laplacian K (9 entries a triangle, duplicates summed by cnc) and the lumped mass
 * (its diagonal), in CSR built by counting entries per row. */
typedef struct {
  CNCint64* row_ptr;
  CNCuint* col;
  double* val;
} csr;

static void build(const mesh* m, csr* k, csr* mass, double* area) {
  const size_t n = (size_t)m->nv;
  k->row_ptr = (CNCint64*)calloc(n + 1, sizeof(CNCint64));
  for (int t = 0; t < m->nf; ++t)
    for (int c = 0; c < 3; ++c) k->row_ptr[m->f[3 * t + c] + 1] += 3;
  for (size_t i = 0; i < n; ++i) k->row_ptr[i + 1] += k->row_ptr[i];
  k->col = (CNCuint*)malloc(sizeof(CNCuint) * (size_t)k->row_ptr[n]);
  k->val = (double*)malloc(sizeof(double) * (size_t)k->row_ptr[n]);
  CNCint64* fill = (CNCint64*)malloc(sizeof(CNCint64) * n);
  memcpy(fill, k->row_ptr, sizeof(CNCint64) * n);
  mass->row_ptr = (CNCint64*)malloc(sizeof(CNCint64) * (n + 1));
  mass->col = (CNCuint*)malloc(sizeof(CNCuint) * n);
  mass->val = (double*)calloc(n, sizeof(double));
  for (size_t i = 0; i <= n; ++i) mass->row_ptr[i] = (CNCint64)i;
  for (size_t i = 0; i < n; ++i) mass->col[i] = (CNCuint)i;
  *area = 0;
  for (int t = 0; t < m->nf; ++t) {
    const int* v = m->f + 3 * t;
    double w[3]; /* w[c]: half the cotangent of the angle at corner c, for the opposite edge */
    for (int c = 0; c < 3; ++c) {
      double e1[3], e2[3];
      sub3(m->v + 3 * v[(c + 1) % 3], m->v + 3 * v[c], e1);
      sub3(m->v + 3 * v[(c + 2) % 3], m->v + 3 * v[c], e2);
      const double s = cross_norm(e1, e2);
      w[c] = s > 0 ? 0.5 * dot3(e1, e2) / s : 0.0;
    }
    double e1[3], e2[3];
    sub3(m->v + 3 * v[1], m->v + 3 * v[0], e1);
    sub3(m->v + 3 * v[2], m->v + 3 * v[0], e2);
    const double a = 0.5 * cross_norm(e1, e2);
    *area += a;
    for (int c = 0; c < 3; ++c) {
      const int i = v[(c + 1) % 3], j = v[(c + 2) % 3]; /* the edge opposite corner c */
      const int rows[3] = {i, j, v[c]};
      const int cols[3] = {j, i, v[c]};
      const double vals[3] = {-w[c], -w[c], w[(c + 1) % 3] + w[(c + 2) % 3]};
      for (int r = 0; r < 3; ++r) {
        const CNCint64 at = fill[rows[r]]++;
        k->col[at] = (CNCuint)cols[r];
        k->val[at] = vals[r];
      }
      mass->val[v[c]] += a / 3.0;
    }
  }
  free(fill);
}

static int cmp_edge(const void* x, const void* y) {
  const int64_t a = *(const int64_t*)x, b = *(const int64_t*)y;
  return (a > b) - (a < b);
}

static void csr_free(csr* a) { free(a->row_ptr), free(a->col), free(a->val); }

static void spmv(const csr* a, size_t n, const double* x, double* y) {
  for (size_t i = 0; i < n; ++i) {
    double s = 0;
    for (CNCint64 t = a->row_ptr[i]; t < a->row_ptr[i + 1]; ++t) s += a->val[t] * x[a->col[t]];
    y[i] = s;
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s mesh.{obj,off} [nev] [out.png] [subdivisions]\n", argv[0]);
    return 2;
  }
  const int nev = argc > 2 ? atoi(argv[2]) : 20;
  const char* out_png = argc > 3 ? argv[3] : "harmonics.png";
  const int levels = argc > 4 ? atoi(argv[4]) : 0;
  FILE* probe = fopen(argv[1], "r");
  if (!probe) {
    printf("skipped: mesh %s not found (shared data absent)\n", argv[1]);
    return 77;
  }
  fclose(probe);
  if (!cncEigenSolverAvailable()) {
    printf("skipped: %s\n", cncGetLastErrorMessage());
    return 77;
  }
  mesh m;
  char err[256];
  if (mesh_read(argv[1], &m, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  for (int l = 0; l < levels; ++l)
    if (subdivide(&m) != 0) {
      fprintf(stderr, "out of memory\n");
      return 1;
    }
  const size_t n = (size_t)m.nv;
  if (nev < 1 || (size_t)nev >= n) {
    fprintf(stderr, "nev must be in [1, %zu]\n", n - 1);
    return 2;
  }
  csr k, mass;
  double area = 0;
  build(&m, &k, &mass, &area);
  /* Area 1: K does not change with the scale of the mesh, M scales with the area. */
  for (size_t i = 0; i < n; ++i) mass.val[i] /= area;
  /* Closed: no boundary edge (an edge used by one triangle only), counted by sorting the edges. */
  int closed = 0;
  {
    int64_t boundary = 0;
    int64_t* e = (int64_t*)malloc(sizeof(int64_t) * 3 * (size_t)m.nf);
    for (int t = 0; t < m.nf; ++t)
      for (int c = 0; c < 3; ++c) {
        const int64_t a = m.f[3 * t + c], b = m.f[3 * t + (c + 1) % 3];
        e[3 * t + c] = (a < b ? a : b) * (int64_t)n + (a < b ? b : a);
      }
    qsort(e, 3 * (size_t)m.nf, sizeof(int64_t), cmp_edge);
    for (size_t i = 0; i < 3 * (size_t)m.nf;) {
      size_t j = i;
      while (j < 3 * (size_t)m.nf && e[j] == e[i]) ++j;
      boundary += j - i == 1;
      i = j;
    }
    free(e);
    closed = boundary == 0;
  }

  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  const double sigma = -1e-3; /* just below the spectrum (>= 0): K - sigma M is SPD */
  double* w = (double*)malloc(sizeof(double) * (size_t)nev);
  double* v = (double*)malloc(sizeof(double) * n * (size_t)nev);
  if (cncEigenSolveCSR((CNCuint)n, k.row_ptr, k.col, k.val, mass.row_ptr, mass.col, mass.val, 0,
                       (CNCuint)nev, CNC_EIGEN_NEAREST, sigma, w, v) != CNC_OK) {
    fprintf(stderr, "cnc: %s\n", cncGetErrorMessage());
    return 1;
  }
  CNCint reason = 0, restarts = 0;
  double elapsed = 0, solve = 0;
  const char* how = "";
  cncGetIntegerv(CNC_REASON, &reason);
  cncGetIntegerv(CNC_USED_ITERATIONS, &restarts);
  cncGetDoublev(CNC_ELAPSED_TIME, &elapsed);
  cncGetDoublev(CNC_SOLVE_TIME, &solve);
  cncGetString(CNC_CHOICE_REASON, &how);
  printf("harmonics: %s, %zu vertices, %d triangles (%d subdivisions), %s mesh, %d eigenpairs\n",
         argv[1], n, m.nf, levels, closed ? "closed" : "open", nev);
  printf("cncEigenSolveCSR: %.3f s (%s)\n", elapsed, how);
  if (reason != CNC_REASON_CONVERGED) {
    printf("check: FAILED (ARPACK did not converge)\n");
    return 1;
  }

  /* The checks, with the test's own products. */
  double worst = 0, ortho = 0;
  int ascending = 1;
  double* kv = (double*)malloc(sizeof(double) * n);
  for (int e = 0; e < nev; ++e) {
    const double* ve = v + (size_t)e * n;
    spmv(&k, n, ve, kv);
    double r2 = 0;
    for (size_t i = 0; i < n; ++i)
      r2 += (kv[i] - w[e] * mass.val[i] * ve[i]) * (kv[i] - w[e] * mass.val[i] * ve[i]);
    worst = fmax(worst, sqrt(r2));
    for (int f = 0; f <= e; ++f) {
      double d = 0;
      for (size_t i = 0; i < n; ++i) d += v[(size_t)f * n + i] * mass.val[i] * ve[i];
      ortho = fmax(ortho, fabs(d - (e == f)));
    }
    if (e > 0 && w[e] < w[e - 1]) ascending = 0;
  }
  free(kv);
  double spread = 0; /* eigenvector 0 of a closed mesh: constant, 1 (M-normalized, area 1) */
  for (size_t i = 0; i < n; ++i) spread = fmax(spread, fabs(v[i] - 1.0));
  printf("eigenvalues:");
  for (int e = 0; e < nev; ++e) printf(" %.6g", w[e]);
  printf("\nlargest residual |K v - lambda M v| = %.3g, |V'MV - I| = %.3g", worst, ortho);
  if (closed) printf(", lambda_0 = %.3g, |v_0 - 1| = %.3g", w[0], spread);
  printf("\n");

  /* The picture: eigenvectors 1, 2, 3 and nev - 1, each on its own symmetric colour range. */
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c)
      lo[c] = fmin(lo[c], m.v[3 * i + c]), hi[c] = fmax(hi[c], m.v[3 * i + c]);
  const int size = 400;
  const int shown[4] = {nev > 1 ? 1 : 0, nev > 2 ? 2 : 0, nev > 3 ? 3 : 0, nev - 1};
  image* im = image_new(4 * size, size, 255, 255, 255);
  const double scale = 0.9 * size / fmax(hi[0] - lo[0], hi[1] - lo[1]);
  for (int p = 0; p < 4; ++p) {
    const double* ve = v + (size_t)shown[p] * n;
    double big = 0;
    for (size_t i = 0; i < n; ++i) big = fmax(big, fabs(ve[i]));
    render_mesh(im, p * size, size, &m, m.v, lo, scale, ve, -big, big);
  }
  const int written = image_write_png(im, out_png) == 0;
  image_free(im);
  if (!written) {
    fprintf(stderr, "cannot write %s\n", out_png);
    return 1;
  }
  printf("wrote %s (eigenvectors %d, %d, %d, %d)\n", out_png, shown[0], shown[1], shown[2],
         shown[3]);

  const int ok = worst <= 1e-8 && ortho <= 1e-8 && ascending &&
                 (!closed || (fabs(w[0]) <= 1e-8 && spread <= 1e-6));
  printf("check: %s\n", ok ? "ok" : "FAILED (residual, orthonormality, order or lambda_0)");
  free(w), free(v);
  csr_free(&k), csr_free(&mass);
  mesh_free(&m);
  cncDeleteContext(ctx);
  return ok ? 0 : 1;
}
