// CUDA backend kernels against simple host references (cmocka): the PCG steps.
//
// Each PCG step is checked on its own: before a step the test reads the device's vectors back
// (system_probe) and computes what backend.hpp's contract says the step must produce, in double on
// the host, for every format and precision, with a system that converged at init left untouched.
// Matrices are random SPD ones and a real one from the SuiteSparse test set (CNC_MATRIX_DIR;
// skipped, saying so, when absent). Without a usable CUDA device the whole program exits 77 after
// printing why.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "cuda_kernels_support.hpp"
#include "host_reference.hpp"

// cmocka last: its fail() macro would clash with std::ios::fail in the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace cnc;

namespace {

// ---- PCG steps against the host contract
// ---------------------------------------------------------

struct host_state {
  std::vector<double> x, r, p, q;
};

host_state read_all(device_system& s, int np, int k) {
  auto* probe = dynamic_cast<cuda::system_probe*>(&s);
  host_state h;
  for (auto [v, dst] : {std::pair{cuda::vec_id::x, &h.x}, std::pair{cuda::vec_id::r, &h.r},
                        std::pair{cuda::vec_id::p, &h.p}, std::pair{cuda::vec_id::q, &h.q}}) {
    dst->assign(std::size_t(np) * k, NAN);
    probe->read_vector(v, dst->data());
  }
  return h;
}

void expect_vec(const std::vector<double>& got, const std::vector<double>& want, int np, int j,
                precision p, const char* what, const char* ctx) {
  const double err = rel_err(got, want, np, np, j);
  if (!(err <= 50 * vec_tol(p)))
    fail_msg("%s: %s of system %d: relative error %g", ctx, what, j, err);
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want, int np, int j,
                 const char* what, const char* ctx) {
  for (int i = 0; i < np; ++i)
    if (std::memcmp(&got[std::size_t(j) * np + i], &want[std::size_t(j) * np + i],
                    sizeof(double)) != 0)
      fail_msg("%s: %s of system %d changed although it is not running", ctx, what, j);
}

void expect_scalar(double got, double want, precision p, const char* what, const char* ctx, int j) {
  const double tol = p == precision::f32 ? 1e-4 : 1e-10;
  if (!(rel(got, want) <= tol))
    fail_msg("%s: %s of system %d is %.17g, expected %.17g", ctx, what, j, got, want);
}

void expect_state_same(const rhs_state& a, const rhs_state& b, const char* ctx, int j) {
  if (std::memcmp(&a, &b, sizeof a) != 0)
    fail_msg("%s: state of system %d changed although it is not running", ctx, j);
}

// Runs init and `iters` iterations step by step, checking each step against the contract.
// System 1 (when k > 1) has b = 0: converged at init, it must never change afterwards.
void check_steps(const csr_matrix& a, format f, precision p, int k, int iters, const char* label) {
  auto t = make_test_matrix(a, f);
  const int n = a.n, np = t->np;
  char ctx[256];
  std::snprintf(ctx, sizeof ctx, "%s %s %s k=%d", label, format_name(f), pname(p), k);
  auto sys = g_backend->create_system(t->hm, t->d, p, k);
  std::vector<double> b = random_vec(std::size_t(n) * k, 11);
  std::vector<double> x0 = random_vec(std::size_t(n) * k, 12);
  if (k > 1) {
    std::fill(b.begin() + n, b.begin() + 2 * n, 0.0);
    std::fill(x0.begin() + n, x0.begin() + 2 * n, 0.0);
  }
  std::vector<double> thr2(k, 1e-30);
  sys->set_vectors(b.data(), x0.data());
  sys->init(thr2.data());

  std::vector<rhs_state> st(k), prev(k);
  sys->read_state(st.data());
  host_state h = read_all(*sys, np, k);
  // init: r = b - A x, p = d r.
  {
    std::vector<double> xp(std::size_t(np) * k, 0.0), bp(std::size_t(np) * k, 0.0), ax;
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < n; ++i) {
        xp[std::size_t(j) * np + i] = vec_round(p, x0[std::size_t(j) * n + i]);
        bp[std::size_t(j) * np + i] = vec_round(p, b[std::size_t(j) * n + i]);
      }
    ref_spmv(t->ref, p, k, xp, np, ax);
    for (int j = 0; j < k; ++j) {
      std::vector<double> r(std::size_t(np) * k), pz(std::size_t(np) * k);
      double rz = 0, rr = 0;
      for (int i = 0; i < np; ++i) {
        const std::size_t o = std::size_t(j) * np + i;
        r[o] = bp[o] - ax[o];
        pz[o] = t->d[i] * r[o];
        rz += t->d[i] * r[o] * r[o];
        rr += r[o] * r[o];
      }
      if (k > 1 && j == 1) {
        assert_int_equal(st[j].status, converged);
        assert_true(st[j].rr == 0.0);
        continue;
      }
      expect_vec(h.r, r, np, j, p, "init r", ctx);
      expect_vec(h.p, pz, np, j, p, "init p", ctx);
      expect_scalar(st[j].rz, rz, p, "init rz", ctx, j);
      expect_scalar(st[j].rr, rr, p, "init rr", ctx, j);
      assert_int_equal(st[j].status, running);
      assert_int_equal(st[j].iters, 0);
      assert_true(st[j].pq == 0.0 && st[j].thr2 == thr2[j]);
    }
  }

  for (int it = 0; it < iters; ++it) {
    // spmv_dot
    prev = st;
    host_state before = h;
    sys->spmv_dot();
    sys->read_state(st.data());
    h = read_all(*sys, np, k);
    std::vector<double> q;
    ref_spmv(t->ref, p, k, before.p, np, q);
    for (int j = 0; j < k; ++j) {
      if (prev[j].status != running) {
        expect_state_same(st[j], prev[j], ctx, j);
        expect_same(h.q, before.q, np, j, "q", ctx);
        continue;
      }
      double pq = 0;
      for (int i = 0; i < np; ++i)
        pq += before.p[std::size_t(j) * np + i] * h.q[std::size_t(j) * np + i];
      expect_vec(h.q, q, np, j, p, "q = A p", ctx);
      expect_scalar(st[j].pq, pq, p, "pq", ctx, j);
    }
    // update_xr
    prev = st;
    before = h;
    sys->update_xr();
    sys->read_state(st.data());
    h = read_all(*sys, np, k);
    for (int j = 0; j < k; ++j) {
      if (prev[j].status != running) {
        expect_state_same(st[j], prev[j], ctx, j);
        expect_same(h.x, before.x, np, j, "x", ctx);
        expect_same(h.r, before.r, np, j, "r", ctx);
        continue;
      }
      const double alpha = prev[j].rz / prev[j].pq;
      std::vector<double> rr_(before.r);
      double rz = 0, rr = 0;
      for (int i = 0; i < np; ++i) {
        const std::size_t o = std::size_t(j) * np + i;
        rr_[o] = before.r[o] - alpha * before.q[o];
        rz += t->d[i] * h.r[o] * h.r[o];
        rr += h.r[o] * h.r[o];
      }
      expect_same(h.x, before.x, np, j, "x (moved by update_p)", ctx);
      expect_vec(h.r, rr_, np, j, p, "r", ctx);
      expect_scalar(st[j].rz_new, rz, p, "rz_new", ctx, j);
      expect_scalar(st[j].rr, rr, p, "rr", ctx, j);
      assert_int_equal(st[j].iters, prev[j].iters + 1);
      assert_int_equal(st[j].status, running);
    }
    // update_p
    prev = st;
    before = h;
    sys->update_p();
    sys->read_state(st.data());
    h = read_all(*sys, np, k);
    for (int j = 0; j < k; ++j) {
      if (prev[j].status != running) {
        expect_state_same(st[j], prev[j], ctx, j);
        expect_same(h.p, before.p, np, j, "p", ctx);
        expect_same(h.x, before.x, np, j, "x", ctx);
        continue;
      }
      // x takes update_xr's step here, whether or not the system goes on.
      const double alpha = prev[j].rz / prev[j].pq;
      std::vector<double> xn(before.x);
      for (int i = 0; i < np; ++i) {
        const std::size_t o = std::size_t(j) * np + i;
        xn[o] = before.x[o] + alpha * before.p[o];
      }
      expect_vec(h.x, xn, np, j, p, "x", ctx);
      if (prev[j].rr <= prev[j].thr2) {
        assert_int_equal(st[j].status, converged);
        continue;
      }
      const double beta = prev[j].rz_new / prev[j].rz;
      std::vector<double> pn(before.p);
      for (int i = 0; i < np; ++i) {
        const std::size_t o = std::size_t(j) * np + i;
        pn[o] = t->d[i] * before.r[o] + beta * before.p[o];
      }
      expect_vec(h.p, pn, np, j, p, "p", ctx);
      assert_int_equal(st[j].status, running);
      assert_true(st[j].rz == prev[j].rz_new);
    }
  }
}

void test_steps(void**) {
  const csr_matrix rnd = random_spd(2001, 6, 21);
  for (format f : all_formats)
    for (precision p : all_precisions)
      for (int k : {1, 3}) check_steps(rnd, f, p, k, 6, "random n=2001");
  const csr_matrix lap = read_mtx(matrix_dir() + "/lap3D_7pt_n20.mtx");
  if (lap.n) {
    for (format f : all_formats)
      for (precision p : all_precisions) check_steps(lap, f, p, 3, 4, "lap3D_7pt_n20");
  } else {
    std::printf("lap3D_7pt_n20.mtx not under %s: real-matrix step checks skipped\n",
                matrix_dir().c_str());
  }
}

}  // namespace

int main() {
  const int early = open_cuda_backend();  // 77 (skipped) without a usable CUDA device
  if (early >= 0) return early;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_steps),
  };
  const int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  g_backend.reset();
  return rc;
}
