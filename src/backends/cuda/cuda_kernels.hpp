// Host-side entry points of the CUDA kernels (kernels/cuda/*.cu), callable from plain C++.
//
// Device layout of one "group" of right-hand sides (at most 8 systems, see cuda_backend.cpp):
// every vector stores its kc (1, 2, 4 or 8, the group size rounded up to a power of two) values of
// row i contiguously at [i*kc + j], so that one pass over the matrix serves all of them. Slots
// j >= k (padding of the group) hold zeros and are never active. Vectors are `vec` (double for
// f64 and mixed, float for f32); matrix values are `mat` (double for f64, float otherwise).
//
// Reductions are two-stage and deterministic: each block writes its per-system partial sums to
// `partials`, and the block that finishes last (counted in `counter`, reset by that block) sums
// the partials in block order and updates the rhs_state array. No floating-point atomics.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "matrix/format.hpp"  // precision, format, sell_slice
#include "pcg_contract.h"     // rhs_state and the statuses: all the kernels need of the host

namespace cnc::cuda {

struct matrix_view {
  format fmt = format::csr;  // SELL: one warp per slice of sell_slice rows
  std::int32_t rows =
      0;  // block rows (BCRS), rows (CSR), slices (SELL, ZSELL), complex rows (ZCSR)
  const std::int64_t* row_ptr = nullptr;  // SELL: slice offsets
  const std::int32_t* col = nullptr;      // column (CSR) or block column (BCRS)
  const void* val = nullptr;  // b*b values per block, row-major inside a block; ZCSR: (re, im)
  int width = 0;              // lanes per (block) row: 2..32, a multiple of b*b
  int grid = 0;               // blocks of the SpMV launch
  bool stream = true;         // the values' and indices' loads streaming (common.cuh: ld_matrix)
  // SELL with kc values of 32 bytes or more a row: the row's values split over lanes
  // (spmv_sell.cu). Off under the persistent kernel, whose SpMV takes a row a lane: the single
  // steps must give its bits (backend.hpp's iterate contract).
  bool sell_split = true;
  // CSR only: rows longer than long_min entries ("long rows", ascending in long_rows) are cut
  // into pieces of csr_piece entries, one warp each (a whole kernel waits on its slowest row
  // otherwise). The pieces' sums go to piece_sums; the warp that finishes a row's last piece adds
  // them in piece order and stores the row; the row kernel then only reads it back. n_long == 0:
  // no long rows, one launch.
  std::int32_t n_long = 0;
  std::int64_t long_min = 0;
  const std::int32_t* long_rows = nullptr;
  const std::int32_t* piece_ptr = nullptr;  // n_long + 1: first piece of each long row
  std::int32_t* piece_done = nullptr;       // n_long counters, zero between launches
  void* piece_sums = nullptr;               // pieces * 8 vector values
  std::int32_t pieces = 0;
  int piece_grid = 0;  // blocks of the pieces launch
};

struct group_view {
  int kc = 1;          // stride: 1, 2, 4 or 8
  int k = 1;           // real systems in the group (<= kc)
  std::int32_t n = 0;  // rows (padded)
  void* x = nullptr;
  void* r = nullptr;
  void* p = nullptr;
  void* q = nullptr;
  void* b = nullptr;
  const void* d = nullptr;          // n values, shared by all systems
  rhs_state* state = nullptr;       // k entries, the group's first system
  double* partials = nullptr;       // 2 * kc * max(grid) doubles
  unsigned int* counter = nullptr;  // one per group, zero between launches
  int grid = 0;                     // blocks of the vector launches
};

constexpr int block_threads = 256;

#ifdef __CUDACC__
#define CNC_HOST_DEVICE __host__ __device__
#else
#define CNC_HOST_DEVICE
#endif

// Strided chunks an SpMV lane loads before using any, per trip over a row: enough loads in
// flight per lane to cover the memory latency with one right-hand side; with more, the kc
// gathers of each entry are already independent and more chunks cost occupancy (registers).
// Measured on the H200 (bench/results/cuda.md): 8 chunks for float values or 2 chunks at
// kc >= 4 were slower. The host picks the lanes per row from it (cuda_backend.cpp).
CNC_HOST_DEVICE constexpr int spmv_unroll(int kc, int /*mat_bytes*/) {
  return kc == 1 ? 4 : kc == 2 ? 2 : 1;
}

// y = A x for the group's kc columns (cg = false), or the CG step q = A p, pq = pᵀq for every
// running system (cg = true: in/out are ignored, p and q are used). `x`/`y` are group-layout.
cudaError_t spmv(precision pr, const matrix_view& a, const group_view& g, bool cg, const void* x,
                 void* y, cudaStream_t s);
// r = b - q (q holds A x); p = d∘r; rz, rr reduced; state set for every system (init step).
cudaError_t init_vectors(precision pr, const group_view& g, cudaStream_t s);
cudaError_t update_xr(precision pr, const group_view& g, cudaStream_t s);
cudaError_t update_p(precision pr, const group_view& g, cudaStream_t s);
// Column-major host-style doubles (n_real rows per system, device memory) <-> group layout.
// scatter writes zeros to rows n_real..n-1 and to padding slots. perm (n_real values, or null
// for none): the column-major side is in another numbering, row i of the group's being row
// perm[i] there (scatter reads src[perm[i]], gather writes dst[perm[i]]).
cudaError_t scatter(precision pr, const group_view& g, const double* src, std::int32_t n_real,
                    const std::int32_t* perm, void* dst, cudaStream_t s);
cudaError_t gather(precision pr, const group_view& g, const void* src, std::int32_t n_real,
                   const std::int32_t* perm, double* dst, cudaStream_t s);

// CSR -> SELL on the device (convert.cu), the host layout (matrix/matrix.hpp) bit for
// bit. slice_ptr: (n+31)/32 + 1 offsets, filled from the row lengths; call first with scratch ==
// nullptr to get *scratch_bytes (the scan's temporary storage). Then sell_fill writes
// slice_ptr[last] entries of columns and values (float when f32_values, else double, as `val`).
// With `pairs`, a complex CSR of n complex rows into ZSELL: `val` and `sval` hold (re, im) pairs
// (slice_ptr from sell_slice_offsets over its row offsets, as for SELL).
cudaError_t sell_slice_offsets(std::int32_t n, const std::int64_t* row_ptr, std::int64_t* slice_ptr,
                               void* scratch, std::size_t* scratch_bytes, cudaStream_t s);
cudaError_t sell_fill(bool f32_values, bool pairs, std::int32_t n, const std::int64_t* row_ptr,
                      const std::int32_t* col, const void* val, const std::int64_t* slice_ptr,
                      std::int32_t* scol, void* sval, cudaStream_t s);
// New values (device, CSR order, double) of the pattern a SELL of double values was built from
// by sell_fill: written into sval where sell_fill put them, padding untouched; d and *zeros as
// inverse_diagonal computes them (*zeros is added to: the caller zeroes it).
cudaError_t sell_refill(std::int32_t n, const std::int64_t* row_ptr, const double* val,
                        const std::int64_t* slice_ptr, const std::int32_t* scol, double* sval,
                        bool jacobi, double* d, unsigned long long* zeros, cudaStream_t s);
// Caller arrays in device memory (convert.cu). scan_csr: out[0] != 0 when the CSR is not
// canonical (offsets in [0, nnz] and not decreasing, columns in range and strictly increasing
// within each row, values finite), out[1] = entries of its SELL form; out: 2 device words.
// Size query first (scratch == nullptr), as sell_slice_offsets.
cudaError_t scan_csr(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                     const std::int32_t* col, const double* val, unsigned long long* out,
                     void* scratch, std::size_t* scratch_bytes, cudaStream_t s);
// The long rows of a device CSR (rows longer than long_min, ascending) into long_rows and the
// first piece of each (csr_piece entries a piece) into piece_ptr; out[0] = their count L, out[1]
// = the pieces in all (piece_ptr[L]). long_rows and piece_ptr hold `capacity` and capacity + 1
// values, capacity >= nnz / (long_min + 1) + 1 (no more rows can be long). Size query first
// (scratch == nullptr), as sell_slice_offsets.
cudaError_t csr_long_rows(std::int32_t n, const std::int64_t* row_ptr, std::int64_t long_min,
                          std::int32_t capacity, std::int32_t* long_rows, std::int32_t* piece_ptr,
                          std::int32_t* out, void* scratch, std::size_t* scratch_bytes,
                          cudaStream_t s);
// out[0] = index of the first NaN/Inf of v, or all ones; out[1] = the bits of the largest finite
// |v_i| (two device words).
cudaError_t first_not_finite(const double* v, std::int64_t count, unsigned long long* out,
                             int max_grid, cudaStream_t s);
// The Jacobi inverse diagonal of a canonical CSR, padded with 1 to n_padded rows; *zeros counts
// zero or absent diagonal entries (one device word). The host's inverse_diagonal bit for bit.
cudaError_t inverse_diagonal(std::int32_t n, std::int32_t n_padded, const std::int64_t* row_ptr,
                             const std::int32_t* col, const double* val, bool jacobi, double* d,
                             unsigned long long* zeros, cudaStream_t s);
// The same for a complex CSR of n rows ((re, im) values): the real-equivalent's 2n rows, rows
// 2r and 2r + 1 taking 1/Re a_rr (n_padded >= 2n).
cudaError_t zcsr_inverse_diagonal(std::int32_t n, std::int32_t n_padded,
                                  const std::int64_t* row_ptr, const std::int32_t* col,
                                  const double* val, bool jacobi, double* d,
                                  unsigned long long* zeros, cudaStream_t s);
// A complex CSR of n rows in device memory ((re, im) values), its row offsets checked: out[0]
// bit 1 when it is not canonical (a column out of range or not increasing in its row, a part
// not finite); with `hermitian`, bit 2 when a diagonal entry is not real and > 0 or an entry
// right of the diagonal is not the conjugate of its mirror, out[1] the mirrors found, out[2]
// the entries left of the diagonal, out[3] the diagonal entries: A is Hermitian with its whole
// diagonal when out[0] == 0, out[1] == out[2] and out[3] == n; out[4] the entries of its ZSELL
// form. out: 5 device words.
cudaError_t scan_zcsr(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                      const std::int32_t* col, const double* val, bool hermitian,
                      unsigned long long* out, cudaStream_t s);
// P A Pᵀ of a canonical device CSR (perm[new] = old, on the device), the host's permute_csr
// (conversion/reorder.hpp) bit for bit: out_ptr gets n + 1 offsets; the entries are written into
// cols[0] and vals[0] (nnz each), sorted between them and the other pair, and *result (0 or 1)
// says which pair holds them; inv (n) is work space. Size query first (scratch == nullptr), as
// sell_slice_offsets. At most permute_max_entries() entries.
cudaError_t permute_csr(std::int32_t n, std::int64_t nnz, const std::int64_t* row_ptr,
                        const std::int32_t* col, const double* val, const std::int32_t* perm,
                        std::int32_t* inv, std::int64_t* out_ptr, std::int32_t* const cols[2],
                        double* const vals[2], int* result, void* scratch,
                        std::size_t* scratch_bytes, cudaStream_t s);
std::int64_t permute_max_entries();
// Reverse Cuthill–McKee of a canonical device CSR's pattern, the host's rcm_order
// (conversion/reorder_rcm.hpp) bit for bit, in one cooperative launch of `grid` blocks
// (rcm_grid): perm (n, on the device) gets perm[n - 1 - p] for the positions p < result->placed.
// It stops after max_components components (a lone vertex counts as one) and leaves the rest to
// the host (rcm_finish, from result->cursor); a row longer than max_row entries: nothing placed,
// result->max_row says how long. work: rcm_work_bytes(n, grid). Synchronizes the stream.
struct rcm_result {
  std::int32_t placed = 0;
  std::int32_t cursor = 0;
  std::int32_t components = 0;
  std::int32_t max_row = 0;  // set only when a row is longer than max_row
};
int rcm_grid(int sm_count);  // 0: cannot be launched
std::size_t rcm_work_bytes(std::int32_t n, int grid);
cudaError_t rcm_order(std::int32_t n, const std::int64_t* row_ptr, const std::int32_t* col,
                      std::int32_t* perm, void* work, int grid, int max_components, int max_row,
                      rcm_result* result, cudaStream_t s);
// CSR -> BCRS b x b (b = 2 or 4) on the device from a canonical CSR, the host layout
// (matrix/matrix.hpp) bit for bit: block_ptr gets (n+b-1)/b + 1 offsets in blocks (size
// query first, as sell_slice_offsets), then bcrs_fill writes block_ptr[last] blocks.
cudaError_t bcrs_offsets(int b, std::int32_t n, const std::int64_t* row_ptr,
                         const std::int32_t* col, std::int64_t* block_ptr, void* scratch,
                         std::size_t* scratch_bytes, cudaStream_t s);
cudaError_t bcrs_fill(int b, std::int32_t n, const std::int64_t* row_ptr, const std::int32_t* col,
                      const double* val, const std::int64_t* block_ptr, std::int32_t* bcol,
                      double* bval, cudaStream_t s);
// Occupancy-derived grid sizes (blocks resident at once on the device), for the launches above.
int spmv_max_grid(precision pr, format f, int width, int kc, int sm_count);
int vector_max_grid(int sm_count);

// --- The vector surface (blas1.cu): backend.hpp's BLAS-1 operations over one group's
// vectors (group layout), each one launch on the group's vector grid (g.grid blocks of
// block_threads; g.n, g.kc, g.k, g.d are used). `mask`: bit j set = slot j is computed; the
// other slots are neither read nor written (bits >= g.k must be clear: padding stays zero).
// Inputs may be the output (read before written, element by element). No synchronization.
struct group_coefs {  // per-slot scalars, passed by value (read before the launcher returns)
  double alpha[8] = {};
  double beta[8] = {};
};
struct group_zcoefs {  // complex per-slot scalars, (re, im) as the host's [2j], [2j + 1]
  double alpha[8][2] = {};
  double beta[8][2] = {};
};
constexpr int max_fused_dots = 8;  // vectors one dots (or combine) launch reads along with u
struct dot_vectors {
  const void* v[max_fused_dots] = {};
};
struct combine_coefs {  // one combine launch: up to max_fused_dots vectors, per-slot scalars
  const void* v[max_fused_dots] = {};
  double coef[max_fused_dots][8] = {};
  double beta[8] = {};
};
struct zcombine_coefs {  // one zcombine launch: complex coefficients (re, im), real betas
  const void* v[max_fused_dots] = {};
  double coef[max_fused_dots][8][2] = {};
  double beta[8] = {};
};
// Halo operations (kernels/cuda/halo.cu; double vectors): out[t*stride + j0 + j] =
// v[rows[t]*kc + j] for j < k; and y[r*kc + j] += alpha Σ val h[col*stride + j0 + j] over row r
// of the halo CSR (rp, col, val; n rows) for the slots set in mask.
cudaError_t halo_gather(const double* v, int kc, int k, const std::int32_t* rows,
                        std::int32_t count, double* out, int stride, int j0, cudaStream_t s);
cudaError_t halo_add(int kc, int k, unsigned int mask, std::int32_t n, const std::int64_t* rp,
                     const std::int32_t* col, const double* val, const double* h, int stride,
                     int j0, double alpha, double* y, cudaStream_t s);
cudaError_t blas_copy(precision pr, const group_view& g, unsigned int mask, const void* in,
                      void* out,
                      cudaStream_t s);  // out = in
cudaError_t blas_diag(precision pr, const group_view& g, unsigned int mask, const void* in,
                      void* out,
                      cudaStream_t s);  // out = d∘in
cudaError_t blas_sub(precision pr, const group_view& g, unsigned int mask, const void* a,
                     const void* b, void* out, cudaStream_t s);  // out = a - b
// y = alpha x + beta y per slot; where beta == 0, y = alpha x (y not read: NaN does not survive).
cudaError_t blas_axpby(precision pr, const group_view& g, unsigned int mask, const group_coefs& c,
                       const void* x, void* y, cudaStream_t s);
// Complex y = alpha x + beta y per slot over the (re, im) row pairs (2q, 2q + 1), q < g.n / 2;
// where beta == 0 (both parts), y = alpha x (y not read). x may be y.
cudaError_t blas_zaxpby(precision pr, const group_view& g, unsigned int mask, const group_zcoefs& c,
                        const void* x, void* y, cudaStream_t s);
// y = beta y + Σ_{i < count} coef[i*stride + j] v[i] per slot j < g.k, the sum in i order (one
// launch per max_fused_dots vectors, the later ones with beta = 1); where beta == 0, y is not
// read. y is none of v. coef and beta are host memory, read before the launcher returns.
cudaError_t blas_combine(precision pr, const group_view& g, unsigned int mask, const void* const* v,
                         int count, const double* coef, int stride, const double* beta, void* y,
                         cudaStream_t s);
// result[i*stride + j] = Σ u_j v[i]_j accumulated in double, for i < count and j < g.k (0 for
// masked slots), deterministic for a given grid: one launch per max_fused_dots vectors, each
// reading u once. partials: max_fused_dots * kc * g.grid doubles; counter: one device word,
// zero between launches (left zero). `result` is device memory.
cudaError_t blas_dots(precision pr, const group_view& g, unsigned int mask, const void* u,
                      const void* const* v, int count, double* partials, unsigned int* counter,
                      double* result, int stride, cudaStream_t s);
// Complex y = d x per slot over the pairs of blas_zaxpby, d = (zd[2q], zd[2q + 1]) for pair q
// (g.n values in the vectors' precision, shared by the slots). x may be y.
cudaError_t blas_zdiag(precision pr, const group_view& g, unsigned int mask, const void* zd,
                       const void* x, void* y, cudaStream_t s);
// The complex forms over the pairs of blas_zaxpby (backend.hpp's zdots and zcombine):
// result[2(i*stride + j) + p] = part p of Σ conj(u_j) v[i]_j (partials: 2 * max_fused_dots * kc *
// g.grid doubles, else as blas_dots); y = beta y + Σ c_i v[i] with c_i = (coef[2(i*stride + j)],
// coef[2(i*stride + j) + 1]) and beta real (else as blas_combine).
cudaError_t blas_zdots(precision pr, const group_view& g, unsigned int mask, const void* u,
                       const void* const* v, int count, double* partials, unsigned int* counter,
                       double* result, int stride, cudaStream_t s);
cudaError_t blas_zcombine(precision pr, const group_view& g, unsigned int mask,
                          const void* const* v, int count, const double* coef, int stride,
                          const double* beta, void* y, cudaStream_t s);

// `count` whole PCG iterations (the three steps, same contract) in ONE cooperative launch of
// `grid` co-resident blocks, with two grid-wide barriers per iteration instead of three kernel
// boundaries (pcg_persistent.cu). SELL matrices only. Each block keeps its own copy of the
// k rhs_states, computed identically from the same partial sums; block 0 writes them back at
// the end. `p_other`: a second p buffer of the group's size; `partials`: 3 * kc * grid doubles.
// Returns cudaErrorNotSupported when not SELL.
cudaError_t pcg_persistent(precision pr, const matrix_view& a, const group_view& g, void* p_other,
                           double* partials, int grid, int count, cudaStream_t s);
// Blocks of the persistent kernel that fit on the device at once (0 on error).
int pcg_persistent_max_grid(precision pr, int kc, int sm_count);

}  // namespace cnc::cuda
