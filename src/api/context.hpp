// A cnc context: parameters, variables, the assembled system, the solve pipeline (which holds
// the backend and its resident copy of the matrix), statistics and the sticky error. The C entry
// points (api*.cpp) check state and arguments and forward here.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "assembly/builder.hpp"
#include "backends/backend.hpp"
#include "cnc.h"
#include "matrix/matrix.hpp"
#include "pipeline/pipeline.hpp"

namespace cnc {

struct context {
  int state = CNC_STATE_INITIAL;
  // Structural parameters.
  std::int32_t n = 0, k = 1;
  bool least_squares = false;
  // Solver parameters.
  bool symmetric = true, verbose = false, normalize_rows = false, keep_matrix = true;
  int solver = CNC_SOLVER_DEFAULT, preconditioner = CNC_PRECOND_JACOBI;
  bool preconditioner_set = false;  // CNC_PRECONDITIONER set by the caller, not the default
  double ssor_omega = 1.5;          // CNC_SSOR_OMEGA (OpenNL's NL_OMEGA default)
  int precision_param = CNC_DOUBLE, format_param = CNC_FORMAT_AUTO,
      backend_param = CNC_BACKEND_AUTO;
  std::int64_t max_iterations = 0;  // 0 = automatic
  double threshold = 1e-6;
  double eigen_threshold = 0;  // CNC_EIGEN_THRESHOLD: ARPACK's tol, 0 = machine precision
  int threads = 0, device_index = -1, check_interval = 0;
  int gmres_restart = 30;  // CNC_GMRES_RESTART
  // CNC_INTERNAL_CG_INDEFINITE (api/cnc_internal.h: for the OpenNL layer only).
  bool cg_indefinite = false;
  int reorder = CNC_REORDER_AUTO;
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
  // Backend, resident matrix and their caches.
  pipeline pipe;
  solve_stats stats;
  // Use from several threads (api_internal.hpp's guarded): the thread in a write call, the
  // thread assembling the system (set while the state is an assembly state: getters of other
  // threads go through the write path then), the getters running, and whether one of them is
  // recording an error.
  std::atomic<const void*> user{nullptr}, assembler{nullptr};
  std::atomic<int> readers{0};
  std::atomic<bool> recording{false};
  // Errors and callbacks.
  int first_error = CNC_OK;
  std::string first_message, last_message;
  std::string strings[8];  // cncGetString results, one slot per CNC_* string enum (0xB01..0xB08)
  CNClogCallback log_cb = nullptr;
  void* log_data = nullptr;
  CNCprogressCallback progress_cb = nullptr;
  void* progress_data = nullptr;
  // The caller's operators (cncSetOperator): y = A x and y = M⁻¹ x.
  CNCoperator op_matrix = nullptr, op_precond = nullptr;
  void* op_matrix_data = nullptr;
  void* op_precond_data = nullptr;
  // While the progress callback runs: set, with the solve's iterate (null where the method does
  // not form it) in the numbering of the system solved: the free variables for cncSolve.
  bool in_progress = false, iterate_free_variables = false;
  const iterate_reader* iterate = nullptr;

  int fail(int status, const std::string& message);
  void log(int level, const std::string& message) const;
  // The pipeline's options from this context's parameters and callbacks.
  solve_options options();
  // Solves a x = b (k column-major systems over a.n rows; x in/out, host memory) with the
  // current parameters; fills stats (conversion includes csr_conversion_time).
  void solve(const csr_view& a, std::uint64_t version, int nrhs, const double* b, double* x);
  // Whether a solve runs with the caller's operators: a matrix operator, or CNC_PRECOND_USER.
  bool uses_operators() const { return op_matrix || preconditioner == CNC_PRECOND_USER; }
  // The solve with the caller's operators, on the host: `a` is the matrix (canonical CSR) or
  // null for the matrix operator; n rows, nrhs column-major systems, x in/out. Refuses with
  // CNC_ERR_UNSUPPORTED the parameters such a solve cannot honour (cnc.h, cncSetOperator).
  void solve_operators(const csr_view* a, std::int32_t n, int nrhs, const double* b, double* x);
};

}  // namespace cnc
