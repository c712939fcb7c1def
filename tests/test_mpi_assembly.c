/* libcnc_mpi's state machine (cncMPIBegin ... cncMPISolve) against libcnc's one-process state
 * machine (cncBegin ... cncSolve) assembling the same system, on however many ranks mpiexec
 * starts (CTest runs 1, 2, 3 and 4): entries (each given in two halves), the bulk call and rows;
 * even and uneven row blocks and a rank owning no rows; locked variables at every block boundary
 * (so that locked columns owned by one rank sit in other ranks' rows) with values that differ
 * between systems; two and three right-hand sides; a symmetric matrix (CG) and a nonsymmetric one
 * (BiCGSTAB: a locked column must move to the right-hand side as a_ij, not a_ji); a second solve
 * after cncMPISetRightHandSide. Each: the same iterations (within one), x within rounding of the
 * one-process x (gathered on rank 0), the same statistics on every rank. Then bad input on one
 * rank (another rank's row, NaN, a column past n, a call in the wrong state, blocks that do not
 * tile, a missing End(SYSTEM), ranks in different collective calls) answered with the same status
 * on every rank, and the context usable afterwards. With --host-alloc-fault, only a host
 * allocation failing on the last rank (host_alloc_fault_case). Not cmocka: failed checks are
 * counted and summed at the end. */
#include <cnc.h>
#include <cnc_mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_support.h"

/* The system: a 5-point stencil on nx x ny (conv > 0: upwind convection along x, nonsymmetric). */
typedef struct {
  int nx, ny;
  double conv;
} grid;
static CNCuint grid_n(grid g) { return (CNCuint)(g.nx * g.ny); }
/* Row i's entries: up to 5 (columns, values); returns the count. */
static int row_entries(grid g, CNCuint i, CNCuint* col, double* val) {
  const int x = (int)i % g.nx, y = (int)i / g.nx;
  int e = 0;
  if (y > 0) col[e] = i - (CNCuint)g.nx, val[e++] = -1.0;
  if (x > 0) col[e] = i - 1, val[e++] = -1.0 - g.conv;
  col[e] = i, val[e++] = 4.0 + g.conv;
  if (x + 1 < g.nx) col[e] = i + 1, val[e++] = -1.0;
  if (y + 1 < g.ny) col[e] = i + (CNCuint)g.nx, val[e++] = -1.0;
  return e;
}
static double rhs(CNCuint i, CNCuint k, double scale) {
  return scale * (k == 0 ? 1.0 : k == 1 ? sin(0.01 * i) + 0.5 : cos(0.003 * i));
}
/* Locked: the first row of every rank's block and its last, and every 23rd variable. */
static int is_locked(CNCuint i, CNCuint n, split_kind kind) {
  if (i % 23 == 7) return 1;
  for (int r = 0; r < size; ++r) {
    CNCuint r0, r1;
    rows_of(r, n, kind, &r0, &r1);
    if (r1 > r0 && (i == r0 || i == r1 - 1)) return 1;
  }
  return 0;
}
static double locked_value(CNCuint i, CNCuint k) {
  return k == 0 ? 0.5 + 0.001 * i : k == 1 ? 1.0 - 0.002 * i : -0.25;
}

typedef struct {
  CNCint iterations, reason;
  double true_error;
} outcome;

/* The one-process reference: libcnc's state machine, CPU backend, one thread, natural order. */
static outcome reference(grid g, split_kind kind, int locks, int solver, CNCuint nrhs, double scale,
                         double* x) {
  const CNCuint n = grid_n(g);
  outcome o = {0, 0, 0};
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
  cncSolverParameteri(CNC_NB_THREADS, 1);
  cncSolverParameteri(CNC_SOLVER, solver);
  cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_JACOBI);
  cncSolverParameteri(CNC_REORDER, CNC_REORDER_NONE);
  cncSolverParameterd(CNC_THRESHOLD, 1e-10);
  cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)n);
  cncSolverParameteri(CNC_NB_SYSTEMS, (CNCint)nrhs);
  cncBegin(CNC_SYSTEM);
  for (CNCuint i = 0; i < n; ++i)
    if (locks && is_locked(i, n, kind)) {
      for (CNCuint k = 0; k < nrhs; ++k) cncMultiSetVariable(i, k, locked_value(i, k));
      cncLockVariable(i);
    }
  cncBegin(CNC_MATRIX);
  for (CNCuint i = 0; i < n; ++i) {
    CNCuint col[5];
    double val[5];
    const int m = row_entries(g, i, col, val);
    for (int e = 0; e < m; ++e) cncAddIJCoefficient(i, col[e], val[e]);
    for (CNCuint k = 0; k < nrhs; ++k) cncMultiAddIRightHandSide(i, k, rhs(i, k, scale));
  }
  cncEnd(CNC_MATRIX);
  cncEnd(CNC_SYSTEM);
  const CNCstatus s = cncSolve();
  CHECK(s == CNC_OK, "reference cncSolve: %s", cncGetErrorMessage());
  cncGetIntegerv(CNC_USED_ITERATIONS, &o.iterations);
  cncGetIntegerv(CNC_REASON, &o.reason);
  cncGetDoublev(CNC_TRUE_ERROR, &o.true_error);
  for (CNCuint k = 0; k < nrhs; ++k)
    for (CNCuint i = 0; i < n; ++i) cncMultiGetVariable(i, k, &x[(size_t)k * n + i]);
  cncDeleteContext(c);
  return o;
}

typedef enum { by_entries, by_bulk, by_rows } assembly_kind;

/* This rank's rows assembled into c (states MATRIX .. MATRIX, the caller begins and ends). */
static void assemble(CNCMPIcontext c, grid g, CNCuint r0, CNCuint r1, assembly_kind how,
                     CNCuint nrhs, double scale) {
  CNCuint col[5];
  double val[5];
  if (how == by_bulk) {
    const size_t cap = (size_t)(r1 - r0) * 5 + 1;
    CNCuint* bi = calloc(cap, sizeof(CNCuint));
    CNCuint* bj = calloc(cap, sizeof(CNCuint));
    double* bv = calloc(cap, sizeof(double));
    CNCint64 count = 0;
    for (CNCuint i = r1; i-- > r0;) { /* rows backwards: order does not matter */
      const int m = row_entries(g, i, col, val);
      for (int e = 0; e < m; ++e) bi[count] = i, bj[count] = col[e], bv[count++] = val[e];
    }
    CHECK(cncMPIAddIJCoefficients(c, count, bi, bj, bv) == CNC_OK, "bulk: %s",
          cncMPIGetErrorMessage(c));
    for (CNCuint i = r0; i < r1; ++i)
      for (CNCuint k = 0; k < nrhs; ++k) cncMPIMultiAddIRightHandSide(c, i, k, rhs(i, k, scale));
    free(bi), free(bj), free(bv);
    return;
  }
  for (CNCuint i = r0; i < r1; ++i) {
    const int m = row_entries(g, i, col, val);
    if (how == by_rows) {
      CHECK(cncMPIBegin(c, CNC_ROW) == CNC_OK, "Begin(ROW): %s", cncMPIGetErrorMessage(c));
      for (int e = m; e-- > 0;) cncMPICoefficient(c, col[e], val[e]);
      for (CNCuint k = 0; k < nrhs; ++k) cncMPIMultiRightHandSide(c, k, rhs(i, k, scale));
      CHECK(cncMPIEnd(c, CNC_ROW) == CNC_OK, "End(ROW): %s", cncMPIGetErrorMessage(c));
    } else {
      for (int e = 0; e < m; ++e) { /* in two halves: duplicates are summed */
        CHECK(cncMPIAddIJCoefficient(c, i, col[e], 0.25 * val[e]) == CNC_OK, "%s",
              cncMPIGetErrorMessage(c));
        cncMPIAddIJCoefficient(c, i, col[e], 0.75 * val[e]);
      }
      for (CNCuint k = 0; k < nrhs; ++k) cncMPIMultiAddIRightHandSide(c, i, k, rhs(i, k, scale));
    }
  }
}

/* x (this rank's rows of every system) against the reference, gathered on rank 0. */
static void compare_x(const char* name, CNCMPIcontext c, CNCuint n, CNCuint r0, CNCuint r1,
                      CNCuint nrhs, const double* xref, outcome o, outcome ref) {
  const int rows = (int)(r1 - r0);
  double* xl = malloc(sizeof(double) * ((size_t)rows + 1));
  double* xall = malloc(sizeof(double) * n);
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  MPI_Gather(&rows, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    displs[0] = 0;
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  }
  double worst = 0, top = 0;
  for (CNCuint k = 0; k < nrhs; ++k) {
    CHECK(cncMPIGetVariables(c, k, xl) == CNC_OK, "%s", cncMPIGetErrorMessage(c));
    if (rows > 0) { /* one variable also read alone */
      double v = 0;
      cncMPIMultiGetVariable(c, r1 - 1, k, &v);
      CHECK(v == xl[rows - 1], "%s: cncMPIMultiGetVariable %g, cncMPIGetVariables %g", name, v,
            xl[rows - 1]);
    }
    MPI_Gatherv(xl, rows, MPI_DOUBLE, xall, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0)
      for (CNCuint i = 0; i < n; ++i) {
        worst = fmax(worst, fabs(xall[i] - xref[(size_t)k * n + i]));
        top = fmax(top, fabs(xref[(size_t)k * n + i]));
      }
  }
  CHECK(o.reason == CNC_REASON_CONVERGED, "%s: reason %#x", name, o.reason);
  CHECK(abs(o.iterations - ref.iterations) <= 1, "%s: %d iterations, one process %d", name,
        o.iterations, ref.iterations);
  if (rank == 0) {
    CHECK(worst <= 1e-9 * top, "%s: max |x - x_ref| = %g (max |x_ref| = %g)", name, worst, top);
    printf(
        "%-34s ranks %d: %3d iterations (one process %3d), max |x - x_ref| / max |x_ref| = "
        "%.2e\n",
        name, size, o.iterations, ref.iterations, worst / top);
  }
  free(xl), free(xall), free(counts), free(displs);
}

static outcome read_outcome(CNCMPIcontext c, const char* name) {
  outcome o;
  memset(&o, 0, sizeof o); /* compared bytewise between ranks: padding included */
  cncMPIGetIntegerv(c, CNC_USED_ITERATIONS, &o.iterations);
  cncMPIGetIntegerv(c, CNC_REASON, &o.reason);
  cncMPIGetDoublev(c, CNC_TRUE_ERROR, &o.true_error);
  check_same_everywhere(&o, (int)sizeof o, name);
  return o;
}

/* The distributed state machine on grid g against the one-process one. */
static void assembly_case(const char* name, grid g, split_kind kind, assembly_kind how, int locks,
                          int solver, CNCuint nrhs) {
  const CNCuint n = grid_n(g);
  double* xref = malloc(sizeof(double) * n * nrhs);
  const outcome ref = reference(g, kind, locks, solver, nrhs, 1.0, xref);
  CNCuint r0, r1;
  rows_of(rank, n, kind, &r0, &r1);
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  CHECK(c != NULL, "%s: cncMPINewContext", name);
  cncMPISolverParameteri(c, CNC_SOLVER, solver);
  cncMPISolverParameteri(c, CNC_NB_THREADS, 1);
  cncMPISolverParameterd(c, CNC_THRESHOLD, 1e-10);
  CHECK(cncMPISolverParameteri(c, CNC_NB_SYSTEMS, (CNCint)nrhs) == CNC_OK, "%s",
        cncMPIGetErrorMessage(c));
  CHECK(cncMPISetRows(c, n, r0, r1) == CNC_OK, "%s", cncMPIGetErrorMessage(c));
  CNCstatus s = cncMPIBegin(c, CNC_SYSTEM);
  CHECK(s == CNC_OK, "%s: Begin(SYSTEM): %s", name, cncMPIGetErrorMessage(c));
  CHECK(cncMPISolverParameteri(c, CNC_NB_SYSTEMS, 1) == CNC_ERR_STATE,
        "CNC_NB_SYSTEMS after Begin(SYSTEM)");
  for (CNCuint i = r0; i < r1; ++i)
    if (locks && is_locked(i, n, kind)) {
      for (CNCuint k = 0; k < nrhs; ++k) cncMPIMultiSetVariable(c, i, k, locked_value(i, k));
      CHECK(cncMPILockVariable(c, i) == CNC_OK, "%s", cncMPIGetErrorMessage(c));
    }
  CHECK(cncMPIBegin(c, CNC_MATRIX) == CNC_OK, "%s", cncMPIGetErrorMessage(c));
  assemble(c, g, r0, r1, how, nrhs, 1.0);
  s = cncMPIEnd(c, CNC_MATRIX);
  CHECK(s == CNC_OK, "%s: End(MATRIX): %s", name, cncMPIGetErrorMessage(c));
  CHECK(cncMPIEnd(c, CNC_SYSTEM) == CNC_OK, "%s", cncMPIGetErrorMessage(c));
  s = cncMPISolve(c);
  CHECK(s == CNC_OK, "%s: cncMPISolve: %s", name, cncMPIGetErrorMessage(c));
  CNCint state = 0;
  cncMPIGetIntegerv(c, CNC_STATE, &state);
  CHECK(state == CNC_STATE_SOLVED, "%s: state %#x", name, state);
  compare_x(name, c, n, r0, r1, nrhs, xref, read_outcome(c, name), ref);
  if (rank == 0 && locks) { /* locked values kept */
    double v = 0;
    CNCboolean l = CNC_FALSE;
    if (r1 > r0) {
      cncMPIVariableIsLocked(c, r0, &l);
      cncMPIGetVariable(c, r0, &v);
      CHECK(l == CNC_TRUE && v == locked_value(r0, 0), "%s: locked %d, value %g", name, l, v);
    }
  }

  /* The same matrix, new right-hand sides (3 b), the free variables' initial guess 0 again (the
   * locked ones keep their values): as a one-process solve of 3 b. */
  double* bl = malloc(sizeof(double) * ((size_t)(r1 - r0) + 1));
  for (CNCuint k = 0; k < nrhs; ++k) {
    for (CNCuint i = r0; i < r1; ++i) bl[i - r0] = rhs(i, k, 3.0);
    CHECK(cncMPISetRightHandSide(c, k, bl) == CNC_OK, "%s", cncMPIGetErrorMessage(c));
    for (CNCuint i = r0; i < r1; ++i)
      if (!(locks && is_locked(i, n, kind))) cncMPIMultiSetVariable(c, i, k, 0.0);
  }
  const outcome ref3 = reference(g, kind, locks, solver, nrhs, 3.0, xref);
  s = cncMPISolve(c);
  CHECK(s == CNC_OK, "%s, 3 b: cncMPISolve: %s", name, cncMPIGetErrorMessage(c));
  char again[64];
  snprintf(again, sizeof again, "%s, 3 b", name);
  compare_x(again, c, n, r0, r1, nrhs, xref, read_outcome(c, again), ref3);
  cncMPIDeleteContext(c);
  free(xref), free(bl);
}

/* Bad input on `bad_rank` at one stage: 0 before Begin(SYSTEM), 1 during the matrix, 2 instead
 * of End(SYSTEM). The first collective call that fails must fail on every rank with `expected`,
 * naming the bad rank; x is not written. */
typedef void (*spoil_fn)(CNCMPIcontext c, int stage, CNCuint n, CNCuint* r0, CNCuint* r1,
                         int* skip);
static void bad_case(const char* name, int bad_rank, spoil_fn spoil, CNCstatus expected) {
  const grid g = {12, 12, 0.0};
  const CNCuint n = grid_n(g);
  CNCuint r0, r1;
  rows_of(rank, n, split_even, &r0, &r1);
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  int skip = 0;
  const int bad = rank == bad_rank;
  if (bad) spoil(c, 0, n, &r0, &r1, &skip);
  cncMPISetRows(c, n, r0, r1);
  CNCstatus s = cncMPIBegin(c, CNC_SYSTEM);
  const char* where = "Begin(SYSTEM)";
  if (s == CNC_OK) {
    cncMPIBegin(c, CNC_MATRIX);
    assemble(c, g, r0, r1, by_entries, 1, 1.0);
    if (bad) spoil(c, 1, n, &r0, &r1, &skip);
    s = cncMPIEnd(c, CNC_MATRIX);
    where = "End(MATRIX)";
  }
  if (s == CNC_OK) {
    for (CNCuint i = r0; i < r1; ++i) cncMPISetVariable(c, i, 42.0);
    if (bad) spoil(c, 2, n, &r0, &r1, &skip);
    if (!skip) cncMPIEnd(c, CNC_SYSTEM);
    s = cncMPISolve(c);
    where = "cncMPISolve";
    for (CNCuint i = r0; i < r1 && s != CNC_OK; ++i) {
      double v = 0;
      cncMPIGetVariable(c, i, &v);
      CHECK(v == 42.0, "%s: x[%u] written", name, i);
    }
  }
  CHECK(s == expected, "%s: status %d at %s, expected %d (%s)", name, s, where, expected,
        cncMPIGetErrorMessage(c));
  check_same_everywhere(&s, (int)sizeof s, name);
  char want[32];
  snprintf(want, sizeof want, "rank %d", bad_rank);
  const char* msg = cncMPIGetErrorMessage(c);
  CHECK(strstr(msg, want) != NULL || strstr(msg, "tile") != NULL, "%s: message '%s'", name, msg);
  if (rank == 0) printf("%-34s ranks %d: status %d on every rank: %s\n", name, size, s, msg);
  cncMPIDeleteContext(c);
}

static void other_rows(CNCMPIcontext c, int stage, CNCuint n, CNCuint* r0, CNCuint* r1, int* skip) {
  (void)skip;
  /* A row of the next rank (of rank 0 from the last; past n on one rank). */
  const CNCuint i = size == 1 ? n : *r1 < n ? *r1 : 0;
  if (stage == 1)
    CHECK(cncMPIAddIJCoefficient(c, i, 0, 1.0) == CNC_ERR_INDEX_OUT_OF_RANGE,
          "another rank's row: %s", cncMPIGetErrorMessage(c));
  (void)r0;
}
static void nan_value(CNCMPIcontext c, int stage, CNCuint n, CNCuint* r0, CNCuint* r1, int* skip) {
  (void)n, (void)r1, (void)skip;
  if (stage == 1)
    CHECK(cncMPIAddIJCoefficient(c, *r0, *r0, NAN) == CNC_ERR_NOT_FINITE, "NaN: %s",
          cncMPIGetErrorMessage(c));
}
static void column_past_n(CNCMPIcontext c, int stage, CNCuint n, CNCuint* r0, CNCuint* r1,
                          int* skip) {
  (void)r1, (void)skip;
  if (stage == 1) {
    const CNCuint i[2] = {*r0, *r0}, j[2] = {*r0, n};
    const double v[2] = {1.0, 1.0};
    CHECK(cncMPIAddIJCoefficients(c, 2, i, j, v) == CNC_ERR_INDEX_OUT_OF_RANGE, "j = n: %s",
          cncMPIGetErrorMessage(c));
  }
}
static void wrong_state(CNCMPIcontext c, int stage, CNCuint n, CNCuint* r0, CNCuint* r1,
                        int* skip) {
  (void)n, (void)r1, (void)skip;
  if (stage == 1) /* locks only in the SYSTEM state */
    CHECK(cncMPILockVariable(c, *r0) == CNC_ERR_STATE, "lock in MATRIX: %s",
          cncMPIGetErrorMessage(c));
}
static void no_tiling(CNCMPIcontext c, int stage, CNCuint n, CNCuint* r0, CNCuint* r1, int* skip) {
  (void)c, (void)n, (void)r0, (void)skip;
  if (stage == 0) --*r1; /* a gap before the next rank, or short of n */
}
static void no_end_system(CNCMPIcontext c, int stage, CNCuint n, CNCuint* r0, CNCuint* r1,
                          int* skip) {
  (void)c, (void)n, (void)r0, (void)r1;
  if (stage == 2) *skip = 1; /* cncMPISolve in MATRIX_CONSTRUCTED */
}

/* The fault run (--host-alloc-fault; CTest sets CNC_FAULT_INJECT=host-alloc:N on the last rank
 * alone): one host reservation of a collective stage fails on that rank. The call must fail on
 * every rank with its CNC_ERR_OUT_OF_MEMORY, naming it (no rank waits in a collective), and
 * succeed when made again; exactly one call fails, whichever stage N reaches. */
static int fault_run, faults_seen;
static int injected(CNCMPIcontext c, CNCstatus s, const char* call) {
  if (!fault_run || s == CNC_OK) return 0;
  check_same_everywhere(&s, (int)sizeof s, call);
  const char* msg = cncMPIGetErrorMessage(c);
  char want[32];
  snprintf(want, sizeof want, "rank %d", size - 1);
  CHECK(s == CNC_ERR_OUT_OF_MEMORY && strstr(msg, want) && strstr(msg, "CNC_FAULT_INJECT"),
        "%s: status %d (%s)", call, s, msg);
  if (rank == 0) printf("%-34s ranks %d: status %d on every rank: %s\n", call, size, s, msg);
  ++faults_seen;
  return 1;
}

/* What the cases of a failed collective call share: the 10 x 10 Poisson grid with locks, split
 * `kind`, its one-process reference (CG, one system), this rank's rows and a context (one thread,
 * threshold 1e-10). Each case sets the rows and begins the system its own way. */
typedef struct {
  grid g;
  split_kind kind;
  CNCuint n, r0, r1;
  double* xref;
  outcome ref;
  CNCMPIcontext c;
} small_case;
static small_case small_case_new(split_kind kind) {
  small_case t;
  t.g = (grid){10, 10, 0.0};
  t.kind = kind;
  t.n = grid_n(t.g);
  t.xref = malloc(sizeof(double) * t.n);
  t.ref = reference(t.g, kind, 1, CNC_CG, 1, 1.0, t.xref);
  rows_of(rank, t.n, kind, &t.r0, &t.r1);
  t.c = cncMPINewContext(MPI_COMM_WORLD);
  cncMPISolverParameteri(t.c, CNC_NB_THREADS, 1);
  cncMPISolverParameterd(t.c, CNC_THRESHOLD, 1e-10);
  return t;
}
/* State SYSTEM: this rank's locked variables given their values and locked. */
static void small_case_lock(const small_case* t) {
  for (CNCuint i = t->r0; i < t->r1; ++i)
    if (is_locked(i, t->n, t->kind))
      cncMPISetVariable(t->c, i, locked_value(i, 0)), cncMPILockVariable(t->c, i);
}
/* Begin(MATRIX) and this rank's rows (End(MATRIX) is the case's). */
static void small_case_assemble(const small_case* t) {
  cncMPIBegin(t->c, CNC_MATRIX);
  assemble(t->c, t->g, t->r0, t->r1, by_entries, 1, 1.0);
}
/* After End(MATRIX): End(SYSTEM), the solve (made again after an injected failure), x against the
 * reference; the context deleted. `tag` prefixes the messages, `name` the comparison's. */
static void small_case_finish(small_case* t, const char* tag, const char* name) {
  cncMPIEnd(t->c, CNC_SYSTEM);
  CNCstatus s = cncMPISolve(t->c);
  char call[64];
  snprintf(call, sizeof call, "%s: cncMPISolve", tag);
  if (injected(t->c, s, call)) s = cncMPISolve(t->c);
  CHECK(s == CNC_OK, "%s: cncMPISolve %d (%s)", tag, s, cncMPIGetErrorMessage(t->c));
  compare_x(name, t->c, t->n, t->r0, t->r1, 1, t->xref, read_outcome(t->c, tag), t->ref);
  cncMPIDeleteContext(t->c);
  free(t->xref);
}

/* After a refused entry on one rank, End(MATRIX) fails everywhere; the context stays usable:
 * End(MATRIX) again, and the solve, succeed (the refused entry added nothing). */
static void recovery_case(void) {
  small_case t = small_case_new(split_uneven);
  const CNCMPIcontext c = t.c;
  const CNCuint n = t.n, r0 = t.r0;
  cncMPISetRows(c, n, t.r0, t.r1);
  cncMPIBegin(c, CNC_SYSTEM);
  small_case_lock(&t);
  /* Another rank's variable: refused (and reported at the next collective call). */
  if (rank == size - 1) {
    CHECK(cncMPILockVariable(c, r0 > 0 ? 0 : n) == CNC_ERR_INDEX_OUT_OF_RANGE, "lock: %s",
          cncMPIGetErrorMessage(c));
    CHECK(cncMPISetVariable(c, r0 > 0 ? 0 : n, 1.0) == CNC_ERR_INDEX_OUT_OF_RANGE, "set: %s",
          cncMPIGetErrorMessage(c));
  }
  small_case_assemble(&t);
  CNCstatus s = cncMPIEnd(c, CNC_MATRIX);
  CHECK(s == CNC_ERR_INDEX_OUT_OF_RANGE, "recovery: first End(MATRIX) %d (%s)", s,
        cncMPIGetErrorMessage(c));
  check_same_everywhere(&s, (int)sizeof s, "recovery");
  s = cncMPIEnd(c, CNC_MATRIX);
  CHECK(s == CNC_OK, "recovery: second End(MATRIX) %d (%s)", s, cncMPIGetErrorMessage(c));
  small_case_finish(&t, "recovery", "recovery after a refused lock");
}

/* A Begin(SYSTEM) refused everywhere (blocks that do not tile [0, n), made for 2 systems), then
 * other rows and CNC_NB_SYSTEMS: the variables and their locks are made for the new rows (they
 * were kept when rows x systems came out the same, and locks past the old rows were lost). */
static void rows_changed_case(void) {
  small_case t = small_case_new(split_even);
  const CNCMPIcontext c = t.c;
  cncMPISolverParameteri(c, CNC_NB_SYSTEMS, 2);
  cncMPISetRows(c, t.n, t.r0, t.r0 + (t.r1 - t.r0) / 2);
  CNCstatus s = cncMPIBegin(c, CNC_SYSTEM);
  CHECK(s == CNC_ERR_INVALID_VALUE, "rows changed: first Begin %d (%s)", s,
        cncMPIGetErrorMessage(c));
  check_same_everywhere(&s, (int)sizeof s, "rows changed");
  cncMPISolverParameteri(c, CNC_NB_SYSTEMS, 1);
  cncMPISetRows(c, t.n, t.r0, t.r1);
  s = cncMPIBegin(c, CNC_SYSTEM);
  CHECK(s == CNC_OK, "rows changed: second Begin %d (%s)", s, cncMPIGetErrorMessage(c));
  small_case_lock(&t);
  small_case_assemble(&t);
  cncMPIEnd(c, CNC_MATRIX);
  small_case_finish(&t, "rows changed", "rows changed after a refused Begin");
}

/* One rank's host allocation failing in Begin(SYSTEM), End(MATRIX) or cncMPISolve (the fault
 * run): each call is made again after an injected failure; exactly one fails. */
static void host_alloc_fault_case(void) {
  small_case t = small_case_new(split_uneven);
  const CNCMPIcontext c = t.c;
  cncMPISetRows(c, t.n, t.r0, t.r1);
  CNCstatus s = cncMPIBegin(c, CNC_SYSTEM);
  if (injected(c, s, "host-alloc fault: Begin(SYSTEM)")) s = cncMPIBegin(c, CNC_SYSTEM);
  CHECK(s == CNC_OK, "host-alloc fault: Begin(SYSTEM) %d (%s)", s, cncMPIGetErrorMessage(c));
  small_case_lock(&t);
  small_case_assemble(&t);
  s = cncMPIEnd(c, CNC_MATRIX);
  if (injected(c, s, "host-alloc fault: End(MATRIX)")) s = cncMPIEnd(c, CNC_MATRIX);
  CHECK(s == CNC_OK, "host-alloc fault: End(MATRIX) %d (%s)", s, cncMPIGetErrorMessage(c));
  small_case_finish(&t, "host-alloc fault", "after one rank's failed allocation");
  CHECK(faults_seen == 1, "host-alloc fault: %d calls failed, expected 1", faults_seen);
}

/* The last rank calls cncMPISolve while the others call cncMPIEnd(CNC_MATRIX): the calls meet
 * and fail on every rank (no rank waits), nothing changes, and End(MATRIX) then succeeds. */
static void mismatched_calls_case(void) {
  if (size == 1) return;
  const grid g = {8, 8, 0.0};
  const CNCuint n = grid_n(g);
  CNCuint r0, r1;
  rows_of(rank, n, split_even, &r0, &r1);
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  cncMPISetRows(c, n, r0, r1);
  cncMPIBegin(c, CNC_SYSTEM);
  cncMPIBegin(c, CNC_MATRIX);
  assemble(c, g, r0, r1, by_entries, 1, 1.0);
  CNCstatus s = rank == size - 1 ? cncMPISolve(c) : cncMPIEnd(c, CNC_MATRIX);
  CHECK(s == CNC_ERR_STATE, "mismatched calls: %d (%s)", s, cncMPIGetErrorMessage(c));
  check_same_everywhere(&s, (int)sizeof s, "mismatched calls");
  if (rank == 0)
    printf("%-34s ranks %d: status %d on every rank: %s\n", "End(MATRIX) against Solve", size, s,
           cncMPIGetErrorMessage(c));
  s = cncMPIEnd(c, CNC_MATRIX);
  CHECK(s == CNC_OK, "mismatched calls, then End(MATRIX): %d (%s)", s, cncMPIGetErrorMessage(c));
  cncMPIDeleteContext(c);
}

/* CNC_NB_SYSTEMS that differs between ranks: refused by Begin(SYSTEM) everywhere. */
static void differing_systems_case(void) {
  if (size == 1) return;
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  CNCuint r0, r1;
  rows_of(rank, 100, split_even, &r0, &r1);
  cncMPISolverParameteri(c, CNC_NB_SYSTEMS, rank == size - 1 ? 2 : 1);
  cncMPISetRows(c, 100, r0, r1);
  const CNCstatus s = cncMPIBegin(c, CNC_SYSTEM);
  CHECK(s == CNC_ERR_INVALID_VALUE, "differing CNC_NB_SYSTEMS: %d (%s)", s,
        cncMPIGetErrorMessage(c));
  check_same_everywhere(&s, (int)sizeof s, "differing CNC_NB_SYSTEMS");
  cncMPIDeleteContext(c);
}

/* The failed checks of every rank, summed; MPI finalized. */
static int finish(void) {
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failed checks on %d ranks\n", total ? "FAIL" : "PASS", total, size);
  MPI_Finalize();
  return total ? 1 : 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  if (argc > 1 && strcmp(argv[1], "--host-alloc-fault") == 0) {
    fault_run = 1;
    host_alloc_fault_case();
    return finish();
  }
  const grid poisson = {40, 30, 0.0}, convection = {30, 30, 1.5};
  assembly_case("entries, even, locks, 2 rhs", poisson, split_even, by_entries, 1, CNC_CG, 2);
  assembly_case("bulk, uneven, locks", poisson, split_uneven, by_bulk, 1, CNC_CG, 1);
  assembly_case("rows, empty rank, locks, 3 rhs", poisson, split_empty_rank, by_rows, 1, CNC_CG, 3);
  assembly_case("entries, uneven, no locks, 2 rhs", poisson, split_uneven, by_entries, 0, CNC_CG,
                2);
  assembly_case("BiCGSTAB, convection, locks", convection, split_uneven, by_bulk, 1, CNC_BICGSTAB,
                2);
  recovery_case();
  rows_changed_case();

  const int last = size - 1;
  bad_case("another rank's row", last, other_rows, CNC_ERR_INDEX_OUT_OF_RANGE);
  bad_case("NaN coefficient", 0, nan_value, CNC_ERR_NOT_FINITE);
  bad_case("column past n (bulk)", last, column_past_n, CNC_ERR_INDEX_OUT_OF_RANGE);
  bad_case("lock in the MATRIX state", last, wrong_state, CNC_ERR_STATE);
  bad_case("blocks that do not tile", 0, no_tiling, CNC_ERR_INVALID_VALUE);
  bad_case("solve without End(SYSTEM)", last, no_end_system, CNC_ERR_STATE);
  differing_systems_case();
  mismatched_calls_case();
  return finish();
}
