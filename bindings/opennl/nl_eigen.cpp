// OpenNL's eigen solver (its ARPACK extension) on cncEigenSolveCSR: nlMatrixMode sends the
// coefficients to the stiffness matrix K or the mass matrix M, nlEigenSolve finds the NL_NB_EIGENS
// (= NL_NB_SYSTEMS) eigenpairs of K x = lambda M x, nlGetEigenValue(i) reads the values
// (ascending) and nlMultiGetVariable(j, i) the eigenvectors, one system each, as OpenNL does.
#include <cnc.h>
#include <cnc_nl.h>

#include <cmath>
#include <new>
#include <string>
#include <vector>

#include "nl_internal.hpp"

using namespace cnc::nl;

namespace cnc::nl {

bool record_eigen_entry(Context* ctx, const char* call, CNCuint i, CNCuint j, double value) {
  if (state_of() != CNC_STATE_MATRIX) {
    fail(ctx, CNC_ERR_STATE,
         format("%s(i=%u, j=%u): allowed only inside nlBegin/nlEnd(NL_MATRIX)", call, i, j));
    return false;
  }
  if (i >= ctx->n || j >= ctx->n) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(i=%u, j=%u): index out of range (NL_NB_VARIABLES = %u)", call, i, j, ctx->n));
    return false;
  }
  if (!std::isfinite(value)) {
    fail(ctx, CNC_ERR_NOT_FINITE, format("%s(i=%u, j=%u): value is not finite", call, i, j));
    return false;
  }
  const bool mass = ctx->matrix_mode == NL_MASS_MATRIX;
  try {
    (mass ? ctx->m_rows : ctx->k_rows).push_back(i);
    (mass ? ctx->m_cols : ctx->k_cols).push_back(j);
    (mass ? ctx->m_vals : ctx->k_vals).push_back(value);
  } catch (const std::bad_alloc&) {
    fail(ctx, CNC_ERR_OUT_OF_MEMORY, format("%s(i=%u, j=%u): out of memory", call, i, j));
    return false;
  }
  return !mass;
}

}  // namespace cnc::nl

extern "C" {

void nlMatrixMode(NLenum matrix) {
  Context* ctx = current("nlMatrixMode");
  if (ctx == nullptr) return;
  if (matrix != NL_STIFFNESS_MATRIX && matrix != NL_MASS_MATRIX) {
    fail(ctx, CNC_ERR_INVALID_ENUM,
         format("nlMatrixMode(0x%x): NL_STIFFNESS_MATRIX or NL_MASS_MATRIX", matrix));
    return;
  }
  if (ctx->in_row) {
    fail(ctx, CNC_ERR_STATE, "nlMatrixMode: not inside a row (nlBegin/nlEnd(NL_ROW))");
    return;
  }
  ctx->matrix_mode = matrix;
  ctx->current_row = 0;  // as OpenNL: the row-wise API starts again at the first row
  if (matrix == NL_MASS_MATRIX) ctx->eigen = true;
}

void nlEigenSolverParameterd(NLenum pname, NLdouble val) {
  Context* ctx = current("nlEigenSolverParameterd");
  if (ctx == nullptr) return;
  switch (pname) {
    case NL_EIGEN_SHIFT:
      if (!std::isfinite(val)) {
        fail(ctx, CNC_ERR_NOT_FINITE, "nlEigenSolverParameterd(NL_EIGEN_SHIFT): not finite");
        return;
      }
      ctx->eigen_shift = val;
      return;
    case NL_EIGEN_THRESHOLD:  // ARPACK's tolerance; NL_THRESHOLD of linear solves is not changed
      ok(ctx, cncSolverParameterd(CNC_EIGEN_THRESHOLD, val));
      return;
    default:
      if (!std::isfinite(val) || val != std::floor(val) || std::fabs(val) > 2147483647.0) {
        fail(ctx, CNC_ERR_INVALID_VALUE,
             format("nlEigenSolverParameterd(pname=0x%x, value=%g): takes an integer", pname, val));
        return;
      }
      nlEigenSolverParameteri(pname, static_cast<NLint>(val));
  }
}

void nlEigenSolverParameteri(NLenum pname, NLint val) {
  Context* ctx = current("nlEigenSolverParameteri");
  if (ctx == nullptr) return;
  switch (pname) {
    case NL_EIGEN_SOLVER:
      if (val != NL_ARPACK_EXT) {
        fail(ctx, CNC_ERR_INVALID_ENUM,
             format("nlEigenSolverParameteri(NL_EIGEN_SOLVER, 0x%x): only NL_ARPACK_EXT", val));
        return;
      }
      ctx->eigen = true;
      return;
    case NL_EIGEN_SHIFT_INVERT:
      ctx->shift_invert = val != 0;
      return;
    case NL_EIGEN_SHIFT:
    case NL_EIGEN_THRESHOLD:
      nlEigenSolverParameterd(pname, val);
      return;
    case NL_NB_VARIABLES:
    case NL_NB_EIGENS:
    case NL_SYMMETRIC:
    case NL_EIGEN_MAX_ITERATIONS:  // NL_MAX_ITERATIONS: ARPACK's restarts
      nlSolverParameteri(pname, val);
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM,
           format("nlEigenSolverParameteri(pname=0x%x): not an eigen solver parameter", pname));
  }
}

void nlEigenSolve(void) {
  Context* ctx = current("nlEigenSolve");
  if (ctx == nullptr) return;
  const CNCint state = state_of();
  if (state != CNC_STATE_SYSTEM_CONSTRUCTED && state != CNC_STATE_SOLVED) {
    fail(ctx, CNC_ERR_STATE, "nlEigenSolve: allowed after nlEnd(NL_SYSTEM)");
    return;
  }
  if (!ctx->eigen || ctx->k_vals.empty()) {
    fail(ctx, CNC_ERR_STATE,
         "nlEigenSolve: no stiffness matrix recorded: select the eigen solver "
         "(nlEigenSolverParameteri(NL_EIGEN_SOLVER, NL_ARPACK_EXT)) before nlBegin(NL_MATRIX)");
    return;
  }
  if (ctx->least_squares) {
    fail(ctx, CNC_ERR_UNSUPPORTED, "nlEigenSolve: not in least-squares mode (NL_LEAST_SQUARES)");
    return;
  }
  for (CNCuint i = 0; i < ctx->locked.size(); ++i) {
    if (ctx->locked[i]) {
      fail(ctx, CNC_ERR_UNSUPPORTED,
           format("nlEigenSolve: variable %u is locked; the eigen solver takes every variable", i));
      return;
    }
  }
  const CNCuint n = ctx->n, nev = ctx->nb_systems;
  std::vector<double> w, v;
  csr_rows k, m;
  try {
    k = rows_from_triplets(n, ctx->k_rows, ctx->k_cols, ctx->k_vals);
    if (!ctx->m_vals.empty()) m = rows_from_triplets(n, ctx->m_rows, ctx->m_cols, ctx->m_vals);
    w.resize(nev);
    v.resize(static_cast<size_t>(n) * nev);
  } catch (const std::bad_alloc&) {
    fail(ctx, CNC_ERR_OUT_OF_MEMORY, "nlEigenSolve: out of memory");
    return;
  }
  const bool has_m = !ctx->m_vals.empty();
  if (!ok(ctx, cncEigenSolveCSR(n, k.row_ptr.data(), k.col.data(), k.val.data(),
                                has_m ? m.row_ptr.data() : nullptr, has_m ? m.col.data() : nullptr,
                                has_m ? m.val.data() : nullptr, 0, nev,
                                ctx->shift_invert ? CNC_EIGEN_NEAREST : CNC_EIGEN_SMALLEST,
                                ctx->eigen_shift, w.data(), v.data())))
    return;
  CNCint reason = CNC_REASON_NONE;
  cncGetIntegerv(CNC_REASON, &reason);
  ctx->eigen_values.clear();
  if (reason != CNC_REASON_CONVERGED) {
    const char* name = "";
    cncGetString(CNC_REASON_NAME, &name);
    print_message(std::string("nlEigenSolve: ARPACK did not converge: ") + name);
    return;
  }
  for (CNCuint e = 0; e < nev; ++e)
    for (CNCuint i = 0; i < n; ++i)
      ok(ctx, cncMultiSetVariable(i, e, v[static_cast<size_t>(e) * n + i]));
  if (ctx->buffers_enabled) cnc_to_buffers(ctx);
  ctx->eigen_values = std::move(w);
  if (ctx->verbose) {
    for (CNCuint e = 0; e < nev; ++e)
      print_message(format("nlEigenSolve: eigenvalue %u = %.17g", e, ctx->eigen_values[e]));
  }
}

double nlGetEigenValue(NLuint i) {
  Context* ctx = current("nlGetEigenValue");
  if (ctx == nullptr) return 0.0;
  if (i >= ctx->eigen_values.size()) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("nlGetEigenValue(%u): %zu eigenvalue(s) from the last nlEigenSolve", i,
                ctx->eigen_values.size()));
    return 0.0;
  }
  return ctx->eigen_values[i];
}

}  // extern "C"
