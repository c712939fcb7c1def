// System builder (see builder.hpp).
#include "assembly/builder.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"

namespace cnc {

namespace {
constexpr std::int64_t bulk_parallel_min = std::int64_t(1) << 16;  // smaller calls: one thread
constexpr std::int64_t max_buckets = 512;  // row ranges of the parallel pass
}  // namespace

void builder::begin_matrix(std::int32_t n, std::int32_t k, bool least_squares, bool normalize_rows,
                           const std::vector<std::uint8_t>& locked,
                           const std::vector<double>& values, std::int64_t nnz_hint, int threads) {
  const bool pattern = pattern_.active() && !least_squares && pattern_.rows() == n;
  const bool locks =
      std::any_of(locked.begin(), locked.end(), [](std::uint8_t l) { return l != 0; });
  const std::uint32_t stride = memory::initial_stride(n, nnz_hint);
  // What this allocates, checked before anything changes: the table (unless a pattern replaces
  // it), b, and the copies of the locks and, when some are locked, of the values.
  const double rows = double(n), vectors = rows * k * memory::variable_bytes;
  memory::reserve((pattern ? 0 : memory::hash_table(rows, stride, false)) + vectors +
                      rows * memory::lock_bytes + (locks ? vectors : 0),
                  [&] {
                    return "the assembly of " + std::to_string(n) + " rows (" +
                           (pattern ? std::string()
                                    : "a coefficient table of " + std::to_string(stride) +
                                          " slots of 12 bytes a row, ") +
                           std::to_string(k) + " right-hand side(s) of 8 bytes" +
                           (locks ? ", the locked values" : "") + ")";
                  });
  n_ = n, k_ = k, ls_ = least_squares, normalize_ = normalize_rows, threads_ = threads;
  // Own copies: the caller may not change variables during assembly, but we do not rely on it.
  locked_copy_ = locked;
  locked_ = locked_copy_.data();
  any_locked_ = locks;
  // The values are read only for locked columns.
  x_copy_ = any_locked_ ? values : std::vector<double>{};
  x_ = x_copy_.data();
  use_pattern_ = pattern;
  if (use_pattern_) {
    pattern_.clear(threads);
    coo_.reset(1, 0, threads);
  } else {
    coo_.reset(n, nnz_hint, threads);
  }
  b_.resize(std::size_t(n) * k);  // zeroed (first touched) by every core
  double* b = b_.data();
  parallel_pieces(
      std::int64_t(b_.size()), std::int64_t(1) << 18, host_threads(threads),
      [&](std::int64_t, std::int64_t a, std::int64_t e) { std::fill(b + a, b + e, 0.0); });
  row_b_.assign(std::size_t(k), 0.0);
  row_count_ = 0;
}

// Pattern rows cannot grow: every entry first finds or takes its slot (taking marks the slot's
// column only), and only when all found room are the values added, so a full row adds nothing.
template <class Entry>
std::int64_t builder::pattern_add_all(std::int64_t count, Entry&& get) {
  std::vector<std::int64_t> taken_slots;
  for (std::int64_t t = 0; t < count; ++t) {
    const auto [i, j, v] = get(t);
    if (any_locked_ && (locked_[i] || locked_[j])) continue;
    bool taken;
    const std::int64_t s = pattern_.find_or_take(i, j, taken);
    if (s < 0) {
      for (std::int64_t q : taken_slots) pattern_.release(q);
      return t;
    }
    if (taken) taken_slots.push_back(s);
  }
  for (std::int64_t t = 0; t < count; ++t) {
    const auto [i, j, v] = get(t);
    add_ij(i, j, v);
  }
  return -1;
}

namespace {
// Rows of a run of entries: the smallest and largest, and whether they never decrease. Fixed
// pieces, so the answer (and what is built on it) does not depend on the thread count.
builder_rows scan_rows(std::int64_t m, const std::uint32_t* ri, int threads) {
  const std::int64_t grain = std::max<std::int64_t>(std::int64_t(1) << 16, m / 256);
  const std::size_t np = std::size_t(piece_count(m, grain));
  std::vector<std::uint32_t> lo(np), hi(np), first(np), last(np);
  std::vector<std::uint8_t> ordered(np);
  parallel_pieces(m, grain, threads, [&](std::int64_t p, std::int64_t a, std::int64_t e) {
    std::uint32_t l = ri[a], h = ri[a], prev = ri[a];
    bool ok = true;
    for (std::int64_t t = a; t < e; ++t) {
      const std::uint32_t r = ri[t];
      l = std::min(l, r), h = std::max(h, r);
      ok &= r >= prev;
      prev = r;
    }
    lo[std::size_t(p)] = l, hi[std::size_t(p)] = h, first[std::size_t(p)] = ri[a];
    last[std::size_t(p)] = prev, ordered[std::size_t(p)] = ok;
  });
  builder_rows out{lo[0], hi[0], true};
  for (std::size_t p = 0; p < np; ++p) {
    out.lo = std::min(out.lo, lo[p]), out.hi = std::max(out.hi, hi[p]);
    out.in_order = out.in_order && ordered[p] && (p == 0 || first[p] >= last[p - 1]);
  }
  return out;
}
}  // namespace

std::int64_t builder::add_ij_many(std::int64_t count, const std::uint32_t* i,
                                  const std::uint32_t* j, const double* v) {
  if (use_pattern_)  // one thread: a row-full entry anywhere must leave everything unchanged
    return pattern_add_all(count, [&](std::int64_t t) {
      return std::make_tuple(std::int32_t(i[t]), std::int32_t(j[t]), v[t]);
    });
  if (count < bulk_parallel_min) {
    for (std::int64_t t = 0; t < count; ++t) add_ij(std::int32_t(i[t]), std::int32_t(j[t]), v[t]);
    return -1;
  }
  const int threads = host_threads(threads_);
  const builder_rows all = scan_rows(count, i, threads);
  if (all.in_order) {  // rows in order: already in bucket order, no copy, one pass
    add_bulk_parallel(count, i, j, v, all);
    return -1;
  }
  // Other orders are bucketed through a buffer, a chunk at a time (bounded memory); each chunk
  // buckets its own row range, so that every thread has rows to insert.
  for (std::int64_t a = 0; a < count; a += bulk_chunk_) {
    const std::int64_t m = std::min(bulk_chunk_, count - a);
    add_bulk_parallel(m, i + a, j + a, v + a, scan_rows(m, i + a, threads));
  }
  return -1;
}

// One run of a bulk call on the hash table, in parallel and deterministic:
//  1. the run's row range is cut into at most max_buckets buckets (ranges of rows); in-order
//     input is already in bucket order (buckets start where a binary search says); other input
//     is counted per bucket by fixed pieces and scattered stably into bucket order;
//  2. each bucket is inserted by one thread with add_in_window: a row's window and b_i are only
//     touched by its bucket's thread, and a row's entries go in input order;
//  3. what found no room (full windows, or duplicates before the low parts exist) goes in again
//     once the low parts exist or the windows grew, in parallel, and at last with add() on one
//     thread in bucket order (spills, growth). Each key still sees its entries in input order.
// Pieces and buckets depend on the input only, so the result does not depend on the threads.
void builder::add_bulk_parallel(std::int64_t m, const std::uint32_t* ri, const std::uint32_t* rj,
                                const double* rv, const builder_rows& rows) {
  const int threads = host_threads(threads_);
  int shift = 0;
  while ((std::int64_t(rows.hi - rows.lo) >> shift) >= max_buckets) ++shift;
  const std::int64_t nb = (std::int64_t(rows.hi - rows.lo) >> shift) + 1;
  const std::uint32_t lo = rows.lo;
  std::vector<std::int64_t> start(static_cast<std::size_t>(nb) + 1);
  if (rows.in_order) {
    for (std::int64_t b = 0; b < nb; ++b)
      start[std::size_t(b)] = std::lower_bound(ri, ri + m, lo + (std::uint32_t(b) << shift)) - ri;
    start[std::size_t(nb)] = m;
  } else {
    const std::int64_t grain = std::max<std::int64_t>(std::int64_t(1) << 14, m / 64);
    const std::int64_t np = piece_count(m, grain);
    std::vector<std::int64_t> at(std::size_t(np * nb), 0);  // count, then first place
    parallel_pieces(m, grain, threads, [&](std::int64_t p, std::int64_t a, std::int64_t e) {
      std::int64_t* h = &at[std::size_t(p * nb)];
      for (std::int64_t t = a; t < e; ++t) ++h[(ri[t] - lo) >> shift];
    });
    std::int64_t pos = 0;  // bucket-major: bucket b's entries from piece 0, then 1, ... (stable)
    for (std::int64_t b = 0; b < nb; ++b) {
      start[std::size_t(b)] = pos;
      for (std::int64_t p = 0; p < np; ++p) {
        const std::int64_t c = at[std::size_t(p * nb + b)];
        at[std::size_t(p * nb + b)] = pos;
        pos += c;
      }
    }
    start[std::size_t(nb)] = pos;
    if (std::int64_t(bulk_buffer_.size()) < m) {
      memory::reserve(double(m) * sizeof(bulk_entry), [&] {
        return "the bucketing of " + std::to_string(m) + " bulk entries (16 bytes each)";
      });
      bulk_buffer_ = host_vector<bulk_entry>(static_cast<std::size_t>(m));
      advise_huge_pages(bulk_buffer_.data(), sizeof(bulk_entry) * bulk_buffer_.size());
    }
    bulk_entry* out = bulk_buffer_.data();
    parallel_pieces(m, grain, threads, [&](std::int64_t p, std::int64_t a, std::int64_t e) {
      std::int64_t* cur = &at[std::size_t(p * nb)];
      for (std::int64_t t = a; t < e; ++t)
        out[cur[(ri[t] - lo) >> shift]++] = {ri[t], rj[t], rv[t]};
    });
  }
  const bool in_order = rows.in_order;
  const bulk_entry* sorted = bulk_buffer_.data();

  std::vector<std::vector<bulk_entry>> misses(static_cast<std::size_t>(nb));
  std::vector<std::int64_t> added(static_cast<std::size_t>(nb), 0), full(added), low(added);
  // Inserts one entry of bucket b; what does not fit is kept for later, in order.
  auto insert = [&](const bulk_entry& e, std::vector<bulk_entry>& miss, std::int64_t& new_keys,
                    std::int64_t& n_full, std::int64_t& n_low) {
    const std::int32_t i = std::int32_t(e.i), j = std::int32_t(e.j);
    if (any_locked_) {
      if (locked_[i]) return;
      if (locked_[j]) {  // row i's right-hand side: only this bucket's thread writes it
        for (std::int32_t s = 0; s < k_; ++s)
          b_[i + std::size_t(s) * n_] -= e.v * x_[j + std::size_t(s) * n_];
        return;
      }
    }
    switch (coo_.add_in_window(i, j, e.v, new_keys)) {
      case hash_coo::placed::yes:
        return;
      case hash_coo::placed::window_full:
        ++n_full;
        break;
      case hash_coo::placed::needs_low:
        ++n_low;
        break;
    }
    miss.push_back(e);
  };
  parallel_pieces(nb, 1, threads, [&](std::int64_t b, std::int64_t, std::int64_t) {
    std::int64_t new_keys = 0, n_full = 0, n_low = 0;
    std::vector<bulk_entry>& miss = misses[std::size_t(b)];
    if (in_order) {
      for (std::int64_t q = start[std::size_t(b)]; q < start[std::size_t(b) + 1]; ++q)
        insert(bulk_entry{ri[q], rj[q], rv[q]}, miss, new_keys, n_full, n_low);
    } else {
      for (std::int64_t q = start[std::size_t(b)]; q < start[std::size_t(b) + 1]; ++q)
        insert(sorted[q], miss, new_keys, n_full, n_low);
    }
    added[std::size_t(b)] = new_keys, full[std::size_t(b)] = n_full, low[std::size_t(b)] = n_low;
  });
  for (;;) {
    std::int64_t n_full = 0, n_low = 0, new_keys = 0;
    for (std::int64_t b = 0; b < nb; ++b)
      n_full += full[std::size_t(b)], n_low += low[std::size_t(b)],
          new_keys += added[std::size_t(b)];
    coo_.note_added(new_keys);
    if (n_full + n_low == 0) return;
    bool again = false;
    if (n_low > 0 && !coo_.has_low_parts()) coo_.make_low_parts(), again = true;
    if (coo_.grow_for(n_full)) again = true;
    if (!again) break;
    parallel_pieces(nb, 1, threads, [&](std::int64_t b, std::int64_t, std::int64_t) {
      std::vector<bulk_entry> todo;
      todo.swap(misses[std::size_t(b)]);
      std::int64_t keys = 0, nf = 0, nl = 0;
      for (const bulk_entry& e : todo) insert(e, misses[std::size_t(b)], keys, nf, nl);
      added[std::size_t(b)] = keys, full[std::size_t(b)] = nf, low[std::size_t(b)] = nl;
    });
  }
  for (const std::vector<bulk_entry>& miss : misses)
    for (const bulk_entry& e : miss) coo_.add(std::int32_t(e.i), std::int32_t(e.j), e.v);
}

void builder::begin_row() {
  row_.clear();
  std::fill(row_b_.begin(), row_b_.end(), 0.0);
  row_w_ = 1.0;
}

builder::row_end builder::end_row() {
  // Merge repeated columns so that normalization sees the row's true coefficients.
  std::sort(row_.begin(), row_.end(), [](const entry& a, const entry& b) { return a.j < b.j; });
  merge_equal_columns(
      row_, [](const entry& e) { return e.j; }, [](entry& e) -> double& { return e.v; });
  double w = row_w_;
  if (normalize_) {
    double norm2 = 0.0;
    for (const entry& e : row_) norm2 += e.v * e.v;
    if (norm2 > 0.0) w /= std::sqrt(norm2);
  }
  if (!ls_) {
    const std::int32_t i = row_count_;
    if (i >= n_) return row_end::beyond_n;
    if (use_pattern_) {
      if (pattern_add_all(std::int64_t(row_.size()), [&](std::int64_t t) {
            return std::make_tuple(i, row_[std::size_t(t)].j, w * row_[std::size_t(t)].v);
          }) >= 0)
        return row_end::pattern_full;
    } else {
      for (const entry& e : row_) add_ij(i, e.j, w * e.v);
    }
    ++row_count_;
    if (!locked_[i])
      for (std::int32_t s = 0; s < k_; ++s) add_rhs(i, s, w * row_b_[s]);
    return row_end::ok;
  }
  ++row_count_;
  // Least squares: right-hand sides minus the locked part, then the weighted outer product.
  for (std::int32_t s = 0; s < k_; ++s) {
    double bs = row_b_[s];
    for (const entry& e : row_)
      if (locked_[e.j]) bs -= e.v * x_[e.j + std::size_t(s) * n_];
    for (const entry& e : row_)
      if (!locked_[e.j]) b_[e.j + std::size_t(s) * n_] += w * w * e.v * bs;
  }
  for (const entry& p : row_) {
    if (locked_[p.j]) continue;
    for (const entry& q : row_)
      if (!locked_[q.j]) coo_.add(p.j, q.j, w * w * p.v * q.v);
  }
  return row_end::ok;
}

assembled_system builder::end_matrix() {
  // The CSR (at most every stored coefficient), the variable map and, with locks, the free rows'
  // b, checked before anything is made.
  const double entries = double(use_pattern_ ? pattern_.slots() : coo_.size());
  memory::reserve(memory::csr(n_, entries) +
                      double(n_) * memory::index_bytes * (any_locked_ ? 2 : 1) +
                      (any_locked_ ? double(n_) * k_ * memory::variable_bytes : 0),
                  [&] {
                    return "the CSR of " + std::to_string(n_) + " rows and up to " +
                           std::to_string(std::int64_t(entries)) + " entries (12 bytes an entry, " +
                           "8 a row offset, 4 a row's variable)";
                  });
  assembled_system out;
  const int threads = host_threads(threads_);
  std::vector<std::int32_t> map;  // empty: every variable free (the identity)
  std::int32_t n_free = n_;
  if (any_locked_) {
    map.assign(std::size_t(n_), -1);
    n_free = 0;
    for (std::int32_t i = 0; i < n_; ++i)
      if (!locked_[i]) map[std::size_t(i)] = n_free++;
  }
  out.a = use_pattern_ ? pattern_.to_csr(map, n_free, threads_) : coo_.to_csr(map, n_free);
  out.to_var.resize(std::size_t(n_free));
  if (!any_locked_) {
    std::int32_t* to = out.to_var.data();
    parallel_pieces(n_, std::int64_t(1) << 18, threads,
                    [&](std::int64_t, std::int64_t a, std::int64_t e) {
                      for (std::int64_t i = a; i < e; ++i) to[i] = std::int32_t(i);
                    });
    out.b = std::move(b_);  // same layout: n rows per system
  } else {
    for (std::int32_t i = 0; i < n_; ++i)
      if (map[std::size_t(i)] >= 0) out.to_var[std::size_t(map[std::size_t(i)])] = i;
    out.b.resize(std::size_t(n_free) * k_);
    for (std::int32_t s = 0; s < k_; ++s)
      for (std::int32_t f = 0; f < n_free; ++f)
        out.b[f + std::size_t(s) * n_free] = b_[out.to_var[f] + std::size_t(s) * n_];
  }
  coo_.reset(1, 0, threads_);  // release the table's memory (a pattern's slots persist)
  b_ = host_vector<double>{};
  x_copy_ = std::vector<double>{};
  bulk_buffer_ = host_vector<bulk_entry>{};
  return out;
}

}  // namespace cnc
