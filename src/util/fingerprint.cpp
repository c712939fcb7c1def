#include "util/fingerprint.hpp"

#include <vector>

#include "util/parallel.hpp"

// Header-only use of the library: nothing to link, and the hash inlines into the loop.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cnc {

fingerprint fingerprint_of(const void* data, std::size_t bytes, int threads) {
  // Pieces of at least 1 MiB: large enough that the hash runs at memory speed, numerous enough
  // (up to 1024) for every core; their bounds depend on `bytes` only.
  constexpr std::int64_t grain = std::int64_t(1) << 20;
  const auto* p = static_cast<const unsigned char*>(data);
  std::vector<XXH128_hash_t> piece(std::size_t(piece_count(std::int64_t(bytes), grain)));
  parallel_pieces(std::int64_t(bytes), grain, threads,
                  [&](std::int64_t i, std::int64_t b, std::int64_t e) {
                    piece[std::size_t(i)] = XXH3_128bits(p + b, std::size_t(e - b));
                  });
  const XXH128_hash_t h =
      XXH3_128bits_withSeed(piece.data(), piece.size() * sizeof(XXH128_hash_t), bytes);
  return fingerprint{h.low64, h.high64};
}

}  // namespace cnc
