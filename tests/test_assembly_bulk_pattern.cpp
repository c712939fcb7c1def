// Bulk insertion (parallel) and pattern-first assembly, internal and public: add_ij_many and
// cncAddIJCoefficients on any number of threads, in one or several calls, and a pattern filled
// through each entry point (offsets, global indices, plain adds, bulk calls, rows) must give the
// bits of one add_ij / cncAddIJCoefficient per entry, with duplicates and locked variables.
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

int main() {
  const struct CMUnitTest tests[] = {
      // Bulk insertion
      cmocka_unit_test(test_bulk_parallel_same_bits),
      cmocka_unit_test(test_api_bulk_threads),
      // Pattern-first assembly
      cmocka_unit_test(test_pattern_same_system),
      cmocka_unit_test(test_pattern_rows),
      cmocka_unit_test(test_pattern_public),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
