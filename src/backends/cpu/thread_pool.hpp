// A small persistent fork-join pool for the CPU backend. One pool per backend (so per context):
// contexts never share threads, which keeps them independent and ThreadSanitizer-clean.
// Workers spin briefly on a generation counter (a PCG step lasts microseconds to milliseconds),
// then sleep on it with C++20 atomic wait.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace cnc {

class thread_pool {
 public:
  explicit thread_pool(int threads);  // threads >= 1; the caller is thread 0
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  int size() const { return size_; }
  // Runs fn(t) for every t in [0, size()): t = 0 on the calling thread. Returns when all are done.
  void run(const std::function<void(int)>& fn);

 private:
  void worker(int t);

  int size_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace cnc
