// Device enumeration, shared contexts and the program cache (see cl_runtime.hpp).
#include "backends/opencl/cl_runtime.hpp"

#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "backends/opencl/cl_error.hpp"
#include "cnc.h"
#include "cnc_opencl_kernels.h"  // generated from kernels/ by cmake/embed_kernels.cmake
#include "util/error.hpp"

namespace cnc::ocl {
namespace {

std::string platform_string(const api& cl, cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  if (cl.GetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (cl.GetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

std::string device_string(const api& cl, cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (cl.GetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  if (cl.GetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return "";
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

template <typename T>
T device_value(const api& cl, cl_device_id d, cl_device_info what, T fallback) {
  T v{};
  return cl.GetDeviceInfo(d, what, sizeof v, &v, nullptr) == CL_SUCCESS ? v : fallback;
}

// The process-lifetime caches of contexts and built programs. Never destroyed: a static map's
// destructor would run before LeakSanitizer's exit check and leave the OpenCL objects it held
// unreachable (reported as leaks), and releasing them at exit is fragile (the ICD may already be
// unloaded). Held by a pointer in static storage, they stay reachable until the process ends.
struct runtime_caches {
  std::mutex mutex;
  std::map<cl_device_id, cl_context> contexts;
  std::map<std::pair<cl_device_id, std::string>, cl_program> programs;
};

runtime_caches& caches() {
  static runtime_caches* const c = new runtime_caches;
  return *c;
}

}  // namespace

namespace {

std::vector<device_info> enumerate_devices(const api& cl, std::string& why) {
  std::vector<device_info> out;
  cl_uint np = 0;
  cl_int err = cl.GetPlatformIDs(0, nullptr, &np);
  if (err != CL_SUCCESS || np == 0) {
    why = err == -1001 || np == 0 ? "no OpenCL platform is installed (CL_PLATFORM_NOT_FOUND_KHR)"
                                  : std::string("clGetPlatformIDs failed: ") + error_name(err);
    return out;
  }
  std::vector<cl_platform_id> platforms(np);
  if ((err = cl.GetPlatformIDs(np, platforms.data(), nullptr)) != CL_SUCCESS) {
    why = std::string("clGetPlatformIDs failed: ") + error_name(err);
    return out;
  }
  int index = 0;
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    if (cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ids(nd);
    if (cl.GetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) {
      if (!device_value<cl_bool>(cl, id, CL_DEVICE_AVAILABLE, CL_FALSE)) continue;
      device_info d;
      d.global_index = index++;
      d.platform = p;
      d.id = id;
      d.name = device_string(cl, id, CL_DEVICE_NAME);
      d.platform_name = platform_string(cl, p, CL_PLATFORM_NAME);
      d.gpu = (device_value<cl_device_type>(cl, id, CL_DEVICE_TYPE, 0) & CL_DEVICE_TYPE_GPU) != 0;
      d.fp64 = device_value<cl_device_fp_config>(cl, id, CL_DEVICE_DOUBLE_FP_CONFIG, 0) != 0 ||
               device_string(cl, id, CL_DEVICE_EXTENSIONS).find("cl_khr_fp64") != std::string::npos;
      d.compute_units = device_value<cl_uint>(cl, id, CL_DEVICE_MAX_COMPUTE_UNITS, 1);
      d.max_work_group = device_value<size_t>(cl, id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
      d.local_mem = device_value<cl_ulong>(cl, id, CL_DEVICE_LOCAL_MEM_SIZE, 0);
      d.max_alloc = device_value<cl_ulong>(cl, id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
      out.push_back(std::move(d));
    }
  }
  if (out.empty()) why = "OpenCL platforms are installed but none offers an available device";
  return out;
}

}  // namespace

std::vector<device_info> list_devices(const api& cl, std::string& why) {
  // Enumerated once per process, under the static-initialisation lock: ICD loaders and PoCL
  // crashed, or found no device, when several threads enumerated at once. The list (ids that
  // stay valid for the process) is then shared.
  struct listing {
    std::vector<device_info> devices;
    std::string why;
  };
  static const listing once = [&cl] {
    listing l;
    l.devices = enumerate_devices(cl, l.why);
    return l;
  }();
  if (once.devices.empty()) why = once.why;
  return once.devices;
}

cl_context shared_context(const api& cl, const device_info& dev) {
  runtime_caches& cache = caches();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto& contexts = cache.contexts;
  auto it = contexts.find(dev.id);
  if (it != contexts.end()) return it->second;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(dev.platform), 0};
  cl_int err = CL_SUCCESS;
  cl_context ctx = cl.CreateContext(props, 1, &dev.id, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  contexts.emplace(dev.id, ctx);
  return ctx;
}

cl_program get_program(const api& cl, const device_info& dev, const std::string& options) {
  cl_context ctx = shared_context(cl, dev);
  runtime_caches& cache = caches();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto& programs = cache.programs;
  auto key = std::make_pair(dev.id, options);
  auto it = programs.find(key);
  if (it != programs.end()) return it->second;

  const char* sources[] = CNC_OPENCL_SOURCES;
  cl_int err = CL_SUCCESS;
  cl_program prog =
      cl.CreateProgramWithSource(ctx, sizeof sources / sizeof sources[0], sources, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  err = cl.BuildProgram(prog, 1, &dev.id, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t size = 0;
    std::string log;
    if (cl.GetProgramBuildInfo(prog, dev.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) ==
            CL_SUCCESS &&
        size > 1) {
      log.resize(size);
      cl.GetProgramBuildInfo(prog, dev.id, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
      if (log.size() > 6000) log = log.substr(0, 6000) + "\n[build log truncated]";
    }
    cl.ReleaseProgram(prog);
    throw error(CNC_ERR_DEVICE, std::string("OpenCL: building the kernels for ") + dev.name +
                                    " with options '" + options + "' failed: " + error_name(err) +
                                    "\nbuild log:\n" + log);
  }
  programs.emplace(std::move(key), prog);
  return prog;
}

void read_now(const api& cl, cl_command_queue q, cl_mem m, std::size_t bytes, void* dst) {
  cl_event ev = nullptr;
  check(cl.EnqueueReadBuffer(q, m, CL_FALSE, 0, bytes, dst, 0, nullptr, &ev),
        "clEnqueueReadBuffer");
  cl_int err = cl.Flush(q), status = CL_QUEUED;
  while (err == CL_SUCCESS) {
    err = cl.GetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
    if (err != CL_SUCCESS || status <= CL_COMPLETE) break;  // negative: the command failed
    std::this_thread::yield();
  }
  cl.ReleaseEvent(ev);
  check(err, "waiting for a read");
  if (status < 0) throw_error(status, "clEnqueueReadBuffer (execution)");
}

}  // namespace cnc::ocl
