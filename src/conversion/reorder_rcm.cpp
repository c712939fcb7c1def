// Reverse Cuthill–McKee ordering (see reorder_rcm.hpp), in O(n + nnz) work on every core.
//
// 1. Degrees, and the vertex of smallest (degree, index) that has a neighbour: the start of the
//    first component. Each later component starts at the lowest vertex not placed yet. (A
//    union-find that gave every component its smallest-degree vertex cost as much as a search on
//    one thread and a third of the whole on 16; George–Liu works from any start.)
// 2. In each component, George–Liu: a breadth-first search from the start m that only counts
//    levels gives the eccentricity and the vertex x of smallest (degree, index) in the last level;
//    the ordering search then runs from x, and reports x's eccentricity and last level in turn.
//    ecc(x) >= dist(x, m) = ecc(m): when equal, x is kept (m lies in x's last level, so x is as
//    peripheral as m) and the search did both jobs; when larger, its result is undone and the
//    search runs again from x's last-level candidate, at most kMaxSweeps searches in all.
// 3. Both searches are level-synchronous, one parallel_pieces call per level, the pool kept
//    warm between levels (small levels run inline; a level's result does not depend on how it is
//    cut into pieces). Cuthill–McKee places
//    the children of each frontier vertex, sorted by (degree, index), in the order of their
//    parents, each unplaced vertex the child of its first-placed neighbour. Each vertex gets a key
//    that orders it as its final position will: (parent's position << 31) | rank among its
//    parent's sorted children. In the call for level k, each vertex of level k takes as children
//    the neighbours it claimed (listed in the previous call) whose claim still equals its key,
//    sorts and keys them; then each child claims its unplaced neighbours with an atomic minimum
//    of its key, listing those it lowered. Claims made in one call are read in the next, so a
//    level costs one call and one pass over its children's rows. Keys grow from level to level,
//    so a claim never lowers that of a vertex already placed or collected; the final claim of a
//    vertex is the smallest key offered, whatever order the threads ran in, and the vertex is in
//    the list of the child that offered it (another list may hold it too: its claim then tells).
//    The new level is the pieces' lists in piece order: its order and every key are the same for
//    any thread count.
// 4. Positions are written reversed (perm[n - 1 - p]), which is the final reversal.
#include "conversion/reorder_rcm.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <limits>
#include <utility>

#include "assembly/hash_coo.hpp"  // advise_huge_pages
#include "util/parallel.hpp"
#include "util/prefetch.hpp"

namespace cnc {

namespace {

using i32 = std::int32_t;
using i64 = std::int64_t;

constexpr i64 kFree = std::numeric_limits<i64>::max();    // claim of a vertex not reached
constexpr i64 kPlaced = std::numeric_limits<i64>::min();  // claim of a root or lone vertex
constexpr i64 row_grain = 4096;      // rows per piece of the passes over the whole matrix
constexpr i64 inline_below = 512;    // search levels of fewer vertices run on one thread
constexpr i64 min_level_grain = 32;  // frontier vertices per piece, at least
constexpr int kMaxSweeps = 4;        // searches per component: the counting one + ordering ones

template <class T>
T load(T& x) {
  return std::atomic_ref<T>(x).load(std::memory_order_relaxed);
}
template <class T>
void store(T& x, T v) {
  std::atomic_ref<T>(x).store(v, std::memory_order_relaxed);
}
// x = min(x, v), atomically; whether v was written.
inline bool atomic_min(i64& x, i64 v) {
  std::atomic_ref<i64> a(x);
  i64 cur = a.load(std::memory_order_relaxed);
  while (v < cur)
    if (a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) return true;
  return false;
}
// (degree, index) as one integer: Cuthill–McKee's order of siblings and George–Liu's choice.
inline i64 deg_key(i32 d, i32 v) { return (i64(d) << 32) | i64(v); }

// What the searches read and write per vertex, on one cache line.
struct alignas(16) node {
  i64 claim;            // kFree, the key of the vertex that claimed it, or kPlaced
  i32 deg;              // neighbours other than the vertex itself
  std::uint32_t stamp;  // the last counting search that reached it
};

// A vertex of an ordering level with its key.
// nt vertices from tb on in the tentative pool of the piece that made it are the neighbours it
// claimed (some may have been claimed since by a smaller key).
struct item {
  i64 key;
  i32 v;
  i32 nt;
  i64 tb;
};
inline i32 vertex_of(i32 v) { return v; }
inline i32 vertex_of(const item& it) { return it.v; }

// Software prefetch for the vertex list v (processed in order, now at t): the row offsets 16
// ahead, the row 8 ahead, the nodes of the row's neighbours 4 ahead. The searches wait on memory
// (the numbering may be random); this keeps several vertices' loads in flight.
template <class T>
inline void prefetch_rows(const i64* ptr, const i32* col, const node* nodes, const T* v, i64 t,
                          i64 count) {
  if (t + 16 < count) prefetch(ptr + vertex_of(v[t + 16]));
  if (t + 8 < count) prefetch(col + ptr[vertex_of(v[t + 8])]);
  if (t + 4 < count) {
    const i32 u = vertex_of(v[t + 4]);
    for (i64 k = ptr[u]; k < ptr[u + 1]; ++k) prefetch(nodes + col[k]);
  }
}

// One level of a search: what the pieces of the call that found it collected, in piece order.
template <class T>
struct level {
  std::vector<std::vector<T>> piece = std::vector<std::vector<T>>(1024);
  std::vector<std::vector<i32>> tent = std::vector<std::vector<i32>>(1024);  // ordering levels
  std::vector<i64> off = std::vector<i64>(1025, 0);  // off[q]: items in pieces before q
  i64 pieces = 0;
  i64 size() const { return off[std::size_t(pieces)]; }
  void set_one(const T& x) {
    piece[0].assign(1, x);
    pieces = 1;
    off[1] = 1;
  }
  void finish(i64 np) {
    pieces = np;
    for (i64 q = 0; q < np; ++q)
      off[std::size_t(q + 1)] = off[std::size_t(q)] + i64(piece[std::size_t(q)].size());
  }
  // f(t, q, items, count) for the items [b, e) of the level, in order, as contiguous runs: item
  // t of the level is items[0], made by piece q.
  template <class F>
  void for_range(i64 b, i64 e, F&& f) const {
    if (b >= e) return;
    std::size_t q =
        std::size_t(std::upper_bound(off.begin(), off.begin() + pieces + 1, b) - off.begin() - 1);
    while (b < e) {
      const i64 k = b - off[q], count = std::min(e, off[q + 1]) - b;
      if (count > 0) f(b, q, piece[q].data() + k, count);
      b += count;
      ++q;
    }
  }
  // The smallest (degree, index) vertex of the level.
  i32 least(const node* nodes) const {
    i64 m = kFree;
    for_range(0, size(), [&](i64, std::size_t, const T* x, i64 count) {
      for (i64 t = 0; t < count; ++t) {
        const i32 v = vertex_of(x[t]);
        m = std::min(m, deg_key(nodes[v].deg, v));
      }
    });
    return i32(m & 0xffffffff);
  }
};

// What one search found: levels - 1, the last level's smallest (degree, index) vertex, and the
// number of vertices reached (ordering searches only).
struct sweep {
  i32 ecc = 0;
  i32 last = 0;
  i64 reached = 0;
};

class rcm {
 public:
  rcm(const csr_view& a, int threads)
      : n_(a.n), threads_(host_threads(threads)), ptr_(a.row_ptr.data()), col_(a.col.data()) {}

  // The ordering; or, with `placed` > 0, its rest: perm's first `placed` positions (components
  // ordered the same way elsewhere) kept, the next component looked for from `cursor` on.
  std::vector<i32> run(std::vector<i32> perm = {}, i64 placed = 0, i64 cursor = 0) {
    perm_ = std::move(perm);
    perm_.resize(std::size_t(n_));
    if (n_ == 0) return std::move(perm_);
    i32 start = degrees();
    i64 pos = placed;
    if (placed > 0) {
      start = -1;
      parallel_pieces(placed, row_grain, threads_, [&](i64, i64 b, i64 e) {
        for (i64 p = b; p < e; ++p)
          nodes_[std::size_t(perm_[std::size_t(n_ - 1 - p)])].claim = kPlaced;
      });
    }
    while (pos < n_) {
      if (start < 0) cursor = start = next_free(cursor);
      if (nodes_[std::size_t(start)].deg == 0) {
        nodes_[std::size_t(start)].claim = kPlaced;
        perm_[std::size_t(n_ - 1 - pos++)] = start;
        start = -1;
        continue;
      }
      const sweep first = count_levels(start);
      i32 ecc = first.ecc, x = first.last;
      for (int s = 2;; ++s) {
        const sweep o = order_from(x, pos);
        if (o.ecc > ecc && s < kMaxSweeps) {
          undo(pos, o.reached);
          ecc = o.ecc;
          x = o.last;
          continue;
        }
        pos += o.reached;
        break;
      }
      start = -1;
    }
    return std::move(perm_);
  }

 private:
  // Degrees; claims free. Returns the vertex of smallest (degree, index) among those with a
  // neighbour, or -1.
  i32 degrees() {
    const std::size_t n = std::size_t(n_);
    nodes_.resize(n);
    // Random access all over: 2 MiB pages save most TLB misses (asked before first touch).
    advise_huge_pages(nodes_.data(), n * sizeof(node));
    node* nodes = nodes_.data();
    std::vector<i64> least(std::size_t(piece_count(n_, row_grain)), kFree);
    parallel_pieces(n_, row_grain, threads_, [&](i64 q, i64 b, i64 e) {
      i64 m = kFree;
      for (i64 i = b; i < e; ++i) {
        const i32* r0 = col_ + ptr_[i];
        const i32* r1 = col_ + ptr_[i + 1];
        const i32 d = i32(r1 - r0) - (std::binary_search(r0, r1, i32(i)) ? 1 : 0);
        nodes[i] = node{kFree, d, 0};
        if (d > 0) m = std::min(m, deg_key(d, i32(i)));
      }
      least[std::size_t(q)] = m;
    });
    const i64 m = *std::min_element(least.begin(), least.end());
    return m == kFree ? -1 : i32(m & 0xffffffff);
  }

  // The lowest vertex >= from not placed yet (one exists): the next few looked at here, then in
  // growing chunks on every core.
  i32 next_free(i64 from) {
    for (const i64 end = std::min<i64>(n_, from + 4096); from < end; ++from)
      if (nodes_[std::size_t(from)].claim == kFree) return i32(from);
    for (i64 len = 8192;; len *= 2) {
      const i64 end = std::min<i64>(n_, from + len);
      const i64 t = first_index(end - from, 4096, threads_, [&](i64 k) {
        return nodes_[std::size_t(from + k)].claim == kFree;
      });
      if (t >= 0) return i32(from + t);
      from = end;
    }
  }

  // Pieces for a level of f vertices: one (inline) when small or alone, else at least 4 per
  // thread, so that parallel_pieces uses them all (a call costs tens of microseconds: waking the
  // pool). Where the pieces are cut changes nothing in the result.
  i64 grain(i64 f) const {
    if (threads_ == 1 || f < inline_below) return std::max<i64>(f, 1);
    return std::max<i64>(min_level_grain, f / (4 * i64(threads_)));
  }

  // Breadth-first search from `root` over vertices not placed yet (all of its component, when the
  // pattern is symmetric) that counts levels only; stamps mark the reached. Threads stamp with
  // plain stores: two may both take a vertex, which then appears twice in the next level; the
  // levels as sets, all that is used, are the same.
  sweep count_levels(i32 root) {
    const std::uint32_t s = ++stamp_now_;
    const i64* ptr = ptr_;
    const i32* col = col_;
    node* nodes = nodes_.data();
    nodes[root].stamp = s;
    level<i32>* cur = &count_a_;
    level<i32>* nxt = &count_b_;
    cur->set_one(root);
    sweep out;
    for (;;) {
      const i64 f = cur->size(), g = grain(f);
      parallel_pieces(
          f, g, threads_,
          [&](i64 q, i64 b, i64 e) {
            std::vector<i32>& mine = nxt->piece[std::size_t(q)];
            mine.clear();
            cur->for_range(b, e, [&](i64, std::size_t, const i32* v, i64 count) {
              for (i64 t = 0; t < count; ++t) {
                prefetch_rows(ptr, col, nodes, v, t, count);
                for (i64 k = ptr[v[t]]; k < ptr[v[t] + 1]; ++k)
                  if (load(nodes[col[k]].stamp) != s && nodes[col[k]].claim == kFree) {
                    store(nodes[col[k]].stamp, s);
                    mine.push_back(col[k]);
                  }
              }
            });
          },
          /*keep_warm=*/true);
      nxt->finish(piece_count(f, g));
      if (nxt->size() == 0) {
        out.last = cur->least(nodes);
        return out;
      }
      ++out.ecc;
      std::swap(cur, nxt);
    }
  }

  // The Cuthill–McKee search from `root`, placed from position `pos` on.
  sweep order_from(i32 root, i64 pos) {
    const i64* ptr = ptr_;
    const i32* col = col_;
    node* nodes = nodes_.data();
    i32* perm = perm_.data();
    const i64 root_key = (pos << 31) - 1;  // below the keys of the root's children
    level<item>* cur = &order_a_;
    level<item>* nxt = &order_b_;
    nodes[root].claim = kPlaced;
    cur->tent[0].clear();
    for (i64 k = ptr[root]; k < ptr[root + 1]; ++k)
      if (root_key < nodes[col[k]].claim) {
        nodes[col[k]].claim = root_key;
        cur->tent[0].push_back(col[k]);
      }
    cur->set_one(item{root_key, root, i32(cur->tent[0].size()), 0});
    sweep out;
    i64 lo = pos;
    for (;;) {
      const i64 f = cur->size(), g = grain(f);
      const bool alone = piece_count(f, g) == 1;  // one thread: claims need no read-modify-write
      parallel_pieces(
          f, g, threads_,
          [&](i64 q, i64 b, i64 e) {
            std::vector<item>& mine = nxt->piece[std::size_t(q)];
            std::vector<i32>& tent = nxt->tent[std::size_t(q)];
            mine.clear();
            tent.clear();
            // The children of each vertex: the neighbours it claimed and still holds, by (degree,
            // index), keyed by its position and their rank.
            cur->for_range(b, e, [&](i64 t0, std::size_t qs, const item* it, i64 count) {
              const i32* claimed = cur->tent[qs].data();
              for (i64 t = 0; t < count; ++t) {
                if (t + 4 < count)
                  for (i64 k = it[t + 4].tb; k < it[t + 4].tb + it[t + 4].nt; ++k)
                    prefetch(nodes + claimed[k]);
                const i64 p = lo + t0 + t;
                perm[n_ - 1 - p] = it[t].v;
                const std::size_t first = mine.size();
                for (i64 k = it[t].tb; k < it[t].tb + it[t].nt; ++k) {
                  const i32 w = claimed[k];
                  if (load(nodes[w].claim) == it[t].key)
                    mine.push_back(item{deg_key(nodes[w].deg, w), w, 0, 0});
                }
                // Insertion sort for short lists; a hub's children (a power-law graph's run to
                // 10^5 and more: quadratic there, 100 s for one row) by std::sort. The keys
                // are distinct, so either gives the same order.
                if (mine.size() - first > 32)
                  std::sort(mine.begin() + std::ptrdiff_t(first), mine.end(),
                            [](const item& x, const item& y) { return x.key < y.key; });
                else
                  for (std::size_t j = first + 1; j < mine.size(); ++j)
                    for (std::size_t h = j; h > first && mine[h].key < mine[h - 1].key; --h)
                      std::swap(mine[h], mine[h - 1]);
                for (std::size_t j = first; j < mine.size(); ++j)
                  mine[j].key = (p << 31) | i64(j - first);
              }
            });
            // The children claim their neighbours for the next call, each keeping what it took.
            item* c = mine.data();
            const i64 nc = i64(mine.size());
            for (i64 j = 0; j < nc; ++j) {
              prefetch_rows(ptr, col, nodes, c, j, nc);
              c[j].tb = i64(tent.size());
              for (i64 k = ptr[c[j].v]; k < ptr[c[j].v + 1]; ++k) {
                i64& cl = nodes[col[k]].claim;
                if (c[j].key < load(cl)) {
                  if (alone)
                    store(cl, c[j].key);
                  else if (!atomic_min(cl, c[j].key))
                    continue;
                  tent.push_back(col[k]);
                }
              }
              c[j].nt = i32(i64(tent.size()) - c[j].tb);
            }
          },
          /*keep_warm=*/true);
      nxt->finish(piece_count(f, g));
      lo += f;
      if (nxt->size() == 0) {
        out.last = cur->least(nodes);
        out.reached = lo - pos;
        return out;
      }
      ++out.ecc;
      std::swap(cur, nxt);
    }
  }

  // Takes back an ordering search's placements (positions [pos, pos + count)).
  void undo(i64 pos, i64 count) {
    parallel_pieces(count, row_grain, threads_, [&](i64, i64 b, i64 e) {
      for (i64 t = b; t < e; ++t)
        nodes_[std::size_t(perm_[std::size_t(n_ - 1 - pos - t)])].claim = kFree;
    });
  }

  i32 n_;
  int threads_;
  const i64* ptr_;
  const i32* col_;
  std::vector<i32> perm_;
  host_vector<node> nodes_;
  std::uint32_t stamp_now_ = 0;
  level<i32> count_a_, count_b_;
  level<item> order_a_, order_b_;
};

}  // namespace

std::vector<std::int32_t> rcm_order(const csr_view& a, int threads) {
  return rcm(a, threads).run();
}

void rcm_finish(const csr_view& a, int threads, std::vector<std::int32_t>& perm,
                std::int64_t placed, std::int32_t cursor) {
  if (placed >= a.n) return;
  perm = rcm(a, threads).run(std::move(perm), placed, cursor);
}

}  // namespace cnc
