// The solve pipeline, behind the C API: backend choice -> format choice -> conversion and upload
// (kept while the matrix is unchanged) -> Krylov solver -> statistics.
//
// The API layer (api/) checks arguments and state and forwards here; every decision of how a
// solve runs is made in this stage:
//   - which backend runs it (solve_options::backend, CNC_BACKEND, the size of the system);
//   - which format the matrix takes on it (choose_format, or the one the caller forced);
//   - whether the device already holds this matrix (one cache, one key: prepared_key);
//   - which method solves (PCG on the device; BiCGSTAB/GMRES over the same device system).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "cnc.h"
#include "direct/direct.hpp"
#include "matrix/matrix.hpp"
#include "solver/operator_system.hpp"
#include "solver/pcg.hpp"
#include "util/fingerprint.hpp"

namespace cnc {

// The native complex formats (CNC_FORMAT_ZCSR, CNC_FORMAT_ZSELL).
inline bool native_complex(int api_format) {
  return api_format == CNC_FORMAT_ZCSR || api_format == CNC_FORMAT_ZSELL;
}

struct solve_options {
  int backend = 0;  // CNC_BACKEND_* (AUTO: CNC_BACKEND environment, then by size)
  int threads = 0, device_index = -1;
  int format = 0;  // CNC_FORMAT_*
  // The matrix is the real-equivalent of a complex one (cncSolveCSRComplex): CNC_FORMAT_ZCSR and
  // _ZSELL are allowed (and then reordering renumbers complex unknowns, (re, im) pairs kept
  // together).
  bool complex_system = false;
  // The caller left the complex format to AUTO (cncSolveCSRComplex sets `format` to ZCSR then):
  // ZSELL may be chosen instead where the backend stores it and its padding is small.
  bool complex_auto = false;
  // Complex BiCGSTAB and GMRES: Jacobi on the complex diagonal, D⁻¹ as (re, im) of 1 / a_qq for
  // each complex unknown in the caller's numbering (2 n doubles, alive for the call; the ordering
  // stage renumbers it with b and x); null: Jacobi on the real parts (the device's d).
  const double* complex_dinv = nullptr;
  // With complex_dinv: its complex unknowns whose a_qq is absent or below DBL_MIN (D⁻¹ takes 1),
  // reported in place of the real Jacobi's count (which sees only Re a_qq).
  std::int64_t complex_dinv_ones = 0;
  precision prec = precision::f64;
  bool jacobi = true;
  double ssor_omega = 0;  // > 0: SSOR with this ω (CPU backend only)
  int solver = 0;  // CNC_CG / CNC_BICGSTAB / CNC_GMRES, or a direct one: CNC_CHOLMOD / CNC_SUPERLU
  std::int64_t max_iterations = 0;  // 0 = automatic
  double threshold = 1e-6;
  int check_interval = 0, gmres_restart = 30;
  // CG over the vector surface, on past indefinite curvature (CNC_INTERNAL_CG_INDEFINITE).
  bool cg_indefinite = false;
  bool keep_matrix = true;         // CNC_KEEP_MATRIX: keep the prepared matrix for the next solve
  int reorder = CNC_REORDER_AUTO;  // CNC_REORDER_*
  progress_fn progress;  // may be empty; its iterate is in this call's numbering and scale
  std::function<void(int, const std::string&)> log;  // CNC_LOG_* levels; may be empty
};

// Whether o's method needs A Hermitian (symmetric) positive definite: CG, block CG and CHOLMOD.
// A complex system (cncSolveCSRComplex) is then checked Hermitian with a real positive diagonal
// before anything is solved; every place that decides that check asks here.
inline bool needs_hermitian(const solve_options& o) {
  return o.solver == CNC_CG || o.solver == CNC_BLOCK_CG || o.solver == CNC_CHOLMOD;
}

struct solve_stats {
  std::int64_t iterations = 0;
  double error = 0, true_error = 0, true_error_min = 0;
  int reason = CNC_REASON_NONE;
  double elapsed = 0, assembly = 0, conversion = 0, upload = 0, solve = 0, gflops = 0, gbps = 0;
  std::int64_t bytes_per_iteration = 0, nnz = 0, zero_diagonals = 0;
  int backend_used = 0, format_used = 0, solver_used = 0;
  double fill_ratio = 1.0;
  std::string backend_name, device_name;
  int reorder_used = CNC_REORDER_NONE;
  double reorder_time = 0;
  std::int64_t long_rows = 0;
  std::string choice_reason;  // format, long rows and ordering, and why
  // The last system's iterations and true relative residual (OpenNL reports that system).
  std::int64_t last_iterations = 0;
  double last_true_error = 0;
  // Per system, from the method (cncGetSystemIntegerv / cncGetSystemDoublev); empty after a
  // direct solve.
  std::vector<std::int64_t> system_iterations;
  std::vector<int> system_reasons;
  std::vector<double> system_error, system_true_error;
};

// What a prepared (converted, device-resident) matrix was made from. A solve reuses the device
// system exactly when its key is equal: same matrix version, same backend object, same requested
// format (AUTO stays AUTO: the choice is part of what is cached), precision, systems,
// preconditioner and solver family.
struct prepared_key {
  std::uint64_t version = 0;  // 0 = nothing prepared
  const backend* owner = nullptr;
  int format_requested = 0;
  precision prec = precision::f64;
  int k = 0;
  bool jacobi = true;
  bool operator==(const prepared_key&) const = default;
};

struct prepared_system {
  prepared_key key;
  format fmt = format::csr;
  bcrs_matrix bcrs;           // when fmt is bcrs2/bcrs4 and the backend keeps the host matrix
  sell_matrix sell;           // likewise for SELL
  zcsr_matrix zcsr;           // likewise for ZCSR
  std::int64_t stored = 0;    // blocks (BCRS), entries (SELL) or complex entries (ZCSR) stored
  std::int64_t nnz = 0;       // entries of the CSR it was made from
  std::int32_t n_padded = 0;  // its rows, padding included
  csr_matrix csr;  // the CSR a backend that keeps host pointers reads, when the caller's may go
  std::int64_t zero_diagonals = 0;
  // A complex matrix checked Hermitian with a real positive diagonal (needs_hermitian's check)
  // when it was prepared; a kept system later reused by CG or block CG without it is checked then.
  bool hermitian = false;
  std::unique_ptr<device_system> dev;
};

// The times build_system spent, in seconds.
struct build_times {
  double layout = 0, diagonal = 0, system = 0;
};
// The backend's system over the canonical CSR `a` in the format prep.fmt (set by the caller):
// the BCRS/SELL layout on the host (unless the backend builds it), the inverse diagonal (ones
// without jacobi), then be.create_system. Fills prep's layout, stored, nnz, n_padded,
// zero_diagonals and dev; a backend that does not keep the host matrix leaves no layout behind.
// The caller keeps `a` alive as long as prep.dev where be.keeps_host_matrix().
build_times build_system(backend& be, const csr_view& a, precision p, bool jacobi, int k,
                         prepared_system& prep);
// The same for a complex matrix held as zcsr (prep.fmt), straight from its canonical complex CSR.
build_times build_system(backend& be, const zcsr_view& a, precision p, bool jacobi, int k,
                         prepared_system& prep);

// The caller's CSR as handed over (cncSolveCSR: host memory; cncSolveCSRDevice: CUDA device
// memory), `base`-based.
struct caller_csr {
  std::int32_t n = 0;
  const std::int64_t* row_ptr = nullptr;
  const std::uint32_t* col = nullptr;
  const double* val = nullptr;
  int base = 0;
  // cncSolveCSRComplex: an (re, im) pair per entry. The system solved is the real-equivalent of
  // 2n rows (conversion/complex.hpp), held as zcsr straight from these arrays: the
  // real-equivalent's entries are never built.
  bool complex = false;
  // The arrays are the pipeline's own (a reordered complex CSR kept with the ordering, made
  // from the caller's and checked there): no copy is kept for the CPU backend, no check redone.
  bool kept = false;
  // The rows and entries of the real system solved (the real-equivalent's when complex).
  std::int32_t rows() const { return complex ? 2 * n : n; }
  std::int64_t entries() const { return (row_ptr[n] - base) * (complex ? 4 : 1); }
};

// What cncSolveCSR was handed: sizes and fingerprints of the three arrays, and the version the
// prepared system made from them was cached under. Equal content reuses that system.
struct caller_content {
  std::int32_t n = -1;
  std::int64_t nnz = -1;
  int base = 0;
  fingerprint rows, cols, vals;
  std::vector<fingerprint> val_pieces;  // the values' piece digests: a change is seen early
  std::uint64_t version = 0;            // 0 = nothing remembered
  bool same_arrays(const caller_content& o) const {
    return n == o.n && nnz == o.nnz && base == o.base && rows == o.rows && cols == o.cols &&
           vals == o.vals;
  }
};

// Text of a CNC_REASON_* value, e.g. "converged" (log lines and cncGetString).
const char* reason_name(int reason);

// Solves with the caller's operators (cncSetOperator) on the host: `a` applies the matrix (the
// caller's function, or the assembled CSR through csr_operator), `m` the preconditioner (empty:
// none). n rows, k column-major systems in host memory; x is the initial guess in and is written
// only when the solve ends without error. CG, BiCGSTAB or GMRES (o.solver) over the vector
// surface, in double; `why` says which operators ran (statistics' choice_reason). Fills *stats;
// throws cnc::error (the caller's function failing included).
void solve_with_operators(const solve_options& o, std::int32_t n, int k, const column_operator& a,
                          const column_operator& m, const std::string& why, const double* b,
                          double* x, solve_stats& stats);

class pipeline {
 public:
  // Solves a x = b for k column-major systems of a.n rows; x is the initial guess in, the
  // solution out (host memory). `version` identifies the matrix for the device cache (a new
  // value for every new matrix). Throws cnc::error; fills *stats.
  void solve(const solve_options& o, const csr_view& a, std::uint64_t version, int k,
             const double* b, double* x, solve_stats& stats);
  // The same from the caller's CSR as handed to cncSolveCSR (host memory, `base`-based, rows
  // maybe unsorted or with duplicates). On a backend that converts on the device, a 0-based
  // CSR goes up as it is and is checked and converted there (CG in double; no host pass over
  // the entries); anything else is made canonical on the host first (csr_from_user), which
  // also names the first bad entry of a CSR the device check refused.
  // The arrays' fingerprints are kept (computed while the device solves): a later call with
  // the same arrays (same bytes, wherever they lie) reuses the prepared system and moves only
  // b and x; with the same row offsets and columns and new values, only the values go up and
  // are written into the device's layout in place (refill). `version` is a fresh value; the
  // previous one is used when the pattern is equal.
  void solve_user(const solve_options& o, const caller_csr& in, std::uint64_t version, int k,
                  const double* b, double* x, solve_stats& stats);
  // The same with the matrix, b and x in CUDA device memory of the backend's device. x is
  // written once, at the end.
  void solve_device(const solve_options& o, const caller_csr& a, int k, const double* b, double* x,
                    solve_stats& stats);
  // Forgets the backend and the device-resident matrix.
  void reset();
  // Frees the prepared (device-resident) matrix and the kept factorization; the backend stays.
  void release_matrix();

 private:
  // The backend of kind `kind` with the options' threads/device (cached), or nullptr when auto
  // selection should try the next kind (reason logged). Throws when `kind` was requested.
  backend* backend_for(const solve_options& o, int kind, bool requested);
  // `z`: the complex matrix (zcsr), of which `a` then gives only the real-equivalent's rows.
  void prepare(const solve_options& o, const csr_view& a, const zcsr_view* z, std::uint64_t version,
               int k, solve_stats& stats);
  // `alongside` (may be empty) runs while the backend solves: on another thread when the solve
  // runs on a GPU, after it on the CPU backend (whose solve uses every core). new_values: `raw`
  // has the pattern of the matrix prepared under `version` and other values (refill).
  // Decides the ordering (pipeline_order.cpp: kept per matrix version), then solves in it.
  void solve_any(const solve_options& o, const csr_view* canonical, const caller_csr* raw,
                 std::uint64_t version, int k, const double* b, double* x, solve_stats& stats,
                 const std::function<void()>& alongside = {}, bool new_values = false);
  // A matrix to be solved as P A Pᵀ (pipeline_order.cpp), perm[new] = old. P A Pᵀ made on the
  // host is kept in *host by the ordering (with the prepared system), and reused from there.
  struct permuted_csr {
    std::int32_t n = 0;
    std::int64_t nnz = 0;
    std::function<const csr_view&()> source;  // A (made canonical at its first call)
    // perm[new] = old. Empty until ordered: on the device from the intake's upload, else by
    // `ready`, which orders on the host if it is still empty and then renumbers b and x; every
    // solve path calls it before the solve reads them.
    std::vector<std::int32_t>* perm = nullptr;
    std::function<void()> ready;
    std::function<void()> order;  // the ordering only (made on the host if still empty)
    const double* b = nullptr;    // the caller's b and x, in the caller's numbering
    double* x = nullptr;
    bool device_numbering = false;  // the last run renumbered b and x on the device
    csr_matrix* host = nullptr;     // P A Pᵀ made on the host: empty until a path needs it
    double seconds = 0;             // what making P A Pᵀ took, where it was made (0: not made)
    double order_seconds = 0;       // what the ordering took where it was deferred to (0: not)
    std::string order_where;        // where it was made, for the log
  };
  // The solve in the matrix's own order (the permuted one when reordered). With `pm` (and
  // neither `canonical` nor `raw`), P A Pᵀ is made on the device where the backend takes it in
  // (device_intake), and on the host (permute_csr) only where another path needs it.
  void solve_in_order(const solve_options& o, const csr_view* canonical, const caller_csr* raw,
                      std::uint64_t version, int k, const double* b, double* x, solve_stats& stats,
                      const std::function<void()>& alongside, bool new_values,
                      permuted_csr* pm = nullptr);
  // Host CSR (row offsets already checked) -> device as it is -> checked and converted there.
  // False (nothing kept) when the device finds the CSR not canonical: the host path follows.
  // keep_pattern: the system can be refilled (create_system_from_device).
  // With `pm` (`in` canonical, in the caller's numbering), the ordering is made on the device
  // from the upload when pm asks for it and is not made yet, then P A Pᵀ, which is taken in
  // instead (false also when the device memory is too small for it); the times go to pm.
  bool device_intake(const solve_options& o, const caller_csr& in, std::uint64_t version, int k,
                     bool keep_pattern, solve_stats& stats, permuted_csr* pm = nullptr);
  // pm's ordering made on the device from a, completed on the host where the device leaves
  // components to it; left empty (logged) where the device cannot make it.
  void order_on_device(const solve_options& o, permuted_csr& pm, const device_csr& a);
  // The same for a complex caller_csr (0-based): uploaded as it is, checked there (Hermitian
  // for CG) and kept as zcsr. False (nothing kept) when the device cannot tell it is canonical
  // (and Hermitian): the host path follows, and names what is wrong.
  bool complex_device_intake(const solve_options& o, const caller_csr& in, std::uint64_t version,
                             int k, solve_stats& stats);
  // prepare_from_device, false (logged: the host path follows) when the device memory is too
  // small; `what` names what did not fit.
  bool built_from_device(const solve_options& o, const device_csr& a, format fmt,
                         std::uint64_t version, int k, bool keep_pattern, const char* what);
  // prep_ from a canonical CSR in the backend's device memory, built there in format fmt.
  void prepare_from_device(const solve_options& o, const device_csr& a, format fmt,
                           std::uint64_t version, int k, bool keep_pattern);
  // The prepared system takes the caller's new values of its pattern: only the values go up,
  // and are written in place on the device (device_system::refill_values). False, with nothing
  // prepared any more, when that cannot be done (the values are not all finite, the backend or
  // the system cannot): the caller then prepares anew.
  bool refill(const solve_options& o, const caller_csr& in, solve_stats& stats);
  // With pm (a reordered system; b and x then pm's renumbered buffers), b and x are renumbered
  // for the solve, on the device where the system can (pm->b, pm->x read and written there),
  // else on the host (pm->ready).
  void run(const solve_options& o, const csr_view& a, int k, const double* b, double* x,
           bool on_device, solve_stats& stats, const std::function<void()>& alongside = {},
           permuted_csr* pm = nullptr);
  // A direct solver (o.solver CNC_CHOLMOD or CNC_SUPERLU), on the host, from the assembled CSR
  // (`canonical`) or the caller's (`raw`). The factorization is kept (CNC_KEEP_MATRIX) for the
  // next solve of the same matrix: the same `version` (cncSolve), or arrays of the same content
  // (cncSolveCSR, told by their fingerprints). x is written only when A was factored.
  void solve_direct(const solve_options& o, const csr_view* canonical, const caller_csr* raw,
                    std::uint64_t version, int k, const double* b, double* x, solve_stats& stats);

  std::unique_ptr<backend> be_;
  int be_kind_ = 0, be_threads_ = -1, be_device_ = -2;
  unsigned auto_skip_ = 0;  // kinds auto selection found absent or unsuitable (bit per kind)
  prepared_system prep_;
  caller_content last_caller_;  // what cncSolveCSR last prepared prep_ from
  // The ordering decided for the matrix (or pattern) of `version`: perm[new] = old (empty: the
  // caller's order), the permuted CSR the prepared system was made from, and why.
  struct kept_order {
    std::uint64_t version = 0;  // 0 = none decided
    int requested = 0;          // solve_options::reorder it was decided under
    bool pairs = false;         // decided for zcsr: complex unknowns renumbered as (re, im) pairs
    std::vector<std::int32_t> perm;
    csr_matrix csr;
    zcsr_matrix zcsr;  // the permuted complex CSR, for a complex caller_csr
    std::string why;
  } order_;
  // The kept factorization of a direct solver: the matrix version it was made from (cncSolve),
  // or, for cncSolveCSR, the content of the caller's arrays (caller.version != 0).
  struct kept_factorization {
    std::uint64_t version = 0;  // 0 = nothing kept
    int solver = 0;
    caller_content caller;
    std::unique_ptr<direct::factorization> f;
  } factored_;
};

}  // namespace cnc
