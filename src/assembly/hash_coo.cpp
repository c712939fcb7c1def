// Hash-assembled COO: windows, spills, growth and conversion to CSR (see hash_coo.hpp).
#include "assembly/hash_coo.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cnc.h"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"

namespace cnc {

namespace {
using memory::max_stride;  // the windows' sizes: memory::initial_stride

std::uint64_t spill_hash(std::uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 17; }
}  // namespace

void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t(1) << 21;
  const std::uintptr_t a = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
  const std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge - 1);
  if (e > a) madvise(reinterpret_cast<void*>(a), e - a, MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

csr_matrix empty_csr(std::int32_t n, std::int64_t nnz) {
  csr_matrix m;
  m.n = n;
  m.row_ptr.assign(std::size_t(n) + 1, 0);
  m.col.resize(std::size_t(nnz));
  m.val.resize(std::size_t(nnz));
  advise_huge_pages(m.col.data(), sizeof(std::int32_t) * m.col.size());
  advise_huge_pages(m.val.data(), sizeof(double) * m.val.size());
  return m;
}

void hash_coo::reset(std::int32_t n_rows, std::int64_t nnz_hint, int threads) {
  n_rows_ = std::max<std::int32_t>(n_rows, 1);
  threads_ = threads;
  allocate(memory::initial_stride(n_rows_, nnz_hint));
  spill_.clear();
  spill_.shrink_to_fit();
  spilled_ = 0;
  count_ = 0;
}

void hash_coo::allocate(std::uint32_t stride) {
  const std::uint64_t slots = std::uint64_t(n_rows_) * stride;
  if (slots > std::uint64_t(std::numeric_limits<std::int64_t>::max() / 16))
    throw error(CNC_ERR_OVERFLOW, "coefficient table would exceed the address space");
  // Before the pages are touched (an untouched allocation always succeeds on Linux).
  memory::reserve(memory::hash_table(double(n_rows_), stride, false), [&] {
    return "the coefficient table (" + std::to_string(n_rows_) + " rows x " +
           std::to_string(stride) + " slots of 12 bytes)";
  });
  // Only the columns need a marker; values are written on insert. Both are first touched here
  // by every core (page faults included), not by the single thread that inserts. Members change
  // only once both arrays exist.
  std::unique_ptr<std::int32_t[]> cols(new std::int32_t[slots]);
  std::unique_ptr<double[]> vals(new double[slots]);
  std::int32_t* c = cols.get();
  double* v = vals.get();
  advise_huge_pages(c, sizeof(std::int32_t) * slots);
  advise_huge_pages(v, sizeof(double) * slots);
  parallel_pieces(std::int64_t(slots), std::int64_t(1) << 18, host_threads(threads_),
                  [&](std::int64_t, std::int64_t a, std::int64_t e) {
                    std::memset(c + a, 0xff, sizeof(std::int32_t) * std::size_t(e - a));
                    std::memset(v + a, 0, sizeof(double) * std::size_t(e - a));
                  });
  stride_ = stride;
  n_slots_ = slots;
  cols_ = std::move(cols);
  vals_ = std::move(vals);
  lo_.reset();
}

void hash_coo::make_low_parts() {
  memory::reserve(double(n_slots_) * memory::low_part_bytes, [&] {
    return "the coefficient table's low parts (" + std::to_string(n_slots_) +
           " slots of 8 bytes, made at the first duplicate)";
  });
  std::unique_ptr<double[]> lo(new double[n_slots_]);
  double* p = lo.get();
  advise_huge_pages(p, sizeof(double) * n_slots_);
  parallel_pieces(std::int64_t(n_slots_), std::int64_t(1) << 18, host_threads(threads_),
                  [&](std::int64_t, std::int64_t a, std::int64_t e) {
                    std::memset(p + a, 0, sizeof(double) * std::size_t(e - a));
                  });
  lo_ = std::move(lo);
}

void hash_coo::duplicate(std::uint64_t s, double v) {
  if (!lo_) make_low_parts();
  two_sum(vals_[s], lo_[s], v);
}

// Rows outgrew their windows: double them while that keeps the table within ~16 slots per entry
// (a few dense rows are better served by the spill table than by huge windows).
bool hash_coo::crowded(std::int64_t extra_spills) const {
  return spilled_ + extra_spills > (count_ + extra_spills) / 32 + 1024 && stride_ < max_stride &&
         double(n_slots_) * 2 <= 16.0 * double(count_ + extra_spills + n_rows_);
}

bool hash_coo::grow_for(std::int64_t misses) {
  if (misses <= 0 || !crowded(misses)) return false;
  grow();
  return true;
}

// The slot holding `key`, or the empty slot where it goes (the table is first made room in).
hash_coo::spill_slot& hash_coo::spill_lookup(std::uint64_t key) {
  if (spill_.empty() || double(spilled_ + 1) > 0.5 * double(spill_.size())) {
    std::vector<spill_slot> old(std::max<std::size_t>(1024, spill_.size() * 2),
                                spill_slot{empty_key, 0.0, 0.0});
    old.swap(spill_);
    for (const spill_slot& e : old) {
      if (e.key == empty_key) continue;
      std::uint64_t p = spill_hash(e.key) & (spill_.size() - 1);
      while (spill_[p].key != empty_key) p = (p + 1) & (spill_.size() - 1);
      spill_[p] = e;
    }
  }
  std::uint64_t p = spill_hash(key) & (spill_.size() - 1);
  while (spill_[p].key != key && spill_[p].key != empty_key) p = (p + 1) & (spill_.size() - 1);
  return spill_[p];
}

void hash_coo::spill(std::int32_t i, std::int32_t j, double v) {
  if (crowded(0)) {
    grow();
    return add(i, j, v);
  }
  const std::uint64_t key = (std::uint64_t(std::uint32_t(i)) << 32) | std::uint32_t(j);
  spill_slot& e = spill_lookup(key);
  if (e.key == key) return two_sum(e.hi, e.lo, v);
  e = spill_slot{key, v, 0.0};
  ++spilled_, ++count_;
}

// Puts a key known to be absent, with its (high, low) pair as is, in its window or the spill
// table. Row-local when it lands in the window (the parallel part of grow relies on that).
void hash_coo::place(std::int32_t i, std::int32_t j, double hi, double lo) {
  const std::uint64_t s = find(i, j);
  if (s != no_slot) {
    cols_[s] = j, vals_[s] = hi;
    if (lo_) lo_[s] = lo;
    return;
  }
  const std::uint64_t key = (std::uint64_t(std::uint32_t(i)) << 32) | std::uint32_t(j);
  spill_lookup(key) = spill_slot{key, hi, lo};
  ++spilled_;
}

void hash_coo::grow() {
  auto cols = std::move(cols_);
  auto vals = std::move(vals_);
  auto lo = std::move(lo_);
  std::vector<spill_slot> spilled;
  spilled.swap(spill_);
  const std::uint32_t old_stride = stride_;
  bool low = lo != nullptr;
  for (const spill_slot& e : spilled) low |= e.key != empty_key && e.lo != 0.0;
  try {
    allocate(stride_ * 2);
    if (low) make_low_parts();
  } catch (...) {  // out of memory: the table stays as it was
    stride_ = old_stride;
    n_slots_ = std::uint64_t(n_rows_) * old_stride;
    cols_ = std::move(cols), vals_ = std::move(vals), lo_ = std::move(lo);
    spill_.swap(spilled);
    throw;
  }
  spilled_ = 0;  // count_ (distinct keys) does not change: pairs move as they are
  // A row's old window fits in its doubled window: rows are placed in parallel pieces.
  parallel_pieces(n_rows_, 4096, host_threads(threads_),
                  [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                    for (std::int64_t i = i0; i < i1; ++i)
                      for (std::uint64_t s = std::uint64_t(i) * old_stride;
                           s < std::uint64_t(i + 1) * old_stride; ++s)
                        if (cols[s] >= 0)
                          place(std::int32_t(i), cols[s], vals[s], lo ? lo[s] : 0.0);
                  });
  for (const spill_slot& e : spilled)
    if (e.key != empty_key)
      place(std::int32_t(e.key >> 32), std::int32_t(e.key & 0xffffffffu), e.hi, e.lo);
}

csr_matrix hash_coo::to_csr(const std::vector<std::int32_t>& map, std::int32_t n_out) const {
  auto mapped = [&](std::int32_t idx) { return map.empty() ? idx : map[idx]; };
  // Spilled entries, sorted by row, are merged row by row with the windows.
  std::vector<std::pair<std::uint64_t, double>> extra;
  for (const spill_slot& e : spill_)
    if (e.key != empty_key) extra.emplace_back(e.key, e.hi + e.lo);
  std::sort(extra.begin(), extra.end());
  // Rows are independent: pass 1 counts each kept row's entries, pass 2 writes and sorts them,
  // both in fixed pieces of rows (the map keeps rows in order, so output rows follow input rows).
  constexpr std::int64_t grain = 2048;
  const int threads = host_threads(threads_);
  const std::int64_t pieces = piece_count(n_rows_, grain);
  std::vector<std::int64_t> part(static_cast<std::size_t>(pieces), 0);  // entries per piece
  auto extra_begin = [&](std::int64_t i) {
    return std::size_t(std::lower_bound(extra.begin(), extra.end(),
                                        std::make_pair(std::uint64_t(i) << 32, -HUGE_VAL)) -
                       extra.begin());
  };
  parallel_pieces(n_rows_, grain, threads, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    std::size_t x = extra_begin(i0);
    for (std::int64_t i = i0; i < i1; ++i) {
      std::int64_t c = 0;
      const std::int32_t r = mapped(std::int32_t(i));
      const bool keep = r >= 0 && r < n_out;
      for (std::uint64_t s = std::uint64_t(i) * stride_; keep && s < std::uint64_t(i + 1) * stride_;
           ++s)
        c += cols_[s] >= 0 && mapped(cols_[s]) >= 0;
      for (; x < extra.size() && std::int64_t(extra[x].first >> 32) == i; ++x)
        c += keep && mapped(std::int32_t(extra[x].first & 0xffffffffu)) >= 0;
      part[p] += c;
    }
  });
  const std::int64_t nnz = exclusive_scan(part);
  csr_matrix m = empty_csr(n_out, nnz);
  parallel_pieces(n_rows_, grain, threads, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    std::vector<std::pair<std::int32_t, double>> tmp;
    std::size_t x = extra_begin(i0);
    std::int64_t at = part[p];
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int32_t r = mapped(std::int32_t(i));
      const std::size_t b = std::size_t(at);
      std::size_t e = b;
      if (r >= 0 && r < n_out) {
        for (std::uint64_t s = std::uint64_t(i) * stride_; s < std::uint64_t(i + 1) * stride_;
             ++s) {
          const std::int32_t c = cols_[s] >= 0 ? mapped(cols_[s]) : -1;
          if (c < 0) continue;
          m.col[e] = c;
          m.val[e++] = lo_ ? vals_[s] + lo_[s] : vals_[s];
        }
      }
      for (; x < extra.size() && std::int64_t(extra[x].first >> 32) == i; ++x) {
        const std::int32_t c = mapped(std::int32_t(extra[x].first & 0xffffffffu));
        if (r >= 0 && r < n_out && c >= 0) m.col[e] = c, m.val[e++] = extra[x].second;
      }
      if (r < 0 || r >= n_out) continue;
      // Sort the row by column: insertion sort for the usual short rows, std::sort for long ones.
      if (e - b > 32) {
        tmp.clear();
        for (std::size_t k = b; k < e; ++k) tmp.emplace_back(m.col[k], m.val[k]);
        std::sort(tmp.begin(), tmp.end(), [](auto& u, auto& v) { return u.first < v.first; });
        for (std::size_t k = b; k < e; ++k)
          m.col[k] = tmp[k - b].first, m.val[k] = tmp[k - b].second;
      } else {
        for (std::size_t k = b + 1; k < e; ++k) {
          const std::int32_t c = m.col[k];
          const double v = m.val[k];
          std::size_t q = k;
          for (; q > b && m.col[q - 1] > c; --q) m.col[q] = m.col[q - 1], m.val[q] = m.val[q - 1];
          m.col[q] = c, m.val[q] = v;
        }
      }
      at = std::int64_t(e);
      m.row_ptr[std::size_t(r) + 1] = at;
    }
  });
  return m;
}

}  // namespace cnc
