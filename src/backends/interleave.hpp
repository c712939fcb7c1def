// The host side of the backends' vector layout for k systems (backend.hpp: entry i of system j
// at i*k + j over `rows` rows, rows past n padding) from and to the caller's column-major arrays
// (system j's n values at j*n). Both walk the interleaved array a row at a time, one pass over
// it: column by column is k passes, 4-10x slower at k = 8 (2.1 M rows on the build box). Pieces
// of rows run on `threads` host threads (util/parallel.hpp; 1 inside the CPU backend, whose own
// pool is separate); each row's outputs are its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/parallel.hpp"

namespace cnc {

// dst[i*k + j] = T(src[j*n + i]) for i < n, T(0) for n <= i < rows (src null: all 0).
template <class T>
void interleave(const double* src, std::size_t n, std::size_t k, std::size_t rows, T* dst,
                int threads) {
  parallel_pieces(std::int64_t(rows), 32768, threads,
                  [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                    for (auto i = std::size_t(i0); i < std::size_t(i1); ++i)
                      for (std::size_t j = 0; j < k; ++j)
                        dst[i * k + j] = src && i < n ? T(src[j * n + i]) : T(0);
                  });
}

// dst[j*n + i] = double(src[i*k + j]) for i < n.
template <class T>
void deinterleave(const T* src, std::size_t n, std::size_t k, double* dst, int threads) {
  parallel_pieces(std::int64_t(n), 32768, threads,
                  [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                    for (auto i = std::size_t(i0); i < std::size_t(i1); ++i)
                      for (std::size_t j = 0; j < k; ++j) dst[j * n + i] = double(src[i * k + j]);
                  });
}

}  // namespace cnc
