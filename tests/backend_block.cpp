// The cross-column products of backend.hpp (block_dots, block_combine), part of the generic
// backend suite: every backend, format and precision, k = 1, 3, 8, 9 and 16 systems, checked
// against the same product done here in double on the values the backend read back (block_dots(u,
// u) too); the mask (v's columns for block_dots, y's for block_combine) with masked-out columns
// compared bit for bit; a column of v holding NaN whose coefficients are 0 (skipped), beta = 0 over
// NaN, and y
// == v refused. The fused forms (block_grams, block_update, block_combine2) against the same
// products done here; a backend that declines one (false) must leave every vector as it was, and
// CUDA must not decline them for one group (k <= 8).
#include <setjmp.h>

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backend_harness.hpp"
#include "cnc.h"
#include "util/error.hpp"

// After every C++ header: cmocka's macros clash with <ios>.
extern "C" {
#include <cmocka.h>
}

using namespace suite;

namespace {

void run_block_case(const combo& c) {
  const auto prep = prepare(c.m->a, c.f);
  const auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
  const std::int32_t n = c.m->a.n;
  const int k = c.k;
  const std::size_t nk = std::size_t(n) * k, ks = std::size_t(k);
  const double tol = c.p == cnc::precision::f32 ? 2e-6 : 4e-15;
  const double dtol = c.p == cnc::precision::f32 ? 1e-5 : 1e-13;
  const std::vector<double> b = random_vec(nk, 51), x = random_vec(nk, 53, 0.5);
  sys->set_vectors(b.data(), x.data());
  const int u = sys->add_vectors(2), y = u + 1;
  std::vector<double> alpha(ks), ones(ks, 1.0), zeros(ks, 0.0);
  for (int j = 0; j < k; ++j) alpha[j] = 0.75 + 0.5 * j;
  sys->axpby(alpha.data(), cnc::device_system::vec_x, zeros.data(), u);  // u = alpha x
  auto get = [&](int v) {
    std::vector<double> out(nk);
    sys->read(v, out.data());
    return out;
  };
  std::vector<std::uint8_t> mask(ks, 1);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {  // every other column masked out (with k = 1: the one column stays)
      for (int j = 0; j < k; ++j) mask[j] = k == 1 || j % 2 == 0;
    }
    sys->set_mask(mask.data());
    const char* what = pass == 0 ? "all columns" : "masked";

    // block_dots(u, b): out[i*k + j] = u_i . b_j for active j, 0 for the others.
    // block_dots(u, u): the Gram matrix of one block (a backend may read it once).
    const std::vector<double> U = get(u), B = get(cnc::device_system::vec_b);
    for (const int v : {int(cnc::device_system::vec_b), u}) {
      const std::vector<double>& W = v == u ? U : B;
      std::vector<double> out(ks * ks, -1.0);
      sys->block_dots(u, v, out.data());
      for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) {
          double s = 0, m = 0;
          for (std::int32_t r = 0; r < n; ++r) {
            const double t = U[std::size_t(i) * n + r] * W[std::size_t(j) * n + r];
            s += t, m += std::fabs(t);
          }
          const double g = out[std::size_t(i) * ks + j];
          if (!mask[j] ? g != 0.0 : !(std::fabs(g - s) <= dtol * m + 1e-300))
            fail_msg("%s (%s): block_dots(u, %s)[%d][%d] = %.17g, expected %.17g",
                     c.label().c_str(), what, v == u ? "u" : "b", i, j, g, mask[j] ? s : 0.0);
        }
    }

    // block_combine(u, coef, beta, y) with y = x first; coefficients of column 1 of u all 0
    // while u's column 1 holds NaN (skipped: never read).
    sys->set_mask(std::vector<std::uint8_t>(ks, 1).data());
    sys->axpby(ones.data(), cnc::device_system::vec_x, zeros.data(), y);
    if (k > 1) {
      std::vector<std::uint8_t> one_col(ks, 0);
      one_col[1] = 1;
      std::vector<double> nan(ks, std::numeric_limits<double>::quiet_NaN());
      sys->set_mask(one_col.data());
      sys->axpby(nan.data(), cnc::device_system::vec_x, zeros.data(), u);
    }
    sys->set_mask(mask.data());
    std::vector<double> coef(ks * ks), beta(ks);
    for (std::size_t e = 0; e < coef.size(); ++e)
      coef[e] = (e / ks == 1) ? 0.0 : 0.5 - 0.3 * double(e % 7) + 0.01 * double(e);
    for (int j = 0; j < k; ++j) beta[j] = j % 3 == 0 ? 1.0 : j % 3 == 1 ? -0.5 : 0.0;
    const std::vector<double> V = get(u), Y0 = get(y);
    sys->block_combine(u, coef.data(), beta.data(), y);
    const std::vector<double> Y = get(y);
    for (int j = 0; j < k; ++j)
      for (std::int32_t r = 0; r < n; ++r) {
        const std::size_t e = std::size_t(j) * n + r;
        if (!mask[j]) {
          if (std::memcmp(&Y[e], &Y0[e], sizeof(double)) != 0)
            fail_msg("%s (%s): block_combine changed masked-out column %d", c.label().c_str(), what,
                     j);
          continue;
        }
        double want = beta[j] * Y0[e], mag = std::fabs(want);
        for (int i = 0; i < k; ++i) {
          const double cf = coef[std::size_t(i) * ks + j];
          if (cf == 0.0) continue;
          const double t = cf * V[std::size_t(i) * n + r];
          want += t, mag += std::fabs(t);
        }
        if (!(std::fabs(Y[e] - want) <= tol * (mag + 1) * k))
          fail_msg("%s (%s): block_combine column %d row %d: %.17g, expected %.17g",
                   c.label().c_str(), what, j, r, Y[e], want);
      }

    // beta = 0 over NaN in y: y is overwritten.
    std::vector<double> nan(ks, std::numeric_limits<double>::quiet_NaN());
    sys->axpby(nan.data(), cnc::device_system::vec_x, zeros.data(), y);
    sys->block_combine(u, coef.data(), zeros.data(), y);
    const std::vector<double> Z = get(y);
    for (int j = 0; j < k; ++j)
      for (std::int32_t r = 0; r < n && mask[j]; ++r)
        if (!std::isfinite(Z[std::size_t(j) * n + r]))
          fail_msg("%s (%s): block_combine with beta 0 kept NaN in column %d", c.label().c_str(),
                   what, j);

    // y == v: refused, nothing changed.
    const std::vector<double> before = get(u);
    int status = CNC_OK;
    try {
      sys->block_combine(u, coef.data(), ones.data(), u);
    } catch (const cnc::error& e) {
      status = e.status();
    }
    if (status != CNC_ERR_INVALID_VALUE)
      fail_msg("%s: block_combine into its input gave status %d", c.label().c_str(), status);
    const std::vector<double> after = get(u);
    if (std::memcmp(before.data(), after.data(), nk * sizeof(double)) != 0)
      fail_msg("%s: a refused block_combine changed v", c.label().c_str());
    sys->axpby(alpha.data(), cnc::device_system::vec_x, zeros.data(), u);  // u finite again
  }
  sys->release_vectors();
}

}  // namespace

void test_block_products(void**) {
  std::vector<combo> cases = all_combos();
  const std::size_t base = cases.size();
  for (std::size_t i = 0; i < base; ++i)
    if (cases[i].k == 1)  // 9: groups of 8 and 1 (two strides); 16: two groups of one stride
      for (const int k : {9, 16}) cases.push_back({cases[i].m, cases[i].f, cases[i].p, k});
  for (const combo& c : cases) run_block_case(c);
}

namespace {

// The fused block-CG products of backend.hpp on vectors b, x, u, y, w (w, y, u written), every
// column paired whatever the mask.
void run_fused_case(const combo& c) {
  const auto prep = prepare(c.m->a, c.f);
  const auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
  const std::int32_t n = c.m->a.n;
  const int k = c.k;
  const std::size_t nk = std::size_t(n) * k, ks = std::size_t(k), kk = ks * ks;
  const double tol = c.p == cnc::precision::f32 ? 2e-6 : 4e-15;
  const double dtol = c.p == cnc::precision::f32 ? 1e-5 : 1e-13;
  const int B = cnc::device_system::vec_b, X = cnc::device_system::vec_x;
  sys->set_vectors(random_vec(nk, 61).data(), random_vec(nk, 63, 0.5).data());
  const int u = sys->add_vectors(4), y = u + 1, w = u + 2, t = u + 3;
  std::vector<double> ones(ks, 1.0), zeros(ks, 0.0), half(ks, 0.5);
  sys->axpby(half.data(), B, ones.data(), u);  // u = b / 2 + 0, y = x - b, w = x
  sys->axpby(ones.data(), X, zeros.data(), y);
  std::vector<double> minus(ks, -1.0);
  sys->axpby(minus.data(), B, ones.data(), y);
  sys->axpby(ones.data(), X, zeros.data(), w);
  auto get = [&](int v) {
    std::vector<double> out(nk);
    sys->read(v, out.data());
    return out;
  };
  std::vector<std::uint8_t> mask(ks, 1);
  for (int j = 0; j < k; ++j) mask[j] = k == 1 || j % 2 == 0;
  sys->set_mask(mask.data());
  const bool must = (g_name == "cuda" && k <= 8) || g_name == "cpu";
  auto gram_check = [&](const char* what, const std::vector<std::vector<double>>& U,
                        const std::vector<std::vector<double>>& V, const double* out) {
    for (std::size_t p = 0; p < U.size(); ++p)
      for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) {
          double s = 0, m = 0;
          for (std::int32_t r = 0; r < n; ++r) {
            const double v = U[p][std::size_t(i) * n + r] * V[p][std::size_t(j) * n + r];
            s += v, m += std::fabs(v);
          }
          const double g = out[p * kk + std::size_t(i) * ks + j];
          if (!(std::fabs(g - s) <= dtol * m + 1e-300))
            fail_msg("%s: %s pair %zu [%d][%d] = %.17g, expected %.17g", c.label().c_str(), what, p,
                     i, j, g, s);
        }
  };
  auto declined = [&](const char* what, const std::vector<std::vector<double>>& before) {
    if (must) fail_msg("%s: %s declined for one group", c.label().c_str(), what);
    const int vs[4] = {u, y, w, X};
    for (int v = 0; v < 4; ++v)
      // Bit for bit: a NaN planted in a vector compares unequal to itself.
      if (std::memcmp(get(vs[v]).data(), before[std::size_t(v)].data(), nk * sizeof(double)) != 0)
        fail_msg("%s: a declined %s changed a vector", c.label().c_str(), what);
  };

  // block_grams: pairs (u, b), (b, u), (u, u), (w, x): four vectors.
  {
    const int gu[4] = {u, B, u, w}, gv[4] = {B, u, u, X};
    std::vector<double> out(4 * kk, -1.0);
    const std::vector<std::vector<double>> before = {get(u), get(y), get(w), get(X)};
    if (sys->block_grams(gu, gv, 4, out.data())) {
      const std::vector<double> U = get(u), Bv = get(B), W = get(w), Xv = get(X);
      gram_check("block_grams", {U, Bv, U, W}, {Bv, U, U, Xv}, out.data());
    } else {
      declined("block_grams", before);
    }
  }

  // spmv_gram(u, w) with every column active: w = A u as spmv gives it, and uᵀ w. Taken on CUDA
  // for SELL with split rows in double at k <= 8 (the ctest backend_cuda_no_persistent, which
  // sets CNC_TEST_EXPECT_SPMV_GRAM); elsewhere declined with nothing changed.
  {
    const std::vector<std::uint8_t> all(ks, 1);
    sys->set_mask(all.data());
    std::vector<double> out(kk, -1.0);
    const std::vector<std::vector<double>> before = {get(u), get(y), get(w), get(X)};
    const char* expect = std::getenv("CNC_TEST_EXPECT_SPMV_GRAM");
    const bool must_gram = expect && std::strcmp(expect, "1") == 0 && g_name == "cuda" &&
                           c.f == cnc::format::sell && c.p != cnc::precision::f32 && k > 4 &&
                           k <= 8;
    if (sys->spmv_gram(u, w, out.data())) {
      const std::vector<double> U = get(u), W = get(w);
      sys->spmv(u, t);
      const std::vector<double> T = get(t);
      for (std::size_t e = 0; e < nk; ++e)
        if (std::memcmp(&W[e], &T[e], sizeof(double)) != 0)
          fail_msg("%s: spmv_gram's product differs from spmv's at %zu: %.17g, %.17g",
                   c.label().c_str(), e, W[e], T[e]);
      gram_check("spmv_gram", {U}, {W}, out.data());
      sys->axpby(ones.data(), X, zeros.data(), w);  // w = x again
    } else {
      if (must_gram) fail_msg("%s: spmv_gram declined", c.label().c_str());
      const int vs[4] = {u, y, w, X};
      for (int v = 0; v < 4; ++v)
        if (std::memcmp(get(vs[v]).data(), before[std::size_t(v)].data(), nk * sizeof(double)) != 0)
          fail_msg("%s: a declined spmv_gram changed a vector", c.label().c_str());
    }
    sys->set_mask(mask.data());
  }

  // block_update(p = u, q = b, a, x = w, r = y, z = t): the mask's columns updated, the others
  // left bit for bit; then QᵀZ, ZᵀZ, PᵀZ, PᵀP, RᵀZ over every column and r·z, r·r over the
  // mask's.
  {
    std::vector<double> a(kk);
    for (std::size_t e = 0; e < kk; ++e) a[e] = (e / ks == 1) ? 0.0 : 0.3 - 0.07 * double(e % 5);
    const std::vector<double> P = get(u), Qv = get(B), X0 = get(w), R0 = get(y), Z0 = get(t);
    std::vector<double> out(cnc::device_system::block_update_size(k), -1.0);
    const std::vector<std::vector<double>> before = {get(u), get(y), get(w), get(X)};
    if (sys->block_update(u, B, a.data(), w, y, t, out.data())) {
      const std::vector<double> X1 = get(w), R1 = get(y), Z1 = get(t);
      sys->precondition(y, u);  // d∘r by the plain operation, into u (P is read back above)
      const std::vector<double> DZ = get(u);
      for (int j = 0; j < k; ++j)
        for (std::int32_t r = 0; r < n; ++r) {
          const std::size_t e = std::size_t(j) * n + r;
          if (!mask[j]) {
            if (X1[e] != X0[e] || R1[e] != R0[e] || std::memcmp(&Z1[e], &Z0[e], 8) != 0)
              fail_msg("%s: block_update changed masked-out column %d", c.label().c_str(), j);
            continue;
          }
          double wx = X0[e], wr = R0[e], mx = std::fabs(wx), mr = std::fabs(wr);
          for (int i = 0; i < k; ++i) {
            const double cf = a[std::size_t(i) * ks + j];
            if (cf == 0.0) continue;
            wx += cf * P[std::size_t(i) * n + r], mx += std::fabs(cf * P[std::size_t(i) * n + r]);
            wr -= cf * Qv[std::size_t(i) * n + r], mr += std::fabs(cf * Qv[std::size_t(i) * n + r]);
          }
          if (!(std::fabs(X1[e] - wx) <= tol * (mx + 1) * k) ||
              !(std::fabs(R1[e] - wr) <= tol * (mr + 1) * k) ||
              !(std::fabs(Z1[e] - DZ[e]) <= tol * std::fabs(DZ[e])))
            fail_msg(
                "%s: block_update column %d row %d: x %.17g (%.17g), r %.17g (%.17g), z %.17g "
                "(%.17g)",
                c.label().c_str(), j, r, X1[e], wx, R1[e], wr, Z1[e], DZ[e]);
        }
      gram_check("block_update", {Qv, Z1, P, P, R1}, {Z1, Z1, Z1, P, Z1}, out.data());
      const double* diag = out.data() + cnc::device_system::block_update_grams * kk;
      for (int j = 0; j < k; ++j) {
        if (!mask[j]) continue;
        double rz = 0, rr = 0, m = 0;
        for (std::int32_t r = 0; r < n; ++r) {
          const std::size_t e = std::size_t(j) * n + r;
          rz += R1[e] * Z1[e], rr += R1[e] * R1[e], m += std::fabs(R1[e] * Z1[e]);
        }
        if (!(std::fabs(diag[j] - rz) <= dtol * m + 1e-300) ||
            !(std::fabs(diag[ks + j] - rr) <= dtol * rr + 1e-300))
          fail_msg("%s: block_update column %d: r.z %.17g (%.17g), r.r %.17g (%.17g)",
                   c.label().c_str(), j, diag[j], rz, diag[ks + j], rr);
      }
      sys->axpby(half.data(), B, zeros.data(), u);  // u as it was
      // The same pass with Z not stored, a zero step (x and r keep their values): the products
      // with z = d∘r in every column, t left as it was.
      const std::vector<std::uint8_t> all(ks, 1);
      sys->set_mask(all.data());
      sys->precondition(y, t);  // t = d∘r, every column
      sys->set_mask(mask.data());
      const std::vector<double> P2 = get(u), Q2 = get(B), X2 = get(w), R2 = get(y), DR = get(t);
      std::vector<double> none(kk, 0.0), out2(cnc::device_system::block_update_size(k), -1.0);
      if (!sys->block_update(u, B, none.data(), w, y, cnc::device_system::no_vector, out2.data())) {
        fail_msg("%s: block_update without z declined (with z taken)", c.label().c_str());
      } else {
        if (get(w) != X2 || get(y) != R2 ||
            std::memcmp(get(t).data(), DR.data(), nk * sizeof(double)) != 0)
          fail_msg("%s: a zero block_update without z changed x, r or z", c.label().c_str());
        gram_check("block_update without z", {Q2, DR, P2, P2, R2}, {DR, DR, DR, P2, DR},
                   out2.data());
      }
    } else {
      declined("block_update", before);
    }
  }

  // block_combine2(u, c1, b, c2, w): every column, the mask ignored; u's column 1 NaN with
  // zero coefficients (skipped).
  {
    if (k > 1) {
      std::vector<std::uint8_t> one_col(ks, 0);
      one_col[1] = 1;
      std::vector<double> nan(ks, std::numeric_limits<double>::quiet_NaN());
      sys->set_mask(one_col.data());
      sys->axpby(nan.data(), X, zeros.data(), u);
      sys->set_mask(mask.data());
    }
    std::vector<double> c1(kk), c2(kk);
    for (std::size_t e = 0; e < kk; ++e) {
      c1[e] = (e / ks == 1) ? 0.0 : 0.5 - 0.3 * double(e % 7);
      c2[e] = e % 3 == 0 ? 0.0 : 0.25 + 0.1 * double(e % 4);
    }
    // scale_v1: u's values taken as d∘u (d∘u read back through precondition, into t).
    for (const bool scale : {false, true}) {
      std::vector<double> V1 = get(u);
      const std::vector<double> V2 = get(B);
      if (scale) {
        const std::vector<std::uint8_t> all(ks, 1);
        sys->set_mask(all.data());
        sys->precondition(u, t);
        sys->set_mask(mask.data());
        V1 = get(t);
      }
      const std::vector<std::vector<double>> before = {get(u), get(y), get(w), get(X)};
      if (sys->block_combine2(u, c1.data(), B, c2.data(), w, scale)) {
        const std::vector<double> Y = get(w);
        for (int j = 0; j < k; ++j)
          for (std::int32_t r = 0; r < n; ++r) {
            double want = 0, mag = 0;
            for (int i = 0; i < k; ++i) {
              const double a1 = c1[std::size_t(i) * ks + j], a2 = c2[std::size_t(i) * ks + j];
              if (a1 != 0.0)
                want += a1 * V1[std::size_t(i) * n + r],
                    mag += std::fabs(a1 * V1[std::size_t(i) * n + r]);
              if (a2 != 0.0)
                want += a2 * V2[std::size_t(i) * n + r],
                    mag += std::fabs(a2 * V2[std::size_t(i) * n + r]);
            }
            const double got = Y[std::size_t(j) * n + r];
            if (!(std::fabs(got - want) <= tol * (mag + 1) * k))
              fail_msg("%s: block_combine2%s column %d row %d: %.17g, expected %.17g",
                       c.label().c_str(), scale ? " scaled" : "", j, r, got, want);
          }
      } else {
        declined("block_combine2", before);
      }
    }
  }
  sys->release_vectors();
}

}  // namespace

void test_block_fused(void**) {
  std::vector<combo> cases = all_combos();
  const std::size_t base = cases.size();
  for (std::size_t i = 0; i < base; ++i)
    if (cases[i].k == 1) cases.push_back({cases[i].m, cases[i].f, cases[i].p, 16});
  for (const combo& c : cases) run_fused_case(c);
}
