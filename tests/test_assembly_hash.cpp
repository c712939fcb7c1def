// Assembly, internal and public: the hash-assembled COO must give the same CSR (bit-identical
// values) for any insertion order of the same duplicated entries, for any thread count, and with
// rows dropped through a map; through the public API, any insertion order gives the same solution
// bits. The builder's locked-variable and least-squares algebra must match a reference computed
// here.
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

cnc::csr_matrix assemble(std::int32_t n, const std::vector<triplet>& t, std::int64_t hint) {
  cnc::hash_coo h;
  h.reset(n, hint);
  for (const triplet& e : t) h.add(e.i, e.j, e.v);
  return h.to_csr({}, n);
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

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_insertion_order_independent),
      cmocka_unit_test(test_hash_coo_map_drops),
      cmocka_unit_test(test_hash_coo_threads),
      cmocka_unit_test(test_api_insertion_order),
      cmocka_unit_test(test_builder_plain_locked),
      cmocka_unit_test(test_builder_least_squares),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
