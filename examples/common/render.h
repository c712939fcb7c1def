/* Flat-shaded orthographic rendering of a triangle mesh into an image panel (looking down -z),
 * optionally coloured by a scalar field on the vertices: what the mesh demos draw. */
#ifndef CNC_EXAMPLES_RENDER_H
#define CNC_EXAMPLES_RENDER_H

#include "image.h"
#include "mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Draws m with positions p (3 * nv) into the size x size panel whose left column is x0: x and y
 * from lo (3 values) scaled by `scale` pixels a unit. field (nv values, may be NULL: grey) is
 * mapped from [field_lo, field_hi] through image_colormap, averaged over each triangle. */
void render_mesh(image* im, int x0, int size, const mesh* m, const double* p, const double* lo,
                 double scale, const double* field, double field_lo, double field_hi);

#ifdef __cplusplus
}
#endif
#endif
