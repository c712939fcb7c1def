/* What the C benchmarks of bench/ share: a monotonic clock and the comparison qsort needs for
 * medians. */
#ifndef CNC_BENCH_CLOCK_H
#define CNC_BENCH_CLOCK_H

#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

#endif
