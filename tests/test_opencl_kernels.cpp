// OpenCL backend kernels against straightforward host references written here.
//   - apply() (the SpMV kernel, every format) vs a host SpMV with the precision's rounding, on
//     random, generated and real (shared/data/matrices) matrices, CSR / BCRS2 / BCRS4 / SELL,
//     k = 1 and 3, the three precisions;
//   - init / spmv_dot / update_xr / update_p, state read after every step, vs a host
//     implementation of the contract in backend.hpp; iterate(n) bit-identical to n steps and
//     run-to-run; stopped systems untouched; indefinite and non-finite statuses; a full solve;
//     two threads with their own systems at once, bit-identical to each alone;
//   - the no-fp64 path (CNC_OPENCL_DISABLE_FP64), device selection by environment and index,
//     a kernel build failure (build log in the message), CL error mapping;
//   - `--expect-absent TEXT`: the factory must return nullptr with TEXT in its reason (CTest runs
//     it with no loader / an empty ICD folder).
// Exits 77 after saying why when no OpenCL device is available.
#include <setjmp.h>
#include <stdarg.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "backends/backend.hpp"
#include "backends/opencl/cl_error.hpp"
#include "backends/opencl/cl_runtime.hpp"
#include "backends/opencl/opencl_backend.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "host_reference.hpp"
#include "test_support.h"
#include "util/error.hpp"

namespace {

using cnc::precision;

std::unique_ptr<cnc::backend> g_b;

const char* pname(precision p) {
  return p == precision::f64 ? "f64" : p == precision::f32 ? "f32" : "mixed";
}
const precision k_precs[] = {precision::f64, precision::f32, precision::mixed};

struct problem {
  std::string name;
  cnc::csr_matrix csr;
  cnc::bcrs_matrix b2, b4;
  cnc::sell_matrix sell;
};

problem make_problem(const std::string& name, ts_csr t) {
  problem p;
  p.name = name;
  p.csr = cnc_test::from_ts(t);
  ts_csr_free(&t);
  p.b2 = cnc::csr_to_bcrs(p.csr, 2);
  p.b4 = cnc::csr_to_bcrs(p.csr, 4);
  p.sell = cnc::csr_to_sell(p.csr);
  return p;
}

std::vector<problem>& problems() {
  static std::vector<problem> ps;
  if (!ps.empty()) return ps;
  ps.push_back(make_problem("random n=777", ts_random_spd(777, 9, 42)));
  ps.push_back(make_problem("poisson 11^3", ts_poisson_3d(11)));
  // Real matrices: short rows, long rows (bcsstk13: ~40 per row), an odd n (padding).
  const char* files[] = {"bcsstk13.mtx", "494_bus.mtx", "nos4_header-added.mtx", "bcsstk01.mtx"};
  const char* dir = ts_data_dir();
  if (!dir) std::printf("note: real matrices skipped: no data folder (set CNC_TEST_DATA)\n");
  for (const char* f : files) {
    if (!dir) break;
    const std::string path = std::string(dir) + "/matrices/" + f;
    ts_csr t;
    char err[256];
    if (ts_read_mtx(path.c_str(), &t, err, sizeof err) != 0) {
      std::printf("note: real matrix %s skipped: %s\n", f, err);
      continue;
    }
    ps.push_back(make_problem(f, t));
  }
  return ps;
}

cnc::host_matrix view(const problem& p, cnc::format f) {
  cnc::host_matrix h;
  h.fmt = f;
  h.csr = p.csr;
  h.bcrs = f == cnc::format::bcrs2 ? &p.b2 : f == cnc::format::bcrs4 ? &p.b4 : nullptr;
  h.sell = f == cnc::format::sell ? &p.sell : nullptr;
  return h;
}

std::vector<double> inv_diag(const cnc::csr_matrix& a, std::int32_t np) {
  std::vector<double> d(np, 1.0);
  for (std::int32_t i = 0; i < a.n; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      if (a.col[k] == i && a.val[k] != 0) d[i] = 1.0 / a.val[k];
  return d;
}

std::vector<double> random_vec(std::size_t n, std::uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  std::vector<double> v(n);
  for (double& x : v) x = 2 * ts_rng_uniform(&r) - 1;
  return v;
}

// ---- apply(): SpMV of every format against the host ------------------------------------------
void test_spmv(void**) {
  const cnc::format fmts[] = {cnc::format::csr, cnc::format::bcrs2, cnc::format::bcrs4,
                              cnc::format::sell};
  int checked = 0;
  for (const problem& pb : problems()) {
    const cnc::csr_matrix& a = pb.csr;
    const std::int32_t n = a.n;
    for (cnc::format f : fmts)
      for (int k : {1, 3})
        for (precision p : k_precs) {
          const cnc::host_matrix h = view(pb, f);
          auto sys = g_b->create_system(h, inv_diag(a, h.n_padded()), p, k);
          const std::vector<double> x = random_vec(static_cast<std::size_t>(n) * k, 7 + k);
          std::vector<double> y(x.size(), NAN);
          sys->apply(x.data(), y.data());
          const double tol = p == precision::f32 ? 2e-5 : 1e-13;
          double worst = 0;
          for (int j = 0; j < k; ++j)
            for (std::int32_t i = 0; i < n; ++i) {
              long double ref = 0, mag = 0;
              for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
                const long double t =
                    (long double)cnc_test::mat_round(p, a.val[e]) *
                    cnc_test::vec_round(p, x[static_cast<std::size_t>(j) * n + a.col[e]]);
                ref += t;
                mag += std::fabs(t);
              }
              const double err = std::fabs((double)(y[static_cast<std::size_t>(j) * n + i] - ref)) /
                                 (double)(mag + 1e-300);
              worst = std::max(worst, std::isfinite(err) ? err : 1e300);
            }
          if (worst > tol)
            fail_msg("SpMV %s %s k=%d %s: worst relative error %.3g > %.1g", pb.name.c_str(),
                     cnc::format_name(f), k, pname(p), worst, tol);
          ++checked;
        }
  }
  std::printf("SpMV: %d matrix/format/k/precision combinations match the host\n", checked);
}

bool close(double a, double b, double tol) {
  return std::fabs(a - b) <= tol * std::max(std::fabs(a), std::fabs(b)) + 1e-300;
}

void compare_state(const cnc::rhs_state* dev, const cnc_test::host_pcg& h, double tol,
                   const char* when, const char* what) {
  for (int j = 0; j < h.k; ++j) {
    const cnc::rhs_state &a = dev[j], &b = h.st[j];
    if (a.status != b.status || a.iters != b.iters)
      fail_msg("%s after %s, system %d: status %d iters %d, host status %d iters %d", what, when, j,
               a.status, a.iters, b.status, b.iters);
    if (!close(a.rz, b.rz, tol) || !close(a.rr, b.rr, tol) || !close(a.pq, b.pq, tol) ||
        a.thr2 != b.thr2)
      fail_msg("%s after %s, system %d: rz %.17g/%.17g rr %.17g/%.17g pq %.17g/%.17g", what, when,
               j, a.rz, b.rz, a.rr, b.rr, a.pq, b.pq);
  }
}

// Steps one by one with a state read after each, against the host, then x.
void run_sequence(const problem& pb, cnc::format f, precision p, int k, int steps, double tol) {
  const cnc::host_matrix h = view(pb, f);
  const std::vector<double> d = inv_diag(pb.csr, h.n_padded());
  auto sys = g_b->create_system(h, d, p, k);
  cnc_test::host_pcg ref(pb.csr, d, p, k);
  const std::size_t nk = static_cast<std::size_t>(pb.csr.n) * k;
  const std::vector<double> b = random_vec(nk, 11), x0 = random_vec(nk, 12);
  std::vector<double> thr2(k, 0.0);
  sys->set_vectors(b.data(), x0.data());
  sys->init(thr2.data());
  ref.set_vectors(b.data(), x0.data());
  ref.init(thr2.data());
  std::vector<cnc::rhs_state> st(k);
  char what[160];
  std::snprintf(what, sizeof what, "%s %s %s k=%d", pb.name.c_str(), cnc::format_name(f), pname(p),
                k);
  sys->read_state(st.data());
  compare_state(st.data(), ref, tol, "init", what);
  for (int it = 0; it < steps; ++it) {
    sys->spmv_dot();
    ref.spmv_dot();
    sys->read_state(st.data());
    compare_state(st.data(), ref, tol, "spmv_dot", what);
    sys->update_xr();
    ref.update_xr();
    sys->read_state(st.data());
    compare_state(st.data(), ref, tol, "update_xr", what);
    for (int j = 0; j < k; ++j)
      if (!close(st[j].rz_new, ref.st[j].rz_new, tol))
        fail_msg("%s: rz_new %.17g vs host %.17g", what, st[j].rz_new, ref.st[j].rz_new);
    sys->update_p();
    ref.update_p();
    sys->read_state(st.data());
    compare_state(st.data(), ref, tol, "update_p", what);
  }
  std::vector<double> x(nk);
  sys->get_x(x.data());
  const double diff = ts_rel_diff(nk, x.data(), ref.x.data());
  if (!(diff <= tol * 10)) fail_msg("%s: x differs from the host by %.3g", what, diff);
}

void test_steps_vs_host(void**) {
  int runs = 0;
  for (const problem& pb : problems()) {
    if (pb.csr.n > 5000) continue;  // the host reference is O(steps * nnz) per read
    for (cnc::format f :
         {cnc::format::csr, cnc::format::bcrs2, cnc::format::bcrs4, cnc::format::sell})
      for (int k : {1, 3})
        for (precision p : k_precs) {
          run_sequence(pb, f, p, k, 6, p == precision::f32 ? 2e-3 : 1e-9);
          ++runs;
        }
  }
  std::printf("steps: %d sequences match the host contract\n", runs);
}

// ---- iterate(n) == n steps, bit for bit; and run to run -------------------------------------
void test_iterate_bitwise(void**) {
  const problem& pb = problems()[1];
  for (precision p : k_precs) {
    const cnc::host_matrix h = view(pb, cnc::format::csr);
    const std::vector<double> d = inv_diag(pb.csr, h.n_padded());
    const std::size_t nk = static_cast<std::size_t>(pb.csr.n) * 2;
    const std::vector<double> b = random_vec(nk, 3), x0(nk, 0.0);
    const double thr2[2] = {0, 0};
    std::vector<double> xs[3];
    cnc::rhs_state ss[3][2];
    for (int v = 0; v < 3; ++v) {
      auto sys = g_b->create_system(h, d, p, 2);
      sys->set_vectors(b.data(), x0.data());
      sys->init(thr2);
      if (v == 1) {
        for (int c = 0; c < 9; ++c) {
          sys->spmv_dot();
          sys->update_xr();
          sys->update_p();
        }
      } else {
        sys->iterate(4);
        sys->iterate(5);
      }
      xs[v].resize(nk);
      sys->get_x(xs[v].data());
      sys->read_state(ss[v]);
    }
    for (int v = 1; v < 3; ++v) {
      assert_memory_equal(xs[0].data(), xs[v].data(), nk * sizeof(double));
      assert_memory_equal(ss[0], ss[v], sizeof ss[0]);
    }
    assert_int_equal(ss[0][0].iters, 9);
  }
}

// ---- Stopped systems stay untouched; statuses of the contract ------------------------------
void test_statuses(void**) {
  const problem& pb = problems()[0];
  const std::int32_t n = pb.csr.n;
  const cnc::host_matrix h = view(pb, cnc::format::csr);
  const std::vector<double> d = inv_diag(pb.csr, n);
  for (precision p : k_precs) {
    // system 0 runs, 1 has b = 0 (converged at init), 2 has a NaN (not finite at init)
    std::vector<double> b = random_vec(static_cast<std::size_t>(n) * 3, 5);
    std::fill(b.begin() + n, b.begin() + 2 * n, 0.0);
    b[2 * n + 7] = NAN;
    std::vector<double> x0 = random_vec(static_cast<std::size_t>(n) * 3, 6);
    std::fill(x0.begin() + n, x0.begin() + 2 * n, 0.0);
    const double thr2[3] = {1e-30, 0, 0};
    auto sys = g_b->create_system(h, d, p, 3);
    sys->set_vectors(b.data(), x0.data());
    sys->init(thr2);
    cnc::rhs_state st[3];
    sys->read_state(st);
    assert_int_equal(st[0].status, cnc::running);
    assert_int_equal(st[1].status, cnc::converged);
    assert_int_equal(st[2].status, cnc::not_finite);
    const cnc::rhs_state s1 = st[1], s2 = st[2];
    sys->iterate(5);
    sys->read_state(st);
    assert_int_equal(st[0].iters, 5);
    assert_memory_equal(&st[1], &s1, sizeof s1);
    assert_memory_equal(&st[2], &s2, sizeof s2);
    std::vector<double> x(x0.size());
    sys->get_x(x.data());
    for (std::size_t i = n; i < x.size(); ++i)
      if (x[i] != cnc_test::vec_round(p, x0[i]))
        fail_msg("%s: stopped system's x changed at %zu", pname(p), i);

    // Negative definite matrix: with d = 1/diag < 0 the preconditioner is indefinite at init;
    // with d = 1 the first update_xr sees pq < 0.
    cnc::csr_matrix neg = pb.csr;
    for (double& v : neg.val) v = -v;
    cnc::host_matrix hn;
    hn.csr = neg;
    auto s_prec = g_b->create_system(hn, inv_diag(neg, n), p, 1);
    s_prec->set_vectors(b.data(), x0.data());
    s_prec->init(thr2);
    s_prec->read_state(st);
    assert_int_equal(st[0].status, cnc::indefinite_precond);
    auto s_mat = g_b->create_system(hn, std::vector<double>(n, 1.0), p, 1);
    s_mat->set_vectors(b.data(), x0.data());
    s_mat->init(thr2);
    s_mat->iterate(3);
    s_mat->read_state(st);
    assert_int_equal(st[0].status, cnc::indefinite_matrix);
    assert_int_equal(st[0].iters, 0);
    assert_true(st[0].pq < 0);
  }
}

// ---- A full solve: converges, and x solves the system (residual computed here) -------------
void test_full_solve(void**) {
  for (const problem& pb : problems()) {
    if (pb.name != "poisson 11^3" && pb.name != "494_bus.mtx") continue;
    const std::int32_t n = pb.csr.n;
    for (cnc::format f : {cnc::format::csr, cnc::format::bcrs4, cnc::format::sell}) {
      const cnc::host_matrix h = view(pb, f);
      auto sys = g_b->create_system(h, inv_diag(pb.csr, h.n_padded()), precision::f64, 1);
      const std::vector<double> b = random_vec(n, 9), x0(n, 0.0);
      const double thr2 = 1e-24 * ts_norm2(n, b.data()) * ts_norm2(n, b.data());
      sys->set_vectors(b.data(), x0.data());
      sys->init(&thr2);
      cnc::rhs_state st{};
      const int interval = g_b->default_check_interval();
      for (int it = 0; it < 20 * n; it += interval) {
        sys->iterate(interval);
        sys->read_state(&st);
        if (st.status != cnc::running) break;
      }
      assert_int_equal(st.status, cnc::converged);
      std::vector<double> x(n), ax(n);
      sys->get_x(x.data());
      ts_csr t{n, pb.csr.nnz(), const_cast<std::int64_t*>(pb.csr.row_ptr.data()),
               const_cast<std::int32_t*>(pb.csr.col.data()),
               const_cast<double*>(pb.csr.val.data())};
      const double res = ts_rel_residual(&t, x.data(), b.data());
      if (!(res < 1e-8))
        fail_msg("%s %s: residual %.3g after %d iterations", pb.name.c_str(), cnc::format_name(f),
                 res, st.iters);
    }
  }
}

// ---- Two threads, each with its own backend and system, at once: same bits as one alone -------
void test_threads(void**) {
  const problem& pb = problems()[1];
  const std::int32_t n = pb.csr.n;
  const std::vector<double> b = random_vec(n, 21), x0(n, 0.0);
  auto solve = [&](precision p, int k_rhs, std::vector<double>& x) {
    std::string why;
    auto be = cnc::make_opencl_backend({}, why);  // own backend: shares the cached context
    if (!be) return;
    const cnc::host_matrix h = view(pb, cnc::format::csr);
    auto sys = be->create_system(h, inv_diag(pb.csr, n), p, k_rhs);
    std::vector<double> bk, xk;
    for (int j = 0; j < k_rhs; ++j) {
      bk.insert(bk.end(), b.begin(), b.end());
      xk.insert(xk.end(), x0.begin(), x0.end());
    }
    const std::vector<double> thr2(k_rhs, 0.0);
    sys->set_vectors(bk.data(), xk.data());
    sys->init(thr2.data());
    sys->iterate(12);
    x.resize(xk.size());
    sys->get_x(x.data());
  };
  std::vector<double> alone[2], together[2];
  solve(precision::f64, 1, alone[0]);
  solve(precision::mixed, 2, alone[1]);
  std::thread t0([&] { solve(precision::f64, 1, together[0]); });
  std::thread t1([&] { solve(precision::mixed, 2, together[1]); });
  t0.join();
  t1.join();
  for (int v = 0; v < 2; ++v) {
    assert_int_equal(alone[v].size(), together[v].size());
    assert_memory_equal(alone[v].data(), together[v].data(), alone[v].size() * sizeof(double));
  }
}

// ---- Device without fp64 (simulated) --------------------------------------------------------
void test_no_fp64(void**) {
  setenv("CNC_OPENCL_DISABLE_FP64", "1", 1);
  std::string why;
  auto b = cnc::make_opencl_backend({}, why);
  unsetenv("CNC_OPENCL_DISABLE_FP64");
  assert_non_null(b.get());
  assert_false(b->has_fp64());
  const problem& pb = problems()[0];
  const cnc::host_matrix h = view(pb, cnc::format::csr);
  for (precision p : {precision::f64, precision::mixed}) {
    int status = 0;
    try {
      b->create_system(h, inv_diag(pb.csr, pb.csr.n), p, 1);
    } catch (const cnc::error& e) {
      status = e.status();
      std::printf("no fp64, %s: %s\n", pname(p), e.what());
    }
    assert_int_equal(status, CNC_ERR_NO_FP64);
  }
  // Single precision still runs, with float reductions: the steps follow the host loosely.
  std::swap(g_b, b);
  run_sequence(pb, cnc::format::csr, precision::f32, 3, 4, 2e-3);
  run_sequence(pb, cnc::format::bcrs2, precision::f32, 1, 4, 2e-3);
  run_sequence(pb, cnc::format::sell, precision::f32, 3, 4, 2e-3);
  std::swap(g_b, b);
}

// ---- Device selection ------------------------------------------------------------------------
void expect_absent(const char* what) {
  std::string why;
  auto b = cnc::make_opencl_backend({}, why);
  assert_null(b.get());
  std::printf("%s -> %s\n", what, why.c_str());
  assert_true(why.find(what) != std::string::npos);
}

void test_selection(void**) {
  setenv("CNC_OPENCL_DEVICE", "no-such-device-anywhere", 1);
  expect_absent("CNC_OPENCL_DEVICE=no-such-device-anywhere");
  setenv("CNC_OPENCL_DEVICE", "0", 1);
  std::string why;
  auto b = cnc::make_opencl_backend({}, why);
  assert_non_null(b.get());
  unsetenv("CNC_OPENCL_DEVICE");
  setenv("CNC_OPENCL_PLATFORM", "no-such-platform", 1);
  expect_absent("CNC_OPENCL_PLATFORM=no-such-platform");
  unsetenv("CNC_OPENCL_PLATFORM");
  cnc::backend_options o;
  o.device_index = 999;
  auto none = cnc::make_opencl_backend(o, why);
  assert_null(none.get());
  assert_true(why.find("index 999") != std::string::npos);
  // The chosen device is reported and its name found again by substring.
  const std::string name = g_b->device_name();
  assert_false(name.empty());
  setenv("CNC_OPENCL_DEVICE", name.substr(0, std::min<std::size_t>(name.size(), 6)).c_str(), 1);
  auto again = cnc::make_opencl_backend({}, why);
  unsetenv("CNC_OPENCL_DEVICE");
  assert_non_null(again.get());
  assert_string_equal(again->device_name().c_str(), name.c_str());
  assert_int_equal(cnc::opencl_backend_is_gpu(*g_b) ? 1 : 0,
                   g_b->default_check_interval() > 4 ? 1 : 0);
  // SELL enters the automatic format choice on GPUs only.
  assert_int_equal(cnc::opencl_backend_is_gpu(*g_b) ? 1 : 0, g_b->prefers_sliced() ? 1 : 0);
  std::printf("device: %s (%s), check interval %d\n", name.c_str(),
              cnc::opencl_backend_is_gpu(*g_b) ? "GPU" : "not a GPU",
              g_b->default_check_interval());
}

// ---- Build failure and error mapping ---------------------------------------------------------
void test_errors(void**) {
  std::string why;
  const cnc::ocl::api* cl = cnc::ocl::load_api(why);
  assert_non_null(cl);
  const auto devs = cnc::ocl::list_devices(*cl, why);
  assert_false(devs.empty());
  int status = 0;
  std::string msg;
  try {
    cnc::ocl::get_program(*cl, devs[0], "-DNRHS=1 -DWG=1 -DFMT=1 -DCSR_W=1");  // types missing
  } catch (const cnc::error& e) {
    status = e.status();
    msg = e.what();
  }
  assert_int_equal(status, CNC_ERR_DEVICE);
  assert_true(msg.find("build log") != std::string::npos);
  assert_true(msg.find("CL_BUILD_PROGRAM_FAILURE") != std::string::npos);
  std::printf("build failure message starts: %.160s...\n", msg.c_str());

  struct {
    cl_int code;
    int status;
  } cases[] = {{CL_OUT_OF_RESOURCES, CNC_ERR_OUT_OF_MEMORY},
               {CL_MEM_OBJECT_ALLOCATION_FAILURE, CNC_ERR_OUT_OF_MEMORY},
               {CL_INVALID_KERNEL_ARGS, CNC_ERR_DEVICE}};
  for (const auto& c : cases) {
    status = 0;
    try {
      cnc::ocl::check(c.code, "clSomething");
    } catch (const cnc::error& e) {
      status = e.status();
      msg = e.what();
    }
    assert_int_equal(status, c.status);
    assert_true(msg.find(cnc::ocl::error_name(c.code)) != std::string::npos);
  }
  cnc::ocl::check(CL_SUCCESS, "nothing");  // no throw
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--expect-absent") == 0) {
    std::string why;
    auto b = cnc::make_opencl_backend({}, why);
    std::printf("factory: %s; reason: %s\n", b ? "a backend" : "nullptr", why.c_str());
    return !b && why.find(argv[2]) != std::string::npos ? 0 : 1;
  }
  std::string why;
  g_b = cnc::make_opencl_backend({}, why);
  if (!g_b) {
    std::printf("skipped: no OpenCL device here (%s)\n", why.c_str());
    return TS_SKIP;
  }
  std::printf("OpenCL device: %s\n", g_b->device_name().c_str());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spmv),
      cmocka_unit_test(test_steps_vs_host),
      cmocka_unit_test(test_iterate_bitwise),
      cmocka_unit_test(test_statuses),
      cmocka_unit_test(test_full_solve),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_no_fp64),
      cmocka_unit_test(test_selection),
      cmocka_unit_test(test_errors),
  };
  if (const char* f = std::getenv("CNC_TEST_FILTER")) cmocka_set_test_filter(f);  // debugging
  const int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  g_b.reset();
  return rc;
}
