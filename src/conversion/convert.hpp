// Conversion stage: caller CSR -> canonical CSR, CSR -> BCRS 2x2/4x4, automatic format choice,
// Jacobi diagonal.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "matrix/matrix.hpp"
#include "util/parallel.hpp"

namespace cnc {

// The caller's CSR (0- or 1-based; rows may be unsorted, duplicates are summed) as a canonical
// CSR. Validated and placed with every core. When the caller's arrays are canonical already
// (0-based, rows sorted, no duplicates) `view` points at them and nothing is copied; otherwise
// `view` points at `owned`. Throws cnc::error naming the first bad offset/index in row order.
struct user_csr {
  user_csr() = default;
  user_csr(user_csr&&) = default;  // moving keeps the vectors' buffers, so `view` stays valid
  user_csr(const user_csr&) = delete;
  user_csr& operator=(const user_csr&) = delete;
  user_csr& operator=(user_csr&&) = default;
  csr_matrix owned;
  csr_view view;
  bool copied() const { return !owned.row_ptr.empty(); }
};
// The row offsets of a caller's CSR: row_ptr[0] == base and never decreasing (what must hold
// before the entries can be read). Throws cnc::error naming the first bad offset.
void check_row_ptr(std::int32_t n, const std::int64_t* row_ptr, int base);
// `cols`: the column count when it is not n (a process's block of rows of a larger matrix, whose
// columns keep their global numbers: libcnc_mpi); negative means n.
user_csr csr_from_user(std::int32_t n, const std::int64_t* row_ptr, const std::uint32_t* col,
                       const double* val, int base, std::int32_t cols = -1);

// Stored blocks if `a` were cut into b x b blocks (for the fill ratio, without building).
std::int64_t count_blocks(const csr_view& a, int b);
bcrs_matrix csr_to_bcrs(const csr_view& a, int b);
// Back to CSR over the n real rows, dropping the zeros that blocking added (and explicit zeros).
csr_matrix bcrs_to_csr(const bcrs_matrix& m);

// Entries SELL stores for `a` (padding included), without building it.
std::int64_t sell_entries(const csr_view& a);
// The entries the ZSELL form of a complex CSR stores (its SELL over the complex rows).
std::int64_t zsell_entries(const zcsr_view& a);
// SELL's slice offsets (sell_matrix::slice_ptr) of a canonical CSR: what a backend that fills
// the layout on the device (backend::builds_on_device) needs from the host.
std::vector<std::int64_t> sell_slice_offsets(const csr_view& a);
sell_matrix csr_to_sell(const csr_view& a);

// Bytes one SpMV reads from the matrix in format f with value_bytes-wide values; `stored` is the
// number of blocks (BCRS) or entries (SELL) stored, unused for CSR.
double matrix_bytes(const csr_view& a, format f, std::int64_t stored, int value_bytes);
double matrix_bytes(std::int32_t n, std::int64_t nnz, format f, std::int64_t stored,
                    int value_bytes);
// The format that moves the fewest bytes per SpMV; a block format must save >= 10% over the
// scalar format. With `sliced` (GPU backends: one thread per row, coalesced by slice), SELL is
// the scalar format whenever its padding adds at most 10% bytes over CSR; otherwise CSR.
format choose_format(const csr_view& a, int value_bytes, bool sliced);
// The same with the SELL entry count and the exact block counts supplied by the caller (the
// device computes them when the matrix is there); the sampled screen still reads `a` on the host.
// Without `screen`, only a's n and nnz are read (the matrix is not on the host in that form: made
// on the device) and the exact counts decide.
format choose_format(const csr_view& a, int value_bytes, bool sliced, std::int64_t sell_stored,
                     const std::function<std::int64_t(int)>& exact_blocks, bool screen = true);
// The scalar part of that choice (CSR or SELL), given the entries SELL would store: also used
// for a matrix in device memory, whose block structure is not scanned.
format choose_scalar_format(std::int32_t n, std::int64_t nnz, std::int64_t sell_stored,
                            int value_bytes, bool sliced);
// The same choice for a complex matrix of n complex rows and nnz complex entries: ZSELL (given
// the entries it would store) when it reads at most complex_sell_bytes times ZCSR's bytes,
// otherwise ZCSR. More padding pays than for real SELL: a ZSELL warp reads 32 whole 16-byte
// pairs a step (H200, run 150: the magnetic mesh 128³, rows of 10-44 entries, at 1.35x ZCSR's
// matrix bytes ran an iteration 7 % faster; the stencils are within 1.02x).
constexpr double complex_sell_bytes = 1.4;
format choose_complex_format(std::int32_t n, std::int64_t nnz, std::int64_t zsell_stored,
                             int value_bytes);

// Inverse diagonal for Jacobi (1 where the diagonal is zero or absent; those are counted), padded
// with 1 up to n_padded. With jacobi == false, all ones.
host_vector<double> inverse_diagonal(const csr_view& a, std::int32_t n_padded, bool jacobi,
                                     std::int64_t* zero_diagonals);
// The same rule over `rows` rows whose diagonal entries diag_of(i) (a double) gives (0 when
// absent): what the formats share (complex matrices: conversion/complex.hpp). A template over the
// callable, so that the call made once a row is inlined.
template <class Diag>
host_vector<double> inverse_diagonal(std::int32_t rows, std::int32_t n_padded, bool jacobi,
                                     std::int64_t* zero_diagonals, const Diag& diag_of) {
  // Rows per piece of the parallel loop (the conversion loops' grain).
  constexpr std::int64_t grain = 2048;
  host_vector<double> d(static_cast<std::size_t>(n_padded));  // every entry written below
  std::vector<std::int64_t> zeros(static_cast<std::size_t>(piece_count(n_padded, grain)), 0);
  parallel_pieces(n_padded, grain, host_threads(),
                  [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
                    for (std::int64_t i = i0; i < i1; ++i) {
                      d[i] = 1.0;
                      if (i >= rows) continue;
                      const double diag = diag_of(std::int32_t(i));
                      if (std::fabs(diag) < DBL_MIN)  // 0, absent, or subnormal (1/diag overflows)
                        ++zeros[p];
                      else if (jacobi)
                        d[i] = 1.0 / diag;
                    }
                  });
  if (zero_diagonals) *zero_diagonals = exclusive_scan(zeros);
  return d;
}

}  // namespace cnc
