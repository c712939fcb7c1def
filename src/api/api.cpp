// The C API boundary: every cnc* entry point checks the current context, the state and its
// arguments, runs the C++ core inside one try/catch, and turns every failure into a status code
// with a message "cncCall(arg=value, ...): reason" (sticky first error per context).
//
// This file holds the thread's current context, the contexts themselves, errors, callbacks and
// the version; the guard and the checks are in api_internal.hpp, and the entry points by topic in
// api_parameters.cpp, api_system.cpp, api_assembly.cpp and api_solve.cpp.
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "backends/registry.hpp"
#include "cnc.h"
#include "direct/direct.hpp"
#include "eigen/arpack.hpp"
#include "util/error.hpp"

using cnc::context;
using cnc::error;
using namespace cnc::api;

namespace cnc::api {

// The thread's current context, and the message of a call made without one (api_internal.hpp).
constinit thread_local context* tls_current = nullptr;
thread_local std::string tls_no_context_message;
// The message of this thread's last failed call, and its context: cncGetLastErrorMessage reads
// it without touching a context another thread may be using.
constinit thread_local const context* tls_last_context = nullptr;
thread_local std::string tls_last_message;

CNCstatus refuse_busy(context* c, const char* call) {
  tls_last_context = c;
  tls_last_message =
      std::string(call) +
      ": the context is in use by another thread at this moment (a context serves one call at a "
      "time; threads may take turns)";
  return CNC_ERR_STATE;
}

CNCstatus record_failure(context* c, const char* call, bool shared) {
  int status = CNC_ERR_INTERNAL;
  std::string message = call;
  try {
    throw;
  } catch (const error& e) {
    status = e.status();
    // Messages of the C API's checks start "(args): ..." or ": ..."; deeper ones (a backend's)
    // start with their own subject.
    const char* what = e.what();
    if (what[0] != '(' && what[0] != ':' && what[0] != '\0') message += ": ";
    message += what;
  } catch (const std::bad_alloc&) {
    status = CNC_ERR_OUT_OF_MEMORY;
    message += ": out of memory";
  } catch (const std::length_error& e) {
    status = CNC_ERR_OUT_OF_MEMORY;
    message += std::string(": out of memory (a size too large to allocate: ") + e.what() + ")";
  } catch (const std::exception& e) {
    message += std::string(": internal error: ") + e.what();
  } catch (...) {
    message += ": internal error: unknown exception";
  }
  tls_last_context = c;
  tls_last_message = message;
  if (shared && c->recording.exchange(true, std::memory_order_acquire))
    return status;  // another getter is recording: this one's is only the thread's
  c->fail(status, message);
  if (shared) c->recording.store(false, std::memory_order_release);
  return status;
}

// Formats the "(args): reason" tail of an error message.
[[noreturn]] __attribute__((format(printf, 2, 3))) void fail(int status, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  throw error(status, buf);
}

std::uint64_t next_version() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

}  // namespace cnc::api

extern "C" {

// Contexts -------------------------------------------------------------------------------------
CNC_API CNCcontext cncNewContext(void) {
  try {
    return reinterpret_cast<CNCcontext>(new context());
  } catch (...) {
    return nullptr;
  }
}

CNC_API void cncDeleteContext(CNCcontext ctx) {
  auto* c = reinterpret_cast<context*>(ctx);
  if (!c) return;
  if (tls_current == c) tls_current = nullptr;
  if (tls_last_context == c) tls_last_context = nullptr;
  delete c;
}

CNC_API CNCstatus cncMakeCurrent(CNCcontext ctx) {
  tls_current = reinterpret_cast<context*>(ctx);
  return CNC_OK;
}

CNC_API CNCcontext cncGetCurrent(void) { return reinterpret_cast<CNCcontext>(tls_current); }

// Errors, callbacks, version --------------------------------------------------------------------
CNC_API CNCstatus cncGetError(void) {
  context* c = tls_current;
  return c ? c->first_error : CNC_ERR_NO_CONTEXT;
}
CNC_API const char* cncGetErrorMessage(void) {
  context* c = tls_current;
  return c ? c->first_message.c_str() : tls_no_context_message.c_str();
}
CNC_API const char* cncGetLastErrorMessage(void) {
  context* c = tls_current;
  if (c && tls_last_context == c) return tls_last_message.c_str();
  return c ? c->last_message.c_str() : tls_no_context_message.c_str();
}
CNC_API CNCstatus cncClearError(void) {
  return guarded("cncClearError", [&](context& c) {
    if (tls_last_context == &c) tls_last_message.clear();
    c.first_error = CNC_OK;
    c.first_message.clear();
    c.last_message.clear();
  });
}
CNC_API CNCstatus cncSetLogCallback(CNClogCallback cb, void* user) {
  return guarded("cncSetLogCallback", [&](context& c) { c.log_cb = cb, c.log_data = user; });
}
CNC_API CNCstatus cncSetProgressCallback(CNCprogressCallback cb, void* user) {
  return guarded("cncSetProgressCallback",
                 [&](context& c) { c.progress_cb = cb, c.progress_data = user; });
}
CNC_API void cncGetVersion(int* major, int* minor, int* patch) {
  int v[3] = {0, 0, 0};
  std::sscanf(CNC_VERSION_STRING_BUILD, "%d.%d.%d", &v[0], &v[1], &v[2]);
  if (major) *major = v[0];
  if (minor) *minor = v[1];
  if (patch) *patch = v[2];
}
CNC_API const char* cncVersionString(void) { return CNC_VERSION_STRING_BUILD; }

CNC_API CNCboolean cncBackendAvailable(CNCenum kind) {
  if (kind != CNC_BACKEND_CPU && kind != CNC_BACKEND_OPENCL && kind != CNC_BACKEND_CUDA)
    return CNC_FALSE;
  try {
    std::string why;
    cnc::backend_options o;
    o.threads = 1;
    return cnc::make_backend(kind, o, why) ? CNC_TRUE : CNC_FALSE;
  } catch (...) {
    return CNC_FALSE;
  }
}

}  // extern "C"

namespace {

thread_local std::string tls_device_name;

// A failure of a call that needs no context: its message is this thread's last one, read by
// cncGetLastErrorMessage with or without a current context.
CNCstatus context_free_failure(CNCstatus status, const std::string& message) {
  tls_last_context = tls_current;
  tls_last_message = message;
  tls_no_context_message = message;
  return status;
}

// The devices of `kind`, or a failure status (an unknown kind, an exception).
CNCstatus devices_of(const char* call, CNCenum kind, std::vector<std::string>& out) {
  if (kind != CNC_BACKEND_CPU && kind != CNC_BACKEND_OPENCL && kind != CNC_BACKEND_CUDA)
    return context_free_failure(CNC_ERR_INVALID_ENUM,
                                std::string(call) + "(backend=" + std::to_string(kind) +
                                    "): not CNC_BACKEND_CPU, _OPENCL or _CUDA");
  try {
    std::string why;
    out = kind == CNC_BACKEND_CPU      ? cnc::list_cpu_devices(why)
          : kind == CNC_BACKEND_OPENCL ? cnc::list_opencl_devices(why)
                                       : cnc::list_cuda_devices(why);
    if (out.empty())
      context_free_failure(CNC_OK, std::string(call) + ": no " +
                                       (kind == CNC_BACKEND_CPU      ? "CPU"
                                        : kind == CNC_BACKEND_OPENCL ? "OpenCL"
                                                                     : "CUDA") +
                                       " device: " + why);
    return CNC_OK;
  } catch (const std::bad_alloc&) {
    return context_free_failure(CNC_ERR_OUT_OF_MEMORY, std::string(call) + ": out of memory");
  } catch (const std::exception& e) {
    return context_free_failure(CNC_ERR_DEVICE, std::string(call) + ": " + e.what());
  }
}

}  // namespace

extern "C" {

CNC_API CNCstatus cncGetDeviceCount(CNCenum kind, CNCint* count) {
  if (!count) return context_free_failure(CNC_ERR_NULL_POINTER, "cncGetDeviceCount(count=NULL)");
  std::vector<std::string> devices;
  const CNCstatus s = devices_of("cncGetDeviceCount", kind, devices);
  if (s == CNC_OK) *count = CNCint(devices.size());
  return s;
}

CNC_API CNCstatus cncGetDeviceName(CNCenum kind, CNCint index, const char** name) {
  if (!name) return context_free_failure(CNC_ERR_NULL_POINTER, "cncGetDeviceName(name=NULL)");
  std::vector<std::string> devices;
  const CNCstatus s = devices_of("cncGetDeviceName", kind, devices);
  if (s != CNC_OK) return s;
  if (index < 0 || std::size_t(index) >= devices.size())
    return context_free_failure(CNC_ERR_INDEX_OUT_OF_RANGE,
                                "cncGetDeviceName(index=" + std::to_string(index) +
                                    "): " + std::to_string(devices.size()) + " device(s)");
  try {
    tls_device_name = devices[std::size_t(index)];
  } catch (const std::bad_alloc&) {
    return context_free_failure(CNC_ERR_OUT_OF_MEMORY, "cncGetDeviceName: out of memory");
  }
  *name = tls_device_name.c_str();
  return CNC_OK;
}

CNC_API CNCboolean cncDirectSolverAvailable(CNCenum solver) {
  const std::optional<cnc::direct::method> method = cnc::direct::method_of(solver);
  if (!method) return CNC_FALSE;
  try {
    const cnc::direct::method m = *method;
    std::string why;
    if (cnc::direct::available(m, &why)) return CNC_TRUE;
    context_free_failure(CNC_OK, std::string("cncDirectSolverAvailable: ") + cnc::direct::name(m) +
                                     " is not available: " + why);
  } catch (...) {  // no memory for the message: the answer stands
  }
  return CNC_FALSE;
}

CNC_API CNCboolean cncEigenSolverAvailable(void) {
  try {
    std::string why;
    if (cnc::eigen::available(&why)) return CNC_TRUE;
    context_free_failure(CNC_OK, "cncEigenSolverAvailable: ARPACK is not available: " + why);
  } catch (...) {  // no memory for the message: the answer stands
  }
  return CNC_FALSE;
}

}  // extern "C"
