/* Strong and weak scaling of libcnc_mpi's CG (Jacobi) on the 7- or 27-point Poisson matrix: time
 * per iteration on however many ranks mpiexec starts, each with the threads and backend asked for.
 *   mpiexec -n P bench_mpi_scaling strong|weak G [threads] [iterations] [auto|cpu|cuda] [7|27]
 *                                  [nccl|mpi]
 * strong: one G x G x G grid split over the ranks by planes of z; weak: a G x G x G grid per rank
 * (G x G x G*P in all). Each rank generates its own rows (global columns) and b = 1; CG runs a
 * fixed number of iterations (threshold 1e-30, CNC_MAX_ITERATIONS). Printed by rank 0: the slowest
 * rank's solve time per iteration, the reductions per iteration, the halo values per product of
 * rank 0 (a plane from each neighbour), the backend and format used, and how the halo travelled
 * (GPU ranks: NCCL device to device, the default where it loads, or "mpi" through host memory).
 * On one rank it also times plain libcnc (cncSolveCSR, same matrix, backend, threads and
 * iterations) in the same run: the "one rank is no slower than libcnc" comparison. */
#include <cnc.h>
#include <cnc_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int backend_of(const char* s) {
  if (strcmp(s, "cpu") == 0) return CNC_BACKEND_CPU;
  if (strcmp(s, "cuda") == 0) return CNC_BACKEND_CUDA;
  if (strcmp(s, "opencl") == 0) return CNC_BACKEND_OPENCL;
  return CNC_BACKEND_AUTO;
}

static const char* backend_name(int b) {
  return b == CNC_BACKEND_CPU ? "cpu" : b == CNC_BACKEND_CUDA ? "cuda" : b == 0 ? "none" : "?";
}

static const char* format_name(int f) {
  return f == CNC_FORMAT_SELL    ? "sell"
         : f == CNC_FORMAT_BCRS2 ? "bcrs2"
         : f == CNC_FORMAT_BCRS4 ? "bcrs4"
         : f == CNC_FORMAT_CSR   ? "csr"
                                 : "none";
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || (strcmp(argv[1], "strong") != 0 && strcmp(argv[1], "weak") != 0)) {
    if (rank == 0)
      fprintf(stderr, "usage: %s strong|weak G [threads] [iterations] [auto|cpu|cuda] [7|27]\n",
              argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int weak = strcmp(argv[1], "weak") == 0;
  const long g = atol(argv[2]);
  const int threads = argc > 3 ? atoi(argv[3]) : 1;
  const int iterations = argc > 4 ? atoi(argv[4]) : 200;
  const int backend = argc > 5 ? backend_of(argv[5]) : CNC_BACKEND_AUTO;
  const int points = argc > 6 && atoi(argv[6]) == 27 ? 27 : 7;
  const int nccl = !(argc > 7 && strcmp(argv[7], "mpi") == 0);
  const long nz = weak ? g * size : g, plane = g * g;
  const CNCuint n = (CNCuint)(plane * nz);
  const long z0 = nz * rank / size, z1 = nz * (rank + 1) / size;
  const CNCuint r0 = (CNCuint)(z0 * plane), r1 = (CNCuint)(z1 * plane), rows = r1 - r0;
  CNCint64* rp = malloc(sizeof(CNCint64) * (rows + 1));
  CNCuint* col = malloc(sizeof(CNCuint) * ((size_t)rows * (size_t)points + 1));
  double* val = malloc(sizeof(double) * ((size_t)rows * (size_t)points + 1));
  double* b = malloc(sizeof(double) * (rows + 1));
  double* x = calloc(rows + 1, sizeof(double));
  CNCint64 e = 0;
  rp[0] = 0;
  for (long k = z0; k < z1; ++k)
    for (long j = 0; j < g; ++j)
      for (long i = 0; i < g; ++i) {
        const long r = (k * g + j) * g + i;
        for (long dk = -1; dk <= 1; ++dk)
          for (long dj = -1; dj <= 1; ++dj)
            for (long di = -1; di <= 1; ++di) {
              const int off = (dk != 0) + (dj != 0) + (di != 0);
              if (points == 7 && off > 1) continue;
              if (k + dk < 0 || k + dk >= nz || j + dj < 0 || j + dj >= g || i + di < 0 ||
                  i + di >= g)
                continue;
              col[e] = (CNCuint)(r + dk * plane + dj * g + di);
              val[e++] = off == 0 ? (points == 7 ? 6.0 : 26.0) : -1.0;
            }
        rp[r - (long)r0 + 1] = e;
        b[r - (long)r0] = 1;
      }
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  cncMPISolverParameteri(c, CNC_NB_THREADS, threads);
  cncMPISolverParameteri(c, CNC_MAX_ITERATIONS, iterations);
  cncMPISolverParameteri(c, CNC_BACKEND, backend);
  cncMPISolverParameteri(c, CNC_MPI_NCCL, nccl ? CNC_TRUE : CNC_FALSE);
  cncMPISolverParameterd(c, CNC_THRESHOLD, 1e-30);
  /* A first solve makes the backend (a GPU context) and warms it; the second is timed. */
  CNCstatus s = cncMPISolveCSR(c, n, r0, r1, rp, col, val, 0, 1, b, x);
  memset(x, 0, sizeof(double) * rows);
  if (s == CNC_OK) s = cncMPISolveCSR(c, n, r0, r1, rp, col, val, 0, 1, b, x);
  if (s != CNC_OK) {
    if (rank == 0) fprintf(stderr, "cncMPISolveCSR: %s\n", cncMPIGetErrorMessage(c));
    MPI_Finalize();
    return 1;
  }
  double t = 0, tmax = 0;
  CNCint it = 0, used = 0, fmt = 0, nccl_used = 0;
  CNCint64 red = 0, halo = 0;
  cncMPIGetDoublev(c, CNC_SOLVE_TIME, &t);
  cncMPIGetIntegerv(c, CNC_USED_ITERATIONS, &it);
  cncMPIGetInteger64v(c, CNC_MPI_REDUCTIONS, &red);
  cncMPIGetInteger64v(c, CNC_MPI_HALO_VALUES, &halo);
  cncMPIGetIntegerv(c, CNC_BACKEND_USED, &used);
  cncMPIGetIntegerv(c, CNC_FORMAT_USED, &fmt);
  cncMPIGetIntegerv(c, CNC_MPI_NCCL_USED, &nccl_used);
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf(
        "%-6s %2d-pt ranks %d threads %2d %-4s %-5s n %10u  rows/rank %9u  %4d it  %8.3f ms/it  "
        "%.2f red/it  halo %ld values/product (rank 0) via %s\n",
        weak ? "weak" : "strong", points, size, threads, backend_name(used), format_name(fmt), n,
        rows, it, 1e3 * tmax / it, (double)red / it, (long)halo, nccl_used ? "nccl" : "mpi");
  cncMPIDeleteContext(c);

  if (size == 1) { /* plain libcnc on the same system, same run */
    CNCcontext p = cncNewContext();
    cncMakeCurrent(p);
    cncSolverParameteri(CNC_NB_THREADS, threads);
    cncSolverParameteri(CNC_MAX_ITERATIONS, iterations);
    cncSolverParameteri(CNC_BACKEND, used);
    cncSolverParameteri(CNC_REORDER, CNC_REORDER_NONE);
    cncSolverParameterd(CNC_THRESHOLD, 1e-30);
    memset(x, 0, sizeof(double) * rows);
    s = cncSolveCSR(n, rp, col, val, 0, 1, b, x);
    memset(x, 0, sizeof(double) * rows);
    if (s == CNC_OK) s = cncSolveCSR(n, rp, col, val, 0, 1, b, x);
    double tl = 0;
    CNCint itl = 0;
    const char* lf = "?";
    cncGetString(CNC_FORMAT_NAME, &lf);
    cncGetDoublev(CNC_SOLVE_TIME, &tl);
    cncGetIntegerv(CNC_USED_ITERATIONS, &itl);
    if (s == CNC_OK)
      printf(
          "       %2d-pt libcnc  threads %2d %-4s %-5s n %10u  %4d it  %8.3f ms/it (cncSolveCSR)\n",
          points, threads, backend_name(used), lf, n, itl, 1e3 * tl / itl);
    else
      printf("libcnc: %s\n", cncGetErrorMessage());
    cncDeleteContext(p);
  }
  free(rp), free(col), free(val), free(b), free(x);
  MPI_Finalize();
  return 0;
}
