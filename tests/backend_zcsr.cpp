// ZCSR (complex CSR), part of the generic backend suite (test_backend.cpp): the backend's zcsr
// kernels against a plain complex loop written here, on a complex matrix with empty rows, rows of
// one entry and rows of 513 and 2000 entries, for every precision and 1 and 3 systems (apply and
// the vector surface's spmv); and PCG over zcsr (the fused steps: spmv_dot, update_xr, update_p,
// the Jacobi diagonal repeated for re and im) against PCG over the real-equivalent in CSR.
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

// The zcsr host matrix (and its real-equivalent CSR) of `a`, as the pipeline builds it.
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
  if (f == cnc::format::zcsr) {
    p->z = cnc::zcsr_from_real_equivalent(p->real);
    p->zv = p->z;
    p->hm.zcsr = &p->zv;
  }
  p->d.assign(std::size_t(r.n), 1.0);
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
  auto prep = prepare_zcsr(a, cnc::format::zcsr);
  if (prep->z.nnz() != a.nnz() || prep->z.val != a.val || prep->z.col != a.col)
    fail_msg("zcsr_from_real_equivalent does not give the complex CSR back");
  // The real-equivalent's Jacobi diagonal taken from the complex CSR itself.
  std::int64_t zeros = -1;
  const cnc::host_vector<double> d = cnc::inverse_diagonal(cnc::zcsr_view(a), nr, true, &zeros);
  std::int64_t want_zeros = 0;  // real-equivalent rows without a diagonal: 2 a complex row
  for (std::int32_t r = 0; r < nr; ++r) {
    if (d[std::size_t(r)] != prep->d[std::size_t(r)])
      fail_msg("inverse diagonal row %d: %.17g, want %.17g", r, d[std::size_t(r)],
               prep->d[std::size_t(r)]);
    bool found = false;
    for (std::int64_t t = a.row_ptr[std::size_t(r / 2)]; t < a.row_ptr[std::size_t(r / 2) + 1]; ++t)
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
                      "zcsr %s k=%d row %d (%lld entries) %s system %d (%s): %.17g, want %.17g",
                      prec_name(p), k, i,
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

// zaxpby (complex y = alpha x + beta y over (re, im) pairs) against complex arithmetic here, on
// zcsr and on the real-equivalent in CSR, every precision, 1 and 3 systems with the middle one
// masked out (left bit for bit), x != y and x == y, and beta = 0 overwriting a NaN in y.
void test_zcsr_zaxpby(void**) {
  // 9001 complex rows: the CPU backend's chunks (8192 rows at most) end at odd rows too.
  const cnc::complex_csr a = complex_matrix(9001, false, 83);
  const std::int32_t nr = 2 * a.n;
  for (cnc::format f : {cnc::format::zcsr, cnc::format::csr}) {
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
                      f == cnc::format::zcsr ? "zcsr" : "csr", prec_name(p), k, j, q,
                      same ? "x == y" : "x != y", ov ? ", beta 0" : "", got[re], got[im], wr, wi);
              }
          }
      }
    }
  }
}

void test_zcsr_pcg(void**) {
  const cnc::complex_csr a = complex_matrix(2500, true, 79);
  const std::int32_t nr = 2 * a.n;
  auto pz = prepare_zcsr(a, cnc::format::zcsr);
  auto pc = prepare_zcsr(a, cnc::format::csr);
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
      std::printf("zcsr pcg %s k=%d: %lld iterations (csr %lld), |x - x_csr| / |x_csr| = %.2e\n",
                  prec_name(p), k, (long long)rz.iterations, (long long)rc.iterations, diff);
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
