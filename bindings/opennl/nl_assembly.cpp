// OpenNL's assembly: nlBegin/nlEnd, rows buffered until nlEnd(NL_ROW) and sent to cnc (row
// scaling, NL_NORMALIZE_ROWS, right-hand sides), coefficients, and OpenNL's CRS matrix pattern
// with its slot positions (nlAddIJCoefficient's result, nlAddIJCoefficientAt, ...).
#include <cnc.h>
#include <cnc_nl.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <new>
#include <vector>

#include "nl_internal.hpp"

namespace cnc::nl {
namespace {

constexpr CNCuint kUnused = ~CNCuint(0);
constexpr NLulong kNoPosition = ~NLulong(0);  // OpenNL's (NLulong)(-1): no pattern

}  // namespace

// OpenNL's nlCRSMatrixAdd on the pattern: the slot of row i that holds j, else its first unused
// one. A symmetric pattern keeps the lower triangle (j > i is dropped, as OpenNL does).
NLulong add_entry(Context* ctx, const char* call, CNCuint i, CNCuint j, double value) {
  if (ctx->eigen && !record_eigen_entry(ctx, call, i, j, value)) return kNoPosition;
  if (!ctx->has_pattern) {
    ok(ctx, cncAddIJCoefficient(i, j, value));
    return kNoPosition;
  }
  if (i >= ctx->n || j >= ctx->n) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(i=%u, j=%u): index out of range (NL_NB_VARIABLES = %u)", call, i, j, ctx->n));
    return kNoPosition;
  }
  if (!std::isfinite(value)) {
    fail(ctx, CNC_ERR_NOT_FINITE, format("%s(i=%u, j=%u): value is not finite", call, i, j));
    return kNoPosition;
  }
  if (ctx->pattern_symmetric && j > i) return kNoPosition;
  for (CNCint64 s = ctx->rowptr[i]; s < ctx->rowptr[i + 1]; ++s) {
    const size_t slot = static_cast<size_t>(s);
    if (ctx->slot_col[slot] != j && ctx->slot_col[slot] != kUnused) continue;
    if (ctx->pattern_symmetric) {
      ctx->slot_col[slot] = j;
      ctx->slot_val[slot] += value;
    } else if (ok(ctx, cncAddIJCoefficientAt(i, j, value, s))) {
      ctx->slot_col[slot] = j;
    }
    return static_cast<NLulong>(s);
  }
  // OpenNL asserts here (more coefficients than nlSetRowLength declared).
  fail(ctx, CNC_ERR_OVERFLOW,
       format("%s(i=%u, j=%u): row %u is full (nlSetRowLength gave it %lld entries)", call, i, j, i,
              static_cast<long long>(ctx->rowptr[i + 1] - ctx->rowptr[i])));
  return kNoPosition;
}

void flush_symmetric_pattern(Context* ctx) try {
  std::vector<CNCuint> is, js;
  std::vector<double> vs;
  for (CNCuint i = 0; i < ctx->n; ++i) {
    for (CNCint64 s = ctx->rowptr[i]; s < ctx->rowptr[i + 1]; ++s) {
      const size_t slot = static_cast<size_t>(s);
      const CNCuint j = ctx->slot_col[slot];
      if (j == kUnused) continue;
      is.push_back(i), js.push_back(j), vs.push_back(ctx->slot_val[slot]);
      if (j != i) is.push_back(j), js.push_back(i), vs.push_back(ctx->slot_val[slot]);
    }
  }
  if (!vs.empty())
    ok(ctx,
       cncAddIJCoefficients(static_cast<CNCint64>(vs.size()), is.data(), js.data(), vs.data()));
} catch (const std::bad_alloc&) {
  fail(ctx, CNC_ERR_OUT_OF_MEMORY, "nlEnd(NL_MATRIX): out of memory (symmetric pattern)");
}

namespace {

// A slot given by the caller (nlAddIJCoefficientAt, nlSetIJCoefficientAtRowOffset): in row i,
// unused or already holding j. Returns false (and says why) otherwise.
bool check_slot(Context* ctx, const char* call, CNCuint i, CNCuint j, CNCint64 index) {
  if (!ctx->has_pattern) {
    fail(ctx, CNC_ERR_STATE,
         format("%s: needs a matrix pattern (nlBegin(NL_MATRIX_PATTERN))", call));
    return false;
  }
  if (state_of() != CNC_STATE_MATRIX) {
    fail(ctx, CNC_ERR_STATE, format("%s: allowed only inside nlBegin/nlEnd(NL_MATRIX)", call));
    return false;
  }
  if (i >= ctx->n || j >= ctx->n) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(i=%u, j=%u): index out of range (NL_NB_VARIABLES = %u)", call, i, j, ctx->n));
    return false;
  }
  if (index < ctx->rowptr[i] || index >= ctx->rowptr[i + 1]) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(i=%u, j=%u, index=%lld): the index is not in row %u's slots [%lld, %lld)", call,
                i, j, static_cast<long long>(index), i, static_cast<long long>(ctx->rowptr[i]),
                static_cast<long long>(ctx->rowptr[i + 1])));
    return false;
  }
  const CNCuint held = ctx->slot_col[static_cast<size_t>(index)];
  if (held != kUnused && held != j) {
    fail(ctx, CNC_ERR_INVALID_VALUE,
         format("%s(i=%u, j=%u, index=%lld): the slot already holds column %u", call, i, j,
                static_cast<long long>(index), held));
    return false;
  }
  return true;
}

void begin_pattern(Context* ctx) {
  if (state_of() != CNC_STATE_SYSTEM || ctx->in_pattern) {
    fail(ctx, CNC_ERR_STATE, "nlBegin(NL_MATRIX_PATTERN): allowed only in the SYSTEM state");
    return;
  }
  ctx->in_pattern = true;
  ctx->has_pattern = false;  // until this one is compiled
  try {
    ctx->pattern_len.assign(ctx->n, 0);
  } catch (const std::bad_alloc&) {
    ctx->in_pattern = false;
    fail(ctx, CNC_ERR_OUT_OF_MEMORY, "nlBegin(NL_MATRIX_PATTERN): out of memory");
  }
}

void end_pattern(Context* ctx) {
  if (!ctx->in_pattern) {
    fail(ctx, CNC_ERR_STATE, "nlEnd(NL_MATRIX_PATTERN): no pattern was begun");
    return;
  }
  ctx->in_pattern = false;
  if (ctx->least_squares) {  // OpenNL asserts at the first row: here the pattern is ignored
    print_message(
        "nlEnd(NL_MATRIX_PATTERN): a least-squares system has no matrix pattern in "
        "OpenNL (its rows need the dynamic matrix); the pattern is ignored");
    return;
  }
  try {
    ctx->rowptr.assign(static_cast<size_t>(ctx->n) + 1, 0);
    for (CNCuint i = 0; i < ctx->n; ++i) ctx->rowptr[i + 1] = ctx->rowptr[i] + ctx->pattern_len[i];
    const size_t slots = static_cast<size_t>(ctx->rowptr.back());
    ctx->pattern_symmetric = ctx->symmetric;
    if (ctx->pattern_symmetric) {
      // Stored here (lower triangle), sent mirrored: cnc's hash table sized for both triangles.
      if (!ok(ctx, cncSolverParameteri64(CNC_NNZ_HINT, 2 * ctx->rowptr.back()))) return;
      ctx->slot_val.assign(slots, 0.0);
    } else {
      if (!ok(ctx, cncBegin(CNC_MATRIX_PATTERN))) return;
      const bool set = ok(ctx, cncSetRowLengths(ctx->pattern_len.data()));
      if (!ok(ctx, cncEnd(CNC_MATRIX_PATTERN)) || !set) return;
      ctx->slot_val.clear();
    }
    ctx->slot_col.assign(slots, kUnused);
  } catch (const std::bad_alloc&) {
    fail(ctx, CNC_ERR_OUT_OF_MEMORY, "nlEnd(NL_MATRIX_PATTERN): out of memory");
    return;
  }
  ctx->has_pattern = true;
  std::vector<CNCuint>().swap(ctx->pattern_len);
}

void begin_matrix(Context* ctx) {
  drop_current_matrix(ctx);  // cnc's matrix is assembled anew
  if (ctx->locked.size() != ctx->n) ctx->locked.assign(ctx->n, 0);
  if (ctx->buffers_enabled) buffers_to_cnc(ctx, false);
  ctx->free_vars.clear();
  for (CNCuint i = 0; i < ctx->n; ++i) {
    if (!ctx->locked[i]) ctx->free_vars.push_back(i);
  }
  apply_solver_defaults(ctx, ctx->free_vars.size());
  if (!ok(ctx, cncBegin(CNC_MATRIX))) return;
  // An eigen problem's K and M start over with the matrix.
  ctx->k_rows.clear(), ctx->k_cols.clear(), ctx->k_vals.clear();
  ctx->m_rows.clear(), ctx->m_cols.clear(), ctx->m_vals.clear();
  // Every slot of the pattern starts unused, as cnc's.
  if (ctx->has_pattern) {
    std::fill(ctx->slot_col.begin(), ctx->slot_col.end(), kUnused);
    if (ctx->pattern_symmetric) std::fill(ctx->slot_val.begin(), ctx->slot_val.end(), 0.0);
  }
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
  for (const auto& c : ctx->row) add_entry(ctx, "nlEnd(NL_ROW)", var, c.first, s * c.second);
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
      begin_pattern(ctx);
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
      if (ctx->has_pattern && ctx->pattern_symmetric && state_of() == CNC_STATE_MATRIX)
        flush_symmetric_pattern(ctx);
      ok(ctx, cncEnd(CNC_MATRIX));
      return;
    case NL_ROW:
      end_row(ctx);
      return;
    case NL_MATRIX_PATTERN:
      end_pattern(ctx);
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM, format("nlEnd(0x%x): unknown primitive", primitive));
  }
}

void nlSetRowLength(NLuint i, NLuint n) {
  Context* ctx = current("nlSetRowLength");
  if (ctx == nullptr) return;
  if (!ctx->in_pattern) {
    fail(ctx, CNC_ERR_STATE,
         "nlSetRowLength: allowed only inside nlBegin/nlEnd(NL_MATRIX_PATTERN)");
    return;
  }
  if (i >= ctx->n || n > ctx->n) {  // OpenNL asserts i < m and n <= number of columns
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("nlSetRowLength(i=%u, n=%u): needs i < %u and n <= %u", i, n, ctx->n, ctx->n));
    return;
  }
  ctx->pattern_len[i] = n;
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

NLulong nlAddIJCoefficient(NLuint i, NLuint j, NLdouble value) {
  Context* ctx = current("nlAddIJCoefficient");
  if (ctx == nullptr) return kNoPosition;
  if (ctx->has_pattern && state_of() != CNC_STATE_MATRIX) {
    fail(ctx, CNC_ERR_STATE, "nlAddIJCoefficient: allowed only inside nlBegin/nlEnd(NL_MATRIX)");
    return kNoPosition;
  }
  return add_entry(ctx, "nlAddIJCoefficient", i, j, value);
}

void nlAddIJCoefficientAt(NLuint i, NLuint j, NLdouble value, NLulong index) {
  Context* ctx = current("nlAddIJCoefficientAt");
  if (ctx == nullptr) return;
  const auto at = static_cast<CNCint64>(std::min<NLulong>(index, 0x7fffffffffffffff));
  if (!check_slot(ctx, "nlAddIJCoefficientAt", i, j, at)) return;
  if (!std::isfinite(value)) {
    fail(ctx, CNC_ERR_NOT_FINITE,
         format("nlAddIJCoefficientAt(i=%u, j=%u): value is not finite", i, j));
    return;
  }
  if (ctx->pattern_symmetric) {
    if (j > i) return;  // the upper triangle, dropped as by nlAddIJCoefficient
    ctx->slot_col[static_cast<size_t>(at)] = j;
    ctx->slot_val[static_cast<size_t>(at)] += value;
  } else if (ok(ctx, cncAddIJCoefficientAt(i, j, value, at))) {
    ctx->slot_col[static_cast<size_t>(at)] = j;
  }
}

void nlSetIJCoefficientAtRowOffset(NLuint i, NLuint j, NLdouble value, NLuint row_offset) {
  Context* ctx = current("nlSetIJCoefficientAtRowOffset");
  if (ctx == nullptr) return;
  if (ctx->has_pattern && i < ctx->n && row_offset >= ctx->rowptr[i + 1] - ctx->rowptr[i]) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("nlSetIJCoefficientAtRowOffset(i=%u, j=%u, row_offset=%u): row %u has %lld slots",
                i, j, row_offset, i, static_cast<long long>(ctx->rowptr[i + 1] - ctx->rowptr[i])));
    return;
  }
  const CNCint64 at = ctx->has_pattern && i < ctx->n ? ctx->rowptr[i] + row_offset : -1;
  if (!check_slot(ctx, "nlSetIJCoefficientAtRowOffset", i, j, at)) return;
  if (!std::isfinite(value)) {
    fail(ctx, CNC_ERR_NOT_FINITE,
         format("nlSetIJCoefficientAtRowOffset(i=%u, j=%u): value is not finite", i, j));
    return;
  }
  if (ctx->pattern_symmetric) {
    if (j > i) return;
    ctx->slot_col[static_cast<size_t>(at)] = j;
    ctx->slot_val[static_cast<size_t>(at)] = value;  // set, not added
  } else if (ok(ctx, cncSetIJCoefficientAtRowOffset(i, j, value, row_offset))) {
    ctx->slot_col[static_cast<size_t>(at)] = j;
  }
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
