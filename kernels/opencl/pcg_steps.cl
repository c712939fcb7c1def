// The vector steps of Jacobi-PCG, fused with the second stage of the reduction that precedes
// them (the contract is kernels/pcg_contract.h, compiled first in this program).
//
// Every work-group sums the previous kernel's per-group partials itself, in the same fixed order,
// so all groups agree bit for bit on pq (or rz_new, rr) without a host round trip or an extra
// kernel. Work-group 0 then records the scalars in the state array; it writes only fields that
// no group of the same kernel reads (rz is read by update_p from aux_rz, a copy that update_xr
// makes), and a status it changes only moves away from "running", which every group decides
// identically from the same sums, so reading the old or the new value leads to the same work.

// update_xr's decision for system j from its pq (stat: j's status when the launch began):
// whether it steps, with *alpha = rz / pq. `writer` (one work-item of group 0 a system) records
// pq and the new status or the iteration, the step taken (aux_rz[NRHS + j]) and aux_rz[j] = rz,
// the copy update_p reads.
int xr_step(int j, ACC_T pq, int stat, int writer, __global rhs_state* st,
            __global ACC_T* aux_rz, VEC_T* alpha) {
  const int s = stat == CNC_ST_RUNNING ? cnc_status_of_pq(pq) : stat;
  *alpha = 0;
  if (writer) aux_rz[NRHS + j] = s == CNC_ST_RUNNING ? 1 : 0;
  if (stat != CNC_ST_RUNNING) return 0;
  if (s == CNC_ST_RUNNING) *alpha = (VEC_T)(st[j].rz / pq);
  if (writer) {
    st[j].pq = pq;
    if (s != CNC_ST_RUNNING) {
      st[j].status = s;
    } else {
      st[j].iters += 1;
      aux_rz[j] = st[j].rz;
    }
  }
  return s == CNC_ST_RUNNING;
}

// r -= alpha q; partials of sum d r^2 and sum r^2; partA holds spmv_dot's partials of pq. (x
// moves in update_p, which reads p anyway.) Every quantity is summed for every system, so that no
// barrier sits under a condition (see spmv.cl).
__kernel void update_xr(int n, int groups, __global VEC_T* r, __global const VEC_T* q,
                        __global const VEC_T* d, __global rhs_state* st,
                        __global ACC_T* aux_rz, __global const ACC_T* partA,
                        __global ACC_T* partB) {
  __local ACC_T scratch[WG];
  __local int lstat[NRHS];
  snapshot_status(st, lstat);
  const int lid = get_local_id(0), g = get_group_id(0);
#if FLAT
  const int j = lid % NRHS;
  VEC_T alpha;
  const ACC_T pq = slot_partials(partA, groups, groups, scratch);
  const int upd = xr_step(j, pq, lstat[j], g == 0 && lid < NRHS, st, aux_rz, &alpha);
  ACC_T a0 = 0, a1 = 0;
  if (upd && lid < FLAT_W) {
    const OFF_T e = (OFF_T)range_end(n) * NRHS;
    for (OFF_T o = (OFF_T)range_begin(n) * NRHS + lid; o < e; o += FLAT_W) {
      const VEC_T ri = r[o] - alpha * q[o];
      r[o] = ri;
      const ACC_T di = d[o / NRHS];
      a0 += di * (ACC_T)ri * (ACC_T)ri;
      a1 += (ACC_T)ri * (ACC_T)ri;
    }
  }
  const ACC_T s0 = slot_sum(a0, scratch);
  const ACC_T s1 = slot_sum(a1, scratch);
  if (lid < NRHS && upd) {
    partB[(2 * j) * groups + g] = s0;
    partB[(2 * j + 1) * groups + g] = s1;
  }
#else
  int upd[NRHS];
  VEC_T alpha[NRHS];
  for (int j = 0; j < NRHS; ++j) {
    const ACC_T pq = sum_partials(partA + j * groups, groups, scratch);
    upd[j] = xr_step(j, pq, lstat[j], g == 0 && lid == 0, st, aux_rz, &alpha[j]);
  }
  ACC_T a0[NRHS], a1[NRHS];
  for (int j = 0; j < NRHS; ++j) a0[j] = a1[j] = 0;
  const int start = range_begin(n), end = range_end(n);
  for (int i = start + lid; i < end; i += WG) {
    const VEC_T di = d[i];
    for (int j = 0; j < NRHS; ++j) {
      if (!upd[j]) continue;
      const OFF_T o = (OFF_T)i * NRHS + j;
      const VEC_T ri = r[o] - alpha[j] * q[o];
      r[o] = ri;
      a0[j] += (ACC_T)di * (ACC_T)ri * (ACC_T)ri;
      a1[j] += (ACC_T)ri * (ACC_T)ri;
    }
  }
  for (int j = 0; j < NRHS; ++j) {
    const ACC_T s0 = wg_sum(a0[j], scratch);
    const ACC_T s1 = wg_sum(a1[j], scratch);
    if (lid == 0 && upd[j]) {
      partB[(2 * j) * groups + g] = s0;
      partB[(2 * j + 1) * groups + g] = s1;
    }
  }
#endif
}

// update_p's decision for system j: whether it took update_xr's step (aux_rz[NRHS + j], not the
// status: work-group 0 may already have changed it), with *alpha from aux_rz[j] (update_xr's copy
// of rz) and the pq it recorded; then the convergence test: *upd when it goes on, with *beta.
// `writer` records rz_new, rr and the new status or rz.
int p_step(int j, ACC_T rz_new, ACC_T rr, int writer, __global rhs_state* st,
           __global const ACC_T* aux_rz, VEC_T* alpha, VEC_T* beta, int* upd) {
  *upd = 0;
  *alpha = *beta = 0;
  if (aux_rz[NRHS + j] == 0) return 0;
  *alpha = (VEC_T)(aux_rz[j] / st[j].pq);
  const int s = cnc_status_of_residual(rr, rz_new, st[j].thr2);
  if (s == CNC_ST_RUNNING) {
    *beta = (VEC_T)(rz_new / aux_rz[j]);
    *upd = 1;
  }
  if (writer) {
    st[j].rz_new = rz_new;
    st[j].rr = rr;
    if (s != CNC_ST_RUNNING)
      st[j].status = s;
    else
      st[j].rz = rz_new;
  }
  return 1;
}

// x += alpha p for the systems that took update_xr's step, then the convergence test and
// p = d.r + beta p; partB holds update_xr's partials of sum d r^2 and sum r^2.
__kernel void update_p(int n, int groups, __global VEC_T* x, __global VEC_T* p,
                       __global const VEC_T* r, __global const VEC_T* d, __global rhs_state* st,
                       __global const ACC_T* aux_rz, __global const ACC_T* partB) {
  __local ACC_T scratch[WG];
  const int lid = get_local_id(0), g = get_group_id(0);
#if FLAT
  const int j = lid % NRHS;
  const ACC_T rz_new = slot_partials(partB, 2 * groups, groups, scratch);
  const ACC_T rr = slot_partials(partB + groups, 2 * groups, groups, scratch);
  VEC_T alpha, beta;
  int upd;
  const int stepped =
      p_step(j, rz_new, rr, g == 0 && lid < NRHS, st, aux_rz, &alpha, &beta, &upd);
  if (stepped && lid < FLAT_W) {
    const OFF_T e = (OFF_T)range_end(n) * NRHS;
    for (OFF_T o = (OFF_T)range_begin(n) * NRHS + lid; o < e; o += FLAT_W) {
      const VEC_T po = p[o];
      x[o] += alpha * po;
      if (upd) p[o] = d[o / NRHS] * r[o] + beta * po;
    }
  }
#else
  int upd[NRHS], stepped[NRHS];
  VEC_T alpha[NRHS], beta[NRHS];
  for (int j = 0; j < NRHS; ++j) {
    const ACC_T rz_new = sum_partials(partB + (2 * j) * groups, groups, scratch);
    const ACC_T rr = sum_partials(partB + (2 * j + 1) * groups, groups, scratch);
    stepped[j] =
        p_step(j, rz_new, rr, g == 0 && lid == 0, st, aux_rz, &alpha[j], &beta[j], &upd[j]);
  }
  const int start = range_begin(n), end = range_end(n);
  for (int i = start + lid; i < end; i += WG) {
    const VEC_T di = d[i];
    for (int j = 0; j < NRHS; ++j) {
      if (!stepped[j]) continue;
      const OFF_T o = (OFF_T)i * NRHS + j;
      const VEC_T po = p[o];
      x[o] += alpha[j] * po;
      if (upd[j]) p[o] = di * r[o] + beta[j] * po;
    }
  }
#endif
}

// One work-group that records in the state what the last kernel's partials hold, for a host
// read between two steps (the next step would record the same values itself):
//   mode 0, after init:      every system: rz, rr, pq = 0, iters = 0, thr2, status; aux_rz = rz,
//                            no step taken
//   mode 1, after spmv_dot:  running systems: pq
//   mode 2, after update_xr: running systems: rz_new, rr
__kernel void finalize(int mode, int groups, __global rhs_state* st, __global ACC_T* aux_rz,
                       __global const ACC_T* partA, __global const ACC_T* partB,
                       __global const ACC_T* thr2) {
  __local ACC_T scratch[WG];
  __local int lstat[NRHS];
  snapshot_status(st, lstat);
  const int lid = get_local_id(0);
  for (int j = 0; j < NRHS; ++j) {
    const ACC_T pq = sum_partials(partA + j * groups, groups, scratch);
    const ACC_T s0 = sum_partials(partB + (2 * j) * groups, groups, scratch);
    const ACC_T s1 = sum_partials(partB + (2 * j + 1) * groups, groups, scratch);
    if (lid != 0) continue;
    if (mode == 0) {
      const ACC_T t = thr2[j];
      st[j].rz = st[j].rz_new = s0;
      st[j].rr = s1;
      st[j].pq = 0;
      st[j].thr2 = t;
      st[j].iters = 0;
      st[j].status = cnc_status_of_residual(s1, s0, t);
      aux_rz[j] = s0;
      aux_rz[NRHS + j] = 0;
    } else if (lstat[j] == CNC_ST_RUNNING && mode == 1) {
      st[j].pq = pq;
    } else if (lstat[j] == CNC_ST_RUNNING && mode == 2) {
      st[j].rz_new = s0;
      st[j].rr = s1;
    }
  }
}
