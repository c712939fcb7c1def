// The C API's complex solve: cncSolveCSRComplex. Its device format is zcsr (complex CSR): with
// an iterative method in double the pipeline takes the caller's complex CSR as it is (checked,
// made canonical only where it is not, fingerprinted for the next call, as cncSolveCSR's
// arrays) and holds it as zcsr; the system solved is the real-equivalent of 2n rows
// (conversion/complex.hpp), whose entries are then never built. A real format forced (BCRS2,
// BCRS4, SELL), other precisions, SSOR and the direct solvers take the real-equivalent CSR,
// built here, through the pipeline as cncSolveCSR's. b and x are the caller's interleaved
// (re, im) arrays, read and written in place as real 2n-vectors.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "cnc.h"
#include "conversion/complex.hpp"
#include "conversion/convert.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

using cnc::context;
using cnc::error;
using namespace cnc::api;

namespace {

using zvalue = std::complex<double>;

// Jacobi for BiCGSTAB and GMRES on a complex A. The device's Jacobi multiplies each (re, im) pair
// by one real number, 1 / Re a_ii: A's Jacobi only where the diagonal is real (always so for CG's
// Hermitian A). Where some a_ii is not real, zcsr in double takes D⁻¹ to the device, which
// applies it to the vectors (device_system::zprecondition). The other paths (a real format
// forced, other precisions) solve preconditioned on the right by the complex diagonal D
// explicitly: (A D⁻¹) y = b, x = D⁻¹ y. A D⁻¹ has a unit diagonal (the device's Jacobi is then
// the identity) and the same residual b - A x at every step.
struct complex_jacobi {
  std::vector<zvalue> d, dinv;   // a_jj, or 1 where it is zero or absent (Jacobi's rule); 1 / d
  cnc::host_vector<double> val;  // A D⁻¹: the canonical view's entries, (re, im) each
  std::vector<double> x;         // D x, one column per right-hand side
  bool overflow = false;         // the scaling overflowed: not applied
  void to_caller(double* out, std::size_t columns) const { scale(x.data(), out, columns, dinv); }
  // out = diag(s) in, column by column, on every core.
  void scale(const double* in, double* out, std::size_t columns,
             const std::vector<zvalue>& s) const {
    const std::size_t n = s.size();
    cnc::parallel_pieces(std::int64_t(n), 1 << 15, cnc::host_threads(),
                         [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                           for (std::size_t j = 0; j < columns; ++j)
                             for (std::size_t i = std::size_t(i0); i < std::size_t(i1); ++i)
                               times(in + 2 * (j * n + i), s[i], out + 2 * (j * n + i));
                         });
  }
  // out = v s on (re, im) pairs, in plain arithmetic (std::complex's operators check for
  // infinities: several times slower, and every value here is finite).
  static void times(const double* v, zvalue s, double* out) {
    const double re = v[0] * s.real() - v[1] * s.imag(), im = v[0] * s.imag() + v[1] * s.real();
    out[0] = re, out[1] = im;
  }
};

// Fills `cj` and returns true when A (canonical) has a diagonal entry with an imaginary part.
bool complex_diagonal(const cnc::zcsr_view& a, const double* x, std::size_t columns,
                      complex_jacobi& cj) {
  const std::size_t n = std::size_t(a.n);
  cj.d.assign(n, zvalue(1.0, 0.0));
  std::vector<char> complex(std::size_t(cnc::piece_count(a.n, 1 << 15)), 0);
  cnc::parallel_pieces(
      a.n, 1 << 15, cnc::host_threads(), [&](std::int64_t p, std::int64_t r0, std::int64_t r1) {
        for (std::size_t i = std::size_t(r0); i < std::size_t(r1); ++i) {
          const auto first = a.col.begin() + a.row_ptr[i], last = a.col.begin() + a.row_ptr[i + 1];
          const auto at = std::lower_bound(first, last, std::int32_t(i));
          if (at == last || *at != std::int32_t(i)) continue;
          const std::size_t t = std::size_t(at - a.col.begin());
          const zvalue v(a.val[2 * t], a.val[2 * t + 1]);
          // 1 where the device's Jacobi takes 1 (|a_ii| below DBL_MIN: 1 / a_ii overflows).
          if (std::abs(v) >= DBL_MIN) cj.d[i] = v;
          complex[std::size_t(p)] |= v.imag() != 0.0;
        }
      });
  if (std::none_of(complex.begin(), complex.end(), [](char c) { return c != 0; })) return false;
  cj.dinv.resize(n);
  for (std::size_t i = 0; i < n; ++i) cj.dinv[i] = 1.0 / cj.d[i];
  cj.val.resize(a.val.size());
  cnc::parallel_pieces(
      a.n, 4096, cnc::host_threads(), [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
        for (std::int64_t t = a.row_ptr[std::size_t(r0)]; t < a.row_ptr[std::size_t(r1)]; ++t)
          complex_jacobi::times(a.val.data() + 2 * t, cj.dinv[std::size_t(a.col[std::size_t(t)])],
                                cj.val.data() + 2 * t);
      });
  cj.x.resize(2 * n * columns);
  cj.scale(x, cj.x.data(), columns, cj.d);
  // Rows scaled far apart can overflow A D⁻¹ or D x: then the unscaled system is solved.
  auto finite = [](const auto& v) {
    return cnc::first_index(std::int64_t(v.size()), 1 << 16, cnc::host_threads(),
                            [&](std::int64_t e) { return !std::isfinite(v[std::size_t(e)]); }) < 0;
  };
  cj.overflow = !finite(cj.val) || !finite(cj.x);
  return !cj.overflow;
}

// D⁻¹ of the caller's arrays (any order, duplicates summed; 1 where a_ii is absent or below
// DBL_MIN, as the device's Jacobi) as (re, im) pairs into dinv (2 n doubles); whether some a_ii
// has an imaginary part other than 0 (NaN included: the canonical pass then names it), max |D⁻¹|
// and the count of 1s taken. One read of the columns and the diagonal's values: a real diagonal
// costs no copy of A.
struct diagonal_facts {
  bool complex = false;
  double max_abs = 0.0;
  std::int64_t ones = 0;
};
diagonal_facts complex_diagonal_of(CNCuint n, const CNCint64* row_ptr, const CNCuint* col,
                                   const double* val, CNCint base, double* dinv) {
  const std::size_t pieces = std::size_t(cnc::piece_count(std::int64_t(n), 1 << 14));
  std::vector<char> complex(pieces, 0);
  std::vector<double> most(pieces, 0.0);
  std::vector<std::int64_t> ones(pieces, 0);
  cnc::parallel_pieces(std::int64_t(n), 1 << 14, cnc::host_threads(),
                       [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
                         for (std::int64_t i = i0; i < i1; ++i) {
                           zvalue a(0.0, 0.0);
                           for (CNCint64 t = row_ptr[i] - base; t < row_ptr[i + 1] - base; ++t)
                             if (std::int64_t(col[t]) - base == i)
                               a += zvalue(val[2 * t], val[2 * t + 1]);
                           complex[std::size_t(p)] |= !(a.imag() == 0.0);
                           const bool tiny = !(std::abs(a) >= DBL_MIN);
                           ones[std::size_t(p)] += tiny ? 1 : 0;
                           const zvalue r = tiny ? zvalue(1.0, 0.0) : 1.0 / a;
                           dinv[2 * i] = r.real(), dinv[2 * i + 1] = r.imag();
                           most[std::size_t(p)] = std::max(most[std::size_t(p)], std::abs(r));
                         }
                       });
  diagonal_facts f;
  f.complex = std::any_of(complex.begin(), complex.end(), [](char c) { return c != 0; });
  for (std::size_t p = 0; p < pieces; ++p)
    f.max_abs = std::max(f.max_abs, most[p]), f.ones += ones[p];
  return f;
}

}  // namespace

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
    // Complex CSR on the device (zcsr, or zsell on AUTO where it pays) unless a real format of
    // the real-equivalent is forced.
    o.complex_system = true;
    o.complex_auto = o.format == CNC_FORMAT_AUTO;
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
      const bool zcsr_direct = cnc::native_complex(o.format) && o.prec == cnc::precision::f64 &&
                               iterative && o.ssor_omega == 0 && !o.cg_indefinite;
      cnc::host_vector<double> dinv;
      diagonal_facts diag;
      if ((o.solver == CNC_BICGSTAB || o.solver == CNC_GMRES) && o.jacobi && o.ssor_omega == 0) {
        cnc::memory::reserve(16.0 * double(n), [&] {
          return "the inverse of the complex diagonal (" + std::to_string(n) +
                 " entries of 16 bytes)";
        });
        dinv.resize(2 * std::size_t(n));
        diag = complex_diagonal_of(n, row_ptr, col_idx, values, base, dinv.data());
      }
      const bool complex_d = diag.complex;
      // |D⁻¹| beyond 2^500 (an a_ii below 2^-500): the host path below builds A D⁻¹, checks it
      // and falls back to the unscaled system where it overflows. Below that bound the device
      // applies D⁻¹ to the vectors; A D⁻¹ could then still overflow only through entries above
      // about 2^524 (5e157), whose squares already overflow double.
      if (complex_d && zcsr_direct && diag.max_abs <= std::ldexp(1.0, 500)) {
        // Jacobi on the complex diagonal applied by the device to the vectors, A as it is.
        c.log(CNC_LOG_INFO, "the diagonal is complex: Jacobi on the complex diagonal");
        o.complex_dinv = dinv.data();
        o.complex_dinv_ones = diag.ones;
        cnc::caller_csr in{std::int32_t(n), row_ptr, col_idx, values, base};
        in.complex = true;
        c.pipe.solve_user(o, in, next_version(), int(nrhs), b, x, c.stats);
        return;
      }
      cnc::host_vector<double>().swap(dinv);  // not used past here
      if (complex_d) {
        const cnc::user_zcsr a =
            cnc::zcsr_from_user(std::int32_t(n), row_ptr, col_idx, values, base, false);
        cnc::memory::reserve(16.0 * double(a.view.nnz()) + 32.0 * double(n) * (1.0 + nrhs), [&] {
          return "the complex Jacobi scaling (A D^-1: " + std::to_string(a.view.nnz()) +
                 " entries of 16 bytes, D and D x)";
        });
        const double t0 = cnc::now_seconds();
        complex_jacobi cj;
        if (complex_diagonal(a.view, x, nrhs, cj)) {
          const double scaling = cnc::now_seconds() - t0;
          c.log(CNC_LOG_INFO,
                "the diagonal is complex: Jacobi as the right preconditioner D^-1 applied to the "
                "matrix (A D^-1 y = b, x = D^-1 y)");
          if (o.progress)  // the callback sees x, not y
            o.progress = [&, outer = o.progress](std::int64_t it, double res,
                                                 const cnc::iterate_reader* rd) {
              if (!rd) return outer(it, res, nullptr);
              const cnc::iterate_reader unscaled = [&](double* out) {
                std::vector<double> y(cj.x.size());
                (*rd)(y.data());
                cj.scale(y.data(), out, nrhs, cj.dinv);
              };
              return outer(it, res, &unscaled);
            };
          const cnc::zcsr_view scaled{a.view.n, a.view.row_ptr, a.view.col, cj.val};
          if (cnc::native_complex(o.format) && o.prec == cnc::precision::f64) {
            cnc::caller_csr in{std::int32_t(n), scaled.row_ptr.data(),
                               reinterpret_cast<const std::uint32_t*>(scaled.col.data()),
                               scaled.val.data(), 0};
            in.complex = true;
            c.pipe.solve_user(o, in, next_version(), int(nrhs), b, cj.x.data(), c.stats);
          } else {
            const cnc::real_equivalent_csr r = cnc::real_equivalent(scaled);
            c.pipe.solve_user(o,
                              cnc::caller_csr{r.n, r.row_ptr.data(), r.col.data(), r.val.data(), 0},
                              next_version(), int(nrhs), b, cj.x.data(), c.stats);
          }
          cj.to_caller(x, nrhs);
          c.stats.conversion += scaling;  // counted as the matrix's preparation
          return;
        }
        if (cj.overflow)
          c.log(CNC_LOG_WARNING,
                "the diagonal is complex but A D^-1 or D x overflows double: solved unscaled, "
                "Jacobi on the real parts of the diagonal");
      }
      if (zcsr_direct) {
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
