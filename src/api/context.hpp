// A cnc context: parameters, variables, the assembled system, the backend and its resident
// copy of the matrix, statistics and the sticky error. The C entry points (api.cpp) check state
// and arguments; this file's functions do the work behind them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "assembly/builder.hpp"
#include "backends/backend.hpp"
#include "cnc.h"
#include "conversion/matrix.hpp"

namespace cnc {

struct solve_stats {
  std::int64_t iterations = 0;
  double error = 0, true_error = 0, true_error_min = 0;
  int reason = CNC_REASON_NONE;
  double elapsed = 0, assembly = 0, conversion = 0, upload = 0, solve = 0, gflops = 0, gbps = 0;
  std::int64_t bytes_per_iteration = 0, nnz = 0, zero_diagonals = 0;
  int backend_used = 0, format_used = 0;
  double fill_ratio = 1.0;
  std::string backend_name, device_name;
};

// The matrix as prepared for one backend: format, diagonal and the device-resident system.
struct prepared_system {
  std::uint64_t version = 0;  // matrix version it was built from (0 = none)
  const backend* owner = nullptr;
  format fmt = format::csr;
  precision prec = precision::f64;
  int k = 0;
  bool jacobi = true;
  bcrs_matrix bcrs;  // when fmt is bcrs2/bcrs4 (freed after upload unless the backend keeps it)
  sell_matrix sell;  // when fmt is sell (likewise)
  std::int64_t stored = 0;    // blocks (BCRS) or entries (SELL) of the matrix the backend got
  std::int32_t n_padded = 0;  // its rows, padding included
  host_vector<double> d;
  std::int64_t zero_diagonals = 0;
  std::unique_ptr<device_system> dev;
};

struct context {
  int state = CNC_STATE_INITIAL;
  // Structural parameters.
  std::int32_t n = 0, k = 1;
  bool least_squares = false;
  // Solver parameters.
  bool symmetric = false, verbose = false, normalize_rows = false;
  int solver = CNC_SOLVER_DEFAULT, preconditioner = CNC_PRECOND_JACOBI;
  int precision_param = CNC_DOUBLE, format_param = CNC_FORMAT_AUTO,
      backend_param = CNC_BACKEND_AUTO;
  std::int64_t max_iterations = 0;  // 0 = automatic
  double threshold = 1e-6;
  int threads = 0, device_index = -1, check_interval = 0;
  int gmres_restart = 30;  // CNC_GMRES_RESTART
  std::int64_t nnz_hint = 0;
  // Variables (n * k, column-major) and locks.
  std::vector<double> values;
  std::vector<std::uint8_t> locked;
  // Assembly.
  builder build;
  assembled_system sys;
  std::uint64_t matrix_version = 0;
  double assembly_start = 0;
  double csr_conversion_time = 0;
  // Backend and resident matrix.
  std::unique_ptr<backend> be;
  int be_kind = 0, be_threads = -1, be_device = -2;
  unsigned auto_skip = 0;  // backends auto selection found absent or unsuitable (bit per kind)
  prepared_system prep;
  // Automatic format choice, remembered per matrix version, value width and whether the backend
  // runs sliced formats (it scans the matrix).
  std::uint64_t auto_format_version = 0;
  int auto_format_bytes = 0;
  bool auto_format_sliced = false;
  format auto_format = format::csr;
  solve_stats stats;
  // Errors and callbacks.
  int first_error = CNC_OK;
  std::string first_message, last_message;
  std::string strings[8];  // cncGetString results, one slot per CNC_* string enum
  CNClogCallback log_cb = nullptr;
  void* log_data = nullptr;
  CNCprogressCallback progress_cb = nullptr;
  void* progress_data = nullptr;

  int fail(int status, const std::string& message);
  void log(int level, const std::string& message) const;
  // Solves a x = b (k column-major systems over a.n rows; x in/out) with the current
  // parameters, choosing and caching the backend; fills stats.
  void solve(const csr_view& a, std::uint64_t version, int nrhs, const double* b, double* x);
};

// Text of a CNC_REASON_* value, e.g. "converged" (log lines and cncGetString).
const char* reason_name(int reason);

}  // namespace cnc
