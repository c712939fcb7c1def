// What libcnc_mpi asks of a backend (backend.hpp), part of the generic backend suite: every
// backend, format and precision, k = 1, 3 and 8 systems.
//   - The halo operations: gather_halo copies rows send_rows of every column into halo_send()
//     (the values read back by `read`, bit for bit); add_halo adds alpha times the halo block's
//     product with halo_recv() to the active columns (checked against the product done here),
//     leaving masked-out columns and rows without halo entries bit for bit; an empty plan is a
//     no-op. A system that offers no halo operations (set_halo false: CUDA's single-precision
//     vectors) is skipped.
//   - write_state: the next step reads what was written (the step length x takes in update_p
//     from a written pq, update_p's beta and state from a written rz_new), as a distributed
//     system's global sums replace the local ones between steps.
#include <setjmp.h>

#include <bit>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend_harness.hpp"
#include "cnc.h"

// After every C++ header: cmocka's macros clash with <ios>.
extern "C" {
#include <cmocka.h>
}

using namespace suite;

namespace {

void run_halo_case(const combo& c) {
  const auto prep = prepare(c.m->a, c.f);
  const auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
  const std::int32_t n = c.m->a.n;
  const int k = c.k;
  const std::size_t nk = std::size_t(n) * k, ks = std::size_t(k);
  const double tol = c.p == cnc::precision::f32 ? 1e-5 : 1e-13;

  // The halo block: every third row has entries in columns (r + e) % halo_size, e < r % 4.
  const std::int32_t halo_size = 7;
  std::vector<std::int64_t> rp(std::size_t(n) + 1, 0);
  std::vector<std::int32_t> col;
  std::vector<double> val;
  for (std::int32_t r = 0; r < n; ++r) {
    if (r % 3 == 0)
      for (std::int32_t e = 0; e < r % 4 + 1; ++e)
        col.push_back((r + 2 * e) % halo_size), val.push_back(0.25 + 0.125 * ((r + e) % 5));
    rp[std::size_t(r) + 1] = std::int64_t(col.size());
  }
  const std::vector<std::int32_t> send = {n - 1, 0, n / 2, 1};
  const cnc::csr_view halo{n, rp, col, val};
  if (!sys->set_halo(halo, halo_size, send.data(), std::int32_t(send.size()))) return;

  const std::vector<double> b = random_vec(nk, 71), x = random_vec(nk, 73, 0.5);
  sys->set_vectors(b.data(), x.data());
  std::vector<double> X(nk);
  sys->read(cnc::device_system::vec_x, X.data());
  sys->gather_halo(cnc::device_system::vec_x);
  const double* hs = sys->halo_send();
  for (std::size_t t = 0; t < send.size(); ++t)
    for (int j = 0; j < k; ++j) {
      const double want = X[std::size_t(j) * n + std::size_t(send[t])], got = hs[t * ks + j];
      if (std::bit_cast<std::uint64_t>(want) != std::bit_cast<std::uint64_t>(got))
        fail_msg("%s: halo_send[%zu][%d] = %.17g, expected %.17g", c.label().c_str(), t, j, got,
                 want);
    }

  std::vector<std::uint8_t> mask(ks, 1);
  if (k > 1) mask[1] = 0;
  sys->set_mask(mask.data());
  const std::vector<double> h = random_vec(std::size_t(halo_size) * ks, 75);
  std::memcpy(sys->halo_recv(), h.data(), h.size() * sizeof(double));
  std::vector<double> B(nk), Y(nk);
  sys->read(cnc::device_system::vec_b, B.data());
  const double alpha = -0.75;
  sys->add_halo(alpha, cnc::device_system::vec_b);
  sys->gather_halo(cnc::device_system::vec_x);  // halo_recv() is free again when this returns
  sys->read(cnc::device_system::vec_b, Y.data());
  for (int j = 0; j < k; ++j)
    for (std::int32_t r = 0; r < n; ++r) {
      const std::size_t at = std::size_t(j) * n + std::size_t(r);
      if (!mask[std::size_t(j)] || rp[std::size_t(r)] == rp[std::size_t(r) + 1]) {
        if (std::bit_cast<std::uint64_t>(Y[at]) != std::bit_cast<std::uint64_t>(B[at]))
          fail_msg("%s: add_halo changed column %d row %d (%s)", c.label().c_str(), j, r,
                   mask[std::size_t(j)] ? "no halo entries" : "masked out");
        continue;
      }
      double s = 0, mag = std::fabs(B[at]);
      for (std::int64_t e = rp[std::size_t(r)]; e < rp[std::size_t(r) + 1]; ++e) {
        const double t = val[std::size_t(e)] * h[std::size_t(col[std::size_t(e)]) * ks + j];
        s += t, mag += std::fabs(alpha * t);
      }
      const double want = B[at] + alpha * s;
      if (!(std::fabs(Y[at] - want) <= tol * mag + 1e-300))
        fail_msg("%s: add_halo column %d row %d: %.17g, expected %.17g", c.label().c_str(), j, r,
                 Y[at], want);
    }

  // An empty plan: nothing sent, nothing added.
  const std::vector<std::int64_t> rp0(std::size_t(n) + 1, 0);
  if (!sys->set_halo(cnc::csr_view{n, rp0, {}, {}}, 0, nullptr, 0))
    fail_msg("%s: set_halo of an empty plan refused", c.label().c_str());
  sys->read(cnc::device_system::vec_b, B.data());
  sys->gather_halo(cnc::device_system::vec_x);
  sys->add_halo(1.0, cnc::device_system::vec_b);
  sys->gather_halo(cnc::device_system::vec_x);
  sys->read(cnc::device_system::vec_b, Y.data());
  if (std::memcmp(B.data(), Y.data(), nk * sizeof(double)) != 0)
    fail_msg("%s: an empty halo plan changed b", c.label().c_str());
}

// write_state between steps: the next step uses the written values.
void run_state_case(const combo& c) {
  const auto prep = prepare(c.m->a, c.f);
  const auto sys = g_backend->create_system(prep->hm, prep->d, c.p, c.k);
  const std::int32_t n = c.m->a.n;
  const int k = c.k;
  const std::size_t nk = std::size_t(n) * k, ks = std::size_t(k);
  const double tol = c.p == cnc::precision::f64 ? 1e-12 : 1e-4;
  const std::vector<double> b = random_vec(nk, 81), x = random_vec(nk, 83, 0.5);
  sys->set_vectors(b.data(), x.data());
  const std::vector<double> thr2(ks, 1e-30);
  sys->init(thr2.data());
  sys->spmv_dot();
  std::vector<cnc::rhs_state> st(ks);
  sys->read_state(st.data());
  std::vector<double> X0(nk), P0(nk), X1(nk), R1(nk), P1(nk);
  sys->read(cnc::device_system::vec_x, X0.data());
  sys->read(cnc::device_system::vec_p, P0.data());
  for (cnc::rhs_state& s : st) s.pq *= 2.0;  // a step half as long
  sys->write_state(st.data());
  sys->update_xr();
  std::vector<cnc::rhs_state> st1(ks);
  sys->read_state(st1.data());
  for (int j = 0; j < k; ++j)
    if (st[std::size_t(j)].status == CNC_ST_RUNNING &&
        !close(st1[std::size_t(j)].pq, st[std::size_t(j)].pq, tol))
      fail_msg("%s: pq after update_xr %.17g, written %.17g", c.label().c_str(),
               st1[std::size_t(j)].pq, st[std::size_t(j)].pq);
  // update_p with rz_new written three times larger: beta = 3 rz_new / rz. It also moves x by
  // update_xr's step, whose length came from the written pq (still in the state).
  std::vector<cnc::rhs_state> st2 = st1;
  for (cnc::rhs_state& s : st2) s.rz_new *= 3.0;
  // The last of several systems written as converged: update_p leaves its x and p as they are.
  if (k > 1) st2[ks - 1].status = CNC_ST_CONVERGED;
  sys->write_state(st2.data());
  sys->read(cnc::device_system::vec_r, R1.data());
  sys->update_p();
  std::vector<cnc::rhs_state> st3(ks);
  sys->read_state(st3.data());
  sys->read(cnc::device_system::vec_p, P1.data());
  sys->read(cnc::device_system::vec_x, X1.data());
  for (int j = 0; j < k; ++j) {
    if (st2[std::size_t(j)].status != CNC_ST_RUNNING) {
      const std::size_t at = std::size_t(j) * n;
      if (std::memcmp(X1.data() + at, X0.data() + at, sizeof(double) * n) != 0 ||
          std::memcmp(P1.data() + at, P0.data() + at, sizeof(double) * n) != 0)
        fail_msg("%s: update_p changed x or p of system %d, written as stopped", c.label().c_str(),
                 j);
      continue;
    }
    const double a = st[std::size_t(j)].rz / st[std::size_t(j)].pq;
    for (std::int32_t r = 0; r < n; ++r) {
      const std::size_t at = std::size_t(j) * n + std::size_t(r);
      const double want = X0[at] + a * P0[at];
      if (!(std::fabs(X1[at] - want) <= tol * (std::fabs(X0[at]) + std::fabs(a * P0[at])) + 1e-30))
        fail_msg("%s: x after a written pq, column %d row %d: %.17g, expected %.17g",
                 c.label().c_str(), j, r, X1[at], want);
    }
  }
  for (int j = 0; j < k; ++j) {
    const cnc::rhs_state& w = st2[std::size_t(j)];
    if (w.status != CNC_ST_RUNNING || st3[std::size_t(j)].status != CNC_ST_RUNNING) continue;
    if (!close(st3[std::size_t(j)].rz, w.rz_new, tol))
      fail_msg("%s: rz after update_p %.17g, written rz_new %.17g", c.label().c_str(),
               st3[std::size_t(j)].rz, w.rz_new);
    const double beta = w.rz_new / w.rz;
    for (std::int32_t r = 0; r < n; ++r) {
      const std::size_t at = std::size_t(j) * n + std::size_t(r);
      const double dr = prep->d[std::size_t(r)] * R1[at];
      const double want = dr + beta * P0[at];
      if (!(std::fabs(P1[at] - want) <= tol * (std::fabs(dr) + std::fabs(beta * P0[at])) + 1e-30))
        fail_msg("%s: p after a written rz_new, column %d row %d: %.17g, expected %.17g",
                 c.label().c_str(), j, r, P1[at], want);
    }
  }
}

}  // namespace

void test_halo_operations(void**) {
  for (const combo& c : all_combos()) {
    run_halo_case(c);
    run_state_case(c);
  }
}
