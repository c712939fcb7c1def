// Content fingerprints of the caller's arrays: a 128-bit hash (xxHash's XXH3) computed in fixed
// pieces on several threads, so the same bytes give the same fingerprint for any thread count.
// cncSolveCSR compares them to tell a matrix it already holds on the device from a new one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cnc {

struct fingerprint {
  std::uint64_t lo = 0, hi = 0;
  bool operator==(const fingerprint&) const = default;
};

// Fingerprint of `bytes` bytes at `data` (its length included), hashed on up to `threads` threads.
fingerprint fingerprint_of(const void* data, std::size_t bytes, int threads);

}  // namespace cnc
