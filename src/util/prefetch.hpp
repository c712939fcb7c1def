// A software prefetch for host loops that wait on scattered loads (a numbering without
// locality): keeps several rows' loads in flight.
#pragma once

namespace cnc {

// GCC drops a loop whose body is only __builtin_prefetch; this one it keeps.
inline void prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace cnc
