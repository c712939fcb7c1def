// The host's memory bandwidth as the CPU benchmarks' floors take it: a STREAM-like triad
// a = b + s c over 3 x 128 MiB on `threads` threads, each on the pages it touched first; median
// of `reps` timed sweeps after one untimed, in GB/s (3 x 8 bytes an element: two reads, one
// write). Shared by bench_cpu_patterns and bench_complex(_cpu).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

inline double triad_gbs(int threads, int reps) {
  const std::size_t n = std::size_t(16) << 20;
  std::vector<double> a(n), b(n), c(n);
  auto run = [&](const std::function<void(std::size_t, std::size_t)>& fn) {
    std::vector<std::thread> th;
    for (int t = 0; t < threads; ++t)
      th.emplace_back(fn, n * std::size_t(t) / std::size_t(threads),
                      n * std::size_t(t + 1) / std::size_t(threads));
    for (auto& x : th) x.join();
  };
  run([&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
  });
  auto now = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    const double t0 = now();
    run([&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) a[i] = b[i] + 3.0 * c[i];
    });
    if (r > 0) t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return 3.0 * 8.0 * double(n) / t[t.size() / 2] * 1e-9;
}
