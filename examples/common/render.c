#include "render.h"

#include <math.h>

void render_mesh(image* im, int x0, int size, const mesh* m, const double* p, const double* lo,
                 double scale, const double* field, double field_lo, double field_hi) {
  const double light[3] = {0.3, 0.4, 0.866};
  for (int f = 0; f < m->nf; ++f) {
    const int* v = m->f + 3 * f;
    double q[3][3];
    for (int k = 0; k < 3; ++k) {
      q[k][0] = x0 + 0.05 * size + (p[3 * v[k]] - lo[0]) * scale;
      q[k][1] = 0.95 * size - (p[3 * v[k] + 1] - lo[1]) * scale;
      q[k][2] = p[3 * v[k] + 2];
    }
    const double *a = p + 3 * v[0], *b = p + 3 * v[1], *c = p + 3 * v[2];
    const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                         e1[0] * e2[1] - e1[1] * e2[0]};
    const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    const double s = len > 0 ? fabs(n[0] * light[0] + n[1] * light[1] + n[2] * light[2]) / len : 0;
    unsigned char rgb[3] = {(unsigned char)(40 + 200 * s), (unsigned char)(45 + 190 * s),
                            (unsigned char)(55 + 170 * s)};
    if (field) {
      const double mean = (field[v[0]] + field[v[1]] + field[v[2]]) / 3.0;
      const double t = field_hi > field_lo ? (mean - field_lo) / (field_hi - field_lo) : 0.5;
      unsigned char hue[3];
      image_colormap(t < 0 ? 0 : t > 1 ? 1 : t, hue);
      for (int k = 0; k < 3; ++k) rgb[k] = (unsigned char)(hue[k] * (0.35 + 0.65 * s));
    }
    image_triangle(im, q[0], q[1], q[2], rgb);
  }
}
