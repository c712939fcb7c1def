// The names every layer shares for how a matrix is stored on a device and in which precision:
// the conversion stage, the pipeline, every backend (their kernels too) and the tests. No other
// representation of a format or a precision exists; a backend maps these to its own launch
// parameters in one place (the OpenCL build options, the CUDA launchers' template dispatch, the
// CPU kernel tables).
#pragma once

#include <cstdint>

namespace cnc {

// Vector and matrix-value precision of a device system. mixed: float matrix values, double
// vectors (the SpMV reads half the bytes; the iteration keeps double accuracy).
enum class precision { f64, f32, mixed };

// SELL slice height C: a CUDA warp, an NVIDIA OpenCL sub-group, a CPU slice of SIMD rows.
constexpr int sell_slice = 32;

// Entries of one piece of a long CSR row, the unit the GPU backends split a row's work into (a
// CUDA warp's or an OpenCL group's: 32 lanes x 4 entries, 4 trips); its partial sums are added
// in piece order, so the product's bits do not depend on which piece finishes first.
constexpr int csr_piece = 512;

// Device matrix formats (matrix/matrix.hpp has their layouts). zcsr: a complex matrix
// (cncSolveCSRComplex) as complex CSR, its row k the real-equivalent rows 2k and 2k + 1, one
// column index and one interleaved (re, im) pair a complex entry; vectors are the real-equivalent
// ones (interleaved pairs), so the product is the real-equivalent product. Real systems never
// take it. zsell: the same complex matrix as SELL over its complex rows (slices of sell_slice
// complex rows, 2 * sell_slice real rows, each slice padded to its longest row, column-major: one
// column index and one pair a stored entry); CUDA only.
enum class format { csr, bcrs2, bcrs4, sell, zcsr, zsell };

// The complex formats: their rows are complex rows, two real-equivalent rows each.
constexpr bool is_complex(format f) { return f == format::zcsr || f == format::zsell; }

constexpr bool is_block(format f) { return f == format::bcrs2 || f == format::bcrs4; }
// Block size of a BCRS format (1 for the scalar formats CSR, SELL and ZCSR).
constexpr int block_size(format f) { return f == format::bcrs2 ? 2 : f == format::bcrs4 ? 4 : 1; }
// Rows of one row group: a CSR row, a BCRS block row, a SELL slice, a ZCSR complex row (two real
// rows: re and im), a ZSELL slice of complex rows.
constexpr int group_rows(format f) {
  return f == format::sell    ? sell_slice
         : f == format::zcsr  ? 2
         : f == format::zsell ? 2 * sell_slice
                              : block_size(f);
}
constexpr const char* format_name(format f) {
  return f == format::csr     ? "csr"
         : f == format::bcrs2 ? "bcrs2"
         : f == format::bcrs4 ? "bcrs4"
         : f == format::zcsr  ? "zcsr"
         : f == format::zsell ? "zsell"
                              : "sell";
}
// Rows a backend sees for n real rows in format f: n rounded up to a whole row group.
constexpr std::int32_t padded_rows(std::int32_t n, format f) {
  const std::int64_t g = group_rows(f);
  return static_cast<std::int32_t>((n + g - 1) / g * g);
}

}  // namespace cnc
