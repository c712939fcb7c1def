/* libFuzzer harness: random sequences of the OpenNL layer's calls (include/cnc_nl.h, the
 * cnc_opennl library) on the CPU backend, n <= 64: parameters, getters and flags with any enum,
 * variables, locks and bound variable buffers, rows (scaling, right-hand sides, normalization),
 * entry-wise assembly, patterns, solves, the calls cnc does not provide, extensions, errors,
 * contexts deleted and created midway (OpenNL 4 and 3.x sign conventions) and calls without a
 * current context. OpenNL's calls return nothing: the harness checks that none crashes, leaks or
 * reads outside what it was given, and that the first error it keeps is a CNC_ERR_* code. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CNC_NL_LEGACY_3 /* declares nlRowParameterd/i and nlGetIntergerv */
#include "cnc.h"
#include "cnc_nl.h"
#include "cnc_nl_matrix.h"
#include "fuzz_input.h"
#undef nlNewContext /* both kinds of contexts, by their own names */

enum { max_n = 64, max_systems = 4, max_stride = 24, max_ops = 400 };

/* Variable buffers bound with nlBindBuffer: they outlive every context of an input. */
static double buffers[max_systems + 1][max_n * max_stride / sizeof(double)];

static int silent_printf(const char* format, ...) {
  (void)format;
  return 0;
}

static int silent_fprintf(FILE* out, const char* format, ...) {
  (void)out, (void)format;
  return 0;
}

static void progress(NLuint it, NLuint max_it, double err2, double max_err2) {
  (void)it, (void)max_it, (void)err2, (void)max_err2;
}

/* NL_FUNC_SOLVER's function (OpenNL's NLSolverFunc): reads M, writes a variable. */
static NLboolean user_solver(void) {
  NLMatrix M = nlGetCurrentMatrix();
  if (M != NULL && M->n > 0 && M->n <= 64) {
    double x[64] = {0}, y[64];
    nlMultMatrixVector(M, x, y);
  }
  nlSetVariable(0, 1.0);
  return NL_TRUE;
}

static int trace; /* CNC_FUZZ_TRACE=1: each call's opcode and the context's error on stderr */

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  trace = getenv("CNC_FUZZ_TRACE") != NULL;
  setenv("CNC_NUM_THREADS", "1", 1);
  setenv("CNC_BACKEND", "cpu", 1);
  setenv("CNC_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
  nlPrintfFuncs(silent_printf, silent_fprintf);
  return 0;
}

static const NLenum pnames[] = {NL_SOLVER,
                                NL_NB_VARIABLES,
                                NL_LEAST_SQUARES,
                                NL_MAX_ITERATIONS,
                                NL_THRESHOLD,
                                NL_OMEGA,
                                NL_SYMMETRIC,
                                NL_USED_ITERATIONS,
                                NL_ERROR,
                                NL_INNER_ITERATIONS,
                                NL_ELAPSED_TIME,
                                NL_PRECONDITIONER,
                                NL_GFLOPS,
                                NL_NNZ,
                                NL_NB_SYSTEMS,
                                NL_NORMALIZE_ROWS,
                                NL_VERBOSE,
                                NL_NO_VARIABLES_INDIRECTION,
                                NL_VARIABLES_BUFFER,
                                NL_EIGEN_SHIFT_INVERT,
                                NL_RIGHT_HAND_SIDE,
                                NL_ROW_SCALING,
                                NL_FUNC_PROGRESS,
                                NL_FUNC_SOLVER,
                                0,
                                0xffffffffu};
static const NLint values[] = {NL_SOLVER_DEFAULT,
                               NL_CG,
                               NL_BICGSTAB,
                               NL_GMRES,
                               NL_SUPERLU_EXT,
                               NL_CHOLMOD_EXT,
                               NL_SOLVER_USER,
                               NL_CNC_FLOAT_CRS,
                               NL_CNC_FLOAT_BCRS2,
                               NL_CNC_DOUBLE_CRS,
                               NL_CNC_DOUBLE_BCRS2,
                               NL_CNC_FLOAT_ELL,
                               NL_CNC_DOUBLE_ELL,
                               NL_CNC_FLOAT_HYB,
                               NL_CNC_DOUBLE_HYB,
                               NL_PRECOND_NONE,
                               NL_PRECOND_JACOBI,
                               NL_PRECOND_SSOR,
                               NL_PRECOND_USER,
                               NL_CUDA_PRECOND_ILU_EXT,
                               0,
                               1,
                               2,
                               3,
                               7,
                               64,
                               -1,
                               INT32_MAX,
                               INT32_MIN};
static const char* extensions[] = {"CNC",     "cnc",     "CUDA", "OPENCL", "SUPERLU",
                                   "CHOLMOD", "OpenCL1", "",     NULL};

static NLenum fz_pname(fuzz_input* in) {
  const uint8_t t = fz_u8(in);
  return t < 250 ? pnames[t % (sizeof pnames / sizeof pnames[0])] : fz_u32(in);
}

/* Valid sizes that would cost gigabytes or hours are made small: not what this is for. */
static NLint capped(NLenum p, NLint v) {
  if (p == NL_NB_VARIABLES && v > max_n) return v % (max_n + 1);
  if (p == NL_NB_SYSTEMS && v > max_systems) return 1 + v % max_systems;
  if (p == NL_MAX_ITERATIONS && v > 200) return 200;
  return v;
}

static NLint fz_value(fuzz_input* in, NLenum p) {
  const uint8_t t = fz_u8(in);
  return capped(p, t < 240 ? values[t % (sizeof values / sizeof values[0])] : (NLint)fz_u32(in));
}

static double fz_real(fuzz_input* in, NLenum p) {
  const uint8_t t = fz_u8(in);
  if (t < 128) return (double)fz_value(in, p);
  if (t < 160) return 1e-6 * (1 + t % 3);
  const double v = fz_double(in);
  /* An integral double is an integer parameter (nlSolverParameterd): the same caps. */
  return v >= 0 && v <= INT32_MAX && v == (double)(NLint)v ? (double)capped(p, (NLint)v) : v;
}

static void check_error(void) {
  const int e = nlGetErrorCNC();
  if (e > 0 || e < CNC_ERR_NO_FP64) {
    fprintf(stderr, "fuzz_opennl: nlGetErrorCNC() = %d is no CNC_ERR_* code\n", e);
    abort();
  }
  if (!nlGetErrorMessageCNC()) abort();
}

/* One call chosen by the input; `ctx` may be replaced (deleted and created anew). */
static void one_call(fuzz_input* in, NLContext* ctx) {
  NLint n = 0;
  nlGetIntegerv(NL_NB_VARIABLES, &n);
  const NLuint un = n > 0 ? (NLuint)n : 0;
  const uint8_t code = fz_u8(in);
  const int null = (code & 0xe0) == 0xe0;
  if (trace)
    fprintf(stderr, "op %d (byte %d), error so far %d\n", code % 24, code, nlGetErrorCNC());
  switch (code % 24) {
    case 0: {
      const uint8_t t = fz_u8(in);
      nlBegin(t < 240 ? t % 4 : fz_u32(in));
      break;
    }
    case 1: {
      const uint8_t t = fz_u8(in);
      nlEnd(t < 240 ? t % 4 : fz_u32(in));
      break;
    }
    case 2: {
      const NLenum p = fz_pname(in);
      nlSolverParameteri(p, fz_value(in, p));
      break;
    }
    case 3: {
      const NLenum p = fz_pname(in);
      nlSolverParameterd(p, fz_real(in, p));
      break;
    }
    case 4: {
      const NLenum p = fz_pname(in);
      NLint i = 0;
      NLlong l = 0;
      NLdouble d = 0;
      NLboolean b = 0;
      switch (fz_pick(in, 5)) {
        case 0:
          nlGetIntegerv(p, null ? NULL : &i);
          break;
        case 1:
          nlGetIntegervL(p, null ? NULL : &l);
          break;
        case 2:
          nlGetDoublev(p, null ? NULL : &d);
          break;
        case 3:
          nlGetBooleanv(p, null ? NULL : &b);
          break;
        default:
          nlGetIntergerv(p, null ? NULL : &i);
      }
      break;
    }
    case 5: {
      const NLenum p = fz_pname(in);
      switch (fz_pick(in, 3)) {
        case 0:
          nlEnable(p);
          break;
        case 1:
          nlDisable(p);
          break;
        default:
          (void)nlIsEnabled(p);
      }
      break;
    }
    case 6: {
      const NLenum p = fz_pname(in);
      if (code & 32) {
        NLfunc f = p == NL_FUNC_SOLVER ? (NLfunc)user_solver : (NLfunc)progress;
        nlSetFunction(p, fz_u8(in) & 1 ? f : NULL);
      } else {
        NLfunc f = NULL;
        nlGetFunction(p, null ? NULL : &f);
      }
      break;
    }
    case 7: {
      const NLuint i = fz_index(in, un), k = fz_index(in, 2);
      if (code & 32)
        nlMultiSetVariable(i, k, fz_double(in));
      else
        nlSetVariable(i, fz_double(in));
      break;
    }
    case 8: {
      const NLuint i = fz_index(in, un), k = fz_index(in, 2);
      (void)(code & 32 ? nlMultiGetVariable(i, k) : nlGetVariable(i));
      break;
    }
    case 9: {
      const NLuint i = fz_index(in, un);
      switch (fz_pick(in, 3)) {
        case 0:
          nlLockVariable(i);
          break;
        case 1:
          nlUnlockVariable(i);
          break;
        default:
          (void)nlVariableIsLocked(i);
      }
      break;
    }
    case 10:
    case 11: {
      const NLuint i = fz_index(in, un);
      nlCoefficient(i, fz_double(in));
      break;
    }
    case 12: {
      const NLuint i = fz_index(in, un), j = fz_index(in, un);
      nlAddIJCoefficient(i, j, fz_double(in));
      break;
    }
    case 13: {
      const NLuint i = fz_index(in, un), k = fz_index(in, 2);
      if (code & 32)
        nlMultiAddIRightHandSide(i, k, fz_double(in));
      else
        nlAddIRightHandSide(i, fz_double(in));
      break;
    }
    case 14:
      switch (fz_pick(in, 5)) {
        case 0:
          nlRightHandSide(fz_double(in));
          break;
        case 1: {
          const NLuint k = fz_index(in, 2);
          nlMultiRightHandSide(k, fz_double(in));
          break;
        }
        case 2:
          nlRowScaling(fz_double(in));
          break;
        case 3: {
          const NLenum p = fz_pname(in);
          nlRowParameterd(p, fz_double(in));
          break;
        }
        default: {
          const NLenum p = fz_pname(in);
          nlRowParameteri(p, (NLint)fz_u32(in));
        }
      }
      break;
    case 15: {
      const NLuint i = fz_index(in, un);
      nlSetRowLength(i, fz_u8(in) < 250 ? fz_pick(in, 9) : fz_u32(in));
      break;
    }
    case 16:
    case 17:
      (void)nlSolve();
      break;
    case 18: { /* variable buffers: aligned strides, room for max_n variables */
      const NLuint k = fz_index(in, max_systems);
      const NLuint stride = 8 * fz_pick(in, 4); /* 0: sizeof(double) */
      const NLenum which = fz_u8(in) < 240 ? NL_VARIABLES_BUFFER : fz_u32(in);
      nlBindBuffer(which, k, null || k > max_systems ? NULL : buffers[k], stride);
      break;
    }
    case 19:
      switch (fz_pick(in, 6)) {
        case 0:
          nlUpdateRightHandSide(buffers[0]);
          break;
        case 1:
          nlMatrixMode(fz_u8(in) & 1 ? NL_STIFFNESS_MATRIX : NL_MASS_MATRIX);
          break;
        case 2:
          nlEigenSolverParameterd(fz_pname(in), fz_double(in));
          break;
        case 3: { /* OpenNL's eigen parameters include NL_NB_VARIABLES: capped the same way */
          const NLenum p = fz_pname(in);
          nlEigenSolverParameteri(p, fz_value(in, p));
          break;
        }
        case 4:
          nlEigenSolve();
          break;
        default:
          (void)nlGetEigenValue(fz_u32(in));
      }
      break;
    case 20: {
      const char* e = extensions[fz_pick(in, sizeof extensions / sizeof extensions[0])];
      if (code & 32) {
        (void)nlInitExtension(e);
      } else if (code & 64) {
        (void)nlExtensionIsInitialized(e);
      } else {
        char* argv[] = {"prog", "nl:CNC=true", NULL, "nl:OPENCL=true", "nl:", "nl:x=false"};
        nlInitialize((int)fz_pick(in, 7), argv);
      }
      break;
    }
    case 21:
      switch (fz_pick(in, 3)) {
        case 0:
          check_error();
          break;
        case 1:
          nlClearErrorCNC();
          if (nlGetErrorCNC() != 0) abort();
          break;
        default:
          nlPrintfFuncs(silent_printf, silent_fprintf);
      }
      break;
    case 22: /* a new context in place of the current one */
      nlDeleteContext(*ctx);
      if (nlGetCurrent() != NULL) abort();
      *ctx = code & 32 ? nlNewContextLegacy3() : nlNewContext();
      if (!*ctx || nlGetCurrent() != *ctx) abort();
      break;
    default: /* no current context: calls say so and do nothing */
      nlMakeCurrent(NULL);
      nlBegin(NL_SYSTEM);
      nlSolverParameteri(NL_NB_VARIABLES, 3);
      if (nlGetVariable(0) != 0.0 || nlSolve() != NL_FALSE) abort();
      if (nlGetErrorCNC() != CNC_ERR_NO_CONTEXT || !nlGetErrorMessageCNC()) abort();
      nlMakeCurrent(*ctx);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_input in = {data, size, 0};
  memset(buffers, 0, sizeof buffers); /* what one input left there is not the next one's */
  NLContext ctx = fz_u8(&in) & 1 ? nlNewContextLegacy3() : nlNewContext();
  if (!ctx) abort();
  for (int op = 0; op < max_ops && fz_left(&in); ++op) {
    one_call(&in, &ctx);
    check_error();
  }
  nlDeleteContext(ctx);
  return 0;
}
