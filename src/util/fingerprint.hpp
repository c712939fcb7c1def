// Content fingerprints of the caller's arrays: a 128-bit hash (xxHash's XXH3) computed in fixed
// pieces on several threads, so the same bytes give the same fingerprint for any thread count.
// cncSolveCSR compares them to tell a matrix it already holds on the device from a new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cnc {

struct fingerprint {
  std::uint64_t lo = 0, hi = 0;
  bool operator==(const fingerprint&) const = default;
};

// Fingerprint of `bytes` bytes at `data` (its length included), hashed on up to `threads` threads.
fingerprint fingerprint_of(const void* data, std::size_t bytes, int threads);

// The same with the digests of the pieces it is made of (at most 1024), for same_pieces.
struct piece_prints {
  std::vector<fingerprint> pieces;
  fingerprint whole;
};
piece_prints fingerprint_pieces(const void* data, std::size_t bytes, int threads);

// Whether `bytes` bytes at `data` have exactly the piece digests `expected` (from
// fingerprint_pieces of as many bytes). Every thread stops at the first piece found to differ,
// so arrays that changed everywhere cost a few pieces, not a whole pass.
bool same_pieces(const void* data, std::size_t bytes, int threads,
                 const std::vector<fingerprint>& expected);

}  // namespace cnc
