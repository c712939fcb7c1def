// The bytes each stage of a solve allocates, written once: the checks before large allocations
// (util/memory.hpp) and cncEstimateMemory (api/api_memory.cpp) use these functions, and README's
// and ARCHITECTURE's "Memory" sections state the same constants.
//
// For n rows, nnz stored entries, k systems (CNC_NB_SYSTEMS), double values and vectors:
//   variables         8 n k + n (values, locks), from cncBegin(CNC_SYSTEM) on
//   assembly          the hash table: s slots a row of 20 bytes (column 4, value 8, and the low
//                     part of the double-double sum 8, made at the first duplicate); s = nnz/n /
//                     0.55 rounded up with CNC_NNZ_HINT, else 11, doubled while rows outgrow it
//                     (both tables alive while it doubles: 1.5x); b 8 n k, the locks' copy n and,
//                     with locked variables, the values' 8 n k; out-of-order bulk calls bucket
//                     through 16 bytes an entry, at most 64 MiB (not in the estimate)
//   End(MATRIX)       the CSR, 12 nnz + 8 (n + 1), and 4 n (free variable map), beside the table
//   solve (host)      x gathered 8 n k, the solver's copy of x 8 n k, the inverse diagonal 8 n;
//                     the chosen format (AUTO: at most 1.1x the CSR; forced BCRS/SELL: worst
//                     case); a reordered system (CNC_REORDER AUTO or RCM) one more CSR, 4 n,
//                     16 n k and about 16 n of RCM work
//   CPU backend       (5 k + 1) n elements of 8 bytes (4 in CNC_SINGLE): x r p q b, diagonal;
//                     4 nnz of float values in SINGLE/MIXED; BiCGSTAB 4 k n more, GMRES
//                     restart k n, CG with SSOR 2 k n
//   GPU backends      the CSR uploaded (12 nnz + 8 n; 8 nnz + 8 n with float values) beside the
//                     format built from it, the diagonal 8 n, (6 + method) kc n vector elements
//                     (kc: k rounded up to a power of two per group of 8), 8 n k of b/x staging:
//                     a stencil needs 256 bytes a row in double (measured peak 224-242 on an
//                     H100), 142 in mixed (112-121); 148 and 107 stay while the matrix is kept
//   direct solvers    (CNC_CHOLMOD, CNC_SUPERLU: no backend, no reordered copy, nothing on a
//                     device) the library's copy of the CSR's indices (CHOLMOD: 8 (n + 1) + 8 nnz
//                     as SuiteSparse_long; SuperLU: 4 (n + 1) + 12 nnz, values too), the solution
//                     8 n k, and the factor, which is an ESTIMATE: its fill depends on the ordering
//                     the library computes from the pattern, which the model does not see. Fitted
//                     to the peak resident growth of 3D 7-point stencils (the usual worst case of
//                     mesh matrices; Debian's CHOLMOD 3.0 with AMD/METIS, SuperLU 5.3 with
//                     COLAMD, measured at 10 k - 125 k rows): CHOLMOD 20 nnz n^(1/3) bytes
//                     (measured 18.1-19.3 at a kept factor's second one-vector solve, which
//                     converts it to simplicial with both forms alive a moment; a first solve
//                     peaks ~35 % lower), SuperLU 18 nnz n^0.48, above its peaks
//                     (1.3, 1.6, 3.1 kB an entry at 11 k, 27 k, 64 k rows: its LU fills faster
//                     and its arrays grow in steps), plus 8 MiB of the libraries' and BLAS's
//                     workspace (measured 7.5 at 1.7 k rows). 2D meshes fill less: a 5-point
//                     stencil needs 3-4x less with CHOLMOD, up to 13x less with SuperLU; a matrix
//                     whose ordering fails can need more (dense: n² / 2 and n² entries)
// The assembled route's peak is at End(MATRIX), table and CSR both alive: for a 7-point stencil
// with duplicates, 9 + 220 + 8 + 9 + 91 + 4 = 341 bytes a row. Measured (peak resident growth,
// VmHWM, CPU backend, 2 threads, tests/test_memory_limits.c): 334 bytes a row at 1 M and 2.1 M
// rows (the estimate is 1.02-1.04x of it with CNC_FORMAT_CSR and CNC_REORDER_NONE, 1.24-1.25x on
// AUTO, whose format and ordering bounds do not apply to a stencil); 246 without duplicates (no
// low parts). cncSolveCSR of the same stencil (canonical arrays, the CPU backend's own copy +
// the solve stage: 91 + 8 + 48 + 8 = 155 modelled): 156 measured.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cnc.h"
#include "direct/direct.hpp"
#include "matrix/format.hpp"

namespace cnc::memory {

// Bytes of the stored pieces (doubles unless said).
constexpr double variable_bytes = 8;     // a variable of one system (the context's values)
constexpr double lock_bytes = 1;         // a variable's lock flag
constexpr double slot_bytes = 12;        // a hash slot: column (4) + value (8)
constexpr double low_part_bytes = 8;     // a hash slot's low part (double-double sums)
constexpr double bulk_entry_bytes = 16;  // an out-of-order bulk entry, bucketed
constexpr double bulk_buffer_max = 64.0 * (1 << 20);  // the bucketing buffer's bound
constexpr double csr_entry_bytes = 12;                // a CSR entry: column (4) + value (8)
constexpr double offset_bytes = 8;                    // a row offset
constexpr double index_bytes = 4;                     // a row or column number
constexpr int cpu_vectors = 5;                        // x, r, p, q, b per system; + the diagonal
constexpr int device_vectors = 5;

inline double variables(double n, double k) { return n * k * variable_bytes + n * lock_bytes; }
inline double hash_table(double rows, double stride, bool low_parts) {
  return rows * stride * (slot_bytes + (low_parts ? low_part_bytes : 0));
}
inline double csr(double n, double nnz, double value_bytes = 8) {
  return (n + 1) * offset_bytes + nnz * (index_bytes + value_bytes);
}
// BCRS b x b from nnz entries: at most one block per entry (+ a padding block per block row).
inline double bcrs_bound(double n, double nnz, int b, double value_bytes = 8) {
  const double block_rows = std::ceil(n / b);
  return (block_rows + 1) * offset_bytes + (nnz + block_rows) * (index_bytes + b * b * value_bytes);
}
inline double bcrs(double n, double blocks, int b, double value_bytes = 8) {
  return (std::ceil(n / b) + 1) * offset_bytes + blocks * (index_bytes + b * b * value_bytes);
}
// SELL of `entries` stored entries (padding included).
inline double sell(double n, double entries, double value_bytes = 8) {
  return (std::ceil(n / sell_slice) + 1) * offset_bytes + entries * (index_bytes + value_bytes);
}
// SELL's worst case: each slice as wide as all its entries (one long row per slice).
inline double sell_bound(double n, double nnz, double value_bytes = 8) {
  return sell(n, sell_slice * (nnz + std::ceil(n / sell_slice)), value_bytes);
}
// The chosen format on the host (AUTO: SELL only within 10% of CSR's bytes, BCRS only below
// 90%; a forced format: its bound).
inline double matrix_format(double n, double nnz, int api_format, double value_bytes) {
  switch (api_format) {
    case CNC_FORMAT_CSR:
      return csr(n, nnz, value_bytes);
    case CNC_FORMAT_BCRS2:
      return bcrs_bound(n, nnz, 2, value_bytes);
    case CNC_FORMAT_BCRS4:
      return bcrs_bound(n, nnz, 4, value_bytes);
    case CNC_FORMAT_SELL:
      return sell_bound(n, nnz, value_bytes);
    case CNC_FORMAT_ZCSR:  // a quarter of the real-equivalent's entries, two values each
      return csr(n / 2, nnz / 4, 2 * value_bytes);
    case CNC_FORMAT_ZSELL:  // SELL's worst case over the complex rows
      return sell_bound(n / 2, nnz / 4, 2 * value_bytes);
    default:
      return 1.1 * csr(n, nnz, value_bytes);
  }
}
// A direct solver's factor and the library's workspace, estimated (see above): CNC_CHOLMOD or
// CNC_SUPERLU, n rows, nnz entries; CNC_CUDSS as SuperLU (its LU's fit, an upper bound when it
// factors a symmetric A by Cholesky), on the device. Never more than a dense factor (n² / 2
// entries, n² for LU, 12 bytes each).
constexpr double direct_workspace_bytes = 8.0 * (1 << 20);
inline double direct_factor(int solver, double n, double nnz) {
  const double fitted =
      solver == CNC_CHOLMOD ? 20.0 * nnz * std::cbrt(n) : 18.0 * nnz * std::pow(n, 0.48);
  const double dense = (solver == CNC_CHOLMOD ? 0.5 : 1.0) * n * n * (index_bytes + 8);
  return std::min(fitted, dense) + direct_workspace_bytes;
}
// The direct solver's copy of the CSR (its index types) and the solution.
inline double direct_copies(int solver, double n, double nnz, double k) {
  const double indices =
      solver == CNC_CHOLMOD ? 8 * (n + 1) + 8 * nnz : 4 * (n + 1) + (4 + 8) * nnz;
  return indices + n * k * variable_bytes;
}
// Extra vectors of n k elements a method adds (CNC_BICGSTAB, CNC_GMRES, CG with SSOR, block CG).
inline int method_vectors(int solver, int gmres_restart, bool ssor) {
  if (solver == CNC_BICGSTAB) return 4;
  if (solver == CNC_BLOCK_CG) return 2;                        // z and the true residual's t
  if (solver == CNC_GMRES) return std::max(gmres_restart, 1);  // restart - 1, and a scratch
  return ssor ? 2 : 0;
}
// The CPU backend's system: vectors and diagonal, float values in SINGLE/MIXED.
inline double cpu_system(double n, double nnz, double k, double vector_bytes,
                         double matrix_value_bytes, int extra_vectors) {
  return ((cpu_vectors + extra_vectors) * k + 1) * n * vector_bytes +
         (matrix_value_bytes < 8 ? nnz * matrix_value_bytes : 0);
}
// The hash table's windows: CNC_NNZ_HINT's entries a row at 55% load, else 11 (6 entries);
// at least 2 and at most 2^16 slots.
constexpr double window_load = 0.55;
constexpr double default_row_entries = 6;
constexpr std::uint32_t max_stride = 1u << 16;
inline std::uint32_t initial_stride(std::int32_t rows, std::int64_t nnz_hint) {
  const double per_row = nnz_hint > 0 ? double(nnz_hint) / std::max(rows, 1) : default_row_entries;
  return std::uint32_t(std::clamp(std::ceil(per_row / window_load), 2.0, double(max_stride)));
}

// What cncEstimateMemory models: a system of n rows and nnz entries (after duplicates are
// summed), assembled with duplicates (the table's low parts made) and solved with the context's
// parameters. Each stage's figure is what is alive at its peak; `host` is the largest of them.
struct solve_shape {
  double n = 0, nnz = 0, k = 1;
  std::int64_t nnz_hint = 0;      // CNC_NNZ_HINT (0: none)
  double vector_bytes = 8;        // 4 in CNC_SINGLE
  double matrix_value_bytes = 8;  // 4 in CNC_SINGLE and CNC_MIXED
  int format = CNC_FORMAT_AUTO;
  int solver = CNC_CG;  // CNC_CG, CNC_BICGSTAB, CNC_GMRES, or a direct one (CNC_CHOLMOD ...)
  int gmres_restart = 30;
  bool ssor = false;
  bool reorder = true;  // CNC_REORDER AUTO or RCM: a permuted copy may be made
  bool cpu = true;      // the CPU backend may run it (CPU, or AUTO's last resort)
  bool gpu = false;     // a GPU backend may run it
};
struct solve_estimate {
  double assembly = 0, end_matrix = 0, solve = 0, host = 0, device = 0;
};

// Rows' windows after the growth that rows of nnz/n entries cause (and whether it grew).
inline double grown_stride(const solve_shape& s, bool& grew) {
  double stride = initial_stride(std::int32_t(std::min(s.n, 2147483647.0)), s.nnz_hint);
  grew = false;
  while (stride < s.nnz / std::max(s.n, 1.0) && stride < max_stride) stride *= 2, grew = true;
  return stride;
}

// k systems in groups of at most 8, each group's columns rounded up to a power of two.
inline double device_columns(double k) {
  const double full = std::floor(k / 8), rest = k - 8 * full;
  double kc = rest > 0 ? 1 : 0;
  while (kc > 0 && kc < rest) kc *= 2;
  return 8 * full + kc;
}

inline solve_estimate estimate(const solve_shape& s) {
  solve_estimate e;
  const double n = s.n, nnz = s.nnz, k = s.k;
  bool grew = false;
  const double stride = grown_stride(s, grew);
  const double table = hash_table(n, stride, true);
  const double rhs = n * k * variable_bytes;
  const double builder_copies = n * lock_bytes + n * k * variable_bytes;  // locks, locked values
  const double vars = variables(n, k);
  e.assembly = vars + table * (grew ? 1.5 : 1.0) + rhs + builder_copies;
  e.end_matrix = vars + table + rhs + builder_copies + csr(n, nnz) + n * index_bytes;
  const double system = csr(n, nnz) + rhs + n * index_bytes + n * lock_bytes;  // kept: A, b, map
  const double x_copies = 2 * n * k * variable_bytes;  // cncSolve's gather, the solver's copy
  if (direct::is_direct_solver(s.solver)) {            // no ordering stage or backend
    const double copies = direct_copies(s.solver, n, nnz, k);
    const double factor = direct_factor(s.solver, n, nnz);
    if (s.solver == CNC_CUDSS) {  // the factor and the CSR's copy on the device, b and x too
      e.solve = vars + system + x_copies + copies;
      e.device = copies + factor + n * k * variable_bytes;
    } else {
      e.solve = vars + system + x_copies + copies + factor;
    }
    e.host = std::max({e.assembly, e.end_matrix, e.solve});
    return e;
  }
  const double reordered =
      s.reorder ? csr(n, nnz) + n * index_bytes + 2 * n * k * variable_bytes + 16 * n : 0;
  const double converted = s.format == CNC_FORMAT_CSR ? 0 : matrix_format(n, nnz, s.format, 8);
  const int extra = method_vectors(s.solver, s.gmres_restart, s.ssor);
  const double backend =
      s.cpu ? cpu_system(n, nnz, k, s.vector_bytes, s.matrix_value_bytes, extra) : 0;
  e.solve = vars + system + x_copies + reordered + converted + n * variable_bytes + backend;
  e.host = std::max({e.assembly, e.end_matrix, e.solve});
  if (s.gpu) {
    const double np = n + sell_slice, kc = device_columns(k);
    const double matrix = matrix_format(n, nnz, s.format, s.matrix_value_bytes);
    // The CSR goes up as it is and the format is built from it on the device (CUDA; OpenCL's
    // SELL); then the vectors (one more for the vector surface's scratch) and b/x staging. In
    // double, CUDA checks and converts the caller's CSR there (CG) and its scratch and the
    // vectors meet the uploaded CSR: the sum; in other precisions the CSR is gone before the
    // vectors come. Measured on an H100 (peak of cudaMemGetInfo, 7-point stencils of 2.1 M and
    // 16.8 M rows, SELL): the estimate is 1.06-1.14x the peak in double, 1.18-1.26x in mixed.
    const double upload = csr(n, nnz, s.matrix_value_bytes) + matrix + np * 8;
    const double vectors = (device_vectors + 1 + extra) * kc * np * s.vector_bytes + n * k * 8;
    e.device =
        s.matrix_value_bytes == 8 ? upload + vectors : std::max(upload, matrix + np * 8 + vectors);
  }
  return e;
}

}  // namespace cnc::memory
