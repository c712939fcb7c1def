// The vector surface of device_system (src/backends/backend.hpp, "The vector surface"): the
// vector operations of BiCGSTAB and GMRES, on vectors of NRHS interleaved columns (entry i of
// column j at i*NRHS + j) over n = n_padded rows. SpMV and the residual's product are
// spmv_fused (spmv.cl) in MODE_DOT, which writes only the running columns of `st`.
//
// The mask: `st` is an rhs_state array whose statuses say which columns are active
// (CNC_ST_RUNNING); every kernel here leaves the other columns as they are (no read of them either,
// so NaN there does not matter) and the dot products give 0 for them.
//
// Element-wise kernels walk the flat entries of their group's row range (range_begin/end of
// common.cl): consecutive work-items at consecutive addresses, whatever NRHS. The dot products
// walk flat too where the group has a work-item per column (FLAT), else rows, and reduce as
// pcg_steps.cl does: a fixed tree in each group, then the groups' partials in group order
// (sum_partials) by vec_dot_finish, so the same inputs give the same bits. Extra define:
//   COEF_ARGS  1: vec_axpby's and vec_zaxpby's coefficients come by value as a kernel argument
//              (a struct of 2 NRHS, 4 NRHS VEC_T); 0: from slot `slot` (4 NRHS values) of a
//              device buffer (NRHS too large for the device's kernel-argument space)
// The host dots up to 4 vectors with u per launch (vec_dot_part1/2/4), fewer for large NRHS
// when rows are walked (registers: 4 NRHS sums a work-item), and combines up to 8 vectors into
// y per launch (vec_combine). The complex forms (vec_zdot_part1/2: 1 or 2 vectors, two sums
// each; vec_zcombine) walk (re, im) pairs as vec_zaxpby does.

#ifndef COEF_ARGS
#define COEF_ARGS 1
#endif

// M alphas then M betas: M = NRHS (vec_axpby), 2 NRHS (vec_zaxpby, (re, im) per column).
#if COEF_ARGS
typedef struct {
  VEC_T alpha[NRHS], beta[NRHS];
} vec_coefs;
typedef struct {
  VEC_T alpha[2 * NRHS], beta[2 * NRHS];
} vec_zcoefs;
#define COEF_PARAM(T) T cf
#define COEF_ALPHA(j) cf.alpha[j]
#define COEF_BETA(M, j) cf.beta[j]
#else
#define COEF_PARAM(T) __global const VEC_T* cf
#define COEF_ALPHA(j) cf[(OFF_T)slot * (4 * NRHS) + (j)]
#define COEF_BETA(M, j) cf[(OFF_T)slot * (4 * NRHS) + (M) + (j)]
#endif

// The flat entries [*s, *e) of this group's rows, walked by consecutive work-items at consecutive
// addresses (entry o is row o / NRHS, column o % NRHS). Empty when no column is active.
void entry_range(int n, int any, OFF_T* s, OFF_T* e) {
  *s = (OFF_T)range_begin(n) * NRHS;
  *e = any ? (OFF_T)range_end(n) * NRHS : *s;
}

// The flat pair entries [*s, *e) of this group's rows (pair o / NRHS of column o % NRHS: its re
// at o + (o / NRHS) NRHS, im NRHS further; an odd last row has no pair), for the complex kernels.
// Group ranges start at multiples of 64 rows, so no pair straddles two groups. Empty when no
// column is active.
void pair_range(int n, int any, OFF_T* s, OFF_T* e) {
  *s = (OFF_T)(range_begin(n) / 2) * NRHS;
  *e = any ? (OFF_T)(range_end(n) / 2) * NRHS : *s;
}

// y_j = alpha_j x_j + beta_j y_j; beta_j == 0 overwrites (y is not used). x may be y.
// overwrite: every active beta_j is 0 (y is then not read at all: one vector less to stream).
__kernel void vec_axpby(int n, int slot, int overwrite, COEF_PARAM(vec_coefs),
                        __global const rhs_state* st, __global const VEC_T* x,
                        __global VEC_T* y) {
  __local VEC_T la[NRHS], lb[NRHS];
  __local int lstat[NRHS];
  for (int j = get_local_id(0); j < NRHS; j += WG)
    la[j] = COEF_ALPHA(j), lb[j] = COEF_BETA(NRHS, j);
  const int any = snapshot_status(st, lstat);  // its barrier publishes la and lb too
  OFF_T s, e;
  entry_range(n, any, &s, &e);
  if (overwrite) {
    for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
      const int j = (int)(o % NRHS);
      if (lstat[j] == CNC_ST_RUNNING) y[o] = la[j] * x[o];
    }
  } else {
    for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
      const int j = (int)(o % NRHS);
      if (lstat[j] != CNC_ST_RUNNING) continue;
      const VEC_T a = la[j], b = lb[j];
      y[o] = b == 0 ? a * x[o] : a * x[o] + b * y[o];
    }
  }
}

// Complex y_j = alpha_j x_j + beta_j y_j over (re, im) pairs (rows 2q, 2q + 1 of column j); the
// coefficients are (re, im) per column. Each work-item owns a pair and reads both parts of x and
// y before writing either (x may be y); group ranges start at multiples of 64 rows, so no pair
// straddles two groups. beta_j == 0 (both parts) and overwrite as in vec_axpby.
__kernel void vec_zaxpby(int n, int slot, int overwrite, COEF_PARAM(vec_zcoefs),
                         __global const rhs_state* st, __global const VEC_T* x,
                         __global VEC_T* y) {
  __local VEC_T la[2 * NRHS], lb[2 * NRHS];
  __local int lstat[NRHS];
  for (int j = get_local_id(0); j < 2 * NRHS; j += WG)
    la[j] = COEF_ALPHA(j), lb[j] = COEF_BETA(2 * NRHS, j);
  const int any = snapshot_status(st, lstat);  // its barrier publishes la and lb too
  OFF_T s, e;
  pair_range(n, any, &s, &e);
  for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
    const OFF_T q = o / NRHS;
    const int j = (int)(o - q * NRHS);
    if (lstat[j] != CNC_ST_RUNNING) continue;
    const OFF_T re = o + q * NRHS, im = re + NRHS;
    const VEC_T ar = la[2 * j], ai = la[2 * j + 1], br = lb[2 * j], bi = lb[2 * j + 1];
    const VEC_T xr = x[re], xi = x[im];
    VEC_T sr = ar * xr - ai * xi, si = ar * xi + ai * xr;
    if (!overwrite && (br != 0 || bi != 0)) {
      const VEC_T yr = y[re], yi = y[im];
      sr += br * yr - bi * yi;
      si += br * yi + bi * yr;
    }
    y[re] = sr;
    y[im] = si;
  }
}

// y_j = beta_j y_j + sum over t < nv of c_t,j v_t (nv 1..8; v_t for t >= nv are not read), summed
// in t order; beta_j == 0 overwrites (y is not used). y is none of the v_t. The coefficients are
// slot `slot` of cf, NRHS each: beta, then c_0 .. c_7. They are read where used rather than
// staged in local memory: 9 NRHS values would not fit there for large NRHS, and every work-item
// reads the same few (cached). overwrite: every active beta_j is 0 (y is not read).
#define COMBINE_ARGS                                                                      \
  int n, int slot, int nv, int overwrite, __global const VEC_T *cf,                       \
      __global const rhs_state *st, __global const VEC_T *v0, __global const VEC_T *v1,   \
      __global const VEC_T *v2, __global const VEC_T *v3, __global const VEC_T *v4,       \
      __global const VEC_T *v5, __global const VEC_T *v6, __global const VEC_T *v7,       \
      __global VEC_T *y
__kernel void vec_combine(COMBINE_ARGS) {
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  __global const VEC_T* c = cf + (OFF_T)slot * (9 * NRHS);
  OFF_T s, e;
  entry_range(n, any, &s, &e);
  for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
    const int j = (int)(o % NRHS);
    if (lstat[j] != CNC_ST_RUNNING) continue;
    const VEC_T b = c[j];
    VEC_T acc = overwrite || b == 0 ? c[NRHS + j] * v0[o] : b * y[o] + c[NRHS + j] * v0[o];
    if (nv > 1) acc += c[2 * NRHS + j] * v1[o];
    if (nv > 2) acc += c[3 * NRHS + j] * v2[o];
    if (nv > 3) acc += c[4 * NRHS + j] * v3[o];
    if (nv > 4) acc += c[5 * NRHS + j] * v4[o];
    if (nv > 5) acc += c[6 * NRHS + j] * v5[o];
    if (nv > 6) acc += c[7 * NRHS + j] * v6[o];
    if (nv > 7) acc += c[8 * NRHS + j] * v7[o];
    y[o] = acc;
  }
}

// The complex form over (re, im) pairs (walked as in vec_zaxpby): y_j = beta_j y_j + sum over
// t < nv of c_t,j v_t, c_t,j complex, beta_j real; otherwise as vec_combine. Slot `slot` of cf
// holds 17 NRHS values: beta, then c_0 .. c_7 as (re, im) per column.
__kernel void vec_zcombine(COMBINE_ARGS) {
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  __global const VEC_T* c = cf + (OFF_T)slot * (17 * NRHS);
  OFF_T s, e;
  pair_range(n, any, &s, &e);
  for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
    const OFF_T q = o / NRHS;
    const int j = (int)(o - q * NRHS);
    if (lstat[j] != CNC_ST_RUNNING) continue;
    const OFF_T re = o + q * NRHS, im = re + NRHS;
    const VEC_T b = c[j];
    VEC_T sr = 0, si = 0;
    if (!overwrite && b != 0) sr = b * y[re], si = b * y[im];
#define ZTERM(t, v)                                                      \
  if (nv > t) {                                                          \
    const VEC_T cr = c[NRHS + 2 * (t * NRHS + j)], ci = c[NRHS + 2 * (t * NRHS + j) + 1]; \
    const VEC_T vr = v[re], vi = v[im];                                  \
    sr += cr * vr - ci * vi;                                             \
    si += cr * vi + ci * vr;                                             \
  }
    ZTERM(0, v0) ZTERM(1, v1) ZTERM(2, v2) ZTERM(3, v3)
    ZTERM(4, v4) ZTERM(5, v5) ZTERM(6, v6) ZTERM(7, v7)
#undef ZTERM
    y[re] = sr;
    y[im] = si;
  }
}

// out = d . in (d: one value per row). in may be out.
__kernel void vec_precondition(int n, __global const rhs_state* st, __global const VEC_T* d,
                               __global const VEC_T* in, __global VEC_T* out) {
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  OFF_T s, e;
  entry_range(n, any, &s, &e);
  for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
    const OFF_T i = o / NRHS;
    if (lstat[(int)(o - i * NRHS)] == CNC_ST_RUNNING) out[o] = d[i] * in[o];
  }
}

// Complex out = d in over the (re, im) pairs of the running columns, d = (zd[2q], zd[2q + 1])
// for pair q (the system's D^-1, shared by the columns); pairs walked as in vec_zaxpby (in may be
// out: each pair read, then written, by one work-item).
__kernel void vec_zprecondition(int n, __global const rhs_state* st, __global const VEC_T* zd,
                                __global const VEC_T* in, __global VEC_T* out) {
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  OFF_T s, e;
  pair_range(n, any, &s, &e);
  for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
    const OFF_T q = o / NRHS;
    const int j = (int)(o - q * NRHS);
    if (lstat[j] != CNC_ST_RUNNING) continue;
    const OFF_T re = o + q * NRHS, im = re + NRHS;
    const VEC_T dr = zd[2 * q], di = zd[2 * q + 1], vr = in[re], vi = in[im];
    out[re] = dr * vr - di * vi;
    out[im] = dr * vi + di * vr;
  }
}

// out = b - out (the residual's second half, after out = A in).
__kernel void vec_b_minus(int n, __global const rhs_state* st, __global const VEC_T* b,
                          __global VEC_T* out) {
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  OFF_T s, e;
  entry_range(n, any, &s, &e);
  for (OFF_T o = s + get_local_id(0); o < e; o += WG)
    if (lstat[(int)(o % NRHS)] == CNC_ST_RUNNING) out[o] = b[o] - out[o];
}

// The group's partials of `count` quantities, each summed over the group in a fixed tree, to
// part[((slot + t) * NRHS + j) * groups + g]. FLAT: acc[t] is the work-item's sum for its column;
// else acc[t][j] for every column, with act[j] whether column j runs (0 then for masked ones).
#if FLAT
void flat_partials(int count, const ACC_T* acc, int slot, __global ACC_T* part,
                   __local ACC_T* scratch) {
  const int lid = get_local_id(0), j = lid % NRHS;
  for (int t = 0; t < count; ++t) {
    const ACC_T s = slot_sum(acc[t], scratch);
    if (lid < NRHS) part[((long)(slot + t) * NRHS + j) * get_num_groups(0) + get_group_id(0)] = s;
  }
}
#else
void row_sums_init(ACC_T acc[4][NRHS], int* act, __local const int* lstat) {
  for (int j = 0; j < NRHS; ++j) {
    act[j] = lstat[j] == CNC_ST_RUNNING;
    for (int t = 0; t < 4; ++t) acc[t][j] = 0;
  }
}
void row_partials(int count, ACC_T acc[4][NRHS], int slot, __global ACC_T* part,
                  __local ACC_T* scratch) {
  for (int t = 0; t < count; ++t)
    for (int j = 0; j < NRHS; ++j) {
      const ACC_T s = wg_sum(acc[t][j], scratch);
      if (get_local_id(0) == 0)
        part[((long)(slot + t) * NRHS + j) * get_num_groups(0) + get_group_id(0)] = s;
    }
}
#endif

// Per-group partials of u . v_t for t < nv, to part[((slot + t) * NRHS + j) * groups + g]: every
// column's, 0 for masked-out ones. nv is 1, 2 or 4, a constant in each kernel below once inlined
// (one per nv: no reduction is spent on absent vectors); v_t for t >= nv are not read. FLAT: each
// work-item walks one column's entries at consecutive addresses with nv sums, reduced per column
// by slot_sum (common.cl); else rows, with nv NRHS sums a work-item.
void dot_part(const int nv, int n, int slot, __global const rhs_state* st,
              __global const VEC_T* u, __global const VEC_T* v0, __global const VEC_T* v1,
              __global const VEC_T* v2, __global const VEC_T* v3, __global ACC_T* part,
              __local ACC_T* scratch, __local int* lstat) {
  const int any = snapshot_status(st, lstat);
  const int lid = get_local_id(0);
#if FLAT
  const int j = lid % NRHS;
  ACC_T acc[4] = {0, 0, 0, 0};
  if (any && lid < FLAT_W && lstat[j] == CNC_ST_RUNNING) {
    const OFF_T e = (OFF_T)range_end(n) * NRHS;
    for (OFF_T o = (OFF_T)range_begin(n) * NRHS + lid; o < e; o += FLAT_W) {
      const ACC_T uo = u[o];
      acc[0] += uo * (ACC_T)v0[o];
      if (nv > 1) acc[1] += uo * (ACC_T)v1[o];
      if (nv > 2) {
        acc[2] += uo * (ACC_T)v2[o];
        acc[3] += uo * (ACC_T)v3[o];
      }
    }
  }
  flat_partials(nv, acc, slot, part, scratch);
#else
  ACC_T acc[4][NRHS];
  int act[NRHS];
  row_sums_init(acc, act, lstat);
  const int start = range_begin(n), end = any ? range_end(n) : start;
  for (int i = start + lid; i < end; i += WG) {
    for (int j = 0; j < NRHS; ++j) {
      if (!act[j]) continue;
      const OFF_T o = (OFF_T)i * NRHS + j;
      const ACC_T uo = u[o];
      acc[0][j] += uo * (ACC_T)v0[o];
      if (nv > 1) acc[1][j] += uo * (ACC_T)v1[o];
      if (nv > 2) {
        acc[2][j] += uo * (ACC_T)v2[o];
        acc[3][j] += uo * (ACC_T)v3[o];
      }
    }
  }
  row_partials(nv, acc, slot, part, scratch);
#endif
}

#define DOT_PART_ARGS                                                                    \
  int n, int slot, __global const rhs_state *st, __global const VEC_T *u,                \
      __global const VEC_T *v0, __global const VEC_T *v1, __global const VEC_T *v2,     \
      __global const VEC_T *v3, __global ACC_T *part
#define DOT_PART_BODY(nv)                                                    \
  __local ACC_T scratch[WG];                                                 \
  __local int lstat[NRHS];                                                   \
  dot_part(nv, n, slot, st, u, v0, v1, v2, v3, part, scratch, lstat)
__kernel void vec_dot_part1(DOT_PART_ARGS) { DOT_PART_BODY(1); }
__kernel void vec_dot_part2(DOT_PART_ARGS) { DOT_PART_BODY(2); }
__kernel void vec_dot_part4(DOT_PART_ARGS) { DOT_PART_BODY(4); }

// Per-group partials of conj(u) . v_t over the (re, im) pairs (walked as in vec_zaxpby) for
// t < nv (1 or 2): the real part to quantity slot + 2t of dot_part's layout, the imaginary part
// to slot + 2t + 1; vec_dot_finish then sums them as it does dot_part's.
void zdot_part(const int nv, int n, int slot, __global const rhs_state* st,
               __global const VEC_T* u, __global const VEC_T* v0, __global const VEC_T* v1,
               __global ACC_T* part, __local ACC_T* scratch, __local int* lstat) {
  const int any = snapshot_status(st, lstat);
  const int lid = get_local_id(0);
#if FLAT
  const int j = lid % NRHS;
  ACC_T acc[4] = {0, 0, 0, 0};
  if (any && lid < FLAT_W && lstat[j] == CNC_ST_RUNNING) {
    OFF_T s, e;
    pair_range(n, any, &s, &e);
    for (OFF_T o = s + lid; o < e; o += FLAT_W) {
      const OFF_T re = o + o / NRHS * NRHS, im = re + NRHS;
      const ACC_T ur = u[re], ui = u[im];
      ACC_T vr = v0[re], vi = v0[im];
      acc[0] += ur * vr + ui * vi;
      acc[1] += ur * vi - ui * vr;
      if (nv > 1) {
        vr = v1[re], vi = v1[im];
        acc[2] += ur * vr + ui * vi;
        acc[3] += ur * vi - ui * vr;
      }
    }
  }
  flat_partials(2 * nv, acc, slot, part, scratch);
#else
  ACC_T acc[4][NRHS];
  int act[NRHS];
  row_sums_init(acc, act, lstat);
  const int start = range_begin(n) / 2, end = any ? range_end(n) / 2 : start;
  for (int q = start + lid; q < end; q += WG) {
    for (int j = 0; j < NRHS; ++j) {
      if (!act[j]) continue;
      const OFF_T re = (OFF_T)(2 * q) * NRHS + j, im = re + NRHS;
      const ACC_T ur = u[re], ui = u[im];
      ACC_T vr = v0[re], vi = v0[im];
      acc[0][j] += ur * vr + ui * vi;
      acc[1][j] += ur * vi - ui * vr;
      if (nv > 1) {
        vr = v1[re], vi = v1[im];
        acc[2][j] += ur * vr + ui * vi;
        acc[3][j] += ur * vi - ui * vr;
      }
    }
  }
  row_partials(2 * nv, acc, slot, part, scratch);
#endif
}

#define ZDOT_PART_ARGS                                                                   \
  int n, int slot, __global const rhs_state *st, __global const VEC_T *u,                \
      __global const VEC_T *v0, __global const VEC_T *v1, __global ACC_T *part
#define ZDOT_PART_BODY(nv)                                                   \
  __local ACC_T scratch[WG];                                                 \
  __local int lstat[NRHS];                                                   \
  zdot_part(nv, n, slot, st, u, v0, v1, part, scratch, lstat)
__kernel void vec_zdot_part1(ZDOT_PART_ARGS) { ZDOT_PART_BODY(1); }
__kernel void vec_zdot_part2(ZDOT_PART_ARGS) { ZDOT_PART_BODY(2); }

// One work-group per vector t: out[t * NRHS + j] = the sum of its `groups` partials in group
// order, 0 for masked-out columns.
__kernel void vec_dot_finish(int groups, __global const rhs_state* st,
                             __global const ACC_T* part, __global ACC_T* out) {
  __local ACC_T scratch[WG];
  __local int lstat[NRHS];
  snapshot_status(st, lstat);
  const int t = get_group_id(0);
  for (int j = 0; j < NRHS; ++j) {
    const ACC_T s = sum_partials(part + ((long)t * NRHS + j) * groups, groups, scratch);
    if (get_local_id(0) == 0) out[t * NRHS + j] = lstat[j] == CNC_ST_RUNNING ? s : 0;
  }
}
