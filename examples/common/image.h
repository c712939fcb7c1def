/* A small RGB canvas for the examples: lines, z-buffered flat triangles, a colour map, and PNG
 * output (libpng; without it, binary PPM next to the requested name). Pixel (0,0) is top-left. */
#ifndef CNC_EXAMPLES_IMAGE_H
#define CNC_EXAMPLES_IMAGE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int w, h;
  unsigned char* rgb; /* 3 * w * h */
  float* depth;       /* w * h, larger is nearer; -inf where nothing was drawn */
} image;

/* Returns NULL if out of memory. */
image* image_new(int w, int h, unsigned char r, unsigned char g, unsigned char b);
void image_free(image* im);
void image_set(image* im, int x, int y, const unsigned char rgb[3]);
/* Line from (x0, y0) to (x1, y1) in pixel coordinates, drawn over everything. */
void image_line(image* im, double x0, double y0, double x1, double y1, const unsigned char rgb[3]);
/* Triangle with vertices (x, y, depth) in pixel coordinates; keeps the nearest. */
void image_triangle(image* im, const double p0[3], const double p1[3], const double p2[3],
                    const unsigned char rgb[3]);
/* Maps t in [0, 1] to a blue-white-red colour. */
void image_colormap(double t, unsigned char rgb[3]);
/* Writes a PNG (or, built without libpng, a PPM with ".ppm" appended). Returns 0 or -1. */
int image_write_png(const image* im, const char* path);

#ifdef __cplusplus
}
#endif
#endif
