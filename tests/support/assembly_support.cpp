// Helpers shared by the test_assembly_* suites (see assembly_support.hpp).
#include <setjmp.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>  // before cmocka.h, whose fail() macro breaks std::ios
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "assembly_support.hpp"
#include "cnc.h"
#include "matrix/matrix.hpp"
#include "test_support.h"

// Random matrix entries, each split into 1..4 parts (duplicates) with non-dyadic values, so that
// summation order matters in plain floating point.
std::vector<triplet> random_parts(std::int32_t n, int per_row, std::uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  std::vector<triplet> t;
  for (std::int32_t i = 0; i < n; ++i)
    for (int k = 0; k < per_row; ++k) {
      std::int32_t j = std::int32_t(ts_rng_below(&r, std::uint32_t(n)));
      int parts = 1 + int(ts_rng_below(&r, 4));
      for (int p = 0; p < parts; ++p) t.push_back({i, j, (ts_rng_uniform(&r) - 0.5) * 1e3 / 3.0});
    }
  return t;
}

void shuffle(std::vector<triplet>& t, std::uint64_t seed) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  for (std::size_t k = t.size(); k > 1; --k)
    std::swap(t[k - 1], t[ts_rng_below(&r, std::uint32_t(k))]);
}

void expect_same_csr(const cnc::csr_matrix& a, const cnc::csr_matrix& b, const char* what) {
  if (a.n != b.n || a.row_ptr != b.row_ptr || a.col != b.col)
    fail_msg("%s: structures differ (n %d/%d, nnz %lld/%lld)", what, a.n, b.n, (long long)a.nnz(),
             (long long)b.nnz());
  for (std::size_t k = 0; k < a.val.size(); ++k)
    if (std::memcmp(&a.val[k], &b.val[k], sizeof(double)) != 0)
      fail_msg("%s: value %zu differs: %.17g vs %.17g", what, k, a.val[k], b.val[k]);
}

// The test's own CSR of the same triplets (sorted, duplicates summed), as a cnc::csr_matrix.
cnc::csr_matrix reference_csr(std::int32_t n, const std::vector<triplet>& t) {
  std::vector<std::int32_t> ri, ci;
  std::vector<double> vi;
  for (const triplet& e : t) ri.push_back(e.i), ci.push_back(e.j), vi.push_back(e.v);
  ts_csr r = ts_csr_from_coo(n, std::int64_t(t.size()), ri.data(), ci.data(), vi.data());
  cnc::csr_matrix m;
  m.n = n;
  m.row_ptr.assign(r.row_ptr, r.row_ptr + n + 1);
  m.col.assign(r.col, r.col + r.nnz);
  m.val.assign(r.val, r.val + r.nnz);
  ts_csr_free(&r);
  return m;
}

// Sets CNC_NUM_THREADS (host stages read it on every call).
void set_threads(int t) {
  char v[16];
  std::snprintf(v, sizeof v, "%d", t);
  setenv("CNC_NUM_THREADS", v, 1);
}

// A new current context in state SYSTEM for n variables: CPU backend with `threads` threads, CSR,
// threshold 1e-10 (so that x is reproducible bit for bit).
CNCcontext new_cpu_csr_system(std::int32_t n, int threads) {
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_VARIABLES, n), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_NB_THREADS, threads), CNC_OK);
  assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, CNC_FORMAT_CSR), CNC_OK);
  assert_int_equal(cncSolverParameterd(CNC_THRESHOLD, 1e-10), CNC_OK);
  assert_int_equal(cncBegin(CNC_SYSTEM), CNC_OK);
  return c;
}

// Ends the matrix and the system of context c (current), solves, reads x and deletes c.
void solve_read_delete(CNCcontext c, std::int32_t n, std::vector<double>& x) {
  assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
  assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
  assert_int_equal(cncSolve(), CNC_OK);
  x.resize(std::size_t(n));
  for (std::int32_t i = 0; i < n; ++i) assert_int_equal(cncGetVariable(i, &x[i]), CNC_OK);
  cncDeleteContext(c);
}
