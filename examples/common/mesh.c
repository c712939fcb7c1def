/* OBJ / OFF reading and OBJ writing for the examples (see mesh.h). */
#include "mesh.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  void* data;
  int size, cap, elem;
} growable;

static int grow_push(growable* g, const void* item) {
  if (g->size == g->cap) {
    int cap = g->cap ? 2 * g->cap : 1024;
    void* p = realloc(g->data, (size_t)cap * (size_t)g->elem);
    if (!p) return -1;
    g->data = p;
    g->cap = cap;
  }
  memcpy((char*)g->data + (size_t)g->size * (size_t)g->elem, item, (size_t)g->elem);
  g->size++;
  return 0;
}

/* Appends polygon `idx[0..k)` as a fan of triangles. */
static int push_polygon(growable* faces, const int* idx, int k) {
  for (int j = 1; j + 1 < k; ++j) {
    int t[3] = {idx[0], idx[j], idx[j + 1]};
    if (grow_push(faces, t)) return -1;
  }
  return 0;
}

static int read_obj(FILE* in, growable* verts, growable* faces, char* err, int errlen) {
  char line[4096];
  int idx[256];
  while (fgets(line, sizeof line, in)) {
    if (line[0] == 'v' && line[1] == ' ') {
      double p[3];
      if (sscanf(line + 2, "%lf %lf %lf", &p[0], &p[1], &p[2]) != 3) {
        snprintf(err, (size_t)errlen, "bad vertex line: %s", line);
        return -1;
      }
      if (grow_push(verts, p)) return -1;
    } else if (line[0] == 'f' && line[1] == ' ') {
      int k = 0;
      char* s = line + 2;
      while (*s && k < 256) {
        while (*s && isspace((unsigned char)*s)) ++s;
        if (!*s) break;
        long i = strtol(s, &s, 10); /* "a", "a/b", "a//c", "a/b/c": the first number */
        while (*s && !isspace((unsigned char)*s)) ++s;
        idx[k++] = (int)(i > 0 ? i - 1 : verts->size + i); /* negative: relative */
      }
      if (k >= 3 && push_polygon(faces, idx, k)) return -1;
    }
  }
  return 0;
}

/* Next non-empty, non-comment line. */
static char* off_line(FILE* in, char* line, int len) {
  while (fgets(line, len, in)) {
    char* s = line;
    while (*s && isspace((unsigned char)*s)) ++s;
    if (*s && *s != '#') return s;
  }
  return NULL;
}

static int read_off(FILE* in, growable* verts, growable* faces, char* err, int errlen) {
  char line[4096];
  char* s = off_line(in, line, sizeof line);
  if (!s || strncmp(s, "OFF", 3) != 0) {
    snprintf(err, (size_t)errlen, "not an OFF file");
    return -1;
  }
  s += 3;
  int nv, nf;
  if (sscanf(s, "%d %d", &nv, &nf) != 2) {
    s = off_line(in, line, sizeof line);
    if (!s || sscanf(s, "%d %d", &nv, &nf) != 2) {
      snprintf(err, (size_t)errlen, "OFF: missing counts");
      return -1;
    }
  }
  for (int i = 0; i < nv; ++i) {
    double p[3];
    s = off_line(in, line, sizeof line);
    if (!s || sscanf(s, "%lf %lf %lf", &p[0], &p[1], &p[2]) != 3 || grow_push(verts, p)) {
      snprintf(err, (size_t)errlen, "OFF: bad vertex %d", i);
      return -1;
    }
  }
  int idx[256];
  for (int i = 0; i < nf; ++i) {
    s = off_line(in, line, sizeof line);
    int k = 0, used = 0;
    if (!s || sscanf(s, "%d%n", &k, &used) != 1 || k < 3 || k > 256) {
      snprintf(err, (size_t)errlen, "OFF: bad face %d", i);
      return -1;
    }
    s += used;
    for (int j = 0; j < k; ++j) {
      if (sscanf(s, "%d%n", &idx[j], &used) != 1) {
        snprintf(err, (size_t)errlen, "OFF: bad face %d", i);
        return -1;
      }
      s += used;
    }
    if (push_polygon(faces, idx, k)) return -1;
  }
  return 0;
}

int mesh_read(const char* path, mesh* m, char* err, int errlen) {
  memset(m, 0, sizeof *m);
  FILE* in = fopen(path, "r");
  if (!in) {
    snprintf(err, (size_t)errlen, "cannot open %s", path);
    return -1;
  }
  growable verts = {NULL, 0, 0, 3 * sizeof(double)}, faces = {NULL, 0, 0, 3 * sizeof(int)};
  const char* dot = strrchr(path, '.');
  int off = dot && (strcmp(dot, ".off") == 0 || strcmp(dot, ".OFF") == 0);
  int rc =
      off ? read_off(in, &verts, &faces, err, errlen) : read_obj(in, &verts, &faces, err, errlen);
  fclose(in);
  const int* f = (const int*)faces.data;
  for (int i = 0; rc == 0 && i < 3 * faces.size; ++i) {
    if (f[i] < 0 || f[i] >= verts.size) {
      snprintf(err, (size_t)errlen, "face index %d out of range", f[i]);
      rc = -1;
    }
  }
  if (rc == 0 && (verts.size == 0 || faces.size == 0)) {
    snprintf(err, (size_t)errlen, "%s: no triangles", path);
    rc = -1;
  }
  if (rc != 0) {
    free(verts.data);
    free(faces.data);
    return -1;
  }
  m->nv = verts.size;
  m->nf = faces.size;
  m->v = (double*)verts.data;
  m->f = (int*)faces.data;
  return 0;
}

int mesh_write_obj(const char* path, const mesh* m, const double* uv) {
  FILE* out = fopen(path, "w");
  if (!out) return -1;
  for (int i = 0; i < m->nv; ++i)
    fprintf(out, "v %.9g %.9g %.9g\n", m->v[3 * i], m->v[3 * i + 1], m->v[3 * i + 2]);
  if (uv)
    for (int i = 0; i < m->nv; ++i) fprintf(out, "vt %.9g %.9g\n", uv[2 * i], uv[2 * i + 1]);
  for (int t = 0; t < m->nf; ++t) {
    const int* f = m->f + 3 * t;
    if (uv)
      fprintf(out, "f %d/%d %d/%d %d/%d\n", f[0] + 1, f[0] + 1, f[1] + 1, f[1] + 1, f[2] + 1,
              f[2] + 1);
    else
      fprintf(out, "f %d %d %d\n", f[0] + 1, f[1] + 1, f[2] + 1);
  }
  return fclose(out) == 0 ? 0 : -1;
}

void mesh_free(mesh* m) {
  free(m->v);
  free(m->f);
  m->v = NULL;
  m->f = NULL;
  m->nv = m->nf = 0;
}
