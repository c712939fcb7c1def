// The OpenCL CSR's long rows and work-balanced row ranges (kernels/opencl/spmv.cl: csr_pieces,
// spmv_fused with LONG_ROWS and BALANCED), planned on the host once from the row offsets.
//
// A row longer than long_min entries is cut into pieces of csr_piece entries: csr_pieces,
// launched just before every spmv_fused, sums each piece (a fixed tree over its lanes) and
// spmv_fused adds a long row's piece sums in piece order instead of walking the row, so the
// product has the same bits on every run. Where rows of very unequal length make spmv_fused's
// uniform row ranges unequal in work (a power-law graph's hubs at low indices put most entries
// in the first group's range), the groups' ranges are cut by work instead. A matrix with
// neither (stencils, meshes) gets the kernels without either path compiled in.
#pragma once

#include <cstdint>
#include <vector>

#include "matrix/format.hpp"  // csr_piece
#include "matrix/matrix.hpp"

namespace cnc::ocl {

struct row_plan {
  std::int64_t long_min = -1;        // rows longer than this are cut; -1: none
  std::int32_t n_long = 0;           // rows cut
  std::vector<std::int32_t> lrow;    // the n_long rows ascending, then their first pieces (+ total)
  std::vector<std::int64_t> pieces;  // begin and end entry of each piece
  bool balance = false;              // group ranges cut by work (row_bounds)
  std::int64_t n_pieces() const { return std::int64_t(pieces.size() / 2); }
};

// The long-row rule and the balance choice for a CSR whose SpMV runs `width` work-items a row
// (0: the stream tiles) in `groups` work-groups (an estimate: the choice does not need the exact
// count) on a GPU or a CPU. CNC_LONG_ROW_MIN: > 0 cuts rows longer than that, < 0 none.
row_plan plan_rows(const csr_view& a, bool gpu, int width, int groups);

// The groups + 1 row boundaries of spmv_fused's groups (BALANCED): about equal work each, a row
// weighing its entries (a long row: its pieces) plus a constant for its vector traffic.
std::vector<std::int32_t> row_bounds(const csr_view& a, const row_plan& p, int groups);

}  // namespace cnc::ocl
