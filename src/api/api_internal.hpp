// What the files of the C API boundary (api*.cpp) share: the thread's current context, the
// guard every entry point runs its body in, and the checks of state and arguments that turn a
// bad call into a status code and a message "cncCall(arg=value, ...): reason".
#pragma once

#include <atomic>
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

// One context used from several threads: each call either runs alone or, when it meets a call of
// another thread on the same context, is refused with CNC_ERR_STATE (nothing changed). Threads
// may take turns (assemble on a worker, solve on the main thread). How each entry point enters:
//  - write: takes the context for the call (compare-exchange of `context::user`).
//  - hot:   per-entry assembly calls; they enter as write calls (one compare-exchange). An unlocked
//    path for the assembling thread, with one mark slot shared by every thread, could let two
//    calls in at once (ThreadSanitizer caught it in test_context_threads); it was switched off
//    and then removed as dead code. An unlocked path needs a mark per thread.
//  - read:  getters; several threads may read at once (counted in `context::readers`).
enum class access { write, hot, read };

// The refusal of a call that found the context in use by another thread: CNC_ERR_STATE, not
// recorded in the context (whose error fields belong to the thread using it), only in this
// thread's last message (cncGetLastErrorMessage).
CNCstatus refuse_busy(context* c, const char* call);

inline bool is_assembly_state(int s) {
  return s == CNC_STATE_SYSTEM || s == CNC_STATE_MATRIX || s == CNC_STATE_ROW ||
         s == CNC_STATE_MATRIX_CONSTRUCTED || s == CNC_STATE_MATRIX_PATTERN;
}

// The status of the exception being handled, recorded in the context (a std::length_error is a
// size past what can be allocated: CNC_ERR_OUT_OF_MEMORY). shared: called by one of several
// concurrent readers, which record it only if no other is recording one.
CNCstatus record_failure(context* c, const char* call, bool shared);

template <class F>
__attribute__((always_inline)) inline CNCstatus run_body(context* c, const char* call, F&& body,
                                                         bool shared = false) {
  try {
    body(*c);
    return CNC_OK;
  } catch (...) {
    return record_failure(c, call, shared);
  }
}

// A call that has the context to itself (write calls, and the others when they must).
template <class F>
CNCstatus exclusive(context* c, const void* me, const char* call, F&& body) {
  const bool reentrant = c->user.load(std::memory_order_relaxed) == me;  // from a callback
  if (!reentrant) {
    const void* expected = nullptr;
    if (!c->user.compare_exchange_strong(expected, me, std::memory_order_seq_cst))
      return refuse_busy(c, call);
    // A reader announces itself before it looks for a writer; this looks after taking the
    // context (both sequentially consistent): one of the two always sees the other. Every call
    // holds `user`, so another thread's assembly is in no call now: this one takes it over.
    if (c->readers.load(std::memory_order_seq_cst) != 0) {
      c->user.store(nullptr, std::memory_order_release);
      return refuse_busy(c, call);
    }
  }
  const CNCstatus s = run_body(c, call, body);
  if (!reentrant) {
    const void* assembler = is_assembly_state(c->state) ? me : nullptr;
    if (c->assembler.load(std::memory_order_relaxed) != assembler)
      c->assembler.store(assembler, std::memory_order_relaxed);
    c->user.store(nullptr, std::memory_order_release);
  }
  return s;
}

// Inlined into each entry point: the per-entry calls then keep their arguments in registers.
template <access A = access::write, class F>
__attribute__((always_inline)) inline CNCstatus guarded(const char* call, F&& body) {
  context* c = tls_current;
  if (!c) {
    tls_no_context_message =
        std::string(call) + ": no current context on this thread (cncMakeCurrent)";
    return CNC_ERR_NO_CONTEXT;
  }
  const void* me = &tls_current;  // the thread's identity: its TLS slot's address, at hand
  if constexpr (A == access::read) {
    const void* assembler = c->assembler.load(std::memory_order_relaxed);
    if (!assembler || assembler == me) {
      c->readers.fetch_add(1, std::memory_order_seq_cst);
      const void* user = c->user.load(std::memory_order_seq_cst);
      if (user && user != me) {
        c->readers.fetch_sub(1, std::memory_order_release);
        return refuse_busy(c, call);
      }
      const CNCstatus s = run_body(c, call, body, true);
      c->readers.fetch_sub(1, std::memory_order_release);
      return s;
    }
  }
  return exclusive(c, me, call, body);
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

// The checks the CSR solve calls share (pointers, state, sizes), in api_solve.cpp.
void check_csr_call(context& c, const char* args, CNCuint n, const void* row_ptr,
                    const void* col_idx, const void* values, CNCint base, CNCuint nrhs,
                    const void* b, const void* x);

}  // namespace cnc::api
