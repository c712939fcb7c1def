// The C API's eigen solver (cncEigenSolveCSR): the caller's K and M made canonical, handed to
// src/eigen/ (ARPACK), the outcome into the context's statistics.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "eigen/arpack.hpp"
#include "pipeline/pipeline.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

using cnc::context;
using cnc::error;
using namespace cnc::api;

extern "C" {

CNC_API CNCstatus cncEigenSolveCSR(CNCuint n, const CNCint64* k_row_ptr, const CNCuint* k_col_idx,
                                   const double* k_values, const CNCint64* m_row_ptr,
                                   const CNCuint* m_col_idx, const double* m_values, CNCint base,
                                   CNCuint nev, CNCenum which, double sigma, double* eigenvalues,
                                   double* eigenvectors) {
  return guarded("cncEigenSolveCSR", [&](context& c) {
    char args[160];
    std::snprintf(args, sizeof args, "n=%u, M=%s, base=%d, nev=%u, which=0x%x, sigma=%g", n,
                  m_row_ptr ? "given" : "NULL", base, nev, which, sigma);
    if (!k_row_ptr || !k_col_idx || !k_values || !eigenvalues || !eigenvectors)
      fail(CNC_ERR_NULL_POINTER,
           "(%s): k_row_ptr, k_col_idx, k_values, eigenvalues and eigenvectors must not be NULL",
           args);
    const bool has_m = m_row_ptr || m_col_idx || m_values;
    if (has_m && (!m_row_ptr || !m_col_idx || !m_values))
      fail(CNC_ERR_NULL_POINTER, "(%s): m_row_ptr, m_col_idx and m_values: all or none NULL", args);
    if (c.state == CNC_STATE_MATRIX || c.state == CNC_STATE_ROW)
      fail(CNC_ERR_STATE, "(%s): not allowed in state %s", args, state_name(c.state));
    if (n < 2 || n > CNCuint(INT32_MAX - 8))
      fail(CNC_ERR_INVALID_VALUE, "(%s): n must be in [2, 2^31 - 9]", args);
    if (base != 0 && base != 1) fail(CNC_ERR_INVALID_VALUE, "(%s): base must be 0 or 1", args);
    if (nev < 1 || nev >= n)
      fail(CNC_ERR_INVALID_VALUE,
           "(%s): nev must be in [1, n - 1] (ARPACK's Lanczos needs nev < n; a dense "
           "eigensolver suits such small problems)",
           args);
    if (which != CNC_EIGEN_SMALLEST && which != CNC_EIGEN_LARGEST && which != CNC_EIGEN_NEAREST)
      fail(CNC_ERR_INVALID_ENUM,
           "(%s): which must be CNC_EIGEN_SMALLEST, CNC_EIGEN_LARGEST or CNC_EIGEN_NEAREST", args);
    if (which == CNC_EIGEN_NEAREST && !std::isfinite(sigma))
      fail(CNC_ERR_NOT_FINITE, "(%s): sigma is not finite", args);
    const double t0 = cnc::now_seconds();
    c.stats = cnc::solve_stats{};
    try {
      const std::int32_t size = std::int32_t(n);
      cnc::check_row_ptr(size, k_row_ptr, base);
      const cnc::user_csr k = cnc::csr_from_user(size, k_row_ptr, k_col_idx, k_values, base);
      std::optional<cnc::user_csr> m;
      if (has_m) {
        cnc::check_row_ptr(size, m_row_ptr, base);
        m.emplace(cnc::csr_from_user(size, m_row_ptr, m_col_idx, m_values, base));
      }
      const double conversion = cnc::now_seconds() - t0;
      cnc::eigen::options o;
      o.nev = int(nev);
      o.which = which == CNC_EIGEN_SMALLEST  ? cnc::eigen::which::smallest
                : which == CNC_EIGEN_LARGEST ? cnc::eigen::which::largest
                                             : cnc::eigen::which::nearest;
      o.sigma = which == CNC_EIGEN_NEAREST ? sigma : 0.0;
      o.max_restarts = c.max_iterations > 0 ? c.max_iterations
                                            : std::max<std::int64_t>(100, 5 * std::int64_t(n));
      o.tolerance = c.eigen_threshold;
      o.threads = c.threads;
      o.log = [&c](int level, const std::string& line) { c.log(level, line); };
      const cnc::eigen::result r =
          cnc::eigen::solve(k.view, m ? &m->view : nullptr, o, eigenvalues, eigenvectors);
      cnc::solve_stats& s = c.stats;
      s.reason = r.reason;
      s.iterations = s.last_iterations = r.restarts;
      s.error = s.true_error = s.true_error_min = s.last_true_error = r.residual;
      s.conversion = conversion;
      s.solve = r.factor_time + r.iterate_time;
      s.backend_used = CNC_BACKEND_CPU;
      s.backend_name = "cpu";
      s.device_name = "host (ARPACK)";
      s.format_used = CNC_FORMAT_CSR;
      s.nnz = k.view.nnz();
      const int mode = which == CNC_EIGEN_NEAREST ? 3 : has_m ? 2 : 1;
      char line[256];
      std::snprintf(line, sizeof line,
                    "ARPACK mode %d (%s)%s%s; %lld restarts, %lld operator applications", mode,
                    mode == 3   ? "shift-invert: OP = (K - sigma M)^-1 M"
                    : mode == 2 ? "OP = M^-1 K"
                                : "OP = K",
                    *r.factored_by ? ", factored by " : "", r.factored_by, (long long)r.restarts,
                    (long long)r.products);
      s.choice_reason = line;
      s.elapsed = cnc::now_seconds() - t0;
      if (r.reason != CNC_REASON_CONVERGED) {
        c.log(CNC_LOG_WARNING, "cncEigenSolveCSR: " + r.why + "; nothing written");
      } else {
        char done[200];
        std::snprintf(done, sizeof done,
                      "cncEigenSolveCSR: %u eigenpairs in %.3f s (factorization %.3f s), largest "
                      "relative residual %.3e",
                      nev, s.elapsed, r.factor_time, r.residual);
        c.log(CNC_LOG_INFO, done);
      }
    } catch (const error& e) {
      c.stats = cnc::solve_stats{};
      fail(e.status(), "(%s)%s%s", args, *e.what() == ':' ? "" : ": ", e.what());
    }
  });
}

}  // extern "C"
