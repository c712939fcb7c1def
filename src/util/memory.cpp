// Available host memory and the check before large allocations (see memory.hpp).
#include "util/memory.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "cnc.h"
#include "util/environment.hpp"
#include "util/error.hpp"

namespace cnc::memory {

namespace {

constexpr std::uint64_t unlimited = UINT64_MAX;
// A cgroup v1 limit at or above this means "no limit" (the kernel writes 2^63 rounded to a page).
constexpr std::uint64_t no_cgroup_limit = std::uint64_t(1) << 62;

// The first number after `key` at the start of a line of a "Key: value" file (kB values scaled to
// bytes), or nothing.
std::optional<std::uint64_t> field(const std::string& text, const char* key) {
  const std::size_t len = std::strlen(key);
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, len, key) == 0) {
      unsigned long long v = 0;
      char unit[8] = {};
      const std::string line = text.substr(at + len, end - at - len);
      if (std::sscanf(line.c_str(), "%*[: \t]%llu %7s", &v, unit) >= 1 ||
          std::sscanf(line.c_str(), "%llu %7s", &v, unit) >= 1)
        return std::uint64_t(v) * (std::strcmp(unit, "kB") == 0 ? 1024 : 1);
    }
    at = end + 1;
  }
  return std::nullopt;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A file holding one number ("max" or unreadable: nothing).
std::optional<std::uint64_t> number_file(const std::string& path) {
  const std::string t = read_file(path);
  unsigned long long v = 0;
  if (t.empty() || std::sscanf(t.c_str(), "%llu", &v) != 1) return std::nullopt;
  return std::uint64_t(v);
}

// limit - usage + reclaimable page cache, the smallest over the cgroup's levels, from `dir` (its
// own folder) up to `root` (the hierarchy's mount point). Levels that do not exist (a cgroup
// namespace shows the process's own cgroup as the root) are skipped.
std::uint64_t cgroup_room(const std::string& root, std::string rel, bool v2) {
  std::uint64_t room = unlimited;
  for (;;) {
    const std::string dir = root + rel;
    const auto limit = number_file(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    const auto usage = number_file(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
    if (limit && usage && *limit < no_cgroup_limit) {
      const std::string stat = read_file(dir + "/memory.stat");
      const std::uint64_t cache =
          field(stat, v2 ? "inactive_file " : "total_inactive_file ").value_or(0);
      const std::uint64_t used = *usage > cache ? *usage - cache : 0;
      room = std::min(room, *limit > used ? *limit - used : 0);
    }
    if (rel.empty() || rel == "/") break;
    rel.erase(rel.find_last_of('/'));
  }
  return room;
}

// The memory cgroup's room (v2 unified hierarchy, else v1's memory controller), or unlimited.
std::uint64_t cgroups_room() {
  std::istringstream lines(read_file("/proc/self/cgroup"));
  std::string line, v2_path, v1_path;
  bool v1 = false;
  while (std::getline(lines, line)) {  // "id:controllers:path"
    const std::size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
    std::istringstream names(controllers);
    for (std::string c; std::getline(names, c, ',');)
      if (c == "memory") v1_path = path, v1 = true;
  }
  if (v1) return cgroup_room("/sys/fs/cgroup/memory", v1_path, false);
  if (!v2_path.empty() && !read_file("/sys/fs/cgroup/cgroup.controllers").empty())
    return cgroup_room("/sys/fs/cgroup", v2_path, true);
  return unlimited;
}

// The soft limit of `resource` minus `used`, or unlimited.
std::uint64_t rlimit_room(int resource, std::optional<std::uint64_t> used) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY || !used) return unlimited;
  return std::uint64_t(r.rlim_cur) > *used ? std::uint64_t(r.rlim_cur) - *used : 0;
}

}  // namespace

host_room host_available() {
  host_room room;
  auto take = [&](std::uint64_t bytes, const char* source) {
    if (bytes < room.bytes) room = host_room{bytes, source};
  };
  if (const auto avail = field(read_file("/proc/meminfo"), "MemAvailable:"))
    take(*avail, "MemAvailable");
  take(cgroups_room(), "the memory cgroup's limit");
  const std::string status = read_file("/proc/self/status");
  take(rlimit_room(RLIMIT_AS, field(status, "VmSize:")), "RLIMIT_AS less the address space in use");
  take(rlimit_room(RLIMIT_DATA, field(status, "VmData:")), "RLIMIT_DATA less the data in use");
  const long long cap = env::integer(env::var::memory_limit_bytes, 0);
  if (cap > 0) {
    const std::uint64_t rss = field(status, "VmRSS:").value_or(0);
    take(std::uint64_t(cap) > rss ? std::uint64_t(cap) - rss : 0,
         "CNC_MEMORY_LIMIT_BYTES less the resident set");
  }
  return room;
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  char buf[48];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%.0f bytes", bytes);
    return buf;
  }
  int u = -1;
  while (bytes >= 1024 && u < 5) bytes /= 1024, ++u;
  std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

void refuse(double bytes, const host_room& room, const std::string& what) {
  throw error(CNC_ERR_OUT_OF_MEMORY,
              ": not enough host memory for " + what + ": " + format_bytes(bytes) + " needed, " +
                  format_bytes(double(room.bytes)) + " available (" + room.limited_by + ")");
}

}  // namespace cnc::memory
