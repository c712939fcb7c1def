#include "util/fingerprint.hpp"

#include <atomic>

#include "util/parallel.hpp"

// Header-only use of the library: nothing to link, and the hash inlines into the loop.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cnc {

namespace {

// Pieces of at least 1 MiB: large enough that the hash runs at memory speed, numerous enough
// (up to 1024) for every core; their bounds depend on `bytes` only.
constexpr std::int64_t grain = std::int64_t(1) << 20;

fingerprint digest(const unsigned char* p, std::int64_t b, std::int64_t e) {
  const XXH128_hash_t h = XXH3_128bits(p + b, std::size_t(e - b));
  return fingerprint{h.low64, h.high64};
}

}  // namespace

piece_prints fingerprint_pieces(const void* data, std::size_t bytes, int threads) {
  const auto* p = static_cast<const unsigned char*>(data);
  piece_prints r;
  r.pieces.resize(std::size_t(piece_count(std::int64_t(bytes), grain)));
  parallel_pieces(std::int64_t(bytes), grain, threads,
                  [&](std::int64_t i, std::int64_t b, std::int64_t e) {
                    r.pieces[std::size_t(i)] = digest(p, b, e);
                  });
  const XXH128_hash_t h =
      XXH3_128bits_withSeed(r.pieces.data(), r.pieces.size() * sizeof(fingerprint), bytes);
  r.whole = fingerprint{h.low64, h.high64};
  return r;
}

fingerprint fingerprint_of(const void* data, std::size_t bytes, int threads) {
  return fingerprint_pieces(data, bytes, threads).whole;
}

bool same_pieces(const void* data, std::size_t bytes, int threads,
                 const std::vector<fingerprint>& expected) {
  if (expected.size() != std::size_t(piece_count(std::int64_t(bytes), grain))) return false;
  const auto* p = static_cast<const unsigned char*>(data);
  std::atomic<bool> differ{false};
  parallel_pieces(std::int64_t(bytes), grain, threads,
                  [&](std::int64_t i, std::int64_t b, std::int64_t e) {
                    if (differ.load(std::memory_order_relaxed)) return;
                    if (!(digest(p, b, e) == expected[std::size_t(i)]))
                      differ.store(true, std::memory_order_relaxed);
                  });
  return !differ.load();
}

}  // namespace cnc
