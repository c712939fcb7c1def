// OpenNL 4 API (cnc_nl.h) on top of cnc's public C API.
//
// Design: an NLContext is a small wrapper around a CNCcontext. Parameters, variables, locks and
// solves are forwarded to cnc; what OpenNL defines differently from cnc is done here:
//  - rows are buffered until nlEnd(NL_ROW), so that row scaling (set before nlBegin(NL_ROW)),
//    NL_NORMALIZE_ROWS (norm over locked coefficients too) and the overwrite semantics of
//    nlRightHandSide are OpenNL's exactly;
//  - in plain mode the k-th row is the equation of the k-th FREE variable (OpenNL numbers rows
//    over the free variables); rows are sent to cnc entry-wise on that variable's row, and cnc
//    moves locked columns to the right-hand side;
//  - NL_VARIABLES_BUFFER: user arrays are the variables' storage, copied to cnc at
//    nlBegin(NL_MATRIX) and nlSolve, and back after nlSolve;
//  - OpenNL's default iteration limit (5 x free variables) and its solver choice.
// Misuse never aborts: it is printed and remembered (first error per context), and the call does
// nothing. Only nl* symbols are exported (version script nl_compat.map).
#include <cnc.h>
#include <cnc_nl.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace cnc::nl {
namespace {

struct Buffer {
  char* addr = nullptr;
  size_t stride = sizeof(double);
};

struct Context {
  CNCcontext cnc = nullptr;
  bool legacy3 = false;  // OpenNL 3.x plain-mode sign: sum a x + c = 0, so b = -c
  // Mirrored parameters (cnc holds the authoritative solver state).
  CNCuint n = 0;
  CNCuint nb_systems = 1;
  bool least_squares = false;
  bool symmetric = false;
  NLenum solver = NL_SOLVER_DEFAULT;
  NLenum preconditioner = NL_PRECOND_JACOBI;
  bool max_iterations_set = false;
  double omega = 1.5;
  NLint inner_iterations = 5;
  bool normalize_rows = false;
  bool verbose = false;
  bool no_indirection = false;
  bool buffers_enabled = false;
  std::vector<Buffer> buffers;
  std::vector<char> locked;
  // Assembly.
  std::vector<CNCuint> free_vars;  // plain mode: row k -> variable free_vars[k]
  CNCuint current_row = 0;
  bool in_row = false;
  bool in_pattern = false;
  CNCint64 pattern_nnz = 0;
  std::vector<std::pair<CNCuint, double>> row;
  std::vector<double> row_rhs, next_rhs;
  double row_scaling = 1.0, next_scaling = 1.0;
  NLfunc progress = nullptr;
  // Errors.
  int error = CNC_OK;
  std::string error_message;
};

thread_local Context* t_current = nullptr;
thread_local std::string t_message;  // storage for strings handed out without a context

NLprintfFunc g_printf = printf;
NLfprintfFunc g_fprintf = fprintf;
// Backend chosen by nlInitExtension for new contexts (0 = cnc's own choice).
CNCenum g_backend = 0;
std::vector<std::string> g_extensions;  // extensions initialized successfully

void print_message(const std::string& text) {
  g_fprintf(stderr, "OpenNL (cnc): %s\n", text.c_str());
}

// Prints an error and keeps it as the context's first error.
void fail(Context* ctx, int status, const std::string& text) {
  print_message(text);
  if (ctx != nullptr && ctx->error == CNC_OK) {
    ctx->error = status;
    ctx->error_message = text;
  }
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// Checks a cnc status; on failure prints cnc's message and keeps it. Returns true when OK.
bool ok(Context* ctx, CNCstatus status) {
  if (status == CNC_OK) return true;
  const char* msg = cncGetLastErrorMessage();
  fail(ctx, status, (msg != nullptr && *msg) ? msg : cncStatusString(status));
  return false;
}

// The current context, made current in cnc too (someone may have called cncMakeCurrent).
Context* current(const char* call) {
  Context* ctx = t_current;
  if (ctx == nullptr) {
    fail(nullptr, CNC_ERR_NO_CONTEXT, std::string(call) + ": no current OpenNL context");
    return nullptr;
  }
  if (cncGetCurrent() != ctx->cnc) cncMakeCurrent(ctx->cnc);
  return ctx;
}

CNCint state_of() {
  CNCint s = CNC_STATE_INITIAL;
  cncGetIntegerv(CNC_STATE, &s);
  return s;
}

void log_callback(int level, const char* message, void* user) {
  // Errors are printed by the failing call from its status; warnings always go through, and
  // information (device, progress) with NL_VERBOSE, as cnc itself does.
  if (level == CNC_LOG_ERROR) return;
  if (level == CNC_LOG_INFO && !static_cast<Context*>(user)->verbose) return;
  if (level == CNC_LOG_WARNING) {
    g_fprintf(stderr, "OpenNL (cnc): %s\n", message);
  } else {
    g_printf("OpenNL (cnc): %s\n", message);
  }
}

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

NLContext new_context(bool legacy3) {
  auto* ctx = new Context;
  ctx->cnc = cncNewContext();
  if (ctx->cnc == nullptr) {
    delete ctx;
    fail(nullptr, CNC_ERR_OUT_OF_MEMORY, "nlNewContext: out of memory");
    return nullptr;
  }
  ctx->legacy3 = legacy3;
  ctx->buffers.resize(1);
  t_current = ctx;
  cncMakeCurrent(ctx->cnc);
  cncSetLogCallback(log_callback, ctx);
  cncSolverParameteri(CNC_GMRES_RESTART, ctx->inner_iterations);  // OpenNL's default: 5
  if (g_backend != 0) ok(ctx, cncSolverParameteri(CNC_BACKEND, g_backend));
  return ctx;
}

double* buffer_item(Context* ctx, CNCuint k, CNCuint i) {
  return reinterpret_cast<double*>(ctx->buffers[k].addr +
                                   static_cast<size_t>(i) * ctx->buffers[k].stride);
}

bool check_index(Context* ctx, const char* call, CNCuint i, CNCuint k) {
  if (i >= ctx->n) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(i=%u): variable index out of range (NL_NB_VARIABLES = %u)", call, i, ctx->n));
    return false;
  }
  if (k >= ctx->nb_systems) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("%s(k=%u): system index out of range (NL_NB_SYSTEMS = %u)", call, k,
                ctx->nb_systems));
    return false;
  }
  return true;
}

bool buffered(Context* ctx, CNCuint k) {
  return ctx->buffers_enabled && k < ctx->buffers.size() && ctx->buffers[k].addr != nullptr;
}

// Copies the bound buffers into cnc (all variables, or the free ones only).
void buffers_to_cnc(Context* ctx, bool free_only) {
  for (CNCuint k = 0; k < ctx->nb_systems; ++k) {
    if (!buffered(ctx, k)) continue;
    for (CNCuint i = 0; i < ctx->n; ++i) {
      if (free_only && ctx->locked[i]) continue;
      if (!ok(ctx, cncMultiSetVariable(i, k, *buffer_item(ctx, k, i)))) return;
    }
  }
}

void cnc_to_buffers(Context* ctx) {
  for (CNCuint k = 0; k < ctx->nb_systems; ++k) {
    if (!buffered(ctx, k)) continue;
    for (CNCuint i = 0; i < ctx->n; ++i) {
      if (!ok(ctx, cncMultiGetVariable(i, k, buffer_item(ctx, k, i)))) return;
    }
  }
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
  return true;
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

// Why nlSolve cannot run with the chosen solver, or "" when it can.
std::string unsupported_solver(const Context* ctx) {
  if (ctx->solver != NL_SOLVER_DEFAULT && ctx->solver != NL_CG && ctx->solver != NL_BICGSTAB &&
      ctx->solver != NL_GMRES) {
    return format("nlSolve: %s (0x%x) is an OpenNL extension that cnc does not provide",
                  solver_name(ctx->solver), ctx->solver);
  }
  if (ctx->preconditioner == NL_PRECOND_USER) {
    return "nlSolve: NL_PRECOND_USER (user preconditioner function) is not provided by cnc";
  }
  return "";
}

void set_solver(Context* ctx, NLint value) {
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
    case NL_SOLVER_USER:
    case NL_CHOLMOD_EXT:
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

void set_preconditioner(Context* ctx, NLint value) {
  switch (value) {
    case NL_PRECOND_NONE:
      if (ok(ctx, cncSolverParameteri(CNC_PRECONDITIONER, CNC_PRECOND_NONE)))
        ctx->preconditioner = NL_PRECOND_NONE;
      return;
    case NL_PRECOND_SSOR:  // cnc's SSOR, on its CPU backend
    case NL_PRECOND_JACOBI:
      if (ok(ctx,
             cncSolverParameteri(CNC_PRECONDITIONER,
                                 value == NL_PRECOND_SSOR ? CNC_PRECOND_SSOR : CNC_PRECOND_JACOBI)))
        ctx->preconditioner = static_cast<NLenum>(value);
      return;
    case NL_PRECOND_USER:
      ctx->preconditioner = NL_PRECOND_USER;
      print_message("NL_PRECOND_USER is not provided by cnc; nlSolve will fail");
      return;
    default:
      fail(ctx, CNC_ERR_INVALID_ENUM,
           format("nlSolverParameteri(NL_PRECONDITIONER, 0x%x): %s", static_cast<unsigned>(value),
                  value == NL_CUDA_PRECOND_ILU_EXT ? "the ILU extension is not provided by cnc"
                                                   : "unknown preconditioner"));
  }
}

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

bool extension_is(const char* a, const char* b) {
  if (a == nullptr) return false;
  for (; *a && *b; ++a, ++b) {
    if (std::toupper(static_cast<unsigned char>(*a)) != *b) return false;
  }
  return *a == 0 && *b == 0;
}

}  // namespace
}  // namespace cnc::nl

using namespace cnc::nl;

extern "C" {

NLContext nlNewContext(void) { return new_context(false); }
NLContext nlNewContextLegacy3(void) { return new_context(true); }

void nlDeleteContext(NLContext context) {
  auto* ctx = static_cast<Context*>(context);
  if (ctx == nullptr) return;
  if (t_current == ctx) t_current = nullptr;
  cncDeleteContext(ctx->cnc);
  delete ctx;
}

void nlMakeCurrent(NLContext context) {
  t_current = static_cast<Context*>(context);
  cncMakeCurrent(t_current != nullptr ? t_current->cnc : nullptr);
}

NLContext nlGetCurrent(void) { return t_current; }

NLboolean nlInitExtension(const char* extension) {
  CNCenum backend = 0;
  if (extension_is(extension, "CUDA")) {
    backend = CNC_BACKEND_CUDA;
  } else if (extension_is(extension, "OPENCL")) {
    backend = CNC_BACKEND_OPENCL;
  } else if (extension_is(extension, "CNC")) {
    backend = CNC_BACKEND_AUTO;  // cnc's own choice: CUDA, OpenCL GPU, else the CPU
  } else {
    return NL_FALSE;  // SUPERLU, CHOLMOD, ARPACK, MKL, AMGCL, ...: not in cnc
  }
  if (backend != CNC_BACKEND_AUTO && !cncBackendAvailable(backend)) return NL_FALSE;
  g_backend = backend;
  std::string name(extension);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (std::find(g_extensions.begin(), g_extensions.end(), name) == g_extensions.end())
    g_extensions.push_back(name);
  if (t_current != nullptr) {
    Context* ctx = current("nlInitExtension");
    ok(ctx, cncSolverParameteri(CNC_BACKEND, backend));
  }
  return NL_TRUE;
}

NLboolean nlExtensionIsInitialized(const char* extension) {
  if (extension == nullptr) return NL_FALSE;
  for (const auto& e : g_extensions) {
    if (extension_is(extension, e.c_str())) return NL_TRUE;
  }
  return NL_FALSE;
}

void nlInitialize(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i] == nullptr || std::strncmp(argv[i], "nl:", 3) != 0) continue;
    std::string arg(argv[i] + 3);
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) continue;
    if (arg.substr(eq + 1) == "true") nlInitExtension(arg.substr(0, eq).c_str());
  }
}

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
      ok(ctx, cncSolverParameterd(CNC_THRESHOLD, param));
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
      ok(ctx, cncSolverParameterd(CNC_THRESHOLD, param));
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
  CNCint64 v64 = 0;
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
    case NL_MAX_ITERATIONS:
      if (ok(ctx, cncGetIntegerv(CNC_MAX_ITERATIONS, &v))) *params = v;
      return;
    case NL_USED_ITERATIONS:
      if (ok(ctx, cncGetIntegerv(CNC_USED_ITERATIONS, &v))) *params = v;
      return;
    case NL_NNZ:
      if (ok(ctx, cncGetInteger64v(CNC_NNZ, &v64))) *params = static_cast<NLlong>(v64);
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
    case NL_ERROR:
      ok(ctx, cncGetDoublev(CNC_TRUE_ERROR, params));
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
      fail(ctx, CNC_ERR_UNSUPPORTED, "nlEnable(NL_EIGEN_SHIFT_INVERT): no eigen solver in cnc");
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
  fail(ctx, CNC_ERR_UNSUPPORTED,
       format("nlSetFunction(0x%x): only NL_FUNC_PROGRESS is provided by cnc (user solver, "
              "matrix and preconditioner functions are not)",
              pname));
}

void nlGetFunction(NLenum pname, NLfunc* param) {
  Context* ctx = current("nlGetFunction");
  if (ctx == nullptr || param == nullptr) return;
  *param = pname == NL_FUNC_PROGRESS ? ctx->progress : nullptr;
}

void nlMultiSetVariable(NLuint i, NLuint k, NLdouble value) {
  Context* ctx = current("nlSetVariable");
  if (ctx == nullptr || !check_index(ctx, "nlSetVariable", i, k)) return;
  if (buffered(ctx, k)) {
    *buffer_item(ctx, k, i) = value;
  } else {
    ok(ctx, cncMultiSetVariable(i, k, value));
  }
}

void nlSetVariable(NLuint i, NLdouble value) { nlMultiSetVariable(i, 0, value); }

NLdouble nlMultiGetVariable(NLuint i, NLuint k) {
  Context* ctx = current("nlGetVariable");
  if (ctx == nullptr || !check_index(ctx, "nlGetVariable", i, k)) return 0.0;
  if (buffered(ctx, k)) return *buffer_item(ctx, k, i);
  double v = 0.0;
  ok(ctx, cncMultiGetVariable(i, k, &v));
  return v;
}

NLdouble nlGetVariable(NLuint i) { return nlMultiGetVariable(i, 0); }

void nlLockVariable(NLuint index) {
  Context* ctx = current("nlLockVariable");
  if (ctx == nullptr || !check_index(ctx, "nlLockVariable", index, 0)) return;
  if (ok(ctx, cncLockVariable(index))) {
    ctx->locked.resize(ctx->n, 0);
    ctx->locked[index] = 1;
  }
}

void nlUnlockVariable(NLuint index) {
  Context* ctx = current("nlUnlockVariable");
  if (ctx == nullptr || !check_index(ctx, "nlUnlockVariable", index, 0)) return;
  if (ok(ctx, cncUnlockVariable(index))) {
    ctx->locked.resize(ctx->n, 0);
    ctx->locked[index] = 0;
  }
}

NLboolean nlVariableIsLocked(NLuint index) {
  Context* ctx = current("nlVariableIsLocked");
  if (ctx == nullptr || !check_index(ctx, "nlVariableIsLocked", index, 0)) return NL_FALSE;
  return index < ctx->locked.size() && ctx->locked[index] ? NL_TRUE : NL_FALSE;
}

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

void nlSetRowLength(NLuint i, NLuint n) {
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

NLboolean nlSolve(void) {
  Context* ctx = current("nlSolve");
  if (ctx == nullptr) return NL_FALSE;
  const std::string why = unsupported_solver(ctx);
  if (!why.empty()) {
    fail(ctx, CNC_ERR_UNSUPPORTED, why);
    return NL_FALSE;
  }
  if (ctx->solver == NL_SOLVER_DEFAULT) {
    // OpenNL's default: CG for least-squares or symmetric systems, else BiCGSTAB.
    const bool cg = ctx->least_squares || ctx->symmetric;
    if (!ok(ctx, cncSolverParameteri(CNC_SOLVER, cg ? CNC_CG : CNC_BICGSTAB))) return NL_FALSE;
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

void nlBindBuffer(NLenum buffer, NLuint k, void* addr, NLuint stride) {
  Context* ctx = current("nlBindBuffer");
  if (ctx == nullptr) return;
  if (buffer != NL_VARIABLES_BUFFER) {
    fail(ctx, CNC_ERR_INVALID_ENUM, format("nlBindBuffer(0x%x): only NL_VARIABLES_BUFFER", buffer));
    return;
  }
  if (k >= ctx->nb_systems) {
    fail(ctx, CNC_ERR_INDEX_OUT_OF_RANGE,
         format("nlBindBuffer(k=%u): system index out of range (NL_NB_SYSTEMS = %u)", k,
                ctx->nb_systems));
    return;
  }
  ctx->buffers.resize(ctx->nb_systems);
  ctx->buffers[k].addr = static_cast<char*>(addr);
  ctx->buffers[k].stride = stride == 0 ? sizeof(double) : stride;
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

void nlPrintfFuncs(NLprintfFunc f1, NLfprintfFunc f2) {
  g_printf = f1 != nullptr ? f1 : printf;
  g_fprintf = f2 != nullptr ? f2 : fprintf;
}

int nlGetErrorCNC(void) { return t_current != nullptr ? t_current->error : CNC_ERR_NO_CONTEXT; }

const char* nlGetErrorMessageCNC(void) {
  t_message = t_current != nullptr ? t_current->error_message : "no current OpenNL context";
  return t_message.c_str();
}

void nlClearErrorCNC(void) {
  if (t_current == nullptr) return;
  t_current->error = CNC_OK;
  t_current->error_message.clear();
}

}  // extern "C"
