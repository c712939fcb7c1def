/*
 * cnc_mpi.h -- distributed solves over MPI (libcnc_mpi), on top of cnc.h's constants.
 *
 * Each process (rank) of an MPI communicator owns a contiguous block of rows of one square
 * sparse matrix, given as a CSR whose column indices are GLOBAL, and the same rows of b and x.
 * CG, BiCGSTAB and GMRES (cnc's own Krylov methods, written once) run on the whole system: each
 * rank multiplies its rows, receiving the values of x it needs from the ranks that own them (the
 * halo, exchanged with non-blocking point-to-point messages while the rank multiplies the
 * columns it owns), and every dot product is one collective call for all the values it needs.
 * CG is the fused Jacobi-PCG of libcnc: on one rank it is exactly cncSolveCSR's solve (no
 * collective but two), on several its per-step sums are made global between steps.
 *
 * Backends: each rank holds its rows on a backend of its own, chosen by CNC_BACKEND (the
 * context's, else the CNC_BACKEND environment variable, else automatic: CUDA for a block of at
 * least 12000 entries where a GPU is present, else the CPU): the CPU (its threads and SIMD
 * kernels, in the format cnc chooses), CUDA or OpenCL (only when asked for; double precision, so
 * the device needs cl_khr_fp64). The rank's GPU is its index among the ranks of its node, modulo
 * the GPUs there (CUDA's, or the OpenCL GPUs), unless CNC_DEVICE_INDEX names one (for OpenCL, also
 * CNC_OPENCL_DEVICE; an OpenCL platform without GPUs gives its first device). Ranks may run
 * different backends. Halo values go through host memory (Open MPI need not be CUDA-aware):
 * gathered on the device and copied down before the local product is queued, sent while it runs,
 * copied up and added after. Where every rank runs
 * CUDA and NCCL (libnccl.so.2, e.g. PyPI's nvidia-nccl-cu13 wheel; CNC_NCCL_LIBRARY names its
 * path) opens on every one, the halo goes device to device through NCCL instead (CNC_MPI_NCCL);
 * the reductions stay on MPI.
 * libcnc_mpi is a separate library built when CMake finds MPI; libcnc itself does not use MPI.
 *
 * Example: a 1D Laplacian of n rows, split evenly.
 *
 *     #include <cnc_mpi.h>
 *
 *     MPI_Init(&argc, &argv);
 *     int rank, size;
 *     MPI_Comm_rank(MPI_COMM_WORLD, &rank);
 *     MPI_Comm_size(MPI_COMM_WORLD, &size);
 *     CNCuint n = 1000, r0 = n * rank / size, r1 = n * (rank + 1) / size;
 *     // ... build row_ptr (r1 - r0 + 1 offsets), col (global columns), val, b (r1 - r0 values)
 *     CNCMPIcontext ctx = cncMPINewContext(MPI_COMM_WORLD);
 *     cncMPISolverParameterd(ctx, CNC_THRESHOLD, 1e-10);
 *     CNCstatus s = cncMPISolveCSR(ctx, n, r0, r1, row_ptr, col, val, 0, 1, b, x);
 *     CNCint it;
 *     cncMPIGetIntegerv(ctx, CNC_USED_ITERATIONS, &it);   // the same on every rank
 *     cncMPIDeleteContext(ctx);
 *     MPI_Finalize();
 *
 * Collective calls: cncMPINewContext, cncMPIDeleteContext, cncMPISolveCSR, and of the state
 * machine cncMPIBegin(CNC_SYSTEM), cncMPIEnd(CNC_MATRIX) and cncMPISolve are collective over the
 * context's communicator (every rank calls them, in the same order). The other calls are local. A
 * solve returns the same status on every rank: each rank checks its own arguments, and one
 * collective makes every rank return the first failing rank's status (its message, prefixed with
 * that rank's number, is every rank's cncMPIGetErrorMessage); no rank is left waiting and nothing
 * aborts. Outcomes (iterations, reason, residuals) are the same on every rank: every decision of
 * the methods is taken from globally reduced scalars, identical on every rank (each reduction sums
 * the ranks' partial sums in rank order, so the bits do not depend on how MPI reduces).
 *
 * Threads: each rank runs its vector operations and its multiplication on its cores
 * (CNC_NB_THREADS, else CNC_NUM_THREADS, else the node's cores divided by its ranks); cnc calls
 * MPI only from the thread
 * that called it, so MPI_THREAD_FUNNELED is enough. The context's communicator is a duplicate of
 * the caller's, so cnc's messages never meet the caller's.
 *
 * Assembly: besides a CSR, each rank can assemble its rows through cnc.h's state machine
 * (cncMPIBegin ... cncMPISolve, below), locked variables and several right-hand sides included.
 *
 * Not offered in this version: progress callbacks, SSOR, single and mixed
 * precision, the caller's operators.
 */
#ifndef CNC_MPI_H
#define CNC_MPI_H

#include <mpi.h>

#include "cnc.h"

/** Marks libcnc_mpi's exported functions (visible when building the library). */
#if defined(__GNUC__) && defined(CNC_MPI_BUILDING_LIBRARY)
#define CNC_MPI_API __attribute__((visibility("default")))
#else
#define CNC_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque handle to a distributed context: a communicator, solver parameters, statistics. */
typedef struct CNCMPIContextStruct* CNCMPIcontext;

/* clang-format off */
/* ---- Statistics of the last solve particular to distributed solves (0xE00) ------------------- */
#define CNC_MPI_REDUCTIONS 0xE01   /**< int64: collective reductions of the last solve (each `dots` of the methods is one; CG: 2 an iteration) */
#define CNC_MPI_HALO_VALUES 0xE02  /**< int64: values this rank receives from other ranks per product A x (per right-hand side; differs between ranks) */
#define CNC_MPI_NEIGHBOURS 0xE03   /**< int: ranks this rank exchanges halo values with (differs between ranks) */
#define CNC_MPI_RANKS 0xE04        /**< int: processes of the context's communicator */
#define CNC_MPI_NCCL 0xE05         /**< bool parameter: GPU ranks exchange halos through NCCL where it loads on every rank (see below) */
#define CNC_MPI_NCCL_USED 0xE06    /**< int: 1 when the last solve's halos went through NCCL, else 0 */
/* clang-format on */

/**
 * Creates a context over a duplicate of `comm` (collective over comm). Default parameters are
 * cnc.h's: CNC_CG, CNC_PRECOND_JACOBI, CNC_THRESHOLD 1e-6, CNC_MAX_ITERATIONS 5 n (at least 100),
 * CNC_GMRES_RESTART 30, CNC_NB_THREADS 0. NULL when out of memory or when MPI is not
 * initialized (or already finalized); every rank then gets NULL only if all of them fail.
 */
CNC_MPI_API CNCMPIcontext cncMPINewContext(MPI_Comm comm);
/** Frees a context and its communicator (collective over it). NULL is ignored. */
CNC_MPI_API void cncMPIDeleteContext(CNCMPIcontext context);

/**
 * Sets a parameter: CNC_SOLVER (CNC_CG, CNC_BICGSTAB, CNC_GMRES; CNC_SOLVER_DEFAULT is CG),
 * CNC_PRECONDITIONER (CNC_PRECOND_NONE or CNC_PRECOND_JACOBI), CNC_MAX_ITERATIONS (> 0; 0 brings
 * back the default), CNC_GMRES_RESTART (>= 1), CNC_NB_THREADS (>= 0), CNC_BACKEND
 * (CNC_BACKEND_AUTO, _CPU, _CUDA, _OPENCL; may differ between ranks), CNC_DEVICE_INDEX (>= -1:
 * the device of this rank, -1 = by node-local rank; may differ between ranks), CNC_MPI_NCCL
 * (CNC_TRUE, the default: when every rank runs CUDA and NCCL opens on every one, halos go device to
 * device through NCCL; CNC_FALSE: through host memory and MPI), CNC_NB_SYSTEMS (the state machine's
 * right-hand sides, 1 to 4096; INITIAL state only, else CNC_ERR_STATE). Local: every rank must
 * set the same values before a solve (a solve whose ranks disagree fails with
 * CNC_ERR_INVALID_VALUE on every rank). CNC_ERR_INVALID_ENUM for another name or value,
 * CNC_ERR_INVALID_VALUE for a value out of range, CNC_ERR_NULL_POINTER for a NULL context.
 */
CNC_MPI_API CNCstatus cncMPISolverParameteri(CNCMPIcontext context, CNCenum pname, CNCint value);
/** Sets CNC_THRESHOLD (finite, > 0), or an integer parameter given as an integral double. */
CNC_MPI_API CNCstatus cncMPISolverParameterd(CNCMPIcontext context, CNCenum pname, double value);

/**
 * Reads a parameter or a statistic of the last solve: CNC_STATE (the state machine's),
 * CNC_NB_VARIABLES (cncMPISetRows's n), CNC_NB_SYSTEMS, CNC_USED_ITERATIONS, CNC_REASON,
 * CNC_SOLVER_USED, CNC_MPI_NEIGHBOURS, CNC_MPI_RANKS, CNC_MPI_NCCL_USED, CNC_BACKEND_USED and
 * CNC_FORMAT_USED (this rank's: 0 on a rank without rows), the parameters (and CNC_MPI_REDUCTIONS,
 * CNC_MPI_HALO_VALUES, saturated) as integers; CNC_ERROR, CNC_TRUE_ERROR, CNC_SOLVE_TIME,
 * CNC_ELAPSED_TIME, CNC_THRESHOLD as doubles (cncMPIGetDoublev also reads every integer one). The
 * statistics of a solve are the same on every rank, but for the CNC_MPI_HALO_VALUES and
 * CNC_MPI_NEIGHBOURS of each rank's own rows, its backend and format, and the times (each rank's
 * own clock). Before a solve and after a failed one: iterations 0, reason CNC_REASON_NONE.
 */
CNC_MPI_API CNCstatus cncMPIGetIntegerv(CNCMPIcontext context, CNCenum pname, CNCint* value);
/** As cncMPIGetIntegerv, 64-bit (CNC_MPI_REDUCTIONS, CNC_MPI_HALO_VALUES not saturated). */
CNC_MPI_API CNCstatus cncMPIGetInteger64v(CNCMPIcontext context, CNCenum pname, CNCint64* value);
/** As cncMPIGetIntegerv, as a double: the doubles above and every integer one. */
CNC_MPI_API CNCstatus cncMPIGetDoublev(CNCMPIcontext context, CNCenum pname, double* value);

/**
 * Solves A x = b for a matrix of n rows and columns whose rows are split over the context's
 * ranks (collective). This rank passes its rows [row_begin, row_end):
 *   n          the global size (the same on every rank)
 *   row_ptr    row_end - row_begin + 1 offsets into col_idx/values (64-bit), row_ptr[0] == base
 *   col_idx    GLOBAL column indices, `base`-based, in [base, n + base)
 *   values     coefficients (duplicates within a row are summed)
 *   base       0 or 1 (the same on every rank)
 *   nrhs       right-hand sides (1 to 4096, as cncSolveCSR; the same on every rank)
 *   b          nrhs * (row_end - row_begin) values: this rank's rows of system k at b + k*rows
 *   x          the same layout: initial guess on input, this rank's rows of the solution on output
 * The row blocks must tile [0, n) in rank order: rank 0 starts at 0, each rank starts where the
 * previous one ends, the last ends at n; a rank may own no rows (row_begin == row_end; its
 * pointers may then be NULL but for row_ptr, one offset). x is written only when the call
 * succeeds, on every rank. The solver parameters are the context's; the statistics are read
 * with cncMPIGet*. Statuses (the same on every rank): CNC_ERR_NULL_POINTER, CNC_ERR_INVALID_VALUE
 * (n, nrhs or base out of range or different between ranks, row blocks that do not tile, row_ptr
 * not starting at base or decreasing, parameters that differ between ranks),
 * CNC_ERR_INDEX_OUT_OF_RANGE (a column index outside [base, n + base)), CNC_ERR_NOT_FINITE (NaN or
 * Inf in values, b or x), CNC_ERR_OUT_OF_MEMORY (agreed before the ranks exchange anything),
 * CNC_ERR_DEVICE (an MPI call failed: the context's communicator returns MPI's errors instead of
 * aborting; once the iterations have started, only the ranks whose MPI calls fail see it, as MPI
 * itself reports a lost process), CNC_ERR_INTERNAL.
 * Numerical outcomes are not errors: read CNC_REASON (as cnc.h's cncSolve).
 */
CNC_MPI_API CNCstatus cncMPISolveCSR(CNCMPIcontext context, CNCuint n, CNCuint row_begin,
                                     CNCuint row_end, const CNCint64* row_ptr,
                                     const CNCuint* col_idx, const double* values, CNCint base,
                                     CNCuint nrhs, const double* b, double* x);

/* ---- The state machine: assembly through a distributed context ------------------------------
 *
 * cnc.h's life cycle (Begin/End of CNC_SYSTEM, CNC_MATRIX, CNC_ROW; entries, rows, right-hand
 * sides, variables, locks, several systems) with the context explicit and indices GLOBAL. Each
 * rank states its contiguous block of rows (cncMPISetRows) and assembles, sets and reads only
 * those rows, as in PETSc's or hypre's row ownership: an entry a_ij or a right-hand side b_i of
 * a row i of another rank, and a variable of another rank, are refused with
 * CNC_ERR_INDEX_OUT_OF_RANGE ("row i belongs to another rank"); columns j may be any of [0, n).
 *
 *     cncMPISetRows(ctx, n, r0, r1);                  // this rank's rows [r0, r1)
 *     cncMPIBegin(ctx, CNC_SYSTEM);                   // collective
 *     cncMPIBegin(ctx, CNC_MATRIX);
 *     for (CNCuint i = r0; i < r1; ++i) {
 *         cncMPIAddIJCoefficient(ctx, i, i, 2.0);
 *         if (i > 0) cncMPIAddIJCoefficient(ctx, i, i - 1, -1.0);
 *         if (i + 1 < n) cncMPIAddIJCoefficient(ctx, i, i + 1, -1.0);
 *         cncMPIAddIRightHandSide(ctx, i, 1.0);
 *     }
 *     cncMPIEnd(ctx, CNC_MATRIX);                     // collective
 *     cncMPIEnd(ctx, CNC_SYSTEM);
 *     cncMPISolve(ctx);                               // collective
 *     cncMPIGetVariables(ctx, 0, x);                  // this rank's r1 - r0 values
 *
 * States and their rules are cnc.h's (CNC_STATE reads them), with these differences:
 * - Collective calls: cncMPIBegin(CNC_SYSTEM) (agrees on n, CNC_NB_SYSTEMS and the row blocks,
 *   which must tile [0, n) in rank order; a rank may own no rows), cncMPIEnd(CNC_MATRIX)
 *   (eliminates the locked variables, exchanging their values between ranks) and cncMPISolve.
 *   Every other call is local, and each rank makes its own calls in any number.
 * - Errors: a local call that fails returns its status on its rank and changes nothing; the
 *   first such failure of a rank since the last collective call is kept, and the next collective
 *   call fails on EVERY rank with the first failing rank's status (its message, "call: rank r:
 *   ...", is every rank's cncMPIGetErrorMessage), as does a collective call refused on one rank
 *   (a wrong state, blocks that do not tile, n or CNC_NB_SYSTEMS that differ) or ranks that are
 *   in different collective calls of the state machine. A collective call that fails changes no
 *   state, and the kept failures are then forgotten (the ranks may correct and call again).
 *   Getters' failures (cncMPIGetVariable, cncMPIGetVariables, cncMPIVariableIsLocked) are not kept.
 * - Locked variables (cncMPILockVariable, SYSTEM state, this rank's rows) keep the value they have
 *   at cncMPIBegin(CNC_MATRIX) in every system; their rows are dropped, and a coefficient a_ij on
 *   a locked column j moves to the right-hand side (b_i -= a_ij x_j), wherever j's owner is: at
 *   cncMPIEnd(CNC_MATRIX) each rank asks the owners of the columns it references for their locks
 *   and values. The free unknowns are numbered rank after rank and solved by cncMPISolveCSR's
 *   path (same methods, parameters and statistics).
 * - Not offered: least squares (CNC_LEAST_SQUARES), pattern-first assembly
 *   (CNC_MATRIX_PATTERN), progress callbacks, the caller's operators.
 * The rank's calls are not thread-safe: one thread at a time per context.
 */

/**
 * States this rank's block of rows of an n x n system for the state machine: rows (and
 * variables) [row_begin, row_end), 0-based, global. Local, INITIAL state only (as
 * CNC_NB_VARIABLES); checked against the other ranks' at cncMPIBegin(CNC_SYSTEM). CNC_ERR_STATE
 * in another state, CNC_ERR_INVALID_VALUE for n = 0 or above 2^31 - 9 or rows outside [0, n).
 */
CNC_MPI_API CNCstatus cncMPISetRows(CNCMPIcontext context, CNCuint n, CNCuint row_begin,
                                    CNCuint row_end);
/**
 * Enters CNC_SYSTEM (collective: every rank, see above; from INITIAL, SYSTEM_CONSTRUCTED or
 * SOLVED; the variables are made zero the first time, then keep their values and locks),
 * CNC_MATRIX (local; from SYSTEM, SYSTEM_CONSTRUCTED or SOLVED: a new matrix and right-hand sides
 * for the same variables, each rank's rows in a hash table of libcnc's) or CNC_ROW (local, in
 * MATRIX: the rank's next row, counted from its first row since cncMPIBegin(CNC_MATRIX)).
 * CNC_ERR_INVALID_ENUM for another primitive (CNC_MATRIX_PATTERN included).
 */
CNC_MPI_API CNCstatus cncMPIBegin(CNCMPIcontext context, CNCenum primitive);
/**
 * Leaves CNC_ROW (local: the row's coefficients and right-hand sides, times the row's scaling,
 * are added to the rank's row; a row past the rank's block fails with CNC_ERR_INDEX_OUT_OF_RANGE
 * and is dropped), CNC_MATRIX (collective: the rank's rows become a CSR, the locked variables are
 * eliminated; state MATRIX_CONSTRUCTED) or CNC_SYSTEM (local: SYSTEM_CONSTRUCTED, ready to solve).
 */
CNC_MPI_API CNCstatus cncMPIEnd(CNCMPIcontext context, CNCenum primitive);

/**
 * a_ij += value (MATRIX state; local): i one of this rank's rows, j any column of [0, n); entries
 * on the same (i, j) are summed (in double-double, as cnc.h's). CNC_ERR_STATE,
 * CNC_ERR_INDEX_OUT_OF_RANGE (i of another rank or >= n, j >= n), CNC_ERR_NOT_FINITE.
 */
CNC_MPI_API CNCstatus cncMPIAddIJCoefficient(CNCMPIcontext context, CNCuint i, CNCuint j,
                                             double value);
/**
 * count entries at once, the same as count calls of cncMPIAddIJCoefficient in order; every entry
 * is checked first, and a bad one (named in the message) fails the call, which adds nothing.
 * CNC_ERR_INVALID_VALUE for count < 0, CNC_ERR_NULL_POINTER for NULL arrays when count > 0.
 */
CNC_MPI_API CNCstatus cncMPIAddIJCoefficients(CNCMPIcontext context, CNCint64 count,
                                              const CNCuint* i, const CNCuint* j,
                                              const double* values);
/** b_i += value in system 0 (MATRIX state; local; i one of this rank's rows). */
CNC_MPI_API CNCstatus cncMPIAddIRightHandSide(CNCMPIcontext context, CNCuint i, double value);
/** b_i += value in system k (0 <= k < CNC_NB_SYSTEMS; MATRIX state; local). */
CNC_MPI_API CNCstatus cncMPIMultiAddIRightHandSide(CNCMPIcontext context, CNCuint i, CNCuint k,
                                                   double value);
/** Adds a coefficient on global column j to the current row (ROW state; local). */
CNC_MPI_API CNCstatus cncMPICoefficient(CNCMPIcontext context, CNCuint j, double value);
/** Sets the current row's right-hand side of system 0 (ROW state; the last value counts). */
CNC_MPI_API CNCstatus cncMPIRightHandSide(CNCMPIcontext context, double value);
/** Sets the current row's right-hand side of system k (ROW state; the last value counts). */
CNC_MPI_API CNCstatus cncMPIMultiRightHandSide(CNCMPIcontext context, CNCuint k, double value);
/** Multiplies the current row (coefficients and right-hand sides) by value at cncMPIEnd(CNC_ROW).
 */
CNC_MPI_API CNCstatus cncMPIRowScaling(CNCMPIcontext context, double value);
/**
 * Replaces this rank's rows of the right-hand side of system k by b (row_end - row_begin values;
 * those of locked rows are ignored) after cncMPIEnd(CNC_MATRIX): the next cncMPISolve solves the
 * same matrix for it (the locked columns' part is subtracted again). Local; states
 * MATRIX_CONSTRUCTED, SYSTEM_CONSTRUCTED and SOLVED (which it turns into SYSTEM_CONSTRUCTED).
 */
CNC_MPI_API CNCstatus cncMPISetRightHandSide(CNCMPIcontext context, CNCuint k, const double* b);

/**
 * Sets variable i (one of this rank's rows) of system 0: a locked value, or the initial guess.
 * Local; states SYSTEM, MATRIX_CONSTRUCTED, SYSTEM_CONSTRUCTED and SOLVED. A later cncMPISolve
 * starts from the variables' current values (the last solution unless the caller set others).
 */
CNC_MPI_API CNCstatus cncMPISetVariable(CNCMPIcontext context, CNCuint i, double value);
/** Sets variable i of system k (0 <= k < CNC_NB_SYSTEMS), as cncMPISetVariable. */
CNC_MPI_API CNCstatus cncMPIMultiSetVariable(CNCMPIcontext context, CNCuint i, CNCuint k,
                                             double value);
/** Reads variable i (this rank's) of system 0: the solution after cncMPISolve. States SYSTEM on. */
CNC_MPI_API CNCstatus cncMPIGetVariable(CNCMPIcontext context, CNCuint i, double* value);
/** Reads variable i (this rank's) of system k. */
CNC_MPI_API CNCstatus cncMPIMultiGetVariable(CNCMPIcontext context, CNCuint i, CNCuint k,
                                             double* value);
/** Sets this rank's variables of system k from x (row_end - row_begin values), as
 *  cncMPISetVariable for each. */
CNC_MPI_API CNCstatus cncMPISetVariables(CNCMPIcontext context, CNCuint k, const double* x);
/** Copies this rank's variables of system k into x (row_end - row_begin values). */
CNC_MPI_API CNCstatus cncMPIGetVariables(CNCMPIcontext context, CNCuint k, double* x);
/**
 * Locks variable i (this rank's; SYSTEM state; local): its value, in every system, is fixed and
 * it leaves the unknowns (see above: its row is dropped, its column moves to the right-hand side
 * of every rank that references it).
 */
CNC_MPI_API CNCstatus cncMPILockVariable(CNCMPIcontext context, CNCuint i);
/** Unlocks variable i (this rank's; SYSTEM state; local). */
CNC_MPI_API CNCstatus cncMPIUnlockVariable(CNCMPIcontext context, CNCuint i);
/** Whether variable i (this rank's) is locked. */
CNC_MPI_API CNCstatus cncMPIVariableIsLocked(CNCMPIcontext context, CNCuint i, CNCboolean* locked);
/**
 * Solves the assembled system (collective; states SYSTEM_CONSTRUCTED and SOLVED): the free
 * unknowns, every system, by the context's method, starting from the variables' values; the
 * solution is written into the free variables on every rank when the call succeeds. Statuses and
 * statistics as cncMPISolveCSR's (the same on every rank); with every variable locked there is
 * nothing to solve (reason CNC_REASON_CONVERGED, 0 iterations).
 */
CNC_MPI_API CNCstatus cncMPISolve(CNCMPIcontext context);

/** Message of the last failed call on this context ("" if none); valid until the next call. */
CNC_MPI_API const char* cncMPIGetErrorMessage(CNCMPIcontext context);

#ifdef __cplusplus
}
#endif

#endif /* CNC_MPI_H */
