// The backend interface: what the solver (src/solver/pcg.cpp, written once) needs from a device.
//
// A backend (cpu, opencl, cuda) creates a device_system: one matrix plus the work vectors of k
// right-hand sides, resident on the device for as long as the matrix is unchanged. The solver
// drives it through three fused steps per iteration whose scalar logic is part of the contract,
// so that GPU backends can keep every scalar on the device and run many iterations between two
// host reads (one read of k small structs per convergence check): a read waits for the device
// to finish the work queued so far, a latency that would dominate each iteration of a small system.
//
// Vectors (device side, per right-hand side j): x, r, p, q, b and d, where d is the Jacobi
// inverse diagonal (1 without preconditioner). Layout is the backend's choice; host arrays given
// to and taken from a device_system are column-major: system j at offset j*n, n real rows.
//
// The three steps' contract (what each computes, the statuses and their order) is in
// kernels/pcg_contract.h, the one header that the host, the CUDA and OpenCL kernels and the
// tests share.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "matrix/matrix.hpp"
#include "pcg_contract.h"

namespace cnc {

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
  // Sets the k structs the next step reads (queued in order with the steps): a system split over
  // processes (libcnc_mpi) replaces each step's local sums by their global ones between steps.
  // Backends without it throw CNC_ERR_UNSUPPORTED.
  virtual void write_state(const rhs_state* in);
  virtual void get_x(double* x) = 0;  // host, column-major
  // y = A x for k host columns, through the backend's SpMV (for tests and the true residual
  // check). Clobbers p and q: call it outside an iteration sequence.
  virtual void apply(const double* x, double* y) = 0;
  // The caller's vectors in another numbering than the system's (a reordered matrix, P A Pᵀ
  // with perm[new] = old, n values): from here on set_vectors, get_x and apply take and give
  // them in the caller's numbering, renumbered on the device as they go up and down; an empty
  // perm: the system's own numbering again. False (nothing changed) where the backend does not
  // renumber: the caller renumbers on the host; CNC_ERR_OUT_OF_MEMORY (the system's own
  // numbering then) where perm does not fit. (read and the vector surface stay in the system's
  // numbering.)
  virtual bool set_numbering([[maybe_unused]] std::span<const std::int32_t> perm) {
    return perm.empty();
  }

  // --- The vector surface: what every method other than the fused PCG steps is written over
  // (src/solver/krylov.hpp). Vectors are named by index: the five of the steps (vec_x .. vec_b)
  // and those made by add_vectors, each k columns in the backend's layout and vector precision.
  // Every operation below touches only the columns whose mask entry is non-zero (set_mask: all
  // k at creation; a method sets its own at its start) and leaves the others bit for bit as they
  // are. Operations are queued on the
  // device in call order; only dots synchronizes (it returns scalars to the host).
  enum : int { vec_x = 0, vec_r = 1, vec_p = 2, vec_q = 3, vec_b = 4, vec_first_extra = 5 };
  static constexpr int no_vector = -1;  // block_update's z when Z is not stored
  // Makes `count` more vectors, zero-filled; returns the index of the first. Throws
  // CNC_ERR_OUT_OF_MEMORY when the device has no room.
  virtual int add_vectors(int count) = 0;
  // Frees every vector add_vectors made (their indices may be given again); the five of the
  // steps stay. A method calls it when it ends, so a kept system holds no work vectors.
  virtual void release_vectors() = 0;
  virtual void set_mask(const std::uint8_t* active) = 0;  // k entries
  virtual void spmv(int in, int out) = 0;                 // out = A in; out != in
  virtual void precondition(int in, int out) = 0;         // out = d∘in (d = 1: a copy)
  // out = M⁻¹ in for SSOR with relaxation ω in (0, 2), A = L + D + U:
  //   M = (D/ω + L) (ω / (2 - ω)) D⁻¹ (D/ω + U),
  // two triangular sweeps (a zero diagonal entry counts as 1, as Jacobi's). out != in. Backends
  // without it (the sweeps are sequential) throw CNC_ERR_UNSUPPORTED; the CPU backend has it.
  virtual void ssor(int in, int out, double omega);
  // out = b - A in (out is neither in nor b). In double precision this is the true residual
  // (A and the vectors in double).
  virtual void residual(int in, int out) = 0;
  // out[i*k + j] = Σ u_j ∘ v[i]_j for i < count, accumulated in double in a fixed order (the
  // same bits for the same inputs); 0 for masked-out columns. One host synchronization.
  virtual void dots(int u, const int* v, int count, double* out) = 0;
  // y_j = alpha_j x_j + beta_j y_j (per-system coefficients, k each, read before the call
  // returns); beta_j == 0 overwrites y_j, so NaN or Inf in y does not survive. x == y allowed.
  virtual void axpby(const double* alpha, int x, const double* beta, int y) = 0;
  // y_j = beta_j y_j + Σ_i coef[i*k + j] v[i]_j for i < count (count >= 1; coefficients read
  // before the call returns), summed in i order; beta_j == 0 overwrites y_j as in axpby. y is
  // none of v. The GPU backends read y and write it once per combine_pass vectors, where count
  // axpby calls would read and write it count times: GMRES's Gram-Schmidt projection and its
  // solution update.
  static constexpr int combine_pass = 8;
  virtual void combine(const int* v, int count, const double* coef, const double* beta, int y) = 0;
  // Complex systems (the real-equivalent of a complex matrix: each system's rows are (re, im)
  // pairs, rows 2i and 2i + 1): y_j = alpha_j x_j + beta_j y_j in complex arithmetic, in the
  // vectors' precision. alpha and beta hold 2k doubles, system j's (re, im) at [2j] and
  // [2j + 1], read before the call returns; beta_j == 0 (both parts) overwrites y_j as in axpby.
  // x == y allowed. i x is zaxpby((0, 1), x, 0, t): the complex Krylov methods (BiCGSTAB, GMRES
  // of cncSolveCSRComplex, src/solver/krylov.hpp) are written over it and the real operations.
  // Backends without it throw CNC_ERR_UNSUPPORTED.
  virtual void zaxpby(const double* alpha, int x, const double* beta, int y);
  // The complex inner products and combinations in one pass each, over the same pairs (the
  // compositions over the real operations and zaxpby read the vectors two or three times:
  // krylov_ops uses these where fused_complex() says the backend has them; the others throw
  // CNC_ERR_UNSUPPORTED).
  //   zdots: out[2(i*k + j)] and out[2(i*k + j) + 1] = (re, im) of conj(u_j)·v[i]_j for
  //     i < count, accumulated in double in a fixed order (the same bits for the same inputs);
  //     0 for masked-out columns. One host synchronization, like dots.
  //   zcombine: y_j = beta_j y_j + Σ_i c[i*k + j] v[i]_j, c[e] = (coef[2e], coef[2e + 1]),
  //     beta real (k values), otherwise as combine (summed in i order, beta_j == 0 overwrites,
  //     y is none of v, y read and written once per combine_pass vectors on the GPU backends).
  virtual bool fused_complex() const { return false; }
  // Jacobi on a complex diagonal (the complex methods' preconditioner where some a_qq is not
  // real): set_complex_jacobi takes D⁻¹, (re, im) of 1 / a_qq for each complex unknown q (the
  // system's rows / 2 pairs, host memory, read before the call returns); zprecondition then gives
  // out = D⁻¹ in over the pairs (complex products in the vectors' precision; in may be out).
  // zprecondition before set_complex_jacobi throws CNC_ERR_INVALID_VALUE (a system of rows).
  virtual void set_complex_jacobi(const double* dinv);
  virtual void zprecondition(int in, int out);
  virtual void zdots(int u, const int* v, int count, double* out);
  virtual void zcombine(const int* v, int count, const double* coef, const double* beta, int y);
  // Vector v to the host, column-major (n real rows per system), all k columns (for tests).
  virtual void read(int v, double* out) = 0;

  // --- Cross-column products (block Krylov methods: src/solver/block_cg.cpp). The operations
  // above pair column j only with column j; these pair every column with every other. The mask
  // selects the columns written (block_dots: v's columns j, block_combine: y's); every column i
  // of the other vector is read. Backends without them throw CNC_ERR_UNSUPPORTED.
  // Gram product: out[i*k + j] = Σ u_i ∘ v_j for all i < k and active j (0 for masked-out j),
  // accumulated in double in a fixed order (the same bits for the same inputs). One host
  // synchronization, like dots.
  virtual void block_dots(int u, int v, double* out);
  // y_j = beta_j y_j + Σ_i coef[i*k + j] v_i for active j (k x k coefficients, k betas, read
  // before the call returns), summed in i order; a term whose coefficient is 0 is skipped (v_i
  // is not read: a masked-out column of v may hold anything), and beta_j == 0 overwrites y_j as
  // in axpby. y is not v.
  virtual void block_combine(int v, const double* coef, const double* beta, int y);
  // Fused forms of the products above, for block CG's iteration; false where the backend has
  // none or not for this system's layout (nothing done: krylov_ops then composes them from the
  // operations above). Unlike block_dots, the Gram products here pair ALL k columns of both
  // vectors whatever the mask (a masked-out column may hold anything: only its own entries
  // show it), out[c*k*k + i*k + j] = u[c]_i ∘ v[c]_j, count <= block_max_pairs, in double and
  // in a fixed order; one host synchronization.
  static constexpr int block_max_pairs = 8;
  // Whether block_update is fused for this system (one pass): block CG asks first and otherwise
  // builds its iteration from block_dots / block_combine with fewer products.
  virtual bool has_block_fused() const { return false; }
  virtual bool block_grams([[maybe_unused]] const int* u, [[maybe_unused]] const int* v,
                           [[maybe_unused]] int count, [[maybe_unused]] double* out) {
    return false;
  }
  // For the active j: x_j += Σ_i a[i*k + j] p_i, r_j -= Σ_i a[i*k + j] q_i, z_j = d∘r_j (the
  // Jacobi or identity preconditioner of precondition); then, over the vectors as they are after
  // it, out = QᵀZ, ZᵀZ, PᵀZ, PᵀP, RᵀZ (k*k each, every column, as block_grams) followed by
  // r_j·z_j and r_j·r_j (k each; the active j at least): block_update_size(k) values. p, q, x,
  // r, z distinct; one pass. z == no_vector: Z is not stored, and the products take z_j = d∘r_j
  // for every column j (block_combine2's scaled v1 reads it from r instead).
  static constexpr int block_update_grams = 5;
  static constexpr std::size_t block_update_size(int k) {
    return (std::size_t(block_update_grams) * std::size_t(k) + 2) * std::size_t(k);
  }
  virtual bool block_update([[maybe_unused]] int p, [[maybe_unused]] int q,
                            [[maybe_unused]] const double* a, [[maybe_unused]] int x,
                            [[maybe_unused]] int r, [[maybe_unused]] int z,
                            [[maybe_unused]] double* out) {
    return false;
  }
  // spmv(in, out) and out = inᵀ A in (block_grams of the pair (in, out): k*k values, every
  // column pair) from the same pass over in and out; in != out. False, nothing done, where the
  // backend has no such pass for this system (krylov_ops then runs the two).
  virtual bool spmv_gram([[maybe_unused]] int in, [[maybe_unused]] int out,
                         [[maybe_unused]] double* gram) {
    return false;
  }
  // y_i = Σ_a c1[a*k + i] v1_a + Σ_a c2[a*k + i] v2_a for EVERY column i < k (the mask is not
  // read), zero coefficients skipped; y is neither v1 nor v2. One pass. scale_v1: v1's values
  // taken as d∘v1 (precondition's d, the same rounding), so that Z = d∘R need not be stored.
  virtual bool block_combine2([[maybe_unused]] int v1, [[maybe_unused]] const double* c1,
                              [[maybe_unused]] int v2, [[maybe_unused]] const double* c2,
                              [[maybe_unused]] int y, [[maybe_unused]] bool scale_v1) {
    return false;
  }

  // Same pattern, new values. `val`: device memory of this system's backend, one finite value
  // per entry of the canonical CSR the system was built from (create_system_from_device with
  // keep_pattern), in that CSR's order. Rewrites the stored values and the inverse diagonal in
  // place (the layout, the work vectors and the launch set-up stay), giving the bits a build
  // from that CSR would give; *zero_diagonals as device_build counts them. False, nothing
  // changed, when this system cannot (it did not keep its pattern): the caller builds anew.
  virtual bool refill_values([[maybe_unused]] const double* val, [[maybe_unused]] bool jacobi,
                             [[maybe_unused]] std::int64_t* zero_diagonals) {
    return false;
  }
  // Rows whose SpMV work is cut into pieces summed in a fixed order (rows far longer than the
  // average, which would otherwise hold a whole launch or sweep up); 0 when none.
  virtual std::int64_t long_rows() const { return 0; }
  // A system split over processes (libcnc_mpi's distributed system) holds a block of rows of
  // each vector; its `dots` already return global sums. The methods' host-side quantities that
  // come from anything else (‖b‖² from the host's b, GMRES's cap of the Krylov space at n) go
  // through this, so that every process takes the same decisions from the same numbers and none
  // is left waiting in a collective: values[i] becomes its sum over the processes, identical on
  // every one. A collective where it is not a no-op: every process calls it at the same points.
  virtual void sum_over_ranks([[maybe_unused]] double* values, [[maybe_unused]] int count) {}

  // --- Halo operations: this system holds one process's rows of a matrix split over processes
  // (libcnc_mpi) and its matrix is the block of columns that process owns. The rest of the
  // product, the "halo" block, multiplies values other processes send; these three calls are
  // all libcnc_mpi asks of a backend. Host buffers of halo values hold all k columns interleaved:
  // value t of column j at [t * k + j], so one process's share of a message is contiguous.
  //
  // Keeps the plan: rows send_rows[0 .. send_count) of each vector are what other processes read;
  // `halo` (this system's rows, canonical, columns < halo_size) multiplies what they send. False,
  // nothing kept, when this system has no halo operations.
  virtual bool set_halo([[maybe_unused]] const csr_view& halo,
                        [[maybe_unused]] std::int32_t halo_size,
                        [[maybe_unused]] const std::int32_t* send_rows,
                        [[maybe_unused]] std::int32_t send_count) {
    return false;
  }
  // The host buffers set_halo made (pinned where the backend copies through them): what
  // gather_halo writes (send_count * k values) and what add_halo reads (halo_size * k), so that
  // the caller sends and receives in place.
  virtual double* halo_send();
  virtual double* halo_recv();
  // halo_send()[t * k + j] = v_j[send_rows[t]] for every column j (masked or not), after the
  // operations queued before, all of which have run when this returns (so halo_recv() is free).
  virtual void gather_halo(int v);
  // y_j += alpha (halo h_j) for the columns the mask leaves active, h = halo_recv() (h[c * k + j],
  // read before the next gather_halo returns); queued like spmv.
  virtual void add_halo(double alpha, int y);
  // The same two on the device, for a caller that moves the halo itself (NCCL): the system's
  // stream (a cudaStream_t), with its device buffers of values to send and received; nullptr
  // where the system has none. gather_halo_on_device fills *send and add_halo_on_device reads
  // *recv, both only queued on that stream, as is whatever the caller queues between them.
  virtual void* halo_device([[maybe_unused]] double** send, [[maybe_unused]] double** recv) {
    return nullptr;
  }
  virtual void gather_halo_on_device(int v);
  virtual void add_halo_on_device(double alpha, int y);
};

// A canonical CSR (0-based, rows sorted, no duplicates) in the backend's device memory: the
// caller's own arrays (cncSolveCSRDevice), read during create_system_from_device only.
struct device_csr {
  std::int32_t n = 0;
  std::int64_t nnz = 0;
  const std::int64_t* row_ptr = nullptr;
  const std::int32_t* col = nullptr;
  const double* val = nullptr;  // one an entry; a complex CSR (format zcsr): (re, im), two
};

// One pass over a complex device CSR (scan_device_zcsr): whether it is canonical, and whether
// it was checked Hermitian with a real positive diagonal (false when not asked, or when the
// pass could not tell: the host's check decides then).
struct device_zcsr_scan {
  bool canonical = false;
  bool hermitian = false;
  std::int64_t sell_entries = 0;  // the entries its ZSELL form would store
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

// The device ordering's limits: rows of at most device_rcm_max_row entries (a warp ranks a
// parent's children in (row/32)² steps; a longer row: the host orders), and at most
// device_rcm_max_components components (each costs a few grid barriers, however small: the
// host's cores order a graph's many small ones faster), the rest left to rcm_finish.
constexpr int device_rcm_max_row = 1024;
constexpr int device_rcm_max_components = 64;

// A reverse Cuthill–McKee ordering made on the device (backend::rcm_device): perm[new] = old
// (n values) for the positions the device placed, whole components, and where the host goes on.
struct device_ordering {
  std::vector<std::int32_t> perm;
  std::int64_t placed = 0;      // positions made on the device (perm[n - 1 - p], p < placed)
  std::int32_t cursor = 0;      // where the host looks for the next component (rcm_finish)
  std::int32_t components = 0;  // components ordered on the device (a lone vertex counts)
};

// What create_system_from_device reports about the matrix it built.
struct device_build {
  std::int64_t zero_diagonals = 0;  // zero, absent or subnormal diagonal entries (Jacobi uses 1)
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
  // True where the backend stores a complex matrix as ZSELL (format::zsell): CUDA. Elsewhere a
  // forced CNC_FORMAT_ZSELL is refused, and AUTO keeps ZCSR.
  virtual bool runs_complex_sell() const { return false; }
  // True when the backend builds format f itself from the CSR (create_system then gets
  // host_matrix::sell == nullptr for SELL): the caller skips its host conversion.
  virtual bool builds_on_device([[maybe_unused]] format f) const { return false; }
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
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes) const;
  // Index of the first non-finite value of a device array, or -1; *max_abs (when given): the
  // largest finite |p_i| (0 for none).
  virtual std::int64_t first_not_finite(const double* p, std::int64_t count,
                                        double* max_abs = nullptr) const;
  virtual device_csr_scan scan_device_csr(const device_csr& a) const;
  // The same for a complex CSR (values (re, im)) whose row offsets were checked; with
  // `hermitian`, also the check_hermitian_positive_diagonal of conversion/complex.hpp.
  virtual device_zcsr_scan scan_device_zcsr(const device_csr& a, bool hermitian) const;
  // Blocks of a canonical device CSR cut into b x b blocks (count_blocks, on the device).
  virtual std::int64_t device_block_count(const device_csr& a, int b) const;
  // The caller's host CSR (0-based, row offsets already checked, entries not yet) copied as it
  // is to the device, to be checked and converted there. values_only: only raw.val goes up
  // (view.row_ptr and view.col stay null), for device_system::refill_values.
  virtual std::unique_ptr<device_csr_copy> upload_csr(const csr_view& raw,
                                                      bool values_only = false);
  // P A Pᵀ of a canonical device CSR (perm[new] = old, a.n values on the host), made on the
  // device: a new device CSR equal to what permute_csr (conversion/reorder.hpp) makes on the host.
  virtual std::unique_ptr<device_csr_copy> permute_device_csr(const device_csr& a,
                                                              std::span<const std::int32_t> perm);
  // Reverse Cuthill–McKee of a canonical device CSR's pattern, computed on the device by the
  // rules of rcm_order (conversion/reorder_rcm.hpp), which rcm_finish completes on the host from
  // what it leaves. CNC_ERR_UNSUPPORTED where the device cannot order this pattern (a row
  // longer than it ranks), CNC_ERR_OUT_OF_MEMORY when its work space does not fit.
  virtual device_ordering rcm_device(const device_csr& a);
  // A double-precision device_system built from a canonical device CSR in any format (zcsr: a
  // complex CSR, whose values are (re, im) pairs, the system its real-equivalent's),
  // with its Jacobi inverse diagonal computed on the device (1 where the diagonal is 0 or
  // absent, counted in info.zero_diagonals; all ones without jacobi). keep_pattern: the system
  // keeps on the device what refill_values needs beyond its own arrays (SELL: the CSR's row
  // offsets, 8 bytes a row; BCRS: the offsets and columns, 4 more bytes an entry; CSR: nothing).
  virtual std::unique_ptr<device_system> create_system_from_device(const device_csr& a, format f,
                                                                   bool jacobi, int nrhs,
                                                                   bool keep_pattern,
                                                                   device_build& info);
};

// Factories: each returns nullptr and explains why in `why` when it cannot run here (no driver,
// no device, not built in). They never throw for "absent".
std::unique_ptr<backend> make_cpu_backend(const backend_options& o, std::string& why);
std::unique_ptr<backend> make_opencl_backend(const backend_options& o, std::string& why);
std::unique_ptr<backend> make_cuda_backend(const backend_options& o, std::string& why);
// The devices each backend can run on here, described in a line each ("NVIDIA H100 80GB HBM3,
// compute capability 9.0, 79.1 GiB"), in the order CNC_DEVICE_INDEX counts them; empty, with the
// reason in `why`, when the backend is absent. They never throw for "absent".
std::vector<std::string> list_cpu_devices(std::string& why);
std::vector<std::string> list_opencl_devices(std::string& why);
std::vector<std::string> list_cuda_devices(std::string& why);
// The device index (as CNC_DEVICE_INDEX counts them) of the OpenCL GPU number `ordinal` modulo
// the GPUs present (on CNC_OPENCL_PLATFORM's platform where it is set): a process's device by its
// node-local rank. -1, the backend's own choice, when there is no OpenCL GPU or CNC_OPENCL_DEVICE
// names the device.
int opencl_gpu_index(int ordinal);

}  // namespace cnc
