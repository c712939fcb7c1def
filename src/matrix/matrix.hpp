// Host matrix formats handed from the conversion stage to the backends.
//
// CSR: sorted column indices, no duplicates, 64-bit row offsets (counts inside cnc are 64-bit,
// indices 32-bit). BCRS: the same structure over b x b blocks (one column index per block, and
// the block's b values of x reused for its b rows: fewer index and x reads than CSR); each stored
// block is dense, row-major, and rows are padded to a multiple of b with identity rows so that
// every backend sees a square matrix of n_padded = n_block_rows * b rows. Padding rows are
// decoupled (diagonal 1, zero right-hand side) and leave the solution of the n real rows unchanged.
// SELL (sliced ELLPACK, SELL-C-1): rows cut into slices of sell_slice consecutive rows, each slice
// padded to its longest row and stored column-major (entry t of the slice's row l at
// slice_ptr[s] + t*C + l), so that the C threads of a slice read consecutive values and indices
// and need no row offsets. Padding entries have value 0 and column = their own row; the rows past
// n (up to a multiple of C) are identity rows, as BCRS padding. Rows are not sorted (sigma = 1):
// the solution vector keeps the caller's order, and stencil and FEM rows in a slice have similar
// lengths already.
// ZCSR: a complex matrix as CSR over its n/2 complex rows, the values (re, im) pairs; the
// backends' vectors are the real-equivalent's 2 x (n/2) interleaved values, and y = A x is the
// complex product (conversion/complex.hpp), which equals the real-equivalent CSR's product.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "matrix/format.hpp"

namespace cnc {

// Allocator whose resize() leaves new elements uninitialized: the big index and value arrays are
// written right after by the conversion's parallel pieces, so the pages are first touched (and
// faulted in) by every core instead of being zeroed by one thread beforehand.
template <class T>
struct default_init_allocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <class U>
  struct rebind {
    using other = default_init_allocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <class T>
using host_vector = std::vector<T, default_init_allocator<T>>;

// A canonical CSR that cnc reads but does not own: a csr_matrix, or the caller's own arrays when
// they are already canonical (0-based, sorted, no duplicates), which then need no copy.
struct csr_view {
  std::int32_t n = 0;
  std::span<const std::int64_t> row_ptr;  // n + 1, row_ptr[0] == 0
  std::span<const std::int32_t> col;
  std::span<const double> val;
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
};

struct csr_matrix {
  std::int32_t n = 0;                 // rows == columns
  std::vector<std::int64_t> row_ptr;  // n + 1
  host_vector<std::int32_t> col;      // nnz
  host_vector<double> val;            // nnz
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  operator csr_view() const { return csr_view{n, row_ptr, col, val}; }
};

struct bcrs_matrix {
  int b = 2;                          // block size: 2 or 4
  std::int32_t n = 0;                 // real rows (unpadded)
  std::int32_t n_block_rows = 0;      // ceil(n / b)
  std::vector<std::int64_t> row_ptr;  // n_block_rows + 1, in blocks
  host_vector<std::int32_t> col;      // block column of each block
  host_vector<double> val;            // b*b per block, row-major inside the block
  std::int64_t n_blocks() const { return static_cast<std::int64_t>(col.size()); }
  std::int32_t n_padded() const { return n_block_rows * b; }
};

struct sell_matrix {
  std::int32_t n = 0;                   // real rows (unpadded)
  std::int32_t n_slices = 0;            // ceil(n / sell_slice)
  std::vector<std::int64_t> slice_ptr;  // n_slices + 1, in entries (multiples of sell_slice)
  host_vector<std::int32_t> col;        // slice_ptr.back() entries, column-major per slice
  host_vector<double> val;
  std::int64_t entries() const { return static_cast<std::int64_t>(col.size()); }
  std::int32_t n_padded() const { return n_slices * sell_slice; }
};

// A canonical complex CSR that cnc reads but does not own: a zcsr_matrix, or the caller's arrays
// of cncSolveCSRComplex when they are canonical already (no copy), as csr_view is for CSR.
struct zcsr_view {
  std::int32_t n = 0;                     // complex rows (the real-equivalent has 2n)
  std::span<const std::int64_t> row_ptr;  // n + 1, in complex entries
  std::span<const std::int32_t> col;      // complex column of each entry
  std::span<const double> val;            // 2 per entry: (re, im)
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
};

struct zcsr_matrix {
  std::int32_t n = 0;                 // complex rows (the real-equivalent has 2n)
  std::vector<std::int64_t> row_ptr;  // n + 1, in complex entries
  host_vector<std::int32_t> col;      // complex column of each entry
  host_vector<double> val;            // 2 per entry: (re, im)
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  operator zcsr_view() const { return zcsr_view{n, row_ptr, col, val}; }
};

// What a backend receives: the matrix in the chosen format (csr always set, its entries too
// except for a complex matrix handed over without its real-equivalent: backends that do not
// support a format may fall back to it), plus the Jacobi inverse diagonal in double.
struct host_matrix {
  format fmt = format::csr;
  csr_view csr;  // always set: n, and the entries unless fmt is zcsr (see zcsr below)
  const bcrs_matrix* bcrs = nullptr;  // set when fmt is bcrs2/bcrs4
  const sell_matrix* sell = nullptr;  // set when fmt is sell, unless the backend builds it
  // Set when fmt is zcsr; csr is then its real-equivalent, or only its row count (2 zcsr->n,
  // no entries) when the complex matrix came without one (cncSolveCSRComplex).
  const zcsr_view* zcsr = nullptr;
  std::int32_t n_padded() const { return padded_rows(csr.n, fmt); }
};

}  // namespace cnc
