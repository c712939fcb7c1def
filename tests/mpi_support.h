/* What the libcnc_mpi test programs share (test_mpi_solve.c, test_mpi_assembly.c): the rank and
 * size of MPI_COMM_WORLD and the failure count (each program sets rank and size after MPI_Init and
 * sums the failures at the end), CHECK (a failed check is counted and printed, the rank goes on
 * with the same collective calls so that none hangs), the row blocks of the three splits, and a
 * check that a value is the same on every rank. Not cmocka: its aborting assertions would leave
 * the other ranks waiting in a collective. */
#ifndef CNC_TEST_MPI_SUPPORT_H
#define CNC_TEST_MPI_SUPPORT_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnc.h"

static int rank, size, failures;

#define CHECK(cond, ...)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      ++failures;                                                                             \
      fprintf(stderr, "rank %d: %s:%d: CHECK(%s) failed: ", rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                           \
      fputc('\n', stderr);                                                                    \
    }                                                                                         \
  } while (0)

typedef enum { split_even, split_uneven, split_empty_rank } split_kind;

/* Rank r's rows [*r0, *r1) of n. Uneven: rank r gets a share proportional to r + 1. Empty: rank 1
 * (when there is one) owns no rows (it sits between rank 0's rows and rank 2's), the others
 * share them evenly. */
static inline void rows_of(int r, CNCuint n, split_kind kind, CNCuint* r0, CNCuint* r1) {
  if (kind == split_uneven) {
    const long long total = (long long)size * (size + 1) / 2, before = (long long)r * (r + 1) / 2;
    *r0 = (CNCuint)((long long)n * before / total);
    *r1 = (CNCuint)((long long)n * (before + r + 1) / total);
  } else if (kind == split_empty_rank && size > 1) {
    const int owners = size - 1, me = r == 0 ? 0 : r - 1;
    if (r == 1) {
      *r0 = *r1 = (CNCuint)((long long)n / owners);
    } else {
      *r0 = (CNCuint)((long long)n * me / owners);
      *r1 = (CNCuint)((long long)n * (me + 1) / owners);
    }
  } else {
    *r0 = (CNCuint)((long long)n * r / size);
    *r1 = (CNCuint)((long long)n * (r + 1) / size);
  }
}

/* Every rank's value of v equal to rank 0's (bit for bit). */
static inline void check_same_everywhere(const void* v, int bytes, const char* what) {
  unsigned char* all = (unsigned char*)malloc((size_t)bytes * (size_t)size);
  MPI_Allgather(v, bytes, MPI_BYTE, all, bytes, MPI_BYTE, MPI_COMM_WORLD);
  for (int r = 1; r < size; ++r)
    CHECK(memcmp(all, all + (size_t)r * (size_t)bytes, (size_t)bytes) == 0,
          "%s differs between rank 0 and rank %d", what, r);
  free(all);
}

#endif
