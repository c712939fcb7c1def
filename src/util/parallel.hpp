// Host-side fork-join for the pipeline stages outside the CPU backend (validation of the caller's
// CSR, format conversion, the inverse diagonal, CSR from the hash table). Work is cut into a
// fixed number of contiguous pieces that does not depend on the thread count, and every piece
// writes only its own outputs, so results are the same bits for any number of threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include "util/environment.hpp"
#include "util/thread_pool.hpp"

namespace cnc {

// Threads for host stages: CNC_NUM_THREADS when set (> 0), else one per core. `requested` > 0
// (the context's CNC_THREADS) wins over both.
inline int host_threads(int requested = 0) {
  if (requested > 0) return requested;
  const long long v = env::integer(env::var::num_threads, 0);
  if (v > 0 && v <= 1 << 16) return int(v);
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

// Splits [0, n) into at most 1024 pieces of at least `grain` items and runs
// f(piece, begin, end) for each on up to `threads` threads. Pieces are numbered in order; the
// same n and grain give the same pieces whatever the thread count. Exceptions thrown by f are
// rethrown here (the one of the lowest piece that threw). keep_warm: another call follows at once
// (run_on_host_pool).
template <class F>
void parallel_pieces(std::int64_t n, std::int64_t grain, int threads, F&& f,
                     bool keep_warm = false) {
  if (n <= 0) return;
  const std::int64_t pieces =
      std::clamp<std::int64_t>(n / std::max<std::int64_t>(grain, 1), 1, 1024);
  auto bounds = [&](std::int64_t p) { return n * p / pieces; };
  // A thread is worth its start (tens of microseconds) only with a few pieces of work each.
  const int t_count =
      int(std::min<std::int64_t>(std::max(threads, 1), std::max<std::int64_t>(1, pieces / 4)));
  if (t_count == 1) {
    for (std::int64_t p = 0; p < pieces; ++p) f(p, bounds(p), bounds(p + 1));
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(pieces));
  auto work = [&](int t) {
    for (std::int64_t p = pieces * t / t_count; p < pieces * (t + 1) / t_count; ++p) {
      try {
        f(p, bounds(p), bounds(p + 1));
      } catch (...) {
        errors[std::size_t(p)] = std::current_exception();
      }
    }
  };
  if (!run_on_host_pool(t_count, work, keep_warm)) {
    // Threads of our own; the shares of any that cannot start run here.
    std::vector<std::thread> pool;
    pool.reserve(std::size_t(t_count - 1));
    int t = 1;
    for (; t < t_count; ++t) {
      try {
        pool.emplace_back(work, t);
      } catch (const std::system_error&) {
        break;
      }
    }
    work(0);
    for (; t < t_count; ++t) work(t);
    for (auto& th : pool) th.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Number of pieces parallel_pieces makes for (n, grain): for callers that keep one result slot
// per piece.
inline std::int64_t piece_count(std::int64_t n, std::int64_t grain) {
  return n <= 0 ? 0 : std::clamp<std::int64_t>(n / std::max<std::int64_t>(grain, 1), 1, 1024);
}

// The lowest index t in [0, n) with bad(t), or -1: checked in parallel pieces, so the answer is
// the first in order whatever the thread count.
template <class Bad>
std::int64_t first_index(std::int64_t n, std::int64_t grain, int threads, Bad&& bad) {
  std::vector<std::int64_t> found(static_cast<std::size_t>(piece_count(n, grain)), -1);
  parallel_pieces(n, grain, threads, [&](std::int64_t p, std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t)
      if (bad(t)) {
        found[static_cast<std::size_t>(p)] = t;
        return;
      }
  });
  for (std::int64_t t : found)
    if (t >= 0) return t;
  return -1;
}

// Per-piece counts into offsets: v[p] becomes the sum of the counts before p; returns the total.
inline std::int64_t exclusive_scan(std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (auto& x : v) {
    const std::int64_t t = x;
    x = s;
    s += t;
  }
  return s;
}

}  // namespace cnc
