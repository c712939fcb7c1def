// bench_api's two timed runs, shared by its tables (bench_api.cu) and its --patterns mode
// (api_patterns.cu): one cncSolveCSR through the public API, and the textbook cuSPARSE + cuBLAS
// PCG (textbook_pcg.cuh) from the same host CSR.
#pragma once

#include <string>
#include <vector>

#include "api_problems.hpp"
#include "cnc.h"

namespace api_bench {

// Exits with cnc's message when s is not CNC_OK.
void check(CNCstatus s, const char* what);

struct cnc_times {
  double total = 0, conversion = 0, upload = 0, solve = 0, true_res = 0;
  int iterations = 0;
  CNCstatus status = CNC_OK;
  std::string format, backend, reason;
  std::string ordering = "-",
              choice = "-";  // CNC_ORDERING_NAME, CNC_CHOICE_REASON where cnc has them
};

// One cncSolveCSR, timed from the call to its return; fills the phases from the statistics.
// `fresh`: the context first drops the matrix it keeps from the previous call (CNC_KEEP_MATRIX
// off and on, untimed), so the call is a first solve of these arrays; otherwise a call with the
// same arrays reuses it. `must_succeed`: exit on a failed call (else its status is returned in
// `status`, with cnc's sticky error cleared).
cnc_times run_cnc(const problem& p, const std::vector<double>& b, std::vector<double>& x,
                  double tol, int max_it, bool fresh = true, bool must_succeed = true);

struct tb_times {
  double total = 0, upload = 0, loop = 0, resolve = 0, revalue = 0;
  int iterations = 0;
};

// The textbook solve from the host CSR; with b2, then a second solve of the same matrix (kept on
// the device) for b2, timed as `resolve` (b2 up, loop, x down); with val2 too, a third of the
// same pattern with values val2 for b, timed as `revalue` (values up, diagonal, b up, loop, x
// down).
tb_times run_textbook(const problem& p, const std::vector<int>& rp32, const std::vector<double>& b,
                      std::vector<double>& x, double tol, int max_it,
                      const std::vector<double>* b2 = nullptr,
                      const std::vector<double>* val2 = nullptr);

// Device-to-device copy bandwidth of CUDA device 0 in bytes per second (read + write counted):
// the bandwidth the GPU floors are divided by (bench_api --patterns, bench_complex).
double copy_bandwidth();

// --patterns (api_patterns.cu): the sparsity-pattern families against the textbook PCG.
struct patterns_options {
  int reps = 3;
  double tol = 1e-8;
  std::string only;                                 // the problems whose name contains it
  std::string mtx_dir = "../shared/data/matrices";  // relative to the current directory
  bool verbose = false;                             // also print cnc's reason for its choices
};
void patterns_tables(const patterns_options& o);

}  // namespace api_bench
