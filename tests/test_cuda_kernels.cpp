// CUDA backend kernels against simple host references (cmocka).
//
// Every kernel is reached through the device_system: apply() is the SpMV (CSR, BCRS 2x2, 4x4,
// every sub-warp width, 1 to 11 right-hand sides, three precisions), and each PCG step is checked
// on its own: before a step the test reads the device's vectors back (system_probe) and computes
// what backend.hpp's contract says the step must produce, in double on the host. Matrices are
// random SPD ones and real ones from the SuiteSparse test set (CNC_MATRIX_DIR, default
// /work/shared/data/matrices; skipped, saying so, when absent). Without a usable CUDA device the
// whole program exits 77 after printing why.
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

std::unique_ptr<backend> g_backend;

// ---- matrices
// ------------------------------------------------------------------------------------

struct coo {
  int n = 0;
  std::map<std::pair<int, int>, double> e;
};

csr_matrix to_csr(const coo& c) {
  csr_matrix m;
  m.n = c.n;
  m.row_ptr.assign(c.n + 1, 0);
  for (const auto& [ij, v] : c.e) {
    m.row_ptr[ij.first + 1]++;
    m.col.push_back(ij.second);
    m.val.push_back(v);
  }
  for (int i = 0; i < c.n; ++i) m.row_ptr[i + 1] += m.row_ptr[i];
  return m;  // std::map iterates rows then columns in order: already sorted CSR
}

// Random symmetric, strictly diagonally dominant (hence SPD) matrix with irregular rows.
csr_matrix random_spd(int n, int max_off, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> cnt(0, max_off), col(0, n - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  coo c;
  c.n = n;
  std::vector<double> rowsum(n, 0.0);
  for (int i = 0; i < n; ++i) {
    const int m = cnt(rng);
    for (int t = 0; t < m; ++t) {
      const int j = col(rng);
      if (j == i) continue;
      const double v = val(rng);
      c.e[{i, j}] += v;
      c.e[{j, i}] += v;
    }
  }
  for (const auto& [ij, v] : c.e) rowsum[ij.first] += std::fabs(v);
  for (int i = 0; i < n; ++i) c.e[{i, i}] = rowsum[i] + 0.5 + 0.5 * val(rng);
  return to_csr(c);
}

// Matrix Market coordinate real/integer (general or symmetric); empty matrix on failure.
csr_matrix read_mtx(const std::string& path) {
  std::ifstream f(path);
  csr_matrix none;
  if (!f) return none;
  std::string line;
  std::getline(f, line);
  if (line.find("coordinate") == std::string::npos || line.find("complex") != std::string::npos ||
      line.find("pattern") != std::string::npos)
    return none;
  const bool sym = line.find("symmetric") != std::string::npos;
  while (std::getline(f, line) && (line.empty() || line[0] == '%')) {
  }
  std::istringstream hdr(line);
  long rows = 0, cols = 0, nnz = 0;
  hdr >> rows >> cols >> nnz;
  if (rows != cols || rows <= 0) return none;
  coo c;
  c.n = static_cast<int>(rows);
  for (long t = 0; t < nnz; ++t) {
    long i = 0, j = 0;
    double v = 0;
    if (!(f >> i >> j >> v)) return none;
    c.e[{int(i - 1), int(j - 1)}] += v;
    if (sym && i != j) c.e[{int(j - 1), int(i - 1)}] += v;
  }
  for (int i = 0; i < c.n; ++i) c.e.try_emplace({i, i}, 0.0);  // explicit (maybe zero) diagonal
  return to_csr(c);
}

// CSR -> BCRS with identity padding rows (the layout matrix.hpp describes).
bcrs_matrix to_bcrs(const csr_matrix& a, int b) {
  bcrs_matrix m;
  m.b = b;
  m.n = a.n;
  m.n_block_rows = (a.n + b - 1) / b;
  m.row_ptr.push_back(0);
  for (int br = 0; br < m.n_block_rows; ++br) {
    std::map<int, std::vector<double>> blocks;
    for (int rr = 0; rr < b; ++rr) {
      const int i = br * b + rr;
      if (i >= a.n) {
        auto& blk = blocks[br];
        blk.resize(b * b, 0.0);
        blk[rr * b + rr] = 1.0;
        continue;
      }
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
        auto& blk = blocks[a.col[e] / b];
        blk.resize(b * b, 0.0);
        blk[rr * b + a.col[e] % b] += a.val[e];
      }
    }
    for (auto& [bc, blk] : blocks) {
      m.col.push_back(bc);
      m.val.insert(m.val.end(), blk.begin(), blk.end());
    }
    m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
  }
  return m;
}

// A matrix in one format, the way a backend receives it, with its dense-row view for references.
struct test_matrix {
  csr_matrix csr;
  bcrs_matrix bcrs;
  sell_matrix sell;
  host_matrix hm;
  std::vector<double> d;  // inverse diagonal, n_padded
  int np = 0;
  // Reference rows of the padded matrix (CSR of the matrix actually stored).
  csr_matrix ref;
};

std::unique_ptr<test_matrix> make_test_matrix(const csr_matrix& a, format f) {
  auto t = std::make_unique<test_matrix>();
  t->csr = a;
  t->hm.fmt = f;
  t->hm.csr = t->csr;
  if (f == format::csr) {
    t->ref = a;
  } else if (f == format::sell) {
    // The library's conversion (checked against CSR in test_assembly); the reference rows are
    // read back from the slices, padding entries included.
    t->sell = csr_to_sell(a);
    t->hm.sell = &t->sell;
    const sell_matrix& m = t->sell;
    t->ref.n = m.n_padded();
    t->ref.row_ptr.assign(t->ref.n + 1, 0);
    for (int i = 0; i < t->ref.n; ++i) {
      const int s = i / sell_slice, l = i % sell_slice;
      for (std::int64_t e = m.slice_ptr[s] + l; e < m.slice_ptr[s + 1]; e += sell_slice) {
        t->ref.col.push_back(m.col[e]);
        t->ref.val.push_back(m.val[e]);
      }
      t->ref.row_ptr[i + 1] = static_cast<std::int64_t>(t->ref.col.size());
    }
  } else {
    t->bcrs = to_bcrs(a, block_size(f));
    t->hm.bcrs = &t->bcrs;
    // Expand the blocks back to CSR over the padded rows (explicit zeros kept: harmless).
    const bcrs_matrix& m = t->bcrs;
    const int b = m.b;
    t->ref.n = m.n_padded();
    t->ref.row_ptr.assign(t->ref.n + 1, 0);
    for (int br = 0; br < m.n_block_rows; ++br)
      for (int rr = 0; rr < b; ++rr) {
        const int i = br * b + rr;
        for (std::int64_t s = m.row_ptr[br]; s < m.row_ptr[br + 1]; ++s)
          for (int cc = 0; cc < b; ++cc) {
            t->ref.col.push_back(m.col[s] * b + cc);
            t->ref.val.push_back(m.val[s * b * b + rr * b + cc]);
          }
        t->ref.row_ptr[i + 1] = static_cast<std::int64_t>(t->ref.col.size());
      }
  }
  t->np = t->hm.n_padded();
  t->d.assign(t->np, 1.0);
  for (int i = 0; i < t->ref.n; ++i)
    for (std::int64_t e = t->ref.row_ptr[i]; e < t->ref.row_ptr[i + 1]; ++e)
      if (t->ref.col[e] == i && t->ref.val[e] != 0.0) t->d[i] = 1.0 / t->ref.val[e];
  return t;
}

// ---- precision helpers
// ---------------------------------------------------------------------------

using cnc_test::mat_round;
using cnc_test::vec_round;
double vec_tol(precision p) { return p == precision::f32 ? 2e-5 : 1e-12; }

// y = A x over the padded rows, column-major with `ld` rows per system, in double.
void ref_spmv(const csr_matrix& a, precision p, int k, const std::vector<double>& x, int ld,
              std::vector<double>& y) {
  y.assign(static_cast<std::size_t>(ld) * k, 0.0);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < a.n; ++i) {
      double s = 0.0;
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
        s += mat_round(p, a.val[e]) * x[std::size_t(j) * ld + a.col[e]];
      y[std::size_t(j) * ld + i] = s;
    }
}

// ‖a - b‖ / max(‖b‖, tiny) over rows [0, rows) of system j (column-major, ld rows).
double rel_err(const std::vector<double>& a, const std::vector<double>& b, int ld, int rows,
               int j) {
  double num = 0.0, den = 0.0;
  for (int i = 0; i < rows; ++i) {
    const double u = a[std::size_t(j) * ld + i], v = b[std::size_t(j) * ld + i];
    if (!std::isfinite(u)) return INFINITY;
    num += (u - v) * (u - v);
    den += v * v;
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

std::vector<double> random_vec(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

void set_width(int w) {
  if (w)
    setenv("CNC_CUDA_SPMV_WIDTH", std::to_string(w).c_str(), 1);
  else
    unsetenv("CNC_CUDA_SPMV_WIDTH");
}

std::vector<int> widths(format f) {
  switch (f) {
    case format::csr:
      return {0, 2, 4, 8, 16, 32};
    case format::bcrs2:
      return {0, 4, 8, 16, 32};
    case format::bcrs4:
      return {0, 16, 32};
    case format::sell:
      return {0};
  }
  return {0};
}

const format all_formats[] = {format::csr, format::bcrs2, format::bcrs4, format::sell};
const precision all_precisions[] = {precision::f64, precision::f32, precision::mixed};
const char* pname(precision p) {
  return p == precision::f64 ? "double" : p == precision::f32 ? "single" : "mixed";
}

// ---- SpMV
// ----------------------------------------------------------------------------------------

// apply() against the host product, for every width, k and precision. Returns checks done.
int check_spmv(const csr_matrix& a, const char* label) {
  int checks = 0;
  for (format f : all_formats) {
    auto t = make_test_matrix(a, f);
    for (precision p : all_precisions)
      for (int k : {1, 3, 8, 11}) {
        // Host vectors have n real rows; the reference works on the padded rows with zeros.
        std::vector<double> x = random_vec(std::size_t(a.n) * k, 7u * k + 1u);
        std::vector<double> xp(std::size_t(t->np) * k, 0.0);
        for (int j = 0; j < k; ++j)
          for (int i = 0; i < a.n; ++i)
            xp[std::size_t(j) * t->np + i] = vec_round(p, x[std::size_t(j) * a.n + i]);
        std::vector<double> yref;
        ref_spmv(t->ref, p, k, xp, t->np, yref);
        for (int w : widths(f)) {
          set_width(w);
          auto sys = g_backend->create_system(t->hm, t->d, p, k);
          set_width(0);
          std::vector<double> y(std::size_t(a.n) * k, NAN);
          sys->apply(x.data(), y.data());
          std::vector<double> yr(std::size_t(a.n) * k);
          for (int j = 0; j < k; ++j)
            for (int i = 0; i < a.n; ++i)
              yr[std::size_t(j) * a.n + i] = yref[std::size_t(j) * t->np + i];
          for (int j = 0; j < k; ++j) {
            const double err = rel_err(y, yr, a.n, a.n, j);
            if (!(err <= vec_tol(p))) {
              auto* probe = dynamic_cast<cuda::system_probe*>(sys.get());
              fail_msg("%s %s %s k=%d system %d (%s): SpMV relative error %g", label,
                       format_name(f), pname(p), k, j, probe ? probe->config().c_str() : "?", err);
            }
            ++checks;
          }
        }
      }
  }
  return checks;
}

void test_spmv_random(void**) {
  int checks = 0;
  checks += check_spmv(random_spd(1, 0, 1), "n=1");
  checks += check_spmv(random_spd(37, 3, 2), "random n=37");
  checks += check_spmv(random_spd(1003, 20, 3), "random n=1003 long rows");
  checks += check_spmv(random_spd(5000, 4, 4), "random n=5000");
  std::printf("spmv random: %d comparisons\n", checks);
}

std::string matrix_dir() {
  const char* d = std::getenv("CNC_MATRIX_DIR");
#ifdef CNC_TEST_MATRIX_DIR
  return d && *d ? d : CNC_TEST_MATRIX_DIR;
#else
  return d && *d ? d : "../shared/data/matrices";
#endif
}

const char* real_matrices[] = {"lap3D_7pt_n20.mtx", "bcsstk13.mtx", "nos6.mtx", "494_bus.mtx",
                               "bcsstk11.mtx"};

void test_spmv_real(void**) {
  int found = 0, checks = 0;
  for (const char* name : real_matrices) {
    const csr_matrix a = read_mtx(matrix_dir() + "/" + name);
    if (a.n == 0) continue;
    ++found;
    checks += check_spmv(a, name);
  }
  if (!found) {
    std::printf("no matrix of the test set under %s: skipped\n", matrix_dir().c_str());
    skip();
  }
  std::printf("spmv real: %d matrices, %d comparisons\n", found, checks);
}

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
      std::vector<double> xr(before.x), rr_(before.r);
      double rz = 0, rr = 0;
      for (int i = 0; i < np; ++i) {
        const std::size_t o = std::size_t(j) * np + i;
        xr[o] = before.x[o] + alpha * before.p[o];
        rr_[o] = before.r[o] - alpha * before.q[o];
        rz += t->d[i] * h.r[o] * h.r[o];
        rr += h.r[o] * h.r[o];
      }
      expect_vec(h.x, xr, np, j, p, "x", ctx);
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
        continue;
      }
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

// SELL built on the device from the CSR (what the pipeline does, builds_on_device) against the
// host conversion handed over: the same layout, so the same SpMV products and iterations bit for
// bit, in every precision, for sizes that end mid-slice, one row, and rows much longer than the
// rest (wide slices).
void test_device_sell_matches_host(void**) {
  assert_true(g_backend->builds_on_device(format::sell));
  assert_false(g_backend->builds_on_device(format::csr));
  for (const csr_matrix& a : {random_spd(1, 0, 61), random_spd(45, 3, 62), random_spd(3001, 40, 63),
                              random_spd(70003, 6, 64)})
    for (precision p : all_precisions)
      for (int k : {1, 3}) {
        auto t = make_test_matrix(a, format::sell);
        host_matrix on_device = t->hm;
        on_device.sell = nullptr;
        assert_int_equal(on_device.n_padded(), t->hm.n_padded());
        std::vector<double> b = random_vec(std::size_t(a.n) * k, 7), x0(b.size(), 0.0);
        std::vector<double> thr2(k, 1e-40), xs[2], ys[2];
        std::vector<rhs_state> ss[2];
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
            std::memcmp(ss[0].data(), ss[1].data(), k * sizeof(rhs_state)) != 0)
          fail_msg("n=%d %s k=%d: device-built SELL differs from the host's", a.n, pname(p), k);
      }
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
  std::string why;
  backend_options o;
  g_backend = make_cuda_backend(o, why);
  if (!g_backend) {
    std::printf("CUDA backend unavailable here (%s): skipping\n", why.c_str());
    return 77;
  }
  std::printf("CUDA device: %s\n", g_backend->device_name().c_str());
  if (!g_backend->prefers_sliced()) {  // the automatic format choice relies on it
    std::printf("the CUDA backend must prefer sliced formats\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spmv_random),
      cmocka_unit_test(test_spmv_real),
      cmocka_unit_test(test_steps),
      cmocka_unit_test(test_graph_matches_steps),
      cmocka_unit_test(test_solve),
      cmocka_unit_test(test_status),
      cmocka_unit_test(test_device_sell_matches_host),
  };
  const int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  g_backend.reset();
  return rc;
}
