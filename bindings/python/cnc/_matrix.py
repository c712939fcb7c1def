"""Turns what a Python caller hands to cnc.solve into the arrays cncSolveCSR reads.

The matrix becomes 0-based CSR with int64 row offsets and uint32 column indices; scipy.sparse
matrices and arrays of any format are converted with .tocsr() (which sums COO duplicates), a CSR
input is passed as is (cnc sums duplicates within a row itself), and a dense 2-D array keeps its
nonzero entries. Right-hand sides become one column-major float64 block, system j at j*n, which
is both cnc's layout and numpy's Fortran order. A complex system (complex_ok) keeps complex128
values and blocks instead: (re, im) pairs of doubles, cncSolveCSRComplex's layout.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from . import constants as _c
from .errors import CncError

_UINT32_MAX = 2**32 - 1


def is_complex(A: Any) -> bool:
    """Whether A (scipy.sparse, numpy or array-like) holds complex numbers."""
    dtype = getattr(A, "dtype", None)
    if dtype is None:
        dtype = np.asarray(A).dtype
    return bool(np.issubdtype(dtype, np.complexfloating))


def _real_values(values, what, complex_ok=False):
    values = np.asarray(values)
    if complex_ok:
        if not (np.issubdtype(values.dtype, np.number) or values.dtype == np.bool_):
            raise CncError(_c.ERR_INVALID_VALUE,
                           f"cnc.solve: {what} holds {values.dtype}, not numbers")
        return np.ascontiguousarray(values, dtype=np.complex128)
    if np.iscomplexobj(values):
        raise CncError(_c.ERR_INVALID_VALUE,
                       f"cnc.solve: {what} is complex; cnc solves real systems")
    if not (np.issubdtype(values.dtype, np.number) or values.dtype == np.bool_):
        # object, strings, bytes, dates: numpy would parse "1.5" into 1.5 and solve that
        raise CncError(_c.ERR_INVALID_VALUE,
                       f"cnc.solve: {what} holds {values.dtype}, not numbers")
    return np.ascontiguousarray(values, dtype=np.float64)


def _check_square(shape, what="A"):
    if len(shape) != 2 or shape[0] != shape[1]:
        dims = "x".join(str(d) for d in shape)
        raise CncError(_c.ERR_SIZE_MISMATCH, f"cnc.solve: {what} is {dims}; it must be square")
    n = int(shape[0])
    if n > _UINT32_MAX:
        raise CncError(_c.ERR_OVERFLOW, f"cnc.solve: n={n} exceeds cnc's 32-bit index range")
    return n


def _check_csr_arrays(csr, n):
    """The CSR's arrays are what cnc's C call will read: scipy does not check a CSR built from
    arrays, and cncSolveCSR cannot check the lengths of the arrays it is handed."""
    indptr, indices, data = csr.indptr, csr.indices, csr.data
    for name, arr in (("indptr", indptr), ("indices", indices)):
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise CncError(_c.ERR_INVALID_VALUE,
                           f"cnc.solve: A.{name} holds {arr.dtype}, not integers")
    if len(indptr) != n + 1:
        raise CncError(_c.ERR_SIZE_MISMATCH,
                       f"cnc.solve: A.indptr has {len(indptr)} entries; n={n} needs {n + 1}")
    if int(indptr[0]) != 0:
        raise CncError(_c.ERR_INVALID_VALUE,
                       f"cnc.solve: A.indptr[0]={int(indptr[0])}; a CSR starts at 0")
    steps = np.diff(indptr)
    if steps.size and int(steps.min()) < 0:
        row = int(np.argmax(steps < 0))
        raise CncError(_c.ERR_INVALID_VALUE,
                       f"cnc.solve: A.indptr decreases at row {row} "
                       f"({int(indptr[row])} > {int(indptr[row + 1])})")
    nnz = int(indptr[-1])
    if nnz > len(indices) or nnz > len(data):
        raise CncError(_c.ERR_SIZE_MISMATCH,
                       f"cnc.solve: A.indptr[-1]={nnz} but A.indices has {len(indices)} and "
                       f"A.data {len(data)} entries")
    cols = indices[:nnz]
    if nnz and (int(cols.min()) < 0 or int(cols.max()) >= n):  # before any 32-bit narrowing
        bad = int(np.argmax((cols < 0) | (cols >= n)))
        raise CncError(_c.ERR_INDEX_OUT_OF_RANGE,
                       f"cnc.solve: A.indices[{bad}]={int(cols[bad])} out of range for n={n}")
    return nnz


def _from_sparse(A, complex_ok=False):
    n = _check_square(A.shape)
    csr = A if A.format == "csr" else A.tocsr()
    nnz = _check_csr_arrays(csr, n)
    row_ptr = np.ascontiguousarray(csr.indptr, dtype=np.int64)
    # int32 indices are reinterpreted in place (same bits; no copy of the largest array); the
    # range was checked above, so no index wraps.
    col_idx = np.ascontiguousarray(csr.indices[:nnz])
    col_idx = col_idx.view(np.uint32) if col_idx.dtype == np.int32 else col_idx.astype(np.uint32)
    values = _real_values(csr.data[:nnz], "A", complex_ok)
    return n, row_ptr, col_idx, values


def _from_dense(A, complex_ok=False):
    n = _check_square(A.shape)
    rows, cols = np.nonzero(A)  # row-major order: already sorted by row; NaN counts as nonzero
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=row_ptr[1:])
    values = _real_values(A[rows, cols], "A", complex_ok)
    return n, row_ptr, cols.astype(np.uint32), values


def csr_arrays(A: Any, complex_ok: bool = False) -> Tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """(n, row_ptr int64, col_idx uint32, values float64), 0-based, for any supported A
    (values complex128 with complex_ok)."""
    if hasattr(A, "tocsr") and hasattr(A, "format"):  # scipy.sparse matrix or array
        return _from_sparse(A, complex_ok)
    A = np.asarray(A)
    if A.ndim != 2:
        raise CncError(
            _c.ERR_SIZE_MISMATCH,
            f"cnc.solve: A has {A.ndim} dimensions; it must be a square matrix",
        )
    return _from_dense(A, complex_ok)


def column_block(
    b: Any, n: int, what: str = "b", complex_ok: bool = False
) -> Tuple[np.ndarray, int]:
    """(block, k): b of shape (n,) or (n, k) as an (n, k) Fortran-ordered float64 array
    (complex128 with complex_ok)."""
    if hasattr(b, "toarray"):
        b = b.toarray()
    b = np.asarray(b)
    shape = b.shape
    if b.ndim == 1:
        b = b.reshape(-1, 1)
    if b.ndim != 2 or b.shape[0] != n:
        raise CncError(
            _c.ERR_SIZE_MISMATCH,
            f"cnc.solve: {what} has shape {shape}; expected ({n},) or ({n}, k)",
        )
    if not (np.issubdtype(b.dtype, np.number) or b.dtype == np.bool_) or (
        np.iscomplexobj(b) and not complex_ok
    ):
        raise CncError(_c.ERR_INVALID_VALUE,
                       f"cnc.solve: {what} must hold real numbers, not {b.dtype}")
    dtype = np.complex128 if complex_ok else np.float64
    return np.asfortranarray(b, dtype=dtype), b.shape[1]
