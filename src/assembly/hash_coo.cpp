// Hash-assembled COO: growth and conversion to CSR (see hash_coo.hpp for the layout).
#include "assembly/hash_coo.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.hpp"
#include "cnc.h"

namespace cnc {

namespace {
constexpr double max_load = 0.7;
}

void hash_coo::reset(std::int32_t n_rows, std::int64_t nnz_hint) {
  n_rows_ = std::max<std::int32_t>(n_rows, 1);
  double per_row = nnz_hint > 0 ? double(nnz_hint) / n_rows_ : 6.0;
  auto stride = std::uint32_t(std::ceil(per_row / max_load));
  allocate(std::clamp<std::uint32_t>(stride, 2, 1u << 20));
  count_ = 0;
}

void hash_coo::allocate(std::uint32_t stride) {
  std::uint64_t cap = std::uint64_t(n_rows_) * stride + 64;
  if (cap > std::uint64_t(std::numeric_limits<std::int64_t>::max() / sizeof(slot)))
    throw error(CNC_ERR_OVERFLOW, "coefficient table would exceed the address space");
  stride_ = stride;
  slots_.assign(cap, slot{empty_key, 0.0, 0.0});
  grow_at_ = std::int64_t(double(cap) * max_load);
  probe_limit_ = 4 * stride + 64;
}

bool hash_coo::grow_for_probes() {
  // Doubling is worth it while the table stays within 16 slots per entry (or per row); beyond
  // that the long runs come from a few dense rows: accept them, and look again later.
  if (double(slots_.size()) * 2 > 16.0 * double(count_ + n_rows_) || stride_ >= (1u << 20)) {
    probe_limit_ = probe_limit_ > (1u << 30) ? probe_limit_ : probe_limit_ * 2;
    return false;
  }
  grow();
  return true;
}

void hash_coo::grow() {
  std::vector<slot> old;
  old.swap(slots_);
  allocate(stride_ * 2);
  for (const slot& e : old) {
    if (e.key == empty_key) continue;
    std::uint64_t s = slot_of(std::int32_t(e.key >> 32), std::int32_t(e.key & 0xffffffffu));
    while (slots_[s].key != empty_key)
      if (++s == slots_.size()) s = 0;
    slots_[s] = e;
  }
}

csr_matrix hash_coo::to_csr(const std::vector<std::int32_t>& map, std::int32_t n_out) const {
  auto mapped = [&](std::uint32_t idx) { return map.empty() ? std::int32_t(idx) : map[idx]; };
  csr_matrix m;
  m.n = n_out;
  m.row_ptr.assign(std::size_t(n_out) + 1, 0);
  for (const slot& e : slots_) {
    if (e.key == empty_key) continue;
    std::int32_t r = mapped(std::uint32_t(e.key >> 32)), c = mapped(std::uint32_t(e.key));
    if (r >= 0 && c >= 0) ++m.row_ptr[std::size_t(r) + 1];
  }
  for (std::int32_t i = 0; i < n_out; ++i) m.row_ptr[i + 1] += m.row_ptr[i];
  std::int64_t nnz = m.row_ptr[n_out];
  m.col.resize(std::size_t(nnz));
  m.val.resize(std::size_t(nnz));
  std::vector<std::int64_t> next(m.row_ptr.begin(), m.row_ptr.end() - 1);
  for (const slot& e : slots_) {
    if (e.key == empty_key) continue;
    std::int32_t r = mapped(std::uint32_t(e.key >> 32)), c = mapped(std::uint32_t(e.key));
    if (r < 0 || c < 0) continue;
    std::int64_t k = next[r]++;
    m.col[k] = c;
    m.val[k] = e.hi + e.lo;
  }
  // Sort each row by column: insertion sort for the usual short rows, std::sort for long ones.
  std::vector<std::pair<std::int32_t, double>> tmp;
  for (std::int32_t i = 0; i < n_out; ++i) {
    std::int64_t b = m.row_ptr[i], e = m.row_ptr[i + 1];
    if (e - b > 32) {
      tmp.clear();
      for (std::int64_t k = b; k < e; ++k) tmp.emplace_back(m.col[k], m.val[k]);
      std::sort(tmp.begin(), tmp.end(), [](auto& x, auto& y) { return x.first < y.first; });
      for (std::int64_t k = b; k < e; ++k) m.col[k] = tmp[k - b].first, m.val[k] = tmp[k - b].second;
      continue;
    }
    for (std::int64_t k = b + 1; k < e; ++k) {
      std::int32_t c = m.col[k];
      double v = m.val[k];
      std::int64_t p = k;
      for (; p > b && m.col[p - 1] > c; --p) m.col[p] = m.col[p - 1], m.val[p] = m.val[p - 1];
      m.col[p] = c, m.val[p] = v;
    }
  }
  return m;
}

}  // namespace cnc
