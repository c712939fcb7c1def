/* What cnc's Hermitian check accepts, written once for the host (src/conversion/complex.cpp) and
 * the CUDA intake of complex matrices (kernels/cuda/convert.cu). The same rule, not the same
 * bits: nvcc may fuse the multiply-adds, so at the tolerance's edge the two may disagree; the
 * device's refusal is then decided again by the host. */
#ifndef CNC_HERMITIAN_H
#define CNC_HERMITIAN_H

#include <math.h>

#if defined(__CUDACC__)
#define CNC_HERMITIAN_FN __host__ __device__ inline
#else
#define CNC_HERMITIAN_FN inline
#endif

namespace cnc {

constexpr double hermitian_tolerance = 1e-12;

/* Whether (re, im) is the conjugate of (tre, tim) up to hermitian_tolerance of the larger
 * modulus; scaled by the largest part first, so that no square overflows or underflows. */
CNC_HERMITIAN_FN bool near_conjugate(double re, double im, double tre, double tim) {
  double s = fmax(fmax(fabs(re), fabs(im)), fmax(fabs(tre), fabs(tim)));
  if (s == 0) return true;
  if (s < 0x1p-1000) { /* subnormal parts: 1 / s would overflow; scaled up exactly first */
    re *= 0x1p600, im *= 0x1p600, tre *= 0x1p600, tim *= 0x1p600, s *= 0x1p600;
  }
  const double u = 1 / s;
  re *= u, im *= u, tre *= u, tim *= u;
  const double dr = re - tre, di = im + tim;
  return dr * dr + di * di <=
         hermitian_tolerance * hermitian_tolerance * fmax(re * re + im * im, tre * tre + tim * tim);
}

/* Whether a diagonal entry is real (|im| at most the tolerance of its modulus) and > 0. */
CNC_HERMITIAN_FN bool real_positive(double re, double im) {
  return re > 0 && fabs(im) <= hermitian_tolerance * fmax(re, fabs(im));
}

}  // namespace cnc

#endif
