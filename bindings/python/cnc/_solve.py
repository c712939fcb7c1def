"""cnc.solve: one call from a scipy/numpy matrix and right-hand side(s) to (x, info).

Each call uses a fresh context, so calls are independent and thread-safe; keep a cnc.Context and
call its solve_matrix() to reuse one context (and its GPU) across solves. Options left at their
"auto"/0 defaults are not set at all, so the CNC_BACKEND and CNC_NUM_THREADS environment
variables keep their documented effect.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from . import _device
from . import constants as _c
from .context import Context
from .errors import CncError
from .info import SolveInfo

PRECISIONS = {"double": _c.DOUBLE, "single": _c.SINGLE, "mixed": _c.MIXED}
BACKENDS = {
    "auto": _c.BACKEND_AUTO,
    "cpu": _c.BACKEND_CPU,
    "opencl": _c.BACKEND_OPENCL,
    "cuda": _c.BACKEND_CUDA,
}
FORMATS = {
    "auto": _c.FORMAT_AUTO,
    "csr": _c.FORMAT_CSR,
    "bcrs2": _c.FORMAT_BCRS2,
    "bcrs4": _c.FORMAT_BCRS4,
    "sell": _c.FORMAT_SELL,
    "zcsr": _c.FORMAT_ZCSR,  # complex systems only (cncSolveCSRComplex)
    "zsell": _c.FORMAT_ZSELL,  # complex systems on CUDA only
}
PRECONDITIONERS = {
    "jacobi": _c.PRECOND_JACOBI,
    "ssor": _c.PRECOND_SSOR,  # on the CPU backend (sequential sweeps)
    "none": _c.PRECOND_NONE,
    None: _c.PRECOND_NONE,
}
SOLVERS = {
    "cg": _c.CG,
    "bicgstab": _c.BICGSTAB,
    "gmres": _c.GMRES,
    "block_cg": _c.BLOCK_CG,  # b of shape (n, k): one Krylov space shared by the k columns
    "cholmod": _c.CHOLMOD,  # direct solvers: factored on the host (see cnc.direct_solver_available)
    "superlu": _c.SUPERLU,
    "cudss": _c.CUDSS,  # direct, on a CUDA GPU (the nvidia-cudss-cu13 wheel)
}
REORDERS = {"auto": _c.REORDER_AUTO, "none": _c.REORDER_NONE, "rcm": _c.REORDER_RCM}


def _enum(table: Dict[Any, int], value: Union[str, int, None], what: str) -> int:
    """A string option (or the cnc constant itself) as the cnc enum value."""
    if isinstance(value, str) or value is None:
        key = value.lower() if isinstance(value, str) else value
        if key in table:
            return table[key]
        choices = ", ".join(repr(k) for k in table if k is not None)
        raise CncError(_c.ERR_INVALID_ENUM, f"cnc.solve: unknown {what} {value!r}; use {choices}")
    return int(value)  # a cnc constant: cnc itself rejects the wrong ones


def solve(
    A: Any,
    b: Any,
    *,
    tol: float = 1e-6,
    max_iter: Optional[int] = None,
    precision: Union[str, int] = "double",
    backend: Union[str, int] = "auto",
    format: Union[str, int] = "auto",
    preconditioner: Union[str, int, None] = "jacobi",
    threads: int = 0,
    x0: Any = None,
    solver: Union[str, int] = "cg",
    restart: Optional[int] = None,
    omega: Optional[float] = None,
    reorder: Union[str, int] = "auto",
) -> Tuple[Any, SolveInfo]:
    """Solves A x = b with cnc's preconditioned CG (A symmetric positive definite), or with
    BiCGSTAB or restarted GMRES (any nonsingular A), or directly: a sparse Cholesky (CHOLMOD) or
    LU (SuperLU) factorization.

    A        scipy.sparse matrix or array (any format; int32 or int64 indices; COO duplicates
             are summed) or a square dense numpy array (not a LinearOperator: cnc needs the
             entries)
    b        shape (n,) or (n, k): k right-hand sides solved together
    tol      stop when ||r|| <= tol ||b|| (CNC_THRESHOLD)
    max_iter iteration limit (None: cnc's default, 5 n and at least 100)
    precision "double", "single" or "mixed" (float matrix, double vectors)
    backend  "auto", "cpu", "opencl" or "cuda" (an unavailable one raises CncError)
    format   "auto", "csr", "bcrs2", "bcrs4", "sell", "zcsr" or "zsell" (complex A only; "auto"
             and "csr" pick zcsr for a complex A, or on CUDA zsell where its padding is small;
             "zsell" on CUDA only; "bcrs2" solves its real-equivalent)
    preconditioner "jacobi", "none" or "ssor" (symmetric SOR, on the CPU backend: backend
             "auto" picks the CPU, a GPU backend raises CncError)
    threads  CPU threads, 0 = one per core
    x0       initial guess, shape of b or (n,)
    solver   "cg", "bicgstab", "gmres", "block_cg" (block CG: the k columns of b share one
             Krylov space, fewer iterations than k CGs; preconditioner "jacobi" or "none"),
             or a direct solver: "cholmod" (symmetric positive
             definite A) or "superlu" (any nonsingular square A). These factor A on the host
             with the library of that name, opened at run time (Debian: libcholmod3,
             libsuperlu5; cnc.direct_solver_available says whether it is there, else CncError
             CNC_ERR_UNSUPPORTED); no iterations (info.iterations is 0, tol only judges the true
             residual), and a matrix without a factorization (not positive definite for
             "cholmod", singular for "superlu") gives info.reason "indefinite matrix" or
             "breakdown" and x left at x0 (zeros). Arrays on a CUDA device are refused.
    restart  GMRES: Krylov vectors kept before a restart (None: cnc's default, 30)
    reorder  "auto" (reverse Cuthill-McKee when the numbering scatters the gathers and the solve
             is large enough to repay it), "none" or "rcm"; x is always in your numbering
    omega    SSOR's relaxation factor in (0, 2) (None: cnc's default, 1.5)

    Complex A, b or x0 (complex128, or anything numpy makes complex) are solved as a complex
    system through cncSolveCSRComplex and x is complex128: "cg" and "block_cg" need A Hermitian
    positive definite (cnc checks it: CncError CNC_ERR_INVALID_VALUE naming the entry otherwise),
    "bicgstab" and "gmres" take any nonsingular complex A (run in complex arithmetic, Jacobi on
    the complex diagonal).

    Returns (x, info): x shaped like b, info a cnc.SolveInfo (info.reason, info.iterations,
    info.residual, info.true_residual, ...). A solve that does not converge is not an error:
    check info.converged / info.reason. Raises cnc.CncError on bad input.

    A, b (and x0) already on a CUDA device (CuPy, __cuda_array_interface__, DLPack) are solved
    there with no copy through the host, on the GPU that holds them, and x is returned on it when
    b was there.
    """
    settings = [
        (_c.SOLVER, _enum(SOLVERS, solver, "solver")),
        (_c.THRESHOLD, float(tol)),
        (_c.PRECISION, _enum(PRECISIONS, precision, "precision")),
        (_c.MATRIX_FORMAT, _enum(FORMATS, format, "format")),
        (_c.PRECONDITIONER, _enum(PRECONDITIONERS, preconditioner, "preconditioner")),
        (_c.REORDER, _enum(REORDERS, reorder, "reorder")),
    ]
    backend_value = _enum(BACKENDS, backend, "backend")
    if not (isinstance(backend, str) and backend.lower() == "auto"):
        settings.append((_c.BACKEND, backend_value))
    if max_iter is not None:
        settings.append((_c.MAX_ITERATIONS, int(max_iter)))
    if restart is not None:
        settings.append((_c.GMRES_RESTART, int(restart)))
    if omega is not None:
        settings.append((_c.SSOR_OMEGA, float(omega)))
    if threads != 0:
        settings.append((_c.NB_THREADS, int(threads)))
    # Arrays already on a GPU: cnc runs on that GPU.
    device = _device.array_device(A, b, x0)
    if device is not None:
        settings.append((_c.DEVICE_INDEX, device))
    with Context() as ctx:
        for pname, value in settings:
            ctx.set_parameter(pname, value)
        return ctx.solve_matrix(A, b, x0=x0)
