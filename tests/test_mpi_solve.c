/* libcnc_mpi (cnc_mpi.h) against the one-process cncSolveCSR, on however many ranks mpiexec
 * starts (CTest runs 1, 2, 3 and 4): the same iteration count (within one; three on CUDA or
 * OpenCL), the same x within rounding (gathered and compared with the one-process solution
 * computed in the same run), the same statistics on every rank; uneven row blocks, a rank owning
 * no rows, 1-based indices, two right-hand sides, BiCGSTAB and GMRES on a nonsymmetric matrix, on
 * the CPU and, where there is a device, on CUDA and OpenCL ranks; and bad input on one rank
 * answered with the same status on every rank (nothing hangs: CTest's timeout would say so).
 * Not cmocka: a failed check is counted, the rank goes on with the same collective calls, and
 * the counts are summed at the end. */
#include <cnc.h>
#include <cnc_mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_support.h"

typedef struct {
  CNCuint n;
  CNCint64* rp;
  CNCuint* col;
  double* val;
} csr;

static csr csr_alloc(CNCuint n, CNCint64 cap) {
  csr a;
  a.n = n;
  a.rp = calloc((size_t)n + 1, sizeof *a.rp);
  a.col = malloc((size_t)cap * sizeof *a.col);
  a.val = malloc((size_t)cap * sizeof *a.val);
  return a;
}
static void csr_free(csr* a) { free(a->rp), free(a->col), free(a->val); }

/* 7-point (nz > 1) or 5-point (nz == 1) Laplacian on an nx x ny x nz grid, Dirichlet. `conv`: a
 * first-order upwind convection term along x, which makes the matrix nonsymmetric. */
static csr stencil(int nx, int ny, int nz, double conv) {
  const CNCuint n = (CNCuint)(nx * ny * nz);
  csr a = csr_alloc(n, (CNCint64)n * 7);
  CNCint64 e = 0;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const CNCuint r = (CNCuint)((k * ny + j) * nx + i);
        const double diag = nz > 1 ? 6.0 : 4.0;
        if (k > 0) a.col[e] = r - (CNCuint)(nx * ny), a.val[e++] = -1.0;
        if (j > 0) a.col[e] = r - (CNCuint)nx, a.val[e++] = -1.0;
        if (i > 0) a.col[e] = r - 1, a.val[e++] = -1.0 - conv;
        a.col[e] = r, a.val[e++] = diag + conv;
        if (i + 1 < nx) a.col[e] = r + 1, a.val[e++] = -1.0;
        if (j + 1 < ny) a.col[e] = r + (CNCuint)nx, a.val[e++] = -1.0;
        if (k + 1 < nz) a.col[e] = r + (CNCuint)(nx * ny), a.val[e++] = -1.0;
        a.rp[r + 1] = e;
      }
  return a;
}

/* Rows [r0, r1) of `a` with `base`-based offsets and columns (global columns). */
static csr block(const csr* a, CNCuint r0, CNCuint r1, int base) {
  const CNCint64 e0 = a->rp[r0], e1 = a->rp[r1];
  csr b = csr_alloc(r1 - r0, e1 - e0 + 1);
  for (CNCuint i = r0; i <= r1; ++i) b.rp[i - r0] = a->rp[i] - e0 + base;
  for (CNCint64 e = e0; e < e1; ++e)
    b.col[e - e0] = a->col[e] + (CNCuint)base, b.val[e - e0] = a->val[e];
  return b;
}

typedef struct {
  CNCint iterations, reason, nccl; /* nccl: the halo went through NCCL (GPU ranks) */
  double true_error;
  CNCint64 reductions;
} outcome;

/* The one-process reference: cncSolveCSR on the CPU backend, one thread. */
static outcome reference(const csr* a, int solver, double threshold, CNCuint nrhs, const double* b,
                         double* x) {
  outcome o = {0, 0, 0, 0, 0};
  CNCcontext c = cncNewContext();
  cncMakeCurrent(c);
  cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU);
  cncSolverParameteri(CNC_NB_THREADS, 1);
  cncSolverParameteri(CNC_SOLVER, solver);
  cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_JACOBI);
  cncSolverParameteri(CNC_REORDER, CNC_REORDER_NONE);
  cncSolverParameterd(CNC_THRESHOLD, threshold);
  memset(x, 0, sizeof(double) * a->n * nrhs);
  const CNCstatus s = cncSolveCSR(a->n, a->rp, a->col, a->val, 0, nrhs, b, x);
  CHECK(s == CNC_OK, "reference cncSolveCSR: %s", cncGetErrorMessage());
  cncGetIntegerv(CNC_USED_ITERATIONS, &o.iterations);
  cncGetIntegerv(CNC_REASON, &o.reason);
  cncGetDoublev(CNC_TRUE_ERROR, &o.true_error);
  cncDeleteContext(c);
  return o;
}

/* `backend` of solve_on: even ranks on the CPU, odd ranks on OpenCL. */
#define MIXED_CPU_OPENCL (-1)

/* The distributed solve of `a` against the reference; returns the outcome. */
static outcome solve_on(const char* name, const csr* a, split_kind kind, int base, int solver,
                        CNCuint nrhs, int threads, int backend_asked) {
  const int backend = backend_asked != MIXED_CPU_OPENCL ? backend_asked
                      : rank % 2 == 0                   ? CNC_BACKEND_CPU
                                                        : CNC_BACKEND_OPENCL;
  const double threshold = 1e-10;
  const CNCuint n = a->n;
  double* b = malloc(sizeof(double) * n * nrhs);
  for (CNCuint k = 0; k < nrhs; ++k)
    for (CNCuint i = 0; i < n; ++i) b[k * n + i] = k == 0 ? 1.0 : sin(0.01 * i) + 0.5;
  double* xref = malloc(sizeof(double) * n * nrhs);
  const outcome ref = reference(a, solver, threshold, nrhs, b, xref);

  CNCuint r0, r1;
  rows_of(rank, n, kind, &r0, &r1);
  const CNCuint rows = r1 - r0;
  csr mine = block(a, r0, r1, base);
  double* bl = malloc(sizeof(double) * (rows * nrhs + 1));
  double* xl = calloc((size_t)rows * nrhs + 1, sizeof(double));
  for (CNCuint k = 0; k < nrhs; ++k)
    for (CNCuint i = 0; i < rows; ++i) bl[k * rows + i] = b[k * n + r0 + i];

  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  CHECK(c != NULL, "%s: cncMPINewContext", name);
  cncMPISolverParameteri(c, CNC_SOLVER, solver);
  cncMPISolverParameteri(c, CNC_NB_THREADS, threads);
  cncMPISolverParameteri(c, CNC_BACKEND, backend);
  cncMPISolverParameterd(c, CNC_THRESHOLD, threshold);
  const CNCstatus s = cncMPISolveCSR(c, n, r0, r1, mine.rp, mine.col, mine.val, base, nrhs, bl, xl);
  CHECK(s == CNC_OK, "%s: cncMPISolveCSR: %d %s", name, s, cncMPIGetErrorMessage(c));
  CNCint used = 0;
  cncMPIGetIntegerv(c, CNC_BACKEND_USED, &used);
  /* A rank without rows runs no backend (0); the others the one asked for (auto: small systems
   * stay on the CPU). */
  if (rows > 0)
    CHECK(used == (backend == CNC_BACKEND_AUTO ? CNC_BACKEND_CPU : backend),
          "%s: backend used %#x, asked %#x", name, used, backend);
  outcome o;
  memset(&o, 0, sizeof o); /* compared bytewise between ranks: padding included */
  cncMPIGetIntegerv(c, CNC_USED_ITERATIONS, &o.iterations);
  cncMPIGetIntegerv(c, CNC_REASON, &o.reason);
  cncMPIGetDoublev(c, CNC_TRUE_ERROR, &o.true_error);
  cncMPIGetInteger64v(c, CNC_MPI_REDUCTIONS, &o.reductions);
  o.nccl = -1;
  cncMPIGetIntegerv(c, CNC_MPI_NCCL_USED, &o.nccl);
  CHECK(o.nccl == 0 || (o.nccl == 1 && backend == CNC_BACKEND_CUDA), "%s: NCCL used %d", name,
        o.nccl);
  check_same_everywhere(&o, (int)sizeof o, name);
  CHECK(o.reason == CNC_REASON_CONVERGED, "%s: reason %#x", name, o.reason);
  /* The reference runs on the CPU backend: another backend sums in another order, and BiCGSTAB
   * on a nonsymmetric matrix feels the rounding a little more. */
  const int slack = backend_asked == CNC_BACKEND_AUTO || backend_asked == CNC_BACKEND_CPU ? 1 : 3;
  CHECK(abs(o.iterations - ref.iterations) <= slack, "%s: %d iterations, one process %d", name,
        o.iterations, ref.iterations);
  CHECK(o.true_error <= threshold * 2, "%s: true residual %g", name, o.true_error);

  /* x gathered on rank 0, compared with the one-process x. */
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* displs = malloc(sizeof(int) * (size_t)size);
  const int myrows = (int)rows;
  MPI_Gather(&myrows, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    displs[0] = 0;
    for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  }
  double* xall = malloc(sizeof(double) * n);
  double worst = 0, top = 0;
  for (CNCuint k = 0; k < nrhs; ++k) {
    MPI_Gatherv(xl + (size_t)k * rows, myrows, MPI_DOUBLE, xall, counts, displs, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    if (rank == 0)
      for (CNCuint i = 0; i < n; ++i) {
        worst = fmax(worst, fabs(xall[i] - xref[k * n + i]));
        top = fmax(top, fabs(xref[k * n + i]));
      }
  }
  /* Both stop at ||r|| <= 1e-10 ||b|| from the same iterates up to rounding (the sums run in
   * another order): x agrees far below the threshold's own effect on it. */
  if (rank == 0) {
    CHECK(worst <= 1e-10 * top, "%s: max |x - x_ref| = %g (max |x_ref| = %g)", name, worst, top);
    printf(
        "%-28s ranks %d: %3d iterations (one process %3d), %lld reductions, "
        "max |x - x_ref| / max |x_ref| = %.2e%s\n",
        name, size, o.iterations, ref.iterations, (long long)o.reductions, worst / top,
        o.nccl ? ", halo via NCCL" : "");
  }
  cncMPIDeleteContext(c);
  free(counts), free(displs), free(xall), free(b), free(xref), free(bl), free(xl);
  csr_free(&mine);
  return o;
}

static outcome solve_case(const char* name, const csr* a, split_kind kind, int base, int solver,
                          CNCuint nrhs, int threads) {
  return solve_on(name, a, kind, base, solver, nrhs, threads, CNC_BACKEND_AUTO);
}

/* Bad input on one rank (`bad_rank`, spoiled by `spoil`): every rank gets `expected`, with the
 * bad rank's message, and x is left alone everywhere. */
typedef void (*spoil_fn)(csr* mine, double* b, CNCuint* r0, CNCuint* r1);
static void bad_case(const char* name, int bad_rank, spoil_fn spoil, CNCstatus expected) {
  csr a = stencil(12, 12, 1, 0.0);
  CNCuint r0, r1;
  rows_of(rank, a.n, split_even, &r0, &r1);
  csr mine = block(&a, r0, r1, 0);
  const CNCuint rows = r1 - r0;
  double* b = malloc(sizeof(double) * (rows + 1));
  double* x = malloc(sizeof(double) * (rows + 1));
  for (CNCuint i = 0; i <= rows; ++i) b[i] = 1.0, x[i] = 42.0;
  if (rank == bad_rank) spoil(&mine, b, &r0, &r1);
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  const CNCstatus s = cncMPISolveCSR(c, a.n, r0, r1, mine.rp, mine.col, mine.val, 0, 1, b, x);
  CHECK(s == expected, "%s: status %d, expected %d (%s)", name, s, expected,
        cncMPIGetErrorMessage(c));
  check_same_everywhere(&s, (int)sizeof s, name);
  char want[32];
  snprintf(want, sizeof want, "rank %d", bad_rank);
  const char* msg = cncMPIGetErrorMessage(c);
  CHECK(strstr(msg, want) != NULL || strstr(msg, "tile") != NULL, "%s: message '%s'", name, msg);
  for (CNCuint i = 0; i < rows; ++i) CHECK(x[i] == 42.0, "%s: x[%u] written", name, i);
  if (rank == 0) printf("%-28s ranks %d: status %d on every rank: %s\n", name, size, s, msg);
  cncMPIDeleteContext(c);
  free(b), free(x);
  csr_free(&mine), csr_free(&a);
}

static void spoil_column(csr* m, double* b, CNCuint* r0, CNCuint* r1) {
  (void)b, (void)r0, (void)r1;
  if (m->rp[m->n] > 0) m->col[m->rp[m->n] - 1] = 100000; /* past n = 144 */
}
static void spoil_value(csr* m, double* b, CNCuint* r0, CNCuint* r1) {
  (void)b, (void)r0, (void)r1;
  if (m->rp[m->n] > 0) m->val[0] = NAN;
}
static void spoil_rhs(csr* m, double* b, CNCuint* r0, CNCuint* r1) {
  (void)r0, (void)r1;
  if (m->n > 0) b[m->n - 1] = INFINITY;
}
static void spoil_tiling(csr* m, double* b, CNCuint* r0, CNCuint* r1) {
  (void)b;
  /* One row fewer at the end: a gap before the next rank (or short of n on the last rank). */
  if (*r1 > *r0) --*r1, --m->n;
}

/* nrhs past 4096 (as cncSolveCSR; int(nrhs) would turn 2^31 negative): refused on every rank
 * before b or x is read. */
static void nrhs_range_case(void) {
  csr a = stencil(12, 12, 1, 0.0);
  CNCuint r0, r1;
  rows_of(rank, a.n, split_even, &r0, &r1);
  csr mine = block(&a, r0, r1, 0);
  double b = 1.0, x = 0.0;
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  const CNCuint counts[2] = {4097, 2147483648u};
  for (int t = 0; t < 2; ++t) {
    const CNCstatus s =
        cncMPISolveCSR(c, a.n, r0, r1, mine.rp, mine.col, mine.val, 0, counts[t], &b, &x);
    CHECK(s == CNC_ERR_INVALID_VALUE, "nrhs=%u: status %d (%s)", counts[t], s,
          cncMPIGetErrorMessage(c));
    check_same_everywhere(&s, (int)sizeof s, "nrhs out of range");
  }
  CHECK(x == 0.0, "nrhs out of range: x written");
  if (rank == 0) printf("%-28s ranks %d: %s\n", "nrhs past 4096", size, cncMPIGetErrorMessage(c));
  cncMPIDeleteContext(c);
  csr_free(&mine), csr_free(&a);
}

/* A parameter that differs between ranks (the last rank's threshold): refused on every rank
 * when there are several, nothing to disagree with on one. */
static void differing_parameter_case(void) {
  csr a = stencil(12, 12, 1, 0.0);
  CNCuint r0, r1;
  rows_of(rank, a.n, split_even, &r0, &r1);
  csr mine = block(&a, r0, r1, 0);
  const CNCuint rows = r1 - r0;
  double* b = malloc(sizeof(double) * (rows + 1));
  double* x = calloc(rows + 1, sizeof(double));
  for (CNCuint i = 0; i < rows; ++i) b[i] = 1.0;
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  cncMPISolverParameterd(c, CNC_THRESHOLD, rank == size - 1 ? 1e-8 : 1e-6);
  const CNCstatus s = cncMPISolveCSR(c, a.n, r0, r1, mine.rp, mine.col, mine.val, 0, 1, b, x);
  const CNCstatus expected = size > 1 ? CNC_ERR_INVALID_VALUE : CNC_OK;
  CHECK(s == expected, "differing threshold: status %d (%s)", s, cncMPIGetErrorMessage(c));
  check_same_everywhere(&s, (int)sizeof s, "differing threshold");
  if (size > 1)
    CHECK(strstr(cncMPIGetErrorMessage(c), "CNC_THRESHOLD differs") != NULL, "message '%s'",
          cncMPIGetErrorMessage(c));
  cncMPIDeleteContext(c);
  free(b), free(x);
  csr_free(&mine), csr_free(&a);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  csr p2 = stencil(40, 40, 1, 0.0), p3 = stencil(12, 12, 12, 0.0), cd = stencil(30, 30, 1, 1.5);
  const outcome cg = solve_case("CG, 2D Poisson, even", &p2, split_even, 0, CNC_CG, 2, 2);
  /* CG on one rank is libcnc's solve: its only collectives are the sum of ‖b‖² and the agreement
   * on x being finite. On several: p·Ap in one reduction, r·z with r·r in another, two an
   * iteration; plus ‖b‖², the first r·z with r·r, the true residual once both systems have
   * stopped (they stop together here) and the agreement on x. */
  CHECK(size == 1 ? cg.reductions == 2 : cg.reductions == 2 * (CNCint64)cg.iterations + 4,
        "CG issued %lld reductions in %d iterations", (long long)cg.reductions, cg.iterations);
  solve_case("CG, 3D Poisson, uneven", &p3, split_uneven, 1, CNC_CG, 1, 1);
  solve_case("CG, 3D Poisson, empty rank", &p3, split_empty_rank, 0, CNC_CG, 1, 1);
  solve_case("BiCGSTAB, convection, uneven", &cd, split_uneven, 0, CNC_BICGSTAB, 1, 1);
  solve_case("GMRES, convection, even", &cd, split_even, 1, CNC_GMRES, 1, 1);

  /* The CPU backend asked for by name; CUDA and OpenCL where there is a device (ranks share it
   * here), with more right-hand sides than one of CUDA's groups holds (8). */
  solve_on("CG, 3D Poisson, cpu", &p3, split_uneven, 0, CNC_CG, 1, 1, CNC_BACKEND_CPU);
  if (cncBackendAvailable(CNC_BACKEND_CUDA)) {
    solve_on("CG, 2D Poisson, cuda, 10 rhs", &p2, split_uneven, 0, CNC_CG, 10, 1, CNC_BACKEND_CUDA);
    solve_on("CG, 3D Poisson, cuda, empty", &p3, split_empty_rank, 1, CNC_CG, 1, 1,
             CNC_BACKEND_CUDA);
    solve_on("BiCGSTAB, convection, cuda", &cd, split_even, 0, CNC_BICGSTAB, 2, 1,
             CNC_BACKEND_CUDA);
    solve_on("GMRES, convection, cuda", &cd, split_uneven, 0, CNC_GMRES, 1, 1, CNC_BACKEND_CUDA);
  } else if (rank == 0) {
    printf("CUDA cases skipped: no CUDA device here\n");
  }
  /* Every rank must have the device (a collective decision: the ranks agree on skipping). */
  int opencl = cncBackendAvailable(CNC_BACKEND_OPENCL) ? 1 : 0, opencl_all = 0;
  MPI_Allreduce(&opencl, &opencl_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (opencl_all) {
    solve_on("CG, 2D Poisson, opencl, 3 rhs", &p2, split_uneven, 0, CNC_CG, 3, 1,
             CNC_BACKEND_OPENCL);
    solve_on("CG, 3D Poisson, opencl, empty", &p3, split_empty_rank, 1, CNC_CG, 1, 1,
             CNC_BACKEND_OPENCL);
    solve_on("BiCGSTAB, convection, opencl", &cd, split_even, 0, CNC_BICGSTAB, 2, 1,
             CNC_BACKEND_OPENCL);
    solve_on("GMRES, convection, opencl", &cd, split_uneven, 0, CNC_GMRES, 1, 1,
             CNC_BACKEND_OPENCL);
    solve_on("CG, 3D Poisson, cpu+opencl", &p3, split_uneven, 0, CNC_CG, 2, 1, MIXED_CPU_OPENCL);
    solve_on("BiCGSTAB, convection, cpu+opencl", &cd, split_empty_rank, 0, CNC_BICGSTAB, 1, 1,
             MIXED_CPU_OPENCL);
  } else if (rank == 0) {
    printf("OpenCL cases skipped: no OpenCL device on every rank here\n");
  }
  {
    CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
    CHECK(cncMPISolverParameteri(c, CNC_BACKEND, 0x6FF) == CNC_ERR_INVALID_ENUM, "backend 0x6FF");
    CHECK(cncMPISolverParameteri(c, CNC_MPI_NCCL, 2) == CNC_ERR_INVALID_VALUE, "CNC_MPI_NCCL 2");
    cncMPIDeleteContext(c);
  }

  { /* b of extreme magnitude: solved scaled by the same power of two on every rank */
    CNCuint r0, r1;
    rows_of(rank, p3.n, split_uneven, &r0, &r1);
    csr mine = block(&p3, r0, r1, 0);
    const CNCuint rows = r1 - r0;
    double* b = malloc(sizeof(double) * (rows + 1));
    double* x = calloc(rows + 1, sizeof(double));
    double* xr = calloc(rows + 1, sizeof(double));
    for (CNCuint i = 0; i < rows; ++i) b[i] = 1.0;
    CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
    cncMPISolverParameterd(c, CNC_THRESHOLD, 1e-10);
    CHECK(cncMPISolveCSR(c, p3.n, r0, r1, mine.rp, mine.col, mine.val, 0, 1, b, xr) == CNC_OK,
          "b = 1: %s", cncMPIGetErrorMessage(c));
    for (CNCuint i = 0; i < rows; ++i) b[i] = 1e-300;
    const CNCstatus s = cncMPISolveCSR(c, p3.n, r0, r1, mine.rp, mine.col, mine.val, 0, 1, b, x);
    CNCint reason = 0, it = 0;
    cncMPIGetIntegerv(c, CNC_REASON, &reason);
    cncMPIGetIntegerv(c, CNC_USED_ITERATIONS, &it);
    CHECK(s == CNC_OK && reason == CNC_REASON_CONVERGED && it > 10, "b = 1e-300: %d %#x %d", s,
          reason, it);
    double worst = 0;
    for (CNCuint i = 0; i < rows; ++i)
      worst = fmax(worst, fabs(x[i] / 1e-300 - xr[i]) / fabs(xr[i]));
    CHECK(worst < 1e-12, "b = 1e-300: x / 1e-300 differs from the b = 1 solve by %g", worst);
    if (rank == 0)
      printf("%-28s ranks %d: %3d iterations, scaled back within %.1e\n", "b = 1e-300", size, it,
             worst);
    cncMPIDeleteContext(c);
    free(b), free(x), free(xr);
    csr_free(&mine);
  }

  const int last = size - 1;
  bad_case("column out of range", last, spoil_column, CNC_ERR_INDEX_OUT_OF_RANGE);
  bad_case("NaN in values", 0, spoil_value, CNC_ERR_NOT_FINITE);
  bad_case("Inf in b", last, spoil_rhs, CNC_ERR_NOT_FINITE);
  bad_case("blocks that do not tile", 0, spoil_tiling, CNC_ERR_INVALID_VALUE);
  differing_parameter_case();
  nrhs_range_case();

  csr_free(&p2), csr_free(&p3), csr_free(&cd);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failed checks on %d ranks\n", total ? "FAIL" : "PASS", total, size);
  MPI_Finalize();
  return total ? 1 : 0;
}
