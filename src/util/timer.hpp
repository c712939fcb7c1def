// Wall-clock seconds for the statistics.
#pragma once

#include <chrono>

namespace cnc {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace cnc
