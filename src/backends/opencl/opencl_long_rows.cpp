// The OpenCL CSR's long rows and balanced ranges (see opencl_long_rows.hpp).
#include "backends/opencl/opencl_long_rows.hpp"

#include <algorithm>
#include <climits>

#include "cnc.h"
#include "util/environment.hpp"
#include "util/error.hpp"

namespace cnc::ocl {
namespace {

// A row's cost beyond its entries (row offsets, the vector entries it writes and reads) in
// entries: what a group's share of the work counts per row.
constexpr std::int64_t row_cost = 2;

// Long rows by device: on a GPU a row holds its work-items (and the loop of the group it shares)
// for length / lanes trips, so a row more than 16 trips of its lanes (the lanes follow the mean
// row length) is cut, and at least a quarter piece (the CUDA backend's rule). On a CPU a group
// is one work-item walking a contiguous range: rows cost only where one is a large part of a
// group's share (ranges are balanced), so only rows over a quarter of that share are cut.
std::int64_t long_row_min(const csr_view& a, bool gpu, int width, int groups) {
  const long long forced = env::integer(env::var::long_row_min, 0);  // tests, tuning
  if (forced != 0) return forced < 0 ? -1 : forced;
  if (gpu) return std::max<std::int64_t>(csr_piece / 4, 16LL * std::max(width, 1));
  return std::max<std::int64_t>(4 * csr_piece, a.nnz() / (4LL * std::max(groups, 1)));
}

std::int64_t row_weight(const csr_view& a, const row_plan& p, std::int32_t i) {
  const std::int64_t len = a.row_ptr[i + 1] - a.row_ptr[i];
  return row_cost + (p.long_min >= 0 && len > p.long_min ? (len + csr_piece - 1) / csr_piece : len);
}

}  // namespace

row_plan plan_rows(const csr_view& a, bool gpu, int width, int groups) {
  row_plan p;
  p.long_min = long_row_min(a, gpu, width, groups);
  if (p.long_min >= 0) {
    std::vector<std::int32_t> first{0};
    for (std::int32_t i = 0; i < a.n; ++i) {
      const std::int64_t b = a.row_ptr[i], e = a.row_ptr[i + 1];
      if (e - b <= p.long_min) continue;
      p.lrow.push_back(i);
      for (std::int64_t s = b; s < e; s += csr_piece)
        p.pieces.push_back(s), p.pieces.push_back(std::min<std::int64_t>(s + csr_piece, e));
      if (p.n_pieces() > INT_MAX)
        throw error(CNC_ERR_OUT_OF_MEMORY, "OpenCL: more than 2^31 long-row pieces");
      first.push_back(std::int32_t(p.n_pieces()));
    }
    p.n_long = std::int32_t(p.lrow.size());
    // Appended one by one: GCC 13 warns (-Wstringop-overflow, a false positive) on the
    // range insert here.
    if (p.n_long) {
      p.lrow.reserve(p.lrow.size() + first.size());
      for (const std::int32_t f : first) p.lrow.push_back(f);
    }
  }
  if (p.n_long == 0) p.long_min = -1;
  // Balance when the uniform ranges (range_chunk in common.cl: multiples of 64 rows) give some
  // group a quarter more than an equal share.
  if (groups > 1 && a.n > 64) {
    const std::int64_t chunk = ((a.n + groups - 1) / groups + 63) / 64 * 64;
    std::int64_t total = 0, most = 0, in_chunk = 0;
    for (std::int32_t i = 0; i < a.n; ++i) {
      if (i % chunk == 0) in_chunk = 0;
      in_chunk += row_weight(a, p, i);
      total += row_weight(a, p, i);
      most = std::max(most, in_chunk);
    }
    p.balance = 4 * most * groups > 5 * total;
  }
  return p;
}

std::vector<std::int32_t> row_bounds(const csr_view& a, const row_plan& p, int groups) {
  std::int64_t total = 0;
  for (std::int32_t i = 0; i < a.n; ++i) total += row_weight(a, p, i);
  // Group g ends after the first row where the running work reaches (g + 1) / groups of it.
  std::vector<std::int32_t> b(std::size_t(groups) + 1, a.n);
  b[0] = 0;
  std::int64_t done = 0;
  int g = 1;
  for (std::int32_t i = 0; i < a.n && g < groups; ++i) {
    done += row_weight(a, p, i);
    while (g < groups && done * groups >= total * g) b[std::size_t(g++)] = i + 1;
  }
  return b;
}

}  // namespace cnc::ocl
