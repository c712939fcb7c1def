// OpenNL's parameters on cnc's (nlSolverParameter*, nlGet*, nlEnable/nlDisable, nlSetFunction):
// the solver and preconditioner choices, including the solver ids of the original CNC.
#include <cnc.h>
#include <cnc_nl.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "../../src/api/cnc_internal.h"  // CNC_INTERNAL_*: cnc's parameters for this layer
#include "nl_internal.hpp"

namespace cnc::nl {
namespace {

int progress_callback(CNCint iteration, double relative_residual, void* user) {
  auto* ctx = static_cast<Context*>(user);
  if (ctx->progress == nullptr) return 0;
  CNCint max_it = 0;
  double threshold = 0.0;
  cncGetIntegerv(CNC_MAX_ITERATIONS, &max_it);
  cncGetDoublev(CNC_THRESHOLD, &threshold);
  // OpenNL passes squared errors; cnc knows relative ones: pass those squared.
  using Progress = void (*)(NLuint, NLuint, double, double);
  reinterpret_cast<Progress>(ctx->progress)(
      static_cast<NLuint>(iteration), static_cast<NLuint>(max_it),
      relative_residual * relative_residual, threshold * threshold);
  return 0;
}

// OpenNL's matrix functions take no size and no user pointer: y = Op x over the free variables.
using MatrixFunc = void (*)(const double*, double*);
int matrix_operator(const double* x, double* y, CNCuint, void* user) {
  reinterpret_cast<MatrixFunc>(static_cast<Context*>(user)->matrix_func)(x, y);
  return 0;
}
int precond_operator(const double* x, double* y, CNCuint, void* user) {
  reinterpret_cast<MatrixFunc>(static_cast<Context*>(user)->precond_func)(x, y);
  return 0;
}

// Solver ids of the original CNC (OpenNL 3.x): CG in a given format and precision.
bool legacy_cnc_solver(Context* ctx, NLint id) {
  CNCenum format_id = CNC_FORMAT_AUTO;
  CNCenum precision = CNC_DOUBLE;
  switch (id) {
    case 0x220:
      format_id = CNC_FORMAT_CSR;
      precision = CNC_SINGLE;
      break;
    case 0x221:
      format_id = CNC_FORMAT_BCRS2;
      precision = CNC_SINGLE;
      break;
    case 0x222:
      format_id = CNC_FORMAT_CSR;
      break;
    case 0x223:
      format_id = CNC_FORMAT_BCRS2;
      break;
    case 0x224:
    case 0x229:
      precision = CNC_SINGLE;
      [[fallthrough]];
    case 0x225:
    case 0x22a:
      print_message(
          format("NL_SOLVER 0x%x: ELL/HYB formats are not in cnc; cnc's automatic format "
                 "is used",
                 static_cast<unsigned>(id)));
      break;
    default:
      return false;
  }
  if (!ok(ctx, cncSolverParameteri(CNC_SOLVER, CNC_CG))) return true;
  if (!ok(ctx, cncSolverParameteri(CNC_MATRIX_FORMAT, static_cast<CNCint>(format_id)))) return true;
  if (!ok(ctx, cncSolverParameteri(CNC_PRECISION, static_cast<CNCint>(precision)))) return true;
  ctx->solver = NL_CG;
  ctx->legacy_cnc_solver = true;
  ctx->single_precision = precision == CNC_SINGLE;
  return true;
}

// What OpenNL's NL_NNZ counts: the slots of a pattern (one triangle when symmetric), else the
// stored entries, the lower triangle only where OpenNL stores that (NL_SYMMETRIC with SSOR).
CNCint64 nnz_as_opennl(Context* ctx) {
  if (ctx->has_pattern) return ctx->rowptr.empty() ? 0 : ctx->rowptr.back();
  CNCint64 nnz = 0;
  if (!ok(ctx, cncGetInteger64v(CNC_NNZ, &nnz))) return 0;
  if (ctx->symmetric && !ctx->least_squares && ctx->preconditioner == NL_PRECOND_SSOR) {
    CNCint zero_diagonals = 0;
    cncGetIntegerv(CNC_ZERO_DIAGONALS, &zero_diagonals);
    CNCint64 free_vars = 0;
    for (char l : ctx->locked) free_vars += l ? 0 : 1;
    const CNCint64 diagonals = std::max<CNCint64>(0, free_vars - zero_diagonals);
    nnz = (nnz + std::min(diagonals, nnz)) / 2;
  }
  return nnz;
}

const char* solver_name(NLenum s) {
  switch (s) {
    case NL_SUPERLU_EXT:
      return "NL_SUPERLU_EXT";
    case NL_PERM_SUPERLU_EXT:
      return "NL_PERM_SUPERLU_EXT";
    case NL_SYMMETRIC_SUPERLU_EXT:
      return "NL_SYMMETRIC_SUPERLU_EXT";
    case NL_SOLVER_USER:
      return "NL_SOLVER_USER";
    case NL_CHOLMOD_EXT:
      return "NL_CHOLMOD_EXT";
    case NL_ARPACK_EXT:
      return "NL_ARPACK_EXT";
    case NL_AMGCL_EXT:
      return "NL_AMGCL_EXT";
    default:
      return "this solver";
  }
}

}  // namespace

// Why nlSolve cannot run with the chosen solver, or "" when it can.
std::string unsupported_solver(const Context* ctx) {
  if (ctx->solver == NL_SOLVER_USER && ctx->solver_func == nullptr)
    return "nlSolve: NL_SOLVER_USER without a solver function (nlSetFunction(NL_FUNC_SOLVER, f))";
  if (ctx->solver != NL_SOLVER_DEFAULT && ctx->solver != NL_CG && ctx->solver != NL_BICGSTAB &&
      ctx->solver != NL_GMRES && !is_direct(ctx->solver)) {
    return format("nlSolve: %s (0x%x) is an OpenNL extension that cnc does not provide",
                  solver_name(ctx->solver), ctx->solver);
  }
  if (ctx->preconditioner == NL_PRECOND_USER && ctx->precond_func == nullptr) {
    return "nlSolve: NL_PRECOND_USER without a preconditioner function "
           "(nlSetFunction(NL_FUNC_PRECONDITIONER, ...))";
  }
  return "";
}

namespace {

// A solver id of OpenNL 4 (not NL_CNC_*): double precision and cnc's format choice again.
void plain_solver(Context* ctx) {
  if (!ctx->legacy_cnc_solver) return;
  ctx->legacy_cnc_solver = ctx->single_precision = false;
  ok(ctx, cncSolverParameteri(CNC_PRECISION, CNC_DOUBLE));
  ok(ctx, cncSolverParameteri(CNC_MATRIX_FORMAT, CNC_FORMAT_AUTO));
}

void set_solver(Context* ctx, NLint value) {
  if (value == NL_SOLVER_DEFAULT || (value >= NL_CG && value <= NL_GMRES)) plain_solver(ctx);
  switch (value) {
    case NL_SOLVER_DEFAULT:
    case NL_CG:
      if (ok(ctx, cncSolverParameteri(CNC_SOLVER, value == NL_CG ? CNC_CG : CNC_SOLVER_DEFAULT)))
        ctx->solver = static_cast<NLenum>(value);
      return;
    case NL_BICGSTAB:
    case NL_GMRES:
      if (ok(ctx, cncSolverParameteri(CNC_SOLVER, value == NL_GMRES ? CNC_GMRES : CNC_BICGSTAB)))
        ctx->solver = static_cast<NLenum>(value);
      return;
    case NL_SUPERLU_EXT:
    case NL_PERM_SUPERLU_EXT:
    case NL_SYMMETRIC_SUPERLU_EXT:
    case NL_CHOLMOD_EXT:
      // cnc's direct solvers: SuperLU (its COLAMD ordering for the three SuperLU ids: the same
      // solution) and CHOLMOD, loaded when first used (nlInitExtension need not come first).
      plain_solver(ctx);
      if (ok(ctx,
             cncSolverParameteri(CNC_SOLVER, value == NL_CHOLMOD_EXT ? CNC_CHOLMOD : CNC_SUPERLU)))
        ctx->solver = static_cast<NLenum>(value);
      return;
    case NL_SOLVER_USER:
      ctx->solver = NL_SOLVER_USER;
      if (ctx->solver_func == nullptr)
        print_message(
            "nlSolverParameteri(NL_SOLVER, NL_SOLVER_USER): no solver function yet "
            "(nlSetFunction(NL_FUNC_SOLVER, f)); nlSolve fails without one");
      return;
    case NL_ARPACK_EXT:
    case NL_AMGCL_EXT:
      ctx->solver = static_cast<NLenum>(value);
      print_message(
          format("nlSolverParameteri(NL_SOLVER, %s): not provided by cnc; nlSolve will "
                 "fail",
                 solver_name(ctx->solver)));
      return;
    default:
      if (legacy_cnc_solver(ctx, value)) return;
      fail(ctx, CNC_ERR_INVALID_ENUM,
           format("nlSolverParameteri(NL_SOLVER, 0x%x): unknown solver",
                  static_cast<unsigned>(value)));
  }
}

CNCint cnc_preconditioner(NLenum p) {
  return p == NL_PRECOND_SSOR     ? CNC_PRECOND_SSOR  // cnc's SSOR, on its CPU backend
         : p == NL_PRECOND_JACOBI ? CNC_PRECOND_JACOBI
                                  : CNC_PRECOND_NONE;
}

void set_preconditioner(Context* ctx, NLint value) {
  switch (value) {
    case NL_PRECOND_NONE:
    case NL_PRECOND_SSOR:
    case NL_PRECOND_JACOBI:
      if (ok(ctx, cncSolverParameteri(CNC_PRECONDITIONER,
                                      cnc_preconditioner(static_cast<NLenum>(value))))) {
        ctx->preconditioner = static_cast<NLenum>(value);
        ctx->preconditioner_set = true;
      }
      return;
    case NL_PRECOND_USER:
      // cnc selects it only with the function set; nlSolve says so otherwise.
      if (ctx->precond_func != nullptr &&
          !ok(ctx, cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_USER)))
        return;
      ctx->preconditioner = NL_PRECOND_USER;
      ctx->preconditioner_set = true;
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM,
           format("nlSolverParameteri(NL_PRECONDITIONER, 0x%x): %s", static_cast<unsigned>(value),
                  value == NL_CUDA_PRECOND_ILU_EXT ? "the ILU extension is not provided by cnc"
                                                   : "unknown preconditioner"));
  }
}

}  // namespace

void apply_solver_defaults(Context* ctx, size_t free_variables) {
  // OpenNL's nlInitializeMSystem: only NL_SOLVER_DEFAULT chooses for the user (the original
  // CNC's ids ran Jacobi CG); an explicit solver keeps nlNewContext's defaults.
  const bool by_default = ctx->solver == NL_SOLVER_DEFAULT;
  const bool spd = ctx->least_squares || ctx->symmetric;
  if (!ctx->preconditioner_set) {
    const NLenum p =
        (by_default && spd) || ctx->legacy_cnc_solver ? NL_PRECOND_JACOBI : NL_PRECOND_NONE;
    if (ok(ctx, cncSolverParameteri(CNC_PRECONDITIONER, cnc_preconditioner(p))))
      ctx->preconditioner = p;
  }
  ctx->defaults_applied = true;
  if (!ctx->max_iterations_set) {
    const size_t limit = by_default ? std::max<size_t>(1, 5 * free_variables) : 100;
    ok(ctx, cncSolverParameteri(CNC_MAX_ITERATIONS,
                                static_cast<CNCint>(std::min<size_t>(limit, 0x7fffffff))));
  }
}

}  // namespace cnc::nl

using namespace cnc::nl;

extern "C" {

void nlSolverParameteri(NLenum pname, NLint param) {
  Context* ctx = current("nlSolverParameteri");
  if (ctx == nullptr) return;
  switch (pname) {
    case NL_SOLVER:
      set_solver(ctx, param);
      return;
    case NL_PRECONDITIONER:
      set_preconditioner(ctx, param);
      return;
    case NL_NB_VARIABLES:
      if (ok(ctx, cncSolverParameteri(CNC_NB_VARIABLES, param))) {
        ctx->n = static_cast<CNCuint>(param);
        ctx->locked.assign(ctx->n, 0);
      }
      return;
    case NL_NB_SYSTEMS:
      if (ok(ctx, cncSolverParameteri(CNC_NB_SYSTEMS, param))) {
        ctx->nb_systems = static_cast<CNCuint>(param);
        ctx->buffers.resize(ctx->nb_systems);
      }
      return;
    case NL_LEAST_SQUARES:
      if (ok(ctx, cncSolverParameteri(CNC_LEAST_SQUARES, param != 0)))
        ctx->least_squares = param != 0;
      return;
    case NL_SYMMETRIC:
      if (ok(ctx, cncSolverParameteri(CNC_SYMMETRIC, param != 0))) ctx->symmetric = param != 0;
      return;
    case NL_MAX_ITERATIONS:
      if (ok(ctx, cncSolverParameteri(CNC_MAX_ITERATIONS, param))) ctx->max_iterations_set = true;
      return;
    case NL_THRESHOLD:
      if (ok(ctx, cncSolverParameterd(CNC_THRESHOLD, param))) ctx->threshold = param;
      return;
    case NL_INNER_ITERATIONS:  // OpenNL's GMRES restart
      if (ok(ctx, cncSolverParameteri(CNC_GMRES_RESTART, param))) ctx->inner_iterations = param;
      return;
    case NL_OMEGA:
      if (ok(ctx, cncSolverParameterd(CNC_SSOR_OMEGA, double(param)))) ctx->omega = param;
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM,
           format("nlSolverParameteri(pname=0x%x): unknown parameter", pname));
  }
}

void nlSolverParameterd(NLenum pname, NLdouble param) {
  Context* ctx = current("nlSolverParameterd");
  if (ctx == nullptr) return;
  switch (pname) {
    case NL_THRESHOLD:
      if (ok(ctx, cncSolverParameterd(CNC_THRESHOLD, param))) ctx->threshold = param;
      return;
    case NL_OMEGA:
      if (ok(ctx, cncSolverParameterd(CNC_SSOR_OMEGA, param))) ctx->omega = param;
      return;
    default:
      if (!std::isfinite(param) || param != std::floor(param) || std::fabs(param) > 2147483647.0) {
        fail(ctx, CNC_ERR_INVALID_VALUE,
             format("nlSolverParameterd(pname=0x%x, %g): needs an integral value", pname, param));
        return;
      }
      nlSolverParameteri(pname, static_cast<NLint>(param));
  }
}

void nlGetIntegervL(NLenum pname, NLlong* params) {
  Context* ctx = current("nlGetIntegerv");
  if (ctx == nullptr || params == nullptr) return;
  CNCint v = 0;
  switch (pname) {
    case NL_SOLVER:
      *params = ctx->solver;
      return;
    case NL_PRECONDITIONER:
      *params = ctx->preconditioner;
      return;
    case NL_NB_VARIABLES:
      *params = ctx->n;
      return;
    case NL_NB_SYSTEMS:
      *params = ctx->nb_systems;
      return;
    case NL_LEAST_SQUARES:
      *params = ctx->least_squares;
      return;
    case NL_SYMMETRIC:
      *params = ctx->symmetric;
      return;
    case NL_INNER_ITERATIONS:
      *params = ctx->inner_iterations;
      return;
    case NL_NORMALIZE_ROWS:
      *params = ctx->normalize_rows;
      return;
    case NL_NO_VARIABLES_INDIRECTION:
      *params = ctx->no_indirection;
      return;
    case NL_VARIABLES_BUFFER:
      *params = ctx->buffers_enabled;
      return;
    case NL_EIGEN_SHIFT_INVERT:
      *params = ctx->shift_invert;
      return;
    case NL_EIGEN_SOLVER:
      *params = ctx->eigen ? NL_ARPACK_EXT : 0;
      return;
    case NL_MAX_ITERATIONS:  // OpenNL's 100 until nlBegin(NL_MATRIX) chooses, unless set
      if (!ctx->max_iterations_set && !ctx->defaults_applied) {
        *params = 100;
      } else if (ok(ctx, cncGetIntegerv(CNC_MAX_ITERATIONS, &v))) {
        *params = v;
      }
      return;
    case NL_USED_ITERATIONS:  // OpenNL's: those of the last system
      if (ok(ctx, cncGetIntegerv(CNC_INTERNAL_LAST_ITERATIONS, &v))) *params = v;
      return;
    case NL_NNZ:
      *params = static_cast<NLlong>(nnz_as_opennl(ctx));
      return;
    case NL_VERBOSE: {
      CNCboolean b = CNC_FALSE;
      if (ok(ctx, cncIsEnabled(CNC_VERBOSE, &b))) *params = b;
      return;
    }
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM,
           format("nlGetIntegerv(pname=0x%x): unknown parameter", pname));
  }
}

void nlGetIntegerv(NLenum pname, NLint* params) {
  if (params == nullptr) return;
  NLlong v = *params;
  nlGetIntegervL(pname, &v);
  *params = static_cast<NLint>(std::clamp<NLlong>(v, -2147483647L - 1, 2147483647L));
}

void nlGetIntergerv(NLenum pname, NLint* params) { nlGetIntegerv(pname, params); }

void nlGetDoublev(NLenum pname, NLdouble* params) {
  Context* ctx = current("nlGetDoublev");
  if (ctx == nullptr || params == nullptr) return;
  switch (pname) {
    case NL_THRESHOLD:
      ok(ctx, cncGetDoublev(CNC_THRESHOLD, params));
      return;
    case NL_OMEGA:
      *params = ctx->omega;
      return;
    case NL_EIGEN_SHIFT:
      *params = ctx->eigen_shift;
      return;
    case NL_ERROR:  // OpenNL's: the last system's (here its true relative residual)
      ok(ctx, cncGetDoublev(CNC_INTERNAL_LAST_TRUE_ERROR, params));
      return;
    case NL_ELAPSED_TIME:
      ok(ctx, cncGetDoublev(CNC_ELAPSED_TIME, params));
      return;
    case NL_GFLOPS:
      ok(ctx, cncGetDoublev(CNC_GFLOPS, params));
      return;
    default: {
      NLlong v = 0;
      nlGetIntegervL(pname, &v);
      *params = static_cast<double>(v);
    }
  }
}

void nlGetBooleanv(NLenum pname, NLboolean* params) {
  if (params == nullptr) return;
  NLlong v = *params;
  nlGetIntegervL(pname, &v);
  *params = v != 0 ? NL_TRUE : NL_FALSE;
}

void nlEnable(NLenum pname) {
  Context* ctx = current("nlEnable");
  if (ctx == nullptr) return;
  switch (pname) {
    case NL_NORMALIZE_ROWS:
      ctx->normalize_rows = true;
      return;
    case NL_VERBOSE:
      if (ok(ctx, cncEnable(CNC_VERBOSE))) ctx->verbose = true;
      return;
    case NL_NO_VARIABLES_INDIRECTION:
      ctx->no_indirection = true;
      return;
    case NL_VARIABLES_BUFFER:
      ctx->buffers_enabled = true;
      ctx->buffers.resize(ctx->nb_systems);
      return;
    case NL_EIGEN_SHIFT_INVERT:
      ctx->shift_invert = true;
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM, format("nlEnable(0x%x): unknown flag", pname));
  }
}

void nlDisable(NLenum pname) {
  Context* ctx = current("nlDisable");
  if (ctx == nullptr) return;
  switch (pname) {
    case NL_NORMALIZE_ROWS:
      ctx->normalize_rows = false;
      return;
    case NL_VERBOSE:
      if (ok(ctx, cncDisable(CNC_VERBOSE))) ctx->verbose = false;
      return;
    case NL_NO_VARIABLES_INDIRECTION:
      ctx->no_indirection = false;
      return;
    case NL_VARIABLES_BUFFER:
      ctx->buffers_enabled = false;
      return;
    case NL_EIGEN_SHIFT_INVERT:
      ctx->shift_invert = false;
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM, format("nlDisable(0x%x): unknown flag", pname));
  }
}

NLboolean nlIsEnabled(NLenum pname) {
  NLboolean b = NL_FALSE;
  nlGetBooleanv(pname, &b);
  return b;
}

void nlSetFunction(NLenum pname, NLfunc param) {
  Context* ctx = current("nlSetFunction");
  if (ctx == nullptr) return;
  if (pname == NL_FUNC_PROGRESS) {
    ctx->progress = param;
    ok(ctx, cncSetProgressCallback(param != nullptr ? progress_callback : nullptr, ctx));
    return;
  }
  if (pname == NL_FUNC_MATRIX) {  // replaces the assembled matrix in nlSolve
    if (ok(ctx, cncSetOperator(CNC_OPERATOR_MATRIX, param != nullptr ? matrix_operator : nullptr,
                               ctx))) {
      ctx->matrix_func = param;
      drop_current_matrix(ctx);  // nlGetCurrentMatrix: this function's matrix now
    }
    return;
  }
  if (pname == NL_FUNC_PRECONDITIONER) {  // and selects NL_PRECOND_USER, as OpenNL
    if (!ok(ctx, cncSetOperator(CNC_OPERATOR_PRECONDITIONER,
                                param != nullptr ? precond_operator : nullptr, ctx)))
      return;
    ctx->precond_func = param;
    if (param != nullptr) {
      ctx->preconditioner = NL_PRECOND_USER, ctx->preconditioner_set = true;
    } else if (ctx->preconditioner == NL_PRECOND_USER) {
      ctx->preconditioner = NL_PRECOND_JACOBI;  // cnc's choice when it is cleared
    }
    return;
  }
  if (pname == NL_FUNC_SOLVER) {  // nlSolve calls it; NL_SOLVER becomes NL_SOLVER_USER, as OpenNL
    ctx->solver_func = param;
    if (param != nullptr)
      ctx->solver = NL_SOLVER_USER;
    else if (ctx->solver == NL_SOLVER_USER)
      set_solver(ctx, NL_SOLVER_DEFAULT);  // cleared: cnc's solver again
    return;
  }
  fail(ctx, CNC_ERR_INVALID_ENUM, format("nlSetFunction(0x%x): unknown function", pname));
}

void nlGetFunction(NLenum pname, NLfunc* param) {
  Context* ctx = current("nlGetFunction");
  if (ctx == nullptr || param == nullptr) return;
  *param = pname == NL_FUNC_PROGRESS         ? ctx->progress
           : pname == NL_FUNC_MATRIX         ? ctx->matrix_func
           : pname == NL_FUNC_PRECONDITIONER ? ctx->precond_func
           : pname == NL_FUNC_SOLVER         ? ctx->solver_func
                                             : nullptr;
}

}  // extern "C"
