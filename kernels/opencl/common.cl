// Shared definitions of cnc's OpenCL kernels (compiled after pcg_contract.h, before spmv.cl,
// pcg_steps.cl and blas1.cl).
//
// The host passes every type and tuning value as a -D define:
//   VAL_T   matrix value type (float or double)       VEC_T  vector type (float or double)
//   ACC_T   reduction and state scalar type (double; float only on devices without fp64)
//   IDX_T   type of row offsets and value offsets (int, or long for very large matrices)
//   OFF_T   type of vector offsets i*NRHS+j (int or long)
//   NRHS    right-hand sides solved together         WG     work-group size (power of two)
//   FMT     1 = CSR, 2 = BCRS 2x2, 4 = BCRS 4x4,     CSR_W  work-items per CSR row (power of 2),
//           3 = ZCSR (complex CSR), SELL_C = SELL            or 0 for CSR stream (ZCSR: its lanes)
//   TILE    CSR stream tile capacity in entries
//   HAS_FP64  1 when cl_khr_fp64 is enabled
// Vectors are interleaved: entry i of system j is at i*NRHS + j, so one column index of the
// matrix fetches the NRHS values of a row of the right-hand-side block at once.
// (cl_khr_fp64 is enabled by pcg_contract.h when HAS_FP64.)

// The per-system state and the statuses are kernels/pcg_contract.h's (compiled just before).
typedef cnc_rhs_state rhs_state;

// Sum over the work-group of one value per work-item, in a fixed tree order; every work-item
// must call it and gets the result. `scratch` holds WG values.
ACC_T wg_sum(ACC_T v, __local ACC_T* scratch) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = WG / 2; off > 0; off >>= 1) {
    if (lid < off) scratch[lid] += scratch[lid + off];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC_T r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// Second stage of a two-stage reduction: the sum of the `groups` per-work-group partials of one
// quantity. Every work-group that calls it computes the same bits (same data, same order).
ACC_T sum_partials(__global const ACC_T* part, int groups, __local ACC_T* scratch) {
  ACC_T s = 0;
  for (int g = get_local_id(0); g < groups; g += WG) s += part[g];
  return wg_sum(s, scratch);
}

// Flat walks (FLAT: NRHS <= WG): the entries of interleaved vectors taken in address order,
// FLAT_W at a time (the largest multiple of NRHS not above WG; the last WG - FLAT_W work-items
// idle), so that work-item lid < FLAT_W always serves column lid % NRHS: consecutive work-items
// touch consecutive addresses (a row-per-work-item walk strides by NRHS entries, a warp's
// accesses then spread over NRHS times the lines), and each keeps one running sum a quantity.
// Devices with fewer work-items a group than columns (CPUs: one) walk rows instead, a row's NRHS
// entries by one work-item, which is what their caches want.
#define FLAT (NRHS <= WG)
#if FLAT
#define FLAT_W (WG / NRHS * NRHS)
#define FLAT_ROWS (WG / NRHS)

// Per column, the sum over the group of the work-items' values (lid >= FLAT_W: ignored), in a
// fixed tree over the flat rows (the same bits every run; for NRHS = 1 wg_sum's tree). Every
// work-item must call it and gets its own column's sum. `scratch` holds WG values.
ACC_T slot_sum(ACC_T v, __local ACC_T* scratch) {
  const int lid = get_local_id(0), m = lid / NRHS;
  int top = 1;
  while (top < FLAT_ROWS) top <<= 1;
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = top / 2; off > 0; off >>= 1) {
    if (m < off && m + off < FLAT_ROWS) scratch[lid] += scratch[lid + off * NRHS];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const ACC_T r = scratch[lid % NRHS];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

// Second stage, flat: for the caller's column j, the sum of the `groups` partials at
// part[j * stride + g], in a fixed order (every group computes the same bits).
ACC_T slot_partials(__global const ACC_T* part, int stride, int groups, __local ACC_T* scratch) {
  const int lid = get_local_id(0);
  ACC_T s = 0;
  if (lid < FLAT_W)
    for (int g = lid / NRHS; g < groups; g += FLAT_ROWS) s += part[(lid % NRHS) * stride + g];
  return slot_sum(s, scratch);
}
#endif

// The contiguous range [range_begin, range_end) of `units` (rows or block rows) owned by this
// work-group: contiguous chunks keep a CPU core's rows together and cost a GPU nothing.
int range_chunk(int units) {
  const long groups = get_num_groups(0);
  const long chunk = ((long)units + groups - 1) / groups;
  return (int)((chunk + 63) & ~63L);
}
int range_begin(int units) {
  const long s = (long)get_group_id(0) * range_chunk(units);
  return s < units ? (int)s : units;
}
int range_end(int units) {
  const long e = ((long)get_group_id(0) + 1) * range_chunk(units);
  return e < units ? (int)e : units;
}

// Copies the k statuses into local memory so that every work-item of the group takes the same
// branches even while work-group 0 updates the statuses in global memory.
int snapshot_status(__global const rhs_state* st, __local int* lstat) {
  for (int j = get_local_id(0); j < NRHS; j += WG) lstat[j] = st[j].status;
  barrier(CLK_LOCAL_MEM_FENCE);
  int any = 0;
  for (int j = 0; j < NRHS; ++j) any |= lstat[j] == CNC_ST_RUNNING;
  return any;
}
