// Assembly and conversion, internal and public: the hash-assembled COO must give the same CSR
// (bit-identical values) for any insertion order of the same duplicated entries; the builder's
// locked-variable and least-squares algebra must match a reference computed here; CSR -> BCRS
// 2x2/4x4 must hold exactly the CSR entries (plus the unit padding) and convert back exactly; the
// automatic format choice must pick bcrs4 for dense 4x4 blocks and CSR for a scalar Laplacian,
// visible through the public API (CNC_FORMAT_USED, CNC_BLOCK_FILL_RATIO). The fingerprints that
// tell cncSolveCSR a matrix it already holds must not depend on the thread count and must change
// with any byte or the length.
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

#include "assembly/builder.hpp"
#include "assembly/hash_coo.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "conversion/matrix.hpp"
#include "host_reference.hpp"
#include "test_support.h"
#include "util/error.hpp"
#include "util/fingerprint.hpp"

namespace {

struct triplet {
  std::int32_t i, j;
  double v;
};

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

cnc::csr_matrix assemble(std::int32_t n, const std::vector<triplet>& t, std::int64_t hint) {
  cnc::hash_coo h;
  h.reset(n, hint);
  for (const triplet& e : t) h.add(e.i, e.j, e.v);
  return h.to_csr({}, n);
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

// ---- hash_coo
// ------------------------------------------------------------------------------------
void test_insertion_order_independent(void**) {
  const std::int32_t n = 700;
  std::vector<triplet> t = random_parts(n, 8, 1);
  cnc::csr_matrix first = assemble(n, t, std::int64_t(t.size()));
  cnc::csr_matrix ref = reference_csr(n, t);
  // Same structure as the reference, values equal up to rounding of the summation order.
  if (first.row_ptr != ref.row_ptr || first.col != ref.col)
    fail_msg("structure differs from reference");
  for (std::size_t k = 0; k < ref.val.size(); ++k)
    if (!(std::fabs(first.val[k] - ref.val[k]) <= 1e-12 * 1e3)) fail_msg("value %zu wrong", k);
  for (int round = 0; round < 6; ++round) {
    shuffle(t, 100 + round);
    // Hints from none (the table grows) to exact.
    std::int64_t hint = round % 3 == 0 ? 0 : round % 3 == 1 ? 16 : std::int64_t(t.size());
    cnc::csr_matrix m = assemble(n, t, hint);
    expect_same_csr(first, m, "shuffled insertion");
  }
  // Reversed order too.
  std::reverse(t.begin(), t.end());
  expect_same_csr(first, assemble(n, t, 0), "reversed insertion");
}

// CSR from the table in pieces of rows, with spilled rows and dropped rows across piece
// boundaries: the same bits for any thread count, the reference's structure.
void test_hash_coo_threads(void**) {
  const std::int32_t n = 30011;
  std::vector<triplet> t = random_parts(n, 4, 3);
  for (std::int32_t j = 0; j < 3000; ++j) t.push_back({20000, (j * 7) % n, 0.5});  // spills
  std::vector<std::int32_t> map(std::size_t(n), -1);
  std::int32_t kept = 0;
  for (std::int32_t i = 0; i < n; ++i)
    if (i % 5 != 2) map[std::size_t(i)] = kept++;
  cnc::hash_coo h;
  h.reset(n, 16);  // far too small: windows grow and rows spill
  for (const triplet& e : t) h.add(e.i, e.j, e.v);
  set_threads(1);
  const cnc::csr_matrix one = h.to_csr(map, kept), full1 = h.to_csr({}, n);
  set_threads(4);
  const cnc::csr_matrix four = h.to_csr(map, kept), full4 = h.to_csr({}, n);
  unsetenv("CNC_NUM_THREADS");
  expect_same_csr(one, four, "mapped to_csr, 1 vs 4 threads");
  expect_same_csr(full1, full4, "to_csr, 1 vs 4 threads");
  const cnc::csr_matrix ref = reference_csr(n, t);
  if (full1.row_ptr != ref.row_ptr || full1.col != ref.col) fail_msg("structure differs");
  for (std::size_t k = 0; k < ref.val.size(); ++k)
    if (!(std::fabs(full1.val[k] - ref.val[k]) <= 1e-9)) fail_msg("value %zu wrong", k);
}

void test_hash_coo_map_drops(void**) {
  const std::int32_t n = 50;
  std::vector<triplet> t = random_parts(n, 5, 2);
  std::vector<std::int32_t> map(n, -1);
  std::int32_t kept = 0;
  for (std::int32_t i = 0; i < n; ++i)
    if (i % 3 != 1) map[i] = kept++;
  cnc::hash_coo h;
  h.reset(n, 0);
  for (const triplet& e : t) h.add(e.i, e.j, e.v);
  cnc::csr_matrix m = h.to_csr(map, kept);
  std::vector<triplet> filtered;
  for (const triplet& e : t)
    if (map[e.i] >= 0 && map[e.j] >= 0) filtered.push_back({map[e.i], map[e.j], e.v});
  cnc::csr_matrix ref = reference_csr(kept, filtered);
  if (m.row_ptr != ref.row_ptr || m.col != ref.col) fail_msg("mapped structure differs");
  for (std::size_t k = 0; k < ref.val.size(); ++k)
    assert_true(std::fabs(m.val[k] - ref.val[k]) <= 1e-9);
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

// Through the public API: AddIJCoefficient in different orders, then solve: bit-identical x.
void api_solve_order(const std::vector<triplet>& t, std::int32_t n, std::vector<double>& x) {
  CNCcontext c = new_cpu_csr_system(n, 2);
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  for (const triplet& e : t) assert_int_equal(cncAddIJCoefficient(e.i, e.j, e.v), CNC_OK);
  for (std::int32_t i = 0; i < n; ++i)
    assert_int_equal(cncAddIRightHandSide(i, 1.0 + i % 5), CNC_OK);
  solve_read_delete(c, n, x);
}

void test_api_insertion_order(void**) {
  const std::int32_t n = 400;
  ts_csr a = ts_random_spd(n, 4, 3);
  ts_rng r;
  ts_rng_seed(&r, 4);
  std::vector<triplet> t;
  for (std::int32_t i = 0; i < n; ++i)
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      // Split each value into three non-dyadic parts.
      double p1 = a.val[k] * 0.3 + 0.1, p2 = a.val[k] * 0.7 - 0.3;
      t.push_back({i, a.col[k], p1});
      t.push_back({i, a.col[k], p2});
      t.push_back({i, a.col[k], a.val[k] - p1 - p2});
    }
  std::vector<double> x0, x1;
  api_solve_order(t, n, x0);
  for (int round = 0; round < 3; ++round) {
    shuffle(t, 200 + round);
    api_solve_order(t, n, x1);
    for (std::int32_t i = 0; i < n; ++i)
      if (std::memcmp(&x0[i], &x1[i], sizeof(double)) != 0)
        fail_msg("x[%d] differs between insertion orders: %.17g vs %.17g", i, x0[i], x1[i]);
  }
  // And it solves the system (the test's own residual).
  std::vector<double> b(n);
  for (std::int32_t i = 0; i < n; ++i) b[i] = 1.0 + i % 5;
  assert_true(ts_rel_residual(&a, x0.data(), b.data()) < 1e-8);
  ts_csr_free(&a);
}

// ---- builder
// -------------------------------------------------------------------------------------
void test_builder_plain_locked(void**) {
  const std::int32_t n = 20, k = 2;
  ts_csr a = ts_random_spd(n, 3, 5);
  std::vector<std::uint8_t> locked(n, 0);
  std::vector<double> values(std::size_t(n) * k, 0.0);
  locked[2] = locked[11] = 1;
  values[2] = 3.0, values[11] = -2.0, values[n + 2] = 0.5, values[n + 11] = 4.0;
  cnc::builder bld;
  bld.begin_matrix(n, k, false, false, locked, values, 0);
  for (std::int32_t i = 0; i < n; ++i) {
    for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q)
      bld.add_ij(i, a.col[q], a.val[q]);
    bld.add_rhs(i, 0, 1.0 + i);
    bld.add_rhs(i, 1, 2.0 - i);
  }
  cnc::assembled_system s = bld.end_matrix();
  assert_int_equal(s.a.n, n - 2);
  assert_int_equal(int(s.to_var.size()), n - 2);
  assert_int_equal(int(s.b.size()), (n - 2) * k);
  for (std::int32_t fi = 0; fi < n - 2; ++fi) {
    std::int32_t i = s.to_var[fi];
    assert_true(!locked[i]);
    for (std::int32_t fj = 0; fj < n - 2; ++fj) {
      double got = 0;
      for (std::int64_t q = s.a.row_ptr[fi]; q < s.a.row_ptr[fi + 1]; ++q)
        if (s.a.col[q] == fj) got = s.a.val[q];
      assert_true(got == ts_csr_get(&a, i, s.to_var[fj]));
    }
    for (std::int32_t sys = 0; sys < k; ++sys) {
      double want = sys == 0 ? 1.0 + i : 2.0 - i;
      want -= ts_csr_get(&a, i, 2) * values[std::size_t(sys) * n + 2];
      want -= ts_csr_get(&a, i, 11) * values[std::size_t(sys) * n + 11];
      assert_true(std::fabs(s.b[std::size_t(sys) * (n - 2) + fi] - want) < 1e-12);
    }
  }
  ts_csr_free(&a);
}

void test_builder_least_squares(void**) {
  // Rows r_t = (1, t, t²) with weights; AᵀA and Aᵀb against sums computed here.
  const std::int32_t n = 3;
  std::vector<std::uint8_t> locked(n, 0);
  std::vector<double> values(n, 0.0);
  cnc::builder bld;
  bld.begin_matrix(n, 1, true, false, locked, values, 0);
  double ata[3][3] = {{0}}, atb[3] = {0};
  for (int t = 0; t < 9; ++t) {
    double row[3] = {1.0, 0.5 * t, 0.25 * t * t}, y = std::sin(double(t)), w = 1.0 + 0.1 * t;
    bld.begin_row();
    for (int j = 0; j < 3; ++j) bld.coefficient(j, row[j]);
    bld.row_rhs(0, y);
    bld.row_scaling(w);
    assert_true(bld.end_row() == cnc::builder::row_end::ok);
    for (int p = 0; p < 3; ++p) {
      atb[p] += w * w * row[p] * y;
      for (int q = 0; q < 3; ++q) ata[p][q] += w * w * row[p] * row[q];
    }
  }
  cnc::assembled_system s = bld.end_matrix();
  assert_int_equal(s.a.n, 3);
  assert_int_equal(int(s.a.nnz()), 9);
  for (int p = 0; p < 3; ++p) {
    assert_true(std::fabs(s.b[p] - atb[p]) < 1e-12 * (1 + std::fabs(atb[p])));
    for (std::int64_t q = s.a.row_ptr[p]; q < s.a.row_ptr[p + 1]; ++q)
      assert_true(std::fabs(s.a.val[q] - ata[p][s.a.col[q]]) <
                  1e-12 * (1 + std::fabs(ata[p][s.a.col[q]])));
  }
}

// ---- CSR <-> BCRS
// --------------------------------------------------------------------------------
void check_bcrs(const cnc::csr_matrix& a, int b) {
  cnc::bcrs_matrix m = cnc::csr_to_bcrs(a, b);
  assert_int_equal(m.b, b);
  assert_int_equal(m.n, a.n);
  assert_int_equal(m.n_block_rows, (a.n + b - 1) / b);
  assert_int_equal(int(m.row_ptr.size()), m.n_block_rows + 1);
  assert_int_equal(m.row_ptr[0], 0);
  assert_int_equal(int(m.val.size()), int(m.n_blocks() * b * b));
  assert_int_equal(m.n_blocks(), cnc::count_blocks(a, b));
  // Every block row: sorted unique block columns, each stored value equals the CSR entry (or the
  // unit padding diagonal); every CSR entry is inside a stored block.
  for (std::int32_t br = 0; br < m.n_block_rows; ++br) {
    assert_true(m.row_ptr[br + 1] >= m.row_ptr[br]);
    for (std::int64_t blk = m.row_ptr[br]; blk < m.row_ptr[br + 1]; ++blk) {
      if (blk > m.row_ptr[br]) assert_true(m.col[blk] > m.col[blk - 1]);
      assert_true(m.col[blk] >= 0 && m.col[blk] < m.n_block_rows);
      for (int ii = 0; ii < b; ++ii)
        for (int jj = 0; jj < b; ++jj) {
          std::int32_t i = br * b + ii, j = m.col[blk] * b + jj;
          double stored = m.val[std::size_t(blk) * b * b + std::size_t(ii) * b + jj];
          double expect_v;
          if (i < a.n && j < a.n) {
            expect_v = 0;
            for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q)
              if (a.col[q] == j) expect_v = a.val[q];
          } else {
            expect_v = (i == j) ? 1.0 : 0.0;  // padding: unit diagonal, decoupled
          }
          if (stored != expect_v)
            fail_msg("b=%d n=%d: block (%d,%d) entry (%d,%d) = %g, expected %g", b, a.n, br,
                     m.col[blk], i, j, stored, expect_v);
        }
    }
  }
  for (std::int32_t i = 0; i < a.n; ++i)
    for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
      std::int32_t br = i / b, bc = a.col[q] / b;
      bool found = false;
      for (std::int64_t blk = m.row_ptr[br]; blk < m.row_ptr[br + 1]; ++blk)
        found |= m.col[blk] == bc;
      if (!found) fail_msg("entry (%d,%d) has no block", i, a.col[q]);
    }
  // Padding rows: a diagonal block exists in the last block row.
  if (a.n % b) {
    std::int32_t br = m.n_block_rows - 1;
    bool diag = false;
    for (std::int64_t blk = m.row_ptr[br]; blk < m.row_ptr[br + 1]; ++blk) diag |= m.col[blk] == br;
    assert_true(diag);
  }
  expect_same_csr(a, cnc::bcrs_to_csr(m), "bcrs round trip");
}

void test_bcrs_round_trip(void**) {
  static const std::int32_t sizes[] = {1, 2, 3, 4, 5, 7, 16, 17, 18, 19, 101};
  for (std::int32_t n : sizes) {
    ts_csr r = ts_random_spd(n, 3, 7 + std::uint64_t(n));
    cnc::csr_matrix a = cnc_test::from_ts(r);
    check_bcrs(a, 2);
    check_bcrs(a, 4);
    ts_csr_free(&r);
  }
  ts_csr l = ts_laplacian_2d(9, 7);
  cnc::csr_matrix a = cnc_test::from_ts(l);
  check_bcrs(a, 2);
  check_bcrs(a, 4);
  ts_csr_free(&l);
  ts_csr d = ts_dense_blocks(9, 4, 3);
  a = cnc_test::from_ts(d);
  check_bcrs(a, 4);
  assert_int_equal(cnc::count_blocks(a, 4), 9 + 2 * 8);  // block tridiagonal, exactly dense
  ts_csr_free(&d);
}

// ---- CSR -> SELL
// --------------------------------------------------------------------------------- Layout (slice
// widths = longest row, column-major entries) and the product it defines: y = A x through the SELL
// arrays equals the CSR product exactly (same order, padding adds 0 * x[i]), and the padding rows
// past n are identity rows.
void check_sell(const cnc::csr_matrix& a) {
  const int C = cnc::sell_slice;
  cnc::sell_matrix m = cnc::csr_to_sell(a);
  assert_int_equal(m.n, a.n);
  assert_int_equal(m.n_slices, (a.n + C - 1) / C);
  assert_int_equal(m.entries(), cnc::sell_entries(a));
  assert_int_equal(std::int64_t(m.val.size()), m.entries());
  std::vector<double> x(std::size_t(m.n_padded())), y(x.size(), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + double((i * 37) % 101) / 7.0;
  for (std::int32_t s = 0; s < m.n_slices; ++s) {
    const std::int64_t len = m.slice_ptr[s + 1] - m.slice_ptr[s];
    assert_true(len > 0 && len % C == 0);
    std::int64_t widest = 1;
    for (std::int32_t i = s * C; i < std::min(a.n, (s + 1) * C); ++i)
      widest = std::max(widest, a.row_ptr[i + 1] - a.row_ptr[i]);
    assert_int_equal(len / C, widest);
    for (std::int64_t t = 0; t < len / C; ++t)
      for (int l = 0; l < C; ++l) {
        const std::int64_t e = m.slice_ptr[s] + t * C + l;
        assert_true(m.col[e] >= 0 && m.col[e] < m.n_padded());
        y[std::size_t(s) * C + l] += m.val[e] * x[std::size_t(m.col[e])];
      }
  }
  for (std::int32_t i = 0; i < m.n_padded(); ++i) {
    double want = x[i];
    if (i < a.n) {
      want = 0.0;
      for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) want += a.val[q] * x[a.col[q]];
    }
    if (y[i] != want) fail_msg("SELL row %d of n=%d: %.17g, CSR gives %.17g", i, a.n, y[i], want);
  }
}

void test_sell_layout(void**) {
  for (std::int32_t n : {1, 5, 31, 32, 33, 64, 101, 300}) {
    ts_csr r = ts_random_spd(n, 4, 100 + std::uint64_t(n));
    check_sell(cnc_test::from_ts(r));
    ts_csr_free(&r);
  }
  ts_csr p = ts_poisson_3d(7);
  cnc::csr_matrix a = cnc_test::from_ts(p);
  check_sell(a);
  // 7-point rows: every slice of 7^3 rows is 7 entries wide except where no row has 7.
  assert_true(cnc::sell_entries(a) <= 7 * std::int64_t((a.n + 31) / 32) * 32);
  ts_csr_free(&p);
}

void test_csr_from_user(void**) {
  // 1-based, unsorted rows, a duplicate in row 1.
  const std::int64_t rp[4] = {1, 3, 6, 7};
  const std::uint32_t ci[6] = {2, 1, 3, 2, 3, 3};
  const double v[6] = {-1, 4, 0.5, 4, 0.25, 5};
  cnc::user_csr u = cnc::csr_from_user(3, rp, ci, v, 1);
  assert_true(u.copied());
  const cnc::csr_matrix& m = u.owned;
  assert_int_equal(u.view.n, 3);
  assert_true(u.view.col.data() == m.col.data());
  const std::vector<std::int64_t> want_rp = {0, 2, 4, 5};
  const cnc::host_vector<std::int32_t> want_col = {0, 1, 1, 2, 2};
  assert_true(m.row_ptr == want_rp);
  assert_true(m.col == want_col);
  assert_true(m.val[0] == 4 && m.val[1] == -1 && m.val[2] == 4 && m.val[3] == 0.75 &&
              m.val[4] == 5);
  // Canonical and 0-based: read in place, nothing copied.
  const std::int64_t rp0[4] = {0, 2, 4, 5};
  const std::uint32_t ci0[5] = {0, 1, 1, 2, 2};
  cnc::user_csr w = cnc::csr_from_user(3, rp0, ci0, v, 0);
  assert_false(w.copied());
  assert_true(w.view.row_ptr.data() == rp0 && w.view.val.data() == v);
  assert_true(reinterpret_cast<const void*>(w.view.col.data()) == ci0);
}

// A caller's CSR over many pieces of the parallel loops: rows of random length, every 7th row
// reversed (unsorted), every 11th with a repeated column; 0- or 1-based.
struct user_arrays {
  std::vector<std::int64_t> rp;
  std::vector<std::uint32_t> ci;
  std::vector<double> v;
  std::vector<triplet> t;  // the same entries, 0-based, for the reference
};
user_arrays messy_csr(std::int32_t n, int base, std::uint64_t seed) {
  user_arrays u;
  std::uint64_t x = seed;
  auto next = [&x] { return x = x * 6364136223846793005ull + 1442695040888963407ull, x >> 33; };
  u.rp.push_back(base);
  for (std::int32_t i = 0; i < n; ++i) {
    std::vector<std::int32_t> cols{i};
    for (int e = int(next() % 6); e > 0; --e)
      cols.push_back(std::int32_t(next() % std::uint64_t(n)));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    if (i % 11 == 0) cols.push_back(cols.front());
    if (i % 7 == 0) std::reverse(cols.begin(), cols.end());
    for (std::int32_t c : cols) {
      const double val = 1.0 + double(next() % 1000) / 64.0;
      u.ci.push_back(std::uint32_t(c + base));
      u.v.push_back(val);
      u.t.push_back({i, c, val});
    }
    u.rp.push_back(std::int64_t(u.ci.size()) + base);
  }
  return u;
}

// csr_from_user on bad arrays, with 1 and 4 threads: the status and the message naming the
// first bad place in row order.
void expect_first_error(const user_arrays& in, int status, const char* want) {
  const std::int32_t n = std::int32_t(in.rp.size() - 1);
  for (int t : {1, 4}) {
    set_threads(t);
    try {
      (void)cnc::csr_from_user(n, in.rp.data(), in.ci.data(), in.v.data(), 0);
      fail_msg("bad arrays accepted (expected '%s')", want);
    } catch (const cnc::error& e) {
      assert_int_equal(e.status(), status);
      if (!std::strstr(e.what(), want)) fail_msg("threads %d: message '%s'", t, e.what());
    }
  }
}

void test_csr_from_user_parallel(void**) {
  const std::int32_t n = 70001;  // several pieces of 8192 rows
  for (int base : {0, 1}) {
    user_arrays in = messy_csr(n, base, 5 + std::uint64_t(base));
    set_threads(1);
    cnc::user_csr one = cnc::csr_from_user(n, in.rp.data(), in.ci.data(), in.v.data(), base);
    set_threads(5);
    cnc::user_csr five = cnc::csr_from_user(n, in.rp.data(), in.ci.data(), in.v.data(), base);
    assert_true(one.copied() && five.copied());
    expect_same_csr(one.owned, five.owned, "csr_from_user, 1 vs 5 threads");
    const cnc::csr_matrix ref = reference_csr(n, in.t);
    if (one.owned.row_ptr != ref.row_ptr || one.owned.col != ref.col)
      fail_msg("base %d: structure differs from the reference", base);
    for (std::size_t k = 0; k < ref.val.size(); ++k)
      if (std::fabs(one.owned.val[k] - ref.val[k]) > 1e-12 * std::fabs(ref.val[k]))
        fail_msg("base %d: value %zu %.17g, reference %.17g", base, k, one.owned.val[k],
                 ref.val[k]);
  }
  // Errors in several pieces: the first in row order is reported, whatever the thread count.
  user_arrays in = messy_csr(n, 0, 9);
  const std::int64_t late = in.rp[60000], early = in.rp[20000] + 1;
  in.ci[std::size_t(late)] = std::uint32_t(n + 3);
  in.v[std::size_t(early)] = NAN;
  char want[64];
  std::snprintf(want, sizeof want, "values[%lld]", (long long)early);
  expect_first_error(in, CNC_ERR_NOT_FINITE, want);
  in = messy_csr(n, 0, 9);
  std::swap(in.rp[50000], in.rp[50001]);
  std::swap(in.rp[30000], in.rp[30001]);
  expect_first_error(in, CNC_ERR_INVALID_VALUE, "at row 30000");
  unsetenv("CNC_NUM_THREADS");
}

// Conversions cut into pieces give the same matrices for any thread count, and the layouts
// checked above hold across piece boundaries.
void test_conversion_threads(void**) {
  const std::int32_t n = 140003;  // enough pieces for several threads
  user_arrays in = messy_csr(n, 0, 21);
  const cnc::csr_matrix a = reference_csr(n, in.t);
  set_threads(1);
  const cnc::sell_matrix s1 = cnc::csr_to_sell(a);
  const cnc::bcrs_matrix b1 = cnc::csr_to_bcrs(a, 4);
  std::int64_t z1 = 0, z3 = 0;
  const auto d1 = cnc::inverse_diagonal(a, n + 5, true, &z1);
  set_threads(3);
  const cnc::sell_matrix s3 = cnc::csr_to_sell(a);
  const cnc::bcrs_matrix b3 = cnc::csr_to_bcrs(a, 4);
  const auto d3 = cnc::inverse_diagonal(a, n + 5, true, &z3);
  assert_true(s1.slice_ptr == s3.slice_ptr && s1.col == s3.col && s1.val == s3.val);
  assert_true(b1.row_ptr == b3.row_ptr && b1.col == b3.col && b1.val == b3.val);
  assert_true(d1 == d3 && z1 == z3);
  assert_int_equal(cnc::count_blocks(a, 2), cnc::csr_to_bcrs(a, 2).n_blocks());
  check_sell(a);
  check_bcrs(a, 2);
  check_bcrs(a, 4);
  unsetenv("CNC_NUM_THREADS");
}

void test_inverse_diagonal(void**) {
  const std::vector<triplet> t = {{0, 0, 4.0}, {0, 1, 1.0}, {1, 0, 1.0}, {2, 2, -0.5}, {3, 3, 0.0}};
  cnc::csr_matrix a = reference_csr(5, t);  // rows 1 and 4 have no diagonal, row 3 a zero one
  std::int64_t zeros = -1;
  cnc::host_vector<double> d = cnc::inverse_diagonal(a, 8, true, &zeros);
  assert_int_equal(zeros, 3);
  assert_int_equal(int(d.size()), 8);
  const double want[8] = {0.25, 1, -2, 1, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i) assert_true(d[i] == want[i]);
  d = cnc::inverse_diagonal(a, 5, false, &zeros);
  for (double x : d) assert_true(x == 1.0);
}

// ---- Automatic format choice
// ---------------------------------------------------------------------
void test_choose_format_internal(void**) {
  ts_csr d4 = ts_dense_blocks(50, 4, 1), d2 = ts_dense_blocks(100, 2, 2),
         l = ts_laplacian_2d(30, 30);
  ts_csr p = ts_poisson_3d(10);
  for (int bytes : {8, 4}) {
    assert_true(cnc::choose_format(cnc_test::from_ts(d4), bytes, false) == cnc::format::bcrs4);
    assert_true(cnc::choose_format(cnc_test::from_ts(d2), bytes, false) == cnc::format::bcrs2);
    assert_true(cnc::choose_format(cnc_test::from_ts(l), bytes, false) == cnc::format::csr);
    assert_true(cnc::choose_format(cnc_test::from_ts(p), bytes, false) == cnc::format::csr);
  }
  // Sliced backends: SELL where rows have similar lengths, CSR where one long row would pad every
  // row of its slice (an arrow matrix), blocks where they save >= 10% over SELL.
  const std::int32_t na = 256;
  std::vector<std::int32_t> ar, ac;
  std::vector<double> av;
  for (std::int32_t i = 0; i < na; ++i) {
    ar.push_back(i), ac.push_back(i), av.push_back(double(na));
    if (i > 0) ar.push_back(0), ac.push_back(i), av.push_back(1.0);
    if (i > 0) ar.push_back(i), ac.push_back(0), av.push_back(1.0);
  }
  ts_csr arrow = ts_csr_from_coo(na, std::int64_t(ar.size()), ar.data(), ac.data(), av.data());
  for (int bytes : {8, 4}) {
    assert_true(cnc::choose_format(cnc_test::from_ts(p), bytes, true) == cnc::format::sell);
    assert_true(cnc::choose_format(cnc_test::from_ts(l), bytes, true) == cnc::format::sell);
    assert_true(cnc::choose_format(cnc_test::from_ts(arrow), bytes, true) == cnc::format::csr);
    assert_true(cnc::choose_format(cnc_test::from_ts(arrow), bytes, false) == cnc::format::csr);
    assert_true(cnc::choose_format(cnc_test::from_ts(d4), bytes, true) == cnc::format::bcrs4);
  }
  ts_csr_free(&arrow);
  ts_csr_free(&d4);
  ts_csr_free(&d2);
  ts_csr_free(&l);
  ts_csr_free(&p);
}

// Blocks the test counts itself: distinct (i / b, j / b) pairs (n a multiple of b: no padding).
std::int64_t my_block_count(const ts_csr& a, int b) {
  std::vector<std::int64_t> keys;
  for (std::int32_t i = 0; i < a.n; ++i)
    for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q)
      keys.push_back(std::int64_t(i / b) * a.n + a.col[q] / b);
  std::sort(keys.begin(), keys.end());
  return std::int64_t(std::unique(keys.begin(), keys.end()) - keys.begin());
}

void api_format(const ts_csr& a, CNCenum force, CNCint* used, double* fill) {
  CNCcontext c = cncNewContext();
  assert_int_equal(cncMakeCurrent(c), CNC_OK);
  // The CPU's choice (a GPU backend, as CNC_BACKEND=cuda would give, prefers SELL to CSR).
  assert_int_equal(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), CNC_OK);
  if (force) assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, force), CNC_OK);
  std::vector<double> b(std::size_t(a.n), 1.0), x(std::size_t(a.n));
  assert_int_equal(ts_assemble_solve(&a, b.data(), 1, x.data()), CNC_OK);
  assert_int_equal(cncGetIntegerv(CNC_FORMAT_USED, used), CNC_OK);
  assert_int_equal(cncGetDoublev(CNC_BLOCK_FILL_RATIO, fill), CNC_OK);
  assert_true(ts_rel_residual(&a, x.data(), b.data()) < 1e-5);
  cncDeleteContext(c);
}

void test_choose_format_public(void**) {
  CNCint used = 0;
  double fill = 0;
  ts_csr d4 = ts_dense_blocks(64, 4, 11);
  api_format(d4, 0, &used, &fill);
  assert_int_equal(used, CNC_FORMAT_BCRS4);
  assert_true(fill == 1.0);
  ts_csr d2 = ts_dense_blocks(128, 2, 12);
  api_format(d2, 0, &used, &fill);
  assert_int_equal(used, CNC_FORMAT_BCRS2);
  assert_true(fill == 1.0);
  ts_csr l = ts_laplacian_2d(24, 24);
  api_format(l, 0, &used, &fill);
  assert_int_equal(used, CNC_FORMAT_CSR);
  assert_true(fill == 1.0);
  // Forced block formats on the Laplacian: the fill ratio is stored / true nonzeros.
  for (int b : {2, 4}) {
    api_format(l, b == 2 ? CNC_FORMAT_BCRS2 : CNC_FORMAT_BCRS4, &used, &fill);
    assert_int_equal(used, b == 2 ? CNC_FORMAT_BCRS2 : CNC_FORMAT_BCRS4);
    double want = double(my_block_count(l, b) * b * b) / double(l.nnz);
    if (!(std::fabs(fill - want) < 1e-12 * want))
      fail_msg("bcrs%d fill ratio %.6f, the test counts %.6f", b, fill, want);
  }
  // Forced SELL (the CPU backend runs it): stored entries, padding included, over nonzeros.
  api_format(l, CNC_FORMAT_SELL, &used, &fill);
  assert_int_equal(used, CNC_FORMAT_SELL);
  std::int64_t stored = 0;
  for (std::int32_t s = 0; s < (l.n + 31) / 32; ++s) {
    std::int64_t w = 1;
    for (std::int32_t i = s * 32; i < std::min(l.n, (s + 1) * 32); ++i)
      w = std::max(w, l.row_ptr[i + 1] - l.row_ptr[i]);
    stored += 32 * w;
  }
  if (!(std::fabs(fill - double(stored) / double(l.nnz)) < 1e-12))
    fail_msg("sell fill ratio %.6f, the test counts %.6f", fill, double(stored) / double(l.nnz));
  ts_csr_free(&d4);
  ts_csr_free(&d2);
  ts_csr_free(&l);
}

// A second cncSolve on the same matrix reuses the device-resident system (no upload): its
// statistics must equal the first solve's, on every backend here, although GPU backends free the
// host BCRS/SELL copy once it is uploaded.
void test_reused_matrix_statistics(void**) {
  ts_csr l = ts_laplacian_2d(40, 40);
  std::vector<double> b(std::size_t(l.n), 1.0), x(std::size_t(l.n));
  for (CNCenum be : {CNC_BACKEND_CPU, CNC_BACKEND_OPENCL, CNC_BACKEND_CUDA}) {
    if (!cncBackendAvailable(be)) {
      std::printf("backend 0x%x not available here: its reuse check is skipped\n", unsigned(be));
      continue;
    }
    for (CNCenum fmt : {CNC_FORMAT_SELL, CNC_FORMAT_BCRS4, CNC_FORMAT_CSR}) {
      CNCcontext c = cncNewContext();
      assert_int_equal(cncMakeCurrent(c), CNC_OK);
      assert_int_equal(cncSolverParameteri(CNC_BACKEND, be), CNC_OK);
      assert_int_equal(cncSolverParameteri(CNC_MATRIX_FORMAT, fmt), CNC_OK);
      assert_int_equal(ts_assemble_solve(&l, b.data(), 1, x.data()), CNC_OK);
      double fill[2], upload[2];
      CNCint64 bytes[2];
      CNCint used = 0;
      for (int s = 0; s < 2; ++s) {
        if (s == 1) assert_int_equal(cncSolve(), CNC_OK);
        assert_int_equal(cncGetDoublev(CNC_BLOCK_FILL_RATIO, &fill[s]), CNC_OK);
        assert_int_equal(cncGetDoublev(CNC_UPLOAD_TIME, &upload[s]), CNC_OK);
        assert_int_equal(cncGetInteger64v(CNC_BYTES_PER_ITERATION, &bytes[s]), CNC_OK);
      }
      assert_int_equal(cncGetIntegerv(CNC_FORMAT_USED, &used), CNC_OK);
      assert_int_equal(used, fmt);
      assert_true(upload[1] == 0.0);  // the second solve reused the resident matrix
      if (fill[1] != fill[0] || bytes[1] != bytes[0])
        fail_msg("backend 0x%x format 0x%x: fill %g then %g, bytes %lld then %lld", unsigned(be),
                 unsigned(fmt), fill[0], fill[1], (long long)bytes[0], (long long)bytes[1]);
      assert_true(fill[0] >= 1.0);
      cncDeleteContext(c);
    }
  }
  ts_csr_free(&l);
}

// ---- Bulk insertion (parallel) and pattern-first assembly
// ----------------------------------------------------------------------------------------------
struct coo_arrays {
  std::vector<std::uint32_t> i, j;
  std::vector<double> v;
};
coo_arrays arrays_of(const std::vector<triplet>& t) {
  coo_arrays a;
  for (const triplet& e : t)
    a.i.push_back(std::uint32_t(e.i)), a.j.push_back(std::uint32_t(e.j)), a.v.push_back(e.v);
  return a;
}

// Every `every`-th variable locked (from 3 on), k systems of non-dyadic values: a locked column's
// terms move to b_i in plain double, so b's bits depend on the order of each row's entries.
void lock_every(std::int32_t n, int k, int every, std::vector<std::uint8_t>& locked,
                std::vector<double>& values) {
  locked.assign(std::size_t(n), 0);
  values.assign(std::size_t(n) * k, 0.0);
  for (std::size_t q = 0; q < values.size(); ++q) values[q] = 0.1 + double(q % 97) / 7.0;
  if (every > 0)
    for (std::int32_t i = 3; i < n; i += every) locked[std::size_t(i)] = 1;
}

void expect_same_system(const cnc::assembled_system& a, const cnc::assembled_system& b,
                        const char* what) {
  expect_same_csr(a.a, b.a, what);
  if (a.to_var != b.to_var) fail_msg("%s: free variables differ", what);
  if (a.b.size() != b.b.size()) fail_msg("%s: right-hand sides differ in size", what);
  for (std::size_t q = 0; q < a.b.size(); ++q)
    if (std::memcmp(&a.b[q], &b.b[q], sizeof(double)) != 0)
      fail_msg("%s: b[%zu] differs: %.17g vs %.17g", what, q, a.b[q], b.b[q]);
}

struct system_setup {
  std::int32_t n = 0;
  int k = 2;
  std::vector<std::uint8_t> locked;
  std::vector<double> values;
};

// One add_ij per entry, in order: the reference the other paths must match bit for bit.
cnc::assembled_system per_entry(const system_setup& s, const coo_arrays& in, std::int64_t hint) {
  cnc::builder b;
  b.begin_matrix(s.n, s.k, false, false, s.locked, s.values, hint, 1);
  for (std::size_t t = 0; t < in.v.size(); ++t)
    assert_true(b.add_ij(std::int32_t(in.i[t]), std::int32_t(in.j[t]), in.v[t]));
  return b.end_matrix();
}

// The same entries through add_ij_many, in `calls` consecutive calls, on `threads` threads,
// bucketing out-of-order input `chunk` entries at a time (0: the default).
cnc::assembled_system bulk(const system_setup& s, const coo_arrays& in, std::int64_t hint,
                           int threads, int calls, std::int64_t chunk = 0) {
  cnc::builder b;
  if (chunk) b.set_bulk_chunk(chunk);
  b.begin_matrix(s.n, s.k, false, false, s.locked, s.values, hint, threads);
  const std::int64_t m = std::int64_t(in.v.size());
  for (int c = 0; c < calls; ++c) {
    const std::int64_t a = m * c / calls, e = m * (c + 1) / calls;
    assert_int_equal(b.add_ij_many(e - a, in.i.data() + a, in.j.data() + a, in.v.data() + a), -1);
  }
  return b.end_matrix();
}

// Bulk insertion on 1..8 threads, in one or several calls, gives the bits of one add_ij per
// entry: duplicates (double-double sums), locked rows and columns (b in plain double, so each
// row's entries must go in input order), rows in order (no scatter) and shuffled (scatter), an
// exact hint, a tiny one (windows full: misses, parallel growth, re-runs) and none, and a long
// row that spills to the general table whatever the growth.
void test_bulk_parallel_same_bits(void**) {
  system_setup s;
  s.n = 40009;
  lock_every(s.n, s.k, 7, s.locked, s.values);
  std::vector<triplet> t = random_parts(s.n, 4, 11);  // ~400 K entries (> the serial cut-off)
  for (std::int32_t q = 0; q < 5000; ++q) t.push_back({20000, (q * 13) % s.n, 0.1 + q / 3.0});
  std::sort(t.begin(), t.end(), [](const triplet& a, const triplet& b) { return a.i < b.i; });
  {  // the reference itself: the test's own CSR of the kept entries, up to rounding
    std::vector<std::int32_t> map(std::size_t(s.n), -1);
    std::int32_t kept = 0;
    for (std::int32_t i = 0; i < s.n; ++i)
      if (!s.locked[std::size_t(i)]) map[std::size_t(i)] = kept++;
    std::vector<triplet> f;
    for (const triplet& e : t)
      if (map[std::size_t(e.i)] >= 0 && map[std::size_t(e.j)] >= 0)
        f.push_back({map[std::size_t(e.i)], map[std::size_t(e.j)], e.v});
    const cnc::csr_matrix want = reference_csr(kept, f);
    const cnc::assembled_system got = per_entry(s, arrays_of(t), 0);
    if (got.a.row_ptr != want.row_ptr || got.a.col != want.col) fail_msg("structure differs");
    for (std::size_t q = 0; q < want.val.size(); ++q)
      if (!(std::fabs(got.a.val[q] - want.val[q]) <= 1e-9 * (1 + std::fabs(want.val[q]))))
        fail_msg("value %zu: %.17g, reference %.17g", q, got.a.val[q], want.val[q]);
  }
  // Rows in order (one run, no copy); nearly in order (one entry moved to the end: chunks, most
  // of them in order); shuffled (chunks bucketed through the buffer).
  static const char* orders[] = {"rows in order", "nearly in order", "shuffled"};
  for (int order = 0; order < 3; ++order) {
    if (order == 1) std::rotate(t.begin() + 1000, t.begin() + 1001, t.end());
    if (order == 2) shuffle(t, 12);
    const coo_arrays in = arrays_of(t);
    for (std::int64_t hint : {std::int64_t(t.size()), std::int64_t(16), std::int64_t(0)}) {
      const cnc::assembled_system ref = per_entry(s, in, hint);
      const int runs[][3] = {{1, 1, 0}, {2, 3, 0}, {3, 1, 70001}, {8, 2, 150000}};
      for (const auto& r : runs) {
        char what[128];
        std::snprintf(what, sizeof what, "%s, hint %lld, %d threads, %d calls, chunk %d",
                      orders[order], (long long)hint, r[0], r[1], r[2]);
        expect_same_system(ref, bulk(s, in, hint, r[0], r[1], r[2]), what);
      }
    }
  }
}

// Through the public API: one cncAddIJCoefficients call against one cncAddIJCoefficient per
// entry, the same solution bits on the CPU backend at 1, 2 and 4 threads (CNC_NB_THREADS), with
// duplicates, shuffled entries and locked variables; and CNC_NUM_THREADS feeding the host stages.
void api_bulk_solve(const coo_arrays& in, std::int32_t n, int threads, bool use_bulk,
                    std::vector<double>& x) {
  CNCcontext c = new_cpu_csr_system(n, threads);
  for (CNCuint i = 5; i < CNCuint(n); i += 101) {
    assert_int_equal(cncSetVariable(i, 0.3 + i * 1e-3), CNC_OK);
    assert_int_equal(cncLockVariable(i), CNC_OK);
  }
  assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
  if (use_bulk) {
    assert_int_equal(
        cncAddIJCoefficients(CNCint64(in.v.size()), in.i.data(), in.j.data(), in.v.data()), CNC_OK);
  } else {
    for (std::size_t t = 0; t < in.v.size(); ++t)
      assert_int_equal(cncAddIJCoefficient(in.i[t], in.j[t], in.v[t]), CNC_OK);
  }
  for (std::int32_t i = 0; i < n; ++i)
    assert_int_equal(cncAddIRightHandSide(i, 1.0 + (i % 7) / 3.0), CNC_OK);
  solve_read_delete(c, n, x);
}

void expect_same_x(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  assert_int_equal(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0)
      fail_msg("%s: x[%zu] %.17g vs %.17g", what, i, a[i], b[i]);
}

void test_api_bulk_threads(void**) {
  const std::int32_t n = 12000;
  ts_csr a = ts_random_spd(n, 5, 21);
  std::vector<triplet> t;
  for (std::int32_t i = 0; i < n; ++i)
    for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
      const double p = a.val[q] * 0.3 + 0.1;  // two non-dyadic parts per entry
      t.push_back({i, a.col[q], p});
      t.push_back({i, a.col[q], a.val[q] - p});
    }
  shuffle(t, 22);
  const coo_arrays in = arrays_of(t);
  assert_true(in.v.size() > 65536);  // the parallel path
  for (int threads : {1, 2, 4}) {
    std::vector<double> one, many;
    api_bulk_solve(in, n, threads, false, one);
    api_bulk_solve(in, n, threads, true, many);
    char what[64];
    std::snprintf(what, sizeof what, "bulk vs per entry, %d threads", threads);
    expect_same_x(one, many, what);
  }
  // CNC_NUM_THREADS alone (CNC_NB_THREADS 0) feeds the host stages too.
  std::vector<double> one, many;
  set_threads(3);
  api_bulk_solve(in, n, 0, false, one);
  api_bulk_solve(in, n, 0, true, many);
  unsetenv("CNC_NUM_THREADS");
  expect_same_x(one, many, "bulk vs per entry, CNC_NUM_THREADS=3");
  ts_csr_free(&a);
}

// Pattern-first through the builder: slots set, added at global indices, taken by plain adds
// (one by one or in bulk), in shuffled order with spare slots and locked variables: the same CSR
// and b bits as one add_ij per entry on the hash table, for 1 and 3 threads.
void test_pattern_same_system(void**) {
  system_setup s;
  s.n = 5003;
  lock_every(s.n, s.k, 9, s.locked, s.values);
  ts_csr a = ts_random_spd(s.n, 6, 31);
  std::vector<std::uint32_t> lengths(static_cast<std::size_t>(s.n));
  std::vector<triplet> t;
  std::vector<std::uint32_t> offset;  // slot offset of each entry in its row (reversed order)
  for (std::int32_t i = 0; i < s.n; ++i) {
    const std::int64_t len = a.row_ptr[i + 1] - a.row_ptr[i];
    lengths[std::size_t(i)] = std::uint32_t(len + i % 3);  // spare (unused) slots in some rows
    for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
      t.push_back({i, a.col[q], a.val[q] / 3.0});
      offset.push_back(std::uint32_t(a.row_ptr[i + 1] - 1 - q));
    }
  }
  std::vector<std::size_t> order(t.size());
  for (std::size_t q = 0; q < order.size(); ++q) order[q] = q;
  ts_rng r;
  ts_rng_seed(&r, 32);
  for (std::size_t q = order.size(); q > 1; --q)
    std::swap(order[q - 1], order[ts_rng_below(&r, std::uint32_t(q))]);
  std::vector<triplet> st;
  for (std::size_t q : order) st.push_back(t[q]);
  const coo_arrays in = arrays_of(st);
  const cnc::assembled_system ref = per_entry(s, in, 0);
  for (int threads : {1, 3}) {
    for (int mode = 0; mode < 4; ++mode) {
      cnc::builder b;
      b.pattern().begin(s.n, 0);
      b.pattern().set_lengths(lengths.data(), threads);
      assert_true(b.pattern().compile(threads) > 0);
      for (int cycle = 0; cycle < 2; ++cycle) {  // the pattern serves two matrices
        b.begin_matrix(s.n, s.k, false, false, s.locked, s.values, 0, threads);
        assert_true(b.uses_pattern());
        if (cycle == 0)  // leftovers the next Begin(MATRIX) must clear
          for (std::int32_t i = 0; i < s.n; i += 5) assert_true(b.add_ij(i, i, 1e3));
        else if (mode == 3)
          assert_int_equal(
              b.add_ij_many(std::int64_t(in.v.size()), in.i.data(), in.j.data(), in.v.data()), -1);
        if (cycle == 0) {
          (void)b.end_matrix();
          continue;
        }
        for (std::size_t q = 0; q < order.size() && mode < 3; ++q) {
          const triplet& e = t[order[q]];
          const std::int64_t slot = b.pattern().row_begin(e.i) + offset[order[q]];
          if (mode == 0) b.put(e.i, e.j, e.v, slot, true);
          if (mode == 1) b.put(e.i, e.j, e.v, slot, false);
          if (mode == 2) assert_true(b.add_ij(e.i, e.j, e.v));
        }
        char what[64];
        std::snprintf(what, sizeof what, "pattern mode %d, %d threads", mode, threads);
        expect_same_system(ref, b.end_matrix(), what);
      }
    }
  }
  ts_csr_free(&a);
}

// Unused slots dropped, repeated columns in different slots summed in slot order, rows sorted
// (short rows by insertion, long ones by a stable sort), a full row refused without change, and
// a pattern of zero lengths discarded (hash assembly again).
void test_pattern_rows(void**) {
  const std::int32_t n = 50;
  std::vector<std::uint8_t> locked(std::size_t(n), 0);
  std::vector<double> values(std::size_t(n), 0.0);
  cnc::builder b;
  b.pattern().begin(n, 0);
  b.pattern().set_length(0, 4);
  b.pattern().set_length(1, 45);
  b.pattern().set_length(2, 2);
  assert_int_equal(b.pattern().compile(2), 4 + 45 + 2);
  b.begin_matrix(n, 1, false, false, locked, values, 0, 2);
  const std::int64_t r1 = b.pattern().row_begin(1);
  b.put(0, 7, 1.5, 2, true);  // row 0: slots 2, 0, 3 (slot 1 unused)
  b.put(0, 3, 0.25, 0, true);
  b.put(0, 7, 0.1, 3, false);            // column 7 again, another slot
  b.put(0, 7, 9.0, 2, true);             // set again: replaces 1.5
  for (std::int32_t q = 0; q < 45; ++q)  // row 1: columns 44..0 then 3 twice more
    b.put(1, q < 43 ? 44 - q : 3, 1.0 / (q + 3), r1 + q, true);
  assert_true(b.add_ij(2, 5, 2.0));
  assert_true(b.add_ij(2, 6, 3.0));
  assert_true(b.add_ij(2, 5, 0.5));   // finds column 5
  assert_false(b.add_ij(2, 9, 1.0));  // row 2 is full
  const std::uint32_t bi[3] = {2, 2, 2}, bj[3] = {6, 5, 8};
  const double bv[3] = {1.0, 1.0, 1.0};
  assert_int_equal(b.add_ij_many(3, bi, bj, bv), 2);  // column 8 has no room: nothing added
  cnc::assembled_system s = b.end_matrix();
  assert_int_equal(s.a.row_ptr[1], 2);
  assert_int_equal(s.a.col[0], 3);
  assert_true(s.a.val[0] == 0.25);
  assert_int_equal(s.a.col[1], 7);
  assert_true(s.a.val[1] == 9.0 + 0.1);
  // Row 1: columns 0..44 once each, column 3 three times (summed in slot order).
  assert_int_equal(s.a.row_ptr[2] - s.a.row_ptr[1], 43);
  for (std::int64_t q = s.a.row_ptr[1]; q < s.a.row_ptr[2]; ++q) {
    const std::int32_t c = s.a.col[std::size_t(q)];
    assert_int_equal(c, std::int32_t(q - s.a.row_ptr[1]) + 2);
    double want = 1.0 / ((44 - c) + 3);
    if (c == 3) want = (1.0 / (41 + 3) + 1.0 / (43 + 3)) + 1.0 / (44 + 3);
    if (s.a.val[std::size_t(q)] != want)
      fail_msg("row 1 column %d: %.17g, want %.17g", c, s.a.val[std::size_t(q)], want);
  }
  assert_int_equal(s.a.row_ptr[3] - s.a.row_ptr[2], 2);
  assert_true(s.a.val[std::size_t(s.a.row_ptr[2])] == 2.5 &&
              s.a.val[std::size_t(s.a.row_ptr[2]) + 1] == 3.0);
  assert_int_equal(s.a.nnz(), 2 + 43 + 2);
  // Zero lengths discard the pattern: the next matrix is hashed (no row limits).
  b.pattern().begin(n, 0);
  assert_int_equal(b.pattern().compile(1), 0);
  assert_false(b.pattern().active());
  b.begin_matrix(n, 1, false, false, locked, values, 0, 1);
  assert_false(b.uses_pattern());
  for (std::int32_t j = 0; j < n; ++j) assert_true(b.add_ij(2, j, 1.0));
  assert_int_equal(b.end_matrix().a.nnz(), n);
}

// Public API, CPU backend: the same solution bits from one cncAddIJCoefficient per entry and
// from a pattern filled through each entry point (offsets, global indices, plain adds, one bulk
// call, rows), with locked variables; each run assembles two matrices (the first with other
// values), so the pattern's second use starts from cleared slots.
void api_pattern_solve(const ts_csr& a, const std::vector<double>& b, int mode,
                       std::vector<double>& x) {
  const std::int32_t n = a.n;
  CNCcontext c = new_cpu_csr_system(n, 2);
  const CNCuint locked[2] = {4, CNCuint(n / 2)};
  for (CNCuint v : locked) {
    assert_int_equal(cncSetVariable(v, 0.7 + v * 1e-3), CNC_OK);
    assert_int_equal(cncLockVariable(v), CNC_OK);
  }
  std::vector<CNCuint> lengths(static_cast<std::size_t>(n));
  std::vector<std::int64_t> first(std::size_t(n) + 1, 0);  // the pattern's row offsets
  for (std::int32_t i = 0; i < n; ++i) {
    lengths[std::size_t(i)] = CNCuint(a.row_ptr[i + 1] - a.row_ptr[i] + i % 2);
    first[std::size_t(i) + 1] = first[std::size_t(i)] + lengths[std::size_t(i)];
  }
  if (mode > 0) {
    CNCint st = 0;
    assert_int_equal(cncBegin(CNC_MATRIX_PATTERN), CNC_OK);
    assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
    assert_int_equal(st, CNC_STATE_MATRIX_PATTERN);
    if (mode % 2) {
      assert_int_equal(cncSetRowLengths(lengths.data()), CNC_OK);
    } else {
      for (std::int32_t i = n - 1; i >= 0; --i)
        assert_int_equal(cncSetRowLength(i, lengths[std::size_t(i)]), CNC_OK);
    }
    assert_int_equal(cncEnd(CNC_MATRIX_PATTERN), CNC_OK);
    assert_int_equal(cncGetIntegerv(CNC_STATE, &st), CNC_OK);
    assert_int_equal(st, CNC_STATE_SYSTEM);
  }
  std::vector<CNCuint> bi, bj;
  std::vector<double> bv;
  for (int cycle = 0; cycle < 2; ++cycle) {
    const double scale = cycle == 0 ? 2.0 : 1.0;
    for (std::int32_t i = 0; i < n; ++i)  // the same initial guess for both matrices
      if (i != 4 && i != n / 2) assert_int_equal(cncSetVariable(i, 0.0), CNC_OK);
    assert_int_equal(cncBegin(CNC_MATRIX), CNC_OK);
    bi.clear(), bj.clear(), bv.clear();
    for (std::int32_t i = 0; i < n; ++i) {
      if (mode == 5) assert_int_equal(cncBegin(CNC_ROW), CNC_OK);
      for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
        const CNCuint j = CNCuint(a.col[q]);
        const double v = scale * a.val[q];
        const std::int64_t k = q - a.row_ptr[i];
        switch (mode) {
          case 0:
          case 3:
            assert_int_equal(cncAddIJCoefficient(i, j, v), CNC_OK);
            break;
          case 1:
            assert_int_equal(cncSetIJCoefficientAtRowOffset(i, j, v, CNCuint(k)), CNC_OK);
            break;
          case 2:
            assert_int_equal(cncAddIJCoefficientAt(i, j, v, first[std::size_t(i)] + k), CNC_OK);
            break;
          case 4:
            bi.push_back(CNCuint(i)), bj.push_back(j), bv.push_back(v);
            break;
          case 5:
            assert_int_equal(cncCoefficient(j, v), CNC_OK);
            break;
        }
      }
      if (mode == 5) {
        assert_int_equal(cncRightHandSide(b[std::size_t(i)]), CNC_OK);
        assert_int_equal(cncEnd(CNC_ROW), CNC_OK);
      } else if (mode != 4) {
        assert_int_equal(cncAddIRightHandSide(i, b[std::size_t(i)]), CNC_OK);
      }
    }
    if (mode == 4) {
      assert_int_equal(cncAddIJCoefficients(CNCint64(bv.size()), bi.data(), bj.data(), bv.data()),
                       CNC_OK);
      for (std::int32_t i = 0; i < n; ++i)
        assert_int_equal(cncAddIRightHandSide(i, b[std::size_t(i)]), CNC_OK);
    }
    assert_int_equal(cncEnd(CNC_MATRIX), CNC_OK);
    assert_int_equal(cncEnd(CNC_SYSTEM), CNC_OK);
    assert_int_equal(cncSolve(), CNC_OK);
  }
  x.resize(std::size_t(n));
  for (std::int32_t i = 0; i < n; ++i)
    assert_int_equal(cncGetVariable(i, &x[std::size_t(i)]), CNC_OK);
  cncDeleteContext(c);
}

void test_pattern_public(void**) {
  const std::int32_t n = 3000;
  ts_csr a = ts_random_spd(n, 6, 41);
  std::vector<double> b(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) b[std::size_t(i)] = 1.0 + (i % 11) / 7.0;
  std::vector<double> ref, x;
  api_pattern_solve(a, b, 0, ref);
  static const char* modes[] = {"",           "offsets",       "global indices",
                                "plain adds", "one bulk call", "rows"};
  for (int mode = 1; mode <= 5; ++mode) {
    api_pattern_solve(a, b, mode, x);
    char what[64];
    std::snprintf(what, sizeof what, "pattern through %s", modes[mode]);
    expect_same_x(ref, x, what);
  }
  ts_csr_free(&a);
}

}  // namespace

// Same bytes, same fingerprint for 1..9 threads; one flipped bit anywhere, or one byte less,
// gives another.
static void test_fingerprint(void** unused) {
  (void)unused;
  const std::size_t bytes = (std::size_t(5) << 20) + 12345;  // several pieces and a ragged end
  std::vector<unsigned char> v(bytes);
  std::uint64_t s = 7;
  for (auto& c : v) s = s * 6364136223846793005ull + 1442695040888963407ull, c = (s >> 56) & 255;
  const cnc::fingerprint f = cnc::fingerprint_of(v.data(), bytes, 1);
  for (int t = 2; t <= 9; ++t) assert_true(cnc::fingerprint_of(v.data(), bytes, t) == f);
  for (std::size_t at : {std::size_t(0), std::size_t(1) << 20, bytes / 2, bytes - 1}) {
    v[at] ^= 1;
    assert_false(cnc::fingerprint_of(v.data(), bytes, 4) == f);
    v[at] ^= 1;
  }
  assert_true(cnc::fingerprint_of(v.data(), bytes, 4) == f);
  assert_false(cnc::fingerprint_of(v.data(), bytes - 1, 4) == f);
  assert_false(cnc::fingerprint_of(v.data(), 0, 4) == f);
  // Piece digests: the same whole; same_pieces true for the same bytes only.
  const cnc::piece_prints pp = cnc::fingerprint_pieces(v.data(), bytes, 3);
  assert_true(pp.whole == f);
  assert_true(pp.pieces.size() > 1);
  for (int t = 1; t <= 5; ++t) assert_true(cnc::same_pieces(v.data(), bytes, t, pp.pieces));
  for (std::size_t at : {std::size_t(0), bytes / 2, bytes - 1}) {
    v[at] ^= 0x80;
    for (int t = 1; t <= 5; t += 2) assert_false(cnc::same_pieces(v.data(), bytes, t, pp.pieces));
    v[at] ^= 0x80;
  }
  assert_false(cnc::same_pieces(v.data(), bytes - (std::size_t(2) << 20), 4, pp.pieces));
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_insertion_order_independent),
      cmocka_unit_test(test_hash_coo_map_drops),
      cmocka_unit_test(test_hash_coo_threads),
      cmocka_unit_test(test_api_insertion_order),
      cmocka_unit_test(test_builder_plain_locked),
      cmocka_unit_test(test_builder_least_squares),
      cmocka_unit_test(test_bcrs_round_trip),
      cmocka_unit_test(test_sell_layout),
      cmocka_unit_test(test_csr_from_user),
      cmocka_unit_test(test_csr_from_user_parallel),
      cmocka_unit_test(test_conversion_threads),
      cmocka_unit_test(test_inverse_diagonal),
      cmocka_unit_test(test_choose_format_internal),
      cmocka_unit_test(test_choose_format_public),
      cmocka_unit_test(test_reused_matrix_statistics),
      cmocka_unit_test(test_bulk_parallel_same_bits),
      cmocka_unit_test(test_api_bulk_threads),
      cmocka_unit_test(test_pattern_same_system),
      cmocka_unit_test(test_pattern_rows),
      cmocka_unit_test(test_pattern_public),
      cmocka_unit_test(test_fingerprint),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
