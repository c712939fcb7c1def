// Host memory that the machine can give this process, and the check made before a large
// allocation. Linux overcommits: a vector of 16 GiB is granted at once and the process is killed
// (SIGKILL, rc 137) while its pages are first touched. cnc therefore compares the bytes a stage
// is about to allocate with what is available, and refuses with CNC_ERR_OUT_OF_MEMORY and the
// numbers instead, before anything changes.
//
// Available = the smallest of:
//   - MemAvailable (/proc/meminfo: free memory plus what the kernel can reclaim, swap excluded);
//   - the memory cgroup's limit minus its usage plus its inactive page cache, at every level of
//     the process's cgroup (v2: memory.max, memory.current; v1: memory.limit_in_bytes,
//     memory.usage_in_bytes);
//   - RLIMIT_AS minus the address space in use (VmSize), RLIMIT_DATA minus VmData;
//   - CNC_MEMORY_LIMIT_BYTES minus the resident set (VmRSS), when that variable is set: a
//     containment and testing knob (it behaves like a cgroup limit on this process alone).
// Allocations below check_min_bytes are not checked: the check reads a few /proc files (tens of
// microseconds), and small ones are not what kills a process.
#pragma once

#include <cstdint>
#include <string>

namespace cnc::memory {

constexpr std::uint64_t check_min_bytes = std::uint64_t(64) << 20;

struct host_room {
  std::uint64_t bytes = UINT64_MAX;  // UINT64_MAX: nothing could be read (no check)
  const char* limited_by = "";       // which of the sources above gave `bytes`
};

// What the process can allocate now (reads /proc and /sys at each call).
host_room host_available();

// "96.0 GiB", "512.0 MiB", "12.0 KiB", "100 bytes".
std::string format_bytes(double bytes);

// Throws cnc::error(CNC_ERR_OUT_OF_MEMORY, ": not enough host memory for <what>: <bytes>
// needed, <room> available (<limited_by>)").
[[noreturn]] void refuse(double bytes, const host_room& room, const std::string& what);

// Before allocating `bytes` bytes of host memory for one stage (all its large arrays together):
// refuses when they are not available. what() names them, with the sizes they come from, e.g.
// "the variables (n = 2147483639, 1 system: 8 bytes a row, and 1 for its lock)"; it is called only
// to refuse.
template <class What>
void reserve(double bytes, What&& what) {
  if (bytes < double(check_min_bytes)) return;
  const host_room room = host_available();
  if (bytes > double(room.bytes)) refuse(bytes, room, what());
}

}  // namespace cnc::memory
