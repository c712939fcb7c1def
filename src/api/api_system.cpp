// The C API's system life cycle (cncBegin/cncEnd of every primitive) and its variables: values,
// locks.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>

#include "api/api_internal.hpp"
#include "api/cnc_internal.h"
#include "api/context.hpp"
#include "cnc.h"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/timer.hpp"

using cnc::context;
using namespace cnc::api;

extern "C" {

// Life cycle -----------------------------------------------------------------------------------
// A row's begin and end are hot assembly calls (api_internal.hpp): once per row.
static void begin(context& c, CNCenum prim) {
  char args[48];
  std::snprintf(args, sizeof args, "primitive=0x%x", prim);
  switch (prim) {
    case CNC_SYSTEM: {
      need_state(c, args, {CNC_STATE_INITIAL, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
      if (c.n <= 0) fail(CNC_ERR_INVALID_VALUE, "(%s): set CNC_NB_VARIABLES first", args);
      const std::size_t size = std::size_t(c.n) * std::size_t(c.k);
      if (c.values.size() != size) {
        try {  // checked before the pages are touched: Linux grants any size, then kills
          cnc::memory::reserve(cnc::memory::variables(c.n, c.k), [&] {
            return "the variables (n = " + std::to_string(c.n) + ", " + std::to_string(c.k) +
                   " system(s): 8 bytes a value, 1 a lock)";
          });
        } catch (const cnc::error& e) {
          fail(e.status(), "(%s)%s", args, e.what());
        }
      }
      if (c.values.size() != size) c.values.assign(size, 0.0);
      if (c.locked.size() != std::size_t(c.n)) c.locked.assign(std::size_t(c.n), 0);
      c.state = CNC_STATE_SYSTEM;
      break;
    }
    case CNC_MATRIX:
      need_state(c, args, {CNC_STATE_SYSTEM, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
      c.assembly_start = cnc::now_seconds();
      c.build.begin_matrix(c.n, c.k, c.least_squares, c.normalize_rows, c.locked, c.values,
                           c.nnz_hint, c.threads);
      c.sys = cnc::assembled_system{};
      c.state = CNC_STATE_MATRIX;
      break;
    case CNC_ROW:
      need_state(c, args, {CNC_STATE_MATRIX});
      c.build.begin_row();
      c.state = CNC_STATE_ROW;
      break;
    case CNC_MATRIX_PATTERN:
      need_state(c, args, {CNC_STATE_SYSTEM, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
      if (c.least_squares)
        fail(CNC_ERR_STATE,
             "(%s): pattern-first assembly is not available in least-squares mode "
             "(CNC_LEAST_SQUARES)",
             args);
      c.build.pattern().begin(c.n, c.state);
      c.state = CNC_STATE_MATRIX_PATTERN;
      break;
    default:
      fail(CNC_ERR_INVALID_ENUM, "(%s): not CNC_SYSTEM, CNC_MATRIX, CNC_ROW or CNC_MATRIX_PATTERN",
           args);
  }
}

static void end(context& c, CNCenum prim) {
  char args[48];
  std::snprintf(args, sizeof args, "primitive=0x%x", prim);
  switch (prim) {
    case CNC_ROW: {
      need_state(c, args, {CNC_STATE_ROW});
      c.state = CNC_STATE_MATRIX;
      const cnc::builder::row_end r = c.build.end_row();
      if (r == cnc::builder::row_end::beyond_n)
        fail(CNC_ERR_INDEX_OUT_OF_RANGE,
             "(%s): row %d >= CNC_NB_VARIABLES=%d in plain mode (row dropped)", args,
             c.build.rows_done(), c.n);
      if (r == cnc::builder::row_end::pattern_full)
        fail(CNC_ERR_OVERFLOW,
             "(%s): row %d has no room for its columns in the pattern (row dropped; "
             "cncSetRowLength)",
             args, c.build.rows_done());
      break;
    }
    case CNC_MATRIX: {
      need_state(c, args, {CNC_STATE_MATRIX});
      const double t = cnc::now_seconds();
      c.sys = c.build.end_matrix();
      c.csr_conversion_time = cnc::now_seconds() - t;
      c.stats.assembly = cnc::now_seconds() - c.assembly_start;
      c.matrix_version = next_version();
      c.state = CNC_STATE_MATRIX_CONSTRUCTED;
      break;
    }
    case CNC_SYSTEM:
      need_state(c, args, {CNC_STATE_MATRIX_CONSTRUCTED});
      c.state = CNC_STATE_SYSTEM_CONSTRUCTED;
      break;
    case CNC_MATRIX_PATTERN: {
      need_state(c, args, {CNC_STATE_MATRIX_PATTERN});
      const std::int64_t slots = c.build.pattern().compile(c.threads);
      if (slots > cnc::row_pattern::max_slots)
        fail(CNC_ERR_OVERFLOW, "(%s): the row lengths add up to %lld slots (at most %lld)", args,
             (long long)slots, (long long)cnc::row_pattern::max_slots);
      c.state = c.build.pattern().return_state();
      break;
    }
    default:
      fail(CNC_ERR_INVALID_ENUM, "(%s): not CNC_SYSTEM, CNC_MATRIX, CNC_ROW or CNC_MATRIX_PATTERN",
           args);
  }
}

CNC_API CNCstatus cncBegin(CNCenum prim) {
  if (prim == CNC_ROW) return guarded<access::hot>("cncBegin", [&](context& c) { begin(c, prim); });
  return guarded("cncBegin", [&](context& c) { begin(c, prim); });
}

CNC_API CNCstatus cncEnd(CNCenum prim) {
  if (prim == CNC_ROW) return guarded<access::hot>("cncEnd", [&](context& c) { end(c, prim); });
  return guarded("cncEnd", [&](context& c) { end(c, prim); });
}

// Variables ------------------------------------------------------------------------------------
static const std::initializer_list<int> settable = {CNC_STATE_SYSTEM, CNC_STATE_MATRIX_CONSTRUCTED,
                                                    CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED,
                                                    CNC_STATE_MATRIX_PATTERN};
static const std::initializer_list<int> readable = {CNC_STATE_SYSTEM,
                                                    CNC_STATE_MATRIX,
                                                    CNC_STATE_ROW,
                                                    CNC_STATE_MATRIX_CONSTRUCTED,
                                                    CNC_STATE_SYSTEM_CONSTRUCTED,
                                                    CNC_STATE_SOLVED,
                                                    CNC_STATE_MATRIX_PATTERN};

static CNCstatus set_variable(const char* call, CNCuint i, CNCuint k, double v) {
  return guarded<access::hot>(call, [&](context& c) {
    if (!is_one_of(c.state, settable) || i >= CNCuint(c.n) || k >= CNCuint(c.k) ||
        !std::isfinite(v)) {  // details only when something is wrong: this call is hot
      char args[96];
      std::snprintf(args, sizeof args, "i=%u, k=%u, value=%g", i, k, v);
      need_state(c, args, settable);
      need_variable(c, i, args);
      need_system(c, k, args);
      need_finite(v, "value", args);
    }
    c.values[i + std::size_t(k) * c.n] = v;
  });
}
CNC_API CNCstatus cncMultiSetVariable(CNCuint i, CNCuint k, double v) {
  return set_variable("cncMultiSetVariable", i, k, v);
}
CNC_API CNCstatus cncSetVariable(CNCuint i, double v) {
  return set_variable("cncSetVariable", i, 0, v);
}
static CNCstatus get_variable(const char* call, CNCuint i, CNCuint k, double* v) {
  return guarded<access::read>(call, [&](context& c) {
    if (!v || !is_one_of(c.state, readable) || i >= CNCuint(c.n) || k >= CNCuint(c.k)) {
      char args[96];
      std::snprintf(args, sizeof args, "i=%u, k=%u", i, k);
      if (!v) fail(CNC_ERR_NULL_POINTER, "(%s, value=NULL): value is NULL", args);
      need_state(c, args, readable);
      need_variable(c, i, args);
      need_system(c, k, args);
    }
    *v = c.values[i + std::size_t(k) * c.n];
  });
}
CNC_API CNCstatus cncMultiGetVariable(CNCuint i, CNCuint k, double* v) {
  return get_variable("cncMultiGetVariable", i, k, v);
}
CNC_API CNCstatus cncGetVariable(CNCuint i, double* v) {
  return get_variable("cncGetVariable", i, 0, v);
}

static CNCstatus set_lock(const char* call, CNCuint i, bool lock) {
  return guarded<access::hot>(call, [&](context& c) {
    char args[32];
    std::snprintf(args, sizeof args, "i=%u", i);
    need_state(c, args, {CNC_STATE_SYSTEM});
    need_variable(c, i, args);
    c.locked[i] = lock;
  });
}
CNC_API CNCstatus cncLockVariable(CNCuint i) { return set_lock("cncLockVariable", i, true); }
CNC_API CNCstatus cncUnlockVariable(CNCuint i) { return set_lock("cncUnlockVariable", i, false); }
CNC_API CNCstatus cncVariableIsLocked(CNCuint i, CNCboolean* out) {
  return guarded<access::read>("cncVariableIsLocked", [&](context& c) {
    char args[48];
    std::snprintf(args, sizeof args, "i=%u", i);
    if (!out) fail(CNC_ERR_NULL_POINTER, "(%s, value=NULL): value is NULL", args);
    need_state(c, args, readable);
    need_variable(c, i, args);
    *out = c.locked[i] ? CNC_TRUE : CNC_FALSE;
  });
}

// The assembled system for cnc's bindings (api/cnc_internal.h) -------------------------------
static const std::initializer_list<int> assembled = {
    CNC_STATE_MATRIX_CONSTRUCTED, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED};

CNC_API CNCstatus cncInternalGetSystemCSR(CNCint* n, const CNCint64** row_ptr, const CNCint** col,
                                          const double** val) {
  return guarded<access::read>("cncInternalGetSystemCSR", [&](context& c) {
    if (!n || !row_ptr || !col || !val)
      fail(CNC_ERR_NULL_POINTER, "(n, row_ptr, col, val): none may be NULL");
    need_state(c, "", assembled);
    *n = c.sys.a.n;
    *row_ptr = c.sys.a.row_ptr.data();
    *col = c.sys.a.col.data();
    *val = c.sys.a.val.data();
  });
}

CNC_API CNCstatus cncInternalSetRightHandSide(CNCuint k, const double* b) {
  return guarded("cncInternalSetRightHandSide", [&](context& c) {
    char args[48];
    std::snprintf(args, sizeof args, "k=%u", k);
    if (!b) fail(CNC_ERR_NULL_POINTER, "(%s, b=NULL): b must not be NULL", args);
    need_state(c, args, assembled);
    need_system(c, k, args);
    const std::int32_t nf = c.sys.a.n;
    for (std::int32_t f = 0; f < nf; ++f)
      if (!std::isfinite(b[f]))
        fail(CNC_ERR_NOT_FINITE, "(%s): b[%d]=%g is not finite", args, f, b[f]);
    std::copy(b, b + nf, c.sys.b.begin() + std::ptrdiff_t(k) * nf);
    if (c.state == CNC_STATE_SOLVED) c.state = CNC_STATE_SYSTEM_CONSTRUCTED;
  });
}

}  // extern "C"
