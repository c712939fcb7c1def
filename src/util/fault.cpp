#include "util/fault.hpp"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "util/environment.hpp"

namespace cnc::fault {

namespace {

struct plan {
  bool armed = false;
  point at = point::device_alloc;
  long long n = 0;      // the count that fails
  bool sticky = false;  // device-lost: every later call too
};

plan read_plan() {
  plan p;
  const auto v = env::text(env::var::fault_inject);
  if (!v) return p;
  const std::string& s = *v;
  const auto colon = s.find(':');
  const std::string kind = s.substr(0, colon);
  const long long n = colon == std::string::npos ? 0 : std::atoll(s.c_str() + colon + 1);
  if (n <= 0 || (kind != "device-alloc" && kind != "device-call" && kind != "device-lost" &&
                 kind != "host-alloc")) {
    std::fprintf(stderr,
                 "cnc: CNC_FAULT_INJECT=%s ignored (device-alloc:N, device-call:N, "
                 "device-lost:N or host-alloc:N, N >= 1)\n",
                 s.c_str());
    return p;
  }
  p.armed = true;
  p.at = kind == "device-alloc" ? point::device_alloc
         : kind == "host-alloc" ? point::host_alloc
                                : point::device_call;
  p.n = n;
  p.sticky = kind == "device-lost";
  return p;
}

const plan the_plan = read_plan();
std::atomic<long long> counts[3] = {0, 0, 0};

}  // namespace

bool fire(point p) {
  if (!the_plan.armed || p != the_plan.at) return false;
  const long long c = counts[int(p)].fetch_add(1, std::memory_order_relaxed) + 1;
  return the_plan.sticky ? c >= the_plan.n : c == the_plan.n;
}

}  // namespace cnc::fault
