// The generic backend suite: `test_backend <cpu|opencl|cuda>` checks one backend against the
// contract of src/backends/backend.hpp with a straightforward host implementation written here:
//   - apply() against a reference SpMV (per precision);
//   - init / spmv_dot / update_xr / update_p against the contract's formulas (scalars, statuses,
//     iteration counts and x after every iteration);
//   - x taking update_xr's step in update_p, also where the system converges;
//   - iterate(count) bit-identical to count single steps;
//   - systems that stopped (converged, b = 0) stay untouched, bit for bit, by later steps;
//   - a full solve to convergence, checked by the residual the test computes;
//   - SELL built on the device (builds_on_device) bit for bit the host layout's;
//   - rows far longer than the average (cut into pieces) and empty rows, against the plain product;
// for random and real (shared/data/matrices) SPD matrices, CSR / BCRS2 / BCRS4, k = 1 and 3, and
// the three precisions. Exits 77 after saying why when the backend cannot run here.
#include <fnmatch.h>
#include <setjmp.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "backend_harness.hpp"
#include "backends/backend.hpp"
#include "conversion/convert.hpp"
#include "host_reference.hpp"
#include "matrix/matrix.hpp"
#include "solver/pcg.hpp"
#include "test_support.h"
#include "util/error.hpp"

namespace {

using namespace suite;

// Steps tolerances: the backend sums in a different order; CG then amplifies the difference
// over the iterations (more for ill-conditioned matrices and for float vectors).
double step_tol(cnc::precision p) { return p == cnc::precision::f32 ? 2e-3 : 1e-7; }

// ---- apply
// ---------------------------------------------------------------------------------------
void test_apply(void**) {
  for (const combo& c : all_combos()) {
    auto prep = prepare(c.m->a, c.f);
    auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
    const std::int32_t n = c.m->a.n;
    std::vector<double> x = random_vec(std::size_t(n) * c.k, 17), y(x.size(), -7.0), y_ref(n);
    sys->apply(x.data(), y.data());
    for (int j = 0; j < c.k; ++j) {
      std::vector<double> xj(n), absax(n, 0.0);
      for (std::int32_t i = 0; i < n; ++i)
        xj[i] = cnc_test::vec_round(c.p, x[std::size_t(j) * n + i]);
      for (std::int32_t i = 0; i < n; ++i) {
        double s = 0, m = 0;
        for (std::int64_t t = c.m->a.row_ptr[i]; t < c.m->a.row_ptr[i + 1]; ++t) {
          double v = cnc_test::mat_round(c.p, c.m->a.val[t]);
          s += v * xj[c.m->a.col[t]];
          m += std::fabs(v * xj[c.m->a.col[t]]);
        }
        y_ref[i] = s, absax[i] = m;
      }
      const double tol = c.p == cnc::precision::f32 ? 1e-6 : 1e-14;
      for (std::int32_t i = 0; i < n; ++i) {
        double got = y[std::size_t(j) * n + i];
        if (!(std::fabs(got - y_ref[i]) <= tol * absax[i] * 8 + 1e-300))
          fail_msg("%s: apply row %d system %d: %.17g, reference %.17g", c.label().c_str(), i, j,
                   got, y_ref[i]);
      }
    }
  }
}

// ---- step sequence
// -------------------------------------------------------------------------------
void compare_states(const combo& c, const cnc_test::host_pcg& ref,
                    const std::vector<cnc::rhs_state>& got, const char* after, int iteration) {
  // rz_new is defined by the contract only from the first update_xr on.
  const double tol = step_tol(c.p) * (1 + iteration);
  for (int j = 0; j < c.k; ++j) {
    const cnc::rhs_state &g = got[j], &w = ref.st[j];
    if (g.status != w.status || g.iters != w.iters || g.thr2 != w.thr2)
      fail_msg(
          "%s, system %d after %s (iteration %d): status %d iters %d thr2 %g, expected %d %d %g",
          c.label().c_str(), j, after, iteration, g.status, g.iters, g.thr2, w.status, w.iters,
          w.thr2);
    if (!close(g.rz, w.rz, tol) || !close(g.rr, w.rr, tol) || !close(g.pq, w.pq, tol) ||
        (iteration > 0 && std::strcmp(after, "spmv_dot") != 0 && !close(g.rz_new, w.rz_new, tol)))
      fail_msg(
          "%s, system %d after %s (iteration %d): rz %.10g rr %.10g pq %.10g rz_new %.10g; "
          "expected %.10g %.10g %.10g %.10g",
          c.label().c_str(), j, after, iteration, g.rz, g.rr, g.pq, g.rz_new, w.rz, w.rr, w.pq,
          w.rz_new);
  }
}

void test_steps_vs_reference(void**) {
  const int iterations = 6;
  for (const combo& c : all_combos()) {
    auto prep = prepare(c.m->a, c.f);
    auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
    const std::int32_t n = c.m->a.n;
    const std::size_t nk = std::size_t(n) * c.k;
    std::vector<double> b = random_vec(nk, 23), x0 = random_vec(nk, 29, 0.1);
    // System 0 never converges within the few iterations; with several, system j stops after
    // iteration j % iterations (0: never), its threshold between that iteration's residual and
    // the one before (from a first run of the reference), so that the steps run on with stopped
    // systems, whose x and r must then stay as they are.
    std::vector<double> thr2(c.k, 0.0);
    if (c.k > 1) {
      cnc_test::host_pcg pre(prep->csr, prep->d, c.p, c.k);
      pre.set_vectors(b.data(), x0.data());
      pre.init(thr2.data());
      std::vector<std::vector<double>> rr(std::size_t(iterations) + 1);
      for (int it = 0; it <= iterations; ++it) {
        if (it > 0) pre.spmv_dot(), pre.update_xr(), pre.update_p();
        for (int j = 0; j < c.k; ++j) rr[std::size_t(it)].push_back(pre.st[j].rr);
      }
      for (int j = 1; j < c.k; ++j)
        if (const int stop = j % iterations; stop > 0)
          thr2[j] = std::sqrt(rr[std::size_t(stop)][j] * rr[std::size_t(stop) - 1][j]);
    }
    cnc_test::host_pcg ref(prep->csr, prep->d, c.p, c.k);
    sys->set_vectors(b.data(), x0.data());
    ref.set_vectors(b.data(), x0.data());
    sys->init(thr2.data());
    ref.init(thr2.data());
    std::vector<cnc::rhs_state> st(c.k);
    sys->read_state(st.data());
    compare_states(c, ref, st, "init", 0);
    for (int it = 1; it <= iterations; ++it) {
      sys->spmv_dot();
      ref.spmv_dot();
      sys->read_state(st.data());
      compare_states(c, ref, st, "spmv_dot", it);
      sys->update_xr();
      ref.update_xr();
      sys->read_state(st.data());
      compare_states(c, ref, st, "update_xr", it);
      sys->update_p();
      ref.update_p();
      sys->read_state(st.data());
      compare_states(c, ref, st, "update_p", it);
    }
    std::vector<double> x(nk), r(nk);
    sys->get_x(x.data());
    sys->read(cnc::device_system::vec_r, r.data());
    for (int j = 0; j < c.k; ++j) {
      for (const auto& [name, got, want] : {std::tuple{"x", &x, &ref.x}, {"r", &r, &ref.r}}) {
        const double d = ts_rel_diff(std::size_t(n), got->data() + std::size_t(j) * n,
                                     want->data() + std::size_t(j) * n);
        if (!(d <= step_tol(c.p) * iterations))
          fail_msg("%s: %s of system %d (status %d) after %d iterations differs by %.3e",
                   c.label().c_str(), name, j, int(st[j].status), iterations, d);
      }
    }
  }
}

// Statuses of the contract on tiny matrices: indefinite matrix (pᵀAp <= 0), indefinite
// preconditioner (rᵀz <= 0 at init), b = 0 converged at init.
void test_step_statuses(void**) {
  for (cnc::format f :
       {cnc::format::csr, cnc::format::bcrs2, cnc::format::bcrs4, cnc::format::sell}) {
    const std::int32_t rows[4] = {0, 0, 1, 1};
    const std::int32_t cols[4] = {0, 1, 0, 1};
    const double vals[4] = {1, 2, 2, 1};
    ts_csr a = ts_csr_from_coo(2, 4, rows, cols, vals);
    auto prep = prepare(a, f);
    const cnc::precision p = g_backend->has_fp64() ? cnc::precision::f64 : cnc::precision::f32;
    auto sys = g_backend->create_system(prep->hm, prep->d, p, 3);
    // System 0: b = (1, -1): pᵀAp = -2 -> indefinite_matrix. System 1: b = 0 -> converged at init.
    // System 2: b = (1, 1) with thr2 = 0: pᵀAp = 6 > 0, running.
    const double b[6] = {1, -1, 0, 0, 1, 1}, x0[6] = {0, 0, 0, 0, 0, 0}, thr2[3] = {0, 0, 0};
    sys->set_vectors(b, x0);
    sys->init(thr2);
    cnc::rhs_state st[3];
    sys->read_state(st);
    assert_int_equal(st[0].status, cnc::running);
    assert_int_equal(st[1].status, cnc::converged);
    assert_int_equal(st[2].status, cnc::running);
    sys->spmv_dot();
    sys->update_xr();
    sys->read_state(st);
    assert_int_equal(st[0].status, cnc::indefinite_matrix);
    assert_int_equal(st[0].iters, 0);
    assert_true(st[0].pq == -2.0);
    assert_int_equal(st[2].status, cnc::running);
    assert_int_equal(st[2].iters, 1);
    double x[6];
    sys->get_x(x);
    assert_true(x[0] == 0 && x[1] == 0 && x[2] == 0 && x[3] == 0);  // x untouched
    ts_csr_free(&a);
    // A negative diagonal: d < 0 gives rᵀz < 0 at init.
    const double nvals[4] = {-4, 1, 1, -4};
    ts_csr an = ts_csr_from_coo(2, 4, rows, cols, nvals);
    auto prep_n = prepare(an, f);
    auto sys_n = g_backend->create_system(prep_n->hm, prep_n->d, p, 1);
    sys_n->set_vectors(b, x0);
    sys_n->init(thr2);
    sys_n->read_state(st);
    assert_int_equal(st[0].status, cnc::indefinite_precond);
    assert_true(st[0].rz < 0);
    ts_csr_free(&an);
  }
}

// ---- iterate(count) == count single steps
// --------------------------------------------------------
void test_iterate_equals_steps(void**) {
  for (const combo& c : all_combos()) {
    if (c.m->a.n > 2000) continue;
    auto prep = prepare(c.m->a, c.f);
    auto s1 = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
    auto s2 = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
    const std::size_t nk = std::size_t(c.m->a.n) * c.k;
    std::vector<double> b = random_vec(nk, 31), x0(nk, 0.0), thr2(c.k, 0.0);
    for (auto* s : {s1.get(), s2.get()}) {
      s->set_vectors(b.data(), x0.data());
      s->init(thr2.data());
    }
    s1->iterate(7);
    for (int t = 0; t < 7; ++t) {
      s2->spmv_dot();
      s2->update_xr();
      s2->update_p();
    }
    std::vector<cnc::rhs_state> st1(c.k), st2(c.k);
    s1->read_state(st1.data());
    s2->read_state(st2.data());
    if (std::memcmp(st1.data(), st2.data(), sizeof(cnc::rhs_state) * c.k) != 0)
      fail_msg("%s: iterate(7) state differs from 7 single steps", c.label().c_str());
    std::vector<double> x1(nk), x2(nk);
    s1->get_x(x1.data());
    s2->get_x(x2.data());
    if (std::memcmp(x1.data(), x2.data(), sizeof(double) * nk) != 0)
      fail_msg("%s: iterate(7) x differs from 7 single steps", c.label().c_str());
    for (int j = 0; j < c.k; ++j) assert_int_equal(st1[j].iters, 7);
  }
}

// ---- x takes update_xr's step in update_p, also in the step where a system converges
// --------------------------------------------------------------------------------
void test_x_step_in_update_p(void**) {
  for (const combo& c : all_combos()) {
    if (c.m->a.n > 2000) continue;
    auto prep = prepare(c.m->a, c.f);
    auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
    const std::int32_t n = c.m->a.n;
    const std::size_t nk = std::size_t(n) * c.k;
    std::vector<double> b = random_vec(nk, 41), x0 = random_vec(nk, 43, 0.1), thr2(c.k);
    for (int j = 0; j < c.k; ++j) {  // a loose threshold: every system converges within a few
      double bb = 0;
      for (std::int32_t i = 0; i < n; ++i)
        bb += b[std::size_t(j) * n + i] * b[std::size_t(j) * n + i];
      thr2[j] = 0.2 * 0.2 * bb;
    }
    sys->set_vectors(b.data(), x0.data());
    sys->init(thr2.data());
    std::vector<cnc::rhs_state> st(c.k), mid(c.k);
    std::vector<double> xb(nk), pb(nk), xa(nk);
    sys->read(cnc::device_system::vec_x, xa.data());  // x before the first step
    const double tol = c.p == cnc::precision::f32 ? 1e-6 : 1e-14;
    std::vector<int> converged_here(c.k, 0);
    for (int it = 0; it < 10 * n; ++it) {
      sys->read_state(st.data());
      if (std::none_of(st.begin(), st.end(),
                       [](const cnc::rhs_state& s) { return s.status == cnc::running; }))
        break;
      sys->spmv_dot();
      sys->update_xr();
      sys->read_state(mid.data());
      sys->read(cnc::device_system::vec_x, xb.data());
      sys->read(cnc::device_system::vec_p, pb.data());
      if (std::memcmp(xa.data(), xb.data(), sizeof(double) * nk) != 0)
        fail_msg("%s: x changed by spmv_dot or update_xr", c.label().c_str());
      sys->update_p();
      sys->read_state(st.data());
      sys->read(cnc::device_system::vec_x, xa.data());
      for (int j = 0; j < c.k; ++j) {
        const std::size_t o = std::size_t(j) * n;
        if (mid[j].status != cnc::running) {  // no step taken: x untouched, bit for bit
          if (std::memcmp(xa.data() + o, xb.data() + o, sizeof(double) * n) != 0)
            fail_msg("%s: x of stopped system %d changed by update_p", c.label().c_str(), j);
          continue;
        }
        if (st[j].status == cnc::converged) converged_here[j] = 1;
        const double alpha = mid[j].rz / mid[j].pq;
        for (std::int32_t i = 0; i < n; ++i) {
          const double want = xb[o + i] + alpha * pb[o + i];
          if (!(std::fabs(xa[o + i] - want) <=
                tol * (std::fabs(xb[o + i]) + std::fabs(alpha * pb[o + i])) + 1e-300))
            fail_msg(
                "%s: system %d row %d after update_p: x %.17g, want x + alpha p = %.17g (status "
                "%d)",
                c.label().c_str(), j, i, xa[o + i], want, st[j].status);
        }
      }
    }
    for (int j = 0; j < c.k; ++j)
      if (!converged_here[j])
        fail_msg("%s: system %d did not converge in an update_p step (status %d)",
                 c.label().c_str(), j, st[j].status);
  }
}

// ---- frozen systems
// --------------------------------------------------------------------------------
void test_frozen_systems(void**) {
  for (const combo& c : all_combos()) {
    if (c.k != 3 || c.m->a.n > 2000) continue;
    auto prep = prepare(c.m->a, c.f);
    auto sys = g_backend->create_system(prep->hm, prep->d, c.p, 3);
    const std::int32_t n = c.m->a.n;
    const std::size_t nk = std::size_t(n) * 3;
    std::vector<double> b = random_vec(nk, 37), x0(nk, 0.0);
    for (std::int32_t i = 0; i < n; ++i) b[2 * std::size_t(n) + i] = 0.0;  // system 2: b = 0
    double bb1 = 0;
    for (std::int32_t i = 0; i < n; ++i) bb1 += b[std::size_t(n) + i] * b[std::size_t(n) + i];
    // System 0 never converges here, system 1 converges early (loose threshold), system 2 at init.
    const double thr2[3] = {0.0, 0.3 * 0.3 * bb1, 0.0};
    sys->set_vectors(b.data(), x0.data());
    sys->init(thr2);
    cnc::rhs_state st[3];
    sys->read_state(st);
    assert_int_equal(st[2].status, cnc::converged);
    int guard = 0;
    while (st[1].status == cnc::running && guard++ < 10 * n) {
      sys->iterate(1);
      sys->read_state(st);
    }
    if (st[1].status != cnc::converged)
      fail_msg("%s: system 1 status %d after %d iterations", c.label().c_str(), st[1].status,
               guard);
    if (st[0].status != cnc::running) continue;  // tiny matrix: system 0 done too, nothing to see
    cnc::rhs_state frozen[3];
    std::memcpy(frozen, st, sizeof st);
    std::vector<double> xa(nk), xb(nk);
    sys->get_x(xa.data());
    sys->iterate(5);
    sys->read_state(st);
    sys->get_x(xb.data());
    for (int j = 1; j < 3; ++j) {
      if (std::memcmp(&frozen[j], &st[j], sizeof(cnc::rhs_state)) != 0)
        fail_msg("%s: state of stopped system %d changed", c.label().c_str(), j);
      if (std::memcmp(xa.data() + std::size_t(j) * n, xb.data() + std::size_t(j) * n,
                      sizeof(double) * std::size_t(n)) != 0)
        fail_msg("%s: x of stopped system %d changed", c.label().c_str(), j);
    }
    for (std::int32_t i = 0; i < n; ++i) assert_true(xb[2 * std::size_t(n) + i] == 0.0);
    if (st[0].status == cnc::running || st[0].status == cnc::converged)
      assert_true(st[0].iters > frozen[0].iters);
  }
}

// ---- full solve
// ------------------------------------------------------------------------------------
// The PCG driver's true-residual check computed on the device (init() on the final x, the
// default for double) against the same check on the host, and both against the test's own
// residual of the returned x: same iterations and reasons, true residuals equal to rounding.
void test_pcg_true_residual_on_device(void**) {
  for (const combo& c : all_combos()) {
    if (c.p != cnc::precision::f64) continue;  // the device check is used for double only
    auto prep = prepare(c.m->a, c.f);
    const std::int32_t n = c.m->a.n;
    const std::size_t nk = std::size_t(n) * c.k;
    const std::vector<double> b = random_vec(nk, 43);
    cnc::pcg_params prm;
    prm.max_iterations = std::max(1000, 20 * n);
    prm.threshold = 1e-9;
    prm.check_interval = g_backend->default_check_interval();
    cnc::pcg_result r[2];
    std::vector<double> x[2];
    for (int dev = 0; dev < 2; ++dev) {
      auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
      prm.device_residual = dev == 1;
      x[dev].assign(nk, 0.0);
      r[dev] = cnc::pcg_solve(*sys, prep->csr, c.k, b.data(), x[dev].data(), prm);
    }
    if (r[0].iterations != r[1].iterations || r[0].reasons != r[1].reasons ||
        std::memcmp(x[0].data(), x[1].data(), nk * sizeof(double)) != 0)
      fail_msg("%s: host and device residual checks took different paths", c.label().c_str());
    for (int j = 0; j < c.k; ++j) {
      const double mine =
          ts_rel_residual(&c.m->a, x[1].data() + std::size_t(j) * n, b.data() + std::size_t(j) * n);
      // ||b - A x|| / ||b|| near 1e-9 is cancellation: the three sums agree to rounding of
      // ||A|| ||x|| / ||b||, not relatively.
      if (!(std::fabs(r[1].true_residual[j] - mine) <= 1e-11) ||
          !(std::fabs(r[0].true_residual[j] - mine) <= 1e-11) || !(mine <= 1e-7))
        fail_msg("%s: system %d true residual device %.6e host %.6e, the test's %.6e",
                 c.label().c_str(), j, r[1].true_residual[j], r[0].true_residual[j], mine);
    }
  }
}

void test_full_solve(void**) {
  for (const combo& c : all_combos()) {
    const bool generated = c.m->name.rfind("gen:", 0) == 0;
    if (c.p == cnc::precision::f32 && !generated) continue;  // ill-conditioned: float is not enough
    auto prep = prepare(c.m->a, c.f);
    auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
    const std::int32_t n = c.m->a.n;
    const std::size_t nk = std::size_t(n) * c.k;
    std::vector<double> b = random_vec(nk, 41), x0(nk, 0.0), thr2(c.k);
    const double thr = c.p == cnc::precision::f32     ? 1e-4
                       : c.p == cnc::precision::mixed ? 1e-7
                                                      : 1e-9;
    for (int j = 0; j < c.k; ++j) {
      double s = 0;
      for (std::int32_t i = 0; i < n; ++i)
        s += b[std::size_t(j) * n + i] * b[std::size_t(j) * n + i];
      thr2[j] = thr * thr * s;
    }
    sys->set_vectors(b.data(), x0.data());
    sys->init(thr2.data());
    std::vector<cnc::rhs_state> st(c.k);
    const int check = std::max(1, g_backend->default_check_interval());
    const int max_iter = std::max(1000, 20 * n);
    for (int done = 0; done < max_iter; done += check) {
      sys->read_state(st.data());
      bool running = false;
      for (const auto& s : st) running |= s.status == cnc::running;
      if (!running) break;
      sys->iterate(check);
    }
    sys->read_state(st.data());
    std::vector<double> x(nk);
    sys->get_x(x.data());
    // True residual against the matrix the backend holds (values rounded for f32/mixed).
    ts_csr held = c.m->a;
    std::vector<double> vals(c.m->a.val, c.m->a.val + c.m->a.nnz);
    for (double& v : vals) v = cnc_test::mat_round(c.p, v);
    held.val = vals.data();
    for (int j = 0; j < c.k; ++j) {
      if (st[j].status != cnc::converged)
        fail_msg("%s: system %d status %d after %d iterations", c.label().c_str(), j, st[j].status,
                 st[j].iters);
      double res =
          ts_rel_residual(&held, x.data() + std::size_t(j) * n, b.data() + std::size_t(j) * n);
      const double allowed = c.p == cnc::precision::f32 ? 1e-3 : 100 * thr;
      if (!(res <= allowed))
        fail_msg("%s: system %d converged but the true residual is %.3e", c.label().c_str(), j,
                 res);
    }
  }
}

// A backend that builds SELL on the device (builds_on_device: CUDA, OpenCL with fp64) gets the
// CSR alone; the layout must be the host conversion's, so the products, the iterations, the
// states and x must equal bit for bit those of the host layout handed over, in every precision,
// for sizes that end mid-slice, one row, rows much longer than the rest (wide slices) and many
// slices.
void test_device_built_sell(void**) {
  if (!g_backend->builds_on_device(cnc::format::sell)) {
    std::printf("[  SKIP    ] %s builds SELL on the host (nothing to compare)\n",
                g_backend->name());
    return;
  }
  for (const auto& [n, per_row, seed] : {std::tuple{1, 0, 61}, std::tuple{45, 3, 62},
                                         std::tuple{3001, 40, 63}, std::tuple{70003, 6, 64}}) {
    ts_csr a = ts_random_spd(n, per_row, std::uint64_t(seed));
    auto t = prepare(a, cnc::format::sell);
    cnc::host_matrix on_device = t->hm;
    on_device.sell = nullptr;
    assert_int_equal(on_device.n_padded(), t->hm.n_padded());
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::f32, cnc::precision::mixed})
      for (int k : {1, 3}) {
        if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
        std::vector<double> b = random_vec(std::size_t(a.n) * k, 7), x0(b.size(), 0.0);
        std::vector<double> thr2(k, 1e-40), xs[2], ys[2];
        std::vector<cnc::rhs_state> ss[2];
        for (int run = 0; run < 2; ++run) {
          auto sys = g_backend->create_system(run ? on_device : t->hm, t->d, p, k);
          ys[run].resize(b.size());
          sys->apply(b.data(), ys[run].data());
          sys->set_vectors(b.data(), x0.data());
          sys->init(thr2.data());
          sys->iterate(23);
          xs[run].resize(b.size());
          ss[run].resize(k);
          sys->get_x(xs[run].data());
          sys->read_state(ss[run].data());
        }
        if (std::memcmp(ys[0].data(), ys[1].data(), ys[0].size() * sizeof(double)) != 0 ||
            std::memcmp(xs[0].data(), xs[1].data(), xs[0].size() * sizeof(double)) != 0 ||
            std::memcmp(ss[0].data(), ss[1].data(), k * sizeof(cnc::rhs_state)) != 0)
          fail_msg("n=%d %s k=%d: device-built SELL differs from the host's", a.n, prec_name(p), k);
      }
    ts_csr_free(&a);
  }
}

void load_matrices() {
  g_matrices.push_back({"gen:random37", ts_random_spd(37, 5, 1)});
  g_matrices.push_back({"gen:random300", ts_random_spd(300, 6, 2)});
  g_matrices.push_back({"gen:laplace13x11", ts_laplacian_2d(13, 11)});
  g_matrices.push_back({"gen:blocks4", ts_dense_blocks(10, 4, 3)});
  g_matrices.push_back({"gen:poisson3d-12", ts_poisson_3d(12)});
  g_matrices.push_back({"gen:long-rows", ts_long_rows_spd(3000, 2000, 3)});
  const char* dir = ts_data_dir();
  if (!dir) {
    std::printf("note: shared/data absent: real matrices skipped, generated ones only\n");
    return;
  }
  for (const char* name : {"nos4_header-added.mtx", "bcsstk01.mtx", "LF10.mtx", "494_bus.mtx",
                           "Trefethen_20b.mtx", "bcsstk05.mtx"}) {
    char path[9000], err[256];
    std::snprintf(path, sizeof path, "%s/matrices/%s", dir, name);
    ts_csr a;
    if (ts_read_mtx(path, &a, err, sizeof err) != 0) {
      std::printf("note: %s\n", err);
      continue;
    }
    g_matrices.push_back({name, a});
  }
}

}  // namespace

void test_vector_surface(void**);          // backend_vectors.cpp
void test_block_products(void**);          // backend_block.cpp
void test_block_fused(void**);             // backend_block.cpp
void test_halo_operations(void**);         // backend_halo.cpp
void test_device_permute(void**);          // backend_device_order.cpp
void test_device_rcm(void**);              // backend_device_order.cpp
void test_long_rows(void**);               // backend_long_rows.cpp
void test_long_rows_threads(void**);       // backend_long_rows.cpp
void test_stream_loads_same_bits(void**);  // backend_long_rows.cpp
void test_zcsr_apply(void**);              // backend_zcsr.cpp
void test_zcsr_pcg(void**);                // backend_zcsr.cpp
void test_zcsr_zaxpby(void**);             // backend_zcsr.cpp
void test_zcsr_fused(void**);              // backend_zcsr.cpp
void test_zcsr_zprecondition(void**);      // backend_zcsr.cpp

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s cpu|opencl|cuda [test name pattern, e.g. 'test_zcsr*']\n",
                 argv[0]);
    return 2;
  }
  g_name = argv[1];
  cnc::backend_options o;
  std::string why;
  if (g_name == "cpu")
    g_backend = cnc::make_cpu_backend(o, why);
  else if (g_name == "opencl")
    g_backend = cnc::make_opencl_backend(o, why);
  else if (g_name == "cuda")
    g_backend = cnc::make_cuda_backend(o, why);
  else {
    std::fprintf(stderr, "unknown backend '%s'\n", g_name.c_str());
    return 2;
  }
  if (!g_backend) {
    std::printf("SKIP: backend %s unavailable: %s\n", g_name.c_str(), why.c_str());
    return TS_SKIP;
  }
  if (std::string(g_backend->name()) != g_name) {
    std::printf("backend name() is '%s', expected '%s'\n", g_backend->name(), g_name.c_str());
    return 1;
  }
  std::printf("backend %s on %s (fp64: %s, check interval %d)\n", g_backend->name(),
              g_backend->device_name().c_str(), g_backend->has_fp64() ? "yes" : "no",
              g_backend->default_check_interval());
  // GPU backends run SELL in place of CSR where it pays; the CPU keeps CSR (backend.hpp).
  if (g_name == "cpu" && g_backend->prefers_sliced()) {
    std::printf("the CPU backend must not prefer sliced formats\n");
    return 1;
  }
  load_matrices();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_apply),
      cmocka_unit_test(test_steps_vs_reference),
      cmocka_unit_test(test_step_statuses),
      cmocka_unit_test(test_iterate_equals_steps),
      cmocka_unit_test(test_x_step_in_update_p),
      cmocka_unit_test(test_frozen_systems),
      cmocka_unit_test(test_full_solve),
      cmocka_unit_test(test_pcg_true_residual_on_device),
      cmocka_unit_test(test_vector_surface),
      cmocka_unit_test(test_block_products),
      cmocka_unit_test(test_block_fused),
      cmocka_unit_test(test_halo_operations),
      cmocka_unit_test(test_device_built_sell),
      cmocka_unit_test(test_device_permute),
      cmocka_unit_test(test_device_rcm),
      cmocka_unit_test(test_long_rows),
      cmocka_unit_test(test_long_rows_threads),
      cmocka_unit_test(test_stream_loads_same_bits),
      cmocka_unit_test(test_zcsr_apply),
      cmocka_unit_test(test_zcsr_pcg),
      cmocka_unit_test(test_zcsr_zaxpby),
      cmocka_unit_test(test_zcsr_fused),
      cmocka_unit_test(test_zcsr_zprecondition),
  };
  if (argc > 2) {
    // cmocka runs nothing and passes when a filter matches no test: a mistyped name must fail.
    bool any = false;
    for (const CMUnitTest& t : tests) any = any || fnmatch(argv[2], t.name, 0) == 0;
    if (!any) {
      std::printf("no test matches '%s'\n", argv[2]);
      return 1;
    }
    cmocka_set_test_filter(argv[2]);
  }
  int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  for (test_matrix& m : g_matrices) ts_csr_free(&m.a);
  g_backend.reset();
  return rc;
}
