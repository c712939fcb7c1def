// Sparse matrix times the vector block, fused with what each step does with the product row.
//
//   MODE_DOT   (spmv_dot): q = A p for running systems; per-group partials of pq = sum p.q
//   MODE_INIT  (init):     r = b - A x; p = d.r for every system; partials of sum d r^2, sum r^2
//   MODE_APPLY (apply):    q = A p for every system, no reduction
// Formats: CSR with CSR_W work-items per row (the width adapted to the mean row length, so that
// lanes read consecutive entries and few stay idle; lane 0 then sums the lanes in fixed order), CSR
// "stream" (CSR_W = 0: a tile of rows staged through local memory, for short rows), and BCRS
// 2x2 / 4x4 with one work-item per block row: each block's x values are loaded once into
// registers and reused for every row of the block (register blocking),
// and SELL (FMT == SELL_C, slices of SELL_C rows stored column-major) with one work-item per row,
// and ZCSR (FMT == 3: complex CSR, units are complex rows, CSR_W work-items each, values (re, im)
// pairs; complex row i writes the real rows 2i (re) and 2i + 1 (im), and the column c of an entry
// reads x's re at row 2c and im at 2c + 1; its rows are never cut into pieces).
//
// CSR long rows (LONG_ROWS = 1, opencl_long_rows.hpp): a row longer than long_min entries is cut
// into pieces that csr_pieces, launched just before, sums into psum; spmv_fused then adds the
// row's piece sums in piece order instead of walking the row (the same bits on every run).
// BALANCED = 1: group g owns rows [bounds[g], bounds[g+1]), cut by work on the host, instead of
// the uniform range_begin/range_end (rows of very unequal length, hubs at low indices).
#define MODE_DOT 0
#define MODE_INIT 1
#define MODE_APPLY 2

// What happens to row i once y = (A v)_i is known for the NRHS systems.
void row_epilogue(int mode, int i, const VEC_T* y, const int* run, __global VEC_T* out,
                  __global VEC_T* p, __global const VEC_T* b, __global const VEC_T* d,
                  ACC_T* acc0, ACC_T* acc1) {
  const VEC_T di = d[i];
  for (int j = 0; j < NRHS; ++j) {
    if (!run[j]) continue;
    const OFF_T o = (OFF_T)i * NRHS + j;
    if (mode == MODE_INIT) {
      const VEC_T ri = b[o] - y[j];
      out[o] = ri;
      p[o] = di * ri;
      acc0[j] += (ACC_T)di * (ACC_T)ri * (ACC_T)ri;
      acc1[j] += (ACC_T)ri * (ACC_T)ri;
    } else {
      out[o] = y[j];
      if (mode == MODE_DOT) acc0[j] += (ACC_T)p[o] * (ACC_T)y[j];
    }
  }
}

// STAGE = 1 (the host's choice: several systems, CSR or SELL, FLAT, and the tile fits in local
// memory): a tile's rows put their products in local memory (stage_row) instead of finishing
// each row's NRHS entries in one work-item, and tile_epilogue then finishes the tile's entries
// flat (common.cl's FLAT: consecutive work-items at consecutive addresses, one column each), so
// out, p and b are streamed rather than strided by NRHS.
//
// COLS = 1 (the host's choice instead of STAGE for CSR with one work-item a row, or SELL): one
// work-item per (row, column) instead, FLAT_ROWS rows a pass, column lid % NRHS: the k work-items
// of a row read its entries (the same addresses: one load for them) and gather p at consecutive
// addresses, each keeps one sum, and finishes its entry at once (no staging, no barrier). A
// work-item that takes a row's k columns gathers k values an entry, strided across the warp, and
// keeps k sums: at k = 16 that SpMV ran at a seventh of its floor on an H200.
#ifndef STAGE
#define STAGE 0
#endif
#ifndef COLS
#define COLS 0
#endif
#if COLS && !((FMT == 1 && CSR_W == 1) || FMT == SELL_C)
#error "COLS needs CSR with one work-item a row, or SELL"
#endif
#if STAGE
void stage_row(int r, const VEC_T* y, __local VEC_T* ytile) {
  for (int j = 0; j < NRHS; ++j) ytile[r * NRHS + j] = y[j];
}
#endif
#if STAGE || COLS
// The epilogue of one flat entry o (row o / NRHS, column o % NRHS) with its product y; a0, a1:
// the column's running sums (d r^2 and r^2, or p.q).
void flat_epilogue(int mode, OFF_T o, VEC_T y, __global VEC_T* out, __global VEC_T* p,
                   __global const VEC_T* b, __global const VEC_T* d, ACC_T* a0, ACC_T* a1) {
  if (mode == MODE_INIT) {
    const VEC_T di = d[o / NRHS], ri = b[o] - y;
    out[o] = ri;
    p[o] = di * ri;
    *a0 += (ACC_T)di * (ACC_T)ri * (ACC_T)ri;
    *a1 += (ACC_T)ri * (ACC_T)ri;
  } else {
    out[o] = y;
    if (mode == MODE_DOT) *a0 += (ACC_T)p[o] * (ACC_T)y;
  }
}
#endif
#if STAGE
// The epilogue of rows [base, last) from ytile, for the caller's column (run_j: whether it runs
// in this launch).
void tile_epilogue(int mode, int base, int last, __local const VEC_T* ytile, int run_j,
                   __global VEC_T* out, __global VEC_T* p, __global const VEC_T* b,
                   __global const VEC_T* d, ACC_T* a0, ACC_T* a1) {
  const int lid = get_local_id(0), cnt = (last - base) * NRHS;
  if (lid >= FLAT_W || !run_j) return;
  const OFF_T o0 = (OFF_T)base * NRHS;
  for (int t = lid; t < cnt; t += FLAT_W)
    flat_epilogue(mode, o0 + t, ytile[t], out, p, b, d, a0, a1);
}
// A row's product y done: staged as row r of the tile starting at row `base`, or finished here.
#define ROW_DONE(i, y) stage_row((i) - base, y, ytile)
// After a tile's rows (every work-item, same trip count): its entries finished flat.
#define TILE_DONE(last)                                                                \
  barrier(CLK_LOCAL_MEM_FENCE);                                                        \
  tile_epilogue(mode, base, last, ytile, run_j, out, p, b, d, &sacc0, &sacc1);         \
  barrier(CLK_LOCAL_MEM_FENCE)
#else
#define ROW_DONE(i, y) row_epilogue(mode, i, y, run, out, p, b, d, acc0, acc1)
#define TILE_DONE(last) ((void)0)
#endif

#if FMT == 1 && LONG_ROWS
#define IS_LONG(len) ((len) > long_min)
// The index of long row i among the n_long long rows (lrow: those rows ascending, then their
// first pieces, n_long + 1 offsets).
int long_row_index(int i, int n_long, __global const int* lrow) {
  int lo = 0, hi = n_long - 1;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (lrow[mid] < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
// y = the sum of long row i's piece sums, in piece order.
void sum_pieces(int i, int n_long, __global const int* lrow, __global const VEC_T* psum,
                VEC_T* y) {
  const int r = long_row_index(i, n_long, lrow);
  for (int j = 0; j < NRHS; ++j) y[j] = 0;
  for (int t = lrow[n_long + r]; t < lrow[n_long + r + 1]; ++t)
    for (int j = 0; j < NRHS; ++j) y[j] += psum[(long)t * NRHS + j];
}
#if COLS
// Column j's entry of the same sum (the same bits as sum_pieces's y[j]).
VEC_T sum_pieces_col(int i, int j, int n_long, __global const int* lrow,
                     __global const VEC_T* psum) {
  const int r = long_row_index(i, n_long, lrow);
  VEC_T y = 0;
  for (int t = lrow[n_long + r]; t < lrow[n_long + r + 1]; ++t) y += psum[(long)t * NRHS + j];
  return y;
}
#endif
#else
#define IS_LONG(len) 0
#define sum_pieces(i, n_long, lrow, psum, y) ((void)0)
#define sum_pieces_col(i, j, n_long, lrow, psum) ((VEC_T)0)
#endif

// v: the multiplied vector (p, or x in MODE_INIT); out: q, or r in MODE_INIT.
// part: per-group partials, laid out quantity-major (MODE_DOT: [j][group], MODE_INIT:
// [2j+s][group] with s = 0 for sum d r^2 and 1 for sum r^2). long_min, n_long, lrow, psum: the
// long rows (LONG_ROWS); bounds: the groups' row ranges (BALANCED). Only with either: PoCL ran
// the stencils' kernel a third slower with them as unused arguments.
__kernel void spmv_fused(int mode, int units, __global const IDX_T* rowp, __global const int* col,
                         __global const VAL_T* val, __global const VEC_T* v,
                         __global VEC_T* out, __global VEC_T* p, __global const VEC_T* b,
                         __global const VEC_T* d, __global const rhs_state* st,
                         __global ACC_T* part
#if LONG_ROWS || BALANCED
                         , long long_min, int n_long, __global const int* bounds,
                         __global const int* lrow, __global const VEC_T* psum
#endif
                         ) {
  __local ACC_T scratch[WG];
  __local int lstat[NRHS];
  const int lid = get_local_id(0);
  // Every barrier below is reached by every work-item: no early return, no barrier under a
  // condition (uniform or not; PoCL miscompiles some of those). A no-op iteration (no system
  // running) gets an empty row range instead.
  const int any = snapshot_status(st, lstat);
  int run[NRHS];
  for (int j = 0; j < NRHS; ++j) run[j] = mode != MODE_DOT || lstat[j] == CNC_ST_RUNNING;
  ACC_T acc0[NRHS], acc1[NRHS];
  for (int j = 0; j < NRHS; ++j) acc0[j] = acc1[j] = 0;
#if STAGE
  __local VEC_T ytile[WG * NRHS];
#endif
#if STAGE || COLS
  const int run_j = run[lid % NRHS];
  ACC_T sacc0 = 0, sacc1 = 0;  // column lid % NRHS's sums
#endif
#if BALANCED
  const int start = bounds[get_group_id(0)];
  const int end = mode == MODE_DOT && !any ? start : bounds[get_group_id(0) + 1];
#else
  const int start = range_begin(units);
  const int end = mode == MODE_DOT && !any ? start : range_end(units);
#endif

#if COLS && ((FMT == 1 && CSR_W == 1) || FMT == SELL_C)
#ifndef SELL_U
#define SELL_U 8
#endif
  {
    // Idle work-items (past FLAT_W, or a column not running) start past the end.
    const int j = lid % NRHS;
    for (int i = lid < FLAT_W && run_j ? start + lid / NRHS : end; i < end; i += FLAT_ROWS) {
      VEC_T y = 0;
#if FMT == 1
      const IDX_T s = rowp[i], e = rowp[i + 1];
      if (IS_LONG(e - s))
        y = sum_pieces_col(i, j, n_long, lrow, psum);
      else
        for (IDX_T k = s; k < e; ++k) y += val[k] * v[(OFF_T)col[k] * NRHS + j];
#else
      // The SELL walk below (one row, SELL_U entries loaded before use), for column j only.
      const IDX_T e = rowp[i / SELL_C + 1];
      IDX_T k = rowp[i / SELL_C] + i % SELL_C;
      for (; k < e - (SELL_U - 1) * SELL_C; k += SELL_U * SELL_C) {  // no overflow near INT_MAX
        VEC_T a[SELL_U];
        OFF_T c[SELL_U];
        for (int u = 0; u < SELL_U; ++u) {
          a[u] = val[k + u * SELL_C];
          c[u] = (OFF_T)col[k + u * SELL_C] * NRHS + j;
        }
        for (int u = 0; u < SELL_U; ++u) y += a[u] * v[c[u]];
      }
      for (; k < e; k += SELL_C) y += val[k] * v[(OFF_T)col[k] * NRHS + j];
#endif
      flat_epilogue(mode, (OFF_T)i * NRHS + j, y, out, p, b, d, &sacc0, &sacc1);
    }
  }
#elif FMT == 1 && CSR_W == 1
  for (int base = start; base < end; base += WG) {  // same trip count for the group
    const int i = base + lid;
    if (i < end) {
      VEC_T y[NRHS];
      for (int j = 0; j < NRHS; ++j) y[j] = 0;
      const IDX_T s = rowp[i], e = rowp[i + 1];
      if (IS_LONG(e - s)) {
        sum_pieces(i, n_long, lrow, psum, y);
      } else {
        for (IDX_T k = s; k < e; ++k) {
          const VEC_T a = val[k];  // converted at the load: PoCL's code for mixed is faster
          const OFF_T c = (OFF_T)col[k] * NRHS;
          for (int j = 0; j < NRHS; ++j) y[j] += a * v[c + j];
        }
      }
      ROW_DONE(i, y);
    }
    TILE_DONE(min(base + WG, end));
  }
#elif FMT == 1 && CSR_W == 0 && NRHS == 1
  // CSR stream (short rows on GPUs): the group's WG rows form a tile whose entries are read with
  // consecutive work-items (coalesced) in windows of TILE entries, their products staged in local
  // memory, then each work-item adds its own row's share of the window. Long rows (summed in
  // pieces) are left out: the tile is taken as runs of short rows, each run windowed, so a tile
  // holding a long row, or more entries than TILE, still reads coalesced. Every loop holding a
  // barrier has the same trip count in the whole group (its bounds come from rowp and local
  // memory).
  __local VEC_T prod[TILE * NRHS];
  __local int long_row[WG];
  for (int base = start; base < end; base += WG) {  // same trip count for the group
    const int last = min(base + WG, end), cnt = last - base;
    const int i = base + lid;
    const IDX_T rs = i < last ? rowp[i] : 0, re = i < last ? rowp[i + 1] : 0;
    const int mine_long = i < last && IS_LONG(re - rs);
    long_row[lid] = mine_long;
    barrier(CLK_LOCAL_MEM_FENCE);
    // No row of the tile can be long when the whole tile is not: one run then, no scan.
#if LONG_ROWS
    const int may_long = rowp[last] - rowp[base] > long_min;
#else
    const int may_long = 0;
#endif
    VEC_T y[NRHS];
    for (int j = 0; j < NRHS; ++j) y[j] = 0;
    // Windows [w, we) over the tile's entries, never inside a long row: w skips the long rows
    // that start at it, we stops at the next long row (r: the first row of w's run of short
    // rows, the same in the whole group).
    int r = 0;
    while (may_long && r < cnt && long_row[r]) ++r;
    IDX_T w = rowp[base + r];
    const IDX_T e = rowp[last];
    while (w < e) {  // same trip count for the group
      int rb = r;
      while (may_long && rb < cnt && !long_row[rb]) ++rb;
      const IDX_T stop = may_long ? rowp[base + rb] : e;  // the next long row's first entry
      const IDX_T we = stop - w < TILE ? stop : w + TILE;
      for (IDX_T k = w + lid; k < we; k += WG) {
        const VAL_T a = val[k];
        const OFF_T c = (OFF_T)col[k] * NRHS;
        for (int j = 0; j < NRHS; ++j) prod[(k - w) * NRHS + j] = a * v[c + j];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (!mine_long) {
        const IDX_T k1 = re < we ? re : we;
        for (IDX_T k = rs > w ? rs : w; k < k1; ++k)
          for (int j = 0; j < NRHS; ++j) y[j] += prod[(k - w) * NRHS + j];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      w = we;
      if (may_long && we == stop) {  // at a long row (or the tile's end): skip the long rows
        r = rb;
        while (r < cnt && long_row[r]) ++r;
        w = r < cnt ? rowp[base + r] : e;
      }  // else w is inside the same run of short rows: r still starts it
    }
    if (i < last) {
      if (mine_long) sum_pieces(i, n_long, lrow, psum, y);
      row_epilogue(mode, i, y, run, out, p, b, d, acc0, acc1);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // long_row is rewritten by the next tile
  }
#elif FMT == 1 && CSR_W == 0
  // Several right-hand sides: the windowed loop above keeps y[NRHS] live across its barriers,
  // which PoCL got wrong here (k = 3: rows summed to 0, test_long_rows with rule 100; NVIDIA's
  // OpenCL passed the k = 3 suites, run 83), so a tile is staged only when it fits, as before.
  // CSR stream (short rows on GPUs): the group's WG rows form a tile whose entries are read
  // with consecutive work-items (coalesced), their products staged in local memory, then each
  // work-item sums its own row from there. Tiles with more than TILE entries fall back to one
  // work-item per row reading global memory.
  __local VEC_T prod[TILE * NRHS];
  for (int base = start; base < end; base += WG) {  // same trip count for the group
    const int last = min(base + WG, end);
    const IDX_T s = rowp[base], e = rowp[last];
    const int fits = e - s <= TILE;
    if (fits) {
      for (IDX_T k = s + lid; k < e; k += WG) {
        const VAL_T a = val[k];
        const OFF_T c = (OFF_T)col[k] * NRHS;
        for (int j = 0; j < NRHS; ++j) prod[(k - s) * NRHS + j] = a * v[c + j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int i = base + lid;
    if (i < last) {
      VEC_T y[NRHS];
      for (int j = 0; j < NRHS; ++j) y[j] = 0;
      const IDX_T rs = rowp[i], re = rowp[i + 1];
      if (IS_LONG(re - rs)) {
        sum_pieces(i, n_long, lrow, psum, y);  // staged products of the row, if any, unused
      } else if (fits) {
        for (IDX_T k = rs; k < re; ++k)
          for (int j = 0; j < NRHS; ++j) y[j] += prod[(k - s) * NRHS + j];
      } else {
        for (IDX_T k = rs; k < re; ++k) {
          const VAL_T a = val[k];
          const OFF_T c = (OFF_T)col[k] * NRHS;
          for (int j = 0; j < NRHS; ++j) y[j] += a * v[c + j];
        }
      }
      ROW_DONE(i, y);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    TILE_DONE(last);
  }
#elif FMT == 1
  __local VEC_T lanes[WG];
  const int lane = lid % CSR_W;
  for (int base = start; base < end; base += WG / CSR_W) {  // same trip count for the group
    const int i = base + lid / CSR_W;
    VEC_T y[NRHS];
    for (int j = 0; j < NRHS; ++j) y[j] = 0;
    if (i < end) {
      const IDX_T s = rowp[i], e = rowp[i + 1];
      if (IS_LONG(e - s)) {
        if (lane == 0) sum_pieces(i, n_long, lrow, psum, y);  // the other lanes add zeros
      } else {
        for (IDX_T k = s + lane; k < e; k += CSR_W) {
          const VAL_T a = val[k];
          const OFF_T c = (OFF_T)col[k] * NRHS;
          for (int j = 0; j < NRHS; ++j) y[j] += a * v[c + j];
        }
      }
    }
    for (int j = 0; j < NRHS; ++j) {
      lanes[lid] = y[j];
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lane == 0) {
        VEC_T s = lanes[lid];
        for (int l = 1; l < CSR_W; ++l) s += lanes[lid + l];
        y[j] = s;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < end && lane == 0) ROW_DONE(i, y);
    TILE_DONE(min(base + WG / CSR_W, end));
  }
#elif FMT == 3
  // A value's (re, im) in one load (16 bytes in double; every buffer is a whole cl_mem, aligned
  // far beyond that), and with one system x's pair too. The lanes' sums meet in local memory, in two buffers used in
  // turn: one barrier a sum instead of two (a buffer is written again only after the barrier
  // that follows its reads).
#define ZPASTE(t) t##2
#define ZPAIR(t) ZPASTE(t)
#if CSR_W > 1
  __local VEC_T lanes[2][2 * WG];
  int buf = 0;
#endif
  const int lane = lid % CSR_W;
  for (int base = start; base < end; base += WG / CSR_W) {  // same trip count for the group
    const int i = base + lid / CSR_W;
    VEC_T yr[NRHS], yi[NRHS];
    for (int j = 0; j < NRHS; ++j) yr[j] = yi[j] = 0;
    if (i < end) {
      const IDX_T e = rowp[i + 1];
      for (IDX_T k = rowp[i] + lane; k < e; k += CSR_W) {
        const ZPAIR(VAL_T) a = ((__global const ZPAIR(VAL_T)*)val)[k];
#if NRHS == 1
        const ZPAIR(VEC_T) x = ((__global const ZPAIR(VEC_T)*)v)[col[k]];
        yr[0] += a.x * x.x - a.y * x.y;
        yi[0] += a.x * x.y + a.y * x.x;
#else
        const OFF_T c = (OFF_T)col[k] * (2 * NRHS);
        for (int j = 0; j < NRHS; ++j) {
          const VEC_T xr = v[c + j], xi = v[c + NRHS + j];
          yr[j] += a.x * xr - a.y * xi;
          yi[j] += a.x * xi + a.y * xr;
        }
#endif
      }
    }
#if CSR_W > 1
    for (int j = 0; j < NRHS; ++j) {
      __local VEC_T* l = lanes[buf];
      buf ^= 1;
      l[lid] = yr[j];
      l[WG + lid] = yi[j];
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lane == 0) {
        VEC_T sr = l[lid], si = l[WG + lid];
        for (int q = 1; q < CSR_W; ++q) sr += l[lid + q], si += l[WG + lid + q];
        yr[j] = sr, yi[j] = si;
      }
    }
#endif
    if (i < end && lane == 0) {
      row_epilogue(mode, 2 * i, yr, run, out, p, b, d, acc0, acc1);
      row_epilogue(mode, 2 * i + 1, yi, run, out, p, b, d, acc0, acc1);
    }
  }
#elif FMT == SELL_C
  // SELL: units are rows (n_padded, a multiple of SELL_C; range chunks are multiples of 64, so
  // a group's range starts on a slice). One work-item per row; lanes l of a slice read entry t
  // at slice_ptr[s] + t*SELL_C + l, consecutive across the slice (coalesced). SELL_U entries are
  // loaded before any is used (loads in flight); the sum still runs in entry order, as on the CPU.
#ifndef SELL_U
#define SELL_U 8
#endif
  for (int base = start; base < end; base += WG) {  // same trip count for the group
    const int i = base + lid;
    if (i < end) {
      VEC_T y[NRHS];
      for (int j = 0; j < NRHS; ++j) y[j] = 0;
      const int s = i / SELL_C;
      const IDX_T e = rowp[s + 1];
      IDX_T k = rowp[s] + i % SELL_C;
      for (; k < e - (SELL_U - 1) * SELL_C; k += SELL_U * SELL_C) {  // no overflow near INT_MAX
        VEC_T a[SELL_U];
        OFF_T c[SELL_U];
        for (int u = 0; u < SELL_U; ++u) {
          a[u] = val[k + u * SELL_C];
          c[u] = (OFF_T)col[k + u * SELL_C] * NRHS;
        }
        for (int u = 0; u < SELL_U; ++u)
          for (int j = 0; j < NRHS; ++j) y[j] += a[u] * v[c[u] + j];
      }
      for (; k < e; k += SELL_C) {
        const VEC_T a = val[k];
        const OFF_T c = (OFF_T)col[k] * NRHS;
        for (int j = 0; j < NRHS; ++j) y[j] += a * v[c + j];
      }
      ROW_DONE(i, y);
    }
    TILE_DONE(min(base + WG, end));
  }
#else
#define B FMT
  for (int br = start + lid; br < end; br += WG) {
    VEC_T y[B][NRHS];
    for (int r = 0; r < B; ++r)
      for (int j = 0; j < NRHS; ++j) y[r][j] = 0;
    const IDX_T e = rowp[br + 1];
    for (IDX_T k = rowp[br]; k < e; ++k) {
      const OFF_T c = (OFF_T)col[k] * (B * NRHS);
      VEC_T xv[B][NRHS];  // x values of the block, loaded once, used by every row
      for (int cc = 0; cc < B; ++cc)
        for (int j = 0; j < NRHS; ++j) xv[cc][j] = v[c + cc * NRHS + j];
      __global const VAL_T* blk = val + k * (B * B);
      for (int r = 0; r < B; ++r)
        for (int cc = 0; cc < B; ++cc) {
          const VAL_T a = blk[r * B + cc];
          for (int j = 0; j < NRHS; ++j) y[r][j] += a * xv[cc][j];
        }
    }
    for (int r = 0; r < B; ++r)
      row_epilogue(mode, br * B + r, y[r], run, out, p, b, d, acc0, acc1);
  }
#undef B
#endif

  const int groups = get_num_groups(0), g = get_group_id(0);
#if STAGE || COLS
  {
    const int j = lid % NRHS;
    const ACC_T s0 = slot_sum(sacc0, scratch);
    const ACC_T s1 = slot_sum(sacc1, scratch);
    if (lid < NRHS && mode == MODE_DOT && run_j) part[j * groups + g] = s0;
    if (lid < NRHS && mode == MODE_INIT) {
      part[(2 * j) * groups + g] = s0;
      part[(2 * j + 1) * groups + g] = s1;
    }
  }
#else
  for (int j = 0; j < NRHS; ++j) {
    const ACC_T s0 = wg_sum(acc0[j], scratch);
    const ACC_T s1 = wg_sum(acc1[j], scratch);
    if (lid == 0 && mode == MODE_DOT && run[j]) part[j * groups + g] = s0;
    if (lid == 0 && mode == MODE_INIT) {
      part[(2 * j) * groups + g] = s0;
      part[(2 * j + 1) * groups + g] = s1;
    }
  }
#endif
}

#if FMT == 1 && LONG_ROWS
// The pieces of the long rows (pieces: begin and end entry of each), PIECE_L lanes a piece, each
// lane's strided sum then a fixed tree over the lanes: psum[piece * NRHS + j]. Computes every
// system (spmv_fused uses the running ones); nothing in a MODE_DOT launch with none running.
#define PIECE_L (WG < 32 ? WG : 32)
__kernel void csr_pieces(int mode, int n_pieces, __global const IDX_T* pieces,
                         __global const int* col, __global const VAL_T* val,
                         __global const VEC_T* v, __global const rhs_state* st,
                         __global VEC_T* psum) {
  __local VEC_T lanes[WG];
  __local int lstat[NRHS];
  const int lid = get_local_id(0), lane = lid % PIECE_L;
  const int any = snapshot_status(st, lstat);  // barriers: reached by every work-item
  const int count = mode == MODE_DOT && !any ? 0 : n_pieces;
  const int per = WG / PIECE_L, stride = get_num_groups(0) * per;
  for (int base = get_group_id(0) * per; base < count; base += stride) {  // same trips
    const int pc = base + lid / PIECE_L;
    VEC_T y[NRHS];
    for (int j = 0; j < NRHS; ++j) y[j] = 0;
    if (pc < count) {
      const IDX_T e = pieces[2 * (long)pc + 1];
      for (IDX_T k = pieces[2 * (long)pc] + lane; k < e; k += PIECE_L) {
        const VEC_T a = val[k];
        const OFF_T c = (OFF_T)col[k] * NRHS;
        for (int j = 0; j < NRHS; ++j) y[j] += a * v[c + j];
      }
    }
#if PIECE_L == 1
    if (pc < count)  // one work-item a group (CPUs): no lanes to sum, no barrier in the loop
      for (int j = 0; j < NRHS; ++j) psum[(long)pc * NRHS + j] = y[j];
#else
    for (int j = 0; j < NRHS; ++j) {
      lanes[lid] = y[j];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int off = PIECE_L / 2; off > 0; off >>= 1) {
        if (lane < off) lanes[lid] += lanes[lid + off];
        barrier(CLK_LOCAL_MEM_FENCE);
      }
      if (lane == 0 && pc < count) psum[(long)pc * NRHS + j] = lanes[lid];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
  }
}
#endif

#if FMT == SELL_C && HAS_FP64
// CSR -> SELL on the device, the host's layout (conversion/convert.cpp csr_to_sell) bit for bit:
// the host computes slice_ptr (sell_slice_offsets) and uploads the canonical CSR as it is; one
// work-item per padded row writes its entries, then its padding (value 0, own row as column),
// at stride SELL_C. Rows past n are identity rows. Values are converted to VAL_T here.
__kernel void sell_fill(int n, int n_padded, __global const long* row_ptr,
                        __global const int* csr_col, __global const double* csr_val,
                        __global const IDX_T* slice_ptr, __global int* scol,
                        __global VAL_T* sval) {
  const int i = get_global_id(0);
  if (i >= n_padded) return;
  const int s = i / SELL_C;
  const IDX_T base = slice_ptr[s] + i % SELL_C;
  const IDX_T w = (slice_ptr[s + 1] - slice_ptr[s]) / SELL_C;
  IDX_T t = 0;
  if (i < n) {
    for (long e = row_ptr[i]; e < row_ptr[i + 1]; ++e, ++t) {
      scol[base + t * SELL_C] = csr_col[e];
      sval[base + t * SELL_C] = (VAL_T)csr_val[e];
    }
  } else {
    scol[base] = i;
    sval[base] = (VAL_T)1;
    t = 1;
  }
  for (; t < w; ++t) {
    scol[base + t * SELL_C] = i;
    sval[base + t * SELL_C] = (VAL_T)0;
  }
}
#endif
