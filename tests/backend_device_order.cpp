// Orderings and P A Pᵀ made on the device, part of the generic backend suite (test_backend.cpp),
// for backends that take device arrays (CUDA): each against the host's own (permute_csr,
// rcm_order), array for array.
#include <setjmp.h>

#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backend_harness.hpp"
#include "backends/backend.hpp"
#include "conversion/reorder.hpp"
#include "conversion/reorder_rcm.hpp"
#include "host_reference.hpp"
#include "matrix/matrix.hpp"
#include "util/error.hpp"

// After every C++ header: cmocka's macros clash with <ios>.
extern "C" {
#include <cmocka.h>
}

using namespace suite;

namespace {

// A fixed-generator shuffle of 0..n-1 (Fisher-Yates).
std::vector<std::int32_t> shuffled_ids(std::size_t n, std::uint64_t seed) {
  std::vector<std::int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::int32_t(i);
  std::uint64_t st = 0x9e3779b97f4a7c15ull ^ seed;
  for (std::size_t i = n; i > 1; --i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(v[i - 1], v[std::size_t((st >> 33) % i)]);
  }
  return v;
}

// A canonical CSR (values 1) from an edge list, both directions and the diagonal unless asked.
cnc::csr_matrix from_edges(std::int32_t n,
                           const std::vector<std::pair<std::int32_t, std::int32_t>>& e,
                           bool symmetric = true) {
  auto rows = std::vector<std::vector<std::int32_t>>(std::size_t(n));
  for (std::int32_t i = 0; i < n; ++i) rows[std::size_t(i)].push_back(i);
  for (const auto& [i, j] : e) {
    rows[std::size_t(i)].push_back(j);
    if (symmetric) rows[std::size_t(j)].push_back(i);
  }
  cnc::csr_matrix m;
  m.n = n;
  m.row_ptr.assign(1, 0);
  for (auto& r : rows) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    m.col.insert(m.col.end(), r.begin(), r.end());
    m.row_ptr.push_back(std::int64_t(m.col.size()));
  }
  m.val.assign(m.col.size(), 1.0);
  return m;
}

}  // namespace

// P A Pᵀ made on the device (permute_device_csr) against permute_csr on the host, array for
// array: identity, reversed and random permutations of every test matrix, one with empty rows,
// none without rows or without entries, and a large one; a permutation of the wrong length is
// refused.
void test_device_permute(void**) {
  if (!g_backend->takes_device_arrays()) {
    std::printf("[  SKIP    ] %s takes no device arrays (P A Pᵀ is made on the host)\n",
                g_backend->name());
    return;
  }
  std::vector<std::pair<std::string, cnc::csr_matrix>> cases;
  for (const test_matrix& m : g_matrices) cases.emplace_back(m.name, cnc_test::from_ts(m.a));
  {  // empty rows (first, middle, last), the rest random
    ts_csr r = ts_random_spd(50, 4, 71);
    cnc::csr_matrix c = cnc_test::from_ts(r), e;
    e.n = c.n;
    e.row_ptr.assign(1, 0);
    for (std::int32_t i = 0; i < c.n; ++i) {
      if (i != 0 && i != 7 && i != 49)
        for (std::int64_t t = c.row_ptr[std::size_t(i)]; t < c.row_ptr[std::size_t(i) + 1]; ++t) {
          e.col.push_back(c.col[std::size_t(t)]);
          e.val.push_back(c.val[std::size_t(t)]);
        }
      e.row_ptr.push_back(std::int64_t(e.col.size()));
    }
    cases.emplace_back("gen:empty-rows", std::move(e));
    ts_csr_free(&r);
    cnc::csr_matrix none, no_entries;  // no rows; rows without entries
    none.row_ptr.assign(1, 0);
    no_entries.n = 5;
    no_entries.row_ptr.assign(6, 0);
    cases.emplace_back("gen:no-rows", std::move(none));
    cases.emplace_back("gen:no-entries", std::move(no_entries));
    ts_csr big = ts_random_spd(70003, 6, 72);
    cases.emplace_back("gen:random70003", cnc_test::from_ts(big));
    ts_csr_free(&big);
  }
  for (const auto& [name, c] : cases) {
    const std::size_t n = std::size_t(c.n);
    std::vector<std::int32_t> ids(n), rev(n), shuffled(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = rev[n - 1 - i] = shuffled[i] = std::int32_t(i);
    std::uint64_t st = 0x9e3779b97f4a7c15ull ^ n;
    for (std::size_t i = n; i > 1; --i) {  // Fisher-Yates with a fixed generator
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(shuffled[i - 1], shuffled[std::size_t((st >> 33) % i)]);
    }
    const auto up = g_backend->upload_csr(c);
    for (const auto* perm : {&ids, &rev, &shuffled}) {
      const cnc::csr_matrix want = cnc::permute_csr(c, *perm, 1);
      const auto got = g_backend->permute_device_csr(up->view, *perm);
      assert_int_equal(got->view.n, c.n);
      assert_int_equal(got->view.nnz, c.nnz());
      std::vector<std::int64_t> rp(n + 1);
      std::vector<std::int32_t> col(std::size_t(c.nnz()));
      std::vector<double> val(col.size());
      g_backend->copy_to_host(rp.data(), got->view.row_ptr, rp.size() * sizeof(std::int64_t));
      if (!col.empty()) {
        g_backend->copy_to_host(col.data(), got->view.col, col.size() * sizeof(std::int32_t));
        g_backend->copy_to_host(val.data(), got->view.val, val.size() * sizeof(double));
      }
      if (rp != want.row_ptr || !std::equal(col.begin(), col.end(), want.col.begin()) ||
          std::memcmp(val.data(), want.val.data(), val.size() * sizeof(double)) != 0)
        fail_msg("%s: P A Pᵀ made on the device differs from the host's", name.c_str());
    }
    if (n > 1) {
      const std::vector<std::int32_t> short_perm(n - 1, 0);
      try {
        g_backend->permute_device_csr(up->view, short_perm);
        fail_msg("%s: a permutation of the wrong length was taken", name.c_str());
      } catch (const cnc::error& e) {
        assert_int_equal(e.status(), CNC_ERR_INVALID_VALUE);
      }
    }
  }
}

// Reverse Cuthill–McKee made on the device (rcm_device, then rcm_finish for what it leaves)
// against rcm_order on the host, permutation for permutation: every test matrix as numbered and
// numbered at random; several components with lone vertices between them; more components than
// the device orders (the host finishes them); a pattern that is not symmetric; no rows, and rows
// without entries. A row longer than the device ranks is refused with CNC_ERR_UNSUPPORTED.
void test_device_rcm(void**) {
  if (!g_backend->takes_device_arrays()) {
    std::printf("[  SKIP    ] %s takes no device arrays (the ordering is made on the host)\n",
                g_backend->name());
    return;
  }
  std::vector<std::pair<std::string, cnc::csr_matrix>> cases;
  for (const test_matrix& m : g_matrices) {
    cnc::csr_matrix c = cnc_test::from_ts(m.a);
    const std::vector<std::int32_t> sh = shuffled_ids(std::size_t(c.n), 5);
    cases.emplace_back(m.name + " renumbered", cnc::permute_csr(c, sh, 1));
    cases.emplace_back(m.name, std::move(c));
  }
  {
    using edges = std::vector<std::pair<std::int32_t, std::int32_t>>;
    // Components: two grids (12 x 9 and 7 x 5), a path, lone vertices between, renumbered.
    edges e;
    std::int32_t n = 0;
    auto grid = [&](std::int32_t nx, std::int32_t ny) {
      for (std::int32_t y = 0; y < ny; ++y)
        for (std::int32_t x = 0; x < nx; ++x) {
          if (x + 1 < nx) e.emplace_back(n + y * nx + x, n + y * nx + x + 1);
          if (y + 1 < ny) e.emplace_back(n + y * nx + x, n + (y + 1) * nx + x);
        }
      n += nx * ny;
    };
    grid(12, 9);
    n += 3;  // lone
    grid(7, 5);
    for (std::int32_t i = 0; i < 20; ++i) e.emplace_back(n + i, n + i + 1);
    n += 21 + 4;  // the path, 4 lone
    auto renumbered = [&](const char* name, const cnc::csr_matrix& m, std::uint64_t seed) {
      cases.emplace_back(name, cnc::permute_csr(m, shuffled_ids(std::size_t(m.n), seed), 1));
    };
    renumbered("gen:components", from_edges(n, e), 7);
    // 300 small components (paths of 1-6 vertices) among 2 grids: more than
    // device_rcm_max_components, so the host orders the rest.
    e.clear();
    n = 0;
    grid(40, 30);
    std::uint64_t st = 11;
    auto step = [&st] { return st = st * 6364136223846793005ull + 1442695040888963407ull; };
    for (int c = 0; c < 300; ++c) {
      const std::int32_t len = std::int32_t((step() >> 33) % 6);
      for (std::int32_t i = 0; i < len; ++i) e.emplace_back(n + i, n + i + 1);
      n += len + 1;
    }
    grid(25, 25);
    renumbered("gen:many-components", from_edges(n, e), 13);
    // Not symmetric: a grid's edges one way only, plus random ones.
    e.clear();
    n = 0;
    grid(30, 20);
    for (int i = 0; i < 200; ++i) {
      const std::uint64_t r = step();
      e.emplace_back(std::int32_t((r >> 33) % 600), std::int32_t((r >> 13) % 600));
    }
    cases.emplace_back("gen:not-symmetric", from_edges(n, e, false));
    // A hub of 1000 leaves (a row of 1001 entries, at most device_rcm_max_row: a parent's
    // children ranked over many warp-wide tiles), every third leaf linked to the next (degrees 1
    // to 3), renumbered.
    e.clear();
    for (std::int32_t k = 1; k <= 1000; ++k) e.emplace_back(0, k);
    for (std::int32_t k = 1; k < 1000; k += 3) e.emplace_back(k, k + 1);
    renumbered("gen:hub", from_edges(1001, e), 17);
    cnc::csr_matrix none, no_entries;
    none.row_ptr.assign(1, 0);
    no_entries.n = 5;
    no_entries.row_ptr.assign(6, 0);
    cases.emplace_back("gen:no-rows", std::move(none));
    cases.emplace_back("gen:no-entries", std::move(no_entries));
  }
  bool finished_on_host = false;
  for (const auto& [name, c] : cases) {
    const std::vector<std::int32_t> want = cnc::rcm_order(c, 1);
    const auto up = g_backend->upload_csr(c);
    cnc::device_ordering d;
    try {
      d = g_backend->rcm_device(up->view);
    } catch (const cnc::error& e) {
      std::int64_t longest = 0;
      for (std::int32_t i = 0; i < c.n; ++i)
        longest = std::max(longest, c.row_ptr[std::size_t(i) + 1] - c.row_ptr[std::size_t(i)]);
      if (e.status() != CNC_ERR_UNSUPPORTED || longest <= cnc::device_rcm_max_row)
        fail_msg("%s: the device refused to order it (%s)", name.c_str(), e.what());
      std::printf("note: %s: %s\n", name.c_str(), e.what());
      continue;
    }
    assert_int_equal(d.perm.size(), std::size_t(c.n));
    if (d.placed < c.n) {
      finished_on_host = true;
      cnc::rcm_finish(c, 1, d.perm, d.placed, d.cursor);
    }
    if (d.perm != want) {
      std::size_t at = 0;
      while (at < want.size() && d.perm[at] == want[at]) ++at;
      fail_msg(
          "%s: the device's ordering differs from the host's at new index %zu of %zu "
          "(device placed %lld, %d components)",
          name.c_str(), at, want.size(), static_cast<long long>(d.placed), d.components);
    }
  }
  if (!finished_on_host) fail_msg("no case left components to the host");
}
