/* Strong and weak scaling of libcnc_mpi's CG (Jacobi) on the 7-point Poisson matrix: time per
 * iteration on however many ranks mpiexec starts, each with the threads asked for.
 *   mpiexec -n P bench_mpi_scaling strong|weak G [threads] [iterations]
 * strong: one G x G x G grid split over the ranks by planes of z; weak: a G x G x G grid per rank
 * (G x G x G*P in all). Each rank generates its own rows (global columns) and b = 1; CG runs a
 * fixed number of iterations (threshold 1e-30, CNC_MAX_ITERATIONS). Printed by rank 0: the slowest
 * rank's solve time per iteration, the reductions per iteration and the halo values per product
 * of rank 0 (a plane: G*G values from each neighbour). */
#include <cnc_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || (strcmp(argv[1], "strong") != 0 && strcmp(argv[1], "weak") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: %s strong|weak G [threads] [iterations]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const int weak = strcmp(argv[1], "weak") == 0;
  const long g = atol(argv[2]);
  const int threads = argc > 3 ? atoi(argv[3]) : 1;
  const int iterations = argc > 4 ? atoi(argv[4]) : 200;
  const long nz = weak ? g * size : g, plane = g * g;
  const CNCuint n = (CNCuint)(plane * nz);
  const long z0 = nz * rank / size, z1 = nz * (rank + 1) / size;
  const CNCuint r0 = (CNCuint)(z0 * plane), r1 = (CNCuint)(z1 * plane), rows = r1 - r0;
  CNCint64* rp = malloc(sizeof(CNCint64) * (rows + 1));
  CNCuint* col = malloc(sizeof(CNCuint) * ((size_t)rows * 7 + 1));
  double* val = malloc(sizeof(double) * ((size_t)rows * 7 + 1));
  double* b = malloc(sizeof(double) * (rows + 1));
  double* x = calloc(rows + 1, sizeof(double));
  CNCint64 e = 0;
  rp[0] = 0;
  for (long k = z0; k < z1; ++k)
    for (long j = 0; j < g; ++j)
      for (long i = 0; i < g; ++i) {
        const long r = (k * g + j) * g + i;
        if (k > 0) col[e] = (CNCuint)(r - plane), val[e++] = -1;
        if (j > 0) col[e] = (CNCuint)(r - g), val[e++] = -1;
        if (i > 0) col[e] = (CNCuint)(r - 1), val[e++] = -1;
        col[e] = (CNCuint)r, val[e++] = 6;
        if (i + 1 < g) col[e] = (CNCuint)(r + 1), val[e++] = -1;
        if (j + 1 < g) col[e] = (CNCuint)(r + g), val[e++] = -1;
        if (k + 1 < nz) col[e] = (CNCuint)(r + plane), val[e++] = -1;
        rp[r - (long)r0 + 1] = e;
        b[r - (long)r0] = 1;
      }
  CNCMPIcontext c = cncMPINewContext(MPI_COMM_WORLD);
  cncMPISolverParameteri(c, CNC_NB_THREADS, threads);
  cncMPISolverParameteri(c, CNC_MAX_ITERATIONS, iterations);
  cncMPISolverParameterd(c, CNC_THRESHOLD, 1e-30);
  const CNCstatus s = cncMPISolveCSR(c, n, r0, r1, rp, col, val, 0, 1, b, x);
  if (s != CNC_OK) {
    if (rank == 0) fprintf(stderr, "cncMPISolveCSR: %s\n", cncMPIGetErrorMessage(c));
    MPI_Finalize();
    return 1;
  }
  double t = 0, tmax = 0;
  CNCint it = 0;
  CNCint64 red = 0, halo = 0;
  cncMPIGetDoublev(c, CNC_SOLVE_TIME, &t);
  cncMPIGetIntegerv(c, CNC_USED_ITERATIONS, &it);
  cncMPIGetInteger64v(c, CNC_MPI_REDUCTIONS, &red);
  cncMPIGetInteger64v(c, CNC_MPI_HALO_VALUES, &halo);
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf(
        "%-6s ranks %d threads %d  n %10u  rows/rank %9u  %4d it  %8.3f ms/it  %.2f red/it  "
        "halo %ld values/product (rank 0)\n",
        weak ? "weak" : "strong", size, threads, n, rows, it, 1e3 * tmax / it, (double)red / it,
        (long)halo);
  cncMPIDeleteContext(c);
  free(rp), free(col), free(val), free(b), free(x);
  MPI_Finalize();
  return 0;
}
