// Reordering inside cnc: whether the unknowns are renumbered for locality (reverse Cuthill–McKee,
// reorder_rcm.hpp), and the permutation of the matrix and of the vectors. The caller never sees
// the new numbering: b and x are permuted on the way in and back on the way out.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "matrix/matrix.hpp"

namespace cnc {

// How scattered the gathers of x are: for slices of 32 consecutive rows (what a GPU warp or a
// CPU SIMD sweep reads together), the distinct 128-byte lines of x (16 doubles) their columns
// touch, per entry. About 1/16..1/4 for a mesh or stencil numbered with locality; near 1 when
// every gather is its own cache line (random numbering). Sampled (at most 1024 slices spread
// over the rows, on `threads` threads, the same value for any count), from the caller's arrays
// (`base`-based, rows in any order); rows of more than 1024 entries are not sampled.
double gather_lines_per_entry(std::int32_t n, const std::int64_t* row_ptr, const std::uint32_t* col,
                              int base, int threads);
// Below this many rows x (8 bytes a row) fits in the caches of every device cnc runs on, and the
// gathers' scattering costs little: neither the ordering nor the CPU's gather prefetch is tried.
constexpr std::int32_t min_rows = 1 << 17;
// Poor locality: more than this many lines of x per entry (random numbering gives ~1, the
// power-law graphs 0.58; the 7-point stencil in natural order 0.19, and after reverse
// Cuthill–McKee about the same).
constexpr double poor_locality = 0.5;

// The AUTO decision (CNC_REORDER_AUTO): reorder when the locality is poor and the iterations a
// solve is expected to run save more than the ordering costs. `why` says which way and why.
// `measure` gives the lines of x per entry (gather_lines_per_entry); it is called only when the
// decision needs it (not for CNC_REORDER_NONE, nor for AUTO below 131 072 rows).
struct ordering_decision {
  bool reorder = false;
  double lines_per_entry = 0;
  std::string why;
};
ordering_decision decide_ordering(int requested, std::int32_t n, std::int64_t nnz,
                                  const std::function<double()>& measure,
                                  std::int64_t max_iterations, bool gpu);

// P A Pᵀ with perm[new] = old, as a canonical CSR (rows sorted): row r of the result is row
// perm[r] of `a` with its columns renumbered by the inverse permutation. `a` must be canonical:
// strictly increasing columns in each row (a duplicate column would lose an entry). Parallel,
// the same bits for any thread count.
csr_matrix permute_csr(const csr_view& a, std::span<const std::int32_t> perm, int threads);
// The same for a complex CSR (cncSolveCSRComplex), perm over its complex unknowns.
zcsr_matrix permute_zcsr(const zcsr_view& a, std::span<const std::int32_t> perm, int threads);

// k column-major vectors of n rows: out[new] = in[perm[new]] (gather), or, back, out[perm[new]] =
// in[new] (scatter).
void permute_vectors(std::span<const std::int32_t> perm, int k, const double* in, double* out,
                     bool back, int threads);

}  // namespace cnc
