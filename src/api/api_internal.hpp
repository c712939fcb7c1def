// What the files of the C API boundary (api*.cpp) share: the thread's current context, the
// guard every entry point runs its body in, and the checks of state and arguments that turn a
// bad call into a status code and a message "cncCall(arg=value, ...): reason".
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <string>

#include "api/context.hpp"
#include "cnc.h"
#include "util/error.hpp"

namespace cnc::api {

// Read on every call: the build gives the api*.cpp files TLS descriptors (CMakeLists.txt), which
// make the read a few instructions instead of a __tls_get_addr call, dlopen'ed or not
// (initial-exec TLS would be cheaper still but fails to load from Python: the library's TLS block
// is too big). Defined in api.cpp; constinit lets the other files read it directly (no TLS
// wrapper call).
extern thread_local constinit context* tls_current __attribute__((visibility("hidden")));
extern thread_local std::string tls_no_context_message __attribute__((visibility("hidden")));

// Formats the "(args): reason" tail of an error message.
[[noreturn]] __attribute__((format(printf, 2, 3))) void fail(int status, const char* fmt, ...);

// Inlined into each entry point: the per-entry calls then keep their arguments in registers.
template <class F>
__attribute__((always_inline)) inline CNCstatus guarded(const char* call, F&& body) {
  context* c = tls_current;
  if (!c) {
    tls_no_context_message =
        std::string(call) + ": no current context on this thread (cncMakeCurrent)";
    return CNC_ERR_NO_CONTEXT;
  }
  try {
    body(*c);
    return CNC_OK;
  } catch (const error& e) {
    return c->fail(e.status(), call + std::string(e.what()));
  } catch (const std::bad_alloc&) {
    return c->fail(CNC_ERR_OUT_OF_MEMORY, call + std::string(": out of memory"));
  } catch (const std::exception& e) {
    return c->fail(CNC_ERR_INTERNAL, call + std::string(": internal error: ") + e.what());
  }
}

inline const char* state_name(int s) {
  static const char* names[] = {
      "INITIAL", "SYSTEM",        "MATRIX", "ROW", "MATRIX_CONSTRUCTED", "SYSTEM_CONSTRUCTED",
      "SOLVED",  "MATRIX_PATTERN"};
  return s >= CNC_STATE_INITIAL && s <= CNC_STATE_MATRIX_PATTERN ? names[s - CNC_STATE_INITIAL]
                                                                 : "?";
}

inline void need_state(const context& c, const char* args, std::initializer_list<int> allowed) {
  for (int s : allowed)
    if (c.state == s) return;
  std::string list;
  for (int s : allowed) list += std::string(list.empty() ? "" : " or ") + state_name(s);
  fail(CNC_ERR_STATE, "(%s): not allowed in state %s (needs %s)", args, state_name(c.state),
       list.c_str());
}

inline void need_finite(double v, const char* what, const char* args) {
  if (!std::isfinite(v)) fail(CNC_ERR_NOT_FINITE, "(%s): %s is not finite", args, what);
}

inline void need_variable(const context& c, CNCuint i, const char* args) {
  if (i >= CNCuint(c.n))
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): variable index %u >= CNC_NB_VARIABLES=%d", args, i,
         c.n);
}

inline void need_system(const context& c, CNCuint k, const char* args) {
  if (k >= CNCuint(c.k))
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): system index %u >= CNC_NB_SYSTEMS=%d", args, k, c.k);
}

const int solving_states[] = {CNC_STATE_INITIAL, CNC_STATE_SYSTEM, CNC_STATE_MATRIX_CONSTRUCTED,
                              CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED};

inline bool is_one_of(int v, std::initializer_list<int> set) {
  for (int s : set)
    if (v == s) return true;
  return false;
}

// A new matrix version (cncEnd(CNC_MATRIX), cncSolveCSR): unique in the process.
std::uint64_t next_version();

}  // namespace cnc::api
