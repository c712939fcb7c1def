// The vector surface of backend.hpp (add_vectors, set_mask, spmv, precondition, residual, dots,
// axpby, combine, read), part of the generic backend suite: every operation of every backend,
// format and precision, k = 1, 3, 8 and 9 systems (9: two groups on CUDA), checked against the same
// operation done here in double on the values the backend read back (so each check covers one
// operation), with masked-out columns compared bit for bit with what they were before.
#include <setjmp.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
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

// One system and its host view of the device vectors.
struct harness {
  combo c;
  std::unique_ptr<prepared> prep;
  std::unique_ptr<cnc::device_system> sys;
  std::int32_t n;
  std::size_t nk;
  std::vector<std::uint8_t> mask;

  explicit harness(const combo& vc) : c(vc) {
    prep = prepare(c.m->a, c.f);
    sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
    n = c.m->a.n;
    nk = std::size_t(n) * c.k;
    mask.assign(std::size_t(c.k), 1);
  }
  std::vector<double> get(int v) {
    std::vector<double> out(nk, -12345.0);
    sys->read(v, out.data());
    return out;
  }
  // Tolerance of one operation relative to the magnitude of its terms.
  double tol() const { return c.p == cnc::precision::f32 ? 2e-6 : 4e-15; }
  // (A v)_i and Σ|a v| for system j, with the matrix rounded as the backend stores it.
  void ref_spmv(const std::vector<double>& v, int j, std::vector<double>& y,
                std::vector<double>& mag) const {
    const ts_csr& a = c.m->a;
    y.assign(std::size_t(n), 0.0), mag.assign(std::size_t(n), 0.0);
    for (std::int32_t i = 0; i < n; ++i)
      for (std::int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t) {
        const double e = cnc_test::mat_round(c.p, a.val[t]) * v[std::size_t(j) * n + a.col[t]];
        y[i] += e, mag[i] += std::fabs(e);
      }
  }
  // Checks `got` against `want` (magnitudes `mag`) on unmasked columns and against `before`
  // bit for bit on masked ones.
  void expect(const char* what, const std::vector<double>& got, const std::vector<double>& want,
              const std::vector<double>& mag, const std::vector<double>& before) const {
    for (int j = 0; j < c.k; ++j)
      for (std::int32_t i = 0; i < n; ++i) {
        const std::size_t e = std::size_t(j) * n + i;
        if (!mask[j]) {
          if (std::memcmp(&got[e], &before[e], sizeof(double)) != 0)
            fail_msg("%s: %s changed masked-out system %d row %d: %.17g, was %.17g",
                     c.label().c_str(), what, j, i, got[e], before[e]);
        } else if (!(std::fabs(got[e] - want[e]) <= tol() * mag[e] + 1e-300)) {
          fail_msg("%s: %s system %d row %d: %.17g, expected %.17g", c.label().c_str(), what, j, i,
                   got[e], want[e]);
        }
      }
  }
  void set_mask(std::vector<std::uint8_t> m) {
    mask = std::move(m);
    sys->set_mask(mask.data());
  }
};

// The suite's combinations, plus nine systems (two groups of eight on CUDA).
std::vector<combo> vector_cases() {
  std::vector<combo> out = all_combos();
  const std::size_t base = out.size();
  for (std::size_t i = 0; i < base; ++i)
    if (out[i].k == 1) out.push_back({out[i].m, out[i].f, out[i].p, 9});
  return out;
}

// Runs every operation once with all systems active, then again with a mask.
void run_case(const combo& c) {
  harness h(c);
  const std::size_t nk = h.nk;
  const std::int32_t n = h.n;
  std::vector<double> b = random_vec(nk, 41), x = random_vec(nk, 43, 0.5);
  h.sys->set_vectors(b.data(), x.data());
  const int e0 = h.sys->add_vectors(3), e1 = e0 + 1, e2 = e0 + 2;
  if (e0 < cnc::device_system::vec_first_extra)
    fail_msg("%s: add_vectors gave %d", c.label().c_str(), e0);
  for (int v : {e0, e1, e2})
    for (double z : h.get(v))
      if (z != 0.0) fail_msg("%s: a new vector is not zero-filled", c.label().c_str());
  const std::vector<double> xs = h.get(cnc::device_system::vec_x);
  const std::vector<double> bs = h.get(cnc::device_system::vec_b);
  std::vector<double> alpha(std::size_t(c.k)), beta(alpha.size()), zero(alpha.size(), 0.0),
      one(alpha.size(), 1.0);
  for (int j = 0; j < c.k; ++j) alpha[j] = 0.75 + 0.125 * j, beta[j] = -1.5 + 0.25 * j;

  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {  // every third system masked out (system 1 always, so k = 1 stays active)
      std::vector<std::uint8_t> m(std::size_t(c.k), 1);
      for (int j = 1; j < c.k; j += 3) m[j] = 0;
      h.set_mask(m);
    }
    std::vector<double> want(nk), mag(nk), before, y, ym;

    // axpby, beta = 0 over a vector that holds NaN (pass 0: e0 is fresh, put NaN in it first).
    if (pass == 0) {
      std::vector<double> nan(std::size_t(c.k), std::numeric_limits<double>::quiet_NaN());
      h.sys->axpby(nan.data(), cnc::device_system::vec_x, zero.data(), e0);
    }
    before = h.get(e0);
    h.sys->axpby(alpha.data(), cnc::device_system::vec_x, zero.data(), e0);
    for (std::size_t e = 0; e < nk; ++e) {
      const int j = int(e / n);
      want[e] = alpha[j] * xs[e], mag[e] = std::fabs(want[e]);
    }
    h.expect("axpby(beta=0)", h.get(e0), want, mag, before);

    // precondition: e1 = d∘e0.
    const std::vector<double> v0 = h.get(e0);
    before = h.get(e1);
    h.sys->precondition(e0, e1);
    for (std::size_t e = 0; e < nk; ++e) {
      want[e] = cnc_test::vec_round(c.p, h.prep->d[e % n]) * v0[e], mag[e] = std::fabs(want[e]);
    }
    h.expect("precondition", h.get(e1), want, mag, before);

    // spmv: e2 = A e1.
    const std::vector<double> v1 = h.get(e1);
    before = h.get(e2);
    h.sys->spmv(e1, e2);
    for (int j = 0; j < c.k; ++j) {
      h.ref_spmv(v1, j, y, ym);
      for (std::int32_t i = 0; i < n; ++i)
        want[std::size_t(j) * n + i] = y[i], mag[std::size_t(j) * n + i] = ym[i];
    }
    h.expect("spmv", h.get(e2), want, mag, before);

    // residual: e0 = b - A x.
    before = h.get(e0);
    h.sys->residual(cnc::device_system::vec_x, e0);
    for (int j = 0; j < c.k; ++j) {
      h.ref_spmv(xs, j, y, ym);
      for (std::int32_t i = 0; i < n; ++i) {
        const std::size_t e = std::size_t(j) * n + i;
        want[e] = bs[e] - y[i], mag[e] = std::fabs(bs[e]) + ym[i];
      }
    }
    h.expect("residual", h.get(e0), want, mag, before);

    // axpby general and in place (x == y).
    const std::vector<double> w1 = h.get(e1), w2 = h.get(e2);
    h.sys->axpby(alpha.data(), e1, beta.data(), e2);
    for (std::size_t e = 0; e < nk; ++e) {
      const int j = int(e / n);
      want[e] = alpha[j] * w1[e] + beta[j] * w2[e];
      mag[e] = std::fabs(alpha[j] * w1[e]) + std::fabs(beta[j] * w2[e]);
    }
    h.expect("axpby", h.get(e2), want, mag, w2);
    h.sys->axpby(alpha.data(), e1, beta.data(), e1);
    for (std::size_t e = 0; e < nk; ++e) {
      const int j = int(e / n);
      want[e] = (alpha[j] + beta[j]) * w1[e];
      mag[e] = (std::fabs(alpha[j]) + std::fabs(beta[j])) * std::fabs(w1[e]);
    }
    h.expect("axpby(x == y)", h.get(e1), want, mag, w1);
    h.sys->axpby(one.data(), e0, one.data(), e0);  // e0 = 2 e0 (beta = 1 path)

    // dots: u = e2 against e0, e1, e2 and x; fixed order, so the same bits twice.
    const int vs[4] = {e0, e1, e2, cnc::device_system::vec_x};
    std::vector<double> got(4 * std::size_t(c.k), -1.0), again(got.size(), -2.0);
    h.sys->dots(e2, vs, 4, got.data());
    h.sys->dots(e2, vs, 4, again.data());
    if (std::memcmp(got.data(), again.data(), got.size() * sizeof(double)) != 0)
      fail_msg("%s: dots differ between two identical calls", c.label().c_str());
    const std::vector<double> u = h.get(e2);
    for (int t = 0; t < 4; ++t) {
      const std::vector<double> v = h.get(vs[t]);
      for (int j = 0; j < c.k; ++j) {
        double s = 0, m = 0;
        for (std::int32_t i = 0; i < n; ++i) {
          const std::size_t e = std::size_t(j) * n + i;
          s += u[e] * v[e], m += std::fabs(u[e] * v[e]);
        }
        const double g = got[std::size_t(t) * c.k + j];
        const double dt = c.p == cnc::precision::f32 ? 1e-5 : 1e-13;
        if (!h.mask[j] ? g != 0.0 : !(std::fabs(g - s) <= dt * m + 1e-300))
          fail_msg("%s: dots[%d] system %d: %.17g, expected %.17g", c.label().c_str(), t, j, g,
                   h.mask[j] ? s : 0.0);
      }
    }

    // combine: e2 = beta e2 + Σ coef_i v_i over 3 vectors (one pass) and 11 (two passes on
    // the GPUs; inputs may repeat), then beta = 0 over NaN (e2 not read).
    const int ins[11] = {e0,
                         e1,
                         cnc::device_system::vec_x,
                         cnc::device_system::vec_b,
                         e1,
                         e0,
                         e1,
                         cnc::device_system::vec_x,
                         e0,
                         cnc::device_system::vec_b,
                         e1};
    for (int count : {3, 11}) {
      std::vector<double> cf(std::size_t(count) * c.k);
      for (std::size_t e = 0; e < cf.size(); ++e) cf[e] = 0.5 - 0.3 * double(e % 7) + 0.01 * e;
      const std::vector<double> y0 = h.get(e2);
      h.sys->combine(ins, count, cf.data(), beta.data(), e2);
      for (std::size_t e = 0; e < nk; ++e) {
        const int j = int(e / n);
        want[e] = beta[j] * y0[e], mag[e] = std::fabs(want[e]);
      }
      for (int t = 0; t < count; ++t) {
        const std::vector<double> v = h.get(ins[t]);
        for (std::size_t e = 0; e < nk; ++e) {
          const double term = cf[std::size_t(t) * c.k + e / n] * v[e];
          want[e] += term, mag[e] += std::fabs(term);
        }
      }
      h.expect(count == 3 ? "combine(3)" : "combine(11)", h.get(e2), want, mag, y0);
    }
    {
      std::vector<double> nan(std::size_t(c.k), std::numeric_limits<double>::quiet_NaN());
      h.sys->axpby(nan.data(), cnc::device_system::vec_x, zero.data(), e2);
      const std::vector<double> y0 = h.get(e2), v = h.get(e1);
      h.sys->combine(&e1, 1, alpha.data(), zero.data(), e2);
      for (std::size_t e = 0; e < nk; ++e) {
        const int j = int(e / n);
        want[e] = alpha[j] * v[e], mag[e] = std::fabs(want[e]);
      }
      h.expect("combine(beta=0)", h.get(e2), want, mag, y0);
    }
    {  // y among the inputs: refused, nothing changed
      const std::vector<double> y0 = h.get(e2);
      const int with_y[2] = {e1, e2};
      std::vector<double> cf(2 * std::size_t(c.k), 1.0);
      int status = CNC_OK;
      try {
        h.sys->combine(with_y, 2, cf.data(), one.data(), e2);
      } catch (const cnc::error& e) {
        status = e.status();
      }
      if (status != CNC_ERR_INVALID_VALUE)
        fail_msg("%s: combine into one of its inputs gave status %d", c.label().c_str(), status);
      if (h.get(e2) != y0) fail_msg("%s: a refused combine changed y", c.label().c_str());
    }
  }
  // SSOR: the CPU backend's sweeps against the same sweeps written here on the values read back;
  // the GPU backends refuse it (CNC_ERR_UNSUPPORTED), with the output unchanged.
  {
    const double omega = 1.3;
    const std::vector<double> v = h.get(e0), before = h.get(e1);
    bool refused = false;
    try {
      h.sys->ssor(e0, e1, omega);
    } catch (const cnc::error& e) {
      if (e.status() != CNC_ERR_UNSUPPORTED) throw;
      refused = true;
    }
    if (refused != (g_name != "cpu"))
      fail_msg("%s: ssor %s", c.label().c_str(), refused ? "refused on the CPU" : "ran on a GPU");
    const std::vector<double> got = h.get(e1);
    if (refused) {
      if (got != before) fail_msg("%s: a refused ssor changed its output", c.label().c_str());
    } else {
      const cnc::csr_matrix& a = h.prep->csr;
      std::vector<double> w(static_cast<std::size_t>(n)), y(w.size()), want(nk), mag(nk);
      for (int j = 0; j < c.k; ++j) {
        const double* vj = v.data() + std::size_t(j) * n;
        for (std::int32_t i = 0; i < n; ++i) {  // (D/w + L) w = v
          double sum = 0, di = 1;
          for (std::int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t) {
            if (a.col[t] < i) sum += a.val[t] * w[a.col[t]];
            if (a.col[t] == i && a.val[t] != 0) di = a.val[t];
          }
          w[i] = (vj[i] - sum) * omega / di;
        }
        for (std::int32_t i = n - 1; i >= 0; --i) {  // (D/w + U) y = (D/w) w
          double sum = 0, di = 1;
          for (std::int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t) {
            if (a.col[t] > i) sum += a.val[t] * y[a.col[t]];
            if (a.col[t] == i && a.val[t] != 0) di = a.val[t];
          }
          y[i] = w[i] - sum * omega / di;
        }
        double big = 0;
        for (std::int32_t i = 0; i < n; ++i) big = std::max(big, std::fabs(y[i]));
        for (std::int32_t i = 0; i < n; ++i) {
          const std::size_t e = std::size_t(j) * n + i;
          want[e] = (2 - omega) * y[i];
          mag[e] = (2 - omega) * big * (c.p == cnc::precision::f32 ? 50.0 : 1e3);
        }
      }
      h.expect("ssor", got, want, mag, before);
    }
  }

  // The PCG vectors the surface did not name as outputs are untouched: x and b.
  if (h.get(cnc::device_system::vec_x) != xs || h.get(cnc::device_system::vec_b) != bs)
    fail_msg("%s: x or b changed", c.label().c_str());
}

}  // namespace

void test_vector_surface(void**) {
  for (const combo& c : vector_cases()) run_case(c);
}
