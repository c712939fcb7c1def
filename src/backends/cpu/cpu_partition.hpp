// The CPU backend's work items: row chunks cut by entries, and the pieces of long CSR rows.
//
// Made once per system from the row offsets alone, so they depend on the matrix and never on the
// thread count: every partial sum has a fixed slot and a fixed place in the order of the sums.
// A chunk holds at most max_rows row groups and, unless one row alone is longer, at most
// `budget` entries, so a chunk of power-law hubs costs about what a chunk of stencil rows does.
// A long row (CSR only: more than long_min entries) is a chunk of its own whose product comes
// from pieces of `piece` entries, computed as work items of their own and added in piece order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cnc {

struct cpu_partition {
  std::vector<std::int32_t> bound;       // chunk c: row groups [bound[c], bound[c + 1])
  std::vector<std::uint8_t> long_chunk;  // per chunk: 1 when it is one long row
  std::vector<std::int32_t> long_row;    // the long rows, ascending
  std::vector<std::int32_t> long_of;     // the chunk of each long row
  std::vector<std::int32_t> piece_ptr;   // long row l: pieces [piece_ptr[l], piece_ptr[l + 1])
  std::vector<std::int32_t> piece_row;   // per piece: its long row's index l
  std::int64_t piece = 0;                // entries per piece (the last of a row: the rest)

  std::int32_t chunks() const { return std::int32_t(bound.size()) - 1; }
  std::int32_t pieces() const { return piece_ptr.empty() ? 0 : piece_ptr.back(); }
  std::int64_t long_rows() const { return std::int64_t(long_row.size()); }
};

// rows row groups with offsets row_ptr (rows + 1), `weight` entries per stored element (b x b
// for BCRS blocks); long_min <= 0: no row is cut (BCRS, SELL, CNC_LONG_ROW_MIN = -1).
inline cpu_partition make_cpu_partition(std::int32_t rows, const std::int64_t* row_ptr,
                                        std::int64_t weight, std::int32_t max_rows,
                                        std::int64_t budget, std::int64_t long_min,
                                        std::int64_t piece) {
  cpu_partition p;
  p.piece = piece;
  p.bound.push_back(0);
  p.piece_ptr.push_back(0);
  std::int64_t held = 0;  // entries of the open chunk [bound.back(), r)
  auto close = [&](std::int32_t r, bool is_long) {
    p.bound.push_back(r);
    p.long_chunk.push_back(is_long ? 1 : 0);
    held = 0;
  };
  for (std::int32_t r = 0; r < rows; ++r) {
    const std::int64_t len = (row_ptr[r + 1] - row_ptr[r]) * weight;
    const std::int32_t open = p.bound.back();
    if (long_min > 0 && len > long_min) {
      if (r > open) close(r, false);
      p.long_row.push_back(r);
      p.long_of.push_back(p.chunks());
      const std::int64_t n = (len + piece - 1) / piece;
      for (std::int64_t t = 0; t < n; ++t)
        p.piece_row.push_back(std::int32_t(p.long_row.size() - 1));
      p.piece_ptr.push_back(std::int32_t(p.piece_row.size()));
      close(r + 1, true);
      continue;
    }
    if (r > open && (r - open >= max_rows || held + len > budget)) close(r, false);
    held += len;
  }
  if (rows > p.bound.back()) close(rows, false);
  return p;
}

}  // namespace cnc
