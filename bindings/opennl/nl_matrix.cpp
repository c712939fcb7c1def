// OpenNL's nl_matrix.h (cnc_nl_matrix.h), the parts that do not depend on NLuint_big: the
// abstract matrix, sparse rows and columns, dynamic sparse matrices, matrices given by a
// function or as a product, nlMatrixFactorize and nlGetCurrentMatrix. Compressed rows are in
// nl_matrix_crs.inc (built for 32- and 64-bit counts). Memory comes from malloc/calloc, as
// OpenNL's NL_NEW, since programs free OpenNL structs with free() or nlDeleteMatrix.
#include <cnc.h>
#include <cnc_nl.h>
#include <cnc_nl_matrix.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "../../src/api/cnc_internal.h"  // cncInternalGetSystemCSR
#include "nl_internal.hpp"

namespace cnc::nl {
namespace {

template <class T>
T* zeroed(size_t count) {
  return static_cast<T*>(std::calloc(std::max<size_t>(count, 1), sizeof(T)));
}

bool valid(const void* m, const char* call) {
  if (m != nullptr) return true;
  print_message(std::string(call) + ": the matrix is NULL");
  return false;
}

// ---- Dynamic sparse matrices --------------------------------------------------------------

void sparse_destroy(NLMatrix m) { nlSparseMatrixDestroy(reinterpret_cast<NLSparseMatrix*>(m)); }

void sparse_mult(NLMatrix m, const double* x, double* y) {
  nlSparseMatrixMult(reinterpret_cast<NLSparseMatrix*>(m), x, y);
}

void adjust_diag(NLSparseMatrix* M) {
  const NLuint size = std::min(M->m, M->n);
  if (size <= M->diag_size) return;
  if (size > M->diag_capacity) {
    const NLuint cap = std::max<NLuint>(size, 2 * M->diag_capacity);
    auto* d = static_cast<NLdouble*>(std::realloc(M->diag, sizeof(NLdouble) * cap));
    if (d == nullptr) {
      print_message("nlSparseMatrixAddRow/AddColumn: out of memory");
      return;
    }
    M->diag = d;
    M->diag_capacity = cap;
  }
  std::fill(M->diag + M->diag_size, M->diag + size, 0.0);
  M->diag_size = size;
}

// Grows an array of rows (or columns) to hold `count`, constructing the new ones.
bool grow_lines(NLRowColumn*& lines, NLuint& capacity, NLuint count) {
  if (count <= capacity) return true;
  const NLuint cap = std::max<NLuint>({count, 2 * capacity, 16});
  auto* p = static_cast<NLRowColumn*>(std::realloc(lines, sizeof(NLRowColumn) * cap));
  if (p == nullptr) return false;
  lines = p;
  for (NLuint i = capacity; i < cap; ++i) nlRowColumnConstruct(&lines[i]);
  capacity = cap;
  return true;
}

// ---- Function and product matrices ----------------------------------------------------------

struct function_matrix {
  NLMatrixStruct base;
  NLMatrixFunc func;
};

void function_destroy(NLMatrix) {}

void function_mult(NLMatrix m, const double* x, double* y) {
  reinterpret_cast<function_matrix*>(m)->func(x, y);
}

struct product_matrix {
  NLMatrixStruct base;
  NLMatrix M, N;
  bool owns_M, owns_N;
  double* tmp;  // N x, of N's m rows
};

void product_destroy(NLMatrix m) {
  auto* p = reinterpret_cast<product_matrix*>(m);
  if (p->owns_M) nlDeleteMatrix(p->M);
  if (p->owns_N) nlDeleteMatrix(p->N);
  std::free(p->tmp);
}

void product_mult(NLMatrix m, const double* x, double* y) {
  auto* p = reinterpret_cast<product_matrix*>(m);
  nlMultMatrixVector(p->N, x, p->tmp);
  nlMultMatrixVector(p->M, p->tmp, y);
}

// ---- Factorized matrices (nlMatrixFactorize) --------------------------------------------------
// A cnc context of its own with CNC_CHOLMOD or CNC_SUPERLU and the matrix's CSR: each product
// is a cncSolveCSR of the same arrays, which finds its factorization kept (CNC_KEEP_MATRIX) and
// runs only the triangular solves.

struct factorized_matrix {
  NLMatrixStruct base;
  CNCcontext cnc;
  csr_rows* a;
};

// Runs `call` on the factorization's context, the caller's current cnc context restored after.
template <class F>
CNCstatus on_context(CNCcontext c, F call) {
  const CNCcontext saved = cncGetCurrent();
  cncMakeCurrent(c);
  const CNCstatus s = call();
  cncMakeCurrent(saved);
  return s;
}

// Solves A y = x; `what` names the call in messages. False (said) when the solve fails.
bool factorized_solve(factorized_matrix* F, const double* x, double* y, const char* what) {
  std::fill(y, y + F->base.n, 0.0);  // cncSolveCSR reads y as its initial guess
  CNCint reason = CNC_REASON_NONE;
  const char* message = "";
  const CNCstatus s = on_context(F->cnc, [&] {
    const CNCstatus st = cncSolveCSR(F->base.n, F->a->row_ptr.data(), F->a->col.data(),
                                     F->a->val.data(), 0, 1, x, y);
    if (st == CNC_OK) cncGetIntegerv(CNC_REASON, &reason);
    message = st == CNC_OK ? "" : cncGetLastErrorMessage();
    return st;
  });
  if (s != CNC_OK) {
    print_message(std::string(what) + ": " + message);
    return false;
  }
  if (reason == CNC_REASON_INDEFINITE_MATRIX || reason == CNC_REASON_BREAKDOWN) {
    print_message(std::string(what) + ": " +
                  (reason == CNC_REASON_BREAKDOWN
                       ? "the matrix is singular (SuperLU)"
                       : "the matrix is not positive definite (CHOLMOD)"));
    return false;
  }
  return true;
}

void factorized_destroy(NLMatrix m) {
  auto* F = reinterpret_cast<factorized_matrix*>(m);
  cncDeleteContext(F->cnc);
  delete F->a;
  F->cnc = nullptr, F->a = nullptr;
}

void factorized_mult(NLMatrix m, const double* x, double* y) {
  factorized_solve(reinterpret_cast<factorized_matrix*>(m), x, y, "nlMultMatrixVector");
}

// M's entries as rows: compressed rows of either width, or a dynamic sparse matrix (rows or
// columns stored, the lower triangle of a symmetric one mirrored). False for other kinds.
bool entries_of(NLMatrix M, csr_rows& out) {
  if (crs32::rows_of(M, out) || crs64::rows_of(M, out)) return true;
  if (M->type != NL_MATRIX_SPARSE_DYNAMIC) return false;
  const auto* S = reinterpret_cast<const NLSparseMatrix*>(M);
  const bool by_rows = (S->storage & NL_MATRIX_STORE_ROWS) != 0;
  if (!by_rows && !(S->storage & NL_MATRIX_STORE_COLUMNS)) return false;
  const bool sym = (S->storage & NL_MATRIX_STORE_SYMMETRIC) != 0;
  std::vector<NLuint> rows, cols;
  std::vector<double> vals;
  const NLuint lines = by_rows ? S->m : S->n;
  for (NLuint l = 0; l < lines; ++l) {
    const NLRowColumn& line = by_rows ? S->row[l] : S->column[l];
    for (NLuint t = 0; t < line.size; ++t) {
      const NLuint i = by_rows ? l : line.coeff[t].index, j = by_rows ? line.coeff[t].index : l;
      rows.push_back(i), cols.push_back(j), vals.push_back(line.coeff[t].value);
      if (sym && i != j) rows.push_back(j), cols.push_back(i), vals.push_back(line.coeff[t].value);
    }
  }
  out = rows_from_triplets(S->m, rows, cols, vals);
  return true;
}

NLMatrix factorize(NLMatrix M, NLenum solver) {
  const CNCenum method = solver == NL_CHOLMOD_EXT ? CNC_CHOLMOD : CNC_SUPERLU;
  auto* F = zeroed<factorized_matrix>(1);
  if (F == nullptr) {
    print_message("nlMatrixFactorize: out of memory");
    return nullptr;
  }
  F->base.m = F->base.n = M->n;
  F->base.type = solver == NL_CHOLMOD_EXT ? NL_MATRIX_CHOLMOD_EXT : NL_MATRIX_SUPERLU_EXT;
  F->base.destroy_func = factorized_destroy;
  F->base.mult_func = factorized_mult;
  F->cnc = cncNewContext();
  F->a = new (std::nothrow) csr_rows;
  bool ok = F->cnc != nullptr && F->a != nullptr;
  if (!ok) print_message("nlMatrixFactorize: out of memory");
  try {
    if (ok && !entries_of(M, *F->a)) {
      print_message(
          format("nlMatrixFactorize: matrix type 0x%x: only compressed rows "
                 "(NL_MATRIX_CRS) and dynamic sparse matrices are factored",
                 M->type));
      ok = false;
    }
  } catch (const std::bad_alloc&) {
    print_message("nlMatrixFactorize: out of memory");
    ok = false;
  }
  if (ok && F->a->row_ptr.back() == 0) {
    print_message("nlMatrixFactorize: the matrix has no entries");
    ok = false;
  }
  if (ok) {
    const CNCstatus s = on_context(F->cnc, [&] { return cncSolverParameteri(CNC_SOLVER, method); });
    ok = s == CNC_OK;
  }
  // Factored now, on a zero right-hand side: a matrix without a factorization gives NULL here.
  std::vector<double> zero, y;
  if (ok) {
    zero.assign(M->n, 0.0), y.assign(M->n, 0.0);
    ok = factorized_solve(F, zero.data(), y.data(), "nlMatrixFactorize");
  }
  if (!ok) {
    nlDeleteMatrix(&F->base);
    return nullptr;
  }
  return &F->base;
}

}  // namespace

csr_rows rows_from_triplets(NLuint n, const std::vector<NLuint>& rows,
                            const std::vector<NLuint>& cols, const std::vector<double>& vals) {
  csr_rows out;
  out.row_ptr.assign(static_cast<size_t>(n) + 1, 0);
  for (const NLuint i : rows) ++out.row_ptr[static_cast<size_t>(i) + 1];
  for (size_t i = 0; i < n; ++i) out.row_ptr[i + 1] += out.row_ptr[i];
  out.col.resize(rows.size());
  out.val.resize(rows.size());
  std::vector<CNCint64> next(out.row_ptr.begin(), out.row_ptr.end() - 1);
  for (size_t t = 0; t < rows.size(); ++t) {
    const auto at = static_cast<size_t>(next[rows[t]]++);
    out.col[at] = cols[t];
    out.val[at] = vals[t];
  }
  return out;
}

}  // namespace cnc::nl

using namespace cnc::nl;

namespace cnc::nl {

void drop_current_matrix(Context* ctx) {
  if (ctx->current_matrix != nullptr) nlDeleteMatrix(ctx->current_matrix);
  ctx->current_matrix = nullptr;
}

namespace {

// OpenNL's M after nlEnd(NL_MATRIX): the system's matrix over the free variables (least squares:
// AᵀA), in OpenNL's numbering of them (the k-th unlocked variable is row k), or the function
// matrix of NL_FUNC_MATRIX; owned by the context. wide: the layout of GARGANTUA programs.
NLMatrix current_matrix(const char* call, bool wide) {
  Context* ctx = current(call);
  if (ctx == nullptr) return nullptr;
  CNCint n = 0;
  const CNCint64* row_ptr = nullptr;
  const CNCint* col = nullptr;
  const double* val = nullptr;
  const CNCint state = state_of();
  if (state != CNC_STATE_MATRIX_CONSTRUCTED && state != CNC_STATE_SYSTEM_CONSTRUCTED &&
      state != CNC_STATE_SOLVED) {
    fail(ctx, CNC_ERR_STATE,
         std::string(call) + ": no matrix yet (call it after nlEnd(NL_MATRIX)): NULL");
    return nullptr;
  }
  if (!ok(ctx, cncInternalGetSystemCSR(&n, &row_ptr, &col, &val))) return nullptr;
  if (ctx->current_matrix != nullptr && ctx->current_matrix_64 == wide &&
      ctx->current_matrix->m == NLuint(n))
    return ctx->current_matrix;
  drop_current_matrix(ctx);
  if (ctx->matrix_func != nullptr)
    ctx->current_matrix = nlMatrixNewFromFunction(NLuint(n), NLuint(n),
                                                  reinterpret_cast<NLMatrixFunc>(ctx->matrix_func));
  else
    ctx->current_matrix = wide ? crs64::copy_rows(NLuint(n), row_ptr, col, val)
                               : crs32::copy_rows(NLuint(n), row_ptr, col, val);
  ctx->current_matrix_64 = wide;
  return ctx->current_matrix;
}

}  // namespace
}  // namespace cnc::nl

extern "C" {

void nlDeleteMatrix(NLMatrix M) {
  if (M == nullptr) return;
  if (M->destroy_func != nullptr) M->destroy_func(M);
  std::free(M);
}

void nlMultMatrixVector(NLMatrix M, const double* x, double* y) {
  if (!valid(M, "nlMultMatrixVector")) return;
  if (x == nullptr || y == nullptr || M->mult_func == nullptr) {
    print_message("nlMultMatrixVector: NULL vector, or a matrix without a product");
    return;
  }
  M->mult_func(M, x, y);
}

// ---- Sparse rows and columns ------------------------------------------------------------------

void nlRowColumnConstruct(NLRowColumn* c) {
  c->size = 0;
  c->capacity = 0;
  c->coeff = nullptr;
}

void nlRowColumnDestroy(NLRowColumn* c) {
  std::free(c->coeff);
  nlRowColumnConstruct(c);
}

void nlRowColumnGrow(NLRowColumn* c) {
  const NLuint cap = c->capacity != 0 ? 2 * c->capacity : 4;
  auto* p = static_cast<NLCoeff*>(std::realloc(c->coeff, sizeof(NLCoeff) * cap));
  if (p == nullptr) {
    print_message("nlRowColumnGrow: out of memory");
    return;
  }
  c->coeff = p;
  c->capacity = cap;
}

void nlRowColumnAdd(NLRowColumn* c, NLuint index, NLdouble value) {
  for (NLuint i = 0; i < c->size; ++i) {
    if (c->coeff[i].index == index) {
      c->coeff[i].value += value;
      return;
    }
  }
  nlRowColumnAppend(c, index, value);
}

void nlRowColumnAppend(NLRowColumn* c, NLuint index, NLdouble value) {
  if (c->size == c->capacity) nlRowColumnGrow(c);
  if (c->size == c->capacity) return;  // out of memory, said
  c->coeff[c->size].index = index;
  c->coeff[c->size].value = value;
  ++c->size;
}

void nlRowColumnZero(NLRowColumn* c) { c->size = 0; }

void nlRowColumnClear(NLRowColumn* c) { nlRowColumnDestroy(c); }

void nlRowColumnSort(NLRowColumn* c) {
  if (c->size == 0) return;
  std::stable_sort(c->coeff, c->coeff + c->size,
                   [](const NLCoeff& a, const NLCoeff& b) { return a.index < b.index; });
}

// ---- Dynamic sparse matrices -------------------------------------------------------------------

NLMatrix nlSparseMatrixNew(NLuint m, NLuint n, NLenum storage) {
  auto* M = zeroed<NLSparseMatrix>(1);
  if (M == nullptr) {
    print_message("nlSparseMatrixNew: out of memory");
    return nullptr;
  }
  nlSparseMatrixConstruct(M, m, n, storage);
  return reinterpret_cast<NLMatrix>(M);
}

void nlSparseMatrixConstruct(NLSparseMatrix* M, NLuint m, NLuint n, NLenum storage) {
  if (!valid(M, "nlSparseMatrixConstruct")) return;
  std::memset(M, 0, sizeof *M);
  M->m = m;
  M->n = n;
  M->type = NL_MATRIX_SPARSE_DYNAMIC;
  M->destroy_func = sparse_destroy;
  M->mult_func = sparse_mult;
  M->storage = storage;
  if (storage & NL_MATRIX_STORE_ROWS) {
    M->row = zeroed<NLRowColumn>(m);
    M->row_capacity = m;
  }
  if (storage & NL_MATRIX_STORE_COLUMNS) {
    M->column = zeroed<NLRowColumn>(n);
    M->column_capacity = n;
  }
  M->diag_size = M->diag_capacity = std::min(m, n);
  M->diag = zeroed<NLdouble>(M->diag_size);
}

void nlSparseMatrixDestroy(NLSparseMatrix* M) {
  if (!valid(M, "nlSparseMatrixDestroy")) return;
  if (M->row != nullptr)
    for (NLuint i = 0; i < M->m; ++i) nlRowColumnDestroy(&M->row[i]);
  if (M->column != nullptr)
    for (NLuint j = 0; j < M->n; ++j) nlRowColumnDestroy(&M->column[j]);
  std::free(M->row);
  std::free(M->column);
  std::free(M->diag);
  M->row = M->column = nullptr;
  M->diag = nullptr;
  M->storage &= ~NLenum(NL_MATRIX_STORE_ROWS | NL_MATRIX_STORE_COLUMNS);
}

void nlSparseMatrixAdd(NLSparseMatrix* M, NLuint i, NLuint j, NLdouble value) {
  if (!valid(M, "nlSparseMatrixAdd")) return;
  if (i >= M->m || j >= M->n) {
    print_message(
        format("nlSparseMatrixAdd(i=%u, j=%u): index out of range (%u x %u)", i, j, M->m, M->n));
    return;
  }
  if ((M->storage & NL_MATRIX_STORE_SYMMETRIC) && j > i) return;  // lower triangle only
  if (i == j && i < M->diag_size) M->diag[i] += value;
  if (M->storage & NL_MATRIX_STORE_ROWS) nlRowColumnAdd(&M->row[i], j, value);
  if (M->storage & NL_MATRIX_STORE_COLUMNS) nlRowColumnAdd(&M->column[j], i, value);
}

void nlSparseMatrixMult(NLSparseMatrix* A, const NLdouble* x, NLdouble* y) {
  if (!valid(A, "nlSparseMatrixMult")) return;
  const bool sym = (A->storage & NL_MATRIX_STORE_SYMMETRIC) != 0;
  std::fill(y, y + A->m, 0.0);
  if (A->storage & NL_MATRIX_STORE_ROWS) {
    for (NLuint i = 0; i < A->m; ++i) {
      const NLRowColumn& r = A->row[i];
      for (NLuint t = 0; t < r.size; ++t) {
        y[i] += r.coeff[t].value * x[r.coeff[t].index];
        if (sym && r.coeff[t].index != i) y[r.coeff[t].index] += r.coeff[t].value * x[i];
      }
    }
  } else if (A->storage & NL_MATRIX_STORE_COLUMNS) {
    for (NLuint j = 0; j < A->n; ++j) {
      const NLRowColumn& c = A->column[j];
      for (NLuint t = 0; t < c.size; ++t) {
        y[c.coeff[t].index] += c.coeff[t].value * x[j];
        if (sym && c.coeff[t].index != j) y[j] += c.coeff[t].value * x[c.coeff[t].index];
      }
    }
  } else {
    print_message("nlSparseMatrixMult: the matrix stores neither rows nor columns");
  }
}

void nlSparseMatrixZero(NLSparseMatrix* M) {
  if (!valid(M, "nlSparseMatrixZero")) return;
  if (M->storage & NL_MATRIX_STORE_ROWS)
    for (NLuint i = 0; i < M->m; ++i) nlRowColumnZero(&M->row[i]);
  if (M->storage & NL_MATRIX_STORE_COLUMNS)
    for (NLuint j = 0; j < M->n; ++j) nlRowColumnZero(&M->column[j]);
  if (M->diag != nullptr) std::fill(M->diag, M->diag + M->diag_size, 0.0);
}

void nlSparseMatrixClear(NLSparseMatrix* M) {
  if (!valid(M, "nlSparseMatrixClear")) return;
  if (M->storage & NL_MATRIX_STORE_ROWS)
    for (NLuint i = 0; i < M->m; ++i) nlRowColumnClear(&M->row[i]);
  if (M->storage & NL_MATRIX_STORE_COLUMNS)
    for (NLuint j = 0; j < M->n; ++j) nlRowColumnClear(&M->column[j]);
  if (M->diag != nullptr) std::fill(M->diag, M->diag + M->diag_size, 0.0);
}

void nlSparseMatrixSort(NLSparseMatrix* M) {
  if (!valid(M, "nlSparseMatrixSort")) return;
  if (M->storage & NL_MATRIX_STORE_ROWS)
    for (NLuint i = 0; i < M->m; ++i) nlRowColumnSort(&M->row[i]);
  if (M->storage & NL_MATRIX_STORE_COLUMNS)
    for (NLuint j = 0; j < M->n; ++j) nlRowColumnSort(&M->column[j]);
}

void nlSparseMatrixAddRow(NLSparseMatrix* M) {
  if (!valid(M, "nlSparseMatrixAddRow")) return;
  if ((M->storage & NL_MATRIX_STORE_ROWS) && !grow_lines(M->row, M->row_capacity, M->m + 1)) {
    print_message("nlSparseMatrixAddRow: out of memory");
    return;
  }
  ++M->m;
  adjust_diag(M);
}

void nlSparseMatrixAddColumn(NLSparseMatrix* M) {
  if (!valid(M, "nlSparseMatrixAddColumn")) return;
  if ((M->storage & NL_MATRIX_STORE_COLUMNS) &&
      !grow_lines(M->column, M->column_capacity, M->n + 1)) {
    print_message("nlSparseMatrixAddColumn: out of memory");
    return;
  }
  ++M->n;
  adjust_diag(M);
}

void nlSparseMatrixMAddRow(NLSparseMatrix* M, NLuint i1, double s, NLuint i2) {
  if (!valid(M, "nlSparseMatrixMAddRow")) return;
  if (!(M->storage & NL_MATRIX_STORE_ROWS) || i1 >= M->m || i2 >= M->m) {
    print_message(format("nlSparseMatrixMAddRow(i1=%u, i2=%u): needs stored rows and rows < %u", i1,
                         i2, M->m));
    return;
  }
  // Row i2 may grow while it is read (i1 == i2): go over a copy.
  const NLRowColumn& r = M->row[i2];
  std::vector<NLCoeff> src(r.coeff, r.coeff + r.size);
  for (const NLCoeff& c : src) nlSparseMatrixAdd(M, i1, c.index, s * c.value);
}

void nlSparseMatrixScaleRow(NLSparseMatrix* M, NLuint i, double s) {
  if (!valid(M, "nlSparseMatrixScaleRow")) return;
  if (!(M->storage & NL_MATRIX_STORE_ROWS) || (M->storage & NL_MATRIX_STORE_COLUMNS) || i >= M->m) {
    print_message(
        format("nlSparseMatrixScaleRow(i=%u): needs rows only stored and i < %u", i, M->m));
    return;
  }
  for (NLuint t = 0; t < M->row[i].size; ++t) M->row[i].coeff[t].value *= s;
  if (i < M->diag_size) M->diag[i] *= s;
}

void nlSparseMatrixZeroRow(NLSparseMatrix* M, NLuint i) {
  if (!valid(M, "nlSparseMatrixZeroRow")) return;
  if (!(M->storage & NL_MATRIX_STORE_ROWS) || i >= M->m) {
    print_message(format("nlSparseMatrixZeroRow(i=%u): needs stored rows and i < %u", i, M->m));
    return;
  }
  M->row[i].size = 0;
  if (i < M->diag_size) M->diag[i] = 0.0;
}

// ---- Direct solvers, function and product matrices ----------------------------------------------

NLMatrix nlMatrixFactorize(NLMatrix M, NLenum solver) {
  if (!valid(M, "nlMatrixFactorize")) return nullptr;
  if (solver != NL_CHOLMOD_EXT && solver != NL_SUPERLU_EXT && solver != NL_PERM_SUPERLU_EXT &&
      solver != NL_SYMMETRIC_SUPERLU_EXT) {
    print_message(
        format("nlMatrixFactorize(solver=0x%x): not a direct solver (NL_CHOLMOD_EXT, "
               "NL_SUPERLU_EXT, NL_PERM_SUPERLU_EXT, NL_SYMMETRIC_SUPERLU_EXT)",
               solver));
    return nullptr;
  }
  if (M->m != M->n || M->m == 0) {
    print_message(
        format("nlMatrixFactorize: the matrix is %u x %u: a square one is factored", M->m, M->n));
    return nullptr;
  }
  return factorize(M, solver);
}

NLMatrix nlMatrixNewFromFunction(NLuint m, NLuint n, NLMatrixFunc func) {
  auto* F = zeroed<function_matrix>(1);
  if (F == nullptr) {
    print_message("nlMatrixNewFromFunction: out of memory");
    return nullptr;
  }
  F->base.m = m;
  F->base.n = n;
  F->base.type = NL_MATRIX_FUNCTION;
  F->base.destroy_func = function_destroy;
  F->base.mult_func = func != nullptr ? function_mult : nullptr;
  F->func = func;
  return &F->base;
}

NLMatrixFunc nlMatrixGetFunction(NLMatrix M) {
  if (M == nullptr || M->type != NL_MATRIX_FUNCTION) return nullptr;
  return reinterpret_cast<function_matrix*>(M)->func;
}

NLMatrix nlMatrixNewFromProduct(NLMatrix M, NLboolean product_owns_M, NLMatrix N,
                                NLboolean product_owns_N) {
  if (M == nullptr || N == nullptr || M->n != N->m) {
    print_message("nlMatrixNewFromProduct: needs two matrices, M's columns = N's rows");
    return nullptr;
  }
  auto* P = zeroed<product_matrix>(1);
  double* tmp = zeroed<double>(N->m);
  if (P == nullptr || tmp == nullptr) {
    std::free(P);
    std::free(tmp);
    print_message("nlMatrixNewFromProduct: out of memory");
    return nullptr;
  }
  P->base.m = M->m;
  P->base.n = N->n;
  P->base.type = NL_MATRIX_OTHER;
  P->base.destroy_func = product_destroy;
  P->base.mult_func = product_mult;
  P->M = M;
  P->N = N;
  P->owns_M = product_owns_M != NL_FALSE;
  P->owns_N = product_owns_N != NL_FALSE;
  P->tmp = tmp;
  return &P->base;
}

NLMatrix nlGetCurrentMatrix(void) { return current_matrix("nlGetCurrentMatrix", false); }

NLMatrix nlGetCurrentMatrix_64(void) { return current_matrix("nlGetCurrentMatrix", true); }

}  // extern "C"
