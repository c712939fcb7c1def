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
//  - hot:   per-entry assembly calls. The thread that assembles (`context::assembler`) runs them
//    with no atomic read-modify-write, which would cost as much as the call: it marks the call in
//    `context::in_hot` and checks it still assembles. Another thread takes the assembly over in a
//    write-like entry (claim_assembly): it names itself, makes every thread's marks visible with
//    a process-wide fence (membarrier) and backs off if the assembler is inside a call. Where the
//    fence is unavailable, hot calls enter as write calls. The unlocked path is OFF for now
//    (`fast_assembly` is false, api.cpp says why): hot calls enter as write calls.
//  - read:  getters; several threads may read at once (counted in `context::readers`).
enum class access { write, hot, read };

// The refusal of a call that found the context in use by another thread: CNC_ERR_STATE, not
// recorded in the context (whose error fields belong to the thread using it), only in this
// thread's last message (cncGetLastErrorMessage).
CNCstatus refuse_busy(context* c, const char* call);
// Whether hot calls may take their fast path (the process-wide fence is available).
extern const bool fast_assembly __attribute__((visibility("hidden")));
// Makes the calling thread (holding `user`) the assembler; false when the current assembler is
// inside a hot call (then nothing changed).
bool claim_assembly(context* c, const void* me);

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
    // context (both sequentially consistent): one of the two always sees the other.
    const void* assembler = c->assembler.load(std::memory_order_relaxed);
    if (c->readers.load(std::memory_order_seq_cst) != 0 ||
        (assembler && assembler != me && !claim_assembly(c, me))) {
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
  if constexpr (A == access::hot) {
    if (fast_assembly && c->assembler.load(std::memory_order_relaxed) == me) {
      c->in_hot.store(me, std::memory_order_relaxed);
      // A compiler barrier only: a thread taking the assembly over fences every CPU.
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (c->assembler.load(std::memory_order_relaxed) == me) {
        const CNCstatus s = run_body(c, call, body);
        c->in_hot.store(nullptr, std::memory_order_release);
        return s;
      }
      c->in_hot.store(nullptr, std::memory_order_release);  // a taker reading it syncs
    }
  } else if constexpr (A == access::read) {
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
