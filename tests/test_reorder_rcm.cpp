// Reverse Cuthill–McKee (src/conversion/reorder_rcm.hpp): a permutation for every kind of
// pattern (random SPD, a randomly numbered 3-D stencil, several components and isolated
// vertices, n = 0 and 1); each component a contiguous block that is exactly the sequential
// Cuthill–McKee order from that block's first vertex (an independent textbook implementation
// here); the stencil's bandwidth near the natural ordering's and within 1.5x of Boost.Graph's
// cuthill_mckee_ordering; the same permutation for 1, 2, 3 and 7 threads; P A Pᵀ
// (permute_csr, permute_zcsr) against the matrix's triplets renumbered, rows sorted, for empty
// rows, rows of 32 and 33 entries (the last placed by rank, the first sorted) and a long one,
// for 1 and 3 threads; and, printed only, the time for 2 M rows
// against Boost (ordering and P A Pᵀ).
#include <setjmp.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>  // before cmocka.h, whose fail() macro breaks std::ios
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#if __has_include(<boost/graph/cuthill_mckee_ordering.hpp>)
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/cuthill_mckee_ordering.hpp>
#include <boost/property_map/property_map.hpp>
#define HAVE_BOOST_GRAPH 1
#endif

extern "C" {
#include <cmocka.h>
}

#include "conversion/reorder.hpp"
#include "conversion/reorder_rcm.hpp"
#include "matrix/matrix.hpp"
#include "util/parallel.hpp"

namespace {

using i32 = std::int32_t;
using i64 = std::int64_t;
using edges = std::vector<std::pair<i32, i32>>;

// Canonical CSR of the symmetric closure of `e` (of `e` alone when not `symmetric`), plus the
// diagonal of the rows in `diag`.
cnc::csr_matrix pattern(i32 n, edges e, const std::vector<i32>& diag, bool symmetric = true) {
  const std::size_t m = symmetric ? e.size() : 0;
  for (std::size_t k = 0; k < m; ++k) e.emplace_back(e[k].second, e[k].first);
  for (i32 i : diag) e.emplace_back(i, i);
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  cnc::csr_matrix a;
  a.n = n;
  a.row_ptr.assign(std::size_t(n) + 1, 0);
  for (auto& [i, j] : e) ++a.row_ptr[std::size_t(i) + 1];
  for (i32 i = 0; i < n; ++i) a.row_ptr[std::size_t(i) + 1] += a.row_ptr[std::size_t(i)];
  for (auto& ij : e) a.col.push_back(ij.second);
  a.val.assign(e.size(), 1.0);
  return a;
}

std::vector<i32> shuffled(i32 n, std::uint64_t seed) {
  std::vector<i32> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), std::mt19937_64(seed));
  return p;
}

// A random symmetric pattern with a full diagonal (that of an SPD matrix): ~`per_row` random
// neighbours per row.
cnc::csr_matrix random_spd(i32 n, int per_row, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  edges e;
  for (i32 i = 0; i < n; ++i)
    for (int k = 0; k < per_row / 2; ++k) {
      const i32 j = i32(rng() % std::uint64_t(n));
      if (j != i) e.emplace_back(i, j);
    }
  std::vector<i32> d(static_cast<std::size_t>(n));
  std::iota(d.begin(), d.end(), 0);
  return pattern(n, std::move(e), d);
}

// The 7-point stencil on an m^3 grid, unknown (x, y, z) numbered new_id[x + m (y + m z)]
// (identity when `seed` is 0), built row by row (2 M rows in about a second).
cnc::csr_matrix stencil(i32 m, std::uint64_t seed) {
  const i32 n = m * m * m;
  std::vector<i32> new_id(static_cast<std::size_t>(n));
  if (seed)
    new_id = shuffled(n, seed);
  else
    std::iota(new_id.begin(), new_id.end(), 0);
  std::vector<i32> old_id(static_cast<std::size_t>(n));
  for (i32 o = 0; o < n; ++o) old_id[std::size_t(new_id[std::size_t(o)])] = o;
  cnc::csr_matrix a;
  a.n = n;
  a.row_ptr.assign(std::size_t(n) + 1, 0);
  a.col.reserve(std::size_t(n) * 7);
  for (i32 i = 0; i < n; ++i) {
    const i32 o = old_id[std::size_t(i)], x = o % m, y = o / m % m, z = o / (m * m);
    i32 row[7], k = 0;
    row[k++] = i;
    if (x > 0) row[k++] = new_id[std::size_t(o - 1)];
    if (x < m - 1) row[k++] = new_id[std::size_t(o + 1)];
    if (y > 0) row[k++] = new_id[std::size_t(o - m)];
    if (y < m - 1) row[k++] = new_id[std::size_t(o + m)];
    if (z > 0) row[k++] = new_id[std::size_t(o - m * m)];
    if (z < m - 1) row[k++] = new_id[std::size_t(o + m * m)];
    for (i32 h = 1; h < k; ++h)  // insertion sort (std::sort on 7 trips GCC's -Warray-bounds)
      for (i32 g = h; g > 0 && row[g] < row[g - 1]; --g) std::swap(row[g], row[g - 1]);
    a.col.insert(a.col.end(), row, row + k);
    a.row_ptr[std::size_t(i) + 1] = i64(a.col.size());
  }
  a.val.assign(a.col.size(), 1.0);
  return a;
}

// Several components, randomly numbered: a 20 x 15 grid, a path, a triangle, an edge, a star,
// a random SPD block, and isolated vertices (some with a diagonal entry, some with empty rows).
cnc::csr_matrix components(std::uint64_t seed) {
  edges e;
  std::vector<i32> diag;
  i32 n = 0;
  for (i32 y = 0; y < 15; ++y)
    for (i32 x = 0; x < 20; ++x) {
      if (x + 1 < 20) e.emplace_back(n + y * 20 + x, n + y * 20 + x + 1);
      if (y + 1 < 15) e.emplace_back(n + y * 20 + x, n + (y + 1) * 20 + x);
      diag.push_back(n + y * 20 + x);
    }
  n += 300;
  for (i32 k = 0; k + 1 < 40; ++k) e.emplace_back(n + k, n + k + 1);
  n += 40;
  e.insert(e.end(), {{n, n + 1}, {n + 1, n + 2}, {n, n + 2}, {n + 3, n + 4}});
  n += 5;
  for (i32 k = 1; k <= 30; ++k) e.emplace_back(n, n + k);
  n += 31;
  const cnc::csr_matrix r = random_spd(200, 4, seed + 1);
  for (i32 i = 0; i < r.n; ++i)
    for (i64 k = r.row_ptr[std::size_t(i)]; k < r.row_ptr[std::size_t(i) + 1]; ++k)
      if (r.col[std::size_t(k)] > i) e.emplace_back(n + i, n + r.col[std::size_t(k)]);
  n += 200;
  diag.insert(diag.end(), {n, n + 2, n + 4});
  n += 6;
  const std::vector<i32> p = shuffled(n, seed);
  for (auto& [i, j] : e) i = p[std::size_t(i)], j = p[std::size_t(j)];
  for (i32& d : diag) d = p[std::size_t(d)];
  return pattern(n, std::move(e), diag);
}

std::vector<i32> inverse(const std::vector<i32>& perm) {
  std::vector<i32> q(perm.size(), -1);
  for (std::size_t t = 0; t < perm.size(); ++t) {
    assert_true(perm[t] >= 0 && std::size_t(perm[t]) < perm.size());
    assert_int_equal(q[std::size_t(perm[t])], -1);
    q[std::size_t(perm[t])] = i32(t);
  }
  return q;
}

i64 bandwidth(const cnc::csr_matrix& a, const std::vector<i32>& perm) {
  const std::vector<i32> q = inverse(perm);
  i64 bw = 0;
  for (i32 i = 0; i < a.n; ++i)
    for (i64 k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k)
      bw = std::max<i64>(bw,
                         std::abs(i64(q[std::size_t(i)]) - q[std::size_t(a.col[std::size_t(k)])]));
  return bw;
}

// Checks that perm is a permutation and that, read backwards, it is made of blocks, one per
// component, each the textbook (sequential, queue-based) Cuthill–McKee order from its first
// vertex: children of each vertex in increasing (degree without the diagonal, index).
void check_rcm(const cnc::csr_matrix& a, const std::vector<i32>& perm) {
  assert_int_equal(i64(perm.size()), a.n);
  inverse(perm);
  const std::size_t n = std::size_t(a.n);
  std::vector<i32> deg(n);
  for (std::size_t i = 0; i < n; ++i) {
    deg[i] = i32(a.row_ptr[i + 1] - a.row_ptr[i]);
    for (i64 k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) deg[i] -= a.col[std::size_t(k)] == i32(i);
  }
  std::vector<i32> cm(perm.rbegin(), perm.rend()), mine;
  std::vector<char> seen(n, 0);
  for (std::size_t s = 0; s < n;) {
    const i32 root = cm[s];
    assert_false(seen[std::size_t(root)]);
    std::deque<i32> queue{root};
    seen[std::size_t(root)] = 1;
    std::size_t t = s;
    while (!queue.empty()) {
      const i32 v = queue.front();
      queue.pop_front();
      if (cm[t] != v) fail_msg("position %zu: %d, textbook Cuthill-McKee has %d", t, cm[t], v);
      ++t;
      mine.clear();
      for (i64 k = a.row_ptr[std::size_t(v)]; k < a.row_ptr[std::size_t(v) + 1]; ++k) {
        const i32 w = a.col[std::size_t(k)];
        if (!seen[std::size_t(w)]) seen[std::size_t(w)] = 1, mine.push_back(w);
      }
      std::sort(mine.begin(), mine.end(), [&](i32 x, i32 y) {
        return std::pair(deg[std::size_t(x)], x) < std::pair(deg[std::size_t(y)], y);
      });
      queue.insert(queue.end(), mine.begin(), mine.end());
    }
    s = t;
  }
}

#ifdef HAVE_BOOST_GRAPH
using boost_graph =
    boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                       boost::no_property, std::uint32_t, std::uint64_t>;
// Boost.Graph's reverse Cuthill–McKee of the same graph (diagonal left out): perm[new] = old.
std::vector<i32> boost_rcm(const cnc::csr_matrix& a, double* build_s, double* order_s) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> src, dst;
  src.reserve(a.col.size());
  dst.reserve(a.col.size());
  for (i32 i = 0; i < a.n; ++i)
    for (i64 k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k)
      if (a.col[std::size_t(k)] != i)
        src.push_back(std::uint32_t(i)), dst.push_back(std::uint32_t(a.col[std::size_t(k)]));
  boost_graph g(boost::construct_inplace_from_sources_and_targets, src, dst, std::size_t(a.n));
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> inv(std::size_t(a.n));
  std::vector<boost::default_color_type> colors(std::size_t(a.n));
  boost::cuthill_mckee_ordering(
      g, inv.rbegin(),
      boost::make_iterator_property_map(colors.begin(), get(boost::vertex_index, g)),
      boost::make_out_degree_map(g));
  const auto t2 = std::chrono::steady_clock::now();
  if (build_s) *build_s = std::chrono::duration<double>(t1 - t0).count();
  if (order_s) *order_s = std::chrono::duration<double>(t2 - t1).count();
  return std::vector<i32>(inv.begin(), inv.end());
}
#endif

void test_permutation(void**) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const cnc::csr_matrix r = random_spd(i32(500 * seed), 6, seed);
    check_rcm(r, cnc::rcm_order(r, 2));
    const cnc::csr_matrix c = components(seed);
    check_rcm(c, cnc::rcm_order(c, 2));
  }
  const cnc::csr_matrix s = stencil(12, 7);
  check_rcm(s, cnc::rcm_order(s, 2));
  {  // A hub of 20 000 children (a power-law graph's), some leaves linked: sorted as a long list.
    edges h;
    for (i32 k = 1; k <= 20000; ++k) h.emplace_back(0, k);
    for (i32 k = 1; k < 20000; k += 3) h.emplace_back(k, k + 1);
    const std::vector<i32> p = shuffled(20001, 3);
    for (auto& [i, j] : h) i = p[std::size_t(i)], j = p[std::size_t(j)];
    const cnc::csr_matrix hub = pattern(20001, std::move(h), {});
    const std::vector<i32> one = cnc::rcm_order(hub, 1);
    check_rcm(hub, one);
    assert_true(cnc::rcm_order(hub, 3) == one);
  }
  // n = 0; n = 1 with and without its diagonal; two isolated vertices.
  assert_true(cnc::rcm_order(pattern(0, {}, {}), 2).empty());
  assert_true(cnc::rcm_order(pattern(1, {}, {}), 1) == std::vector<i32>{0});
  assert_true(cnc::rcm_order(pattern(1, {}, {0}), 3) == std::vector<i32>{0});
  check_rcm(pattern(2, {}, {1}), cnc::rcm_order(pattern(2, {}, {1}), 2));
  // Outside the contract, a pattern that is not symmetric: still a permutation.
  std::mt19937_64 rng(5);
  edges e;
  for (int k = 0; k < 3000; ++k) e.emplace_back(i32(rng() % 2000), i32(rng() % 2000));
  const cnc::csr_matrix d = pattern(2000, e, {}, false);
  for (int t : {1, 3}) inverse(cnc::rcm_order(d, t));
}

// Levels - 1 of a breadth-first search from `root`.
i32 eccentricity(const cnc::csr_matrix& a, i32 root) {
  std::vector<i32> dist(std::size_t(a.n), -1);
  std::deque<i32> queue{root};
  dist[std::size_t(root)] = 0;
  i32 ecc = 0;
  while (!queue.empty()) {
    const i32 v = queue.front();
    queue.pop_front();
    ecc = std::max(ecc, dist[std::size_t(v)]);
    for (i64 k = a.row_ptr[std::size_t(v)]; k < a.row_ptr[std::size_t(v) + 1]; ++k)
      if (dist[std::size_t(a.col[std::size_t(k)])] < 0) {
        dist[std::size_t(a.col[std::size_t(k)])] = dist[std::size_t(v)] + 1;
        queue.push_back(a.col[std::size_t(k)]);
      }
  }
  return ecc;
}

void test_bandwidth(void**) {
  for (i32 m : {16, 40}) {
    const cnc::csr_matrix a = stencil(m, 11);
    const std::vector<i32> perm = cnc::rcm_order(a, 2);
    check_rcm(a, perm);
    assert_int_equal(eccentricity(a, perm.back()), 3 * (m - 1));  // started at a corner
    std::vector<i32> id(std::size_t(a.n));
    std::iota(id.begin(), id.end(), 0);
    const i64 mine = bandwidth(a, perm), random = bandwidth(a, id);
    std::printf("  %d^3 stencil, random numbering: bandwidth %lld (natural %d, random %lld)", m,
                (long long)mine, m * m, (long long)random);
    assert_true(mine <= 2 * i64(m) * m);
    assert_true(mine * 10 < random);
#ifdef HAVE_BOOST_GRAPH
    const i64 theirs = bandwidth(a, boost_rcm(a, nullptr, nullptr));
    std::printf(", Boost.Graph %lld", (long long)theirs);
    assert_true(2 * mine <= 3 * theirs);
#endif
    std::printf("\n");
  }
}

void test_threads(void**) {
  const cnc::csr_matrix graphs[] = {random_spd(20000, 8, 5), stencil(40, 3), components(9),
                                    random_spd(3000, 2, 4)};
  for (const cnc::csr_matrix& a : graphs) {
    const std::vector<i32> one = cnc::rcm_order(a, 1);
    check_rcm(a, one);
    for (int t : {2, 3, 7}) assert_true(cnc::rcm_order(a, t) == one);
    assert_true(cnc::rcm_order(a, 2) == one);  // and from run to run
  }
}

// rcm_finish (the host's completion of an ordering the CUDA backend began): given the positions
// of the first j components of rcm_order's own result (a component's positions are contiguous),
// and the rest of perm garbage, it returns rcm_order's result, for the cursor the device reports
// (the lowest vertex of component j, or 0 after the first) and for cursor 0; given those
// positions in another order, it keeps them.
void test_finish(void**) {
  for (std::uint64_t seed : {9, 21}) {
    const cnc::csr_matrix a = components(seed);
    const std::size_t n = std::size_t(a.n);
    const std::vector<i32> full = cnc::rcm_order(a, 1);
    std::vector<i32> comp(n, -1);  // component of each vertex, by a search
    i32 ncomp = 0;
    for (std::size_t s = 0; s < n; ++s) {
      if (comp[s] >= 0) continue;
      std::vector<i32> stack{i32(s)};
      comp[s] = ncomp;
      while (!stack.empty()) {
        const i32 u = stack.back();
        stack.pop_back();
        for (i64 k = a.row_ptr[std::size_t(u)]; k < a.row_ptr[std::size_t(u) + 1]; ++k)
          if (comp[std::size_t(a.col[std::size_t(k)])] < 0) {
            comp[std::size_t(a.col[std::size_t(k)])] = ncomp;
            stack.push_back(a.col[std::size_t(k)]);
          }
      }
      ++ncomp;
    }
    i64 placed = 0;
    for (int j = 1; j <= 4; ++j) {
      const i32 c = comp[std::size_t(full[n - 1 - std::size_t(placed)])];
      while (placed < i64(n) && comp[std::size_t(full[n - 1 - std::size_t(placed)])] == c) ++placed;
      if (placed == i64(n)) break;
      i32 cursor = 0;  // after the first: the lowest vertex of component j
      if (j > 1)
        while (comp[std::size_t(cursor)] != c) ++cursor;
      for (const i32 from : {cursor, i32(0)})
        for (const int threads : {1, 3}) {
          std::vector<i32> perm(n, -7);
          std::copy(full.end() - placed, full.end(), perm.end() - placed);
          cnc::rcm_finish(a, threads, perm, placed, from);
          // The positions given are kept as they are, not made again: the same components
          // placed in another order give that order, then the rest as before.
          std::vector<i32> other(n, -7), want = full;
          std::reverse_copy(full.end() - placed, full.end(), other.end() - placed);
          std::reverse(want.end() - placed, want.end());
          cnc::rcm_finish(a, threads, other, placed, from);
          if (perm != full || other != want)
            fail_msg(
                "seed %llu: finished after %d components (%lld placed, cursor %d, %d "
                "threads) it differs from rcm_order",
                static_cast<unsigned long long>(seed), j, static_cast<long long>(placed), from,
                threads);
        }
    }
  }
}

// The triplets (new row, new column, values) of P A Pᵀ from A's, sorted: the reference.
template <int W, class M>
std::vector<std::pair<std::pair<i32, i32>, std::vector<double>>> renumbered(
    const M& a, const std::vector<i32>& perm) {
  const std::vector<i32> inv = inverse(perm);
  std::vector<std::pair<std::pair<i32, i32>, std::vector<double>>> t;
  for (i32 i = 0; i < a.n; ++i)
    for (i64 k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k)
      t.push_back({{inv[std::size_t(i)], inv[std::size_t(a.col[std::size_t(k)])]},
                   std::vector<double>(a.val.begin() + W * k, a.val.begin() + W * (k + 1))});
  std::sort(t.begin(), t.end());
  return t;
}
template <int W, class M>
void check_permuted(const M& a, const M& p, const std::vector<i32>& perm) {
  assert_int_equal(p.n, a.n);
  assert_int_equal(p.nnz(), a.nnz());
  assert_int_equal(p.row_ptr[0], 0);
  std::vector<std::pair<std::pair<i32, i32>, std::vector<double>>> got;
  for (i32 r = 0; r < p.n; ++r) {
    const i32 old = perm[std::size_t(r)];  // row r of P A Pᵀ is row perm[r] of A
    assert_int_equal(p.row_ptr[std::size_t(r) + 1] - p.row_ptr[std::size_t(r)],
                     a.row_ptr[std::size_t(old) + 1] - a.row_ptr[std::size_t(old)]);
    for (i64 k = p.row_ptr[std::size_t(r)]; k < p.row_ptr[std::size_t(r) + 1]; ++k) {
      if (k > p.row_ptr[std::size_t(r)])
        assert_true(p.col[std::size_t(k - 1)] < p.col[std::size_t(k)]);
      got.push_back({{r, p.col[std::size_t(k)]},
                     std::vector<double>(p.val.begin() + W * k, p.val.begin() + W * (k + 1))});
    }
  }
  assert_true(got == renumbered<W>(a, perm));
}

// Values distinct per entry, so a value moved with the wrong column shows.
void number_values(cnc::csr_matrix& a) {
  for (std::size_t k = 0; k < a.val.size(); ++k) a.val[k] = 1.0 + double(k);
}

void test_permute(void**) {
  // Stars of 31, 32 and 100 leaves (rows of 32 entries: placed by rank; 33 and 101: sorted),
  // empty rows and the components; a random SPD; a random stencil of 32 768 rows, enough pieces
  // for 3 threads to run.
  edges e;
  for (i32 k = 1; k <= 100; ++k) e.emplace_back(7, 7 + k);
  for (i32 k = 1; k <= 31; ++k) e.emplace_back(120, 120 + k);
  for (i32 k = 1; k <= 32; ++k) e.emplace_back(160, 160 + k);
  // And 100 stars of 40 leaves over 40 000 rows: rows sorted on 3 threads at once.
  edges hubs;
  for (i32 h = 0; h < 40000; h += 400)
    for (i32 k = 1; k <= 40; ++k) hubs.emplace_back(h, h + k);
  cnc::csr_matrix graphs[] = {pattern(300, e, {7, 8, 120, 160, 250}), components(11),
                              random_spd(5000, 8, 2), stencil(32, 5), pattern(40000, hubs, {})};
  for (cnc::csr_matrix& a : graphs) {
    number_values(a);
    for (const std::vector<i32>& perm : {shuffled(a.n, 17), cnc::rcm_order(a, 2)}) {
      const cnc::csr_matrix one = cnc::permute_csr(a, perm, 1);
      check_permuted<1>(a, one, perm);
      const cnc::csr_matrix three = cnc::permute_csr(a, perm, 3);
      assert_true(three.row_ptr == one.row_ptr && three.col == one.col && three.val == one.val);
      // The complex form: the same pattern, (re, im) = (v, -v / 2) moving together.
      cnc::zcsr_matrix z;
      z.n = a.n;
      z.row_ptr = a.row_ptr;
      z.col = a.col;
      for (double v : a.val) z.val.insert(z.val.end(), {v, -0.5 * v});
      check_permuted<2>(z, cnc::permute_zcsr(z, perm, 3), perm);
    }
  }
}

double seconds_of(const cnc::csr_matrix& a, int threads, std::vector<i32>& perm) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    perm = cnc::rcm_order(a, threads);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// 128^3 = 2.1 M rows, randomly numbered: the time is printed, never checked (48^3 under the
// sanitizers, which take a minute over the big one).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr i32 timing_m = 48;
#else
constexpr i32 timing_m = 128;
#endif
void test_timing(void**) {
  const cnc::csr_matrix a = stencil(timing_m, 21);
  std::printf("  %d^3 stencil (%d rows, %lld entries), randomly numbered:\n", timing_m, a.n,
              (long long)a.nnz());
  std::vector<i32> first;
  cnc::csr_matrix first_pa;
  std::vector<int> counts{1, 2};
  if (cnc::host_threads() > 2) counts.push_back(cnc::host_threads());
  for (int threads : counts) {
    std::vector<i32> p;
    const double s = seconds_of(a, threads, p);
    if (first.empty()) first = p;
    assert_true(p == first);
    double sp = 1e30;  // P A Pᵀ, best of 3
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      cnc::csr_matrix pa = cnc::permute_csr(a, p, threads);
      sp = std::min(sp,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (first_pa.n == 0)
        first_pa = std::move(pa);  // the same bits for every thread count
      else
        assert_true(pa.row_ptr == first_pa.row_ptr && pa.col == first_pa.col &&
                    pa.val == first_pa.val);
    }
    std::printf("  %2d thread(s): rcm_order %.3f s, permute_csr %.3f s\n", threads, s, sp);
  }
  std::printf("  bandwidth %lld after RCM\n", (long long)bandwidth(a, first));
#ifdef HAVE_BOOST_GRAPH
  double build = 0, order = 0;
  const std::vector<i32> b = boost_rcm(a, &build, &order);
  std::printf("  Boost.Graph: %.3f s graph + %.3f s cuthill_mckee_ordering, bandwidth %lld\n",
              build, order, (long long)bandwidth(a, b));
#endif
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_permutation), cmocka_unit_test(test_bandwidth),
      cmocka_unit_test(test_threads),     cmocka_unit_test(test_finish),
      cmocka_unit_test(test_permute),     cmocka_unit_test(test_timing),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
