// Persistent fork-join pool (see thread_pool.hpp).
#include "util/thread_pool.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace cnc {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// Under an address-space cap (RLIMIT_AS) every worker's stack (RLIMIT_STACK's size, glibc's
// default) takes address space that the solve's arrays need too: the stacks get at most half of
// what is left, so a pool asked for more threads than fit still leaves room for the data.
int fitting_threads(int threads) {
  rlimit as{}, st{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return threads;
  constexpr double unlimited_stack = 32.0 * (1 << 20);  // what glibc takes without a stack limit
  const double stack = getrlimit(RLIMIT_STACK, &st) == 0 && st.rlim_cur != RLIM_INFINITY
                           ? double(st.rlim_cur)
                           : unlimited_stack;
  unsigned long pages = 0;  // the address space in use: /proc/self/statm's first field
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%lu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  const double used = double(pages) * double(sysconf(_SC_PAGESIZE));
  const double left = std::max(0.0, double(as.rlim_cur) - used);
  const double fit = left / 2 / std::max(stack, 1.0);
  return fit >= threads - 1 ? threads : 1 + int(fit);
}
}  // namespace

thread_pool::thread_pool(int threads, int spin_rounds)
    : size_(fitting_threads(threads < 1 ? 1 : threads)), spin_rounds_(spin_rounds) {
  // A thread the system refuses (address space, process limits) ends the pool where it is: the
  // pool runs with the workers it got. Letting the exception leave would destroy the started,
  // joinable threads, which is std::terminate.
  try {
    threads_.reserve(std::size_t(size_ - 1));
    for (int t = 1; t < size_; ++t) threads_.emplace_back([this, t] { worker(t); });
  } catch (const std::exception&) {  // std::system_error, or no memory for the handles
  }
  size_ = int(threads_.size()) + 1;
}

thread_pool::~thread_pool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& th : threads_) th.join();
}

void thread_pool::run(const std::function<void(int)>& fn, int spin_after) {
  if (size_ == 1) {
    fn(0);
    return;
  }
  job_ = &fn;
  spin_now_.store(spin_after >= 0 ? spin_after : spin_rounds_, std::memory_order_relaxed);
  pending_.store(size_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  fn(0);
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0;) {
    if (spin < spin_rounds_)
      ++spin, cpu_relax();
    else
      std::this_thread::yield();
  }
  job_ = nullptr;
}

bool run_on_host_pool(int count, const std::function<void(int)>& fn, bool keep_warm) {
  // Never destroyed: stages may run while static objects are torn down at exit. Whoever sets
  // `busy` owns `pool` and `owner` until it clears it (a stage within a stage finds it set).
  static std::atomic<bool>* busy = new std::atomic<bool>(false);
  static thread_pool* pool = nullptr;
  static pid_t owner = 0;
  bool idle = false;
  if (!busy->compare_exchange_strong(idle, true, std::memory_order_acquire)) return false;
  struct release {
    ~release() { busy->store(false, std::memory_order_release); }
  } on_exit;
  if (owner != getpid()) {  // first use, or a child of fork(): its parent's workers are not here
    owner = getpid();
    try {
      pool = new thread_pool(int(std::max(1u, std::thread::hardware_concurrency())), 0);
    } catch (const std::exception&) {  // no threads to be had: callers start their own
      pool = nullptr;
    }
  }
  if (!pool || count > pool->size()) return false;
  // 5-100 microseconds of pauses, by the CPU's pause: more than the gap between two levels of a
  // search.
  constexpr int warm_pauses = 2000;
  pool->run(
      [&](int t) {
        if (t < count) fn(t);
      },
      keep_warm ? warm_pauses : -1);
  return true;
}

void thread_pool::worker(int t) {
  std::uint32_t seen = 0;
  int spin_rounds = spin_rounds_;
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
    spin_rounds = spin_now_.load(std::memory_order_relaxed);  // read before the job is over
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

}  // namespace cnc
