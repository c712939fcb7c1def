// A small persistent fork-join pool. The CPU backend has one per backend (so per context):
// contexts never share its threads, which keeps them independent. The host stages outside it
// (parallel_pieces) share one process-wide pool, taken by one stage at a time.
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
  // threads >= 1; the caller is thread 0. Fewer run when the system refuses some (size() says
  // how many). Idle workers spin `spin_rounds` pauses before they
  // sleep: worth it between PCG steps, not between host stages (the host pool does not spin, so
  // its idle workers never take cycles from a CPU backend's, but after a job run with keep_warm).
  explicit thread_pool(int threads, int spin_rounds = 20000);
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  int size() const { return size_; }
  // Runs fn(t) for every t in [0, size()): t = 0 on the calling thread. Returns when all are done.
  // spin_after >= 0: the pauses idle workers spin after this job instead of spin_rounds (a caller
  // about to run another job at once keeps them awake for it).
  void run(const std::function<void(int)>& fn, int spin_after = -1);

 private:
  void worker(int t);

  int size_, spin_rounds_;
  std::atomic<int> spin_now_{0};  // the pauses workers spin after the current job
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

// Runs fn(t) for every t in [0, count) on the process's pool for host stages (one thread per
// core, started at first use, and again in a child of fork(); t = 0 on the caller) and returns
// true; returns false, running nothing, when that pool is busy (another thread's stage, or a call
// from inside a stage), too small, or could not start: the caller then starts threads of its
// own. fn must not throw (parallel_pieces catches per piece). Starting a thread costs tens of
// microseconds, so a stage on 16 cores spent about a millisecond on starts alone.
// keep_warm: the pool's workers spin a little (5-100 microseconds) after this job before they
// sleep, for a stage that runs many short jobs back to back (a search's levels): waking sleeping
// workers costs more than such a job. Off by default: spinning workers take cycles from a CPU
// backend's.
bool run_on_host_pool(int count, const std::function<void(int)>& fn, bool keep_warm = false);

}  // namespace cnc
