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
// nothing. The current context is process-wide, as OpenNL's. Only nl* symbols are exported (version
// script nl_compat.map).
//
// This file holds contexts, extensions and errors; the shared declarations are in
// nl_internal.hpp, and the rest of the API in nl_parameters.cpp, nl_variables.cpp,
// nl_assembly.cpp and nl_solve.cpp.
#include <cnc.h>
#include <cnc_nl.h>

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nl_internal.hpp"

namespace cnc::nl {

std::atomic<Context*> g_current{nullptr};

namespace {

thread_local std::string t_message;  // storage for strings handed out without a context

NLprintfFunc g_printf = printf;
NLfprintfFunc g_fprintf = fprintf;
// Backend chosen by nlInitExtension for new contexts (0 = cnc's own choice).
CNCenum g_backend = 0;
std::vector<std::string> g_extensions;  // extensions initialized successfully

}  // namespace

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

CNCint state_of() {
  CNCint s = CNC_STATE_INITIAL;
  cncGetIntegerv(CNC_STATE, &s);
  return s;
}

namespace {

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
  g_current.store(ctx, std::memory_order_release);
  cncMakeCurrent(ctx->cnc);
  cncSetLogCallback(log_callback, ctx);
  cncSolverParameteri(CNC_GMRES_RESTART, ctx->inner_iterations);  // OpenNL's default: 5
  // OpenNL's default: not declared symmetric, so NL_SOLVER_DEFAULT gives BiCGSTAB unless the
  // system is least squares or NL_SYMMETRIC is set (cnc's CNC_SOLVER_DEFAULT follows that rule).
  cncSolverParameteri(CNC_SYMMETRIC, 0);
  if (g_backend != 0) ok(ctx, cncSolverParameteri(CNC_BACKEND, g_backend));
  return ctx;
}

void remember_extension(const std::string& name) {
  if (std::find(g_extensions.begin(), g_extensions.end(), name) == g_extensions.end())
    g_extensions.push_back(name);
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
  Context* expected = ctx;
  g_current.compare_exchange_strong(expected, nullptr);
  drop_current_matrix(ctx);
  cncDeleteContext(ctx->cnc);
  delete ctx;
}

// Process-wide, as in OpenNL: a context made current on one thread is current on all of them
// (each nl call makes its cnc context current on the thread that calls).
void nlMakeCurrent(NLContext context) {
  auto* ctx = static_cast<Context*>(context);
  g_current.store(ctx, std::memory_order_release);
  cncMakeCurrent(ctx != nullptr ? ctx->cnc : nullptr);
}

NLContext nlGetCurrent(void) { return g_current.load(std::memory_order_acquire); }

NLboolean nlInitExtension(const char* extension) {
  CNCenum backend = 0;
  if (extension_is(extension, "CUDA")) {
    backend = CNC_BACKEND_CUDA;
  } else if (extension_is(extension, "OPENCL")) {
    backend = CNC_BACKEND_OPENCL;
  } else if (extension_is(extension, "CNC")) {
    backend = CNC_BACKEND_AUTO;  // cnc's own choice: CUDA, OpenCL GPU, else the CPU
  } else if (extension_is(extension, "CHOLMOD") || extension_is(extension, "SUPERLU")) {
    // cnc's direct solvers: NL_TRUE when the library loads (the backend stays as it is).
    const bool cholmod = extension_is(extension, "CHOLMOD");
    if (!cncDirectSolverAvailable(cholmod ? CNC_CHOLMOD : CNC_SUPERLU)) {
      print_message(format("nlInitExtension(\"%s\"): %s", extension, cncGetLastErrorMessage()));
      return NL_FALSE;
    }
    remember_extension(cholmod ? "CHOLMOD" : "SUPERLU");
    return NL_TRUE;
  } else if (extension_is(extension, "ARPACK")) {
    // cnc's eigen solver: NL_TRUE when ARPACK loads.
    if (!cncEigenSolverAvailable()) {
      print_message(format("nlInitExtension(\"%s\"): %s", extension, cncGetLastErrorMessage()));
      return NL_FALSE;
    }
    remember_extension("ARPACK");
    return NL_TRUE;
  } else {
    // MKL, AMGCL, ...: not in cnc. OpenNL prints why it could not load one; so does cnc.
    print_message(
        format("nlInitExtension(\"%s\"): this extension is not available in cnc "
               "(only CUDA, OPENCL, CNC, CHOLMOD, SUPERLU and ARPACK are)",
               extension != nullptr ? extension : "(null)"));
    return NL_FALSE;
  }
  if (backend != CNC_BACKEND_AUTO && !cncBackendAvailable(backend)) return NL_FALSE;
  g_backend = backend;
  std::string name(extension);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  remember_extension(name);
  if (g_current.load(std::memory_order_acquire) != nullptr) {
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

void nlPrintfFuncs(NLprintfFunc f1, NLfprintfFunc f2) {
  g_printf = f1 != nullptr ? f1 : printf;
  g_fprintf = f2 != nullptr ? f2 : fprintf;
}

int nlGetErrorCNC(void) {
  const Context* ctx = g_current.load(std::memory_order_acquire);
  return ctx != nullptr ? ctx->error : CNC_ERR_NO_CONTEXT;
}

const char* nlGetErrorMessageCNC(void) {
  const Context* ctx = g_current.load(std::memory_order_acquire);
  t_message = ctx != nullptr ? ctx->error_message : "no current OpenNL context";
  return t_message.c_str();
}

void nlClearErrorCNC(void) {
  Context* ctx = g_current.load(std::memory_order_acquire);
  if (ctx == nullptr) return;
  ctx->error = CNC_OK;
  ctx->error_message.clear();
}

}  // extern "C"
