/*
 * cnc.h -- the Concurrent Number Cruncher, public C API.
 *
 * cnc builds and solves large sparse linear systems A x = b on whatever is present: an NVIDIA
 * GPU (CUDA), an OpenCL device, or every core and SIMD lane of the CPU. Symmetric positive
 * definite systems use a Jacobi-preconditioned conjugate gradient (the default, fused and
 * device-resident); nonsymmetric ones use BiCGSTAB or restarted GMRES (CNC_SOLVER, device-resident
 * too: only their dot products' scalars come back to the host). The API is
 * shaped like OpenNL's (nlBegin / nlCoefficient / nlEnd / nlSolve) with a `cnc` prefix; every call
 * returns a status.
 *
 * ---------------------------------------------------------------------------------------------
 * Example 1: assemble a tridiagonal system entry by entry and solve it.
 *
 *     #include <cnc.h>
 *     #include <stdio.h>
 *
 *     int main(void) {
 *         const CNCuint n = 1000;
 *         CNCcontext ctx = cncNewContext();
 *         cncMakeCurrent(ctx);
 *         cncSolverParameteri(CNC_NB_VARIABLES, (CNCint)n);
 *         cncBegin(CNC_SYSTEM);
 *         cncBegin(CNC_MATRIX);
 *         for (CNCuint i = 0; i < n; ++i) {
 *             cncAddIJCoefficient(i, i, 2.0);
 *             if (i > 0) cncAddIJCoefficient(i, i - 1, -1.0);
 *             if (i + 1 < n) cncAddIJCoefficient(i, i + 1, -1.0);
 *             cncAddIRightHandSide(i, 1.0);
 *         }
 *         cncEnd(CNC_MATRIX);
 *         cncEnd(CNC_SYSTEM);
 *         if (cncSolve() != CNC_OK) { fprintf(stderr, "%s\n", cncGetErrorMessage()); return 1; }
 *         double x0; CNCint it;
 *         cncGetVariable(0, &x0);
 *         cncGetIntegerv(CNC_USED_ITERATIONS, &it);
 *         printf("x[0] = %g after %d iterations\n", x0, it);
 *         cncDeleteContext(ctx);
 *         return 0;
 *     }
 *
 * Example 2: least squares, row by row, with a locked variable (fit y = a + b t, a fixed at 1).
 *
 *     cncSolverParameteri(CNC_NB_VARIABLES, 2);
 *     cncSolverParameteri(CNC_LEAST_SQUARES, CNC_TRUE);
 *     cncBegin(CNC_SYSTEM);
 *     cncSetVariable(0, 1.0);
 *     cncLockVariable(0);
 *     cncBegin(CNC_MATRIX);
 *     for (int k = 0; k < 10; ++k) {                // one row per sample: a*1 + b*t = y
 *         cncBegin(CNC_ROW);
 *         cncCoefficient(0, 1.0);
 *         cncCoefficient(1, (double)k);
 *         cncRightHandSide(1.0 + 3.0 * k);
 *         cncEnd(CNC_ROW);
 *     }
 *     cncEnd(CNC_MATRIX);
 *     cncEnd(CNC_SYSTEM);
 *     cncSolve();                                   // solves AᵀA x = Aᵀb over the free variables
 *
 * Example 3: hand over a CSR matrix directly (FFI users).
 *
 *     cncSolveCSR(n, row_ptr, col_idx, values, 0, 1, b, x);
 * ---------------------------------------------------------------------------------------------
 *
 * Life cycle (a state machine per context, as in OpenNL):
 *
 *   INITIAL --Begin(SYSTEM)--> SYSTEM --Begin(MATRIX)--> MATRIX <--End(ROW)-- ROW
 *                                                          |   --Begin(ROW)-->
 *                                                     End(MATRIX)
 *                                                          v
 *   SOLVED <--Solve-- SYSTEM_CONSTRUCTED <--End(SYSTEM)-- MATRIX_CONSTRUCTED
 *     |  Solve again (same matrix, new right-hand side or initial guess)
 *     +--Begin(MATRIX)--> MATRIX (assemble a new matrix for the same variables)
 *     +--Begin(SYSTEM)--> SYSTEM (start over; variables keep their values and locks)
 *
 *   SYSTEM, SYSTEM_CONSTRUCTED or SOLVED --Begin(MATRIX_PATTERN)--> MATRIX_PATTERN
 *     --End(MATRIX_PATTERN)--> back to the state it came from (pattern-first assembly, below)
 *
 * - Structural parameters (CNC_NB_VARIABLES, CNC_NB_SYSTEMS, CNC_LEAST_SQUARES) may be set only
 *   in the INITIAL state; solver parameters may be set in any state except MATRIX and ROW.
 * - Variables can be read in every state from SYSTEM on, and set in every such state except
 *   MATRIX and ROW (while the locked values are in use); they can be locked and unlocked only in
 *   the SYSTEM state. The variables' values when Begin(MATRIX) is called are the values of the
 *   locked variables and the initial guess of the first solve; a later cncSolve starts from the
 *   variables' current values (the previous solution unless the caller set others).
 * - Plain mode (the default) assembles a square system over the free variables: row i is the
 *   equation of variable i. A coefficient on a locked variable j moves to the right-hand side
 *   (b_i -= a_ij x_j); rows of locked variables are dropped. In the row-wise API, the k-th row
 *   (counted from 0 since Begin(MATRIX)) is the equation of variable k.
 * - Least-squares mode (CNC_LEAST_SQUARES) takes any number of rows (Begin/End(ROW)) and solves
 *   the normal equations AᵀA x = Aᵀb over the free variables.
 *
 * Errors: every call returns CNC_OK (0) or a negative status code (CNC_ERR_*). The context stays
 * usable after an error; the first error is sticky (cncGetError) until cncClearError, and its
 * message names the call and the offending values (cncGetErrorMessage). Numerical outcomes
 * (max iterations reached, indefinite matrix, ...) are not errors: cncSolve returns CNC_OK and the
 * reason is read with cncGetIntegerv(CNC_REASON).
 *
 * Threads: contexts are independent, and the current context is thread-local: each thread makes
 * its own context current, and two threads working in two contexts never interfere. Threads may
 * take turns with one context (assemble on a worker, solve on the main thread: each makes it
 * current). A call that meets another thread's call on the same context is refused with
 * CNC_ERR_STATE and changes nothing ("in use by another thread"); such a refusal is not recorded
 * as the context's error, only as the thread's last message (cncGetLastErrorMessage). Getters
 * (cncGet*, cncIsEnabled, cncVariableIsLocked) may run in several threads at once. Every other
 * call, the ones that add entries included, takes the context with one atomic compare-exchange.
 *
 * Backends: CNC_BACKEND (parameter), else the CNC_BACKEND environment variable
 * (auto|cpu|opencl|cuda), else auto: CUDA, then an OpenCL GPU, then the CPU; systems of fewer
 * than 12,000 matrix entries stay on the CPU. Asking for a backend that is not available is an
 * error (CNC_ERR_BACKEND_UNAVAILABLE), never a silent fallback. CNC_NB_THREADS / the
 * CNC_NUM_THREADS environment variable set the CPU backend's thread count (0 = one per core);
 * CNC_CPU_ISA=generic|avx2|avx512 caps its SIMD level. In auto mode a GPU backend that fails
 * (device out of memory, lost device) falls back to the CPU and logs why.
 *
 * Ownership: cnc never keeps a caller's pointer past the call that received it (callbacks and
 * their user pointers excepted). Strings returned by cnc belong to cnc (see each call).
 */
#ifndef CNC_H
#define CNC_H

#include <stddef.h>
#include <stdint.h>

/* ---- Version (kept in sync with CMake's project(VERSION) by the build) --------------------- */
#define CNC_VERSION_MAJOR 0 /**< major version of this header (incompatible changes) */
#define CNC_VERSION_MINOR 1 /**< minor version (additions) */
#define CNC_VERSION_PATCH 0 /**< patch version (fixes) */
/** One number that grows with every release: major*10000 + minor*100 + patch. */
#define CNC_VERSION_NUMBER (CNC_VERSION_MAJOR * 10000 + CNC_VERSION_MINOR * 100 + CNC_VERSION_PATCH)

/* ---- Export macro ---------------------------------------------------------------------------- */
#if defined(_WIN32)
#if defined(CNC_BUILDING_LIBRARY)
#define CNC_API __declspec(dllexport)
#else
#define CNC_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) && defined(CNC_BUILDING_LIBRARY)
#define CNC_API __attribute__((visibility("default")))
#else
#define CNC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ----------------------------------------------------------------------------------- */
typedef int32_t CNCint;   /**< signed 32-bit integer */
typedef uint32_t CNCuint; /**< unsigned 32-bit index (variables, rows, columns) */
typedef int64_t CNCint64; /**< 64-bit count or offset */
typedef int CNCenum;      /**< one of the CNC_* constants below */
typedef int CNCboolean;   /**< CNC_TRUE or CNC_FALSE */
typedef int CNCstatus;    /**< CNC_OK or a negative CNC_ERR_* code */
/** Opaque handle to a context: parameters, variables, the assembled system and the backend. */
typedef struct CNCContextStruct* CNCcontext;

#define CNC_FALSE 0 /**< CNCboolean false */
#define CNC_TRUE 1  /**< CNCboolean true */

/* One constant per line: tools and bindings parse these lines. */
/* clang-format off */
/* ---- Status codes: fixed negative numbers, never reused -------------------------------------- */
#define CNC_OK 0                           /**< success */
#define CNC_ERR_STATE (-1)                 /**< call not allowed in the current state */
#define CNC_ERR_INVALID_ENUM (-2)          /**< unknown or inapplicable enum */
#define CNC_ERR_INVALID_VALUE (-3)         /**< a value outside its allowed range */
#define CNC_ERR_INDEX_OUT_OF_RANGE (-4)    /**< variable, row, column or system index too large */
#define CNC_ERR_NOT_FINITE (-5)            /**< NaN or Inf in a coefficient, right-hand side, ... */
#define CNC_ERR_SIZE_MISMATCH (-6)         /**< array sizes or counts disagree */
#define CNC_ERR_OUT_OF_MEMORY (-7)         /**< host or device allocation failed */
#define CNC_ERR_NO_CONTEXT (-8)            /**< no current context on this thread */
#define CNC_ERR_BACKEND_UNAVAILABLE (-9)   /**< the requested backend is not available here */
#define CNC_ERR_DEVICE (-10)               /**< a device or driver call failed (message says which) */
#define CNC_ERR_UNSUPPORTED (-11)          /**< valid request this build or device cannot do */
#define CNC_ERR_OVERFLOW (-12)             /**< a count would exceed what cnc can index */
#define CNC_ERR_NULL_POINTER (-13)         /**< a required pointer argument is NULL */
#define CNC_ERR_INTERNAL (-14)             /**< a bug in cnc: please report the message */
#define CNC_ERR_NO_FP64 (-15)              /**< double precision asked of a device without it */
#define CNC_ERR_CALLBACK (-16)             /**< a caller's operator (cncSetOperator) returned non-zero */

/* ---- Primitives for cncBegin / cncEnd (0x000) ------------------------------------------------ */
#define CNC_SYSTEM 0x000 /**< the whole system: matrix, right-hand sides, variables */
#define CNC_MATRIX 0x001 /**< the matrix, assembled entry by entry or row by row */
#define CNC_ROW 0x002    /**< one row: cncCoefficient entries and cncRightHandSide */
/** Pattern-first assembly (OpenNL 4's NL_MATRIX_PATTERN): row lengths first, then coefficients
 *  straight into their rows' slots. See "Pattern-first assembly" below. */
#define CNC_MATRIX_PATTERN 0x003

/* ---- Solver parameters, cncSolverParameteri/d and cncGetIntegerv/Doublev (0x100) ------------- */
#define CNC_NB_VARIABLES 0x101    /**< int: number of unknowns n (INITIAL state only) */
#define CNC_NB_SYSTEMS 0x102      /**< int: right-hand sides sharing one matrix, >= 1 (INITIAL) */
#define CNC_LEAST_SQUARES 0x103   /**< bool: solve AᵀA x = Aᵀb (INITIAL state only) */
#define CNC_SYMMETRIC 0x104       /**< bool: A is symmetric (1, default); see CNC_SOLVER_DEFAULT */
#define CNC_SOLVER 0x105          /**< CNC_SOLVER_DEFAULT, CNC_CG, CNC_BICGSTAB, CNC_GMRES, CNC_CHOLMOD, CNC_SUPERLU, CNC_CUDSS, CNC_BLOCK_CG */
#define CNC_PRECONDITIONER 0x106  /**< CNC_PRECOND_NONE, _JACOBI (default) or _SSOR */
#define CNC_MAX_ITERATIONS 0x107  /**< int > 0: iteration limit (default 5 n, at least 100) */
#define CNC_THRESHOLD 0x108       /**< double > 0: stop when ||r|| <= threshold ||b|| (1e-6) */
#define CNC_PRECISION 0x109       /**< CNC_DOUBLE (default), CNC_SINGLE or CNC_MIXED */
#define CNC_MATRIX_FORMAT 0x10A   /**< CNC_FORMAT_AUTO (default), _CSR, _BCRS2, _BCRS4, _SELL, _ZCSR, _ZSELL */
#define CNC_BACKEND 0x10B         /**< CNC_BACKEND_AUTO (default), _CPU, _OPENCL, _CUDA */
#define CNC_NB_THREADS 0x10C      /**< int >= 0: CPU threads, 0 = one per core (default) */
#define CNC_NNZ_HINT 0x10D        /**< int64 >= 0: expected coefficient count, sizes the table */
#define CNC_DEVICE_INDEX 0x10E    /**< int >= -1: device ordinal for GPU backends, -1 = auto */
#define CNC_CHECK_INTERVAL 0x10F  /**< int >= 0: GPU iterations between convergence checks, 0 = auto */
#define CNC_GMRES_RESTART 0x110   /**< int >= 1: Krylov vectors kept by GMRES before a restart (30) */
#define CNC_SSOR_OMEGA 0x111      /**< double in (0, 2): relaxation factor of CNC_PRECOND_SSOR (1.5) */
#define CNC_REORDER 0x112         /**< CNC_REORDER_AUTO (default), _NONE or _RCM: see "Reordering" */
#define CNC_EIGEN_THRESHOLD 0x113 /**< double in [0, 1): ARPACK's tolerance for cncEigenSolveCSR, 0 = machine precision (default) */

/* Values of CNC_SOLVER (0x200) */
/* CNC_SOLVER_DEFAULT: CG when A is symmetric (CNC_SYMMETRIC, default 1) or the system is least
 * squares (CNC_LEAST_SQUARES: AᵀA is), else BiCGSTAB; OpenNL's NL_SOLVER_DEFAULT rule. CNC_CG on a
 * matrix declared nonsymmetric runs CG as asked (with a CNC_LOG_INFO note). */
#define CNC_SOLVER_DEFAULT 0x200 /**< CG or BiCGSTAB by CNC_SYMMETRIC (above) */
#define CNC_CG 0x201       /**< conjugate gradient: symmetric positive definite A */
#define CNC_BICGSTAB 0x202 /**< BiCGSTAB: nonsymmetric A */
#define CNC_GMRES 0x203    /**< restarted GMRES(CNC_GMRES_RESTART): nonsymmetric A */
/* Direct solvers: A factored once by a library cnc opens at run time (Debian's libcholmod3 /
 * libsuperlu5 on the host, NVIDIA's cuDSS on a CUDA GPU; cncDirectSolverAvailable says whether it
 * is there, else a solve fails with CNC_ERR_UNSUPPORTED and changes nothing). The factorization is
 * kept while the matrix is (CNC_KEEP_MATRIX: cncSolve with new right-hand sides, cncSolveCSR with
 * arrays of the same content), so a later solve runs only the triangular solves;
 * CNC_CHOICE_REASON says which. CHOLMOD and SuperLU run on the host whatever CNC_BACKEND says,
 * cuDSS on the CUDA device CNC_DEVICE_INDEX names (CNC_BACKEND_USED reports CNC_BACKEND_CUDA);
 * all in double whatever CNC_PRECISION says, in their own fill-reducing ordering (CNC_REORDER is
 * not used), with no iterations and no progress callback; cncSolveCSRDevice refuses them
 * (CNC_ERR_UNSUPPORTED). Statistics: CNC_USED_ITERATIONS 0,
 * CNC_ERROR and CNC_TRUE_ERROR the true relative residual ||b - A x||/||b|| computed in double,
 * CNC_REASON CONVERGED when it is at most CNC_THRESHOLD, CNC_REASON_STAGNATED when it is above
 * (an ill-conditioned A; x is written), and when A cannot be factored CNC_REASON_INDEFINITE_MATRIX
 * (CHOLMOD, cuDSS on a symmetric A: not positive definite) or CNC_REASON_BREAKDOWN (SuperLU: a
 * zero pivot, A singular; cuDSS's LU when it reports one), the call returning CNC_OK with x
 * unchanged and the reason logged as a warning. cuDSS's LU may instead perturb tiny pivots (its
 * default) and factor a singular A: its x then fails the residual check (CNC_REASON_STAGNATED or
 * CNC_REASON_NOT_FINITE, x written, as for an ill-conditioned A). */
/** CHOLMOD (SuiteSparse): sparse Cholesky of a symmetric positive definite A (also the AᵀA of
 *  CNC_LEAST_SQUARES). A is checked symmetric first (|a_ij - a_ji| at most 1e-12 of the larger;
 *  else CNC_ERR_UNSUPPORTED naming the entry); CHOLMOD reads its lower triangle. */
#define CNC_CHOLMOD 0x204
/** SuperLU: sparse LU with partial pivoting of a general square A, columns ordered by COLAMD. At
 *  most 2^31 - 1 entries (SuperLU indexes with int; else CNC_ERR_UNSUPPORTED). */
#define CNC_SUPERLU 0x205
/** cuDSS (NVIDIA, the nvidia-cudss-cu13 wheel): sparse Cholesky of a symmetric A (checked as for
 *  CHOLMOD; its upper triangle is handed over; not positive definite: no factorization, as
 *  CHOLMOD) and LU of any other square A, factored and solved on a CUDA GPU; A and b go up, x
 *  comes down. Opened at run time: libcudss.so.1 where the loader finds it, or the file named by
 *  the environment variable CNC_CUDSS_LIBRARY (its folder's libcublas.so.13 and libnvrtc.so.13
 *  are loaded with it, the wheels' layout). At most 2^31 - 1 entries (cuDSS indexes with int). */
#define CNC_CUDSS 0x207
/** Block conjugate gradient (O'Leary): the CNC_NB_SYSTEMS = k right-hand sides of a symmetric
 *  positive definite A share one Krylov space, so each iteration searches along up to k
 *  directions at once and takes fewer iterations than k separate CGs (CNC_CG with k systems runs
 *  k independent CGs in lock step). Breakdown-free (Ji & Li 2017): the search block is
 *  orthonormalized each iteration and linearly dependent directions are dropped, so dependent
 *  right-hand sides (b2 = 2 b1) and systems converging at different iterations are solved. Each
 *  system stops when its own ||r|| <= CNC_THRESHOLD ||b|| (its true residual checked as CG's);
 *  cncGetSystemIntegerv / cncGetSystemDoublev give each system's iterations, residuals and
 *  reason. With k = 1 it is CG. Preconditioners: CNC_PRECOND_NONE and CNC_PRECOND_JACOBI (a
 *  solve with another fails with CNC_ERR_UNSUPPORTED and changes nothing). It runs on every
 *  backend and with a matrix operator (cncSolveOperator), not on device arrays
 *  (cncSolveCSRDevice). */
#define CNC_BLOCK_CG 0x206

/* Values of CNC_PRECONDITIONER (0x300) */
#define CNC_PRECOND_NONE 0x300   /**< no preconditioner */
#define CNC_PRECOND_JACOBI 0x301 /**< diagonal (Jacobi); a zero diagonal entry counts as 1 */
/** Symmetric SOR with relaxation CNC_SSOR_OMEGA: M = (D/w + L) (w/(2-w)) D^-1 (D/w + U). Its
 * triangular sweeps are sequential, so it runs on the CPU backend: CNC_BACKEND_AUTO then picks
 * the CPU, and a solve on an explicit GPU backend fails with CNC_ERR_UNSUPPORTED (nothing is
 * changed). CG runs it as a preconditioned CG; BiCGSTAB and GMRES as right preconditioner. */
#define CNC_PRECOND_SSOR 0x302
/** The caller's preconditioner z = M⁻¹ r, set with cncSetOperator(CNC_OPERATOR_PRECONDITIONER),
 * which also selects it (as OpenNL's nlSetFunction(NL_FUNC_PRECONDITIONER) does); it may be
 * selected again later only while that operator is set. The solve then runs on the host, where
 * the caller's function reads and writes the vectors (cncSolveOperator). */
#define CNC_PRECOND_USER 0x303

/* Values of CNC_PRECISION (0x400) */
#define CNC_DOUBLE 0x400 /**< double matrix and vectors */
#define CNC_SINGLE 0x401 /**< float matrix and vectors; reductions in double */
#define CNC_MIXED 0x402  /**< float matrix values, double vectors and reductions */

/* Values of CNC_MATRIX_FORMAT (0x500) */
#define CNC_FORMAT_AUTO 0x500  /**< the format that moves the fewest bytes per SpMV */
#define CNC_FORMAT_CSR 0x501   /**< compressed sparse rows */
#define CNC_FORMAT_BCRS2 0x502 /**< 2x2 blocks (rows padded to a multiple of 2) */
#define CNC_FORMAT_BCRS4 0x503 /**< 4x4 blocks (rows padded to a multiple of 4) */
/** Sliced ELLPACK: slices of 32 rows, each padded to its longest row and stored column-major
 *  (one GPU thread per row, coalesced, no row offsets). AUTO picks it on GPU backends when the
 *  padding adds at most 10% bytes over CSR; the CPU backend runs it when asked. */
#define CNC_FORMAT_SELL 0x504
/** Complex CSR, for cncSolveCSRComplex only: one column index and one (re, im) pair per complex
 *  entry (20 bytes in double, 12 in CNC_SINGLE / CNC_MIXED, where the real-equivalent BCRS 2x2
 *  reads 36 / 20), the product computed as complex multiplies. AUTO and CNC_FORMAT_CSR pick it for
 *  complex systems. Every other solve (real matrices: cncSolve, cncSolveCSR, cncSolveCSRDevice,
 *  cncSolveOperator) refuses it with CNC_ERR_UNSUPPORTED, changing nothing, as it refuses other
 *  settings it cannot honour. */
#define CNC_FORMAT_ZCSR 0x505
/** Complex sliced ELLPACK, for cncSolveCSRComplex on the CUDA backend: slices of 32 complex rows,
 *  each padded to its longest row and stored column-major (one thread a complex row, coalesced
 *  16-byte pairs, no row offsets). AUTO picks it on CUDA when the padding adds at most 40 % bytes
 *  over ZCSR (stencils, meshes; not rows of very different lengths). Forced on another backend, or for a real matrix, the
 *  solve is refused with CNC_ERR_UNSUPPORTED, changing nothing. */
#define CNC_FORMAT_ZSELL 0x506

/* Values of CNC_BACKEND (0x600) */
#define CNC_BACKEND_AUTO 0x600   /**< CNC_BACKEND environment, else by size: see README */
#define CNC_BACKEND_CPU 0x601    /**< every core and SIMD lane of the host */
#define CNC_BACKEND_OPENCL 0x602 /**< an OpenCL device (ICD loaded at run time) */
#define CNC_BACKEND_CUDA 0x603   /**< an NVIDIA GPU (driver opened at run time) */

/* Values of CNC_REORDER (0xC00): the unknowns' order inside cnc. x, b, locks and every result
 * stay in the caller's numbering whatever is chosen. */
#define CNC_REORDER_AUTO 0xC00 /**< reverse Cuthill-McKee when the pattern's locality is poor and the solve is large enough to repay it */
#define CNC_REORDER_NONE 0xC01 /**< the caller's order */
#define CNC_REORDER_RCM 0xC02  /**< always reverse Cuthill-McKee (cnc's parallel one, the same order for any thread count) */

/* Operators for cncSetOperator (0xD00) */
#define CNC_OPERATOR_MATRIX 0xD00         /**< y = A x: the matrix, applied by the caller */
#define CNC_OPERATOR_PRECONDITIONER 0xD01 /**< y = M⁻¹ x: the preconditioner (CNC_PRECOND_USER) */

/* Values of `which` for cncEigenSolveCSR (0xE00) */
#define CNC_EIGEN_SMALLEST 0xE00 /**< the nev smallest eigenvalues (Lanczos on K, or on M⁻¹K) */
#define CNC_EIGEN_LARGEST 0xE01  /**< the nev largest eigenvalues */
#define CNC_EIGEN_NEAREST 0xE02  /**< the nev eigenvalues nearest sigma: shift-invert, K - sigma M factored */

/* ---- Flags for cncEnable / cncDisable / cncIsEnabled (0x700) --------------------------------- */
#define CNC_VERBOSE 0x701        /**< log solver progress and decisions too (to the log callback, else stderr) */
#define CNC_NORMALIZE_ROWS 0x702 /**< divide each row (and its rhs) by its coefficients' L2 norm */
#define CNC_KEEP_MATRIX 0x703    /**< on by default: keep the prepared matrix, see below */

/* ---- Read-only statistics for cncGetIntegerv / cncGetDoublev (0x800) ------------------------- */
#define CNC_USED_ITERATIONS 0x801   /**< int: iterations of the last solve (max over systems) */
#define CNC_ERROR 0x802             /**< double: final ||r||/||b|| (recursive, max over systems) */
#define CNC_TRUE_ERROR 0x803        /**< double: final ||b - A x||/||b|| in double (max over systems) */
#define CNC_REASON 0x804            /**< int: CNC_REASON_* of the last solve (worst over systems) */
#define CNC_ELAPSED_TIME 0x805      /**< double: seconds of the last cncSolve, everything included */
#define CNC_ASSEMBLY_TIME 0x806     /**< double: seconds from Begin(MATRIX) to End(MATRIX) */
#define CNC_CONVERSION_TIME 0x807   /**< double: seconds of host conversion: COO or caller's CSR -> CSR -> chosen format */
#define CNC_UPLOAD_TIME 0x808       /**< double: seconds moving the matrix to the backend (and, on CUDA, building SELL there) */
#define CNC_SOLVE_TIME 0x809        /**< double: seconds in the iterations */
#define CNC_GFLOPS 0x80A            /**< double: useful GFLOP/s of the iterations */
#define CNC_BYTES_PER_ITERATION 0x80B /**< int64 (via Doublev or Integerv): bytes one iteration moves (CG: its minimum; BiCGSTAB, GMRES: counted from the device operations they issued) */
#define CNC_NNZ 0x80C               /**< int64: stored nonzeros of the assembled matrix */
#define CNC_BACKEND_USED 0x80D      /**< int: CNC_BACKEND_* that ran the last solve */
#define CNC_FORMAT_USED 0x80E       /**< int: CNC_FORMAT_* used by the last solve */
#define CNC_ZERO_DIAGONALS 0x80F    /**< int: zero, absent or subnormal diagonal entries (Jacobi used 1) */
#define CNC_STATE 0x810             /**< int: CNC_STATE_* of the context */
#define CNC_GBYTES_PER_SECOND 0x811 /**< double: bytes moved by the iterations / solve time */
#define CNC_BLOCK_FILL_RATIO 0x812  /**< double: stored/true nonzeros of the format used (>= 1) */
#define CNC_TRUE_ERROR_MIN 0x813    /**< double: final true relative residual, min over systems */
#define CNC_SOLVER_USED 0x814       /**< int: CNC_CG, CNC_BICGSTAB, CNC_GMRES, CNC_CHOLMOD, CNC_SUPERLU, CNC_CUDSS or CNC_BLOCK_CG: the method the last solve ran */
#define CNC_REORDER_USED 0x815      /**< int: CNC_REORDER_NONE or CNC_REORDER_RCM: the ordering the last solve ran in */
#define CNC_REORDER_TIME 0x816      /**< double: seconds spent computing and applying that ordering (0 when none or kept) */
#define CNC_LONG_ROWS 0x817         /**< int64: rows the SpMV cut into pieces (long rows), 0 when none */

/* Values of CNC_REASON (0x900), worst first when several systems are solved together */
#define CNC_REASON_NONE 0x900                  /**< no solve yet */
#define CNC_REASON_CONVERGED 0x901             /**< ||r|| <= threshold ||b||, true residual too */
#define CNC_REASON_MAX_ITERATIONS 0x902        /**< iteration limit reached */
#define CNC_REASON_INDEFINITE_MATRIX 0x903     /**< pᵀAp <= 0 (CG), or CHOLMOD found no Cholesky factor: A is not positive definite */
#define CNC_REASON_INDEFINITE_PRECOND 0x904    /**< rᵀz <= 0: the preconditioner is not SPD */
#define CNC_REASON_NOT_FINITE 0x905            /**< NaN or Inf appeared in the iteration */
#define CNC_REASON_STOPPED 0x906               /**< the progress callback asked to stop */
#define CNC_REASON_STAGNATED 0x907 /**< recursive residual converged, true residual did not (direct solvers: the true residual is above the threshold) */
#define CNC_REASON_BREAKDOWN 0x908 /**< BiCGSTAB/GMRES breakdown (a zero inner product), or SuperLU's zero pivot (A singular) */

/* Values of CNC_STATE (0xA00) */
#define CNC_STATE_INITIAL 0xA00            /**< nothing begun */
#define CNC_STATE_SYSTEM 0xA01             /**< inside cncBegin(CNC_SYSTEM) */
#define CNC_STATE_MATRIX 0xA02             /**< inside cncBegin(CNC_MATRIX) */
#define CNC_STATE_ROW 0xA03                /**< inside cncBegin(CNC_ROW) */
#define CNC_STATE_MATRIX_CONSTRUCTED 0xA04 /**< after cncEnd(CNC_MATRIX) */
#define CNC_STATE_SYSTEM_CONSTRUCTED 0xA05 /**< after cncEnd(CNC_SYSTEM): ready to solve */
#define CNC_STATE_SOLVED 0xA06             /**< after a cncSolve */
#define CNC_STATE_MATRIX_PATTERN 0xA07 /**< inside Begin/End(CNC_MATRIX_PATTERN) */

/* ---- Strings for cncGetString (0xB00) -------------------------------------------------------- */
#define CNC_BACKEND_NAME 0xB01 /**< "cpu", "opencl" or "cuda": backend of the last solve */
#define CNC_DEVICE_NAME 0xB02  /**< the device of the last solve, e.g. "NVIDIA H200" */
#define CNC_FORMAT_NAME 0xB03  /**< "csr", "bcrs2", "bcrs4", "sell", "zcsr" or "zsell" */
#define CNC_REASON_NAME 0xB04  /**< e.g. "converged" */
#define CNC_VERSION_STRING 0xB05 /**< e.g. "0.1.0" */
#define CNC_CPU_SIMD 0xB06     /**< SIMD level the CPU kernels run with, e.g. "avx2" */
#define CNC_ORDERING_NAME 0xB07 /**< "natural" or "rcm": the ordering of the last solve */
#define CNC_CHOICE_REASON 0xB08 /**< one line: why the last solve's format, long-row split and ordering */
/* clang-format on */

/* ---- Log levels for the log callback --------------------------------------------------------- */
#define CNC_LOG_ERROR 0   /**< a call failed (its status says how) */
#define CNC_LOG_WARNING 1 /**< something the caller should know: a fallback, a zero diagonal */
#define CNC_LOG_INFO 2    /**< progress and decisions, with CNC_VERBOSE */

/**
 * Log callback: receives every message cnc logs (errors, warnings, and with CNC_VERBOSE the
 * solver's progress). `message` is valid only during the call. Without a callback, warnings (a
 * GPU falling back to the CPU, zero diagonal entries, an overflow) are printed on stderr as
 * "cnc warning: ...", and with CNC_VERBOSE everything is; a callback that ignores its messages
 * silences cnc.
 */
typedef void (*CNClogCallback)(int level, const char* message, void* user_data);

/**
 * Progress callback, called at each convergence check of cncSolve (every iteration on the CPU,
 * every CNC_CHECK_INTERVAL iterations on a GPU) with the iteration count and the largest relative
 * residual ||r||/||b|| over the systems. Return 0 to continue, non-zero to stop the solve (the
 * reason is then CNC_REASON_STOPPED). Never called by the direct solvers (CNC_CHOLMOD,
 * CNC_SUPERLU: no iterations, nothing to stop between a factorization's steps), as OpenNL's
 * direct solvers do not call its progress function: their solve runs to its end.
 */
typedef int (*CNCprogressCallback)(CNCint iteration, double relative_residual, void* user_data);

/**
 * A linear operator applied by the caller (cncSetOperator): writes y = Op x for one vector of n
 * values (x and y do not overlap; x must not be written). Called on the thread that solves, once
 * per vector and system. Return 0 on success; any other value stops the solve, which then fails
 * with CNC_ERR_CALLBACK and leaves the variables (or x) as they were.
 */
typedef int (*CNCoperator)(const double* x, double* y, CNCuint n, void* user_data);

/* ---- Contexts -------------------------------------------------------------------------------- */
/** Creates a context with default parameters; NULL if out of memory. Does not make it current. */
CNC_API CNCcontext cncNewContext(void);
/** Frees a context and everything it owns; clears it as current on this thread. NULL is ignored. */
CNC_API void cncDeleteContext(CNCcontext context);
/** Makes `context` this thread's current context (NULL: none). */
CNC_API CNCstatus cncMakeCurrent(CNCcontext context);
/** This thread's current context, or NULL. */
CNC_API CNCcontext cncGetCurrent(void);

/* ---- Parameters and flags (current context) -------------------------------------------------- */
/** Sets an integer or enum parameter (CNC_NB_VARIABLES, CNC_PRECISION, ...). */
CNC_API CNCstatus cncSolverParameteri(CNCenum pname, CNCint value);
/** Sets a double parameter (CNC_THRESHOLD) or an integer one given as an integral double. */
CNC_API CNCstatus cncSolverParameterd(CNCenum pname, double value);
/** Sets a 64-bit integer parameter (CNC_NNZ_HINT, or any integer parameter). */
CNC_API CNCstatus cncSolverParameteri64(CNCenum pname, CNCint64 value);
/** Reads a parameter or statistic as an int (64-bit statistics saturate: use cncGetInteger64v). */
CNC_API CNCstatus cncGetIntegerv(CNCenum pname, CNCint* value);
/** Reads a parameter or statistic as a 64-bit int. */
CNC_API CNCstatus cncGetInteger64v(CNCenum pname, CNCint64* value);
/** Reads a parameter or statistic as a double. */
CNC_API CNCstatus cncGetDoublev(CNCenum pname, double* value);
/**
 * Statistics of system k (0 <= k < the systems of the last solve, CNC_NB_SYSTEMS or nrhs) of the
 * last iterative solve: CNC_USED_ITERATIONS (the iterations that system took: with CNC_BLOCK_CG
 * the iteration where it converged, with the other methods the ones it ran) or CNC_REASON (its
 * CNC_REASON_*). CNC_ERR_STATE before an iterative solve (a direct solver reports none),
 * CNC_ERR_INDEX_OUT_OF_RANGE for k past the last solve's systems. The whole solve's
 * CNC_USED_ITERATIONS and CNC_REASON (cncGetIntegerv) are the max and the worst over these.
 */
CNC_API CNCstatus cncGetSystemIntegerv(CNCuint k, CNCenum pname, CNCint* value);
/** Statistics of system k of the last iterative solve as a double: CNC_ERROR (its recursive
 *  ||r||/||b||), CNC_TRUE_ERROR (its ||b - A x||/||b|| in double) or CNC_USED_ITERATIONS; errors
 *  as cncGetSystemIntegerv. */
CNC_API CNCstatus cncGetSystemDoublev(CNCuint k, CNCenum pname, double* value);
/** Reads a string (CNC_BACKEND_NAME, ...); "" before the first solve. The pointer stays valid
 *  until the same string is read again or the context is deleted. */
CNC_API CNCstatus cncGetString(CNCenum pname, const char** value);
/**
 * Flags (cncEnable / cncDisable; cncIsEnabled reads them). CNC_KEEP_MATRIX (on by default): a
 * solve leaves its prepared matrix (converted, and on a GPU in device memory) in the context, so
 * that the next solve of the same matrix moves only b and x: cncSolve after new right-hand sides
 * or variables, and cncSolveCSR when it is handed arrays with the same content as the last call
 * (wherever they lie; told apart by 128-bit fingerprints of the three arrays, taken while the
 * device solves and compared, on every core, before the next call moves anything). When only
 * the values differ (same row offsets and columns), the CUDA backend uploads the values alone and
 * rewrites them, and the Jacobi diagonal, in the kept device layout (x is then bit for bit what a
 * first solve gives); the other backends prepare the matrix anew. Disabling it frees what is
 * kept at once; every solve then prepares its matrix and frees it at the end.
 */
CNC_API CNCstatus cncEnable(CNCenum flag);
/** Turns a flag of cncEnable off. */
CNC_API CNCstatus cncDisable(CNCenum flag);
/** Whether a flag of cncEnable is on. */
CNC_API CNCstatus cncIsEnabled(CNCenum flag, CNCboolean* value);

/* ---- Life cycle ------------------------------------------------------------------------------ */
/** Enters CNC_SYSTEM, CNC_MATRIX, CNC_ROW or CNC_MATRIX_PATTERN (see the state diagram above). */
CNC_API CNCstatus cncBegin(CNCenum primitive);
/** Leaves CNC_ROW, CNC_MATRIX, CNC_SYSTEM or CNC_MATRIX_PATTERN. End(MATRIX) converts the
 *  coefficients to CSR (on every core). */
CNC_API CNCstatus cncEnd(CNCenum primitive);

/* ---- Variables (states SYSTEM and later) ----------------------------------------------------- */
/** Sets variable i of system 0 (locked value, or initial guess). */
CNC_API CNCstatus cncSetVariable(CNCuint i, double value);
/** Reads variable i of system 0 (the solution after cncSolve). */
CNC_API CNCstatus cncGetVariable(CNCuint i, double* value);
/** Sets variable i of system k (0 <= k < CNC_NB_SYSTEMS). */
CNC_API CNCstatus cncMultiSetVariable(CNCuint i, CNCuint k, double value);
/** Reads variable i of system k. */
CNC_API CNCstatus cncMultiGetVariable(CNCuint i, CNCuint k, double* value);
/** Locks variable i: its value (in every system) is fixed and it leaves the unknowns. SYSTEM state.
 */
CNC_API CNCstatus cncLockVariable(CNCuint i);
/** Unlocks variable i. SYSTEM state. */
CNC_API CNCstatus cncUnlockVariable(CNCuint i);
/** Whether variable i is locked. */
CNC_API CNCstatus cncVariableIsLocked(CNCuint i, CNCboolean* locked);

/* ---- Row-wise assembly (inside Begin/End(ROW)) ----------------------------------------------- */
/** Adds a j-th coefficient to the current row (summed with earlier ones on the same j). */
CNC_API CNCstatus cncCoefficient(CNCuint j, double value);
/** Sets the current row's right-hand side (system 0); the last value before End(ROW) counts. */
CNC_API CNCstatus cncRightHandSide(double value);
/** Sets the current row's right-hand side of system k. */
CNC_API CNCstatus cncMultiRightHandSide(CNCuint k, double value);
/** Multiplies the current row (coefficients and right-hand sides) by `value` at End(ROW). */
CNC_API CNCstatus cncRowScaling(double value);

/* ---- Entry-wise assembly (inside Begin/End(MATRIX), plain mode) ------------------------------ */
/**
 * a_ij += value. Duplicates are summed in double-double: the stored value is the correctly
 * rounded sum, whatever the order of the calls, except in pathological cases. With a pattern
 * active (below): the slot of row i that holds j, else the row's next unused slot; a full row
 * fails with CNC_ERR_OVERFLOW and adds nothing.
 */
CNC_API CNCstatus cncAddIJCoefficient(CNCuint i, CNCuint j, double value);
/**
 * a_{i[t] j[t]} += values[t] for t < count: the same as count calls of cncAddIJCoefficient (same
 * result bits, for any CNC_NB_THREADS), without a call per entry. Every entry is checked first:
 * an index out of range or a value that is not finite fails the whole call (naming the first bad
 * entry) and adds nothing; so does, with a pattern active, an entry whose row is full
 * (CNC_ERR_OVERFLOW). Large calls insert on every core (CNC_NB_THREADS): rows in order need no
 * extra pass; other orders are bucketed by row range first, through 64 MiB of temporary memory
 * (4 M entries at a time). With a pattern active they insert on one thread. The one exception
 * to "adds nothing": CNC_ERR_OUT_OF_MEMORY when the hash table must grow part way through (its
 * rows outgrew their windows, see cncEstimateMemory) keeps the entries placed before.
 */
CNC_API CNCstatus cncAddIJCoefficients(CNCint64 count, const CNCuint* i, const CNCuint* j,
                                       const double* values);
/** b_i += value (system 0). */
CNC_API CNCstatus cncAddIRightHandSide(CNCuint i, double value);
/** b_i += value in system k. */
CNC_API CNCstatus cncMultiAddIRightHandSide(CNCuint i, CNCuint k, double value);

/* ---- Pattern-first assembly (OpenNL 4's NL_MATRIX_PATTERN; plain mode only) ------------------
 *
 * When the rows' lengths are known before the coefficients (finite elements, stencils), state
 * them once; coefficients then go straight into their slots, with no hashing:
 *
 *     cncBegin(CNC_MATRIX_PATTERN);                 // states SYSTEM, SYSTEM_CONSTRUCTED, SOLVED
 *     cncSetRowLengths(lengths);                    // or cncSetRowLength(i, length) per row
 *     cncEnd(CNC_MATRIX_PATTERN);                   // back to the state Begin was called in
 *     cncBegin(CNC_MATRIX);
 *     for each row i, for each of its entries e:  cncSetIJCoefficientAtRowOffset(i, j_e, v_e, e);
 *     cncEnd(CNC_MATRIX);
 *
 * - Row i owns lengths[i] slots, numbered globally from row_ptr[i] = lengths[0] + ... +
 *   lengths[i-1]. Each Begin(CNC_MATRIX) starts with every slot unused; a slot takes a column
 *   at its first coefficient. End(CNC_MATRIX) drops unused slots and sums repeated columns of a
 *   row in slot order (plain double sums, unlike the hash path's double-double): with each
 *   (i, j) given once, the CSR is the same, bit for bit, as cncAddIJCoefficient's.
 * - Locked variables behave as with cncAddIJCoefficient: coefficients of a locked row are
 *   dropped; on a locked column j the term moves to the right-hand side at the call
 *   (b_i -= value x_j) and the slot stays unused.
 * - The pattern persists across Begin/End(CNC_MATRIX) and Begin(CNC_SYSTEM) until the next
 *   Begin/End(CNC_MATRIX_PATTERN) replaces it, or the context is deleted. A pattern with every
 *   length 0 discards it: the next matrices are assembled through the hash table again.
 * - Not available in least-squares mode (cncBegin(CNC_MATRIX_PATTERN) fails with CNC_ERR_STATE).
 * - The slots cost 12 bytes each and stay allocated while the pattern lives.
 * - A refused call changes nothing. Statuses: CNC_ERR_STATE outside the states above, or a slot
 *   call without a pattern; CNC_ERR_INDEX_OUT_OF_RANGE for i or j >= n, an offset >= the row's
 *   length, an index outside row i; CNC_ERR_INVALID_VALUE for a slot that holds another column;
 *   CNC_ERR_NOT_FINITE for NaN or Inf; CNC_ERR_OVERFLOW for a full row (cncAddIJCoefficient) or
 *   more than 2^40 slots in all (cncEnd(CNC_MATRIX_PATTERN), which then stays in the pattern).
 */
/** Row i gets `length` slots (the last value given counts). Inside Begin/End(MATRIX_PATTERN). */
CNC_API CNCstatus cncSetRowLength(CNCuint i, CNCuint length);
/** Row lengths of every row at once: lengths[i] for i < CNC_NB_VARIABLES. */
CNC_API CNCstatus cncSetRowLengths(const CNCuint* lengths);
/**
 * Slot `offset` (0 <= offset < length of row i) of row i holds column j with value `value`
 * (set, not added: setting the slot again replaces the value). The slot must be unused or
 * already hold j. Inside Begin/End(CNC_MATRIX) with a pattern.
 */
CNC_API CNCstatus cncSetIJCoefficientAtRowOffset(CNCuint i, CNCuint j, double value,
                                                 CNCuint offset);
/**
 * a_ij += value in global slot `index` (row_ptr[i] <= index < row_ptr[i+1], see above), which
 * must be unused or already hold j. Inside Begin/End(CNC_MATRIX) with a pattern.
 */
CNC_API CNCstatus cncAddIJCoefficientAt(CNCuint i, CNCuint j, double value, CNCint64 index);

/* ---- Solving --------------------------------------------------------------------------------- */
/**
 * Solves the constructed system (state SYSTEM_CONSTRUCTED or SOLVED). Returns CNC_OK whenever the
 * solver ran; read CNC_REASON for the outcome. The solution is in the variables. A zero
 * right-hand side gives x = 0 at once. The matrix stays on the backend for the next solve.
 * Magnitudes: a right-hand side whose largest |b_i| is below 2^-200 or above 2^200 (whose squared
 * norm would under- or overflow in double) is solved with b and x scaled by a power of two, which
 * is exact, and x is scaled back (logged at CNC_LOG_INFO). A diagonal entry that is 0, absent or
 * subnormal (1/a_ii would overflow) gets 1 in the Jacobi preconditioner, counted in
 * CNC_ZERO_DIAGONALS and logged as a warning. On every outcome the variables hold the last
 * iterate (the initial guess when the first step already stops).
 */
CNC_API CNCstatus cncSolve(void);

/**
 * Solves A x = b for a CSR matrix handed over directly, with the current context's solver
 * parameters, without touching its assembled system (any state but MATRIX and ROW).
 *   n        number of rows and columns
 *   row_ptr  n+1 offsets into col_idx/values (64-bit), row_ptr[0] == base
 *   col_idx  column indices, `base`-based (0 for C, 1 for Fortran)
 *   values   coefficients (duplicates within a row are summed)
 *   base     0 or 1
 *   nrhs     number of right-hand sides (>= 1)
 *   b        nrhs * n values, system k at b + k*n
 *   x        nrhs * n values: initial guess on input, solution on output
 * Statistics are read back as after cncSolve. On the CUDA backend (CG in double, base 0) the
 * arrays are copied to the GPU as they are and checked and converted there; a CSR the GPU finds
 * not canonical (unsorted, duplicates, an error), or that does not fit in device memory beside
 * its converted form, takes the host path instead (said at CNC_LOG_INFO), which names the first
 * bad entry. x is written once, at the end, and only when the call succeeds; the one exception
 * is a device failing while x is copied back (x is then partly written and the call fails).
 * The context keeps the prepared matrix for the next call with the same arrays: see
 * CNC_KEEP_MATRIX at cncEnable.
 */
CNC_API CNCstatus cncSolveCSR(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                              const double* values, CNCint base, CNCuint nrhs, const double* b,
                              double* x);

/**
 * cncSolveCSR with the length of col_idx and values: nnz. Before anything is read past row_ptr,
 * row_ptr[0] must equal base and row_ptr[n] - base be at most nnz (else CNC_ERR_SIZE_MISMATCH
 * naming the three values; nnz < 0 is CNC_ERR_INVALID_VALUE), so an inconsistent CSR is refused
 * instead of read out of bounds. cncSolveCSR is this call with the length unknown.
 */
CNC_API CNCstatus cncSolveCSRn(CNCuint n, CNCint64 nnz, const CNCint64* row_ptr,
                               const CNCuint* col_idx, const double* values, CNCint base,
                               CNCuint nrhs, const double* b, double* x);

/**
 * cncSolveCSR with every array (row_ptr, col_idx, values, b, x) in CUDA device memory, e.g. a
 * CuPy matrix and vectors: nothing goes through the host (but b and x when b is of extreme
 * magnitude, see cncSolve), and x is written on the device, once, at the end, only when the call
 * succeeds. The arrays must be device (or managed) memory of the
 * CUDA device the context runs on (CNC_DEVICE_INDEX, default 0); other memory is refused with
 * CNC_ERR_INVALID_VALUE naming the array. Needs the CUDA backend (CNC_BACKEND AUTO or CUDA;
 * otherwise CNC_ERR_INVALID_VALUE, and CNC_ERR_BACKEND_UNAVAILABLE without a CUDA device),
 * CNC_DOUBLE precision and CG (other settings: CNC_ERR_INVALID_VALUE). A canonical CSR (0-based,
 * rows sorted, no duplicates) is checked and converted on the device (CNC_FORMAT_AUTO picks CSR
 * or SELL there; a forced BCRS format is built on the device too); any other CSR (1-based,
 * unsorted, duplicates, or one with an error) is copied to the host once and handled as
 * cncSolveCSR does, with the same messages. The matrix is not kept between calls. cnc waits for the
 * work queued on the device (any stream) before it reads the arrays, and x is complete when the
 * call returns.
 */
CNC_API CNCstatus cncSolveCSRDevice(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                                    const double* values, CNCint base, CNCuint nrhs,
                                    const double* b, double* x);

/**
 * Solves A x = b for a complex CSR matrix handed over directly (host arrays), with the current
 * context's solver parameters, in any state but MATRIX and ROW. Complex numbers are pairs of
 * doubles (re, im), the layout of C99 `double complex`, C++ `std::complex<double>` and Fortran
 * `complex(c_double_complex)`, so such arrays are passed by casting their address to double*.
 *   n        number of rows and columns (complex unknowns), at most (2^31 - 9) / 2
 *   row_ptr  n+1 offsets into col_idx (64-bit, in entries), row_ptr[0] == base
 *   col_idx  column indices, `base`-based (0 for C, 1 for Fortran)
 *   values   2 doubles per entry: values[2t] = Re a, values[2t+1] = Im a (duplicates summed)
 *   base     0 or 1
 *   nrhs     number of right-hand sides (>= 1)
 *   b        2 * nrhs * n doubles, complex system k at b + 2*k*n
 *   x        2 * nrhs * n doubles: initial guess on input, solution on output
 * The method is the context's CNC_SOLVER; CNC_SOLVER_DEFAULT is CG when CNC_SYMMETRIC (read:
 * Hermitian) is 1, its default, else BiCGSTAB. CG, CNC_BLOCK_CG and CNC_CHOLMOD need A
 * Hermitian positive definite; before anything is solved A is checked Hermitian (a_ji =
 * conj(a_ij) up to 1e-12 of the larger modulus), with every diagonal entry present, real and > 0
 * (the Jacobi diagonal is Re a_ii); a matrix that fails is refused with CNC_ERR_INVALID_VALUE
 * naming the entry, x unchanged. BiCGSTAB and GMRES take any nonsingular complex A. NaN or Inf in a
 * real or imaginary part of values, b or x is CNC_ERR_NOT_FINITE naming the array and the entry, a
 * column out of range CNC_ERR_INDEX_OUT_OF_RANGE; nothing is changed then.
 *
 * How it is solved: a complex n-vector is the real 2n-vector of its (re, im) pairs, and the
 * system is the real 2n x 2n one with the block [Re a, -Im a; Im a, Re a] per entry, solved as
 * cncSolveCSR solves a real matrix (every backend, precision and method; the context keeps it
 * for a next call with the same arrays' content, see CNC_KEEP_MATRIX). The device holds it as
 * CNC_FORMAT_ZCSR (complex CSR: its product is the real-equivalent product, read as 20 bytes a
 * complex entry instead of 36) when CNC_MATRIX_FORMAT is AUTO (the default), CSR or ZCSR; on
 * CUDA, AUTO stores it as CNC_FORMAT_ZSELL (complex SELL) instead when that adds at most 40 %
 * bytes of padding, and ZSELL can be forced there (CNC_FORMAT_USED tells which ran).
 * CNC_REORDER renumbers the complex unknowns (each (re, im) pair moves as one). With
 * CG, BiCGSTAB, GMRES or block CG in CNC_DOUBLE (without SSOR) that real matrix is never formed:
 * the caller's arrays are read as they are (copied only when not canonical: 1-based, unsorted
 * rows or duplicates) and, on CUDA when 0-based, uploaded as they are and checked on the device.
 * Bad values are then found once the backend is chosen: an unavailable CNC_BACKEND is reported
 * before them.
 * CNC_FORMAT_BCRS2 (also BCRS4, SELL) forces the real-equivalent matrix in that real format
 * instead. Both give the same solution. For a Hermitian A that real matrix is symmetric positive
 * definite and CG on it is complex CG step for step (the real dot product of two such vectors is
 * Re(u^H v), and CG's scalars are real). BiCGSTAB and GMRES run in complex arithmetic over those
 * vectors (inner products u^H v, complex scalars): the complex methods step for step, not their
 * real-equivalent forms, which stall or break down where A's spectrum and its mirror image
 * surround 0 (indefinite or strongly non-Hermitian A; with SSOR, whose sweeps are not
 * complex-linear, the real forms run). With Jacobi (the default) and a diagonal that is not real,
 * they are preconditioned on the right by the complex diagonal D (Jacobi on the complex
 * diagonal; the device's real Jacobi takes one real number a pair). In CNC_FORMAT_ZCSR (the
 * default for complex systems) or ZSELL in double, D^-1 is computed from the caller's arrays in one
 * pass and applied to the vectors by the device. With a real format forced, another precision, or
 * an entry of D^-1 beyond 2^500, they solve A D^-1 y = b, x = D^-1 y instead: a scaled copy of
 * the values is made on the host at each such call (16 bytes an entry, counted in
 * CNC_CONVERSION_TIME; bad values are then reported before an unavailable backend), and where it
 * would overflow the unscaled system is solved (Jacobi on Re a_ii). A diagonal entry below
 * DBL_MIN counts as 1, as in Jacobi. The statistics are
 * those of A x = b (the real system's residual norms equal the complex ones), and
 * cncGetCurrentIterate, in the progress callback, writes 2n doubles per system, (re, im) pairs
 * of x. The caller's
 * operators (cncSetOperator) are not used: a context with one set is refused with
 * CNC_ERR_UNSUPPORTED.
 */
CNC_API CNCstatus cncSolveCSRComplex(CNCuint n, const CNCint64* row_ptr, const CNCuint* col_idx,
                                     const double* values, CNCint base, CNCuint nrhs,
                                     const double* b, double* x);

/* ---- Matrix-free solves --------------------------------------------------------------------- */
/**
 * Sets (or, with op NULL, clears) an operator of the current context, applied by the caller's
 * function: `which` is CNC_OPERATOR_MATRIX (y = A x) or CNC_OPERATOR_PRECONDITIONER
 * (y = M⁻¹ x). Allowed in any state but MATRIX and ROW. The pointers are kept until cleared or
 * the context is deleted.
 * - The matrix operator is used by cncSolveOperator, and by cncSolve in place of the assembled
 *   matrix (OpenNL's nlSetFunction(NL_FUNC_MATRIX)): it acts on the free variables (n = their
 *   count, in the order of the variables), with the right-hand side the assembly built.
 * - Setting the preconditioner operator selects it (CNC_PRECONDITIONER becomes CNC_PRECOND_USER);
 *   clearing it while selected brings back the default, CNC_PRECOND_JACOBI. It applies to
 *   cncSolve, cncSolveCSR and cncSolveOperator; not to cncSolveCSRDevice (CNC_ERR_UNSUPPORTED).
 * A solve with either operator runs on the host, in double (the caller's functions read and
 * write host memory): CNC_BACKEND_CUDA/OPENCL or CNC_SINGLE/CNC_MIXED set explicitly are refused
 * with CNC_ERR_UNSUPPORTED, and CNC_REORDER_RCM is not applied (nothing to renumber). A matrix
 * given as an operator has no diagonal to read: without the caller's preconditioner such a solve
 * runs unpreconditioned, and CNC_PRECOND_JACOBI or _SSOR set explicitly are refused
 * (CNC_ERR_UNSUPPORTED) rather than replaced. CNC_SOLVER chooses the method as for matrices
 * (CG, BiCGSTAB, GMRES). Statistics: CNC_BACKEND_USED is CNC_BACKEND_CPU, CNC_FORMAT_USED
 * 0 for a matrix operator; CNC_CHOICE_REASON says which operators ran.
 * Statuses: CNC_ERR_INVALID_ENUM for another `which`, CNC_ERR_STATE in MATRIX or ROW.
 */
CNC_API CNCstatus cncSetOperator(CNCenum which, CNCoperator op, void* user_data);

/**
 * Solves A x = b matrix-free: A is the current context's matrix operator (cncSetOperator), n its
 * size, with the context's solver parameters and, when set, its preconditioner operator; no
 * assembly is needed and the assembled system is not touched (any state but MATRIX and ROW).
 *   b  nrhs * n values, system k at b + k*n
 *   x  nrhs * n values: initial guess on input, solution on output (written only when the call
 *      succeeds)
 * The operator is called with vectors of n values, one system at a time. Statuses: CNC_ERR_STATE
 * without a matrix operator, CNC_ERR_NULL_POINTER, CNC_ERR_INVALID_VALUE (n or nrhs out of
 * range), CNC_ERR_NOT_FINITE (b or x), CNC_ERR_CALLBACK when an operator returns non-zero, and
 * those of cncSetOperator's restrictions. Outcomes are read as after cncSolve.
 */
CNC_API CNCstatus cncSolveOperator(CNCuint n, CNCuint nrhs, const double* b, double* x);

/* ---- Eigen solver --------------------------------------------------------------------------- */
/**
 * A few eigenpairs of the symmetric generalized problem K x = lambda M x, K and M symmetric CSR
 * matrices (M positive definite; M_row_ptr NULL: M = I), by ARPACK's implicitly restarted Lanczos
 * (dsaupd/dseupd). ARPACK is opened at run time like the direct solvers (Debian's libarpack2:
 * libarpack.so.2, or the file named by the environment variable CNC_ARPACK_LIBRARY;
 * cncEigenSolverAvailable says whether it loads); without it the call fails with
 * CNC_ERR_UNSUPPORTED. It runs on the host, in double, with the current context's CNC_NB_THREADS,
 * CNC_MAX_ITERATIONS (ARPACK's restarts; automatic: 5 n, at least 100) and CNC_EIGEN_THRESHOLD, in
 * any state but MATRIX and ROW, without touching the assembled system.
 *   n            rows and columns of K and M (nev < n)
 *   k_*, m_*     the matrices as cncSolveCSR takes one (m_* all NULL for M = I), `base`-based
 *   nev          the number of eigenpairs, 1 <= nev < n (a dense solver suits nev close to n)
 *   which        CNC_EIGEN_SMALLEST, CNC_EIGEN_LARGEST, or CNC_EIGEN_NEAREST: the nev nearest
 *                sigma, by shift-invert (ARPACK's mode 3: K - sigma M factored once, CHOLMOD
 *                first, SuperLU when CHOLMOD is missing or finds K - sigma M indefinite, which it
 *                is for a sigma inside the spectrum). NEAREST is the fast way to the smallest
 *                eigenvalues of a large problem (sigma just below them); SMALLEST with M factors
 *                M (mode 2), without M runs on K alone (mode 1, slow to converge on the smallest)
 *   sigma        the shift (CNC_EIGEN_NEAREST only; must be finite, not an eigenvalue)
 *   eigenvalues  nev values, ascending
 *   eigenvectors n x nev values, column-major: vector i at eigenvectors + i*n, M-orthonormal
 *                (orthonormal for M = I), its largest component positive
 * Both outputs are written only when all nev pairs converged. Statistics: CNC_REASON
 * CNC_REASON_CONVERGED, or MAX_ITERATIONS / BREAKDOWN (ARPACK found no shifts or no Lanczos
 * basis; the log says which) with the outputs untouched; CNC_USED_ITERATIONS ARPACK's restarts;
 * CNC_TRUE_ERROR the largest ||K v - lambda M v|| / ((||K|| + |lambda| ||M||) ||v||) (infinity
 * norms of K and M) over the pairs, in double; CNC_SOLVE_TIME, CNC_ELAPSED_TIME; CNC_CHOICE_REASON
 * the mode and the factorization. Statuses (nothing changed): CNC_ERR_NULL_POINTER,
 * CNC_ERR_INVALID_VALUE (n, nev, base out of range, M's diagonal not positive, K - sigma M
 * singular), CNC_ERR_INVALID_ENUM (which), CNC_ERR_NOT_FINITE (a value or sigma), those of
 * cncSolveCSR for a bad CSR, CNC_ERR_UNSUPPORTED (K or M not symmetric, naming the entry; no
 * ARPACK; no direct solver for a mode that factors), CNC_ERR_STATE in MATRIX or ROW.
 */
CNC_API CNCstatus cncEigenSolveCSR(CNCuint n, const CNCint64* k_row_ptr, const CNCuint* k_col_idx,
                                   const double* k_values, const CNCint64* m_row_ptr,
                                   const CNCuint* m_col_idx, const double* m_values, CNCint base,
                                   CNCuint nev, CNCenum which, double sigma, double* eigenvalues,
                                   double* eigenvectors);

/**
 * Whether the eigen solver can run here: ARPACK loads (opened once per process: libarpack.so.2,
 * or the file named by the environment variable CNC_ARPACK_LIBRARY). When not,
 * cncGetLastErrorMessage says why, on the current context if there is one. Needs no context.
 */
CNC_API CNCboolean cncEigenSolverAvailable(void);

/* ---- Memory ---------------------------------------------------------------------------------- */
/**
 * The memory a solve of n rows and nnz entries (after duplicates are summed) will need, with the
 * current context's parameters (CNC_NB_SYSTEMS, CNC_PRECISION, CNC_MATRIX_FORMAT, CNC_BACKEND,
 * CNC_SOLVER, CNC_GMRES_RESTART, CNC_PRECONDITIONER, CNC_REORDER, CNC_NNZ_HINT), before anything
 * is allocated. Allowed in every state; changes nothing, and needs no device.
 *   host_bytes    the most host memory cnc holds at once to assemble such a system through
 *                 cncBegin(CNC_SYSTEM) ... cncEnd(CNC_MATRIX) (the hash table, with duplicates
 *                 summed) and solve it with cncSolve; it bounds what cncSolveCSR allocates
 *                 beside the caller's arrays too (that needs less: no table)
 *   device_bytes  what a GPU backend allocates in device memory; 0 when the solve runs on the
 *                 CPU (CNC_BACKEND_CPU, CNC_PRECOND_SSOR, or CNC_BACKEND_AUTO below 12,000
 *                 entries), whose memory host_bytes counts
 * Both are upper bounds, from a model of every stage (README.md, "Memory"): rows of about nnz / n
 * entries each (longer rows grow the hash table; CNC_NNZ_HINT sizes it), a reordered copy when
 * CNC_REORDER may reorder, and a forced BCRS or SELL format's worst case (CNC_FORMAT_AUTO picks
 * one only when it is no larger than about CSR). A 7-point stencil in double, assembled with
 * duplicates, peaks at 334 bytes a row at cncEnd(CNC_MATRIX) (table and CSR both alive,
 * measured); the estimate is 341 with CNC_FORMAT_CSR and CNC_REORDER_NONE, 413 on AUTO.
 * With CNC_SOLVER CNC_CHOLMOD or CNC_SUPERLU, host_bytes includes the factor, which is an
 * estimate, not a bound: its fill depends on the ordering the library computes from the pattern.
 * The model is fitted to 3D 7-point stencils (the usual worst case of mesh matrices): CHOLMOD
 * 20 nnz n^(1/3) bytes, SuperLU 18 nnz n^0.48 (its LU fills faster), plus 8 MiB of library
 * workspace; 2D meshes need several times less, a matrix its ordering cannot thin out more (at
 * most a dense factor). device_bytes is then 0: they factor on the host.
 * Not counted: up to 64 MiB while an out-of-order cncAddIJCoefficients buckets its entries, and
 * what an earlier solve keeps (CNC_KEEP_MATRIX: its prepared system, or a direct solver's factor,
 * stays until the next solve).
 * Large allocations are checked against the memory available (MemAvailable, the memory cgroup's
 * limit, RLIMIT_AS, RLIMIT_DATA, and the environment variable CNC_MEMORY_LIMIT_BYTES, a cap on
 * cnc's process's resident memory for containment and tests): a stage that does not fit fails
 * with CNC_ERR_OUT_OF_MEMORY and a message with the bytes needed and available, before it
 * changes anything, instead of the process being killed.
 * Statuses: CNC_ERR_NULL_POINTER when host_bytes or device_bytes is NULL; CNC_ERR_INVALID_VALUE
 * for n of 0 or above 2^31 - 9 (CNC_NB_VARIABLES's range), or nnz < 0 or above n².
 */
CNC_API CNCstatus cncEstimateMemory(CNCuint n, CNCint64 nnz, CNCint64* host_bytes,
                                    CNCint64* device_bytes);

/* ---- Errors, callbacks, version -------------------------------------------------------------- */
/** First error since the context was created or cncClearError (CNC_OK if none). */
CNC_API CNCstatus cncGetError(void);
/**
 * Message of the first error, naming the call and its values (e.g. "cncAddIJCoefficient(i=12,
 * j=7, value=nan): value is not finite"), or "" if none. Without a current context: the message
 * of this thread's last CNC_ERR_NO_CONTEXT.
 */
CNC_API const char* cncGetErrorMessage(void);
/**
 * Message of this thread's most recent failed call on the current context (the context's most
 * recent one when this thread has none); "" if none.
 */
CNC_API const char* cncGetLastErrorMessage(void);
/** Clears the sticky error of the current context. */
CNC_API CNCstatus cncClearError(void);
/** Short English text of a status code ("CNC_ERR_STATE: call not allowed in this state"). */
CNC_API const char* cncStatusString(CNCstatus status);
/** Installs (or, with NULL, removes) the current context's log callback. */
CNC_API CNCstatus cncSetLogCallback(CNClogCallback callback, void* user_data);
/** Installs (or, with NULL, removes) the current context's progress callback. */
CNC_API CNCstatus cncSetProgressCallback(CNCprogressCallback callback, void* user_data);
/**
 * From inside the progress callback only: writes the solve's current iterate x into `x`, in the
 * caller's numbering and scale, system after system: CNC_NB_VARIABLES x CNC_NB_SYSTEMS values
 * for cncSolve (locked variables hold their values), n x nrhs for cncSolveCSR. CG and BiCGSTAB
 * form it at every check; GMRES forms it only at the end of a cycle, and cncSolveCSRDevice keeps
 * it on the device: CNC_ERR_STATE there, and outside a callback. Costs a copy of x from the
 * device (set CNC_CHECK_INTERVAL to choose how often the callback runs on a GPU).
 */
CNC_API CNCstatus cncGetCurrentIterate(double* x);
/** Version of the library actually loaded (may differ from the CNC_VERSION_* it was built with). */
CNC_API void cncGetVersion(int* major, int* minor, int* patch);
/** Version string of the library actually loaded, e.g. "0.1.0". */
CNC_API const char* cncVersionString(void);
/** Whether `backend` (CNC_BACKEND_CPU/OPENCL/CUDA) can run here; needs no context. */
CNC_API CNCboolean cncBackendAvailable(CNCenum backend);
/**
 * Whether direct solver `solver` (CNC_CHOLMOD, CNC_SUPERLU or CNC_CUDSS) can run here: its
 * library loads (opened once per process: libcholmod.so.3 / libsuperlu.so.5 / libcudss.so.1, or
 * the file named by the environment variable CNC_CHOLMOD_LIBRARY / CNC_SUPERLU_LIBRARY /
 * CNC_CUDSS_LIBRARY), this cnc was built with its header, and for cuDSS a CUDA device is there
 * (and this cnc has the CUDA backend). When not, cncGetLastErrorMessage says why, on the current
 * context if there is one.
 * Needs no context; CNC_FALSE for any other value.
 */
CNC_API CNCboolean cncDirectSolverAvailable(CNCenum solver);
/**
 * How many devices `backend` (CNC_BACKEND_CPU, _OPENCL or _CUDA) sees here, numbered as
 * CNC_DEVICE_INDEX numbers them: 0 when the backend is absent (not built, no driver, no device;
 * cncGetLastErrorMessage then says why, and the call still succeeds). The CPU backend has one
 * device, the host. Needs no context; CNC_ERR_INVALID_ENUM for another value of `backend`.
 */
CNC_API CNCstatus cncGetDeviceCount(CNCenum backend, CNCint* count);
/**
 * One line describing device `index` (0 <= index < the count) of `backend`: its name and what
 * matters to cnc, e.g. "NVIDIA H100 80GB HBM3, compute capability 9.0, 79.1 GiB". The string is
 * this thread's until its next cncGetDeviceName. Needs no context; CNC_ERR_INDEX_OUT_OF_RANGE
 * for an index past the devices.
 */
CNC_API CNCstatus cncGetDeviceName(CNCenum backend, CNCint index, const char** name);

#ifdef __cplusplus
}
#endif

#endif /* CNC_H */
