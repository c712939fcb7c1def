// Run-time loading of the OpenCL ICD loader (see cl_api.hpp).
#include "backends/opencl/cl_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "util/environment.hpp"

namespace cnc::ocl {
namespace {

struct loaded {
  api table{};
  bool ok = false;
  std::string why;
};

template <typename F>
bool resolve(void* lib, const char* name, F& fn, std::string& why) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) why = std::string("the OpenCL loader lacks ") + name;
  return fn != nullptr;
}

loaded open_loader() {
  loaded l;
  void* lib = nullptr;
  const std::optional<std::string> chosen = env::text(env::var::opencl_library);
  if (const char* path = chosen ? chosen->c_str() : nullptr) {
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) l.why = std::string("cannot load the OpenCL loader ") + path + ": " + dlerror();
  } else {
    for (const char* name : {"libOpenCL.so.1", "libOpenCL.so"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
    }
    if (!lib) l.why = "no OpenCL loader (libOpenCL.so.1) on this machine";
  }
  if (!lib) return l;
  api& a = l.table;
  std::string& w = l.why;
  l.ok = resolve(lib, "clGetPlatformIDs", a.GetPlatformIDs, w) &&
         resolve(lib, "clGetPlatformInfo", a.GetPlatformInfo, w) &&
         resolve(lib, "clGetDeviceIDs", a.GetDeviceIDs, w) &&
         resolve(lib, "clGetDeviceInfo", a.GetDeviceInfo, w) &&
         resolve(lib, "clCreateContext", a.CreateContext, w) &&
         resolve(lib, "clCreateCommandQueue", a.CreateCommandQueue, w) &&
         resolve(lib, "clReleaseCommandQueue", a.ReleaseCommandQueue, w) &&
         resolve(lib, "clCreateBuffer", a.CreateBuffer, w) &&
         resolve(lib, "clReleaseMemObject", a.ReleaseMemObject, w) &&
         resolve(lib, "clEnqueueWriteBuffer", a.EnqueueWriteBuffer, w) &&
         resolve(lib, "clEnqueueReadBuffer", a.EnqueueReadBuffer, w) &&
         resolve(lib, "clEnqueueCopyBuffer", a.EnqueueCopyBuffer, w) &&
         resolve(lib, "clEnqueueFillBuffer", a.EnqueueFillBuffer, w) &&
         resolve(lib, "clEnqueueMapBuffer", a.EnqueueMapBuffer, w) &&
         resolve(lib, "clEnqueueUnmapMemObject", a.EnqueueUnmapMemObject, w) &&
         resolve(lib, "clWaitForEvents", a.WaitForEvents, w) &&
         resolve(lib, "clReleaseEvent", a.ReleaseEvent, w) &&
         resolve(lib, "clGetEventInfo", a.GetEventInfo, w) &&
         resolve(lib, "clGetEventProfilingInfo", a.GetEventProfilingInfo, w) &&
         resolve(lib, "clCreateProgramWithSource", a.CreateProgramWithSource, w) &&
         resolve(lib, "clBuildProgram", a.BuildProgram, w) &&
         resolve(lib, "clGetProgramBuildInfo", a.GetProgramBuildInfo, w) &&
         resolve(lib, "clReleaseProgram", a.ReleaseProgram, w) &&
         resolve(lib, "clCreateKernel", a.CreateKernel, w) &&
         resolve(lib, "clReleaseKernel", a.ReleaseKernel, w) &&
         resolve(lib, "clSetKernelArg", a.SetKernelArg, w) &&
         resolve(lib, "clGetKernelWorkGroupInfo", a.GetKernelWorkGroupInfo, w) &&
         resolve(lib, "clEnqueueNDRangeKernel", a.EnqueueNDRangeKernel, w) &&
         resolve(lib, "clFlush", a.Flush, w) && resolve(lib, "clFinish", a.Finish, w);
  // The library stays open even on failure: closing an ICD loader can run its destructors twice.
  return l;
}

}  // namespace

const api* load_api(std::string& why) {
  static const loaded l = open_loader();  // thread-safe one-time initialization
  if (!l.ok) {
    why = l.why;
    return nullptr;
  }
  return &l.table;
}

}  // namespace cnc::ocl
