"""cnc.eigsh: a few eigenpairs of a symmetric (generalized) problem, shaped like
scipy.sparse.linalg.eigsh, through cncEigenSolveCSR (ARPACK, opened by libcnc at run time)."""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

import numpy as np

from . import _matrix
from . import constants as _c
from ._library import has_function, lib
from .context import Context
from .errors import CncError


class ArpackNoConvergence(CncError):
    """ARPACK stopped before every eigenpair converged (cnc.h's CNC_REASON_MAX_ITERATIONS or
    CNC_REASON_BREAKDOWN): nothing was returned. Attribute: reason (the reason's name)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(_c.OK, f"cnc.eigsh: ARPACK did not converge: {reason}")


def eigen_solver_available() -> bool:
    """Whether cnc's eigen solver can run here: ARPACK loads (Debian: libarpack2, or the file
    named by CNC_ARPACK_LIBRARY)."""
    return has_function("cncEigenSolverAvailable") and bool(lib.cncEigenSolverAvailable())


_WHICH = {"LM": _c.EIGEN_LARGEST, "LA": _c.EIGEN_LARGEST, "SM": _c.EIGEN_SMALLEST,
          "SA": _c.EIGEN_SMALLEST}


def eigsh(
    A: Any,
    k: int = 6,
    M: Any = None,
    sigma: Optional[float] = None,
    which: str = "LM",
    maxiter: Optional[int] = None,
    tol: float = 0.0,
    return_eigenvectors: bool = True,
) -> Any:
    """The k eigenpairs of A x = w M x (A and M symmetric, M positive definite; M None: the
    identity), as scipy.sparse.linalg.eigsh returns them: (w, v) with w ascending (k,) and v
    (n, k), M-orthonormal columns (each with its largest component positive); w alone when
    return_eigenvectors is False.

    sigma: shift-invert, the k eigenvalues nearest sigma (A - sigma M is factored: CHOLMOD, or
      SuperLU where it is indefinite); `which` must then be "LM" (scipy's meaning). The fast way
      to the smallest eigenvalues of a large problem is a sigma just below them.
    which (without sigma): "LA"/"LM" the largest, "SA"/"SM" the smallest, algebraically ("LM"
      and "SM" are scipy's magnitudes: the same for a positive semi-definite problem).
    maxiter: ARPACK's restarts (default: 5 n, at least 100). tol: ARPACK's tolerance (0: machine
      precision).
    Raises CncError for bad input (k out of [1, n - 1], not symmetric, no ARPACK:
    ERR_UNSUPPORTED, ...) and ArpackNoConvergence when ARPACK stops short.
    """
    which = str(which).upper()
    if sigma is not None:
        if which != "LM":
            raise CncError(_c.ERR_INVALID_VALUE,
                           f"cnc.eigsh: with sigma, which must be 'LM' (got {which!r})")
        mode = _c.EIGEN_NEAREST
    elif which in _WHICH:
        mode = _WHICH[which]
    else:
        raise CncError(_c.ERR_INVALID_VALUE,
                       f"cnc.eigsh: which must be one of LM, LA, SM, SA (got {which!r})")
    if not has_function("cncEigenSolveCSR"):
        raise CncError(_c.ERR_UNSUPPORTED, "cnc.eigsh: this libcnc has no eigen solver")
    n, row_ptr, col_idx, values = _matrix.csr_arrays(A)
    m_arrays = None
    if M is not None:
        m_n, m_row_ptr, m_col_idx, m_values = _matrix.csr_arrays(M)
        if m_n != n:
            raise CncError(_c.ERR_SIZE_MISMATCH, f"cnc.eigsh: A is {n} x {n} and M {m_n} x {m_n}")
        m_arrays = (m_row_ptr, m_col_idx, m_values)
    k = int(k)
    if k < 1:
        raise CncError(_c.ERR_INVALID_VALUE, f"cnc.eigsh: k = {k} must be at least 1")
    w = np.empty(k, dtype=np.float64)
    v = np.empty((n, k), dtype=np.float64, order="F")
    i64, u32, dbl = (ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_uint32),
                     ctypes.POINTER(ctypes.c_double))

    def ptr(a: Optional[np.ndarray], t: Any) -> Any:
        return None if a is None else a.ctypes.data_as(t)

    with Context() as ctx:
        if maxiter is not None:
            ctx.set_parameter(_c.MAX_ITERATIONS, int(maxiter))
        ctx.set_parameter(_c.EIGEN_THRESHOLD, float(tol))
        ctx._call(
            lib.cncEigenSolveCSR, n, ptr(row_ptr, i64), ptr(col_idx, u32), ptr(values, dbl),
            ptr(m_arrays[0] if m_arrays else None, i64), ptr(m_arrays[1] if m_arrays else None, u32),
            ptr(m_arrays[2] if m_arrays else None, dbl), 0, k, mode,
            float(sigma) if sigma is not None else 0.0, ptr(w, dbl), ptr(v, dbl))
        if ctx.get_integer(_c.REASON) != _c.REASON_CONVERGED:
            raise ArpackNoConvergence(ctx.get_string(_c.REASON_NAME))
    return (w, v) if return_eigenvectors else w
