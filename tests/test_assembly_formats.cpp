// The automatic format choice must pick bcrs4 for dense 4x4 blocks and CSR for a scalar
// Laplacian (SELL on sliced backends), visible through the public API (CNC_FORMAT_USED,
// CNC_BLOCK_FILL_RATIO); a second solve on the same matrix reuses the resident system with the
// same statistics. The fingerprints that tell cncSolveCSR a matrix it already holds must not
// depend on the thread count and must change with any byte or the length.
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

// Past 8192 rows, a sample of block rows screens blocking out where it cannot pay: a scalar
// stencil never reaches the exact (full-pass) block count; a block system does, and gets its
// blocks.
// The complex choice: ZSELL's stored entries counted as its slices store them, and ZSELL taken
// up to complex_sell_bytes times ZCSR's bytes, not past it.
void test_choose_complex_format(void**) {
  // 70 complex rows (3 slices, the last padded): rows of 3 entries, row 40 of 30.
  std::vector<std::int64_t> rp{0};
  for (int i = 0; i < 70; ++i) rp.push_back(rp.back() + (i == 40 ? 30 : 3));
  std::vector<std::int32_t> col(std::size_t(rp.back()), 0);
  std::vector<double> val(2 * col.size(), 1.0);
  const cnc::zcsr_view z{70, rp, col, val};
  // Slice 0: 32 x 3; slice 1 (rows 32-63, row 40): 32 x 30; slice 2 (rows 64-69 and padding):
  // 32 x 3.
  assert_int_equal(cnc::zsell_entries(z), 32 * 3 + 32 * 30 + 32 * 3);
  const std::int64_t nnz = z.nnz();
  const double zcsr = cnc::matrix_bytes(140, nnz, cnc::format::zcsr, nnz, 8);
  const std::int32_t slices = 3;
  // The stored count whose ZSELL bytes are just within, and just past, the limit.
  const double per = 2 * 8 + 4;
  const auto within = std::int64_t((cnc::complex_sell_bytes * zcsr - (slices + 1) * 8) / per);
  assert_true(cnc::matrix_bytes(140, nnz, cnc::format::zsell, within, 8) <=
              cnc::complex_sell_bytes * zcsr);
  assert_int_equal(int(cnc::choose_complex_format(70, nnz, within, 8)), int(cnc::format::zsell));
  assert_int_equal(int(cnc::choose_complex_format(70, nnz, within + 1, 8)), int(cnc::format::zcsr));
  assert_int_equal(int(cnc::choose_complex_format(70, nnz, nnz, 8)), int(cnc::format::zsell));
  // This matrix: 1152 stored against 297 entries, far past the limit.
  assert_int_equal(int(cnc::choose_complex_format(70, nnz, cnc::zsell_entries(z), 8)),
                   int(cnc::format::zcsr));
}

void test_choose_format_screen(void**) {
  ts_csr p = ts_poisson_3d(24), d4 = ts_dense_blocks(2500, 4, 3);  // 13824 and 10000 rows
  for (bool sliced : {false, true})
    for (int bytes : {8, 4}) {
      int exact = 0;
      const cnc::csr_matrix pm = cnc_test::from_ts(p), dm = cnc_test::from_ts(d4);
      const cnc::format fp =
          cnc::choose_format(pm, bytes, sliced, sliced ? cnc::sell_entries(pm) : 0, [&](int b) {
            ++exact;
            return cnc::count_blocks(pm, b);
          });
      assert_true(fp == (sliced ? cnc::format::sell : cnc::format::csr));
      if (exact != 0)
        fail_msg("stencil: %d exact block counts, the screen should rule them out", exact);
      const cnc::format fd =
          cnc::choose_format(dm, bytes, sliced, sliced ? cnc::sell_entries(dm) : 0, [&](int b) {
            ++exact;
            return cnc::count_blocks(dm, b);
          });
      assert_true(fd == cnc::format::bcrs4);
      assert_true(exact > 0);
    }
  ts_csr_free(&p);
  ts_csr_free(&d4);
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
      cmocka_unit_test(test_choose_format_internal),   cmocka_unit_test(test_choose_format_screen),
      cmocka_unit_test(test_choose_complex_format),    cmocka_unit_test(test_choose_format_public),
      cmocka_unit_test(test_reused_matrix_statistics), cmocka_unit_test(test_fingerprint),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
