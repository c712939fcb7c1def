// textbook_pcg.cuh's peer in complex double, for bench_complex: the value type
// thrust::complex<double> (the layout of cuDoubleComplex and of interleaved (re, im) doubles),
// cuSPARSE's CUDA_C_64F, and cuBLAS's Zdotc (which conjugates its first vector: dot(x, y) =
// x^H y), Zaxpy and Zscal. textbook::pcg<zcomplex> is then textbook Jacobi-PCG for a Hermitian
// matrix: the same loop, dots r^H r, r^H z and p^H A p (real in exact arithmetic for a Hermitian
// A; its scalars stay complex, as a textbook complex PCG keeps them), the inverse of the complex
// diagonal as its Jacobi. Kept apart from textbook_pcg.cuh because thrust's headers bring a
// namespace ::cuda that bench_cuda's `using namespace cnc` would make ambiguous.
#pragma once

#include <thrust/complex.h>

#include "textbook_pcg.cuh"

namespace textbook {

using zcomplex = thrust::complex<double>;

template <>
struct blas<zcomplex> {
  static constexpr cudaDataType type = CUDA_C_64F;
  static cuDoubleComplex* z(zcomplex* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
  static const cuDoubleComplex* z(const zcomplex* p) {
    return reinterpret_cast<const cuDoubleComplex*>(p);
  }
  static void dot(cublasHandle_t h, int n, const zcomplex* x, const zcomplex* y, zcomplex* r) {
    TB_CKB(cublasZdotc(h, n, z(x), 1, z(y), 1, z(r)));
  }
  static void axpy(cublasHandle_t h, int n, zcomplex a, const zcomplex* x, zcomplex* y) {
    TB_CKB(cublasZaxpy(h, n, z(&a), z(x), 1, z(y), 1));
  }
  static void scal(cublasHandle_t h, int n, zcomplex a, zcomplex* x) {
    TB_CKB(cublasZscal(h, n, z(&a), z(x), 1));
  }
  static double real(const zcomplex& v) { return v.real(); }
};
static_assert(sizeof(zcomplex) == 2 * sizeof(double), "zcomplex is a (re, im) pair of doubles");

}  // namespace textbook
