// The C API's complex solve: cncSolveCSRComplex. Its device format is zcsr (complex CSR): with
// an iterative method in double the pipeline takes the caller's complex CSR as it is (checked,
// made canonical only where it is not, fingerprinted for the next call, as cncSolveCSR's
// arrays) and holds it as zcsr; the system solved is the real-equivalent of 2n rows
// (conversion/complex.hpp), whose entries are then never built. A real format forced (BCRS2,
// BCRS4, SELL), other precisions, SSOR and the direct solvers take the real-equivalent CSR,
// built here, through the pipeline as cncSolveCSR's. b and x are the caller's interleaved
// (re, im) arrays, read and written in place as real 2n-vectors.
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "cnc.h"
#include "conversion/complex.hpp"
#include "conversion/convert.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"

using cnc::context;
using cnc::error;
using namespace cnc::api;

extern "C" {

CNC_API CNCstatus cncSolveCSRComplex(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                                     const double* values, CNCint base, CNCuint nrhs,
                                     const double* b, double* x) {
  return guarded("cncSolveCSRComplex", [&](context& c) {
    char args[160];
    std::snprintf(args, sizeof args, "n=%u, base=%d, nrhs=%u", n, base, nrhs);
    check_csr_call(c, args, n, row_ptr, col_idx, values, base, nrhs, b, x);
    if (n > CNCuint((INT32_MAX - 8) / 2))
      fail(CNC_ERR_INVALID_VALUE, "(%s): n out of range (at most %d complex unknowns)", args,
           (INT32_MAX - 8) / 2);
    const std::size_t len = 2 * std::size_t(n) * nrhs;
    const std::int64_t bad = cnc::first_index(
        std::int64_t(len), 1 << 16, cnc::host_threads(),
        [&](std::int64_t e) { return !std::isfinite(b[e]) || !std::isfinite(x[e]); });
    if (bad >= 0) {
      const bool in_b = !std::isfinite(b[bad]);
      fail(CNC_ERR_NOT_FINITE, "(%s): %s[%lld]=%g (the %s part of entry %lld) is not finite", args,
           in_b ? "b" : "x", (long long)bad, in_b ? b[bad] : x[bad], bad % 2 ? "imaginary" : "real",
           (long long)(bad / 2));
    }
    if (c.op_matrix || c.uses_operators())
      fail(CNC_ERR_UNSUPPORTED,
           "(%s): the caller's operators (cncSetOperator) act on real vectors: complex systems "
           "are solved from their CSR only",
           args);
    cnc::solve_options o = c.options();
    // Complex CSR on the device (zcsr) unless a real format of the real-equivalent is forced.
    o.complex_system = true;
    if (o.format == CNC_FORMAT_AUTO || o.format == CNC_FORMAT_CSR) o.format = CNC_FORMAT_ZCSR;
    c.stats = cnc::solve_stats{};
    try {
      cnc::check_row_ptr(std::int32_t(n), row_ptr, base);
      // zcsr with an iterative method in double: straight from the caller's arrays, checked
      // (and fingerprinted, for the next call) by the pipeline; the real-equivalent is never
      // built. Otherwise (a real format forced, other precisions, SSOR, direct solvers) the
      // real-equivalent CSR is built here and solved as cncSolveCSR's.
      const bool iterative = o.solver == CNC_CG || o.solver == CNC_BICGSTAB ||
                             o.solver == CNC_GMRES || o.solver == CNC_BLOCK_CG;
      if (o.format == CNC_FORMAT_ZCSR && o.prec == cnc::precision::f64 && iterative &&
          o.ssor_omega == 0 && !o.cg_indefinite) {
        cnc::caller_csr in{std::int32_t(n), row_ptr, col_idx, values, base};
        in.complex = true;
        c.pipe.solve_user(o, in, next_version(), int(nrhs), b, x, c.stats);
        return;
      }
      // CG, block CG (any preconditioner) and CHOLMOD need a Hermitian positive definite A; the
      // checks a pass over the sorted rows affords: Hermitian, diagonal real and > 0.
      const cnc::user_zcsr a = cnc::zcsr_from_user(std::int32_t(n), row_ptr, col_idx, values, base,
                                                   cnc::needs_hermitian(o));
      const cnc::real_equivalent_csr r = cnc::real_equivalent(a.view);
      c.pipe.solve_user(o, cnc::caller_csr{r.n, r.row_ptr.data(), r.col.data(), r.val.data(), 0},
                        next_version(), int(nrhs), b, x, c.stats);
    } catch (const error& e) {
      fail(e.status(), "(%s)%s%s", args, *e.what() == ':' ? "" : ": ", e.what());
    }
  });
}

}  // extern "C"
