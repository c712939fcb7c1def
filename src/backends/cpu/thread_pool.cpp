// Persistent fork-join pool (see thread_pool.hpp).
#include "backends/cpu/thread_pool.hpp"

namespace cnc {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
constexpr int spin_rounds = 20000;
}  // namespace

thread_pool::thread_pool(int threads) : size_(threads < 1 ? 1 : threads) {
  for (int t = 1; t < size_; ++t) threads_.emplace_back([this, t] { worker(t); });
}

thread_pool::~thread_pool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& th : threads_) th.join();
}

void thread_pool::run(const std::function<void(int)>& fn) {
  if (size_ == 1) {
    fn(0);
    return;
  }
  job_ = &fn;
  pending_.store(size_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  fn(0);
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < spin_rounds)
      cpu_relax();
    else
      std::this_thread::yield();
  }
  job_ = nullptr;
}

void thread_pool::worker(int t) {
  std::uint32_t seen = 0;
  for (;;) {
    std::uint32_t g;
    int spin = 0;
    while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      if (++spin < spin_rounds)
        cpu_relax();
      else
        generation_.wait(seen, std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_relaxed)) return;
    (*job_)(t);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace cnc
