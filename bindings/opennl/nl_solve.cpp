// OpenNL's solve (the variables buffers copied in and out; the default solver is cnc's
// CNC_SOLVER_DEFAULT, the same rule as OpenNL's; CG goes on past indefinite curvature as
// OpenNL's; a residual that misses the threshold for want of precision is a failure; a user
// solver, NL_FUNC_SOLVER, in place of cnc's), and the right-hand side updated alone (eigen
// solves: nl_eigen.cpp).
#include <cnc.h>
#include <cnc_nl.h>

#include <new>
#include <string>
#include <vector>

#include "../../src/api/cnc_internal.h"  // CNC_INTERNAL_*, cncInternalSetRightHandSide
#include "nl_internal.hpp"

using namespace cnc::nl;

extern "C" {

NLboolean nlSolve(void) {
  Context* ctx = current("nlSolve");
  if (ctx == nullptr) return NL_FALSE;
  if (ctx->solver_func != nullptr) {
    // OpenNL's nlSolve: the user's NLSolverFunc in place of the solver, its result nlSolve's.
    // It reads the system through nlGetCurrentMatrix and writes x with nlSetVariable.
    const CNCint state = state_of();
    if (state != CNC_STATE_SYSTEM_CONSTRUCTED && state != CNC_STATE_SOLVED) {
      fail(ctx, CNC_ERR_STATE, "nlSolve: the system is not constructed (call nlEnd(NL_SYSTEM))");
      return NL_FALSE;
    }
    const auto solver = reinterpret_cast<NLboolean (*)(void)>(ctx->solver_func);
    return solver() != NL_FALSE ? NL_TRUE : NL_FALSE;
  }
  const std::string why = unsupported_solver(ctx);
  if (!why.empty()) {
    fail(ctx, CNC_ERR_UNSUPPORTED, why);
    return NL_FALSE;
  }
  if (ctx->buffers_enabled) buffers_to_cnc(ctx, true);  // new initial guess, as OpenNL reads it
  // The initial guess, kept for a CG that must start over (below); bound buffers keep it
  // themselves until the solve is copied out.
  const bool cg = ctx->solver == NL_CG ||
                  (ctx->solver == NL_SOLVER_DEFAULT && (ctx->least_squares || ctx->symmetric));
  std::vector<double> guess;
  const CNCint state = state_of();
  if (cg && !ctx->buffers_enabled &&
      (state == CNC_STATE_SYSTEM_CONSTRUCTED || state == CNC_STATE_SOLVED)) {
    try {
      guess.resize(static_cast<size_t>(ctx->n) * ctx->nb_systems);
    } catch (const std::bad_alloc&) {  // only the restart below needs it
    }
    for (CNCuint k = 0; k < ctx->nb_systems && !guess.empty(); ++k)
      for (CNCuint i = 0; i < ctx->n; ++i)
        cncMultiGetVariable(i, k, &guess[static_cast<size_t>(k) * ctx->n + i]);
  }
  if (!ok(ctx, cncSolve())) return NL_FALSE;
  CNCint reason = CNC_REASON_NONE, solver_used = 0;
  cncGetIntegerv(CNC_REASON, &reason);
  cncGetIntegerv(CNC_SOLVER_USED, &solver_used);
  if (solver_used == CNC_CG && (!guess.empty() || ctx->buffers_enabled) &&
      (reason == CNC_REASON_INDEFINITE_MATRIX || reason == CNC_REASON_INDEFINITE_PRECOND)) {
    // cnc's fused CG stops at the first p'Ap <= 0; OpenNL's CG iterates on (and converges on
    // symmetric indefinite systems). Solve again from the same guess with cnc's CG that goes on
    // (it warns through the log callback).
    if (ctx->buffers_enabled) {
      buffers_to_cnc(ctx, true);
    } else {
      for (CNCuint k = 0; k < ctx->nb_systems; ++k)
        for (CNCuint i = 0; i < ctx->n; ++i)
          if (i >= ctx->locked.size() || !ctx->locked[i])
            cncMultiSetVariable(i, k, guess[static_cast<size_t>(k) * ctx->n + i]);
    }
    const bool set = ok(ctx, cncSolverParameteri(CNC_INTERNAL_CG_INDEFINITE, 1));
    const bool solved = set && ok(ctx, cncSolve());
    if (set) cncSolverParameteri(CNC_INTERNAL_CG_INDEFINITE, 0);
    if (!solved) return NL_FALSE;
    cncGetIntegerv(CNC_REASON, &reason);
  }
  if (ctx->buffers_enabled) cnc_to_buffers(ctx);  // x: the last iterate, whatever the outcome
  const char* name = "";
  cncGetString(CNC_REASON_NAME, &name);
  switch (reason) {
    case CNC_REASON_INDEFINITE_MATRIX:
    case CNC_REASON_INDEFINITE_PRECOND:
    case CNC_REASON_BREAKDOWN:
    case CNC_REASON_NOT_FINITE:
      print_message(std::string("nlSolve: the solver stopped: ") + name);
      return NL_FALSE;
    case CNC_REASON_STAGNATED: {
      // The recursive residual reached the threshold but the true one did not: never success.
      double err = 0.0;
      cncGetDoublev(CNC_TRUE_ERROR, &err);
      print_message(
          format("nlSolve: the true relative residual (%.3g) did not reach "
                 "NL_THRESHOLD (%.3g)%s",
                 err, ctx->threshold,
                 ctx->single_precision ? ": single precision (NL_CNC_FLOAT_*) cannot "
                                         "reach it; use NL_CNC_DOUBLE_* or a larger "
                                         "threshold"
                                       : ""));
      return NL_FALSE;
    }
    case CNC_REASON_MAX_ITERATIONS:
      if (ctx->single_precision) {  // a float solve that stalls above the threshold
        double err = 0.0;
        cncGetDoublev(CNC_TRUE_ERROR, &err);
        if (err > ctx->threshold) {
          print_message(
              format("nlSolve: single precision (NL_CNC_FLOAT_*) stopped at a true "
                     "relative residual of %.3g, above NL_THRESHOLD (%.3g)",
                     err, ctx->threshold));
          return NL_FALSE;
        }
      }
      return NL_TRUE;  // as OpenNL: the iteration limit is not a failure
    default:
      return NL_TRUE;
  }
}

// The constructed system's b (M x = b over the free variables), replaced in one call, as OpenNL
// documents it; the matrix and a direct solver's factorization stay for the next nlSolve.
void nlUpdateRightHandSide(NLdouble* values) {
  Context* ctx = current("nlUpdateRightHandSide");
  if (ctx == nullptr) return;
  if (values == nullptr) {
    fail(ctx, CNC_ERR_NULL_POINTER, "nlUpdateRightHandSide(NULL): values must not be NULL");
    return;
  }
  if (ctx->nb_systems != 1) {
    fail(ctx, CNC_ERR_INVALID_VALUE,
         format("nlUpdateRightHandSide: needs NL_NB_SYSTEMS = 1 (it is %u), as OpenNL",
                ctx->nb_systems));
    return;
  }
  const CNCint state = state_of();
  if (state != CNC_STATE_SYSTEM_CONSTRUCTED && state != CNC_STATE_SOLVED) {
    fail(ctx, CNC_ERR_STATE,
         "nlUpdateRightHandSide: the system is not constructed (call it after nlEnd(NL_SYSTEM))");
    return;
  }
  ok(ctx, cncInternalSetRightHandSide(0, values));
}

}  // extern "C"
