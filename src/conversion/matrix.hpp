// Host matrix formats handed from the conversion stage to the backends.
//
// CSR: sorted column indices, no duplicates, 64-bit row offsets (counts inside cnc are 64-bit,
// indices 32-bit). BCRS: the same structure over b x b blocks (CNC paper §2.2.3); each stored
// block is dense, row-major, and rows are padded to a multiple of b with identity rows so that
// every backend sees a square matrix of n_padded = n_block_rows * b rows. Padding rows are
// decoupled (diagonal 1, zero right-hand side) and leave the solution of the n real rows unchanged.
#pragma once

#include <cstdint>
#include <vector>

namespace cnc {

enum class format { csr = 1, bcrs2 = 2, bcrs4 = 4 };  // value = block size

inline int block_size(format f) { return static_cast<int>(f); }
const char* format_name(format f);

struct csr_matrix {
  std::int32_t n = 0;                 // rows == columns
  std::vector<std::int64_t> row_ptr;  // n + 1
  std::vector<std::int32_t> col;      // nnz
  std::vector<double> val;            // nnz
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
};

struct bcrs_matrix {
  int b = 2;                          // block size: 2 or 4
  std::int32_t n = 0;                 // real rows (unpadded)
  std::int32_t n_block_rows = 0;      // ceil(n / b)
  std::vector<std::int64_t> row_ptr;  // n_block_rows + 1, in blocks
  std::vector<std::int32_t> col;      // block column of each block
  std::vector<double> val;            // b*b per block, row-major inside the block
  std::int64_t n_blocks() const { return static_cast<std::int64_t>(col.size()); }
  std::int32_t n_padded() const { return n_block_rows * b; }
};

// What a backend receives: the matrix in the chosen format (csr always set: backends that do not
// support a block format may fall back to it), plus the Jacobi inverse diagonal in double.
struct host_matrix {
  format fmt = format::csr;
  const csr_matrix* csr = nullptr;    // always set
  const bcrs_matrix* bcrs = nullptr;  // set when fmt != csr
  std::int32_t n_padded() const { return fmt == format::csr ? csr->n : bcrs->n_padded(); }
};

}  // namespace cnc
