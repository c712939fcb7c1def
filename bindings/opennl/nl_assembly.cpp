// OpenNL's assembly: nlBegin/nlEnd, rows buffered until nlEnd(NL_ROW) and sent to cnc (row
// scaling, NL_NORMALIZE_ROWS, right-hand sides), coefficients, the matrix pattern as a size hint.
#include <cnc.h>
#include <cnc_nl.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "nl_internal.hpp"

namespace cnc::nl {
namespace {

void begin_matrix(Context* ctx) {
  if (ctx->locked.size() != ctx->n) ctx->locked.assign(ctx->n, 0);
  if (ctx->buffers_enabled) buffers_to_cnc(ctx, false);
  ctx->free_vars.clear();
  for (CNCuint i = 0; i < ctx->n; ++i) {
    if (!ctx->locked[i]) ctx->free_vars.push_back(i);
  }
  if (!ctx->max_iterations_set) {
    // OpenNL's default: 5 iterations per free variable.
    const size_t limit = std::max<size_t>(1, 5 * ctx->free_vars.size());
    ok(ctx, cncSolverParameteri(CNC_MAX_ITERATIONS,
                                static_cast<CNCint>(std::min<size_t>(limit, 0x7fffffff))));
  }
  if (!ok(ctx, cncBegin(CNC_MATRIX))) return;
  ctx->current_row = 0;
  ctx->in_row = false;
  ctx->next_scaling = 1.0;
  ctx->next_rhs.assign(ctx->nb_systems, 0.0);
}

void begin_row(Context* ctx) {
  if (ctx->in_row || state_of() != CNC_STATE_MATRIX) {
    fail(ctx, CNC_ERR_STATE,
         "nlBegin(NL_ROW): allowed only between nlBegin(NL_MATRIX) and "
         "nlEnd(NL_MATRIX), outside a row");
    return;
  }
  ctx->in_row = true;
  ctx->row.clear();
  ctx->row_rhs = ctx->next_rhs;
  ctx->row_rhs.resize(ctx->nb_systems, 0.0);
  ctx->row_scaling = ctx->next_scaling;
}

void end_row(Context* ctx) {
  if (!ctx->in_row) {
    fail(ctx, CNC_ERR_STATE, "nlEnd(NL_ROW): no row was begun");
    return;
  }
  ctx->in_row = false;
  ctx->next_scaling = 1.0;
  std::fill(ctx->next_rhs.begin(), ctx->next_rhs.end(), 0.0);
  double s = ctx->row_scaling;
  if (ctx->normalize_rows) {
    double norm2 = 0.0;
    for (const auto& c : ctx->row) norm2 += c.second * c.second;
    if (norm2 > 0.0) s /= std::sqrt(norm2);
  }
  const CNCuint row_index = ctx->current_row++;
  if (ctx->least_squares) {
    if (!ok(ctx, cncBegin(CNC_ROW))) return;
    for (const auto& c : ctx->row) ok(ctx, cncCoefficient(c.first, s * c.second));
    for (CNCuint k = 0; k < ctx->nb_systems; ++k) {
      if (ctx->row_rhs[k] != 0.0) ok(ctx, cncMultiRightHandSide(k, s * ctx->row_rhs[k]));
    }
    ok(ctx, cncEnd(CNC_ROW));
    return;
  }
  if (row_index >= ctx->free_vars.size()) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("nlEnd(NL_ROW): row %u is one too many: a system that is not least-squares has "
                "one row per free variable (%zu)",
                row_index, ctx->free_vars.size()));
    return;
  }
  const CNCuint var = ctx->free_vars[row_index];
  const double sign = ctx->legacy3 ? -1.0 : 1.0;
  for (const auto& c : ctx->row) ok(ctx, cncAddIJCoefficient(var, c.first, s * c.second));
  for (CNCuint k = 0; k < ctx->nb_systems; ++k) {
    if (ctx->row_rhs[k] != 0.0)
      ok(ctx, cncMultiAddIRightHandSide(var, k, sign * s * ctx->row_rhs[k]));
  }
}

// Sets the right-hand side of system k of the current row (or of the next one).
void row_rhs(Context* ctx, const char* call, CNCuint k, double value) {
  if (k >= ctx->nb_systems) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE, format("%s(k=%u): system index out of range", call, k));
    return;
  }
  if (!std::isfinite(value)) {
    fail(ctx, CNC_ERR_NOT_FINITE, format("%s(value=%g): value is not finite", call, value));
    return;
  }
  if (ctx->in_row) {
    ctx->row_rhs[k] = value;
  } else if (state_of() == CNC_STATE_MATRIX) {
    ctx->next_rhs.resize(ctx->nb_systems, 0.0);
    ctx->next_rhs[k] = value;
  } else {
    fail(ctx, CNC_ERR_STATE, format("%s: allowed only inside nlBegin/nlEnd(NL_MATRIX)", call));
  }
}

void row_scaling(Context* ctx, const char* call, double value) {
  if (!std::isfinite(value)) {
    fail(ctx, CNC_ERR_NOT_FINITE, format("%s(value=%g): value is not finite", call, value));
  } else if (ctx->in_row) {
    ctx->row_scaling = value;  // lenient: OpenNL wants it before nlBegin(NL_ROW)
  } else if (state_of() == CNC_STATE_MATRIX) {
    ctx->next_scaling = value;
  } else {
    fail(ctx, CNC_ERR_STATE, format("%s: allowed only inside nlBegin/nlEnd(NL_MATRIX)", call));
  }
}

}  // namespace
}  // namespace cnc::nl

using namespace cnc::nl;

extern "C" {

void nlBegin(NLenum primitive) {
  Context* ctx = current("nlBegin");
  if (ctx == nullptr) return;
  switch (primitive) {
    case NL_SYSTEM:
      if (ok(ctx, cncBegin(CNC_SYSTEM)) && ctx->locked.size() != ctx->n)
        ctx->locked.assign(ctx->n, 0);
      return;
    case NL_MATRIX:
      begin_matrix(ctx);
      return;
    case NL_ROW:
      begin_row(ctx);
      return;
    case NL_MATRIX_PATTERN:
      if (state_of() != CNC_STATE_SYSTEM || ctx->in_pattern) {
        fail(ctx, CNC_ERR_STATE, "nlBegin(NL_MATRIX_PATTERN): allowed only in the SYSTEM state");
        return;
      }
      ctx->in_pattern = true;
      ctx->pattern_nnz = 0;
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM, format("nlBegin(0x%x): unknown primitive", primitive));
  }
}

void nlEnd(NLenum primitive) {
  Context* ctx = current("nlEnd");
  if (ctx == nullptr) return;
  switch (primitive) {
    case NL_SYSTEM:
      ok(ctx, cncEnd(CNC_SYSTEM));
      return;
    case NL_MATRIX:
      if (ctx->in_row) {
        fail(ctx, CNC_ERR_STATE, "nlEnd(NL_MATRIX): a row is still open (call nlEnd(NL_ROW))");
        return;
      }
      ok(ctx, cncEnd(CNC_MATRIX));
      return;
    case NL_ROW:
      end_row(ctx);
      return;
    case NL_MATRIX_PATTERN:
      if (!ctx->in_pattern) {
        fail(ctx, CNC_ERR_STATE, "nlEnd(NL_MATRIX_PATTERN): no pattern was begun");
        return;
      }
      ctx->in_pattern = false;
      if (ctx->pattern_nnz > 0 && !ctx->least_squares)
        ok(ctx, cncSolverParameteri64(CNC_NNZ_HINT, ctx->pattern_nnz));
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM, format("nlEnd(0x%x): unknown primitive", primitive));
  }
}

void nlSetRowLength(NLuint /*i*/, NLuint n) {  // a size hint: only the total counts
  Context* ctx = current("nlSetRowLength");
  if (ctx == nullptr) return;
  if (!ctx->in_pattern) {
    fail(ctx, CNC_ERR_STATE,
         "nlSetRowLength: allowed only inside nlBegin/nlEnd(NL_MATRIX_PATTERN)");
    return;
  }
  ctx->pattern_nnz += n;  // a size hint only
}

void nlCoefficient(NLuint i, NLdouble value) {
  Context* ctx = current("nlCoefficient");
  if (ctx == nullptr) return;
  if (!ctx->in_row) {
    fail(ctx, CNC_ERR_STATE,
         format("nlCoefficient(i=%u): allowed only inside nlBegin/nlEnd(NL_ROW)", i));
    return;
  }
  if (!check_index(ctx, "nlCoefficient", i, 0)) return;
  if (!std::isfinite(value)) {
    fail(ctx, CNC_ERR_NOT_FINITE,
         format("nlCoefficient(i=%u, value=%g): value is not finite", i, value));
    return;
  }
  ctx->row.emplace_back(i, value);
}

void nlAddIJCoefficient(NLuint i, NLuint j, NLdouble value) {
  Context* ctx = current("nlAddIJCoefficient");
  if (ctx != nullptr) ok(ctx, cncAddIJCoefficient(i, j, value));
}

void nlAddIRightHandSide(NLuint i, NLdouble value) {
  Context* ctx = current("nlAddIRightHandSide");
  if (ctx != nullptr) ok(ctx, cncAddIRightHandSide(i, value));
}

void nlMultiAddIRightHandSide(NLuint i, NLuint k, NLdouble value) {
  Context* ctx = current("nlMultiAddIRightHandSide");
  if (ctx != nullptr) ok(ctx, cncMultiAddIRightHandSide(i, k, value));
}

void nlRightHandSide(NLdouble value) {
  Context* ctx = current("nlRightHandSide");
  if (ctx != nullptr) row_rhs(ctx, "nlRightHandSide", 0, value);
}

void nlMultiRightHandSide(NLuint k, NLdouble value) {
  Context* ctx = current("nlMultiRightHandSide");
  if (ctx != nullptr) row_rhs(ctx, "nlMultiRightHandSide", k, value);
}

void nlRowScaling(NLdouble value) {
  Context* ctx = current("nlRowScaling");
  if (ctx != nullptr) row_scaling(ctx, "nlRowScaling", value);
}

void nlRowParameterd(NLenum pname, NLdouble param) {
  Context* ctx = current("nlRowParameterd");
  if (ctx == nullptr) return;
  if (pname == NL_RIGHT_HAND_SIDE) {
    row_rhs(ctx, "nlRowParameterd(NL_RIGHT_HAND_SIDE)", 0, param);
  } else if (pname == NL_ROW_SCALING) {
    row_scaling(ctx, "nlRowParameterd(NL_ROW_SCALING)", param);
  } else {
    fail(ctx, CNC_ERR_INVALID_ENUM, format("nlRowParameterd(0x%x): unknown row parameter", pname));
  }
}

void nlRowParameteri(NLenum pname, NLint param) { nlRowParameterd(pname, param); }

}  // extern "C"
