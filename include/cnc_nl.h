/*
 * cnc_nl.h -- OpenNL 4 compatibility for cnc.
 *
 * A program written for OpenNL (nl.h, nl_ext.h) compiles after changing only its include to
 * <cnc_nl.h> and links with -lcnc_opennl -lcnc. Every nl* function, NL* type and NL_* constant of
 * OpenNL 4 is here with OpenNL's numeric values; the calls run on cnc (Jacobi-preconditioned CG on
 * CUDA, OpenCL or the CPU, chosen as cnc chooses: CNC_BACKEND from the environment, or
 * nlInitExtension below).
 *
 *     #include <cnc_nl.h>
 *
 *     nlNewContext();                                    // new context, made current
 *     nlSolverParameteri(NL_NB_VARIABLES, 2);
 *     nlSolverParameteri(NL_LEAST_SQUARES, NL_TRUE);     // fit y = a t + b
 *     nlBegin(NL_SYSTEM);
 *     nlBegin(NL_MATRIX);
 *     for (int k = 0; k < 10; ++k) {
 *         nlBegin(NL_ROW);
 *         nlCoefficient(0, k);
 *         nlCoefficient(1, 1.0);
 *         nlRightHandSide(3.0 * k + 1.0);
 *         nlEnd(NL_ROW);
 *     }
 *     nlEnd(NL_MATRIX);
 *     nlEnd(NL_SYSTEM);
 *     nlSolve();
 *     double a = nlGetVariable(0), b = nlGetVariable(1);
 *     nlDeleteContext(nlGetCurrent());
 *
 * What matches OpenNL: the life cycle and its states; the initial guess is the variables' values
 * at nlBegin(NL_MATRIX); stopping test ||r||^2 <= eps^2 ||b||^2 (NL_THRESHOLD, default 1e-6);
 * NL_SOLVER_DEFAULT: CG + Jacobi for symmetric or least-squares systems, BiCGSTAB for others,
 * with 5 n iterations (n free variables); an explicit NL_SOLVER keeps 100 iterations
 * (NL_MAX_ITERATIONS) and no preconditioner unless set; CG iterates on past indefinite
 * curvature (a warning is printed) and x is always the last iterate; NL_BICGSTAB, NL_GMRES
 * (restarted every NL_INNER_ITERATIONS steps, 5 by default); locked variables; least squares;
 * nlRowScaling
 * (applies to the next row) and NL_NORMALIZE_ROWS (row divided by its L2 norm, locked coefficients
 * included); nlRightHandSide overwrites the current row's value until nlEnd(NL_ROW); in plain mode
 * the k-th row is the equation of the k-th free variable; NL_NB_SYSTEMS and the Multi* calls;
 * NL_VARIABLES_BUFFER + nlBindBuffer (copied in at nlBegin(NL_MATRIX) and nlSolve, out after
 * nlSolve, with a byte stride); the statistics NL_ERROR (true relative residual) and
 * NL_USED_ITERATIONS of the last system, NL_ELAPSED_TIME, NL_GFLOPS, NL_NNZ (with a pattern:
 * its slots, one triangle when NL_SYMMETRIC); NL_MATRIX_PATTERN with OpenNL's slot positions
 * (nlAddIJCoefficient's result, nlAddIJCoefficientAt, nlSetIJCoefficientAtRowOffset); the
 * current context is process-wide (each call makes it current in cnc on the calling thread;
 * as in OpenNL, two threads must not call at once). nlSolve returns NL_FALSE, with a message,
 * when the true residual misses NL_THRESHOLD although the iteration converged (e.g. in single
 * precision, NL_CNC_FLOAT_*). nl_matrix.h (cnc_nl_matrix.h): CRS and dynamic sparse matrices,
 * products, function and product matrices; nl_64.h (cnc_nl_64.h); nl_private.h's allocation
 * macros (cnc_nl_private.h).
 *
 * What differs:
 * - Misuse never aborts: the call prints "OpenNL (cnc): <message>" through nlPrintfFuncs' fprintf
 *   (stderr by default), does nothing, and the program carries on. The first error is kept:
 *   nlGetErrorCNC() / nlGetErrorMessageCNC() / nlClearErrorCNC() (cnc extensions).
 * - NL_GMRES with NL_PRECOND_JACOBI set runs Jacobi-preconditioned (OpenNL's GMRES drops it), and
 *   a BiCGSTAB or GMRES breakdown makes nlSolve print it and return NL_FALSE.
 * - NL_PRECOND_SSOR is SSOR with NL_OMEGA (default 1.5), on cnc's CPU backend (its sweeps are
 *   sequential; nlInitExtension("CUDA"/"OPENCL") with it makes nlSolve fail).
 * - nlSetFunction(NL_FUNC_SOLVER, f) (f: OpenNL's NLSolverFunc, NLboolean f(void)) makes NL_SOLVER
 *   NL_SOLVER_USER, as OpenNL, and nlSolve (system constructed) calls f in place of the solver and
 *   returns its result. OpenNL's f writes OpenNL's internal x; here f reads the matrix with
 *   nlGetCurrentMatrix and writes the variables with nlSetVariable / nlMultiSetVariable.
 *   nlSetFunction(NL_FUNC_SOLVER, NULL) gives cnc's solver back (NL_SOLVER_DEFAULT);
 *   NL_SOLVER_USER without a function makes nlSolve fail with a message.
 * - nlUpdateRightHandSide(values) does what OpenNL documents: b of the constructed system (its
 *   free rows: least squares, Aᵀb) becomes values[0 .. free variables - 1]; the matrix, and a
 *   direct solver's factorization, are kept, so the next nlSolve solves the new system without
 *   assembling (a solved state goes back to constructed). OpenNL's code copies the values into its
 *   solution vector instead (the next solve's starting point). NL_NB_SYSTEMS must be 1, as in
 *   OpenNL; values not finite are refused (b unchanged).
 * - NL_FUNC_PROGRESS is called by the iterative solvers only: never by NL_CHOLMOD_EXT and the
 *   SuperLU ids (nor by nlMatrixFactorize), as in OpenNL, whose direct solvers do not call it.
 * - The eigen solver (OpenNL's ARPACK extension) is cnc's cncEigenSolveCSR: nlInitExtension
 *   ("ARPACK") answers whether ARPACK loads; NL_EIGEN_SOLVER must be NL_ARPACK_EXT and be set (or
 *   nlMatrixMode(NL_MASS_MATRIX) called) before nlBegin(NL_MATRIX), from when the stiffness
 *   matrix's coefficients are recorded for nlEigenSolve; the mass matrix's go to it after
 *   nlMatrixMode(NL_MASS_MATRIX) (none: M = I). Both must be symmetric (all their entries are
 *   used, both triangles); no variable may be locked, no least squares. nlEigenSolve finds
 *   NL_NB_EIGENS (= NL_NB_SYSTEMS) pairs: the nearest NL_EIGEN_SHIFT with NL_EIGEN_SHIFT_INVERT,
 *   else the smallest; nlGetEigenValue(i) ascending, eigenvector i in nlMultiGetVariable(j, i)
 *   (and bound buffers), M-orthonormal. NL_EIGEN_THRESHOLD sets ARPACK's tolerance only (default
 *   0: machine precision; NL_THRESHOLD of linear solves is separate), NL_EIGEN_MAX_ITERATIONS its
 *   restarts. When ARPACK does not converge nlEigenSolve prints it and no eigenvalue is kept.
 * - nlSetFunction(NL_FUNC_MATRIX, f): nlSolve applies f (y = A x over the free variables, as
 *   OpenNL's function matrix) in place of the assembled matrix, with the right-hand side the
 *   assembly built; nlSetFunction(NL_FUNC_PRECONDITIONER, f) applies f as M⁻¹ and selects
 *   NL_PRECOND_USER. Such solves run on the host (cnc.h, cncSetOperator). As in OpenNL, a matrix
 *   function cannot be Jacobi-preconditioned: with NL_PRECOND_JACOBI (the NL_SOLVER_DEFAULT
 *   choice) nlSolve fails with a message (OpenNL asserts); set NL_PRECOND_NONE or a function.
 * - nlInitExtension("CUDA" | "OPENCL" | "CNC") answers whether that cnc backend can run here and
 *   selects it for the current and the next contexts ("CNC": cnc's automatic choice).
 *   nlInitExtension("SUPERLU" | "CHOLMOD") answers whether cnc's direct solver can load its
 *   library (cncDirectSolverAvailable); NL_SOLVER = NL_SUPERLU_EXT, NL_PERM_SUPERLU_EXT,
 *   NL_SYMMETRIC_SUPERLU_EXT (all three: SuperLU with COLAMD) or NL_CHOLMOD_EXT make nlSolve
 *   factor and solve (CNC_SUPERLU / CNC_CHOLMOD), nlMatrixFactorize too (cnc_nl_matrix.h). Other
 *   extensions (MKL, AMGCL, ...) answer NL_FALSE, with a message; "ARPACK": above.
 *
 * OpenNL 3.x programs: #define CNC_NL_LEGACY_3 before including. This declares the 3.x spellings
 * (nlRowParameterd / nlRowParameteri with NL_RIGHT_HAND_SIDE / NL_ROW_SCALING, nlGetIntergerv, the
 * NL_CNC_* solver ids, which select cnc's matrix format and precision) and makes nlNewContext
 * create contexts with 3.x's plain-mode convention: a row states sum_j a_j x_j + c = 0, so the
 * right-hand side is b = -c. Least-squares rows keep (sum_j a_j x_j - c)^2, as in 3.x.
 */
#ifndef CNC_NL_H
#define CNC_NL_H

#include <stdint.h>
#include <stdio.h>

#if defined(_WIN32)
#if defined(CNC_NL_BUILDING_LIBRARY)
#define NLAPI __declspec(dllexport)
#else
#define NLAPI __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(CNC_NL_BUILDING_LIBRARY)
#define NLAPI __attribute__((visibility("default")))
#else
#define NLAPI
#endif
#define NLAPIENTRY

#ifdef __cplusplus
extern "C" {
#endif

#define NL_VERSION_4_0 1

/* ---- Types (OpenNL's) ------------------------------------------------------------------------ */
typedef unsigned int NLenum;
typedef unsigned char NLboolean;
typedef unsigned int NLbitfield;
typedef void NLvoid;
typedef signed char NLbyte;
typedef short NLshort;
typedef int32_t NLint;
typedef unsigned char NLubyte;
typedef unsigned short NLushort;
typedef uint32_t NLuint;
typedef int64_t NLlong;
typedef uint64_t NLulong;
typedef int NLsizei;
typedef float NLfloat;
typedef double NLdouble;
typedef void (*NLfunc)(void);
typedef void* NLContext;
/** OpenNL's abstract matrix (its struct is in cnc_nl_matrix.h, OpenNL's nl_matrix.h). */
typedef struct NLMatrixStruct* NLMatrix;

#define NL_FALSE 0x0
#define NL_TRUE 0x1

/* ---- Solver parameters (nlSolverParameteri/d, nlGet*) ---------------------------------------- */
#define NL_SOLVER 0x100
#define NL_NB_VARIABLES 0x101
#define NL_LEAST_SQUARES 0x102
#define NL_MAX_ITERATIONS 0x103
#define NL_THRESHOLD 0x104
#define NL_OMEGA 0x105 /* SSOR's relaxation factor, 0 < omega < 2 (1.5) */
#define NL_SYMMETRIC 0x106
#define NL_USED_ITERATIONS 0x107
#define NL_ERROR 0x108
#define NL_INNER_ITERATIONS 0x109 /* GMRES restart (>= 1, default 5) */
#define NL_ELAPSED_TIME 0x10a
#define NL_PRECONDITIONER 0x10b
#define NL_GFLOPS 0x10c
#define NL_NNZ 0x10d
#define NL_NB_SYSTEMS 0x10e

/* ---- Solvers -----------------------------------------------------------------------------------
 */
#define NL_SOLVER_DEFAULT 0x000
#define NL_CG 0x200
#define NL_BICGSTAB 0x201 /* BiCGSTAB (NL_PRECONDITIONER: none unless set) */
#define NL_GMRES 0x202    /* restarted GMRES (NL_INNER_ITERATIONS) */

/* ---- Preconditioners ---------------------------------------------------------------------------
 */
#define NL_PRECOND_NONE 0x000
#define NL_PRECOND_JACOBI 0x300
#define NL_PRECOND_SSOR 0x301 /* symmetric SOR (CPU backend) */
#define NL_PRECOND_USER 0x303 /* nlSetFunction(NL_FUNC_PRECONDITIONER, f) */

/* ---- Flags for nlEnable / nlDisable / nlIsEnabled ----------------------------------------------
 */
#define NL_NORMALIZE_ROWS 0x400
#define NL_VERBOSE 0x401
#define NL_NO_VARIABLES_INDIRECTION 0x402 /* accepted (a hint in OpenNL) */

/* ---- Row parameters (OpenNL 3 spelling, kept by OpenNL 4's headers) ---------------------------
 */
#define NL_RIGHT_HAND_SIDE 0x500
#define NL_ROW_SCALING 0x501

/* ---- Function pointers -------------------------------------------------------------------------
 */
#define NL_FUNC_SOLVER 0x600
#define NL_FUNC_MATRIX 0x601
#define NL_FUNC_PRECONDITIONER 0x602
#define NL_FUNC_PROGRESS \
  0x603 /* supported: void f(NLuint it, NLuint max_it, double err2, double max_err2) */

/* ---- Primitives --------------------------------------------------------------------------------
 */
#define NL_SYSTEM 0x0
#define NL_MATRIX 0x1
#define NL_ROW 0x2
#define NL_MATRIX_PATTERN 0x3 /* OpenNL's CRS pattern: nlSetRowLength, then slots */

/* ---- Buffers -----------------------------------------------------------------------------------
 */
#define NL_VARIABLES_BUFFER 0x1000

/* ---- Eigen solver (cncEigenSolveCSR through ARPACK: see "What differs" above) ------------------
 */
#define NL_STIFFNESS_MATRIX 0x3001
#define NL_MASS_MATRIX 0x3002
#define NL_NB_EIGENS NL_NB_SYSTEMS
#define NL_EIGEN_MAX_ITERATIONS NL_MAX_ITERATIONS
#define NL_EIGEN_THRESHOLD NL_THRESHOLD
#define NL_EIGEN_SOLVER 0x2000
#define NL_EIGEN_SHIFT 0x2001
#define NL_EIGEN_SHIFT_INVERT 0x2002

/* ---- nl_ext.h: optional extensions (SuperLU, CHOLMOD, ARPACK in cnc; the others fail cleanly) -
 */
#define NL_SUPERLU_EXT 0x210
#define NL_PERM_SUPERLU_EXT 0x211
#define NL_SYMMETRIC_SUPERLU_EXT 0x212
#define NL_SOLVER_USER 0x213
#define NL_CHOLMOD_EXT 0x214
#define NL_ARPACK_EXT 0x215
#define NL_AMGCL_EXT 0x216
#define NL_CUDA_PRECOND_ILU_EXT 0x220

/* ---- Contexts ----------------------------------------------------------------------------------
 */
/** Creates a context (a cnc context underneath) and makes it current (process-wide). */
NLAPI NLContext NLAPIENTRY nlNewContext(void);
NLAPI void NLAPIENTRY nlDeleteContext(NLContext context);
NLAPI void NLAPIENTRY nlMakeCurrent(NLContext context);
NLAPI NLContext NLAPIENTRY nlGetCurrent(void);
/** "CUDA", "OPENCL", "CNC": whether that cnc backend can run here (and selects it). Else NL_FALSE.
 */
NLAPI NLboolean NLAPIENTRY nlInitExtension(const char* extension);
NLAPI NLboolean NLAPIENTRY nlExtensionIsInitialized(const char* extension);
/** Parses nl:<extension>=true|false arguments and initializes those extensions. */
NLAPI void NLAPIENTRY nlInitialize(int argc, char** argv);

/* ---- Parameters --------------------------------------------------------------------------------
 */
NLAPI void NLAPIENTRY nlSolverParameterd(NLenum pname, NLdouble param);
NLAPI void NLAPIENTRY nlSolverParameteri(NLenum pname, NLint param);
NLAPI void NLAPIENTRY nlGetBooleanv(NLenum pname, NLboolean* params);
NLAPI void NLAPIENTRY nlGetDoublev(NLenum pname, NLdouble* params);
NLAPI void NLAPIENTRY nlGetIntegerv(NLenum pname, NLint* params);
NLAPI void NLAPIENTRY nlGetIntegervL(NLenum pname, NLlong* params);
NLAPI void NLAPIENTRY nlEnable(NLenum pname);
NLAPI void NLAPIENTRY nlDisable(NLenum pname);
NLAPI NLboolean NLAPIENTRY nlIsEnabled(NLenum pname);

/* ---- Function pointers -------------------------------------------------------------------------
 */
NLAPI void NLAPIENTRY nlSetFunction(NLenum pname, NLfunc param);
NLAPI void NLAPIENTRY nlGetFunction(NLenum pname, NLfunc* param);

/* ---- Variables ---------------------------------------------------------------------------------
 */
NLAPI void NLAPIENTRY nlSetVariable(NLuint i, NLdouble value);
NLAPI void NLAPIENTRY nlMultiSetVariable(NLuint i, NLuint k, NLdouble value);
NLAPI NLdouble NLAPIENTRY nlGetVariable(NLuint i);
NLAPI NLdouble NLAPIENTRY nlMultiGetVariable(NLuint i, NLuint k);
NLAPI void NLAPIENTRY nlLockVariable(NLuint index);
NLAPI void NLAPIENTRY nlUnlockVariable(NLuint index);
NLAPI NLboolean NLAPIENTRY nlVariableIsLocked(NLuint index);

/* ---- Begin / End and assembly ------------------------------------------------------------------
 */
NLAPI void NLAPIENTRY nlBegin(NLenum primitive);
NLAPI void NLAPIENTRY nlEnd(NLenum primitive);
NLAPI void NLAPIENTRY nlSetRowLength(NLuint i, NLuint n);
NLAPI void NLAPIENTRY nlCoefficient(NLuint i, NLdouble value);
/** a_ij += value. With a pattern (NL_MATRIX_PATTERN): returns the slot used (OpenNL's position in
 * the CRS pattern: row i's slots follow the lengths of the rows before it), for
 * nlAddIJCoefficientAt; a symmetric pattern (NL_SYMMETRIC) keeps the lower triangle, j <= i, and
 * drops j > i, as OpenNL. Without a pattern: (NLulong)-1. */
NLAPI NLulong NLAPIENTRY nlAddIJCoefficient(NLuint i, NLuint j, NLdouble value);
/** a_ij += value in the slot `index` that nlAddIJCoefficient returned (pattern only). */
NLAPI void NLAPIENTRY nlAddIJCoefficientAt(NLuint i, NLuint j, NLdouble value, NLulong index);
/** a_ij = value in the row_offset-th slot of row i (pattern only). */
NLAPI void NLAPIENTRY nlSetIJCoefficientAtRowOffset(NLuint i, NLuint j, NLdouble value,
                                                    NLuint row_offset);
NLAPI void NLAPIENTRY nlAddIRightHandSide(NLuint i, NLdouble value);
NLAPI void NLAPIENTRY nlMultiAddIRightHandSide(NLuint i, NLuint k, NLdouble value);
NLAPI void NLAPIENTRY nlRightHandSide(NLdouble value);
NLAPI void NLAPIENTRY nlMultiRightHandSide(NLuint k, NLdouble value);
NLAPI void NLAPIENTRY nlRowScaling(NLdouble value);

/* ---- Solve -------------------------------------------------------------------------------------
 */
/** NL_TRUE when the solver ran and ended converged, at the iteration limit or stagnated. */
NLAPI NLboolean NLAPIENTRY nlSolve(void);
/** Not provided (cnc needs a new nlBegin(NL_MATRIX) to change the right-hand side). */
NLAPI void NLAPIENTRY nlUpdateRightHandSide(NLdouble* values);

/* ---- Buffers -----------------------------------------------------------------------------------
 */
/** Binds variable storage of system k: element i lives at (char*)addr + i*stride (a double). */
NLAPI void NLAPIENTRY nlBindBuffer(NLenum buffer, NLuint k, void* addr, NLuint stride);

/* ---- Eigen solver (ARPACK, through cncEigenSolveCSR) --------------------------------------------
 */
NLAPI void NLAPIENTRY nlMatrixMode(NLenum matrix);
NLAPI void NLAPIENTRY nlEigenSolverParameterd(NLenum pname, NLdouble val);
NLAPI void NLAPIENTRY nlEigenSolverParameteri(NLenum pname, NLint val);
NLAPI void NLAPIENTRY nlEigenSolve(void);
NLAPI double NLAPIENTRY nlGetEigenValue(NLuint i);

/* ---- Messages ----------------------------------------------------------------------------------
 */
typedef int (*NLprintfFunc)(const char* format, ...);
typedef int (*NLfprintfFunc)(FILE* out, const char* format, ...);
NLAPI void NLAPIENTRY nlPrintfFuncs(NLprintfFunc f1, NLfprintfFunc f2);

/** The current context's matrix after nlEnd(NL_MATRIX), as OpenNL's M: the system's matrix over
 * the free variables (row and column k: the k-th unlocked variable; least squares: AᵀA; a
 * symmetric pattern: both triangles), an NL_MATRIX_CRS copy of cnc's assembled matrix, or with
 * nlSetFunction(NL_FUNC_MATRIX, f) the function matrix of f (NL_MATRIX_FUNCTION). Use it with
 * nlMultMatrixVector, nlMatrixNNZ or its CRS arrays (cnc_nl_matrix.h; a program built with
 * GARGANTUA gets the 64-bit layout). The context owns it, as OpenNL's: do not nlDeleteMatrix it;
 * it stays valid until the next nlBegin(NL_MATRIX), nlSetFunction(NL_FUNC_MATRIX) or
 * nlDeleteContext. Before nlEnd(NL_MATRIX): NULL, with a message. */
NLAPI NLMatrix NLAPIENTRY nlGetCurrentMatrix(void);
/** nlGetCurrentMatrix for programs built with GARGANTUA (selected by the macro below): the CRS
 * copy in the 64-bit layout. */
NLAPI NLMatrix NLAPIENTRY nlGetCurrentMatrix_64(void);
#ifdef GARGANTUA
#define nlGetCurrentMatrix nlGetCurrentMatrix_64
#endif

/* ---- cnc extensions ----------------------------------------------------------------------------
 */
/** First error of the current context since its creation or nlClearErrorCNC: 0 or a CNC_ERR_*. */
NLAPI int NLAPIENTRY nlGetErrorCNC(void);
/** Message of that error ("" if none). Valid until the next nl call on this thread. */
NLAPI const char* NLAPIENTRY nlGetErrorMessageCNC(void);
NLAPI void NLAPIENTRY nlClearErrorCNC(void);
/** Creates a context with OpenNL 3.x's plain-mode sign (b = -c); what CNC_NL_LEGACY_3 selects. */
NLAPI NLContext NLAPIENTRY nlNewContextLegacy3(void);

/* ---- OpenNL 3.x spelling (opt-in) --------------------------------------------------------------
 */
#if defined(CNC_NL_LEGACY_3) || defined(CNC_NL_BUILDING_LIBRARY)
/** Sets the next row's right-hand side (NL_RIGHT_HAND_SIDE) or scaling (NL_ROW_SCALING). */
NLAPI void NLAPIENTRY nlRowParameterd(NLenum pname, NLdouble param);
NLAPI void NLAPIENTRY nlRowParameteri(NLenum pname, NLint param);
/** OpenNL 3's spelling of nlGetIntegerv. */
NLAPI void NLAPIENTRY nlGetIntergerv(NLenum pname, NLint* params);
#endif
#ifdef CNC_NL_LEGACY_3
#define nlNewContext nlNewContextLegacy3
/* OpenNL 3's solver ids of the original Concurrent Number Cruncher (NL_CNC_*): they select cnc's
 * format and precision, and CG. ELL and HYB have no cnc counterpart and run with cnc's automatic
 * format. */
#define NL_CNC_FLOAT_CRS 0x220
#define NL_CNC_FLOAT_BCRS2 0x221
#define NL_CNC_DOUBLE_CRS 0x222
#define NL_CNC_DOUBLE_BCRS2 0x223
#define NL_CNC_FLOAT_ELL 0x224
#define NL_CNC_DOUBLE_ELL 0x225
#define NL_CNC_FLOAT_HYB 0x229
#define NL_CNC_DOUBLE_HYB 0x22a
#endif

#ifdef __cplusplus
}
#endif

#endif /* CNC_NL_H */
