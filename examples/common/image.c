/* RGB canvas and PNG writer for the examples (see image.h). */
#include "image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CNC_HAVE_PNG
#include <png.h>
#endif

image* image_new(int w, int h, unsigned char r, unsigned char g, unsigned char b) {
  image* im = (image*)calloc(1, sizeof *im);
  if (!im) return NULL;
  im->w = w;
  im->h = h;
  im->rgb = (unsigned char*)malloc((size_t)w * (size_t)h * 3);
  im->depth = (float*)malloc((size_t)w * (size_t)h * sizeof(float));
  if (!im->rgb || !im->depth) {
    image_free(im);
    return NULL;
  }
  for (size_t i = 0; i < (size_t)w * (size_t)h; ++i) {
    im->rgb[3 * i] = r;
    im->rgb[3 * i + 1] = g;
    im->rgb[3 * i + 2] = b;
    im->depth[i] = -INFINITY;
  }
  return im;
}

void image_free(image* im) {
  if (!im) return;
  free(im->rgb);
  free(im->depth);
  free(im);
}

void image_set(image* im, int x, int y, const unsigned char rgb[3]) {
  if (x < 0 || y < 0 || x >= im->w || y >= im->h) return;
  memcpy(im->rgb + 3 * ((size_t)y * (size_t)im->w + (size_t)x), rgb, 3);
}

void image_line(image* im, double x0, double y0, double x1, double y1, const unsigned char rgb[3]) {
  const double len = fmax(fabs(x1 - x0), fabs(y1 - y0));
  const int steps = (int)ceil(len) + 1;
  if (!(len < 1e6)) return; /* NaN or absurd: nothing to draw */
  for (int s = 0; s <= steps; ++s) {
    const double t = (double)s / steps;
    image_set(im, (int)floor(x0 + t * (x1 - x0) + 0.5), (int)floor(y0 + t * (y1 - y0) + 0.5), rgb);
  }
}

void image_triangle(image* im, const double p0[3], const double p1[3], const double p2[3],
                    const unsigned char rgb[3]) {
  const double area = (p1[0] - p0[0]) * (p2[1] - p0[1]) - (p2[0] - p0[0]) * (p1[1] - p0[1]);
  if (!(fabs(area) > 1e-12)) return;
  const int xmin = (int)fmax(0, floor(fmin(p0[0], fmin(p1[0], p2[0]))));
  const int xmax = (int)fmin(im->w - 1, ceil(fmax(p0[0], fmax(p1[0], p2[0]))));
  const int ymin = (int)fmax(0, floor(fmin(p0[1], fmin(p1[1], p2[1]))));
  const int ymax = (int)fmin(im->h - 1, ceil(fmax(p0[1], fmax(p1[1], p2[1]))));
  for (int y = ymin; y <= ymax; ++y) {
    for (int x = xmin; x <= xmax; ++x) {
      const double px = x + 0.5, py = y + 0.5;
      /* Barycentric coordinates from signed sub-areas. */
      const double b0 = ((p1[0] - px) * (p2[1] - py) - (p2[0] - px) * (p1[1] - py)) / area;
      const double b1 = ((p2[0] - px) * (p0[1] - py) - (p0[0] - px) * (p2[1] - py)) / area;
      const double b2 = 1.0 - b0 - b1;
      if (b0 < 0 || b1 < 0 || b2 < 0) continue;
      const float z = (float)(b0 * p0[2] + b1 * p1[2] + b2 * p2[2]);
      const size_t i = (size_t)y * (size_t)im->w + (size_t)x;
      if (z <= im->depth[i]) continue;
      im->depth[i] = z;
      memcpy(im->rgb + 3 * i, rgb, 3);
    }
  }
}

void image_colormap(double t, unsigned char rgb[3]) {
  t = t < 0 ? 0 : (t > 1 ? 1 : t);
  double r, g, b;
  if (t < 0.5) { /* blue -> white */
    const double s = 2 * t;
    r = 0.23 + 0.77 * s;
    g = 0.30 + 0.70 * s;
    b = 0.75 + 0.25 * s;
  } else { /* white -> red */
    const double s = 2 * (t - 0.5);
    r = 1.0 - 0.30 * s;
    g = 1.0 - 0.98 * s;
    b = 1.0 - 0.85 * s;
  }
  rgb[0] = (unsigned char)(255 * r);
  rgb[1] = (unsigned char)(255 * g);
  rgb[2] = (unsigned char)(255 * b);
}

int image_write_png(const image* im, const char* path) {
#ifdef CNC_HAVE_PNG
  FILE* out = fopen(path, "wb");
  if (!out) return -1;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fclose(out);
    return -1;
  }
  png_init_io(png, out);
  png_set_IHDR(png, info, (png_uint_32)im->w, (png_uint_32)im->h, 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < im->h; ++y) png_write_row(png, im->rgb + 3 * (size_t)y * (size_t)im->w);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  return fclose(out) == 0 ? 0 : -1;
#else
  char name[4096];
  snprintf(name, sizeof name, "%s.ppm", path);
  FILE* out = fopen(name, "wb");
  if (!out) return -1;
  fprintf(out, "P6\n%d %d\n255\n", im->w, im->h);
  fwrite(im->rgb, 3, (size_t)im->w * (size_t)im->h, out);
  return fclose(out) == 0 ? 0 : -1;
#endif
}
