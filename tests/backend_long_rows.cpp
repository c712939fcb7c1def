// Long rows, part of the generic backend suite (test_backend.cpp): rows far longer than the
// average, cut into pieces by the backend, and empty rows, against the plain product; on the CPU
// backend, the same bits for any thread count.
#include <setjmp.h>

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend_harness.hpp"
#include "backends/backend.hpp"
#include "host_reference.hpp"

// After every C++ header: cmocka's macros clash with <ios>.
extern "C" {
#include <cmocka.h>
}

using namespace suite;

namespace {

// ---- long rows
// ----------------------------------------------------------------------------------
// Rows far longer than the average (hubs of 30 000 entries: many SpMV pieces, longer than any
// GPU block), rows of 150-600, and empty rows, through apply() against the plain product, with
// the backend's own long-row rule, with every row of more than 3 entries cut (CNC_LONG_ROW_MIN),
// with rows of more than 100 cut (runs of short rows longer than a GPU stream tile's window,
// ending at a long row), and with none cut: y equal within rounding each time, and bit for bit
// from run to run.
// ts_long_rows_spd(n, long_len, seed) with every 1001st row emptied.
ts_csr long_rows_with_empty(std::int32_t n, std::int32_t long_len, std::uint64_t seed) {
  ts_csr full = ts_long_rows_spd(n, long_len, seed);
  std::vector<std::int32_t> r, c;
  std::vector<double> v;
  for (std::int32_t i = 0; i < full.n; ++i) {
    if (i % 1001 == 5) continue;  // empty rows
    for (std::int64_t t = full.row_ptr[i]; t < full.row_ptr[i + 1]; ++t)
      r.push_back(i), c.push_back(full.col[t]), v.push_back(full.val[t]);
  }
  ts_csr a = ts_csr_from_coo(full.n, std::int64_t(r.size()), r.data(), c.data(), v.data());
  ts_csr_free(&full);
  return a;
}

}  // namespace

void test_long_rows(void**) {
  ts_csr a = long_rows_with_empty(40000, 30000, 41);
  const std::int32_t n = a.n;
  for (const char* rule : {"", "3", "100", "-1"}) {
    if (*rule)
      setenv("CNC_LONG_ROW_MIN", rule, 1);
    else
      unsetenv("CNC_LONG_ROW_MIN");
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::f32}) {
      if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
      for (int k : {1, 3}) {
        auto prep = prepare(a, cnc::format::csr);
        auto sys = g_backend->create_system(prep->hm, prep->d, p, k);
        if (std::string(rule) == "-1" && sys->long_rows() != 0)
          fail_msg("CNC_LONG_ROW_MIN=-1: %lld long rows", (long long)sys->long_rows());
        if (std::string(rule) == "3" &&
            (g_name == "cuda" || g_name == "opencl" || g_name == "cpu") && sys->long_rows() == 0)
          fail_msg("CNC_LONG_ROW_MIN=3 on %s: no long rows", g_name.c_str());
        std::vector<double> x = random_vec(std::size_t(n) * k, 43), y(x.size()), y2(x.size());
        sys->apply(x.data(), y.data());
        sys->apply(x.data(), y2.data());
        if (std::memcmp(y.data(), y2.data(), y.size() * sizeof(double)) != 0)
          fail_msg("rule '%s' %s k=%d: two products differ", rule, prec_name(p), k);
        for (int j = 0; j < k; ++j)
          for (std::int32_t i = 0; i < n; ++i) {
            double s = 0, m = 0;
            for (std::int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t) {
              const double v = cnc_test::mat_round(p, a.val[t]) *
                               cnc_test::vec_round(p, x[std::size_t(j) * n + a.col[t]]);
              s += v, m += std::fabs(v);
            }
            const double tol = p == cnc::precision::f32 ? 1e-6 : 1e-14;
            const double got = y[std::size_t(j) * n + i];
            if (!(std::fabs(got - s) <= tol * m * 8 + 1e-300))
              fail_msg("rule '%s' %s k=%d row %d (%lld entries) system %d: %.17g, reference %.17g",
                       rule, prec_name(p), k, i, (long long)(a.row_ptr[i + 1] - a.row_ptr[i]), j,
                       got, s);
          }
      }
    }
  }
  unsetenv("CNC_LONG_ROW_MIN");
  ts_csr_free(&a);
}

// The CPU backend's chunks and long-row pieces depend on the matrix only: the product, init, the
// steps and the vector surface's residual give the same bits on 1, 2 and 5 threads, for a
// matrix with one row of ~10^5 entries (its own rule cuts it) and empty rows, large enough for
// several threads to share it; the vector surface's spmv gives apply's bits.
// The CUDA kernels' cache hint for the matrix's loads (CNC_CUDA_STREAM_LOADS: 0 through __ldg,
// else streaming) changes how values and indices travel, never which: the products must be the
// same bits either way, for CSR with long rows in pieces and for SELL. (Other backends read no
// such hint: there the two products are simply the same kernel twice.)
void test_stream_loads_same_bits(void**) {
  ts_csr a = long_rows_with_empty(40000, 30000, 47);
  const std::int32_t n = a.n;
  setenv("CNC_LONG_ROW_MIN", "100", 1);
  for (cnc::format f : {cnc::format::csr, cnc::format::sell})
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::f32}) {
      if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
      for (int k : {1, 3}) {
        auto prep = prepare(a, f);
        const std::vector<double> x = random_vec(std::size_t(n) * k, 53);
        std::vector<double> y[2];
        for (int hint : {0, 1}) {
          setenv("CNC_CUDA_STREAM_LOADS", hint ? "1" : "0", 1);
          auto sys = g_backend->create_system(prep->hm, prep->d, p, k);
          y[hint].assign(x.size(), -1.0);
          sys->apply(x.data(), y[hint].data());
        }
        unsetenv("CNC_CUDA_STREAM_LOADS");
        if (std::memcmp(y[0].data(), y[1].data(), x.size() * sizeof(double)) != 0)
          fail_msg("%s %s k=%d: the product differs with CNC_CUDA_STREAM_LOADS=0 and =1",
                   cnc::format_name(f), prec_name(p), k);
      }
    }
  unsetenv("CNC_LONG_ROW_MIN");
  ts_csr_free(&a);
}

void test_long_rows_threads(void**) {
  if (g_name != "cpu") {
    skip();
    return;
  }
  ts_csr a = long_rows_with_empty(120000, 120000, 47);
  const std::int32_t n = a.n;
  for (const char* rule : {"", "3"}) {
    if (*rule)
      setenv("CNC_LONG_ROW_MIN", rule, 1);
    else
      unsetenv("CNC_LONG_ROW_MIN");
    for (cnc::precision p : {cnc::precision::f64, cnc::precision::f32, cnc::precision::mixed})
      for (int k : {1, 3}) {
        auto prep = prepare(a, cnc::format::csr);
        const std::size_t nk = std::size_t(n) * k;
        const std::vector<double> x = random_vec(nk, 53), b = random_vec(nk, 59);
        const std::vector<double> thr2(std::size_t(k), 0.0);
        std::vector<double> y0, x0, r0;
        std::vector<cnc::rhs_state> s0;
        for (int threads : {1, 2, 5}) {
          cnc::backend_options o;
          o.threads = threads;
          std::string why;
          auto be = cnc::make_cpu_backend(o, why);
          auto sys = be->create_system(prep->hm, prep->d, p, k);
          if (sys->long_rows() == 0) fail_msg("rule '%s': no long rows", rule);
          std::vector<double> y(nk), yb(nk), xs(nk), r(nk), ab(nk);
          std::vector<cnc::rhs_state> st(static_cast<std::size_t>(k));
          sys->apply(x.data(), y.data());
          sys->apply(b.data(), yb.data());
          sys->set_vectors(b.data(), x.data());
          sys->init(thr2.data());
          sys->iterate(4);
          sys->get_x(xs.data());
          sys->read_state(st.data());
          const int v = sys->add_vectors(2);
          sys->spmv(cnc::device_system::vec_b, v);
          sys->residual(cnc::device_system::vec_x, v + 1);
          sys->read(v, ab.data());
          sys->read(v + 1, r.data());
          if (std::memcmp(ab.data(), yb.data(), nk * sizeof(double)) != 0)
            fail_msg("rule '%s' %s k=%d: spmv differs from apply", rule, prec_name(p), k);
          if (threads == 1) {
            y0 = y, x0 = xs, r0 = r, s0 = st;
            continue;
          }
          if (std::memcmp(y.data(), y0.data(), nk * sizeof(double)) != 0 ||
              std::memcmp(xs.data(), x0.data(), nk * sizeof(double)) != 0 ||
              std::memcmp(r.data(), r0.data(), nk * sizeof(double)) != 0 ||
              std::memcmp(st.data(), s0.data(), std::size_t(k) * sizeof(cnc::rhs_state)) != 0)
            fail_msg("rule '%s' %s k=%d: %d threads differ from 1", rule, prec_name(p), k, threads);
        }
      }
  }
  unsetenv("CNC_LONG_ROW_MIN");
  ts_csr_free(&a);
}
