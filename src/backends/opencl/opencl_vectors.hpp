// The vector surface of the OpenCL device_system (backend.hpp, "The vector surface"), kept apart
// from opencl_system.cpp: the system owns one vector_ops and forwards the surface's calls to it.
//
// Every operation is one kernel (kernels/opencl/blas1.cl; spmv is spmv_fused of spmv.cl in
// MODE_DOT, the residual adds vec_b_minus, combine is one vec_combine per 8 vectors, zdots and
// zcombine their complex forms over (re, im) pairs) enqueued on the system's in-order queue
// without waiting.
// The mask lives on the device as an rhs_state array whose statuses say running (active) or not,
// which is what spmv_fused's MODE_DOT and the blas1 kernels read; it is written (a non-blocking
// write) when it changes. axpby's and zaxpby's coefficients are a kernel argument by value (a
// struct of 2k, 4k values) where the device's argument space holds zaxpby's, else a slot of a
// device buffer written before the kernel. combine's coefficients (beta and 8 rows of k per launch:
// 9k values, too many for the argument space but for small k) always come from a slot of a device
// buffer, made at its first call. Host data that a non-blocking write reads later stays in a ring
// of host slots until the write has run (a reuse waits for it: in practice long done, since dots
// synchronizes far more often). dots is the one synchronization: one kernel per (up to) 4
// vectors, one ordered sum, one blocking read (which also flushes the queue).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/opencl/cl_api.hpp"
#include "backends/opencl/opencl_profile.hpp"
#include "matrix/matrix.hpp"

namespace cnc::ocl {

// What the vector operations take from their system, which owns all of it and outlives them.
struct vector_env {
  const api* cl = nullptr;
  cl_device_id device = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  cl_program prog = nullptr;  // built with the options below
  std::int32_t np = 0;        // rows of every vector (n_padded)
  std::int32_t units = 0;     // spmv_fused's units (rows, or block rows for BCRS)
  int k = 1, wg = 1, groups = 1;
  bool vec_f32 = false, acc_f32 = false, val_f32 = false;  // val_f32: VAL_T is float
  bool coef_args = true;                                   // COEF_ARGS of the build
  int dot_v = 1;                                           // dot_vectors(k, wg)
  std::uint64_t max_alloc = 0;                             // 0: unknown
  std::uint64_t mem_left = 0;  // device memory minus the system's own buffers; 0: unknown
  cl_mem rowp = nullptr, col = nullptr, val = nullptr, d = nullptr;
  // spmv_fused's long rows and ranges (arguments 12-16, only where rows_args), csr_pieces'
  // pieces and sums (opencl_long_rows.hpp).
  bool rows_args = false;
  cl_long long_min = -1;
  cl_int n_long = 0, n_pieces = 0, piece_groups = 1;
  cl_mem bounds = nullptr, lrow = nullptr, pieces = nullptr, psum = nullptr;
  std::vector<cl_mem> fixed;       // x, r, p, q, b (device_system::vec_x .. vec_b)
  kernel_profile* prof = nullptr;  // the system's, with CNC_OPENCL_PROFILE
};

// COEF_ARGS of the build for k columns: whether zaxpby's 4k coefficients (axpby's 2k) fit in a
// kernel argument (`max_param`: CL_DEVICE_MAX_PARAMETER_SIZE). CNC_OPENCL_COEF_BUFFER=1 forces
// the buffer path.
bool coef_args_fit(int k, std::size_t vec_size, std::size_t max_param);

// Host doubles <-> device element type (float or double) in a byte buffer, at element `index`.
void put_value(unsigned char* dst, std::size_t index, double v, bool as_float);
double get_value(const unsigned char* src, std::size_t index, bool as_float);
// Vectors dotted with u per launch (1, 2 or 4): fewer for many columns when a work-item walks
// rows (wg < k: 4 k sums a work-item, in registers).
int dot_vectors(int k, int wg);
// The largest work-group every vector kernel of `prog` accepts (CL_KERNEL_WORK_GROUP_SIZE).
std::size_t vector_kernels_fit(const api& cl, cl_program prog, cl_device_id dev);

class vector_ops {
 public:
  explicit vector_ops(const vector_env& e);
  ~vector_ops();
  vector_ops(const vector_ops&) = delete;
  vector_ops& operator=(const vector_ops&) = delete;

  int add(int count);
  void release_vectors();  // add()'s vectors
  void set_mask(const std::uint8_t* active);
  void spmv(int in, int out);
  void precondition(int in, int out);
  void residual(int in, int out);
  void dots(int u, const int* v, int count, double* out);
  void axpby(const double* alpha, int x, const double* beta, int y);
  void zaxpby(const double* alpha, int x, const double* beta, int y);
  // backend.hpp's complex Jacobi: D⁻¹ for the first n rows (the padding 0), then out = D⁻¹ in.
  void set_complex_jacobi(const double* dinv, std::int32_t n);
  void zprecondition(int in, int out);
  void combine(const int* v, int count, const double* coef, const double* beta, int y);
  // backend.hpp's fused complex forms (vec_zdot_part1/2 + vec_dot_finish, vec_zcombine).
  void zdots(int u, const int* v, int count, double* out);
  void zcombine(const int* v, int count, const double* coef, const double* beta, int y);
  // Cross-column products (opencl_block.cpp, kernels/opencl/block.cl).
  void block_dots(int u, int v, double* out);
  void block_combine(int v, const double* coef, const double* beta, int y);
  // Halo operations (opencl_halo.cpp, kernels/opencl/halo.cl; backend.hpp's contract).
  bool set_halo(const csr_view& halo, std::int32_t halo_size, const std::int32_t* send_rows,
                std::int32_t send_count);
  double* halo_send() { return halo_send_.data(); }
  double* halo_recv() { return halo_recv_.data(); }
  void gather_halo(int v);
  void add_halo(double alpha, int y);
  cl_mem vec(int v) const;  // throws CNC_ERR_INVALID_VALUE for an unknown index

 private:
  // Host slots for the data of non-blocking writes; a slot is reused once its write has run.
  struct ring {
    std::vector<unsigned char> host;
    std::vector<cl_event> done;
    std::size_t bytes = 0;
    int next = 0;
  };
  void init_ring(ring& r, int slots, std::size_t bytes);
  int put(ring& r, cl_mem dst, bool per_slot, const void* src);  // returns the slot used
  void release_ring(ring& r);

  void release();
  void release_block();  // opencl_block.cpp: its kernels (the ring and buffer are released here)
  void release_halo();   // opencl_halo.cpp: its kernels and buffers
  cl_mem make_buffer(std::size_t bytes, const char* what);
  void drop_buffer(cl_mem& m, std::size_t bytes);
  void ensure_dot_space(int count);
  // vec_dot_finish over the partials of `quantities` sums, then the one blocking read: the
  // quantities' k values each, in the accumulator precision, as doubles in dot_host_ order.
  void finish_dots(int quantities, const char* what);
  void launch(cl_kernel k, int groups, const char* what);
  // vec_axpby (per = 1) or vec_zaxpby (per = 2, (re, im)): per * k alphas then betas, by value
  // or through coef_ (COEF_ARGS), and the launch.
  void coef_launch(cl_kernel kern, int per, const double* alpha, int x, const double* beta, int y,
                   const char* what);
  // vec_combine (per = 1) or vec_zcombine (per = 2): a launch per 8 vectors, beta (k values) and
  // 8 per k coefficients from a slot of `buf` (made at the first call, ring `r`, staged in `host`).
  void combine_launches(cl_kernel kern, int per, cl_mem& buf, ring& r,
                        std::vector<unsigned char>& host, const int* v, int count,
                        const double* coef, const double* beta, int y, const char* what);
  template <typename T>
  void arg(cl_kernel k, cl_uint index, const T& v);

  vector_env e_;
  std::size_t vs_, as_;       // bytes of a vector entry, of an accumulator
  std::vector<cl_mem> vecs_;  // by index: the system's five, then add()'s (owned)
  std::vector<std::uint8_t> mask_;
  std::uint64_t used_ = 0;  // bytes of the buffers made here
  cl_mem mask_st_ = nullptr, part_ = nullptr, out_ = nullptr, coef_ = nullptr, comb_ = nullptr,
         zcomb_ = nullptr;
  int dot_cap_ = 0;  // vectors part_ and out_ have room for
  ring mask_ring_, coef_ring_, comb_ring_, zcomb_ring_;
  std::vector<unsigned char> coef_host_, comb_host_, zcomb_host_, dot_host_;
  cl_kernel k_pieces_ = nullptr;  // csr_pieces, where rows are cut
  cl_kernel k_spmv_ = nullptr, k_axpby_ = nullptr, k_precond_ = nullptr, k_bminus_ = nullptr,
            k_fin_ = nullptr, k_comb_ = nullptr, k_zaxpby_ = nullptr, k_zprecond_ = nullptr;
  cl_mem zd_ = nullptr;  // set_complex_jacobi's D⁻¹ (np values in the vectors' precision)
  cl_kernel k_dot_[3] = {nullptr, nullptr, nullptr};  // vec_dot_part1, 2, 4
  cl_kernel k_zdot_[2] = {nullptr, nullptr};          // vec_zdot_part1, 2
  cl_kernel k_zcomb_ = nullptr;                       // vec_zcombine
  // block_dots / block_combine: made at their first call.
  cl_kernel k_bgram_ = nullptr, k_bcomb_ = nullptr;
  cl_mem bcomb_ = nullptr;
  ring bcomb_ring_;
  std::vector<unsigned char> bcomb_host_;
  // Halo operations: the halo block (row offsets as long, columns, values in VAL_T), the rows
  // to send, the device buffers of values sent and received (VEC_T), their host buffers (double,
  // interleaved), and the host staging of float values.
  cl_kernel k_hgather_ = nullptr, k_hadd_ = nullptr;
  cl_mem h_rp_ = nullptr, h_col_ = nullptr, h_val_ = nullptr, h_rows_ = nullptr;
  cl_mem h_send_ = nullptr, h_recv_ = nullptr;
  std::size_t h_bytes_[6] = {0, 0, 0, 0, 0, 0};  // of the six buffers above, in that order
  std::int32_t h_n_ = 0, h_size_ = 0, h_count_ = 0;
  std::int64_t h_nnz_ = 0;
  std::vector<double> halo_send_, halo_recv_;
  std::vector<unsigned char> halo_stage_;
};

}  // namespace cnc::ocl
