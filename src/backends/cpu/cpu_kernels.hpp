// CPU kernel interface: per-ISA tables of the fused PCG steps over a range of (block) rows.
// Vectors are interleaved over the k right-hand sides: element i of system j is v[i*k + j], so
// one pass over the matrix serves all k systems. Partial sums go to `part` (per chunk of rows);
// the backend adds the chunks' partials in a fixed order, so results do not depend on threads.
#pragma once

#include <cstdint>

#include "matrix/format.hpp"  // enums and constants only: no function is called here

namespace cnc {

struct cpu_matrix_view {
  format fmt = format::csr;
  int group = 1;                          // rows of one row group: group_rows(fmt)
  std::int32_t rows = 0;                  // (block) rows, or SELL slices
  const std::int64_t* row_ptr = nullptr;  // SELL: slice offsets
  const std::int32_t* col = nullptr;
  const void* val = nullptr;  // float or double, per table
  // CSR with one system: the gathers of x prefetched entries ahead, when the columns are
  // scattered (each gather a cache miss: more in flight than the out-of-order window finds).
  // Not read by the AVX-512 kernels in double, whose 8-wide rows (csr_row_dot8) beat it.
  bool prefetch_gathers = false;
};

struct cpu_step {
  cpu_matrix_view a;
  int k = 1;
  void *x = nullptr, *r = nullptr, *p = nullptr, *q = nullptr;  // vectors (float or double)
  const void* b = nullptr;
  const void* d = nullptr;                // inverse diagonal, same type as the vectors
  const void* in = nullptr;               // apply: input
  void* out = nullptr;                    // apply: output
  const double* alpha = nullptr;          // per system
  const double* beta = nullptr;           // per system
  const std::uint8_t* active = nullptr;   // per system: 1 = running
  const std::uint8_t* stepped = nullptr;  // per system, update_p: 1 = took update_xr's step
};

// Row ranges are in block rows for BCRS. part sizes: spmv_dot k, init/update_xr 2k (rz, rr).
// The *_tail steps are spmv_dot and init without their product: they take q = A p (r = A x)
// as already written over the rows (long CSR rows, whose pieces the backend sums itself).
// piece: sums[j] = the product of CSR entries [e0, e1) (of one row) with `in`, system j (k VT).
// gram and combine are the cross-column products (device_system::block_dots, block_combine) over
// element rows [r0, r1) of vectors of k columns (row r, column j at r*k + j):
//   gram: part[i*k + j] = Σ_r u[r*k + i] v[r*k + j] (in double) for active j (mask[j]), 0 for
//         the others;
//   combine: y_j = beta_j y_j + Σ_i coef[i*k + j] v_i for active j, in the vectors' precision
//         (coef and beta are VT); zero coefficients skipped (v_i not read), beta_j == 0
//         overwrites; d (VT per element row, or nullptr): v's rows taken as d[r] v[r].
// block_update: device_system::block_update over element rows [r0, r1), its products' partials
// (5 k*k + 2 k doubles, backend.hpp's order) into part; coef and d are VT; z nullptr where Z is
// not stored.
struct cpu_block_update {
  static constexpr int grams = 5;  // device_system::block_update_grams
  const void* p = nullptr;
  const void* q = nullptr;
  const void* coef = nullptr;  // k * k
  const void* d = nullptr;     // per element row
  void* x = nullptr;
  void* r = nullptr;
  void* z = nullptr;
  int k = 0;
  const std::uint8_t* mask = nullptr;
};
struct cpu_kernel_table {
  void (*spmv_dot)(const cpu_step&, std::int32_t r0, std::int32_t r1, double* part);
  void (*init)(const cpu_step&, std::int32_t r0, std::int32_t r1, double* part);
  void (*update_xr)(const cpu_step&, std::int32_t r0, std::int32_t r1, double* part);
  void (*update_p)(const cpu_step&, std::int32_t r0, std::int32_t r1);
  void (*apply)(const cpu_step&, std::int32_t r0, std::int32_t r1);
  void (*spmv_dot_tail)(const cpu_step&, std::int32_t r0, std::int32_t r1, double* part);
  void (*init_tail)(const cpu_step&, std::int32_t r0, std::int32_t r1, double* part);
  void (*piece)(const cpu_step&, const void* in, std::int64_t e0, std::int64_t e1, void* sums);
  void (*gram)(const void* u, const void* v, int k, std::int64_t r0, std::int64_t r1,
               const std::uint8_t* mask, double* part);
  void (*combine)(const void* v, const void* d, const void* coef, const void* beta, int k,
                  std::int64_t r0, std::int64_t r1, const std::uint8_t* mask, void* y);
  void (*block_update)(const cpu_block_update& u, std::int64_t r0, std::int64_t r1, double* part);
};

// One table per ISA build of kernels_impl.hpp; nullptr if this build lacks that ISA.
const cpu_kernel_table* cpu_kernels_generic(precision p);
const cpu_kernel_table* cpu_kernels_avx2(precision p);
const cpu_kernel_table* cpu_kernels_avx512(precision p);

}  // namespace cnc
