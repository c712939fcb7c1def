// What the files of the OpenNL compatibility layer (nl_*.cpp) share: the NLContext wrapper around
// a CNCcontext, the process-wide current context, and error reporting (see nl_compat.cpp).
#pragma once

#include <cnc.h>
#include <cnc_nl.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace cnc::nl {

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
  NLenum preconditioner = NL_PRECOND_NONE;  // OpenNL's until set (NL_SOLVER_DEFAULT: see nlBegin)
  bool preconditioner_set = false;
  bool legacy_cnc_solver = false;  // an NL_CNC_* id: Jacobi CG, as the original CNC
  bool single_precision = false;   // NL_CNC_FLOAT_*: cnc's CNC_SINGLE
  double threshold = 1e-6;
  bool max_iterations_set = false;
  bool defaults_applied = false;  // apply_solver_defaults ran (at nlBegin(NL_MATRIX))
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
  // NL_MATRIX_PATTERN (OpenNL's CRS pattern): row lengths, then slots numbered as OpenNL's
  // rowptr; slot_col[s] = column held by slot s (~0u: unused). A nonsymmetric pattern is cnc's
  // own (slots forwarded); a symmetric one stores the lower triangle, as OpenNL, here (slot_val)
  // and goes to cnc mirrored at nlEnd(NL_MATRIX).
  std::vector<CNCuint> pattern_len;
  std::vector<CNCint64> rowptr;
  std::vector<CNCuint> slot_col;
  std::vector<double> slot_val;
  bool has_pattern = false, pattern_symmetric = false;
  std::vector<std::pair<CNCuint, double>> row;
  std::vector<double> row_rhs, next_rhs;
  double row_scaling = 1.0, next_scaling = 1.0;
  NLfunc progress = nullptr;
  // nlSetFunction(NL_FUNC_SOLVER): OpenNL's NLSolverFunc, called by nlSolve in place of cnc's
  // solve (NL_SOLVER is then NL_SOLVER_USER).
  NLfunc solver_func = nullptr;
  // nlGetCurrentMatrix's result, owned here (as OpenNL's M is the context's): a CRS copy of cnc's
  // assembled matrix (of either index width), or the function matrix of NL_FUNC_MATRIX; deleted
  // at the next nlBegin(NL_MATRIX / NL_MATRIX_PATTERN), nlSetFunction(NL_FUNC_MATRIX) and
  // nlDeleteContext (drop_current_matrix).
  NLMatrix current_matrix = nullptr;
  bool current_matrix_64 = false;
  // nlSetFunction(NL_FUNC_MATRIX / NL_FUNC_PRECONDITIONER): OpenNL's y = A x and y = M⁻¹ x over
  // the free variables, handed to cnc as its operators (cncSetOperator).
  NLfunc matrix_func = nullptr, precond_func = nullptr;
  // The eigen problem (nlEigenSolve, OpenNL's ARPACK extension): NL_EIGEN_SOLVER or
  // nlMatrixMode(NL_MASS_MATRIX) makes it one. Coefficients then go to the matrix nlMatrixMode
  // names: K's to cnc as usual and recorded here too, M's recorded here only; both handed to
  // cncEigenSolveCSR. The eigenvalues found, ascending (eigenvectors: the variables, one system
  // each, as NL_NB_EIGENS is NL_NB_SYSTEMS).
  bool eigen = false;
  NLenum matrix_mode = NL_STIFFNESS_MATRIX;
  std::vector<NLuint> k_rows, k_cols, m_rows, m_cols;
  std::vector<double> k_vals, m_vals;
  double eigen_shift = 0.0;
  bool shift_invert = false;
  std::vector<double> eigen_values;
  // Errors.
  int error = CNC_OK;
  std::string error_message;
};

// The current context, process-wide as in OpenNL (defined in nl_compat.cpp). Each call makes its
// cnc context current on the calling thread (cnc's is per thread).
extern std::atomic<Context*> g_current __attribute__((visibility("hidden")));

void print_message(const std::string& text);

// Prints an error and keeps it as the context's first error.
void fail(Context* ctx, int status, const std::string& text);

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Checks a cnc status; on failure prints cnc's message and keeps it. Returns true when OK.
inline bool ok(Context* ctx, CNCstatus status) {
  if (status == CNC_OK) return true;
  const char* msg = cncGetLastErrorMessage();
  fail(ctx, status, (msg != nullptr && *msg) ? msg : cncStatusString(status));
  return false;
}

// The current context, made current in cnc too (someone may have called cncMakeCurrent).
inline Context* current(const char* call) {
  Context* ctx = g_current.load(std::memory_order_acquire);
  if (ctx == nullptr) {
    fail(nullptr, CNC_ERR_NO_CONTEXT, std::string(call) + ": no current OpenNL context");
    return nullptr;
  }
  if (cncGetCurrent() != ctx->cnc) cncMakeCurrent(ctx->cnc);
  return ctx;
}

CNCint state_of();

// nl_variables.cpp
bool check_index(Context* ctx, const char* call, CNCuint i, CNCuint k);
// Copies the bound buffers into cnc (all variables, or the free ones only).
void buffers_to_cnc(Context* ctx, bool free_only);
void cnc_to_buffers(Context* ctx);

// nl_parameters.cpp
// Why nlSolve cannot run with the chosen solver, or "" when it can.
std::string unsupported_solver(const Context* ctx);
// OpenNL's defaults for what was not set, applied at nlBegin(NL_MATRIX): NL_SOLVER_DEFAULT gives
// CG + Jacobi (least squares or NL_SYMMETRIC) or BiCGSTAB, 5 x free variables iterations; an
// explicit solver keeps NL_PRECOND_NONE and 100 iterations.
void apply_solver_defaults(Context* ctx, size_t free_variables);

// nl_assembly.cpp
// a_ij += value through the pattern when there is one; returns OpenNL's position (or ~0).
NLulong add_entry(Context* ctx, const char* call, CNCuint i, CNCuint j, double value);
// Sends a symmetric pattern's lower triangle to cnc, mirrored (at nlEnd(NL_MATRIX)).
void flush_symmetric_pattern(Context* ctx);

// nl_matrix.cpp
// Deletes the context's nlGetCurrentMatrix result (the next call makes it anew).
void drop_current_matrix(Context* ctx);

// nl_eigen.cpp
// Records a_ij += value of an eigen problem in K or M (nlMatrixMode); true when the entry goes on
// to cnc too (K's), false when it stops here (M's, or refused with a message).
bool record_eigen_entry(Context* ctx, const char* call, CNCuint i, CNCuint j, double value);

// NL_CHOLMOD_EXT and the SuperLU ids: cnc's direct solvers.
inline bool is_direct(NLenum solver) {
  return solver == NL_CHOLMOD_EXT || solver == NL_SUPERLU_EXT || solver == NL_PERM_SUPERLU_EXT ||
         solver == NL_SYMMETRIC_SUPERLU_EXT;
}

// A matrix's entries as cncSolveCSR takes them (0-based; rows in any order of columns,
// duplicates summed by cnc): what nlMatrixFactorize hands to the direct solvers.
struct csr_rows {
  std::vector<CNCint64> row_ptr;
  std::vector<CNCuint> col;
  std::vector<double> val;
};
// The compressed rows of either index width (nl_matrix_crs.inc): M's entries, both triangles of
// a symmetric storage, unused pattern slots left out; false when M is not that variant's.
namespace crs32 {
bool rows_of(NLMatrix M, csr_rows& out);
// A new CRS matrix (n x n, OpenNL's layout of this index width) holding a copy of a canonical
// CSR; NULL, with a message, when it cannot be made.
NLMatrix copy_rows(NLuint n, const CNCint64* row_ptr, const CNCint* col, const double* val);
}  // namespace crs32
namespace crs64 {
bool rows_of(NLMatrix M, csr_rows& out);
NLMatrix copy_rows(NLuint n, const CNCint64* row_ptr, const CNCint* col, const double* val);
}  // namespace crs64
// Rows from (row, column, value) triplets of an n x n matrix (counting sort by row).
csr_rows rows_from_triplets(NLuint n, const std::vector<NLuint>& rows,
                            const std::vector<NLuint>& cols, const std::vector<double>& vals);

}  // namespace cnc::nl
