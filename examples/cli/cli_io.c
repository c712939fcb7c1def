/* cnc-solve's helpers that do not call cnc (see cli_io.h). */
#include "cli_io.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

/* ---- Symmetry ---------------------------------------------------------------------------- */

/* Stable counting sort of the entries `in` (or 0..nnz-1 when in is NULL) by key[] into out. */
static void bucket(int64_t n, int64_t nnz, const int32_t* key, const int64_t* in, int64_t* ptr,
                   int64_t* out) {
  memset(ptr, 0, sizeof(int64_t) * (size_t)(n + 1));
  for (int64_t t = 0; t < nnz; ++t) ++ptr[key[t] + 1];
  for (int64_t i = 0; i < n; ++i) ptr[i + 1] += ptr[i];
  for (int64_t s = 0; s < nnz; ++s) {
    const int64_t t = in ? in[s] : s;
    out[ptr[key[t]]++] = t;
  }
  for (int64_t i = n; i > 0; --i) ptr[i] = ptr[i - 1]; /* back to row starts */
  ptr[0] = 0;
}

static int differ(double a, double b) { return fabs(a - b) > 1e-12 * fmax(fabs(a), fabs(b)); }

int cli_check_symmetry(int64_t n, int64_t nnz, const int32_t* row, const int32_t* col,
                       const double* val, cli_symmetry* out) {
  int64_t* ptr = malloc(sizeof(int64_t) * (size_t)(n + 1));
  int64_t* tptr = malloc(sizeof(int64_t) * (size_t)(n + 1));
  int64_t* by_col = malloc(sizeof(int64_t) * (size_t)(nnz ? nnz : 1));
  int64_t* order = malloc(sizeof(int64_t) * (size_t)(nnz ? nnz : 1));
  int32_t* c = malloc(sizeof(int32_t) * (size_t)(nnz ? nnz : 1));
  double* v = malloc(sizeof(double) * (size_t)(nnz ? nnz : 1));
  int32_t* tc = malloc(sizeof(int32_t) * (size_t)(nnz ? nnz : 1));
  double* tv = malloc(sizeof(double) * (size_t)(nnz ? nnz : 1));
  int status = -1;
  if (!ptr || !tptr || !by_col || !order || !c || !v || !tc || !tv) goto done;
  /* Rows in order, columns in order within each row: by column, then stably by row. */
  bucket(n, nnz, col, NULL, ptr, by_col);
  bucket(n, nnz, row, by_col, ptr, order);
  /* Duplicates summed, in place: row i is c/v[ptr[i] .. ptr[i+1]) after the compaction. */
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = ptr[i], end = ptr[i + 1];
    ptr[i] = m;
    for (int64_t s = start; s < end; ++s) {
      const int64_t t = order[s];
      if (m > ptr[i] && c[m - 1] == col[t])
        v[m - 1] += val[t];
      else
        c[m] = col[t], v[m++] = val[t];
    }
  }
  ptr[n] = m;
  /* The transpose, its rows in column order since the rows are walked in order. */
  memset(tptr, 0, sizeof(int64_t) * (size_t)(n + 1));
  for (int64_t s = 0; s < m; ++s) ++tptr[c[s] + 1];
  for (int64_t i = 0; i < n; ++i) tptr[i + 1] += tptr[i];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t s = ptr[i]; s < ptr[i + 1]; ++s) {
      const int64_t d = tptr[c[s]]++;
      tc[d] = (int32_t)i, tv[d] = v[s];
    }
  for (int64_t i = n; i > 0; --i) tptr[i] = tptr[i - 1];
  tptr[0] = 0;
  out->symmetric = 1;
  out->positive_diagonal = 1;
  out->why[0] = '\0';
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = ptr[i], b = tptr[i];
    int diagonal = 0;
    while (a < ptr[i + 1] || b < tptr[i + 1]) {
      const int32_t ja = a < ptr[i + 1] ? c[a] : INT32_MAX,
                    jb = b < tptr[i + 1] ? tc[b] : INT32_MAX;
      const int32_t j = ja < jb ? ja : jb;
      const double x = ja == j ? v[a++] : 0.0, y = jb == j ? tv[b++] : 0.0;
      if (j == i) {
        diagonal = 1;
        if (!(x > 0.0) && out->positive_diagonal) {
          out->positive_diagonal = 0;
          if (out->symmetric)
            snprintf(out->why, sizeof out->why, "a(%lld,%lld) = %g is not positive",
                     (long long)i + 1, (long long)i + 1, x);
        }
      } else if (out->symmetric && differ(x, y)) {
        out->symmetric = 0;
        snprintf(out->why, sizeof out->why, "a(%lld,%d) = %g but a(%d,%lld) = %g", (long long)i + 1,
                 j + 1, x, j + 1, (long long)i + 1, y);
      }
    }
    if (!diagonal && out->positive_diagonal) {
      out->positive_diagonal = 0;
      if (out->symmetric)
        snprintf(out->why, sizeof out->why, "a(%lld,%lld) is absent (zero)", (long long)i + 1,
                 (long long)i + 1);
    }
  }
  status = 0;
done:
  free(ptr), free(tptr), free(by_col), free(order), free(c), free(v), free(tc), free(tv);
  return status;
}

/* ---- History ----------------------------------------------------------------------------- */

int cli_history_add(cli_history* h, int64_t iteration, double residual, double seconds) {
  if (h->count == h->capacity) {
    const size_t cap = h->capacity ? 2 * h->capacity : 1024;
    int64_t* it = realloc(h->iteration, sizeof(int64_t) * cap);
    if (!it) return -1;
    h->iteration = it;
    double* r = realloc(h->residual, sizeof(double) * cap);
    if (!r) return -1;
    h->residual = r;
    double* s = realloc(h->seconds, sizeof(double) * cap);
    if (!s) return -1;
    h->seconds = s;
    h->capacity = cap;
  }
  h->iteration[h->count] = iteration;
  h->residual[h->count] = residual;
  h->seconds[h->count++] = seconds;
  return 0;
}

void cli_history_clear(cli_history* h) { h->count = 0; }

void cli_history_free(cli_history* h) {
  free(h->iteration), free(h->residual), free(h->seconds);
  memset(h, 0, sizeof *h);
}

void cli_history_write_csv(const cli_history* h, FILE* out) {
  fprintf(out, "iteration,relative_residual,seconds\n");
  for (size_t s = 0; s < h->count; ++s)
    fprintf(out, "%lld,%.17g,%.9f\n", (long long)h->iteration[s], h->residual[s], h->seconds[s]);
}

#ifdef CNC_HAVE_PNG
/* A 3x5 pixel font for the axis labels: digits, 'e', '-', '.'; each row 3 bits, left first. */
static const char font_chars[] = "0123456789e-.";
static const unsigned char font_rows[][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
    {2, 5, 7, 4, 3}, {0, 0, 7, 0, 0}, {0, 0, 0, 0, 2}};

/* Draws text with its top-left corner at (x, y), 2 pixels per font pixel; returns its width. */
static int draw_text(image* im, int x, int y, const char* text, const unsigned char rgb[3]) {
  int w = 0;
  for (const char* p = text; *p; ++p, w += 8) {
    const char* f = strchr(font_chars, *p);
    if (!f) continue;
    const unsigned char* rows = font_rows[f - font_chars];
    for (int r = 0; r < 5; ++r)
      for (int b = 0; b < 3; ++b)
        if (rows[r] & (4 >> b))
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) image_set(im, x + w + 2 * b + dx, y + 2 * r + dy, rgb);
  }
  return w;
}
#endif

int cli_history_plot(const cli_history* h, double threshold, const char* path, char* err,
                     size_t errlen) {
#ifndef CNC_HAVE_PNG
  (void)h, (void)threshold;
  snprintf(err, errlen, "%s: cnc-solve was built without libpng: no PNG plot", path);
  return -1;
#else
  enum { W = 720, H = 450, L = 70, R = 20, T = 20, B = 40 };
  static const unsigned char black[3] = {0, 0, 0}, grid[3] = {220, 220, 220},
                             blue[3] = {31, 119, 180}, red[3] = {214, 39, 40};
  image* im = image_new(W, H, 255, 255, 255);
  if (!im) {
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
  }
  /* y: whole decades around the residuals and the threshold; x: 0 .. last iteration. */
  double lo = log10(threshold), hi = lo;
  int64_t last = 1;
  for (size_t s = 0; s < h->count; ++s) {
    if (h->residual[s] > 0 && isfinite(h->residual[s])) {
      lo = fmin(lo, log10(h->residual[s]));
      hi = fmax(hi, log10(h->residual[s]));
    }
    if (h->iteration[s] > last) last = h->iteration[s];
  }
  lo = floor(lo - 0.2), hi = ceil(hi + 0.05); /* the threshold above the x axis */
  if (hi <= lo) hi = lo + 1;
  if (lo < -300) lo = -300;
  const double pw = W - L - R, ph = H - T - B;
#define PX(it) (L + pw * (double)(it) / (double)last)
#define PY(lg) (T + ph * (hi - (lg)) / (hi - lo))
  const int decades = (int)(hi - lo), every = decades > 12 ? (decades + 11) / 12 : 1;
  char label[32];
  for (int d = 0; d <= decades; ++d) {
    const double y = PY(lo + d);
    image_line(im, L, y, W - R, y, grid);
    if (d % every) continue;
    snprintf(label, sizeof label, "1e%d", (int)(lo + d));
    draw_text(im, L - 8 - 8 * (int)strlen(label), (int)y - 5, label, black);
  }
  /* Iteration ticks at a round step, about 6 of them. */
  double step = pow(10.0, floor(log10((double)last / 6.0)));
  if (step < 1) step = 1;
  while ((double)last / step > 8) step *= (double)last / step > 20 ? 5 : 2;
  for (double it = 0; it <= (double)last; it += step) {
    const double x = PX(it);
    image_line(im, x, T, x, H - B, grid);
    snprintf(label, sizeof label, "%.0f", it);
    draw_text(im, (int)x - 4 * (int)strlen(label), H - B + 8, label, black);
  }
  image_line(im, L, T, L, H - B, black);
  image_line(im, L, H - B, W - R, H - B, black);
  for (double x = L; x < W - R; x += 12) /* the threshold, dashed */
    image_line(im, x, PY(log10(threshold)), fmin(x + 6, W - R), PY(log10(threshold)), red);
  for (size_t s = 1; s < h->count; ++s) {
    const double a = h->residual[s - 1], b = h->residual[s];
    if (!(a > 0 && b > 0 && isfinite(a) && isfinite(b))) continue;
    const double ya = PY(fmax(log10(a), lo)), yb = PY(fmax(log10(b), lo));
    for (int w = -1; w <= 1; ++w) /* 3 pixels thick */
      image_line(im, PX(h->iteration[s - 1]), ya + w, PX(h->iteration[s]), yb + w, blue);
  }
  if (h->count == 1 && h->residual[0] > 0)
    image_line(im, L, PY(log10(h->residual[0])), L + 4, PY(log10(h->residual[0])), blue);
#undef PX
#undef PY
  errno = 0;
  const int status = image_write_png(im, path);
  image_free(im);
  if (status)
    snprintf(err, errlen, "%s: cannot write the PNG: %s", path,
             errno ? strerror(errno) : "libpng failed");
  return status;
#endif
}

/* ---- JSON -------------------------------------------------------------------------------- */

void cli_json_string(FILE* out, const char* s) {
  fputc('"', out);
  for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; ++p) {
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", out);
    else if (*p == '\t')
      fputs("\\t", out);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else
      fputc(*p, out);
  }
  fputc('"', out);
}

void cli_json_number(FILE* out, double v) {
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}

/* ---- Numeric options --------------------------------------------------------------------- */

int cli_parse_int64(const char* option, const char* text, int64_t min, int64_t max, int64_t* out) {
  char* end = NULL;
  errno = 0;
  const long long v = strtoll(text, &end, 10);
  if (end == text || *end != '\0') {
    fprintf(stderr, "cnc-solve: %s '%s': not an integer\n", option, text);
    return -1;
  }
  if (errno == ERANGE || v < min || v > max) {
    fprintf(stderr, "cnc-solve: %s '%s': out of range %lld..%lld\n", option, text, (long long)min,
            (long long)max);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_double(const char* option, const char* text, double min, double max, int open,
                     double* out) {
  char* end = NULL;
  errno = 0;
  const double v = strtod(text, &end);
  if (end == text || *end != '\0') {
    fprintf(stderr, "cnc-solve: %s '%s': not a number\n", option, text);
    return -1;
  }
  const int inside = open ? (v > min && v < max) : (v >= min && v <= max);
  if (!isfinite(v) || !inside || (errno == ERANGE && v != 0.0)) {
    fprintf(stderr, "cnc-solve: %s '%s': must be a finite number in %c%g, %g%c\n", option, text,
            open ? '(' : '[', min, max, open ? ')' : ']');
    return -1;
  }
  *out = v;
  return 0;
}
