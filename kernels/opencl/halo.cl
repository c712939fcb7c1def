// The halo operations of the vector surface (backend.hpp, libcnc_mpi's distributed systems) on
// vectors of NRHS interleaved columns (blas1.cl's layout). Halo values interleave the columns in
// the same way: value t of column j at t * NRHS + j, so one process's share is contiguous.

// out[t * NRHS + j] = v[rows[t] * NRHS + j] for every column j (masked or not): the rows other
// processes read, gathered for the host's send buffer. One work-item per value, grid-strided.
__kernel void halo_gather(int count, __global const int* rows, __global const VEC_T* v,
                          __global VEC_T* out) {
  const long total = (long)count * NRHS, step = get_global_size(0);
  for (long o = get_global_id(0); o < total; o += step) {
    const long t = o / NRHS;
    const int j = (int)(o - t * NRHS);
    out[o] = v[(OFF_T)rows[t] * NRHS + j];
  }
}

// y_j += alpha * sum_e val[e] h[col[e] * NRHS + j] for the columns the mask (`st`) leaves
// running: the product of the halo block (rows n, row offsets rp, columns < the halo size) with
// the values other processes sent. One work-item per row, grid-strided; each sum in entry order
// in ACC_T, as the CPU backend's (the same bits for any launch shape).
__kernel void halo_add(int n, __global const long* rp, __global const int* col,
                       __global const VAL_T* val, __global const VEC_T* h,
                       __global const rhs_state* st, ACC_T alpha, __global VEC_T* y) {
  __local int lstat[NRHS];
  const int any = snapshot_status(st, lstat);
  if (!any) return;
  const int step = get_global_size(0);
  for (int r = get_global_id(0); r < n; r += step) {
    const long e0 = rp[r], e1 = rp[r + 1];
    if (e0 == e1) continue;
    for (int j = 0; j < NRHS; ++j) {
      if (lstat[j] != CNC_ST_RUNNING) continue;
      ACC_T s = 0;
      for (long e = e0; e < e1; ++e) s += (ACC_T)val[e] * (ACC_T)h[(OFF_T)col[e] * NRHS + j];
      y[(OFF_T)r * NRHS + j] += (VEC_T)(alpha * s);
    }
  }
}
