// Context services behind the C API: errors, logging, and the hand-over to the solve pipeline.
#include "api/context.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "direct/direct.hpp"
#include "solver/operator_system.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace cnc {

int context::fail(int status, const std::string& message) {
  last_message = message;
  if (first_error == CNC_OK) {
    first_error = status;
    first_message = message;
  }
  log(CNC_LOG_ERROR, message);
  return status;
}

void context::log(int level, const std::string& message) const {
  if (log_cb) {
    log_cb(level, message.c_str(), log_data);
  } else if (verbose || level == CNC_LOG_WARNING) {
    // Without a callback, warnings still reach the terminal (a silent CPU fallback or zero
    // diagonal would hide what the user must know); errors are the calls' statuses.
    static const char* names[] = {"error", "warning", "info"};
    std::fprintf(stderr, "cnc %s: %s\n", names[std::clamp(level, 0, 2)], message.c_str());
  }
}

solve_options context::options() {
  if (solver == CNC_BLOCK_CG && preconditioner != CNC_PRECOND_NONE &&
      preconditioner != CNC_PRECOND_JACOBI)
    throw error(
        CNC_ERR_UNSUPPORTED,
        ": CNC_BLOCK_CG runs with CNC_PRECOND_NONE or CNC_PRECOND_JACOBI only (CNC_CG takes "
        "CNC_PRECOND_SSOR and the caller's preconditioner)");
  solve_options o;
  o.backend = backend_param;
  o.threads = threads;
  o.device_index = device_index;
  o.format = format_param;
  o.prec = precision_param == CNC_SINGLE  ? precision::f32
           : precision_param == CNC_MIXED ? precision::mixed
                                          : precision::f64;
  o.jacobi = preconditioner != CNC_PRECOND_NONE;
  o.ssor_omega = preconditioner == CNC_PRECOND_SSOR ? ssor_omega : 0.0;
  // CNC_SOLVER_DEFAULT: CG where A (or the least-squares AᵀA) is symmetric, else BiCGSTAB.
  const bool spd_form = symmetric || least_squares;
  o.solver = solver != CNC_SOLVER_DEFAULT ? solver : spd_form ? CNC_CG : CNC_BICGSTAB;
  if (o.solver == CNC_CG && !spd_form)
    log(CNC_LOG_INFO,
        "CNC_CG on a matrix declared nonsymmetric (CNC_SYMMETRIC 0): CG needs a symmetric "
        "positive definite A; CNC_BICGSTAB or CNC_GMRES solve nonsymmetric systems");
  o.max_iterations = max_iterations;
  o.threshold = threshold;
  o.check_interval = check_interval;
  o.gmres_restart = gmres_restart;
  o.cg_indefinite = cg_indefinite;
  o.keep_matrix = keep_matrix;
  o.reorder = reorder;
  if (progress_cb) {
    o.progress = [this](std::int64_t it, double res, const iterate_reader* rd) {
      in_progress = true, iterate = rd;
      const int stop =
          progress_cb(CNCint(std::min<std::int64_t>(it, INT32_MAX)), res, progress_data);
      in_progress = false, iterate = nullptr;
      return stop != 0;
    };
  }
  o.log = [this](int level, const std::string& m) { log(level, m); };
  return o;
}

void context::solve(const csr_view& a, std::uint64_t version, int nrhs, const double* b,
                    double* x) {
  const double assembly = stats.assembly;
  stats = solve_stats{};
  stats.assembly = assembly;
  pipe.solve(options(), a, version, nrhs, b, x, stats);
  stats.conversion += csr_conversion_time;
  // Coefficients or right-hand sides added up past double's range end the solve "not finite":
  // say where, on that outcome only (no pass over the matrix otherwise).
  if (stats.reason == CNC_REASON_NOT_FINITE) {
    const int workers = host_threads(threads);
    const std::int64_t e = first_index(a.nnz(), std::int64_t(1) << 16, workers,
                                       [&](std::int64_t t) { return !std::isfinite(a.val[t]); });
    char m[256];
    if (e >= 0) {
      const auto row = std::upper_bound(a.row_ptr.begin(), a.row_ptr.end(), e) - 1;
      std::snprintf(m, sizeof m,
                    "the assembled matrix holds %g at row %lld, column %d (of the free "
                    "variables): the coefficients added there overflowed double",
                    a.val[std::size_t(e)], (long long)(row - a.row_ptr.begin()),
                    a.col[std::size_t(e)]);
      log(CNC_LOG_WARNING, m);
    }
    const std::int64_t len = std::int64_t(a.n) * nrhs;
    const std::int64_t r = first_index(len, std::int64_t(1) << 16, workers,
                                       [&](std::int64_t t) { return !std::isfinite(b[t]); });
    if (r >= 0) {
      std::snprintf(m, sizeof m,
                    "right-hand side %lld holds %g at row %lld (of the free variables): the "
                    "values added there overflowed double",
                    (long long)(r / a.n), b[r], (long long)(r % a.n));
      log(CNC_LOG_WARNING, m);
    }
  }
}

namespace {
// The caller's function as a column operator: a non-zero return fails the solve.
column_operator caller_operator(CNCoperator f, void* data, std::int32_t n, const char* what) {
  return [=](const double* x, double* y) {
    const int rc = f(x, y, CNCuint(n), data);
    if (rc != 0)
      throw error(CNC_ERR_CALLBACK,
                  std::string(": the ") + what + " operator returned " + std::to_string(rc));
  };
}
}  // namespace

void context::solve_operators(const csr_view* a, std::int32_t rows, int nrhs, const double* b,
                              double* x) {
  const bool user_m = preconditioner == CNC_PRECOND_USER;
  if (user_m && !op_precond)  // cncSetOperator keeps these together; a guard for the future
    throw error(CNC_ERR_STATE, ": CNC_PRECOND_USER without a preconditioner operator");
  const char* what = a ? "the caller's preconditioner (CNC_PRECOND_USER)"
                       : "the caller's matrix operator (CNC_OPERATOR_MATRIX)";
  if (direct::is_direct_solver(solver))
    throw error(CNC_ERR_UNSUPPORTED, std::string(": ") + what +
                                         " is applied by an iterative method; the direct "
                                         "solvers (CNC_CHOLMOD, CNC_SUPERLU, CNC_CUDSS) factor "
                                         "the matrix's entries and take no operator");
  if (precision_param != CNC_DOUBLE)
    throw error(CNC_ERR_UNSUPPORTED, std::string(": ") + what +
                                         " runs in double on the host; CNC_PRECISION is not "
                                         "CNC_DOUBLE");
  if (backend_param == CNC_BACKEND_CUDA || backend_param == CNC_BACKEND_OPENCL)
    throw error(CNC_ERR_UNSUPPORTED,
                std::string(": ") + what + " runs on the host; CNC_BACKEND asks for a GPU backend");
  if (!a && !user_m && preconditioner_set && preconditioner != CNC_PRECOND_NONE)
    throw error(CNC_ERR_UNSUPPORTED,
                ": a matrix operator has no diagonal or triangles to read: CNC_PRECOND_JACOBI and "
                "CNC_PRECOND_SSOR cannot be applied (CNC_PRECOND_NONE, or the caller's "
                "preconditioner through cncSetOperator)");
  const column_operator op_a =
      a ? csr_operator(*a, threads) : caller_operator(op_matrix, op_matrix_data, rows, "matrix");
  const column_operator op_m =
      user_m ? caller_operator(op_precond, op_precond_data, rows, "preconditioner")
             : column_operator{};
  const std::string why = std::string(a ? "the assembled matrix (CSR, on the host's cores)"
                                        : "matrix-free: the caller's matrix operator") +
                          (user_m ? " with the caller's preconditioner"
                           : a    ? ""
                                  : ", no preconditioner (an operator has no diagonal)");
  const double assembly = stats.assembly;
  stats = solve_stats{};
  stats.assembly = assembly;
  solve_with_operators(options(), rows, nrhs, op_a, op_m, why, b, x, stats);
  if (a) stats.nnz = a->nnz(), stats.format_used = CNC_FORMAT_CSR;
}

}  // namespace cnc
