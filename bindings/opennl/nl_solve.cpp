// OpenNL's solve (the variables buffers copied in and out; the default solver is cnc's
// CNC_SOLVER_DEFAULT, the same rule as OpenNL's), and
// what cnc does not provide: updating the right-hand side alone, eigen solvers.
#include <cnc.h>
#include <cnc_nl.h>

#include <string>

#include "nl_internal.hpp"

using namespace cnc::nl;

extern "C" {

NLboolean nlSolve(void) {
  Context* ctx = current("nlSolve");
  if (ctx == nullptr) return NL_FALSE;
  const std::string why = unsupported_solver(ctx);
  if (!why.empty()) {
    fail(ctx, CNC_ERR_UNSUPPORTED, why);
    return NL_FALSE;
  }
  if (ctx->buffers_enabled) buffers_to_cnc(ctx, true);  // new initial guess, as OpenNL reads it
  if (!ok(ctx, cncSolve())) return NL_FALSE;
  if (ctx->buffers_enabled) cnc_to_buffers(ctx);
  CNCint reason = CNC_REASON_NONE;
  cncGetIntegerv(CNC_REASON, &reason);
  switch (reason) {
    case CNC_REASON_INDEFINITE_MATRIX:
    case CNC_REASON_INDEFINITE_PRECOND:
    case CNC_REASON_BREAKDOWN:
    case CNC_REASON_NOT_FINITE: {
      const char* name = "";
      cncGetString(CNC_REASON_NAME, &name);
      print_message(std::string("nlSolve: the solver stopped: ") + name);
      return NL_FALSE;
    }
    default:
      return NL_TRUE;
  }
}

void nlUpdateRightHandSide(NLdouble*) {
  Context* ctx = current("nlUpdateRightHandSide");
  if (ctx == nullptr) return;
  fail(ctx, CNC_ERR_UNSUPPORTED,
       "nlUpdateRightHandSide: not provided by cnc; assemble again from nlBegin(NL_MATRIX)");
}

void nlMatrixMode(NLenum matrix) {
  Context* ctx = current("nlMatrixMode");
  if (ctx == nullptr || matrix == NL_STIFFNESS_MATRIX) return;
  fail(ctx, CNC_ERR_UNSUPPORTED, "nlMatrixMode: only NL_STIFFNESS_MATRIX (no eigen solver in cnc)");
}

void nlEigenSolverParameterd(NLenum, NLdouble) {
  fail(t_current, CNC_ERR_UNSUPPORTED, "nlEigenSolverParameterd: no eigen solver in cnc");
}

void nlEigenSolverParameteri(NLenum, NLint) {
  fail(t_current, CNC_ERR_UNSUPPORTED, "nlEigenSolverParameteri: no eigen solver in cnc");
}

void nlEigenSolve(void) {
  fail(t_current, CNC_ERR_UNSUPPORTED, "nlEigenSolve: no eigen solver in cnc");
}

double nlGetEigenValue(NLuint) {
  fail(t_current, CNC_ERR_UNSUPPORTED, "nlGetEigenValue: no eigen solver in cnc");
  return 0.0;
}

}  // extern "C"
