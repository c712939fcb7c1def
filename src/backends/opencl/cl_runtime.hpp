// Process-wide OpenCL state shared by every backend instance: the list of devices, one context
// per device, and the built kernel programs, cached per device and build options.
//
// Contexts and programs are created at first use under a mutex and kept for the life of the
// process (built programs are what is expensive; tearing down an ICD at exit is fragile).
// Command queues and kernel objects are not shared: each device_system owns its own, so two
// cnc contexts in two threads never share an object that OpenCL does not make thread-safe.
#pragma once

#include <string>
#include <vector>

#include "backends/opencl/cl_api.hpp"

namespace cnc::ocl {

struct device_info {
  int global_index = 0;  // position over all platforms, in enumeration order
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name, platform_name;
  bool gpu = false;
  bool fp64 = false;
  cl_uint compute_units = 1;
  size_t max_work_group = 1;
  cl_ulong local_mem = 0;
  cl_ulong max_alloc = 0;
};

// Every available device of every platform, enumerated once per process (thread-safe: the
// first callers wait for one enumeration). Empty with `why` set when there is no platform
// (CL_PLATFORM_NOT_FOUND_KHR) or no device.
std::vector<device_info> list_devices(const api& cl, std::string& why);

// The context shared by every cnc object on this device (created on first use).
cl_context shared_context(const api& cl, const device_info& dev);

// The kernel program built for `dev` with these options: built once per process, then cached.
// Throws cnc::error(CNC_ERR_DEVICE) with the build log when the build fails.
cl_program get_program(const api& cl, const device_info& dev, const std::string& options);

// Reads `bytes` of `m` into host memory and returns when they are there. It waits by polling the
// read's event instead of a blocking call: a solver that reads a few scalars per iteration
// (BiCGSTAB, GMRES) cannot afford a driver wait that sleeps.
void read_now(const api& cl, cl_command_queue q, cl_mem m, std::size_t bytes, void* dst);

}  // namespace cnc::ocl
