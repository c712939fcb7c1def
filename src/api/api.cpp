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
#include <string>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "backends/registry.hpp"
#include "cnc.h"
#include "util/error.hpp"

using cnc::context;
using cnc::error;
using namespace cnc::api;

namespace cnc::api {

// The thread's current context, and the message of a call made without one (api_internal.hpp).
constinit thread_local context* tls_current = nullptr;
thread_local std::string tls_no_context_message;

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
  return c ? c->last_message.c_str() : tls_no_context_message.c_str();
}
CNC_API CNCstatus cncClearError(void) {
  return guarded("cncClearError", [&](context& c) {
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
