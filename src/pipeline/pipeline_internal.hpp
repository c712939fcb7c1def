// What the files of the solve pipeline (pipeline*.cpp) share: the API's format codes, the key of
// a prepared system, logging.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "cnc.h"
#include "conversion/complex.hpp"
#include "conversion/convert.hpp"
#include "matrix/matrix.hpp"
#include "pipeline/pipeline.hpp"
#include "solver/pcg.hpp"
#include "util/error.hpp"

namespace cnc::pipeline_detail {

// A bad matrix handed over by the caller: reported as it is, whatever the backend (no fallback
// to another one, which would refuse it the same way).
struct input_error : error {
  using error::error;
};

// The caller's CSR made canonical on the host (csr_from_user), its faults the caller's
// (input_error).
user_csr caller_canonical(const caller_csr& raw);

inline format from_api_format(int f) {
  return f == CNC_FORMAT_BCRS2   ? format::bcrs2
         : f == CNC_FORMAT_BCRS4 ? format::bcrs4
         : f == CNC_FORMAT_SELL  ? format::sell
         : f == CNC_FORMAT_ZCSR  ? format::zcsr
         : f == CNC_FORMAT_ZSELL ? format::zsell
                                 : format::csr;
}
inline int api_format(format f) {
  switch (f) {
    case format::csr:
      return CNC_FORMAT_CSR;
    case format::bcrs2:
      return CNC_FORMAT_BCRS2;
    case format::bcrs4:
      return CNC_FORMAT_BCRS4;
    case format::sell:
      return CNC_FORMAT_SELL;
    case format::zcsr:
      return CNC_FORMAT_ZCSR;
    case format::zsell:
      return CNC_FORMAT_ZSELL;
  }
  return CNC_FORMAT_CSR;
}

// CNC_FORMAT_ZCSR and _ZSELL hold complex matrices (cncSolveCSRComplex, which sets
// complex_system): any other solve refuses them before anything changes.
inline void check_format(const solve_options& o) {
  if (native_complex(o.format) && !o.complex_system)
    throw error(CNC_ERR_UNSUPPORTED,
                std::string(": ") +
                    (o.format == CNC_FORMAT_ZCSR ? "CNC_FORMAT_ZCSR" : "CNC_FORMAT_ZSELL") +
                    " stores complex matrices: only cncSolveCSRComplex uses it (choose "
                    "CNC_FORMAT_AUTO or a real format for a real matrix)");
}

// The native complex format of a complex matrix of n complex rows and nnz complex entries
// (o.format ZCSR or ZSELL): ZSELL when forced, refused with CNC_ERR_UNSUPPORTED where the
// backend does not store it; on AUTO (o.complex_auto) ZSELL where the backend stores it and
// choose_complex_format picks it (zsell_stored: the entries it would store, asked only then);
// ZCSR otherwise.
format complex_format(const solve_options& o, const backend& be, std::int32_t n, std::int64_t nnz,
                      const std::function<std::int64_t()>& zsell_stored);

inline prepared_key key_for(const solve_options& o, std::uint64_t version, const backend* be,
                            int k) {
  return prepared_key{version, be, o.format, o.prec, k, o.jacobi};
}

// A complex caller's CSR made canonical (in place when it is already) and, where the method
// needs it (needs_hermitian: CG, block CG, CHOLMOD), checked Hermitian with a real positive
// diagonal. Throws cnc::error naming the first bad entry.
user_zcsr complex_canonical(const solve_options& o, const caller_csr& raw);

inline void log_to(const solve_options& o, int level, const std::string& m) {
  if (o.log) o.log(level, m);
}

// The iteration limit: the caller's, else 5 n (at least 100).
inline std::int64_t max_iterations(const solve_options& o, std::int32_t n) {
  return o.max_iterations > 0 ? o.max_iterations : std::max<std::int64_t>(100, 5 * std::int64_t(n));
}

// A method's outcome into the statistics: worst reason, largest residuals, the last system's.
inline void fill_outcome(const pcg_result& r, solve_stats& stats) {
  stats.iterations = r.iterations;
  stats.reason = r.reason;
  auto max_of = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  stats.error = max_of(r.residual);
  stats.true_error = max_of(r.true_residual);
  stats.true_error_min = r.true_residual.empty()
                             ? 0
                             : *std::min_element(r.true_residual.begin(), r.true_residual.end());
  stats.last_iterations = r.iters.empty() ? r.iterations : r.iters.back();
  stats.last_true_error = r.true_residual.empty() ? 0 : r.true_residual.back();
  stats.system_iterations = r.iters;
  stats.system_reasons = r.reasons;
  stats.system_error = r.residual;
  stats.system_true_error = r.true_residual;
}

}  // namespace cnc::pipeline_detail
