// Complex matrices (cncSolveCSRComplex): the caller's complex CSR, one (re, im) pair of doubles
// per entry (the layout of C99 double complex and Fortran complex(c_double)), made canonical,
// checked Hermitian where the method needs it, and expanded into its real-equivalent system.
//
// A complex n-vector is held as the real 2n-vector of its interleaved (re, im) pairs, the
// caller's own layout, so b and x need no copy. With unknown 2j = Re x_j and 2j+1 = Im x_j,
// y = A x is the real 2n x 2n product with the 2 x 2 block
//     [ Re a_ij  -Im a_ij ]
//     [ Im a_ij   Re a_ij ]
// per entry a_ij. That real matrix is symmetric positive definite exactly when A is Hermitian
// positive definite, its diagonal is Re a_ii twice (Jacobi with the real diagonal), and the real
// dot product of two interleaved vectors is Re(uᴴv): real PCG on it is complex PCG step for step
// (α and β are real for Hermitian A). For a general complex A, BiCGSTAB and GMRES run over the
// same vectors in complex arithmetic (solver/krylov.hpp, krylov_params::complex), not as their
// real-equivalent forms (except with SSOR, whose sweeps are not complex-linear). Every backend,
// format and precision runs it. On the device it is held as zcsr (matrix/format.hpp: complex
// CSR, 16 + 4 bytes a complex entry): in double with an iterative method straight from the
// caller's complex CSR (zcsr_from_user: no copy when canonical; the real-equivalent's entries are
// never built), otherwise built back from the real-equivalent (zcsr_from_real_equivalent), unless
// the caller forces a real format (BCRS 2x2: 32 value bytes + one column index).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "matrix/matrix.hpp"

namespace cnc {

// Canonical complex CSR: 0-based, columns strictly increasing in each row, duplicates summed.
using complex_csr = zcsr_matrix;

// The caller's complex CSR (0- or 1-based, rows in any order of columns, duplicates summed)
// made canonical. When it is canonical already (0-based, rows sorted, no duplicates) `view`
// points at the caller's arrays and nothing is copied; otherwise at `owned`. Row offsets must
// have been checked (check_row_ptr). Throws cnc::error naming the first bad entry in row order:
// a column out of range (CNC_ERR_INDEX_OUT_OF_RANGE) or a non-finite real or imaginary part
// (CNC_ERR_NOT_FINITE); then, with `hermitian`, as check_hermitian_positive_diagonal (done in
// the same pass over the caller's arrays when their rows are sorted).
struct user_zcsr {
  user_zcsr() = default;
  user_zcsr(user_zcsr&&) = default;  // moving keeps the vectors' buffers, so `view` stays valid
  user_zcsr(const user_zcsr&) = delete;
  user_zcsr& operator=(const user_zcsr&) = delete;
  user_zcsr& operator=(user_zcsr&&) = default;
  zcsr_matrix owned;
  zcsr_view view;
  bool copied() const { return !owned.row_ptr.empty(); }
};
user_zcsr zcsr_from_user(std::int32_t n, const std::int64_t* row_ptr, const std::uint32_t* col,
                         const double* val, int base, bool hermitian = false);

// Throws cnc::error(CNC_ERR_INVALID_VALUE) naming the first offending entry in row order unless
// A is Hermitian (a_ji = conj(a_ij) up to 1e-12 of the larger modulus, a missing a_ji counting
// as 0) with every diagonal entry present, real (|Im a_ii| at most 1e-12 |a_ii|) and > 0: what
// CG (and CHOLMOD) need of A, checked in one pass over the sorted rows.
void check_hermitian_positive_diagonal(const zcsr_view& a);

// The Jacobi inverse diagonal of the real-equivalent (2 a.n rows, padded with 1 up to n_padded):
// 1 / Re a_ii at rows 2i and 2i + 1, with convert.hpp's rule for zero or absent entries.
host_vector<double> inverse_diagonal(const zcsr_view& a, std::int32_t n_padded, bool jacobi,
                                     std::int64_t* zero_diagonals);

// A's pattern as a CSR view (no values): what the ordering stage reads.
inline csr_view pattern_of(const zcsr_view& a) { return csr_view{a.n, a.row_ptr, a.col, {}}; }

// The real-equivalent CSR of 2n rows (0-based, canonical: 4 entries per complex entry, zeros
// kept so that the pattern depends on A's pattern alone), in the types cncSolveCSR takes.
struct real_equivalent_csr {
  std::int32_t n = 0;  // 2 * a.n
  std::vector<std::int64_t> row_ptr;
  host_vector<std::uint32_t> col;
  host_vector<double> val;
};
real_equivalent_csr real_equivalent(const zcsr_view& a);

// The ZCSR device format (matrix/format.hpp) of a real-equivalent CSR as real_equivalent makes
// it (the pipeline hands the real-equivalent on; the complex entries are read back from its
// rows 2i: (2j, re), (2j+1, -im)). Throws cnc::error(CNC_ERR_INTERNAL) when `r` is not of that
// shape (a row pair of other lengths or columns, or a block that is not [re -im; im re]).
zcsr_matrix zcsr_from_real_equivalent(const csr_view& r);

// The pattern of the complex matrix whose real-equivalent (of real_equivalent's shape) is `r`:
// r.n / 2 rows, column j where row 2i holds columns 2j and 2j + 1 (values 0). What the ordering
// stage renumbers when the device format is zcsr, whose (re, im) pairs must stay together.
csr_matrix complex_pattern(const csr_view& r);
// A permutation of the complex unknowns (perm[new] = old) as one of the real-equivalent's:
// unknowns 2 perm[i] and 2 perm[i] + 1 become 2i and 2i + 1, so P A Pᵀ keeps the real-equivalent
// shape.
std::vector<std::int32_t> pair_permutation(const std::vector<std::int32_t>& perm);

}  // namespace cnc
