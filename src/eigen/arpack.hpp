// The symmetric eigen solver: a few eigenpairs of K x = λ M x (K, M symmetric, M positive
// definite, or M = I) by ARPACK's implicitly restarted Lanczos (dsaupd/dseupd, reverse
// communication). ARPACK is opened at run time (dlopen: Debian's libarpack.so.2, or the path in
// CNC_ARPACK_LIBRARY) through ARPACK-NG's C entry points dsaupd_c/dseupd_c, so libcnc has no
// link dependency on it and passes no Fortran string lengths. A machine without it gets
// CNC_ERR_UNSUPPORTED with the reason.
//
// Products K x and M x run on the host's cores (csr_operator). The solves a mode needs use the
// direct module: shift-invert factors K − σM, which is indefinite for a σ inside the spectrum,
// so CHOLMOD (Cholesky, the fastest) is tried first and SuperLU (LU with partial pivoting) takes
// over when CHOLMOD finds no Cholesky factor or is missing; the generalized problem without a
// shift factors M the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "matrix/matrix.hpp"

namespace cnc::eigen {

enum class which { smallest, largest, nearest };

// Whether ARPACK can be loaded here (opened once per process); when not, *why (may be null)
// says why.
bool available(std::string* why);

struct options {
  int nev = 1;
  eigen::which which = which::smallest;
  double sigma = 0;               // the shift (which::nearest)
  std::int64_t max_restarts = 0;  // ARPACK's iteration limit (> 0)
  double tolerance = 0;           // ARPACK's tol: 0 = machine precision
  int threads = 0;                // host threads for the products (0: one per core)
  std::function<void(int, const std::string&)> log;  // CNC_LOG_* levels; may be empty
};

struct result {
  int reason = 0;     // CNC_REASON_CONVERGED, _MAX_ITERATIONS or _BREAKDOWN
  int converged = 0;  // eigenpairs ARPACK found converged
  std::int64_t restarts = 0;
  std::int64_t products = 0;  // applications of the operator (OP x)
  double factor_time = 0, iterate_time = 0;
  double residual = 0;           // max over the pairs of |K v − λ M v| / (|K|∞ |v|)
  std::string why;               // for reasons other than converged
  const char* factored_by = "";  // "CHOLMOD", "SuperLU" or "" (no factorization)
};

// The opts.nev eigenpairs of (K, M) chosen by opts.which, ascending: values[i] and the column
// vectors[i n .. i n + n) (M-orthonormal, the largest component of each positive). `k` and `m`
// are canonical CSR (0-based, sorted, no duplicates), checked symmetric here; `m` may be null
// (M = I). values and vectors are written only when every pair converged (reason CONVERGED).
// Throws cnc::error: CNC_ERR_UNSUPPORTED (no ARPACK, no direct solver for a mode that needs one,
// K or M not symmetric), CNC_ERR_INVALID_VALUE (nev out of range, M not positive definite on its
// diagonal, K − σM singular), CNC_ERR_OUT_OF_MEMORY.
result solve(const csr_view& k, const csr_view* m, const options& opts, double* values,
             double* vectors);

}  // namespace cnc::eigen
