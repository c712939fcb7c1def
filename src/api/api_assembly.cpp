// The C API's matrix assembly: coefficients, rows, right-hand sides, and pattern-first assembly
// (row lengths, then entries into their slots).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "cnc.h"
#include "util/parallel.hpp"

using cnc::context;
using namespace cnc::api;

extern "C" {

// Assembly -------------------------------------------------------------------------------------
CNC_API CNCstatus cncCoefficient(CNCuint j, double v) {
  return guarded<access::hot>("cncCoefficient", [&](context& c) {
    if (c.state != CNC_STATE_ROW) {
      char args[64];
      std::snprintf(args, sizeof args, "j=%u, value=%g", j, v);
      need_state(c, args, {CNC_STATE_ROW});
    }
    if (j >= CNCuint(c.n) || !std::isfinite(v)) {
      char args[64];
      std::snprintf(args, sizeof args, "j=%u, value=%g", j, v);
      need_variable(c, j, args);
      need_finite(v, "value", args);
    }
    c.build.coefficient(std::int32_t(j), v);
  });
}

static CNCstatus row_rhs(const char* call, CNCuint k, double v) {
  return guarded<access::hot>(call, [&](context& c) {
    if (c.state != CNC_STATE_ROW || k >= CNCuint(c.k) || !std::isfinite(v)) {
      char args[64];
      std::snprintf(args, sizeof args, "k=%u, value=%g", k, v);
      need_state(c, args, {CNC_STATE_ROW});
      need_system(c, k, args);
      need_finite(v, "value", args);
    }
    c.build.row_rhs(std::int32_t(k), v);
  });
}
CNC_API CNCstatus cncMultiRightHandSide(CNCuint k, double v) {
  return row_rhs("cncMultiRightHandSide", k, v);
}
CNC_API CNCstatus cncRightHandSide(double v) { return row_rhs("cncRightHandSide", 0, v); }

CNC_API CNCstatus cncRowScaling(double v) {
  return guarded<access::hot>("cncRowScaling", [&](context& c) {
    char args[48];
    std::snprintf(args, sizeof args, "value=%g", v);
    need_state(c, args, {CNC_STATE_ROW});
    need_finite(v, "value", args);
    c.build.row_scaling(v);
  });
}

// Why an entry was refused (cold: the hot paths test everything in one expression).
[[noreturn]] __attribute__((noinline, cold)) static void refuse_entry(const context& c, CNCuint i,
                                                                      CNCuint j, double v) {
  char args[96];
  std::snprintf(args, sizeof args, "i=%u, j=%u, value=%g", i, j, v);
  need_state(c, args, {CNC_STATE_MATRIX});
  need_variable(c, i, args);
  need_variable(c, j, args);
  need_finite(v, "value", args);
  if (!c.build.uses_pattern()) fail(CNC_ERR_INTERNAL, "(%s): entry refused for no reason", args);
  const cnc::row_pattern& p = c.build.pattern();
  fail(CNC_ERR_OVERFLOW,
       "(%s): row %u is full: its %lld pattern slots hold other columns (cncSetRowLength)", args, i,
       (long long)(p.row_end(std::int32_t(i)) - p.row_begin(std::int32_t(i))));
}

CNC_API CNCstatus cncAddIJCoefficient(CNCuint i, CNCuint j, double v) {
  return guarded<access::hot>("cncAddIJCoefficient", [&](context& c) {
    if (c.state == CNC_STATE_MATRIX && i < CNCuint(c.n) && j < CNCuint(c.n) && std::isfinite(v))
        [[likely]] {
      if (c.build.add_ij(std::int32_t(i), std::int32_t(j), v)) [[likely]]
        return;
    }
    refuse_entry(c, i, j, v);
  });
}

CNC_API CNCstatus cncAddIJCoefficients(CNCint64 count, const CNCuint* i, const CNCuint* j,
                                       const double* values) {
  return guarded("cncAddIJCoefficients", [&](context& c) {
    char args[96];
    std::snprintf(args, sizeof args, "count=%lld", (long long)count);
    need_state(c, args, {CNC_STATE_MATRIX});
    if (count < 0) fail(CNC_ERR_INVALID_VALUE, "(%s): count must be >= 0", args);
    if (count == 0) return;
    if (!i || !j || !values)
      fail(CNC_ERR_NULL_POINTER, "(%s): i, j and values must not be NULL", args);
    // Every entry is checked before any is added, so a bad call changes nothing.
    const CNCuint n = CNCuint(c.n);
    const std::int64_t bad = cnc::first_index(
        count, 1 << 16, cnc::host_threads(c.threads),
        [&](std::int64_t e) { return i[e] >= n || j[e] >= n || !std::isfinite(values[e]); });
    if (bad >= 0) {
      std::snprintf(args, sizeof args, "count=%lld, entry %lld: i=%u, j=%u, value=%g",
                    (long long)count, (long long)bad, i[bad], j[bad], values[bad]);
      need_variable(c, i[bad], args);
      need_variable(c, j[bad], args);
      need_finite(values[bad], "value", args);
    }
    const std::int64_t full = c.build.add_ij_many(count, i, j, values);
    if (full >= 0) {
      const cnc::row_pattern& p = c.build.pattern();
      const std::int32_t r = std::int32_t(i[full]);
      fail(CNC_ERR_OVERFLOW,
           "(%s, entry %lld: i=%u, j=%u): row %u is full: its %lld pattern slots hold other "
           "columns (nothing added; cncSetRowLength)",
           args, (long long)full, i[full], j[full], i[full],
           (long long)(p.row_end(r) - p.row_begin(r)));
    }
  });
}

// Pattern-first assembly -----------------------------------------------------------------------
CNC_API CNCstatus cncSetRowLength(CNCuint i, CNCuint length) {
  return guarded<access::hot>("cncSetRowLength", [&](context& c) {
    if (c.state != CNC_STATE_MATRIX_PATTERN || i >= CNCuint(c.n)) {
      char args[64];
      std::snprintf(args, sizeof args, "i=%u, length=%u", i, length);
      need_state(c, args, {CNC_STATE_MATRIX_PATTERN});
      need_variable(c, i, args);
    }
    c.build.pattern().set_length(std::int32_t(i), length);
  });
}

CNC_API CNCstatus cncSetRowLengths(const CNCuint* lengths) {
  return guarded("cncSetRowLengths", [&](context& c) {
    const char* args = lengths ? "lengths" : "lengths=NULL";
    need_state(c, args, {CNC_STATE_MATRIX_PATTERN});
    if (!lengths) fail(CNC_ERR_NULL_POINTER, "(%s): lengths must not be NULL", args);
    c.build.pattern().set_lengths(lengths, c.threads);
  });
}

// Why a slot call was refused. `where` is the row offset (by_offset) or the global slot index.
[[noreturn]] __attribute__((noinline, cold)) static void refuse_slot(const context& c, CNCuint i,
                                                                     CNCuint j, double v,
                                                                     std::int64_t where,
                                                                     bool by_offset) {
  char args[128];
  std::snprintf(args, sizeof args, "i=%u, j=%u, value=%g, %s=%lld", i, j, v,
                by_offset ? "offset" : "index", (long long)where);
  need_state(c, args, {CNC_STATE_MATRIX});
  if (!c.build.uses_pattern())
    fail(CNC_ERR_STATE,
         "(%s): no pattern in use: cncBegin/cncEnd(CNC_MATRIX_PATTERN) before cncBegin(CNC_MATRIX)",
         args);
  need_variable(c, i, args);
  need_variable(c, j, args);
  need_finite(v, "value", args);
  const cnc::row_pattern& p = c.build.pattern();
  const std::int64_t b = p.row_begin(std::int32_t(i)), e = p.row_end(std::int32_t(i));
  if (by_offset && where >= e - b)
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): offset >= row %u's length %lld", args, i,
         (long long)(e - b));
  const std::int64_t s = by_offset ? b + where : where;
  if (s < b || s >= e)
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): index outside row %u's slots [%lld, %lld)", args, i,
         (long long)b, (long long)e);
  fail(CNC_ERR_INVALID_VALUE, "(%s): slot %lld already holds column %d", args, (long long)s,
       p.slot_col(s));
}

// Row i's slot s takes (j, v) when the call is valid: one combined test for the hot path (the
// callers test that v is finite).
static bool slot_call_ok(const context& c, CNCuint i, CNCuint j, double /*v*/, std::int64_t s) {
  const cnc::row_pattern& p = c.build.pattern();
  if (s < p.row_begin(std::int32_t(i)) || s >= p.row_end(std::int32_t(i))) return false;
  const std::int32_t col = p.slot_col(s);
  return col < 0 || col == std::int32_t(j);
}

CNC_API CNCstatus cncSetIJCoefficientAtRowOffset(CNCuint i, CNCuint j, double v, CNCuint offset) {
  return guarded<access::hot>("cncSetIJCoefficientAtRowOffset", [&](context& c) {
    if (c.state == CNC_STATE_MATRIX && c.build.uses_pattern() && i < CNCuint(c.n) &&
        j < CNCuint(c.n) && std::isfinite(v)) [[likely]] {
      const std::int64_t s = c.build.pattern().row_begin(std::int32_t(i)) + std::int64_t(offset);
      if (slot_call_ok(c, i, j, v, s)) [[likely]] {
        c.build.put(std::int32_t(i), std::int32_t(j), v, s, true);
        return;
      }
    }
    refuse_slot(c, i, j, v, std::int64_t(offset), true);
  });
}

CNC_API CNCstatus cncAddIJCoefficientAt(CNCuint i, CNCuint j, double v, CNCint64 index) {
  return guarded<access::hot>("cncAddIJCoefficientAt", [&](context& c) {
    if (c.state == CNC_STATE_MATRIX && c.build.uses_pattern() && i < CNCuint(c.n) &&
        j < CNCuint(c.n) && std::isfinite(v) && slot_call_ok(c, i, j, v, index)) [[likely]] {
      c.build.put(std::int32_t(i), std::int32_t(j), v, index, false);
      return;
    }
    refuse_slot(c, i, j, v, index, false);
  });
}

static CNCstatus add_rhs(const char* call, CNCuint i, CNCuint k, double v) {
  return guarded<access::hot>(call, [&](context& c) {
    if (c.state != CNC_STATE_MATRIX || i >= CNCuint(c.n) || k >= CNCuint(c.k) ||
        !std::isfinite(v)) {
      char args[96];
      std::snprintf(args, sizeof args, "i=%u, k=%u, value=%g", i, k, v);
      need_state(c, args, {CNC_STATE_MATRIX});
      need_variable(c, i, args);
      need_system(c, k, args);
      need_finite(v, "value", args);
    }
    if (!c.locked[i]) c.build.add_rhs(std::int32_t(i), std::int32_t(k), v);
  });
}
CNC_API CNCstatus cncMultiAddIRightHandSide(CNCuint i, CNCuint k, double v) {
  return add_rhs("cncMultiAddIRightHandSide", i, k, v);
}
CNC_API CNCstatus cncAddIRightHandSide(CNCuint i, double v) {
  return add_rhs("cncAddIRightHandSide", i, 0, v);
}

}  // extern "C"
