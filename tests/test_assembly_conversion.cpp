// Conversion, internal: CSR -> BCRS 2x2/4x4 must hold exactly the CSR entries (plus the unit
// padding) and convert back exactly; CSR -> SELL must define the CSR product exactly; a caller's
// CSR (unsorted, duplicated, 0- or 1-based) is read in place or canonicalised, with the first bad
// place reported whatever the thread count; every conversion gives the same matrices for any
// thread count; the inverse diagonal for Jacobi.
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
#include "assembly_support.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "host_reference.hpp"
#include "matrix/matrix.hpp"
#include "test_support.h"
#include "util/error.hpp"
#include "util/fingerprint.hpp"

namespace {

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
  // Hub rows (5000 and 1666 entries): block row 0 takes the bitmap path of the block-column
  // merge (over 4096 entries), with padding rows (n odd).
  ts_csr h = ts_long_rows_spd(6001, 5000, 11);
  a = cnc_test::from_ts(h);
  check_bcrs(a, 2);
  ts_csr_free(&h);
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

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      // CSR <-> BCRS, CSR -> SELL
      cmocka_unit_test(test_bcrs_round_trip),
      cmocka_unit_test(test_sell_layout),
      // A caller's CSR, conversions on threads, the inverse diagonal
      cmocka_unit_test(test_csr_from_user),
      cmocka_unit_test(test_csr_from_user_parallel),
      cmocka_unit_test(test_conversion_threads),
      cmocka_unit_test(test_inverse_diagonal),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
