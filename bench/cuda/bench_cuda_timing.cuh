// cnc's device_system and the cuSPARSE + cuBLAS baseline as bench_cuda times them (see
// bench_cuda.cu): runs of a fixed number of iterations and solves to a tolerance, the floor bytes
// of an iteration, the device-to-device copy bandwidth, and the table rows.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "bench_cuda_problems.cuh"

#define CK(call)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)
double now();

// ---- cnc (device_system)
// -------------------------------------------------------------------------

extern std::unique_ptr<cnc::backend> g_cnc;
extern double g_copy_bw;  // bytes/s, read + write

struct cnc_run {
  std::unique_ptr<cnc::device_system> sys;
  std::vector<double> b, x0, thr2;
  int k = 1;
  std::string config;
};

cnc_run make_cnc(const problem& pb, cnc::format f, cnc::precision p, int k);
// Median seconds per iteration over `reps` runs of `iters` iterations from a fresh init.
// `ok` = every run did all its iterations (no system stopped early).
double time_cnc(cnc_run& r, int iters, int reps, bool& ok);
// Iterations per timed run: about 0.1 s, multiple of 32, 64..512 (short enough that no
// system reaches its rounding floor).
int pick_iters(cnc_run& r);

// Solves to ‖r‖ <= tol ‖b‖ with a state read every 16 iterations: iterations, seconds, true
// residual of system 0.
struct solve_result {
  int iters = 0;
  double seconds = 0, true_res = 0;
  int status = 0;
};
solve_result solve_cnc(cnc_run& r, const problem& pb, double tol);

// Minimum bytes of one iteration (see the top of bench_cuda.cu).
double floor_bytes(const problem& pb, cnc::format f, cnc::precision p, int k);

// Textbook Jacobi-PCG (textbook_pcg.cuh). Returns seconds per iteration (median of reps); T is
// float or double.
template <class T>
double time_baseline(const problem& pb, int iters, int reps);

// Device-to-device copy bandwidth, bytes/s (read + write).
double copy_bandwidth();

// ---- tables
// --------------------------------------------------------------------------------------

void header();
// One table row. The baseline is timed when with_baseline, and its time stored in *base_t;
// otherwise a *base_t > 0 from an earlier row of the same problem gives the speed-up.
void row(const problem& pb, cnc::format f, cnc::precision p, bool with_baseline,
         double* base_t = nullptr);
// Each step timed alone (20 back-to-back launches, no graph), against its own floor: SpMV =
// matrix + p read + q write; update_xr = 7 vector passes; update_p = 4.
void breakdown(const problem& pb, cnc::format f, cnc::precision p);
