/* Triangle meshes for the examples: read OBJ or OFF (polygons are split into fans), write OBJ
 * with optional texture coordinates. Only what the demos need: positions and faces. */
#ifndef CNC_EXAMPLES_MESH_H
#define CNC_EXAMPLES_MESH_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int nv, nf;
  double* v; /* 3 * nv coordinates */
  int* f;    /* 3 * nf 0-based vertex indices */
} mesh;

/* Reads `path` (.obj or .off, by extension). Returns 0, or -1 with a message in err. */
int mesh_read(const char* path, mesh* m, char* err, int errlen);
/* Writes an OBJ; with uv (2 * nv values) also `vt` lines and v/vt faces. Returns 0 or -1. */
int mesh_write_obj(const char* path, const mesh* m, const double* uv);
void mesh_free(mesh* m);

#ifdef __cplusplus
}
#endif
#endif
