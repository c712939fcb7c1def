/* OpenNL 4's names through the include names programs use (<NL/nl.h>, <NL/nl_ext.h>,
 * <NL/nl_64.h>, <NL/nl_matrix.h>, <NL/nl_private.h>): values and types as OpenNL 4's headers
 * (checked at compile time), and the nl_matrix.h calls against dense products computed here.
 * Built twice: as is (32-bit counts) and with GARGANTUA (64-bit counts, NLuint_big = NLulong). */
#define _POSIX_C_SOURCE 200809L /* ftruncate, fileno, getpid */
/* clang-format off */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
/* clang-format on */

#include <NL/nl.h>
#include <NL/nl_64.h>
#include <NL/nl_ext.h>
#include <NL/nl_matrix.h>
#include <NL/nl_private.h>

#include "nl_messages.h"
#include "nl_test_util.h"

/* ---- Values and types (OpenNL 4's nl.h, nl_ext.h, nl_matrix.h) --------------------------------
 */
#define SAME_TYPE(a, T) _Generic((a), T : 1, default : 0)
_Static_assert(NL_VERSION_4_0 == 1, "NL_VERSION_4_0");
_Static_assert(NL_SOLVER == 0x100 && NL_NB_VARIABLES == 0x101 && NL_LEAST_SQUARES == 0x102 &&
                   NL_MAX_ITERATIONS == 0x103 && NL_THRESHOLD == 0x104 && NL_OMEGA == 0x105 &&
                   NL_SYMMETRIC == 0x106 && NL_USED_ITERATIONS == 0x107 && NL_ERROR == 0x108 &&
                   NL_INNER_ITERATIONS == 0x109 && NL_ELAPSED_TIME == 0x10a &&
                   NL_PRECONDITIONER == 0x10b && NL_GFLOPS == 0x10c && NL_NNZ == 0x10d &&
                   NL_NB_SYSTEMS == 0x10e,
               "parameters");
_Static_assert(NL_SOLVER_DEFAULT == 0 && NL_CG == 0x200 && NL_BICGSTAB == 0x201 &&
                   NL_GMRES == 0x202 && NL_PRECOND_NONE == 0 && NL_PRECOND_JACOBI == 0x300 &&
                   NL_PRECOND_SSOR == 0x301 && NL_PRECOND_USER == 0x303,
               "solvers");
_Static_assert(NL_NORMALIZE_ROWS == 0x400 && NL_VERBOSE == 0x401 &&
                   NL_NO_VARIABLES_INDIRECTION == 0x402 && NL_FUNC_SOLVER == 0x600 &&
                   NL_FUNC_MATRIX == 0x601 && NL_FUNC_PRECONDITIONER == 0x602 &&
                   NL_FUNC_PROGRESS == 0x603,
               "flags and functions");
_Static_assert(NL_SYSTEM == 0 && NL_MATRIX == 1 && NL_ROW == 2 && NL_MATRIX_PATTERN == 3 &&
                   NL_VARIABLES_BUFFER == 0x1000 && NL_STIFFNESS_MATRIX == 0x3001 &&
                   NL_MASS_MATRIX == 0x3002 && NL_NB_EIGENS == NL_NB_SYSTEMS &&
                   NL_EIGEN_MAX_ITERATIONS == NL_MAX_ITERATIONS &&
                   NL_EIGEN_THRESHOLD == NL_THRESHOLD && NL_EIGEN_SOLVER == 0x2000 &&
                   NL_EIGEN_SHIFT == 0x2001 && NL_EIGEN_SHIFT_INVERT == 0x2002,
               "primitives, buffers, eigen");
_Static_assert(NL_SUPERLU_EXT == 0x210 && NL_PERM_SUPERLU_EXT == 0x211 &&
                   NL_SYMMETRIC_SUPERLU_EXT == 0x212 && NL_SOLVER_USER == 0x213 &&
                   NL_CHOLMOD_EXT == 0x214 && NL_ARPACK_EXT == 0x215 && NL_AMGCL_EXT == 0x216 &&
                   NL_CUDA_PRECOND_ILU_EXT == 0x220,
               "nl_ext.h");
_Static_assert(NL_MATRIX_SPARSE_DYNAMIC == 0x1001 && NL_MATRIX_CRS == 0x1002 &&
                   NL_MATRIX_SUPERLU_EXT == 0x1003 && NL_MATRIX_CHOLMOD_EXT == 0x1004 &&
                   NL_MATRIX_FUNCTION == 0x1005 && NL_MATRIX_OTHER == 0x1006 &&
                   NL_MATRIX_STORE_ROWS == 1 && NL_MATRIX_STORE_COLUMNS == 2 &&
                   NL_MATRIX_STORE_SYMMETRIC == 4,
               "nl_matrix.h");
_Static_assert(sizeof(NLint) == 4 && sizeof(NLuint) == 4 && sizeof(NLlong) == 8 &&
                   sizeof(NLulong) == 8 && (NLint)-1 < 0 && (NLlong)-1 < 0 && (NLulong)-1 > 0,
               "integer types");
#ifdef GARGANTUA
_Static_assert(sizeof(NLuint_big) == 8, "GARGANTUA: 64-bit counts");
#else
_Static_assert(sizeof(NLuint_big) == 4, "32-bit counts");
#endif
_Static_assert(SAME_TYPE(nlAddIJCoefficient(0, 0, 0.0), NLulong), "nlAddIJCoefficient: NLulong");
_Static_assert(SAME_TYPE(nlGetCurrentMatrix(), NLMatrix), "nlGetCurrentMatrix: NLMatrix");
_Static_assert(SAME_TYPE(nlCRSMatrixNNZ((NLCRSMatrix*)0), NLuint_big), "nlCRSMatrixNNZ");
_Static_assert(SAME_TYPE(nlCRSMatrixAdd((NLCRSMatrix*)0, 0, 0, 0.0), NLulong), "nlCRSMatrixAdd");

/* Every function of the four headers, by address: each must link. */
static void test_every_function_links(void** state) {
  (void)state;
  const NLfunc fns[] = {
      (NLfunc)nlNewContext,
      (NLfunc)nlDeleteContext,
      (NLfunc)nlMakeCurrent,
      (NLfunc)nlGetCurrent,
      (NLfunc)nlInitExtension,
      (NLfunc)nlExtensionIsInitialized,
      (NLfunc)nlInitialize,
      (NLfunc)nlSolverParameterd,
      (NLfunc)nlSolverParameteri,
      (NLfunc)nlGetBooleanv,
      (NLfunc)nlGetDoublev,
      (NLfunc)nlGetIntegerv,
      (NLfunc)nlGetIntegervL,
      (NLfunc)nlEnable,
      (NLfunc)nlDisable,
      (NLfunc)nlIsEnabled,
      (NLfunc)nlSetFunction,
      (NLfunc)nlGetFunction,
      (NLfunc)nlSetVariable,
      (NLfunc)nlMultiSetVariable,
      (NLfunc)nlGetVariable,
      (NLfunc)nlMultiGetVariable,
      (NLfunc)nlLockVariable,
      (NLfunc)nlUnlockVariable,
      (NLfunc)nlVariableIsLocked,
      (NLfunc)nlBegin,
      (NLfunc)nlEnd,
      (NLfunc)nlSetRowLength,
      (NLfunc)nlCoefficient,
      (NLfunc)nlAddIJCoefficient,
      (NLfunc)nlAddIJCoefficientAt,
      (NLfunc)nlSetIJCoefficientAtRowOffset,
      (NLfunc)nlAddIRightHandSide,
      (NLfunc)nlMultiAddIRightHandSide,
      (NLfunc)nlRightHandSide,
      (NLfunc)nlMultiRightHandSide,
      (NLfunc)nlRowScaling,
      (NLfunc)nlSolve,
      (NLfunc)nlUpdateRightHandSide,
      (NLfunc)nlBindBuffer,
      (NLfunc)nlMatrixMode,
      (NLfunc)nlEigenSolverParameterd,
      (NLfunc)nlEigenSolverParameteri,
      (NLfunc)nlEigenSolve,
      (NLfunc)nlGetEigenValue,
      (NLfunc)nlPrintfFuncs,
      (NLfunc)nlGetCurrentMatrix,
      (NLfunc)nlDeleteMatrix,
      (NLfunc)nlMultMatrixVector,
      (NLfunc)nlRowColumnConstruct,
      (NLfunc)nlRowColumnDestroy,
      (NLfunc)nlRowColumnGrow,
      (NLfunc)nlRowColumnAdd,
      (NLfunc)nlRowColumnAppend,
      (NLfunc)nlRowColumnZero,
      (NLfunc)nlRowColumnClear,
      (NLfunc)nlRowColumnSort,
      (NLfunc)nlCRSMatrixConstruct,
      (NLfunc)nlCRSMatrixConstructSymmetric,
      (NLfunc)nlCRSMatrixConstructPattern,
      (NLfunc)nlCRSMatrixConstructPatternSymmetric,
      (NLfunc)nlCRSMatrixPatternSetRowLength,
      (NLfunc)nlCRSMatrixPatternCompile,
      (NLfunc)nlCRSMatrixAdd,
      (NLfunc)nlCRSMatrixAddAt,
      (NLfunc)nlCRSMatrixSetCoefficientAtRowOffset,
      (NLfunc)nlCRSMatrixLoad,
      (NLfunc)nlCRSMatrixSave,
      (NLfunc)nlCRSMatrixNNZ,
      (NLfunc)nlSparseMatrixNew,
      (NLfunc)nlSparseMatrixConstruct,
      (NLfunc)nlSparseMatrixDestroy,
      (NLfunc)nlSparseMatrixMult,
      (NLfunc)nlSparseMatrixAdd,
      (NLfunc)nlSparseMatrixAddMatrix,
      (NLfunc)nlSparseMatrixZero,
      (NLfunc)nlSparseMatrixClear,
      (NLfunc)nlSparseMatrixNNZ,
      (NLfunc)nlSparseMatrixSort,
      (NLfunc)nlSparseMatrixAddRow,
      (NLfunc)nlSparseMatrixAddColumn,
      (NLfunc)nlSparseMatrixMAddRow,
      (NLfunc)nlSparseMatrixScaleRow,
      (NLfunc)nlSparseMatrixZeroRow,
      (NLfunc)nlCRSMatrixNewFromSparseMatrix,
      (NLfunc)nlCRSMatrixNewFromSparseMatrixSymmetric,
      (NLfunc)nlMatrixCompress,
      (NLfunc)nlMatrixNNZ,
      (NLfunc)nlMatrixFactorize,
      (NLfunc)nlMatrixNewFromFunction,
      (NLfunc)nlMatrixGetFunction,
      (NLfunc)nlMatrixNewFromProduct,
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; ++i) assert_non_null(fns[i]);
}

/* The 4 x 4 matrix used below (nonsymmetric), and y = A x computed densely. */
static const double kA[4][4] = {{4, -1, 0, 2}, {0, 3, 0, 0}, {1, 0, 5, -2}, {0, -3, 0, 6}};
static const double kX[4] = {1.0, -2.0, 0.5, 3.0};

static void dense_mult(const double a[4][4], const double* x, double* y) {
  for (int i = 0; i < 4; ++i) {
    y[i] = 0.0;
    for (int j = 0; j < 4; ++j) y[i] += a[i][j] * x[j];
  }
}

static void assert_vectors(const double* a, const double* b, int n) {
  for (int i = 0; i < n; ++i) assert_double_equal(a[i], b[i], 1e-12);
}

/* An NLCRSMatrix from a pattern (rows' lengths, then slots), its product, save and load. */
static void test_crs_matrix(void** state) {
  (void)state;
  NLCRSMatrix* M = NL_NEW(NLCRSMatrix);
  nlCRSMatrixConstructPattern(M, 4, 4);
  for (NLuint i = 0; i < 4; ++i) {
    NLuint len = 0;
    for (int j = 0; j < 4; ++j) len += kA[i][j] != 0.0;
    nlCRSMatrixPatternSetRowLength(M, i, len);
  }
  nlCRSMatrixPatternCompile(M);
  assert_int_equal(nlCRSMatrixNNZ(M), 9);
  for (NLuint i = 0; i < 4; ++i) {
    NLuint offset = 0;
    for (NLuint j = 0; j < 4; ++j) {
      if (kA[i][j] == 0.0) continue;
      if (offset == 0) {
        /* half now, half at the returned slot */
        const NLulong at = nlCRSMatrixAdd(M, i, j, kA[i][j] / 2);
        assert_int_equal(at, M->rowptr[i]);
        nlCRSMatrixAddAt(M, i, j, kA[i][j] / 2, at);
      } else {
        nlCRSMatrixSetCoefficientAtRowOffset(M, i, j, kA[i][j], offset);
      }
      ++offset;
    }
  }
  nl_capture(); /* OpenNL asserts on a full row: a message and (NLulong)-1 here */
  assert_int_equal(nlCRSMatrixAdd(M, 1, 3, 1.0), (NLulong)-1);
  assert_true(strlen(nl_messages) > 0);
  nl_release();
  double y[4], ref[4];
  dense_mult(kA, kX, ref);
  nlMultMatrixVector((NLMatrix)M, kX, y);
  assert_vectors(y, ref, 4);
  assert_int_equal(nlMatrixNNZ((NLMatrix)M), 9);

  char path[64];
  snprintf(path, sizeof path, "/tmp/cnc_nl_crs_%d_%d.bin", (int)getpid(), (int)sizeof(NLuint_big));
  assert_true(nlCRSMatrixSave(M, path));
  NLCRSMatrix* L = NL_NEW(NLCRSMatrix);
  assert_true(nlCRSMatrixLoad(L, path));
  assert_int_equal(L->m, 4);
  assert_int_equal(nlCRSMatrixNNZ(L), 9);
  nlMultMatrixVector((NLMatrix)L, kX, y);
  assert_vectors(y, ref, 4);
  /* A truncated file: NL_FALSE and a message, nothing read out of bounds. */
  FILE* f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(ftruncate(fileno(f), 20), 0);
  fclose(f);
  NLCRSMatrix* T = NL_NEW(NLCRSMatrix);
  nl_capture();
  assert_false(nlCRSMatrixLoad(T, path));
  assert_non_null(strstr(nl_messages, "truncated"));
  nl_release();
  free(T);
  unlink(path);
  nlDeleteMatrix((NLMatrix)L);
  nlDeleteMatrix((NLMatrix)M);
}

/* Dynamic sparse matrices: add, product (rows, columns, symmetric storage), compression. */
static void test_sparse_matrix(void** state) {
  (void)state;
  double y[4], ref[4];
  dense_mult(kA, kX, ref);
  const NLenum storages[2] = {NL_MATRIX_STORE_ROWS, NL_MATRIX_STORE_COLUMNS};
  for (int s = 0; s < 2; ++s) {
    NLMatrix M = nlSparseMatrixNew(4, 4, storages[s]);
    NLSparseMatrix* S = (NLSparseMatrix*)M;
    for (NLuint i = 0; i < 4; ++i)
      for (NLuint j = 0; j < 4; ++j)
        if (kA[i][j] != 0.0) nlSparseMatrixAdd(S, i, j, kA[i][j]);
    assert_int_equal(nlSparseMatrixNNZ(S), 9);
    nlMultMatrixVector(M, kX, y);
    assert_vectors(y, ref, 4);
    if (storages[s] == NL_MATRIX_STORE_ROWS) {
      nlMatrixCompress(&M);
      assert_int_equal(M->type, NL_MATRIX_CRS);
      nlMultMatrixVector(M, kX, y);
      assert_vectors(y, ref, 4);
    }
    nlDeleteMatrix(M);
  }
  /* Symmetric storage: the lower triangle stands for both. */
  const double sym[4][4] = {{4, 1, 0, 2}, {1, 3, 0, 0}, {0, 0, 5, -1}, {2, 0, -1, 6}};
  dense_mult(sym, kX, ref);
  NLMatrix M = nlSparseMatrixNew(4, 4, NL_MATRIX_STORE_ROWS | NL_MATRIX_STORE_SYMMETRIC);
  for (NLuint i = 0; i < 4; ++i)
    for (NLuint j = 0; j < 4; ++j)
      if (sym[i][j] != 0.0) nlSparseMatrixAdd((NLSparseMatrix*)M, i, j, sym[i][j]);
  assert_int_equal(nlSparseMatrixNNZ((NLSparseMatrix*)M), 7); /* 4 diagonal + 3 below */
  nlMultMatrixVector(M, kX, y);
  assert_vectors(y, ref, 4);
  NLMatrix C = nlCRSMatrixNewFromSparseMatrixSymmetric((NLSparseMatrix*)M);
  assert_true(((NLCRSMatrix*)C)->symmetric_storage);
  nlMultMatrixVector(C, kX, y);
  assert_vectors(y, ref, 4);
  /* M += 2 C: 3 times the matrix. */
  nlSparseMatrixAddMatrix((NLSparseMatrix*)M, 2.0, C);
  nlMultMatrixVector(M, kX, y);
  for (int i = 0; i < 4; ++i) assert_double_equal(y[i], 3.0 * ref[i], 1e-12);
  nlDeleteMatrix(C);
  nlDeleteMatrix(M);
  /* Rows: scale, zero, add a multiple of another; new rows and columns. */
  M = nlSparseMatrixNew(2, 2, NL_MATRIX_STORE_ROWS);
  NLSparseMatrix* S = (NLSparseMatrix*)M;
  nlSparseMatrixAdd(S, 0, 0, 1.0);
  nlSparseMatrixAdd(S, 0, 1, 2.0);
  nlSparseMatrixAdd(S, 1, 1, 3.0);
  nlSparseMatrixMAddRow(S, 1, 10.0, 0); /* row 1 = (10, 23) */
  nlSparseMatrixScaleRow(S, 0, 0.5);    /* row 0 = (0.5, 1) */
  const double x2[2] = {1.0, 1.0};
  double y2[2];
  nlMultMatrixVector(M, x2, y2);
  assert_double_equal(y2[0], 1.5, 1e-15);
  assert_double_equal(y2[1], 33.0, 1e-15);
  nlSparseMatrixZeroRow(S, 1);
  nlSparseMatrixAddRow(S);
  nlSparseMatrixAddColumn(S);
  assert_int_equal(S->m, 3);
  assert_int_equal(S->n, 3);
  nlSparseMatrixAdd(S, 2, 2, 7.0);
  const double x3[3] = {1.0, 1.0, 2.0};
  double y3[3];
  nlMultMatrixVector(M, x3, y3);
  assert_double_equal(y3[0], 1.5, 1e-15);
  assert_double_equal(y3[1], 0.0, 1e-15);
  assert_double_equal(y3[2], 14.0, 1e-15);
  nlDeleteMatrix(M);
}

/* Function matrices and products; factorization (no direct solver) and the current matrix. */
static void twice(const double* x, double* y) {
  for (int i = 0; i < 4; ++i) y[i] = 2.0 * x[i];
}

static void test_function_and_product(void** state) {
  (void)state;
  NLMatrix F = nlMatrixNewFromFunction(4, 4, twice);
  assert_int_equal(F->type, NL_MATRIX_FUNCTION);
  assert_ptr_equal(nlMatrixGetFunction(F), twice);
  NLMatrix S = nlSparseMatrixNew(4, 4, NL_MATRIX_STORE_ROWS);
  for (NLuint i = 0; i < 4; ++i)
    for (NLuint j = 0; j < 4; ++j)
      if (kA[i][j] != 0.0) nlSparseMatrixAdd((NLSparseMatrix*)S, i, j, kA[i][j]);
  assert_null(nlMatrixGetFunction(S));
  NLMatrix P = nlMatrixNewFromProduct(S, NL_TRUE, F, NL_TRUE); /* A (2 x) */
  double y[4], ref[4];
  dense_mult(kA, kX, ref);
  nlMultMatrixVector(P, kX, y);
  for (int i = 0; i < 4; ++i) assert_double_equal(y[i], 2.0 * ref[i], 1e-12);
  assert_int_equal(nlMatrixNNZ(P), 16); /* not sparse: m n */
  nl_capture();
  assert_null(nlMatrixFactorize(S, NL_CG)); /* not a direct solver (test_nl_direct.c: those) */
  assert_non_null(strstr(nl_messages, "direct solver"));
  nl_release();
  nlDeleteMatrix(P); /* deletes S and F, which it owns */

  NLContext ctx = nlNewContext();
  nl_capture();
  assert_null(nlGetCurrentMatrix());
  assert_true(strlen(nl_messages) > 0);
  nl_release();
  nlDeleteContext(ctx);
}

/* nl_private.h's allocation macros (legacy programs allocate with them). */
static void test_private_macros(void** state) {
  (void)state;
  double* a = NL_NEW_ARRAY(double, 8);
  assert_non_null(a);
  for (int i = 0; i < 8; ++i) assert_double_equal(a[i], 0.0, 0.0);
  a = NL_RENEW_ARRAY(double, a, 16);
  assert_non_null(a);
  NL_CLEAR_ARRAY(double, a, 16);
  NL_DELETE_ARRAY(a);
  assert_null(a);
  NLCoeff* c = NL_NEW(NLCoeff);
  assert_non_null(c);
  NL_DELETE(c);
  assert_null(c);
  assert_int_equal(MAX(2, 3), 3);
  assert_int_equal(MIN(2, 3), 2);
  assert_int_equal(NL_UINT_MAX, 0xffffffffu);
}

/* NLRowColumn. */
static void test_row_column(void** state) {
  (void)state;
  NLRowColumn r;
  nlRowColumnConstruct(&r);
  for (NLuint i = 0; i < 10; ++i) nlRowColumnAppend(&r, 9 - i, (double)i);
  nlRowColumnAdd(&r, 3, 100.0); /* index 3 holds 6: now 106 */
  assert_int_equal(r.size, 10);
  nlRowColumnSort(&r);
  for (NLuint i = 0; i < 10; ++i) assert_int_equal(r.coeff[i].index, i);
  assert_double_equal(r.coeff[3].value, 106.0, 0.0);
  nlRowColumnZero(&r);
  assert_int_equal(r.size, 0);
  nlRowColumnDestroy(&r);
  assert_null(r.coeff);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_function_links), cmocka_unit_test(test_crs_matrix),
      cmocka_unit_test(test_sparse_matrix),        cmocka_unit_test(test_function_and_product),
      cmocka_unit_test(test_private_macros),       cmocka_unit_test(test_row_column),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
