// ZCSR (complex CSR), part of the generic backend suite (test_backend.cpp): the backend's zcsr
// kernels against a plain complex loop written here, on a complex matrix with empty rows, rows of
// one entry and rows of 513 and 2000 entries, for every precision and 1 and 3 systems (apply and
// the vector surface's spmv); and PCG over zcsr (the fused steps: spmv_dot, update_xr, update_p,
// the Jacobi diagonal repeated for re and im) against PCG over the real-equivalent in CSR. ZSELL
// (the complex SELL, where the backend stores it: CUDA) takes the same product and PCG tests.
#include <setjmp.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend_harness.hpp"
#include "backends/backend.hpp"
#include "cnc.h"
#include "conversion/complex.hpp"
#include "host_reference.hpp"
#include "matrix/matrix.hpp"
#include "solver/pcg.hpp"
#include "util/error.hpp"

// After every C++ header: cmocka's macros clash with <ios>.
extern "C" {
#include <cmocka.h>
}

using namespace suite;

namespace {

// A complex matrix of n rows: row i % 97 == 3 empty, i % 97 == 5 only its diagonal, rows 7 and
// 11 of 2000 and 513 entries, the others a diagonal and a few neighbours; `hermitian`: the
// conjugate mirror of every entry is added and the diagonal made dominant (then no row is
// empty). Canonical (sorted columns, no duplicates).
cnc::complex_csr complex_matrix(std::int32_t n, bool hermitian, std::uint64_t seed) {
  std::vector<double> u = random_vec(std::size_t(n) * 64, seed);
  std::size_t next = 0;
  auto rnd = [&] { return u[next++ % u.size()]; };
  std::vector<std::vector<std::pair<std::int32_t, std::pair<double, double>>>> rows(
      static_cast<std::size_t>(n));
  auto add = [&](std::int32_t i, std::int32_t j, double re, double im) {
    for (auto& e : rows[std::size_t(i)])
      if (e.first == j) {
        e.second.first += re, e.second.second += im;
        return;
      }
    rows[std::size_t(i)].push_back({j, {re, im}});
  };
  for (std::int32_t i = 0; i < n; ++i) {
    if (!hermitian && i % 97 == 3) continue;
    add(i, i, 0, 0);
    if (i % 97 == 5) continue;
    const int len = i == 7 ? 2000 : i == 11 ? 513 : 4;
    for (int t = 0; t < len; ++t) {
      const std::int32_t j = len > 4 ? std::int32_t((std::int64_t(t) * 7919 + i) % n)
                                     : std::int32_t((i + 1 + t * 13) % n);
      if (j == i || (hermitian && (j % 97 == 5 || i % 97 == 5))) continue;
      const double re = rnd(), im = rnd();
      add(i, j, re, im);
      if (hermitian) add(j, i, re, -im);
    }
  }
  cnc::complex_csr a;
  a.n = n;
  a.row_ptr.assign(std::size_t(n) + 1, 0);
  for (std::int32_t i = 0; i < n; ++i) {
    auto& r = rows[std::size_t(i)];
    std::sort(r.begin(), r.end());
    double offdiag = 0;
    for (auto& e : r) offdiag += std::hypot(e.second.first, e.second.second);
    for (auto& e : r)
      if (e.first == i) e.second = {hermitian ? offdiag + 1.0 : 2.0 + rnd(), hermitian ? 0 : rnd()};
    a.row_ptr[std::size_t(i) + 1] = a.row_ptr[std::size_t(i)] + std::int64_t(r.size());
    for (auto& e : r) {
      a.col.push_back(e.first);
      a.val.push_back(e.second.first);
      a.val.push_back(e.second.second);
    }
  }
  return a;
}

// The complex formats the backend under test stores: ZCSR, and ZSELL where it runs it (said
// where it does not).
std::vector<cnc::format> complex_formats() {
  if (g_backend->runs_complex_sell()) return {cnc::format::zcsr, cnc::format::zsell};
  std::printf("backend %s: no ZSELL (CUDA only): ZCSR tested alone\n", g_name.c_str());
  return {cnc::format::zcsr};
}

// The same and the real-equivalent in CSR.
std::vector<cnc::format> and_csr(std::vector<cnc::format> f) {
  f.push_back(cnc::format::csr);
  return f;
}

// The zcsr (or zsell) host matrix (and its real-equivalent CSR) of `a`, as the pipeline builds
// it; d padded with ones to the format's rows.
struct zprepared {
  cnc::csr_matrix real;
  cnc::zcsr_matrix z;
  cnc::zcsr_view zv;
  cnc::host_matrix hm;
  std::vector<double> d;
};
std::unique_ptr<zprepared> prepare_zcsr(const cnc::complex_csr& a, cnc::format f) {
  auto p = std::make_unique<zprepared>();
  const cnc::real_equivalent_csr r = cnc::real_equivalent(a);
  p->real.n = r.n;
  p->real.row_ptr = r.row_ptr;
  p->real.col.assign(r.col.begin(), r.col.end());
  p->real.val.assign(r.val.begin(), r.val.end());
  p->hm.fmt = f;
  p->hm.csr = p->real;
  if (cnc::is_complex(f)) {
    p->z = cnc::zcsr_from_real_equivalent(p->real);
    p->zv = p->z;
    p->hm.zcsr = &p->zv;
  }
  p->d.assign(std::size_t(p->hm.n_padded()), 1.0);
  for (std::int32_t i = 0; i < a.n; ++i)
    for (std::int64_t t = a.row_ptr[std::size_t(i)]; t < a.row_ptr[std::size_t(i) + 1]; ++t)
      if (a.col[std::size_t(t)] == i && a.val[2 * std::size_t(t)] != 0)
        p->d[2 * std::size_t(i)] = p->d[2 * std::size_t(i) + 1] = 1.0 / a.val[2 * std::size_t(t)];
  return p;
}

}  // namespace

void test_zcsr_apply(void**) {
  const cnc::complex_csr a = complex_matrix(3000, false, 71);
  const std::int32_t n = a.n, nr = 2 * n;
  for (cnc::format f : complex_formats()) {
    auto prep = prepare_zcsr(a, f);
    if (prep->z.nnz() != a.nnz() || prep->z.val != a.val || prep->z.col != a.col)
      fail_msg("zcsr_from_real_equivalent does not give the complex CSR back");
    // The real-equivalent's Jacobi diagonal taken from the complex CSR itself.
    std::int64_t zeros = -1;
    const cnc::host_vector<double> d =
        cnc::inverse_diagonal(cnc::zcsr_view(a), prep->hm.n_padded(), true, &zeros);
    std::int64_t want_zeros = 0;  // real-equivalent rows without a diagonal: 2 a complex row
    for (std::int32_t r = 0; r < prep->hm.n_padded(); ++r) {
      if (d[std::size_t(r)] != prep->d[std::size_t(r)])
        fail_msg("inverse diagonal row %d: %.17g, want %.17g", r, d[std::size_t(r)],
                 prep->d[std::size_t(r)]);
      if (r >= nr) continue;  // padding
      bool found = false;
      for (std::int64_t t = a.row_ptr[std::size_t(r / 2)]; t < a.row_ptr[std::size_t(r / 2) + 1];
           ++t)
        found = found || (a.col[std::size_t(t)] == r / 2 && a.val[2 * std::size_t(t)] != 0);
      want_zeros += !found;
    }
    if (zeros != want_zeros)
      fail_msg("zero diagonals %lld, want %lld", (long long)zeros, (long long)want_zeros);
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::mixed, cnc::precision::f32}) {
      if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
      for (int k : {1, 3})
        for (bool bare : {false, true}) {
          // bare: no real-equivalent, its row count only (what cncSolveCSRComplex hands over).
          cnc::host_matrix hm = prep->hm;
          if (bare) hm.csr = cnc::csr_view{nr, {}, {}, {}};
          auto sys = g_backend->create_system(hm, prep->d, p, k);
          std::vector<double> x = random_vec(std::size_t(nr) * k, 73), y(x.size()), y2(x.size()),
                              y3(x.size()), zero(x.size(), 0.0);
          sys->apply(x.data(), y.data());
          // The vector surface's product and residual (b = 0: -A x): the same kernel.
          const int v0 = sys->add_vectors(2);
          sys->set_vectors(zero.data(), x.data());
          sys->spmv(cnc::device_system::vec_x, v0);
          sys->residual(cnc::device_system::vec_x, v0 + 1);
          sys->read(v0, y2.data());
          sys->read(v0 + 1, y3.data());
          for (double& v : y3) v = -v;
          const double tol = p == cnc::precision::f32 ? 1e-6 : 1e-14;
          for (int j = 0; j < k; ++j)
            for (std::int32_t i = 0; i < n; ++i) {
              const double* xj = x.data() + std::size_t(j) * nr;
              double sr = 0, si = 0, m = 0;
              for (std::int64_t t = a.row_ptr[std::size_t(i)]; t < a.row_ptr[std::size_t(i) + 1];
                   ++t) {
                const double ar = cnc_test::mat_round(p, a.val[2 * std::size_t(t)]);
                const double ai = cnc_test::mat_round(p, a.val[2 * std::size_t(t) + 1]);
                const std::size_t c = 2 * std::size_t(a.col[std::size_t(t)]);
                const double xr = cnc_test::vec_round(p, xj[c]),
                             xi = cnc_test::vec_round(p, xj[c + 1]);
                sr += ar * xr - ai * xi, si += ar * xi + ai * xr;
                m += std::fabs(ar) * (std::fabs(xr) + std::fabs(xi)) +
                     std::fabs(ai) * (std::fabs(xr) + std::fabs(xi));
              }
              for (int part = 0; part < 2; ++part) {
                const std::size_t at = std::size_t(j) * nr + 2 * std::size_t(i) + part;
                const double want = part ? si : sr;
                for (const std::vector<double>* got : {&y, &y2, &y3})
                  if (!(std::fabs((*got)[at] - want) <= tol * m * 8 + 1e-300))
                    fail_msg(
                        "%s %s k=%d row %d (%lld entries) %s system %d (%s): %.17g, want %.17g",
                        cnc::format_name(f), prec_name(p), k, i,
                        (long long)(a.row_ptr[std::size_t(i) + 1] - a.row_ptr[std::size_t(i)]),
                        part ? "im" : "re", j,
                        got == &y    ? "apply"
                        : got == &y2 ? "spmv"
                                     : "residual",
                        (*got)[at], want);
              }
            }
          sys->release_vectors();
        }
    }
  }
}

// zaxpby (complex y = alpha x + beta y over (re, im) pairs) against complex arithmetic here, on
// zcsr and on the real-equivalent in CSR, every precision, 1 and 3 systems with the middle one
// masked out (left bit for bit), x != y and x == y, and beta = 0 overwriting a NaN in y.
void test_zcsr_zaxpby(void**) {
  // 9001 complex rows: the CPU backend's chunks (8192 rows at most) end at odd rows too.
  const cnc::complex_csr a = complex_matrix(9001, false, 83);
  const std::int32_t nr = 2 * a.n;
  for (cnc::format f : and_csr(complex_formats())) {
    auto prep = prepare_zcsr(a, f);
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::mixed, cnc::precision::f32}) {
      if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
      for (int k : {1, 3}) {
        auto sys = g_backend->create_system(prep->hm, prep->d, p, k);
        const std::size_t len = std::size_t(nr) * std::size_t(k);
        const std::vector<double> u = random_vec(len, 87);
        const std::vector<double> w0 = random_vec(len, 89);
        std::vector<double> w = w0;
        w[2] = std::nan("");  // system 0, pair 1, re: overwritten where beta = 0
        const double alpha[6] = {0.75, -1.25, 0.0, 1.0, -2.0, 0.5};
        for (int same = 0; same < 2; ++same)
          for (int over = 0; over < 2; ++over) {
            if (same && over) continue;
            const double beta[6] = {over ? 0.0 : -0.5, over ? 0.0 : 2.0, 1.5, -1.0,
                                    over ? 0.0 : 0.25, over ? 0.0 : 0.0};
            std::vector<double> in = over ? w : w0;
            std::vector<std::uint8_t> mask(std::size_t(k), 1);
            sys->set_mask(mask.data());
            sys->set_vectors(u.data(), in.data());
            if (k == 3) mask[1] = 0;
            sys->set_mask(mask.data());
            const int xv = same ? cnc::device_system::vec_x : cnc::device_system::vec_b;
            sys->zaxpby(alpha, xv, beta, cnc::device_system::vec_x);
            std::vector<double> got(len);
            sys->read(cnc::device_system::vec_x, got.data());
            const double tol = p == cnc::precision::f32 ? 1e-6 : 1e-15;
            for (int j = 0; j < k; ++j)
              for (std::int32_t q = 0; q < a.n; ++q) {
                const std::size_t re = std::size_t(j) * nr + 2 * std::size_t(q), im = re + 1;
                if (!mask[std::size_t(j)]) {
                  if (got[re] != cnc_test::vec_round(p, in[re]) ||
                      got[im] != cnc_test::vec_round(p, in[im]))
                    fail_msg("zaxpby changed masked-out system %d at pair %d", j, q);
                  continue;
                }
                const double* src = same ? in.data() : u.data();
                const double xr = cnc_test::vec_round(p, src[re]),
                             xi = cnc_test::vec_round(p, src[im]);
                const double yr = cnc_test::vec_round(p, in[re]),
                             yi = cnc_test::vec_round(p, in[im]);
                const double ar = alpha[2 * j], ai = alpha[2 * j + 1], br = beta[2 * j],
                             bi = beta[2 * j + 1];
                const bool ov = br == 0.0 && bi == 0.0;
                const double wr = ar * xr - ai * xi + (ov ? 0.0 : br * yr - bi * yi);
                const double wi = ar * xi + ai * xr + (ov ? 0.0 : br * yi + bi * yr);
                const double m = 4 * (std::fabs(xr) + std::fabs(xi) +
                                      (ov ? 0.0 : std::fabs(yr) + std::fabs(yi)));
                if (!(std::fabs(got[re] - wr) <= tol * m) || !(std::fabs(got[im] - wi) <= tol * m))
                  fail_msg(
                      "zaxpby %s %s k=%d system %d pair %d (%s%s): (%.17g, %.17g), want "
                      "(%.17g, %.17g)",
                      cnc::format_name(f), prec_name(p), k, j, q, same ? "x == y" : "x != y",
                      ov ? ", beta 0" : "", got[re], got[im], wr, wi);
              }
          }
      }
    }
  }
}

// zdots and zcombine (the fused complex forms) against complex arithmetic here, on zcsr and on
// the real-equivalent in CSR, every precision, 1, 3 and 9 systems (9: two groups on CUDA) with
// system 1 (and 5) masked out (dots 0, y left bit for bit), 1, 3 and 11 vectors (11: two combine
// passes), beta 0 (a NaN in
// y overwritten) and beta != 0. The CPU, CUDA and OpenCL backends must have them; another
// backend without them (krylov_ops then composes: the complex Krylov tests) is said and skipped.
void test_zcsr_fused(void**) {
  const cnc::complex_csr a = complex_matrix(9001, false, 91);
  const std::int32_t nr = 2 * a.n;
  constexpr int most = 11;
  for (cnc::format f : and_csr(complex_formats())) {
    auto prep = prepare_zcsr(a, f);
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::mixed, cnc::precision::f32}) {
      if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
      for (int k : {1, 3, 9}) {
        auto sys = g_backend->create_system(prep->hm, prep->d, p, k);
        if (!sys->fused_complex()) {
          if (g_name == "cpu" || g_name == "cuda" || g_name == "opencl")
            fail_msg("the %s backend has no fused complex operations", g_name.c_str());
          std::printf("backend %s: no fused complex operations (composed by krylov_ops)\n",
                      g_name.c_str());
          return;
        }
        const std::size_t len = std::size_t(nr) * std::size_t(k);
        // Vectors v0 .. v0 + most - 1 the inputs, v0 + most the output y.
        const int v0 = sys->add_vectors(most + 1);
        std::vector<std::vector<double>> in;
        const std::vector<double> zero(len, 0.0);
        std::vector<double> ones(std::size_t(k), 1.0), zeros(std::size_t(k), 0.0);
        std::vector<std::uint8_t> mask(std::size_t(k), 1);
        sys->set_mask(mask.data());
        for (int i = 0; i <= most; ++i) {
          in.push_back(random_vec(len, 101 + std::uint64_t(i)));
          if (i == most) in.back()[2] = std::nan("");  // system 0, pair 1, re
          sys->set_vectors(zero.data(), in.back().data());
          sys->axpby(ones.data(), cnc::device_system::vec_x, zeros.data(), v0 + i);
          for (double& v : in.back()) v = cnc_test::vec_round(p, v);
        }
        if (k > 1) mask[1] = 0;  // 9: two CUDA groups, the second active
        if (k == 9) mask[5] = 0;
        sys->set_mask(mask.data());
        std::vector<double> coef(2 * most * std::size_t(k));
        const std::vector<double> cr = random_vec(coef.size(), 97);
        for (std::size_t e = 0; e < coef.size(); ++e) coef[e] = cr[e] - 0.5;
        auto pair_of = [&](const std::vector<double>& v, int j, std::int32_t q, int part) {
          return v[std::size_t(j) * nr + 2 * std::size_t(q) + part];
        };
        for (int count : {1, 3, most}) {
          std::vector<int> vs(static_cast<std::size_t>(count));
          for (int i = 0; i < count; ++i) vs[std::size_t(i)] = v0 + i;
          // zdots of u = v0 + 1 against the first `count` vectors (u among them).
          std::vector<double> got(2 * std::size_t(count) * k, -1.0);
          sys->zdots(v0 + 1, vs.data(), count, got.data());
          for (int i = 0; i < count; ++i)
            for (int j = 0; j < k; ++j) {
              const double* g = got.data() + 2 * (std::size_t(i) * k + j);
              if (!mask[std::size_t(j)]) {
                if (g[0] != 0.0 || g[1] != 0.0) fail_msg("zdots of masked-out system %d not 0", j);
                continue;
              }
              double sr = 0, si = 0, m = 0;
              for (std::int32_t q = 0; q < a.n; ++q) {
                const double ur = pair_of(in[1], j, q, 0), ui = pair_of(in[1], j, q, 1);
                const double vr = pair_of(in[std::size_t(i)], j, q, 0),
                             vi = pair_of(in[std::size_t(i)], j, q, 1);
                sr += ur * vr + ui * vi, si += ur * vi - ui * vr;
                m += (std::fabs(ur) + std::fabs(ui)) * (std::fabs(vr) + std::fabs(vi));
              }
              if (!(std::fabs(g[0] - sr) <= 1e-13 * m) || !(std::fabs(g[1] - si) <= 1e-13 * m))
                fail_msg(
                    "zdots %s %s k=%d count %d vector %d system %d: (%.17g, %.17g), want "
                    "(%.17g, %.17g)",
                    cnc::format_name(f), prec_name(p), k, count, i, j, g[0], g[1], sr, si);
            }
          // zcombine into y = v0 + most (beta 0: the NaN overwritten; then beta from 0.5).
          for (int over = 1; over >= 0; --over) {
            const int y = v0 + most;
            std::vector<double> before(len), after(len);
            sys->read(y, before.data());
            const std::vector<double> beta(std::size_t(k), over ? 0.0 : 0.5);
            sys->zcombine(vs.data(), count, coef.data(), beta.data(), y);
            sys->read(y, after.data());
            const double tol = p == cnc::precision::f64 ? 1e-14 : 1e-6;
            for (int j = 0; j < k; ++j)
              for (std::int32_t q = 0; q < a.n; ++q) {
                const double gr = pair_of(after, j, q, 0), gi = pair_of(after, j, q, 1);
                if (!mask[std::size_t(j)]) {
                  if (gr != pair_of(before, j, q, 0) || gi != pair_of(before, j, q, 1))
                    fail_msg("zcombine changed masked-out system %d at pair %d", j, q);
                  continue;
                }
                double wr = 0, wi = 0, m = 0;
                if (!over) {
                  wr = 0.5 * pair_of(before, j, q, 0), wi = 0.5 * pair_of(before, j, q, 1);
                  m = std::fabs(wr) + std::fabs(wi);
                }
                for (int i = 0; i < count; ++i) {
                  const double c0 = coef[2 * (std::size_t(i) * k + j)],
                               c1 = coef[2 * (std::size_t(i) * k + j) + 1];
                  const double vr = pair_of(in[std::size_t(i)], j, q, 0),
                               vi = pair_of(in[std::size_t(i)], j, q, 1);
                  wr += c0 * vr - c1 * vi, wi += c0 * vi + c1 * vr;
                  m += (std::fabs(c0) + std::fabs(c1)) * (std::fabs(vr) + std::fabs(vi));
                }
                if (!(std::fabs(gr - wr) <= tol * 4 * m) || !(std::fabs(gi - wi) <= tol * 4 * m))
                  fail_msg(
                      "zcombine %s %s k=%d count %d%s system %d pair %d: (%.17g, %.17g), "
                      "want (%.17g, %.17g)",
                      cnc::format_name(f), prec_name(p), k, count, over ? " beta 0" : "", j, q, gr,
                      gi, wr, wi);
              }
          }
        }
        sys->release_vectors();
      }
    }
  }
}

// zprecondition (out = D⁻¹ in over the pairs, D⁻¹ given by set_complex_jacobi) against complex
// products here, on zcsr and the real-equivalent in CSR, every precision, 1, 3 and 9 systems
// with system 1 (and 5) masked out (left bit for bit), out != in and out == in; before
// set_complex_jacobi it is refused.
void test_zcsr_zprecondition(void**) {
  const cnc::complex_csr a = complex_matrix(9001, false, 93);
  const std::int32_t nr = 2 * a.n;
  const std::vector<double> dinv = random_vec(std::size_t(nr), 95);
  for (cnc::format f : and_csr(complex_formats())) {
    auto prep = prepare_zcsr(a, f);
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::mixed, cnc::precision::f32}) {
      if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
      for (int k : {1, 3, 9}) {
        auto sys = g_backend->create_system(prep->hm, prep->d, p, k);
        const int v0 = sys->add_vectors(1);
        int status = CNC_OK;
        try {
          sys->zprecondition(cnc::device_system::vec_x, v0);
        } catch (const cnc::error& e) {
          status = e.status();
        }
        if (status != CNC_ERR_INVALID_VALUE)
          fail_msg("zprecondition before set_complex_jacobi gave status %d", status);
        sys->set_complex_jacobi(dinv.data());
        const std::size_t len = std::size_t(nr) * std::size_t(k);
        const std::vector<double> u = random_vec(len, 99), zero(len, 0.0);
        std::vector<std::uint8_t> mask(std::size_t(k), 1);
        for (int same = 0; same < 2; ++same) {
          mask.assign(std::size_t(k), 1);
          sys->set_mask(mask.data());
          sys->set_vectors(zero.data(), u.data());
          std::vector<double> before(len), got(len);
          const int out = same ? cnc::device_system::vec_x : v0;
          sys->read(out, before.data());
          if (k > 1) mask[1] = 0;  // 9: two CUDA groups, the second active
          if (k == 9) mask[5] = 0;
          sys->set_mask(mask.data());
          sys->zprecondition(cnc::device_system::vec_x, out);
          sys->read(out, got.data());
          const double tol = p == cnc::precision::f32 ? 1e-6 : 1e-15;
          for (int j = 0; j < k; ++j)
            for (std::int32_t q = 0; q < a.n; ++q) {
              const std::size_t re = std::size_t(j) * nr + 2 * std::size_t(q), im = re + 1;
              if (!mask[std::size_t(j)]) {
                if (got[re] != before[re] || got[im] != before[im])
                  fail_msg("zprecondition changed masked-out system %d at pair %d", j, q);
                continue;
              }
              const double dr = cnc_test::vec_round(p, dinv[2 * std::size_t(q)]),
                           di = cnc_test::vec_round(p, dinv[2 * std::size_t(q) + 1]);
              const double xr = cnc_test::vec_round(p, u[re]), xi = cnc_test::vec_round(p, u[im]);
              const double wr = dr * xr - di * xi, wi = dr * xi + di * xr;
              const double m =
                  4 * (std::fabs(dr) + std::fabs(di)) * (std::fabs(xr) + std::fabs(xi));
              if (!(std::fabs(got[re] - wr) <= tol * m) || !(std::fabs(got[im] - wi) <= tol * m))
                fail_msg(
                    "zprecondition %s %s k=%d system %d pair %d (%s): (%.17g, %.17g), want "
                    "(%.17g, %.17g)",
                    cnc::format_name(f), prec_name(p), k, j, q, same ? "in place" : "out != in",
                    got[re], got[im], wr, wi);
            }
        }
        sys->release_vectors();
      }
    }
  }
}

void test_zcsr_pcg(void**) {
  const cnc::complex_csr a = complex_matrix(2500, true, 79);
  const std::int32_t nr = 2 * a.n;
  auto pc = prepare_zcsr(a, cnc::format::csr);
  for (cnc::format f : complex_formats()) {
    auto pz = prepare_zcsr(a, f);
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::mixed, cnc::precision::f32}) {
      if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
      for (int k : {1, 3}) {
        const std::vector<double> b = random_vec(std::size_t(nr) * k, 83);
        cnc::pcg_params prm;
        prm.max_iterations = 2000;
        // The true residual is taken against the double matrix: float values cap its accuracy.
        prm.threshold = p == cnc::precision::f32 ? 1e-4 : p == cnc::precision::mixed ? 1e-6 : 1e-10;
        prm.check_interval = 1;
        prm.device_residual = p == cnc::precision::f64;
        std::vector<double> xz(b.size(), 0.0), xc(b.size(), 0.0);
        auto sz = g_backend->create_system(pz->hm, pz->d, p, k);
        const cnc::pcg_result rz = cnc::pcg_solve(*sz, pz->real, k, b.data(), xz.data(), prm);
        auto sc = g_backend->create_system(pc->hm, pc->d, p, k);
        const cnc::pcg_result rc = cnc::pcg_solve(*sc, pc->real, k, b.data(), xc.data(), prm);
        double diff = 0, norm = 0;
        for (std::size_t t = 0; t < b.size(); ++t)
          diff += (xz[t] - xc[t]) * (xz[t] - xc[t]), norm += xc[t] * xc[t];
        diff = std::sqrt(diff / norm);
        std::printf("%s pcg %s k=%d: %lld iterations (csr %lld), |x - x_csr| / |x_csr| = %.2e\n",
                    cnc::format_name(f), prec_name(p), k, (long long)rz.iterations,
                    (long long)rc.iterations, diff);
        if (rz.reason != CNC_REASON_CONVERGED || rc.reason != CNC_REASON_CONVERGED)
          fail_msg("not converged: %d %d", rz.reason, rc.reason);
        for (int j = 0; j < k; ++j)
          if (std::llabs(rz.iters[std::size_t(j)] - rc.iters[std::size_t(j)]) > 2)
            fail_msg("system %d: %lld iterations, csr %lld", j, (long long)rz.iters[std::size_t(j)],
                     (long long)rc.iters[std::size_t(j)]);
        if (!(diff <= (p == cnc::precision::f64 ? 1e-8 : 1e-3))) fail_msg("x differs: %.3e", diff);
      }
    }
  }
}
