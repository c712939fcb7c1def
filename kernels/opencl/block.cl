// Cross-column products of the vector surface (device_system::block_dots, block_combine) on
// vectors of NRHS interleaved columns (blas1.cl's layout). The mask (`st`) selects the columns
// written: v's columns j in the Gram product (0 for the others, set by vec_dot_finish), y's
// columns in the combination; every column of the other vector is read.
//
// vec_block_gram: per-group partials of u_a . v_b for the pairs p = a * NRHS + b in
// [p0, p0 + BLOCK_PAIRS), to part[p * groups + g] (vec_dot_finish's layout for NRHS "vectors"
// a: out[a * NRHS + b]). Rows of the group's range, one accumulator per pair and work-item, then
// the fixed tree of wg_sum: the same bits for the same inputs. The host launches it once per
// BLOCK_PAIRS pairs.

#define BLOCK_PAIRS 8

__kernel void vec_block_gram(int n, int p0, __global const rhs_state* st,
                             __global const VEC_T* u, __global const VEC_T* v,
                             __global ACC_T* part) {
  __local ACC_T scratch[WG];
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  const int lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
  ACC_T acc[BLOCK_PAIRS];
  for (int q = 0; q < BLOCK_PAIRS; ++q) acc[q] = 0;
  const int start = range_begin(n), end = any ? range_end(n) : start;
  for (int i = start + lid; i < end; i += WG) {
    const OFF_T r = (OFF_T)i * NRHS;
    for (int q = 0; q < BLOCK_PAIRS; ++q) {
      const int p = p0 + q;
      if (p >= NRHS * NRHS) break;
      const int a = p / NRHS, b = p % NRHS;
      if (lstat[b] == CNC_ST_RUNNING) acc[q] += (ACC_T)u[r + a] * (ACC_T)v[r + b];
    }
  }
  for (int q = 0; q < BLOCK_PAIRS; ++q) {
    const int p = p0 + q;
    if (p >= NRHS * NRHS) break;
    const ACC_T s = wg_sum(acc[q], scratch);
    if (lid == 0) part[(long)p * groups + g] = s;
  }
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
