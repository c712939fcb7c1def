#include "backends/opencl/opencl_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "util/environment.hpp"

namespace cnc::ocl {
namespace {
constexpr std::size_t max_events = 1 << 20;  // about 4 s of launches at 4 us each
}

bool kernel_profile::wanted() { return env::integer(env::var::opencl_profile, 0) > 0; }

kernel_profile::~kernel_profile() {
  for (auto& e : events_)
    if (e.second) cl_.ReleaseEvent(e.second);
}

cl_event* kernel_profile::next(const char* what) {
  if (events_.size() >= max_events) return nullptr;
  events_.emplace_back(what, nullptr);
  return &events_.back().second;
}

void kernel_profile::report(cl_command_queue q, const char* title) {
  if (events_.empty()) return;
  cl_.Finish(q);
  struct sum {
    long long calls = 0;
    double ns = 0;
  };
  std::map<std::string, sum> by_name;
  double total = 0;
  for (auto& [what, ev] : events_) {
    if (!ev) continue;
    cl_ulong t0 = 0, t1 = 0;
    if (cl_.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr) ==
            CL_SUCCESS &&
        cl_.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr) ==
            CL_SUCCESS) {
      sum& s = by_name[what];
      s.calls += 1;
      s.ns += double(t1 - t0);
      total += double(t1 - t0);
    }
    cl_.ReleaseEvent(ev);
    ev = nullptr;
  }
  events_.clear();
  std::vector<std::pair<std::string, sum>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::fprintf(stderr, "cnc OpenCL kernel times (%s): %.3f ms in all\n", title, 1e-6 * total);
  for (const auto& [name, s] : rows)
    std::fprintf(stderr, "  %-28s %8lld calls %10.3f ms %9.2f us/call %5.1f %%\n", name.c_str(),
                 s.calls, 1e-6 * s.ns, 1e-3 * s.ns / double(s.calls),
                 total > 0 ? 100.0 * s.ns / total : 0.0);
}

}  // namespace cnc::ocl
