// The peer every cnc GPU benchmark is measured against: a textbook Jacobi-PCG on cuSPARSE +
// cuBLAS, as NVIDIA's conjugateGradientPrecond sample writes it (cusparseSpMV on CSR with 32-bit
// indices, cuBLAS dots and axpys, every scalar returned to the host, a host check of ||r|| each
// iteration). Shared by bench_cuda (per-iteration times) and bench_api (a user's whole solve:
// allocation, upload of the host CSR, the Jacobi diagonal on the device, the loop, x back), and in
// complex double by bench_complex (textbook_complex.cuh: T = thrust::complex<double>, CUDA_C_64F
// values, cublasZdotc / Zaxpy / Zscal): the same loop is then textbook complex PCG. blas<T> is
// what a value type brings: its cudaDataType, dot (x^H y), axpy, scal, and real (the real part
// of a dot, which the stopping test compares).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace textbook {

inline void die(const char* file, int line, const char* call, const char* what) {
  std::fprintf(stderr, "%s:%d %s: %s\n", file, line, call, what);
  std::exit(1);
}
#define TB_CK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) textbook::die(__FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
  } while (0)
#define TB_CKS(call)                                                        \
  do {                                                                      \
    cusparseStatus_t e_ = (call);                                           \
    if (e_ != CUSPARSE_STATUS_SUCCESS)                                      \
      textbook::die(__FILE__, __LINE__, #call, cusparseGetErrorString(e_)); \
  } while (0)
#define TB_CKB(call)                                                                               \
  do {                                                                                             \
    if ((call) != CUBLAS_STATUS_SUCCESS) textbook::die(__FILE__, __LINE__, #call, "cuBLAS error"); \
  } while (0)

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class T>
struct blas;
template <>
struct blas<double> {
  static constexpr cudaDataType type = CUDA_R_64F;
  static void dot(cublasHandle_t h, int n, const double* x, const double* y, double* r) {
    TB_CKB(cublasDdot(h, n, x, 1, y, 1, r));
  }
  static void axpy(cublasHandle_t h, int n, double a, const double* x, double* y) {
    TB_CKB(cublasDaxpy(h, n, &a, x, 1, y, 1));
  }
  static void scal(cublasHandle_t h, int n, double a, double* x) {
    TB_CKB(cublasDscal(h, n, &a, x, 1));
  }
  static double real(double v) { return v; }
};
template <>
struct blas<float> {
  static constexpr cudaDataType type = CUDA_R_32F;
  static void dot(cublasHandle_t h, int n, const float* x, const float* y, float* r) {
    TB_CKB(cublasSdot(h, n, x, 1, y, 1, r));
  }
  static void axpy(cublasHandle_t h, int n, float a, const float* x, float* y) {
    TB_CKB(cublasSaxpy(h, n, &a, x, 1, y, 1));
  }
  static void scal(cublasHandle_t h, int n, float a, float* x) {
    TB_CKB(cublasSscal(h, n, &a, x, 1));
  }
  static double real(float v) { return v; }
};

template <class T>
__global__ void jacobi_apply(std::int64_t n, const T* d, const T* r, T* z) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) z[i] = d[i] * r[i];
}

// d[i] = 1 / a_ii (1 where the diagonal is zero or absent), one thread per row.
template <class T>
__global__ void inverse_diagonal(int n, const int* rp, const int* col, const T* val, T* d) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T diag = 0;
  for (int k = rp[i]; k < rp[i + 1]; ++k)
    if (col[k] == i) diag = val[k];
  d[i] = diag != T(0) ? T(1) / diag : T(1);
}

// A user's CSR (0-based, 32-bit row offsets and columns, values in T) on the device, with the
// PCG work vectors. The constructor is the user's upload; solve() is the loop.
template <class T>
class pcg {
 public:
  pcg(int n, std::int64_t nnz, const int* rp, const int* col, const T* val) : n_(n) {
    TB_CK(cudaMalloc(&rp_, sizeof(int) * (n + 1)));
    TB_CK(cudaMalloc(&col_, sizeof(int) * nnz));
    TB_CK(cudaMalloc(&val_, sizeof(T) * nnz));
    for (T** v : {&x_, &r_, &z_, &p_, &q_, &d_}) TB_CK(cudaMalloc(v, sizeof(T) * n));
    TB_CK(cudaMemcpy(rp_, rp, sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    TB_CK(cudaMemcpy(col_, col, sizeof(int) * nnz, cudaMemcpyHostToDevice));
    TB_CK(cudaMemcpy(val_, val, sizeof(T) * nnz, cudaMemcpyHostToDevice));
    inverse_diagonal<<<blocks(), threads>>>(n, rp_, col_, val_, d_);
    TB_CKS(cusparseCreate(&sp_));
    TB_CKB(cublasCreate(&bl_));
    TB_CKS(cusparseCreateCsr(&A_, n, n, nnz, rp_, col_, val_, CUSPARSE_INDEX_32I,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, blas<T>::type));
    TB_CKS(cusparseCreateDnVec(&vp_, n, p_, blas<T>::type));
    TB_CKS(cusparseCreateDnVec(&vq_, n, q_, blas<T>::type));
    const T one = 1, zero = 0;
    size_t ws = 0;
    TB_CKS(cusparseSpMV_bufferSize(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A_, vp_, &zero, vq_,
                                   blas<T>::type, CUSPARSE_SPMV_ALG_DEFAULT, &ws));
    TB_CK(cudaMalloc(&work_, std::max<size_t>(ws, 16)));
    TB_CK(cudaDeviceSynchronize());
  }
  pcg(const pcg&) = delete;
  pcg& operator=(const pcg&) = delete;
  ~pcg() {
    cusparseDestroySpMat(A_);
    cusparseDestroyDnVec(vp_);
    cusparseDestroyDnVec(vq_);
    cusparseDestroy(sp_);
    cublasDestroy(bl_);
    for (void* v : {(void*)rp_, (void*)col_, (void*)val_, (void*)x_, (void*)r_, (void*)z_,
                    (void*)p_, (void*)q_, (void*)d_, work_})
      cudaFree(v);
  }

  // New values of the same pattern (nnz host values), as the user moves them: uploaded in
  // place, the Jacobi diagonal computed again.
  void set_values(const T* val, std::int64_t nnz) {
    TB_CK(cudaMemcpy(val_, val, sizeof(T) * nnz, cudaMemcpyHostToDevice));
    inverse_diagonal<<<blocks(), threads>>>(n_, rp_, col_, val_, d_);
    TB_CK(cudaDeviceSynchronize());
  }

  // x = 0, then iterations until ||r|| <= tol ||b|| (tol > 0) or max_it. b: n host values.
  // Returns the iterations run; *loop_seconds: the loop alone (after r = b is on the device).
  int solve(const T* b, double tol, int max_it, double* loop_seconds = nullptr) {
    TB_CK(cudaMemset(x_, 0, sizeof(T) * n_));
    TB_CK(cudaMemcpy(r_, b, sizeof(T) * n_, cudaMemcpyHostToDevice));
    jacobi_apply<<<blocks(), threads>>>(n_, d_, r_, z_);
    TB_CK(cudaMemcpy(p_, z_, sizeof(T) * n_, cudaMemcpyDeviceToDevice));
    T rz, pq, rr, rz_new, bb;
    blas<T>::dot(bl_, n_, r_, r_, &bb);
    blas<T>::dot(bl_, n_, r_, z_, &rz);
    TB_CK(cudaDeviceSynchronize());
    const double t0 = now(), stop2 = tol * tol * blas<T>::real(bb);
    const T one = 1, zero = 0;
    int it = 0;
    while (it < max_it) {
      TB_CKS(cusparseSpMV(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A_, vp_, &zero, vq_,
                          blas<T>::type, CUSPARSE_SPMV_ALG_DEFAULT, work_));
      blas<T>::dot(bl_, n_, p_, q_, &pq);
      const T alpha = rz / pq;
      blas<T>::axpy(bl_, n_, alpha, p_, x_);
      blas<T>::axpy(bl_, n_, -alpha, q_, r_);
      blas<T>::dot(bl_, n_, r_, r_, &rr);
      ++it;
      if (tol > 0 && blas<T>::real(rr) <= stop2) break;
      jacobi_apply<<<blocks(), threads>>>(n_, d_, r_, z_);
      blas<T>::dot(bl_, n_, r_, z_, &rz_new);
      const T beta = rz_new / rz;
      rz = rz_new;
      blas<T>::scal(bl_, n_, beta, p_);
      blas<T>::axpy(bl_, n_, one, z_, p_);
    }
    TB_CK(cudaDeviceSynchronize());
    if (loop_seconds) *loop_seconds = now() - t0;
    if (!(blas<T>::real(rr) == blas<T>::real(rr))) std::printf("  (textbook PCG produced NaN)\n");
    return it;
  }
  void get_x(T* x) const { TB_CK(cudaMemcpy(x, x_, sizeof(T) * n_, cudaMemcpyDeviceToHost)); }

 private:
  static constexpr int threads = 256;
  int blocks() const { return (n_ + threads - 1) / threads; }
  int n_;
  int *rp_ = nullptr, *col_ = nullptr;
  T *val_ = nullptr, *x_ = nullptr, *r_ = nullptr, *z_ = nullptr, *p_ = nullptr, *q_ = nullptr,
    *d_ = nullptr;
  void* work_ = nullptr;
  cusparseHandle_t sp_ = nullptr;
  cublasHandle_t bl_ = nullptr;
  cusparseSpMatDescr_t A_ = nullptr;
  cusparseDnVecDescr_t vp_ = nullptr, vq_ = nullptr;
};

}  // namespace textbook
