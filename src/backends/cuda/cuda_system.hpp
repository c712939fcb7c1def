// The CUDA device_system: one matrix and the work vectors of k right-hand sides resident on the
// GPU (cuda_system.cpp: construction and the PCG steps; cuda_surface.cpp: the vector surface).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_block_kernels.hpp"
#include "backends/cuda/cuda_host.hpp"
#include "backends/cuda/cuda_kernels.hpp"

namespace cnc::cuda_host {

// Systems per matrix pass: a group of at most max_group right-hand sides.
constexpr int max_group = 8;

struct group {
  int j0 = 0;  // first system
  device_buffer x, r, p, q, b, partials, counter;
  cuda::group_view view;
  int spmv_grid = 0;
  int width = 0;  // SpMV lanes per (block) row
  // The vector surface: add_vectors' vectors, A in for the masked spmv/residual (made on first
  // use), and the active slots (bit j: system j0 + j).
  std::vector<device_buffer> extra;
  device_buffer scratch;
  unsigned int mask = 0;
};

class cuda_system final : public device_system, public cuda::system_probe {
 public:
  cuda_system(int dev, int sm_count, bool cooperative, stager& st, const host_matrix& a,
              std::span<const double> d, precision p, int nrhs);
  // From a canonical CSR in device memory (the caller's arrays), double precision: CSR is
  // copied device to device, SELL built from it, the inverse diagonal computed here.
  // keep_pattern: what refill_values needs is kept (pattern_rp_, pattern_col_).
  cuda_system(int dev, int sm_count, bool cooperative, stager& st, const device_csr& a, format f,
              bool jacobi, int nrhs, bool keep_pattern, device_build& info);
  ~cuda_system() override;

  void set_vectors(const double* b, const double* x) override;
  void init(const double* thr2) override;
  void spmv_dot() override;
  void update_xr() override;
  void update_p() override;
  void iterate(int count) override;
  void read_state(rhs_state* out) override;
  void write_state(const rhs_state* in) override;
  void get_x(double* x) override;
  void apply(const double* x, double* y) override;
  bool set_numbering(std::span<const std::int32_t> perm) override;

  // The vector surface (cuda_surface.cpp).
  int add_vectors(int count) override;
  void release_vectors() override;
  void set_mask(const std::uint8_t* active) override;
  void spmv(int in, int out) override;
  void precondition(int in, int out) override;
  void residual(int in, int out) override;
  void dots(int u, const int* v, int count, double* out) override;
  void axpby(const double* alpha, int x, const double* beta, int y) override;
  void zaxpby(const double* alpha, int x, const double* beta, int y) override;
  void combine(const int* v, int count, const double* coef, const double* beta, int y) override;
  bool fused_complex() const override { return true; }
  void set_complex_jacobi(const double* dinv) override;
  void zprecondition(int in, int out) override;
  void zdots(int u, const int* v, int count, double* out) override;
  void zcombine(const int* v, int count, const double* coef, const double* beta, int y) override;
  void read(int v, double* out) override;
  void block_dots(int u, int v, double* out) override;  // cuda_block.cpp
  void block_combine(int v, const double* coef, const double* beta, int y) override;
  // Fused where the system is one group (k <= 8); else false.
  bool has_block_fused() const override { return groups_.size() == 1; }
  bool block_grams(const int* u, const int* v, int count, double* out) override;
  bool spmv_gram(int in, int out, double* gram) override;
  bool block_update(int p, int q, const double* a, int x, int r, int z, double* out) override;
  bool block_combine2(int v1, const double* c1, int v2, const double* c2, int y,
                      bool scale_v1) override;
  bool refill_values(const double* val, bool jacobi, std::int64_t* zero_diagonals) override;
  // Halo operations (cuda_halo.cpp): double vectors only.
  bool set_halo(const csr_view& halo, std::int32_t halo_size, const std::int32_t* send_rows,
                std::int32_t send_count) override;
  double* halo_send() override { return send_host_.as<double>(); }
  double* halo_recv() override { return recv_host_.as<double>(); }
  void gather_halo(int v) override;
  void add_halo(double alpha, int y) override;
  void* halo_device(double** send, double** recv) override;
  void gather_halo_on_device(int v) override;
  void add_halo_on_device(double alpha, int y) override;

  // probe
  void read_vector(cuda::vec_id v, double* out) override;
  std::string config() const override;
  std::int64_t long_rows() const override { return mat_.n_long; }

  // BCRS block-row offsets of a device CSR into block_ptr; returns the block count.
  static std::int64_t bcrs_offsets(const device_csr& a, int b, std::int64_t* block_ptr,
                                   cudaStream_t s);

 private:
  // SELL (ZSELL with `pairs`: n complex rows, values (re, im) pairs) built on the device.
  void build_sell(const csr_view& m, bool f32_values);
  void build_zsell(const zcsr_view& m, bool f32_values);
  std::int64_t build_sell(const std::int64_t* rp, const std::int32_t* col, const void* val,
                          std::int32_t n, bool f32_values, bool pairs = false);
  void setup_groups(int sm_count, bool cooperative);
  void split_long_rows(std::int64_t nnz);  // cuda_long_rows.cpp
  cuda::matrix_view matrix_for(const group& g) const;
  cudaError_t launch_spmv_dot();
  cudaError_t launch_update_xr();
  cudaError_t launch_update_p();
  cudaGraphExec_t graph_for(int count);

  // Column-major doubles (n_real rows per system; host or device memory: cudaMemcpyDefault) ->
  // the vector `pick(g)` of every group; perm: the doubles in that numbering (cuda::scatter).
  template <class Pick>
  void scatter_all(const double* host, Pick pick, const std::int32_t* perm = nullptr);
  // The vector `pick(g)` of every group -> column-major doubles (host or device memory), `rows`
  // rows per system; perm as for scatter_all.
  template <class Pick>
  void gather_all(std::int32_t rows, Pick pick, double* host, std::int32_t host_rows,
                  const std::int32_t* perm = nullptr);
  const std::int32_t* numbering() const { return numbering_.as<std::int32_t>(); }

  // The vector surface's helpers (cuda_surface.cpp).
  void check_index(int v) const;      // throws CNC_ERR_INVALID_VALUE for an unknown index
  static void* vec(group& g, int v);  // vector v of group g (index checked)
  void* scratch(group& g);            // made on first use
  void dots_of(int u, const int* v, int count, int per, double* out);  // dots, zdots
  void surface_buffers(int count);  // dots' partials, counter and result for `count` values
  // count doubles of a fused pass's results (launched by `launch` into a device pointer) into out.
  template <class F>
  void fused_results(std::size_t count, double* out, const char* what, F&& launch);
  static bool full(const group& g) { return g.mask == (1u << g.view.k) - 1u; }

  stager* stager_;  // the backend's
  int dev_;
  precision pr_;
  int nrhs_;
  std::int32_t n_real_ = 0;
  std::int32_t n_ = 0;    // padded rows
  std::int64_t nnz_ = 0;  // entries of the CSR a device build started from
  std::size_t vsize_ = sizeof(double);
  cudaStream_t stream_ = nullptr;
  device_buffer row_ptr_, col_, val_, d_, state_, staging_;
  device_buffer numbering_;  // set_numbering's perm (n_real_ values), empty for none
  // The canonical CSR's row offsets (SELL, BCRS) and columns (BCRS) the matrix was built from,
  // kept for refill_values; empty when not asked for.
  device_buffer pattern_rp_, pattern_col_;
  bool refillable_ = false;
  cuda::matrix_view mat_;
  double avg_per_row_ = 0;  // entries (CSR) or blocks (BCRS) per (block) row
  // CSR long rows (matrix_view::long_rows): the list, piece offsets, counters, piece sums.
  device_buffer long_rows_, piece_ptr_, piece_done_, piece_sums_;
  std::vector<group> groups_;
  int persistent_grid_ = 0;  // > 0: iterate() runs the persistent kernel on this many blocks
  device_buffer persistent_partials_, persistent_p_;
  std::map<int, cudaGraphExec_t> graphs_;
  // The vector surface.
  int extra_count_ = 0;  // vectors made by add_vectors (same in every group)
  device_buffer zd_;     // D⁻¹ of set_complex_jacobi, n_ values in the vectors' precision
  device_buffer dot_partials_, dot_counter_;  // shared by the groups' dots launches (in order)
  // dots' results, count * nrhs doubles [i*nrhs + j] (zdots: twice that, (re, im)): written by the
  // kernels straight into mapped pinned memory (dot_host_), or, where mapping fails or
  // CNC_CUDA_DOTS_MAPPED=0, into dot_result_ on the device and copied to dot_host_ (or to the
  // caller's array) in one copy.
  bool dot_mapped_ = true;
  std::size_t dot_capacity_ = 0;  // bytes of dot_host_ (or of dot_result_ where not mapped)
  device_buffer dot_result_;
  pinned_buffer dot_host_;
  std::vector<const void*> dot_ptrs_;
  device_buffer fused_partials_;  // block_fused_pass's, made on first use
  int spmv_gram_on_ = -1;         // cuda::spmv_sell_gram_on, asked on first use
  // Halo operations: the halo CSR, the rows to send, and device + pinned host buffers of the
  // values gathered (send_count * nrhs) and received (halo_size * nrhs), each with its pinned
  // host copy, the caller's send and receive buffers.
  std::int32_t halo_rows_ = 0, halo_size_ = 0, send_count_ = 0;
  device_buffer halo_rp_, halo_col_, halo_val_, send_rows_, send_dev_, recv_dev_;
  pinned_buffer send_host_, recv_host_;
};

template <class Pick>
void cuda_system::scatter_all(const double* host, Pick pick, const std::int32_t* perm) {
  const std::size_t bytes = sizeof(double) * n_real_ * nrhs_;
  if (pageable(host))
    stager_->copy(staging_.get(), host, bytes, stream_);
  else
    check(cudaMemcpyAsync(staging_.get(), host, bytes, cudaMemcpyDefault, stream_),
          "vector upload");
  for (group& g : groups_)
    check(cuda::scatter(pr_, g.view, staging_.as<double>() + std::size_t(g.j0) * n_real_, n_real_,
                        perm, pick(g), stream_),
          "scatter launch");
}

template <class Pick>
void cuda_system::gather_all(std::int32_t rows, Pick pick, double* host, std::int32_t host_rows,
                             const std::int32_t* perm) {
  for (group& g : groups_)
    check(cuda::gather(pr_, g.view, pick(g), rows, perm,
                       staging_.as<double>() + std::size_t(g.j0) * rows, stream_),
          "gather launch");
  const std::size_t bytes = sizeof(double) * host_rows * nrhs_;
  if (pageable(host)) {
    stager_->copy_to_host(host, staging_.get(), bytes, stream_);
  } else {
    check(cudaMemcpyAsync(host, staging_.get(), bytes, cudaMemcpyDefault, stream_),
          "vector read-back");
    check(cudaStreamSynchronize(stream_), "vector read-back");
  }
}

}  // namespace cnc::cuda_host
