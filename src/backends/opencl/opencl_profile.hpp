// Kernel times of one OpenCL system, for diagnosis (CNC_OPENCL_PROFILE=1): the queue is created
// with profiling on, every launch keeps its event, and the system's release prints, per launch
// name, the count and the device time (start to end of the kernel) to stderr. Off by default:
// events cost a little per launch and are kept until the system is released.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "backends/opencl/cl_api.hpp"

namespace cnc::ocl {

class kernel_profile {
 public:
  // Whether CNC_OPENCL_PROFILE asks for it (read once per system).
  static bool wanted();
  explicit kernel_profile(const api& cl) : cl_(cl) {}
  kernel_profile(const kernel_profile&) = delete;
  kernel_profile& operator=(const kernel_profile&) = delete;
  ~kernel_profile();
  // Where the next launch named `what` (a string literal) puts its event; nullptr past the cap.
  cl_event* next(const char* what);
  // Waits for the queue, prints the table (`title` first) and releases the events.
  void report(cl_command_queue q, const char* title);

 private:
  const api& cl_;
  std::vector<std::pair<const char*, cl_event>> events_;
};

}  // namespace cnc::ocl
