// CUDA backend kernels against simple host references (cmocka): graphs, determinism, whole
// solves.
//
// iterate() (CUDA graphs, or the persistent kernel for small SELL systems) equals the same
// single steps bit for bit and reproduces itself (SELL built on the device is checked against the
// host's conversion in the generic backend suite, test_backend.cpp); whole solves converge to a
// small true residual (host, double); status transitions computed on the device (NaN input, zero
// right-hand side, indefinite matrix). Without a usable CUDA device the whole program exits 77
// after printing why.
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

// ---- graphs, determinism, whole solves
// -----------------------------------------------------------

bool is_persistent(device_system& s) {
  return dynamic_cast<cuda::system_probe&>(s).config().find("persistent") != std::string::npos;
}

// iterate(count) (CUDA graph, or the persistent kernel for small SELL systems) must equal the
// same number of single steps bit for bit, and a second identical run must reproduce it
// (fixed-order reductions over the same grid).
void test_graph_matches_steps(void**) {
  const csr_matrix a = random_spd(30000, 8, 31);
  int persistent_runs = 0;
  for (format f : all_formats)
    for (precision p : all_precisions)
      for (int k : {1, 3, 9})
        for (const char* limit : {"", "0"}) {  // "0": SELL on CUDA graphs, persistent kernel off
          if (*limit && f != format::sell) continue;
          if (*limit)
            setenv("CNC_CUDA_PERSISTENT_ROWS", limit, 1);
          else
            unsetenv("CNC_CUDA_PERSISTENT_ROWS");
          auto t = make_test_matrix(a, f);
          bool persistent = false;
          std::vector<double> b = random_vec(std::size_t(a.n) * k, 5), x0(b.size(), 0.0);
          std::vector<double> thr2(k, 1e-40);
          std::vector<double> xs[3];
          std::vector<rhs_state> ss[3];
          for (int run = 0; run < 3; ++run) {
            auto sys = g_backend->create_system(t->hm, t->d, p, k);
            sys->set_vectors(b.data(), x0.data());
            sys->init(thr2.data());
            if (run == 0) {
              for (int c = 0; c < 37; ++c) {
                sys->spmv_dot();
                sys->update_xr();
                sys->update_p();
              }
            } else {
              persistent = is_persistent(*sys);
              sys->iterate(16);
              sys->iterate(21);  // 16 + 21 = 37, two graphs
            }
            xs[run].resize(b.size());
            ss[run].resize(k);
            sys->get_x(xs[run].data());
            sys->read_state(ss[run].data());
          }
          if (persistent) ++persistent_runs;
          for (int run = 1; run < 3; ++run) {
            if (std::memcmp(xs[run].data(), xs[0].data(), xs[0].size() * sizeof(double)) != 0 ||
                std::memcmp(ss[run].data(), ss[0].data(), k * sizeof(rhs_state)) != 0)
              fail_msg("%s %s k=%d%s: run %d differs from the step-by-step run", format_name(f),
                       pname(p), k, persistent ? " (persistent)" : "", run);
          }
          if (*limit && persistent)
            fail_msg("CNC_CUDA_PERSISTENT_ROWS=0 left the persistent kernel on");
          if (p == precision::f64) assert_int_equal(ss[0][0].iters, 37);
        }
  unsetenv("CNC_CUDA_PERSISTENT_ROWS");
  // SELL at n = 30000 with k <= 8 must have taken the persistent path by default.
  if (persistent_runs != 6)
    fail_msg("persistent kernel used in %d runs, expected 6", persistent_runs);
}

// Whole solves: converge, then the true residual (host, double) is small; further iterations are
// no-ops.
void test_solve(void**) {
  const csr_matrix a = random_spd(20000, 6, 41);
  for (format f : all_formats)
    for (precision p : all_precisions) {
      const int k = 3;
      auto t = make_test_matrix(a, f);
      const double thr = p == precision::f32 ? 1e-5 : 1e-10;
      std::vector<double> b = random_vec(std::size_t(a.n) * k, 6), x(b.size(), 0.0);
      std::vector<double> thr2(k);
      for (int j = 0; j < k; ++j) {
        double bb = 0;
        for (int i = 0; i < a.n; ++i)
          bb += b[std::size_t(j) * a.n + i] * b[std::size_t(j) * a.n + i];
        thr2[j] = thr * thr * bb;
      }
      auto sys = g_backend->create_system(t->hm, t->d, p, k);
      sys->set_vectors(b.data(), x.data());
      sys->init(thr2.data());
      std::vector<rhs_state> st(k);
      int done = 0;
      for (int it = 0; it < 1000 && done < k; it += 16) {
        sys->iterate(16);
        sys->read_state(st.data());
        done = 0;
        for (int j = 0; j < k; ++j) done += st[j].status != running;
      }
      for (int j = 0; j < k; ++j) assert_int_equal(st[j].status, converged);
      sys->get_x(x.data());
      std::vector<rhs_state> st2(k);
      sys->iterate(16);
      sys->read_state(st2.data());
      std::vector<double> x2(x.size());
      sys->get_x(x2.data());
      assert_memory_equal(st2.data(), st.data(), k * sizeof(rhs_state));
      assert_memory_equal(x2.data(), x.data(), x.size() * sizeof(double));
      std::vector<double> ax;
      ref_spmv(a, precision::f64, k, x, a.n, ax);
      for (int j = 0; j < k; ++j) {
        double num = 0, den = 0;
        for (int i = 0; i < a.n; ++i) {
          const std::size_t o = std::size_t(j) * a.n + i;
          num += (b[o] - ax[o]) * (b[o] - ax[o]);
          den += b[o] * b[o];
        }
        const double res = std::sqrt(num / den);
        // mixed solves the float-rounded matrix: its true residual against A is ~1e-7.
        const double want = p == precision::f64 ? 1e-8 : p == precision::mixed ? 1e-6 : 1e-4;
        if (!(res <= want))
          fail_msg("%s %s system %d: true residual %g after %d iterations", format_name(f),
                   pname(p), j, res, st[j].iters);
      }
    }
}

// Status transitions computed on the device: NaN input, zero right-hand side, indefinite matrix.
void test_status(void**) {
  const int n = 500;
  csr_matrix a = random_spd(n, 4, 51);
  auto t = make_test_matrix(a, format::csr);
  std::vector<double> thr2 = {1e-20, 1e-20, 1e-20};
  std::vector<double> b = random_vec(std::size_t(n) * 3, 52), x(b.size(), 0.0);
  b[0] = NAN;                                        // system 0: not finite at init
  std::fill(b.begin() + n, b.begin() + 2 * n, 0.0);  // system 1: converged at init
  auto sys = g_backend->create_system(t->hm, t->d, precision::f64, 3);
  sys->set_vectors(b.data(), x.data());
  sys->init(thr2.data());
  std::vector<rhs_state> st(3);
  sys->read_state(st.data());
  assert_int_equal(st[0].status, not_finite);
  assert_int_equal(st[1].status, converged);
  assert_int_equal(st[2].status, running);

  // Negate the matrix and keep d > 0: pᵀAp < 0 at the first step (graph and persistent paths).
  csr_matrix neg = a;
  for (double& v : neg.val) v = -v;
  for (format f : {format::csr, format::sell}) {
    auto tn = make_test_matrix(neg, f);
    for (double& v : tn->d) v = std::fabs(v);
    std::vector<double> b1 = random_vec(n, 53), x1(n, 0.0);
    double t2 = 1e-20;
    auto sn = g_backend->create_system(tn->hm, tn->d, precision::f64, 1);
    sn->set_vectors(b1.data(), x1.data());
    sn->init(&t2);
    sn->iterate(3);
    rhs_state s1;
    sn->read_state(&s1);
    assert_int_equal(s1.status, indefinite_matrix);
    assert_int_equal(s1.iters, 0);
    // A converged system is left untouched by further iterations.
    std::vector<double> bz(n, 0.0);
    sn->set_vectors(bz.data(), x1.data());
    sn->init(&t2);
    sn->iterate(5);
    sn->read_state(&s1);
    assert_int_equal(s1.status, converged);
    assert_int_equal(s1.iters, 0);
  }
}

}  // namespace

int main() {
  const int early = open_cuda_backend();  // 77 (skipped) without a usable CUDA device
  if (early >= 0) return early;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_graph_matches_steps),
      cmocka_unit_test(test_solve),
      cmocka_unit_test(test_status),
  };
  const int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  g_backend.reset();
  return rc;
}
