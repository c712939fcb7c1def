// Cross-column products of the vector surface (device_system::block_dots, block_combine) on
// vectors of NRHS interleaved columns (blas1.cl's layout). The mask (`st`) selects the columns
// written: v's columns j in the Gram product (0 for the others, set by vec_dot_finish), y's
// columns in the combination; every column of the other vector is read.
//
// vec_block_gram: per-group partials of u_a . v_b for a in [a0, a0 + GRAM_ROWS), every b, to
// part[(a * NRHS + b) * groups + g] (vec_dot_finish's layout for NRHS "vectors" a:
// out[a * NRHS + b]); the host launches it once per GRAM_ROWS columns of u, so each launch reads
// u and v once. FLAT (common.cl): work-item column b walks v's entries flat and the row's u
// values (the same addresses for the row's NRHS work-items), one accumulator per a, then
// slot_sum's fixed tree; otherwise (CPUs) rows, one accumulator per pair, then wg_sum. The same
// bits for the same inputs.

#define GRAM_ROWS 8

__kernel void vec_block_gram(int n, int a0, __global const rhs_state* st,
                             __global const VEC_T* u, __global const VEC_T* v,
                             __global ACC_T* part) {
  __local ACC_T scratch[WG];
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  const int lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
  const int start = range_begin(n), end = any ? range_end(n) : start;
#if FLAT
  const int b = lid % NRHS;
  ACC_T acc[GRAM_ROWS];
  for (int q = 0; q < GRAM_ROWS; ++q) acc[q] = 0;
  if (lid < FLAT_W && lstat[b] == CNC_ST_RUNNING) {
    const OFF_T e = (OFF_T)end * NRHS;
    for (OFF_T o = (OFF_T)start * NRHS + lid; o < e; o += FLAT_W) {
      const ACC_T vb = v[o];
      const OFF_T r = o - b + a0;  // u_a0 of this row
      for (int q = 0; q < GRAM_ROWS; ++q)
        if (a0 + q < NRHS) acc[q] += (ACC_T)u[r + q] * vb;
    }
  }
  // Every tree summed (no barrier under a condition), only the pairs that exist written.
  for (int q = 0; q < GRAM_ROWS; ++q) {
    const ACC_T s = slot_sum(acc[q], scratch);
    if (lid < NRHS && a0 + q < NRHS) part[((long)(a0 + q) * NRHS + b) * groups + g] = s;
  }
#else
  ACC_T acc[GRAM_ROWS][NRHS];
  for (int q = 0; q < GRAM_ROWS; ++q)
    for (int c = 0; c < NRHS; ++c) acc[q][c] = 0;
  for (int i = start + lid; i < end; i += WG) {
    const OFF_T r = (OFF_T)i * NRHS;
    for (int q = 0; q < GRAM_ROWS && a0 + q < NRHS; ++q) {
      const ACC_T ua = u[r + a0 + q];
      for (int c = 0; c < NRHS; ++c)
        if (lstat[c] == CNC_ST_RUNNING) acc[q][c] += ua * (ACC_T)v[r + c];
    }
  }
  for (int q = 0; q < GRAM_ROWS; ++q)
    for (int c = 0; c < NRHS; ++c) {
      const ACC_T s = wg_sum(acc[q][c], scratch);
      if (lid == 0 && a0 + q < NRHS) part[((long)(a0 + q) * NRHS + c) * groups + g] = s;
    }
#endif
}

// y_j = beta_j y_j + sum_i coef[i * NRHS + j] v_i for active j, in i order; zero coefficients
// skipped (v_i not read), beta_j == 0 overwrites. cf: slot `slot` of NRHS betas then NRHS * NRHS
// coefficients.
__kernel void vec_block_combine(int n, int slot, __global const VEC_T* cf,
                                __global const rhs_state* st, __global const VEC_T* v,
                                __global VEC_T* y) {
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  __global const VEC_T* c = cf + (OFF_T)slot * (NRHS + NRHS * NRHS);
  const OFF_T s = (OFF_T)range_begin(n) * NRHS, e = any ? (OFF_T)range_end(n) * NRHS : s;
  for (OFF_T o = s + get_local_id(0); o < e; o += WG) {
    const int j = (int)(o % NRHS);
    if (lstat[j] != CNC_ST_RUNNING) continue;
    const OFF_T r = o - j;
    const VEC_T b = c[j];
    VEC_T acc = b == 0 ? 0 : b * y[o];
    for (int i = 0; i < NRHS; ++i) {
      const VEC_T ci = c[NRHS + i * NRHS + j];
      if (ci != 0) acc += ci * v[r + i];
    }
    y[o] = acc;
  }
}
