// The backend interface: what the solver (src/solver/pcg.cpp, written once) needs from a device.
//
// A backend (cpu, opencl, cuda) creates a device_system: one matrix plus the work vectors of k
// right-hand sides, resident on the device for as long as the matrix is unchanged. The solver
// drives it through three fused steps per iteration whose scalar logic is part of the contract,
// so that GPU backends can keep every scalar on the device and run many iterations between two
// host reads (one read of k small structs per convergence check; paper 004 §2.3.5).
//
// Vectors (device side, per right-hand side j): x, r, p, q, b and d, where d is the Jacobi
// inverse diagonal (1 without preconditioner). Layout is the backend's choice; host arrays given
// to and taken from a device_system are column-major: system j at offset j*n, n real rows.
//
// Step contract, applied to each system j whose status is `running` when the step starts
// (systems in any other state are left untouched, so extra iterations after convergence are
// no-ops):
//   init(thr2):  for EVERY j:  r = b - A x;  p = d∘r;  rz = Σ d r²;  rr = Σ r²;  pq = 0;
//                iters = 0;  thr2 as given;  status = not_finite if rr or rz is not finite,
//                else converged if rr <= thr2, else indefinite_precond if rz <= 0, else running.
//   spmv_dot():  q = A p;  pq = Σ p∘q.
//   update_xr(): if pq is not finite: status = not_finite; else if pq <= 0: indefinite_matrix;
//                else α = rz/pq;  x += α p;  r -= α q;  rz_new = Σ d r²;  rr = Σ r²;  iters += 1.
//   update_p():  if rr or rz_new is not finite: not_finite; else if rr <= thr2: converged;
//                else if rz_new <= 0: indefinite_precond;
//                else β = rz_new/rz;  rz = rz_new;  p = d∘r + β p.
// Dot products accumulate in double in every precision. Reductions use a fixed blocking (no
// floating-point atomics), so one backend with one configuration is bit-reproducible.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "conversion/matrix.hpp"

namespace cnc {

enum class precision { f64, f32, mixed };  // mixed: float matrix values, double vectors

enum rhs_status : std::int32_t {
  running = 0,
  converged = 1,
  indefinite_matrix = 2,
  indefinite_precond = 3,
  not_finite = 4,
};

// Per right-hand-side scalars; the same 48-byte layout on every backend (GPU backends keep an
// array of these in device memory and copy it back whole in read_state).
struct rhs_state {
  double rz;      // rᵀz of the current residual
  double rz_new;  // rᵀz after the last update_xr
  double rr;      // rᵀr after the last init/update_xr
  double pq;      // pᵀAp of the last spmv_dot
  double thr2;    // converged when rr <= thr2 (threshold² ‖b‖²)
  std::int32_t status;
  std::int32_t iters;
};
static_assert(sizeof(rhs_state) == 48, "rhs_state layout is shared with device code");

class device_system {
 public:
  virtual ~device_system() = default;
  // Uploads b and the initial guess x (host, column-major, n real rows per system); x null
  // means x = 0 (nothing to upload).
  // (Backends that take_device_arrays() also accept device pointers here and in get_x.)
  virtual void set_vectors(const double* b, const double* x) = 0;
  virtual void init(const double* thr2) = 0;  // thr2: one value per system
  virtual void spmv_dot() = 0;
  virtual void update_xr() = 0;
  virtual void update_p() = 0;
  // Runs `count` iterations. Backends may override (CUDA graphs, persistent kernels) but must
  // keep the semantics of calling the three steps `count` times.
  virtual void iterate(int count) {
    for (int c = 0; c < count; ++c) {
      spmv_dot();
      update_xr();
      update_p();
    }
  }
  virtual void read_state(rhs_state* out) = 0;  // k structs, synchronizes with the device
  virtual void get_x(double* x) = 0;            // host, column-major
  // y = A x for k host columns, through the backend's SpMV (for tests and the true residual
  // check). Clobbers p and q: call it outside an iteration sequence.
  virtual void apply(const double* x, double* y) = 0;
};

// A canonical CSR (0-based, rows sorted, no duplicates) in the backend's device memory: the
// caller's own arrays (cncSolveCSRDevice), read during create_system_from_device only.
struct device_csr {
  std::int32_t n = 0;
  std::int64_t nnz = 0;
  const std::int64_t* row_ptr = nullptr;
  const std::int32_t* col = nullptr;
  const double* val = nullptr;
};

// One pass over a device CSR: whether it is canonical (offsets consistent, columns in range and
// strictly increasing in each row, values finite), and the entries its SELL form would store.
struct device_csr_scan {
  bool canonical = false;
  std::int64_t sell_entries = 0;
};

// A copy of a caller's CSR in device memory, made by backend::upload_csr (freed with it).
struct device_csr_copy {
  virtual ~device_csr_copy() = default;
  device_csr view;
};

// What create_system_from_device reports about the matrix it built.
struct device_build {
  std::int64_t zero_diagonals = 0;  // zero or absent diagonal entries (Jacobi uses 1 there)
  std::int64_t stored = 0;          // blocks (BCRS) or entries (SELL) stored; 0 for CSR
};

struct backend_options {
  int threads = 0;        // CPU threads, 0 = one per core
  int device_index = -1;  // GPU ordinal, -1 = backend's choice / environment
  std::function<void(int level, const std::string&)> log;  // CNC_LOG_* levels; may be empty
};

class backend {
 public:
  virtual ~backend() = default;
  virtual const char* name() const = 0;  // "cpu", "opencl", "cuda"
  virtual int api_id() const = 0;        // CNC_BACKEND_CPU / _OPENCL / _CUDA
  virtual std::string device_name() const = 0;
  virtual bool has_fp64() const { return true; }
  // True where a sliced format (SELL, one thread per row) beats CSR on rows of similar length:
  // GPUs. The automatic format choice considers SELL only then.
  virtual bool prefers_sliced() const { return false; }
  // True when the backend builds format f itself from the CSR (create_system then gets
  // host_matrix::sell == nullptr for SELL): the caller skips its host conversion.
  virtual bool builds_on_device(format f) const { return false; }
  // True when a device_system reads the host_matrix it was created from for its whole life (the
  // CPU backend works on the host arrays); the caller must then keep them. GPU backends copy them
  // to the device, and the caller frees its BCRS/SELL copy after create_system.
  virtual bool keeps_host_matrix() const { return false; }
  // Iterations between two convergence checks when the caller leaves it to the backend.
  virtual int default_check_interval() const { return 1; }
  // `d` holds a.n_padded() inverse-diagonal values. Throws cnc::error on failure (device out of
  // memory -> CNC_ERR_OUT_OF_MEMORY, no fp64 -> CNC_ERR_NO_FP64, driver errors -> CNC_ERR_DEVICE).
  virtual std::unique_ptr<device_system> create_system(const host_matrix& a,
                                                       std::span<const double> d, precision p,
                                                       int nrhs) = 0;

  // Caller arrays in device memory (CUDA only). When takes_device_arrays(), device_systems also
  // accept device pointers in set_vectors/get_x, and the calls below work; the defaults throw.
  virtual bool takes_device_arrays() const { return false; }
  // Empty when `p` points into memory this backend's device can read and write (device or
  // managed memory of that device); otherwise why not, for the caller's error message.
  virtual std::string device_memory_problem(const void* p) const;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) const;
  // Waits for all work queued on the device (the caller's kernels that fill its arrays, on any
  // stream) before cnc reads device arrays.
  virtual void synchronize_device() const;
  // Index of the first non-finite value of a device array, or -1.
  virtual std::int64_t first_not_finite(const double* p, std::int64_t count) const;
  virtual device_csr_scan scan_device_csr(const device_csr& a) const;
  // Blocks of a canonical device CSR cut into b x b blocks (count_blocks, on the device).
  virtual std::int64_t device_block_count(const device_csr& a, int b) const;
  // The caller's host CSR (0-based, row offsets already checked, entries not yet) copied as it
  // is to the device, to be checked and converted there.
  virtual std::unique_ptr<device_csr_copy> upload_csr(const csr_view& raw);
  // A double-precision device_system built from a canonical device CSR in any format,
  // with its Jacobi inverse diagonal computed on the device (1 where the diagonal is 0 or
  // absent, counted in info.zero_diagonals; all ones without jacobi).
  virtual std::unique_ptr<device_system> create_system_from_device(const device_csr& a, format f,
                                                                   bool jacobi, int nrhs,
                                                                   device_build& info);
};

// Factories: each returns nullptr and explains why in `why` when it cannot run here (no driver,
// no device, not built in). They never throw for "absent".
std::unique_ptr<backend> make_cpu_backend(const backend_options& o, std::string& why);
std::unique_ptr<backend> make_opencl_backend(const backend_options& o, std::string& why);
std::unique_ptr<backend> make_cuda_backend(const backend_options& o, std::string& why);

}  // namespace cnc
