// The C API's per-system statistics (cncGetSystemIntegerv / cncGetSystemDoublev): what the last
// iterative solve reported for each of its right-hand sides (solve_stats' system_* vectors,
// filled by the pipeline from the method's per-system outcome).
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "api/api_internal.hpp"
#include "api/context.hpp"
#include "cnc.h"

using cnc::context;
using namespace cnc::api;

namespace {

void check_system(const context& c, const char* args, CNCuint k, const void* out) {
  if (!out) fail(CNC_ERR_NULL_POINTER, "(%s, value=NULL): value is NULL", args);
  const std::size_t count = c.stats.system_iterations.size();
  if (count == 0)
    fail(CNC_ERR_STATE,
         "(%s): no per-system statistics: no iterative solve yet (the direct solvers report "
         "none)",
         args);
  if (k >= count)
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "(%s): system index >= %zu, the last solve's systems", args,
         count);
}

}  // namespace

extern "C" {

CNC_API CNCstatus cncGetSystemIntegerv(CNCuint k, CNCenum p, CNCint* out) {
  return guarded<access::read>("cncGetSystemIntegerv", [&](context& c) {
    char args[64];
    std::snprintf(args, sizeof args, "k=%u, pname=0x%x", k, p);
    check_system(c, args, k, out);
    if (p == CNC_USED_ITERATIONS)
      *out = CNCint(std::min<std::int64_t>(c.stats.system_iterations[k], INT32_MAX));
    else if (p == CNC_REASON)
      *out = c.stats.system_reasons[k];
    else
      fail(CNC_ERR_INVALID_ENUM, "(%s): CNC_USED_ITERATIONS or CNC_REASON", args);
  });
}

CNC_API CNCstatus cncGetSystemDoublev(CNCuint k, CNCenum p, double* out) {
  return guarded<access::read>("cncGetSystemDoublev", [&](context& c) {
    char args[64];
    std::snprintf(args, sizeof args, "k=%u, pname=0x%x", k, p);
    check_system(c, args, k, out);
    if (p == CNC_ERROR)
      *out = c.stats.system_error[k];
    else if (p == CNC_TRUE_ERROR)
      *out = c.stats.system_true_error[k];
    else if (p == CNC_USED_ITERATIONS)
      *out = double(c.stats.system_iterations[k]);
    else
      fail(CNC_ERR_INVALID_ENUM, "(%s): CNC_ERROR, CNC_TRUE_ERROR or CNC_USED_ITERATIONS", args);
  });
}

}  // extern "C"
