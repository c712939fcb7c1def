/*
 * cnc_nl_matrix.h -- OpenNL 4's nl_matrix.h for cnc (installed as <NL/nl_matrix.h> too).
 *
 * OpenNL's matrix types and calls, with OpenNL's layouts and values, implemented by
 * libcnc_opennl: the abstract NLMatrix (nlMultMatrixVector, nlDeleteMatrix, nlMatrixNNZ),
 * compressed rows (NLCRSMatrix: built, patterned, loaded and saved in OpenNL's file format),
 * dynamic sparse matrices (NLSparseMatrix), matrices given by a function or as a product.
 *
 * 64-bit counts: a program built with GARGANTUA defined (as OpenNL's 64-bit builds) gets NLuint_big
 * = NLulong, the NLCRSMatrix layout that goes with it, and the entry points written for it (the
 * *_64 names below, selected by macros): one libcnc_opennl serves 32- and 64-bit programs.
 *
 * What differs from OpenNL: misuse (an index out of range, a full pattern row, a NULL matrix)
 * prints "OpenNL (cnc): <message>" and returns OpenNL's failure value ((NLulong)-1, NL_FALSE,
 * NULL or nothing) instead of aborting; nlMatrixFactorize returns NULL with a message where
 * OpenNL would abort (no factorization, library absent); nlCRSMatrixSave writes the file (OpenNL 4
 * opens it for reading).
 */
#ifndef CNC_NL_MATRIX_H
#define CNC_NL_MATRIX_H

#include "cnc_nl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Abstract matrices ------------------------------------------------------------------------
 */
typedef void (*NLDestroyMatrixFunc)(NLMatrix M);
typedef void (*NLMultMatrixVectorFunc)(NLMatrix M, const double* x, double* y);

#define NL_MATRIX_SPARSE_DYNAMIC 0x1001
#define NL_MATRIX_CRS 0x1002
#define NL_MATRIX_SUPERLU_EXT 0x1003
#define NL_MATRIX_CHOLMOD_EXT 0x1004
#define NL_MATRIX_FUNCTION 0x1005
#define NL_MATRIX_OTHER 0x1006

/** What every matrix starts with (OpenNL's layout). */
struct NLMatrixStruct {
  NLuint m;                         /* rows */
  NLuint n;                         /* columns */
  NLenum type;                      /* NL_MATRIX_* */
  NLDestroyMatrixFunc destroy_func; /* frees what the matrix owns (not the struct) */
  NLMultMatrixVectorFunc mult_func; /* y = M x */
};

/** Destroys M and frees it (allocated with malloc/calloc, as OpenNL's NL_NEW); NULL: nothing. */
NLAPI void NLAPIENTRY nlDeleteMatrix(NLMatrix M);
/** y = M x. */
NLAPI void NLAPIENTRY nlMultMatrixVector(NLMatrix M, const double* x, double* y);

/* ---- Sparse rows and columns ------------------------------------------------------------------
 */
typedef struct {
  NLuint index;
  NLdouble value;
} NLCoeff;

typedef struct {
  NLuint size;     /* coefficients */
  NLuint capacity; /* allocated */
  NLCoeff* coeff;
} NLRowColumn;

NLAPI void NLAPIENTRY nlRowColumnConstruct(NLRowColumn* c);
NLAPI void NLAPIENTRY nlRowColumnDestroy(NLRowColumn* c);
NLAPI void NLAPIENTRY nlRowColumnGrow(NLRowColumn* c);
/** Adds value to the coefficient of this index (created when absent). */
NLAPI void NLAPIENTRY nlRowColumnAdd(NLRowColumn* c, NLuint index, NLdouble value);
/** Appends a coefficient without looking for the index. */
NLAPI void NLAPIENTRY nlRowColumnAppend(NLRowColumn* c, NLuint index, NLdouble value);
NLAPI void NLAPIENTRY nlRowColumnZero(NLRowColumn* c);
NLAPI void NLAPIENTRY nlRowColumnClear(NLRowColumn* c);
/** Sorts by increasing index. */
NLAPI void NLAPIENTRY nlRowColumnSort(NLRowColumn* c);

/* ---- Compressed rows --------------------------------------------------------------------------
 */
#ifdef GARGANTUA
typedef NLulong NLuint_big;
#else
typedef NLuint NLuint_big;
#endif

typedef struct {
  NLuint m;
  NLuint n;
  NLenum type; /* NL_MATRIX_CRS */
  NLDestroyMatrixFunc destroy_func;
  NLMultMatrixVectorFunc mult_func;
  NLdouble* val;               /* nnz values */
  NLuint_big* rowptr;          /* m + 1 offsets */
  NLuint* colind;              /* nnz columns; (NLuint)-1: a pattern slot still unused */
  NLuint nslices;              /* row slices of the product */
  NLuint* sliceptr;            /* nslices + 1 rows */
  NLboolean symmetric_storage; /* lower triangle only; the product mirrors it */
} NLCRSMatrix;

#ifdef GARGANTUA
#define nlCRSMatrixConstruct nlCRSMatrixConstruct_64
#define nlCRSMatrixConstructSymmetric nlCRSMatrixConstructSymmetric_64
#define nlCRSMatrixConstructPattern nlCRSMatrixConstructPattern_64
#define nlCRSMatrixConstructPatternSymmetric nlCRSMatrixConstructPatternSymmetric_64
#define nlCRSMatrixPatternSetRowLength nlCRSMatrixPatternSetRowLength_64
#define nlCRSMatrixPatternCompile nlCRSMatrixPatternCompile_64
#define nlCRSMatrixAdd nlCRSMatrixAdd_64
#define nlCRSMatrixAddAt nlCRSMatrixAddAt_64
#define nlCRSMatrixSetCoefficientAtRowOffset nlCRSMatrixSetCoefficientAtRowOffset_64
#define nlCRSMatrixLoad nlCRSMatrixLoad_64
#define nlCRSMatrixSave nlCRSMatrixSave_64
#define nlCRSMatrixNNZ nlCRSMatrixNNZ_64
#define nlSparseMatrixNNZ nlSparseMatrixNNZ_64
#define nlSparseMatrixAddMatrix nlSparseMatrixAddMatrix_64
#define nlCRSMatrixNewFromSparseMatrix nlCRSMatrixNewFromSparseMatrix_64
#define nlCRSMatrixNewFromSparseMatrixSymmetric nlCRSMatrixNewFromSparseMatrixSymmetric_64
#define nlMatrixCompress nlMatrixCompress_64
#define nlMatrixNNZ nlMatrixNNZ_64
#endif

NLAPI void NLAPIENTRY nlCRSMatrixConstruct(NLCRSMatrix* M, NLuint m, NLuint n, NLuint_big nnz,
                                           NLuint nslices);
NLAPI void NLAPIENTRY nlCRSMatrixConstructSymmetric(NLCRSMatrix* M, NLuint n, NLuint_big nnz);
/** A pattern: row lengths (nlCRSMatrixPatternSetRowLength), then nlCRSMatrixPatternCompile. */
NLAPI void NLAPIENTRY nlCRSMatrixConstructPattern(NLCRSMatrix* M, NLuint m, NLuint n);
NLAPI void NLAPIENTRY nlCRSMatrixConstructPatternSymmetric(NLCRSMatrix* M, NLuint n);
NLAPI void NLAPIENTRY nlCRSMatrixPatternSetRowLength(NLCRSMatrix* M, NLuint i, NLuint n);
NLAPI void NLAPIENTRY nlCRSMatrixPatternCompile(NLCRSMatrix* M);
/** a_ij += value in the slot of row i holding j, else its first unused one; returns the slot
 * ((NLulong)-1 for j > i with symmetric storage, or a full row). */
NLAPI NLulong NLAPIENTRY nlCRSMatrixAdd(NLCRSMatrix* M, NLuint i, NLuint j, NLdouble value);
/** a_ij += value in slot `index` of row i. */
NLAPI void NLAPIENTRY nlCRSMatrixAddAt(NLCRSMatrix* M, NLuint i, NLuint j, NLdouble value,
                                       NLulong index);
/** a_ij = value in the row_offset-th slot of row i. */
NLAPI void NLAPIENTRY nlCRSMatrixSetCoefficientAtRowOffset(NLCRSMatrix* M, NLuint i, NLuint j,
                                                           NLdouble value, NLuint row_offset);
/** OpenNL's binary file: m, n (NLuint), nnz (NLuint_big), rowptr, colind, val. */
NLAPI NLboolean NLAPIENTRY nlCRSMatrixLoad(NLCRSMatrix* M, const char* filename);
NLAPI NLboolean NLAPIENTRY nlCRSMatrixSave(NLCRSMatrix* M, const char* filename);
NLAPI NLuint_big NLAPIENTRY nlCRSMatrixNNZ(NLCRSMatrix* M);

/* ---- Dynamic sparse matrices ------------------------------------------------------------------
 */
#define NL_MATRIX_STORE_ROWS 1
#define NL_MATRIX_STORE_COLUMNS 2
#define NL_MATRIX_STORE_SYMMETRIC 4 /* lower triangle only */

typedef struct {
  NLuint m;
  NLuint n;
  NLenum type; /* NL_MATRIX_SPARSE_DYNAMIC */
  NLDestroyMatrixFunc destroy_func;
  NLMultMatrixVectorFunc mult_func;
  NLuint diag_size;
  NLuint diag_capacity;
  NLenum storage; /* NL_MATRIX_STORE_* */
  NLRowColumn* row;
  NLRowColumn* column;
  NLdouble* diag;
  NLuint row_capacity;
  NLuint column_capacity;
} NLSparseMatrix;

NLAPI NLMatrix NLAPIENTRY nlSparseMatrixNew(NLuint m, NLuint n, NLenum storage);
NLAPI void NLAPIENTRY nlSparseMatrixConstruct(NLSparseMatrix* M, NLuint m, NLuint n,
                                              NLenum storage);
NLAPI void NLAPIENTRY nlSparseMatrixDestroy(NLSparseMatrix* M);
NLAPI void NLAPIENTRY nlSparseMatrixMult(NLSparseMatrix* A, const NLdouble* x, NLdouble* y);
NLAPI void NLAPIENTRY nlSparseMatrixAdd(NLSparseMatrix* M, NLuint i, NLuint j, NLdouble value);
/** M += mul N (N: a dynamic sparse or a CRS matrix). */
NLAPI void NLAPIENTRY nlSparseMatrixAddMatrix(NLSparseMatrix* M, double mul, const NLMatrix N);
NLAPI void NLAPIENTRY nlSparseMatrixZero(NLSparseMatrix* M);
NLAPI void NLAPIENTRY nlSparseMatrixClear(NLSparseMatrix* M);
NLAPI NLuint_big NLAPIENTRY nlSparseMatrixNNZ(NLSparseMatrix* M);
NLAPI void NLAPIENTRY nlSparseMatrixSort(NLSparseMatrix* M);
NLAPI void NLAPIENTRY nlSparseMatrixAddRow(NLSparseMatrix* M);
NLAPI void NLAPIENTRY nlSparseMatrixAddColumn(NLSparseMatrix* M);
/** row i1 += s row i2. */
NLAPI void NLAPIENTRY nlSparseMatrixMAddRow(NLSparseMatrix* M, NLuint i1, double s, NLuint i2);
NLAPI void NLAPIENTRY nlSparseMatrixScaleRow(NLSparseMatrix* M, NLuint i, double s);
NLAPI void NLAPIENTRY nlSparseMatrixZeroRow(NLSparseMatrix* M, NLuint i);

NLAPI NLMatrix NLAPIENTRY nlCRSMatrixNewFromSparseMatrix(NLSparseMatrix* M);
/** M is symmetric: its upper triangle is ignored, the result has symmetric storage. */
NLAPI NLMatrix NLAPIENTRY nlCRSMatrixNewFromSparseMatrixSymmetric(NLSparseMatrix* M);
/** A dynamic sparse *M becomes a CRS matrix (others are left as they are). */
NLAPI void NLAPIENTRY nlMatrixCompress(NLMatrix* M);
/** Entries of a sparse matrix, else m n. */
NLAPI NLuint_big NLAPIENTRY nlMatrixNNZ(NLMatrix M);
/** A factorization of the square M (compressed rows of either width, or a dynamic sparse matrix)
 *  by NL_CHOLMOD_EXT or NL_SUPERLU_EXT / NL_PERM_SUPERLU_EXT / NL_SYMMETRIC_SUPERLU_EXT (cnc's
 *  CHOLMOD and SuperLU, factored now, on a copy of M's entries): a matrix of type
 *  NL_MATRIX_CHOLMOD_EXT / NL_MATRIX_SUPERLU_EXT whose nlMultMatrixVector(F, x, y) solves
 *  M y = x, freed by nlDeleteMatrix. NULL, with a message, for another solver or matrix type, a
 *  library that does not load, or an M without a factorization (CHOLMOD: not symmetric positive
 *  definite; SuperLU: singular). */
NLAPI NLMatrix NLAPIENTRY nlMatrixFactorize(NLMatrix M, NLenum solver);

/* ---- Matrices given by a function, products ---------------------------------------------------
 */
typedef void (*NLMatrixFunc)(const double* x, double* y);
NLAPI NLMatrix NLAPIENTRY nlMatrixNewFromFunction(NLuint m, NLuint n, NLMatrixFunc func);
/** The function of a matrix from nlMatrixNewFromFunction, else NULL. */
NLAPI NLMatrixFunc NLAPIENTRY nlMatrixGetFunction(NLMatrix M);
/** M N (M: m x k, N: k x n); the product deletes the factors it owns. */
NLAPI NLMatrix NLAPIENTRY nlMatrixNewFromProduct(NLMatrix M, NLboolean product_owns_M, NLMatrix N,
                                                 NLboolean product_owns_N);

#ifdef __cplusplus
}
#endif

#endif /* CNC_NL_MATRIX_H */
