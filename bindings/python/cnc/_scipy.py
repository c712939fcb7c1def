"""cnc.cg, cnc.bicgstab, cnc.gmres: scipy.sparse.linalg's signatures and (x, info) results.

A program written for scipy.sparse.linalg switches by changing its import:

    from cnc import cg            # was: from scipy.sparse.linalg import cg
    x, info = cg(A, b, rtol=1e-8)

What maps exactly onto cnc:
- the stopping test ||b - A x|| <= max(rtol ||b||, atol): cnc's CNC_THRESHOLD (||r|| <= t ||b||)
  with t = max(rtol, atol / ||b||); b = 0 returns x = 0 and info 0 at once, as SciPy does;
- maxiter, with SciPy's defaults passed explicitly (10 n iterations for cg and bicgstab; for
  gmres 10 n restart cycles of `restart` (default min(20, n)) inner iterations);
- info: 0 converged; > 0 not converged (maxiter when the limit was reached, as SciPy returns;
  the iteration count when cnc's check of the true residual b - A x found it above the
  tolerance although the recursive one converged); < 0 a breakdown, see INFO_* below;
- A as a LinearOperator (anything with .matvec and .shape) or a callable A(x) -> A x (n taken
  from b): a matrix-free solve (cncSetOperator + cncSolveOperator), cnc's method on the host
  calling A once per iteration (twice for bicgstab);
- M=None is no preconditioner, as in SciPy: the same method, so the same iterates (to rounding).
  cnc's Jacobi (or SSOR on the CPU) is one keyword away: preconditioner="jacobi" (cnc.solve
  defaults to Jacobi). M = 1 / diag(A) (e.g. scipy.sparse.diags(1 / A.diagonal())) runs as cnc's
  Jacobi (on the GPU where there is one), the identity as no preconditioner; any other M (a
  matrix, a LinearOperator, a callable M(r)) is applied as given, z = M r, through
  cncSetOperator(CNC_OPERATOR_PRECONDITIONER), which runs the solve on the host;
- callback(xk) after every iteration (cg, bicgstab) or restart cycle (gmres, callback_type="x"),
  with xk a fresh (n,) array; gmres's "pr_norm" and "legacy" callback types get the relative
  residual after every inner iteration. cg and bicgstab read xk with cncGetCurrentIterate
  (NotImplementedError when the loaded libcnc lacks it) and make GPU backends check every
  iteration (CNC_CHECK_INTERVAL = 1), which costs time there; gmres with callback_type="x" runs
  each cycle as one cnc solve restarted from the last x (cnc does not hand out GMRES's x
  mid-solve), which repeats the solve's setup per cycle.

What differs: these fronts solve real systems only (complex raises TypeError; cnc.solve takes
complex128 through cncSolveCSRComplex). The arithmetic is double
whatever the input; x is float32 only where SciPy's would be (float32 A and b). cnc's CG stops
with info < 0 when it meets pᵀAp <= 0 (A not positive definite) where SciPy's goes on; cnc's
gmres is right-preconditioned where SciPy's is left-preconditioned (the same method without M).
Keywords beyond SciPy's: preconditioner ("none", "jacobi", "ssor"), backend ("auto", "cpu",
"opencl", "cuda").
"""

from __future__ import annotations

import ctypes
import math
import operator
import warnings
from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import _device
from . import constants as _c
from ._library import has_function, lib
from ._solve import BACKENDS, PRECONDITIONERS, _enum
from .context import Context
from .errors import CncError

# info < 0: the solve broke down (SciPy's convention; -10 is its BiCGSTAB breakdown code).
INFO_BREAKDOWN = -10  # BiCGSTAB or GMRES: a zero inner product (CNC_REASON_BREAKDOWN)
INFO_INDEFINITE_MATRIX = -20  # CG: pᵀAp <= 0, A is not positive definite
INFO_INDEFINITE_PRECONDITIONER = -21  # CG: rᵀz <= 0, the preconditioner is not positive definite
INFO_NOT_FINITE = -30  # NaN or Inf appeared in the iteration

_NEGATIVE_INFO = {
    _c.REASON_BREAKDOWN: INFO_BREAKDOWN,
    _c.REASON_INDEFINITE_MATRIX: INFO_INDEFINITE_MATRIX,
    _c.REASON_INDEFINITE_PRECOND: INFO_INDEFINITE_PRECONDITIONER,
    _c.REASON_NOT_FINITE: INFO_NOT_FINITE,
}

_INT32_MAX = 2**31 - 1


def _info_code(info: Any, maxiter: int, cycle: int = 1, cycles_ran_out: bool = False) -> int:
    """SciPy's info from a cnc outcome: 0 converged, < 0 a breakdown, maxiter when the limit was
    reached (or, gmres run cycle by cycle, when its cycles ran out), else the iterations done in
    maxiter's unit (`cycle` inner iterations each): stagnated, stopped."""
    reason = info.reason_code
    if reason == _c.REASON_CONVERGED:
        return 0
    if reason in _NEGATIVE_INFO:
        return _NEGATIVE_INFO[reason]
    if reason == _c.REASON_MAX_ITERATIONS or cycles_ran_out:
        return maxiter
    return max(1, -(-info.iterations // cycle))

MatrixLike = Any  # scipy.sparse matrix or array, or a dense 2-D array_like
ArrayLike = Any  # numpy array_like of shape (n,) or (n, 1)
Callback = Callable[[Any], Any]
Result = Tuple[np.ndarray, int]


def _is_operator(obj: Any) -> bool:
    """A LinearOperator or a callable: something that applies a matrix without holding one."""
    if obj is None:
        return False
    if hasattr(obj, "tocsr") and hasattr(obj, "format"):  # scipy.sparse
        return False
    if isinstance(obj, np.ndarray):
        return False
    return hasattr(obj, "matvec") or hasattr(obj, "_matvec") or callable(obj)


def _apply_of(op: Any) -> Callable[[np.ndarray], Any]:
    """x -> op x for a LinearOperator (matvec), a matrix (@) or a callable."""
    if hasattr(op, "matvec"):
        return op.matvec
    if callable(op) and not hasattr(op, "shape"):
        return op
    return lambda x: op @ x


def _check_operator(name: str, A: Any, b: Any) -> int:
    """The size of a matrix-free A: its shape (square), else b's length."""
    shape = getattr(A, "shape", None)
    if shape is None:
        n = int(np.asarray(b).shape[0]) if np.ndim(b) >= 1 else 0
    else:
        shape = tuple(shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"cnc.{name}: expected a square operator, but got shape={shape}")
        n = int(shape[0])
    dtype = getattr(A, "dtype", None)
    if dtype is not None and np.dtype(dtype).kind == "c":
        raise TypeError(f"cnc.{name}: A is complex ({np.dtype(dtype)}); cnc solves real systems")
    if not has_function("cncSolveOperator"):
        raise NotImplementedError(
            f"cnc.{name}: A is a {type(A).__name__} (matrix-free), and the loaded libcnc "
            f"({lib._name}) has no cncSolveOperator; use a newer libcnc"
        )
    return n


def _check_matrix(name: str, A: MatrixLike) -> Tuple[MatrixLike, int]:
    if _device.is_device_array(A):
        raise TypeError(
            f"cnc.{name}: A is on a GPU; cnc.cg solves CuPy arrays where they are (CG only: "
            f"cnc's other methods take host arrays), cnc.{name} takes scipy.sparse or numpy."
        )
    if not (hasattr(A, "tocsr") and hasattr(A, "format")):
        A = np.asarray(A)
    shape = tuple(getattr(A, "shape", ()))
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"cnc.{name}: expected a square matrix, but got shape={shape}")
    dtype = np.dtype(getattr(A, "dtype", np.float64))
    if dtype.kind == "c":
        raise TypeError(f"cnc.{name}: A is complex ({dtype}); cnc solves real systems")
    if dtype.kind not in "fiub":
        raise TypeError(f"cnc.{name}: A holds {dtype}, not real numbers")
    return A, int(shape[0])


def _check_vector(name: str, what: str, v: ArrayLike, n: int) -> np.ndarray:
    if _device.is_device_array(v):
        raise TypeError(f"cnc.{name}: {what} is on a GPU; cnc.{name} takes host arrays "
                        "(cnc.solve solves device arrays where they are)")
    v = np.asarray(v)
    if v.shape not in ((n,), (n, 1)):
        raise ValueError(f"cnc.{name}: A has shape ({n}, {n}) but {what} has shape {v.shape}; "
                         f"expected ({n},) or ({n}, 1)")
    if v.dtype.kind == "c":
        raise TypeError(f"cnc.{name}: {what} is complex; cnc solves real systems")
    if v.dtype.kind not in "fiub":
        raise TypeError(f"cnc.{name}: {what} holds {v.dtype}, not real numbers")
    return np.ascontiguousarray(v.ravel(), dtype=np.float64)


def _result_dtype(A: MatrixLike, b: Any) -> np.dtype:
    """float32 where SciPy's x would be float32 (float32 A and b), float64 otherwise."""
    dt = np.result_type(np.dtype(getattr(A, "dtype", np.float64)), np.asarray(b).dtype)
    return np.dtype(np.float32) if dt == np.float32 else np.dtype(np.float64)


def _diagonal_of(M: MatrixLike, n: int, name: str) -> np.ndarray:
    """M's diagonal; ValueError when M has an entry off it."""
    if hasattr(M, "tocoo") and hasattr(M, "format"):
        shape = M.shape
        coo = M.tocoo()
        off = (coo.row != coo.col) & (coo.data != 0)
        if shape == (n, n) and not np.any(off):
            return np.asarray(M.diagonal(), dtype=np.float64)
    else:
        M = np.asarray(M)
        shape = M.shape
        if shape == (n, n) and M.dtype.kind in "fiub":
            d = np.diagonal(M).astype(np.float64)
            if np.count_nonzero(M) == np.count_nonzero(d):
                return d
    if shape != (n, n):
        raise ValueError(f"cnc.{name}: M has shape {shape}; A has ({n}, {n})")
    raise ValueError(
        f"cnc.{name}: M is not diagonal; cnc cannot apply it. cnc applies M = I "
        "(preconditioner='none'), Jacobi M = diag(1 / diag(A)) (preconditioner='jacobi') or "
        "SSOR (preconditioner='ssor', CPU). Pass one of those, or use scipy.sparse.linalg with "
        "this M."
    )


def _preconditioner_from_M(
    name: str, M: Any, A: MatrixLike, n: int, matrix_free: bool
) -> Tuple[str, Optional[Callable[[np.ndarray], Any]]]:
    """cnc's own preconditioner where it applies M exactly ("none" for the identity, "jacobi"
    for 1 / diag(A)), else ("user", M's product) for cncSetOperator."""
    if _is_operator(M):
        shape = getattr(M, "shape", None)
        if shape is not None and tuple(shape) != (n, n):
            raise ValueError(f"cnc.{name}: M has shape {tuple(shape)}; A has ({n}, {n})")
        return "user", _apply_of(M)
    try:
        d = _diagonal_of(M, n, name)
    except ValueError:
        if tuple(getattr(M, "shape", np.shape(M))) != (n, n):
            raise
        return "user", _apply_of(M if hasattr(M, "format") else np.asarray(M))
    if np.all(d == 1.0):
        return "none", None
    if not matrix_free:
        a = np.asarray(A.diagonal() if hasattr(A, "diagonal") else np.diagonal(A),
                       dtype=np.float64)
        # cnc's Jacobi: 1 / a_ii, with 1 where a_ii is 0, absent or subnormal.
        usable = np.abs(a) >= np.finfo(np.float64).tiny
        jacobi = np.ones(n)
        jacobi[usable] = 1.0 / a[usable]
        if np.allclose(d, jacobi, rtol=1e-12, atol=0.0):
            return "jacobi", None
    return "user", lambda r: d * r


def _check_tolerances(name: str, rtol: float, atol: float) -> Tuple[float, float]:
    try:
        rtol, atol = float(rtol), float(atol)
    except (TypeError, ValueError):
        raise ValueError(f"cnc.{name}: rtol={rtol!r} and atol={atol!r} must be real numbers")
    if not (math.isfinite(rtol) and rtol >= 0):
        raise ValueError(f"cnc.{name}: rtol={rtol} must be a finite number >= 0")
    if not (math.isfinite(atol) and atol >= 0):
        raise ValueError(f"cnc.{name}: called with invalid atol={atol}; if set, atol must be a "
                         "real, non-negative number")
    return rtol, atol


def _positive_int(name: str, what: str, value: Any) -> int:
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"cnc.{name}: {what}={value!r} must be an integer") from None
    if v < 1:
        raise ValueError(f"cnc.{name}: {what}={v} must be >= 1")
    return v


class _Iterates:
    """Feeds the user's callback from cnc's progress callback: xk (through cncGetCurrentIterate)
    or the relative residual, once per iteration number, and the final one after the solve."""

    def __init__(self, callback: Callback, n: int, kind: str, dtype: np.dtype) -> None:
        self.callback, self.n, self.kind, self.dtype = callback, n, kind, dtype
        self.last = 0  # the last iteration the callback was given

    def progress(self, iteration: int, residual: float) -> bool:
        if iteration <= self.last:
            return False  # before the first iteration, or a repeated check
        if self.kind == "x":
            x = np.empty(self.n, dtype=np.float64)
            status = lib.cncGetCurrentIterate(x.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
            if status != _c.OK:
                # GMRES forms x only at the end of a cycle: nothing to report at this check.
                lib.cncClearError()
                if status == _c.ERR_STATE:
                    return False
                raise CncError(status, "cncGetCurrentIterate failed inside the callback")
            self.last = iteration
            self.callback(x.astype(self.dtype, copy=False))
        else:
            self.last = iteration
            self.callback(float(residual))
        return False

    def finish(self, iterations: int, x: np.ndarray, residual: float) -> None:
        """The last iteration's report, which cnc's check does not make when it converges."""
        if iterations > self.last:
            self.last = iterations
            self.callback(x.astype(self.dtype) if self.kind == "x" else float(residual))


def _gmres_cycles(
    solve_once: Callable[[Any], Tuple[np.ndarray, Any]],
    b: np.ndarray,
    x0: Optional[np.ndarray],
    maxiter: int,
    callback: Callback,
    dtype: np.dtype,
) -> Tuple[np.ndarray, Any]:
    """GMRES(restart) one cycle per cnc solve (the context's MAX_ITERATIONS is the restart),
    callback(x) after each cycle that ran, as SciPy's callback_type="x"."""
    x = np.zeros_like(b) if x0 is None else x0
    for _ in range(maxiter):
        x, info = solve_once(x)
        if info.iterations > 0:
            callback(np.asarray(x, dtype=np.float64).astype(dtype))
        # Another cycle after the limit, or after a cycle whose estimate converged but whose
        # b - A x did not (SciPy's outer test); the solve ends on convergence or a breakdown.
        if info.reason_code not in (_c.REASON_MAX_ITERATIONS, _c.REASON_STAGNATED):
            break
    return x, info


def _cg_on_device(
    A: Any,
    b: Any,
    x0: Any,
    rtol: float,
    atol: float,
    maxiter: Optional[int],
    M: Any,
    callback: Optional[Callback],
    preconditioner: Optional[str],
    backend: str,
) -> Tuple[Any, int]:
    """cnc.cg on CuPy (or other CUDA) arrays, as cupyx.scipy.sparse.linalg.cg: solved where they
    are (cncSolveCSRDevice, CG in double), x returned on the device."""
    cp, _ = _device._cupy()
    if callback is not None:
        raise NotImplementedError(
            "cnc.cg(callback=...) on device arrays: the iterate stays on the device "
            "(cncGetCurrentIterate refuses it there); pass host arrays to get callback(xk)"
        )
    if M is not None:
        raise TypeError("cnc.cg on device arrays: M is not taken; use preconditioner='jacobi' "
                        "(or None, no preconditioner, as M=None)")
    if isinstance(x0, str):
        raise ValueError("cnc.cg on device arrays: x0='Mb' needs M, which is not taken here")
    rtol, atol = _check_tolerances("cg", rtol, atol)
    n = int(A.shape[0])
    bvec = cp.asarray(b, dtype=cp.float64).reshape(-1)
    if bvec.shape != (n,):
        raise ValueError(f"cnc.cg: A has shape ({n}, {n}) but b has {tuple(cp.asarray(b).shape)}")
    bnorm = float(cp.linalg.norm(bvec))
    if bnorm == 0.0:
        return cp.zeros(n, dtype=cp.float64), 0
    if not math.isfinite(bnorm):
        raise ValueError("cnc.cg: b holds NaN or Inf")
    maxiter = 10 * n if maxiter is None else _positive_int("cg", "maxiter", maxiter)
    threshold = max(rtol, atol / bnorm)
    threshold = min(max(threshold, 5e-324), float(np.nextafter(1.0, 0.0)))
    from ._solve import solve as _solve_any

    x, info = _solve_any(A, bvec, tol=threshold, max_iter=min(maxiter, _INT32_MAX),
                         preconditioner="none" if preconditioner is None else preconditioner,
                         backend=backend, solver="cg",
                         x0=None if x0 is None else cp.asarray(x0, dtype=cp.float64).reshape(-1))
    return x.reshape(n), _info_code(info, maxiter)


def _solve(
    name: str,
    solver: str,
    A: MatrixLike,
    b: ArrayLike,
    x0: Any,
    rtol: float,
    atol: float,
    maxiter: Optional[int],
    M: Any,
    callback: Optional[Callback],
    preconditioner: Optional[str],
    backend: str,
    restart: Optional[int] = None,
    callback_type: Optional[str] = None,
) -> Result:
    matrix_free = _is_operator(A)
    if matrix_free:
        n = _check_operator(name, A, b)
        apply_a = _apply_of(A)
    else:
        A, n = _check_matrix(name, A)
        apply_a = lambda x: A @ x  # noqa: E731
    bvec = _check_vector(name, "b", b, n)
    dtype = _result_dtype(A, b)
    rtol, atol = _check_tolerances(name, rtol, atol)

    if M is not None and preconditioner is not None:
        raise ValueError(f"cnc.{name}: give M or preconditioner, not both")
    apply_m = None
    if M is not None:
        precond, apply_m = _preconditioner_from_M(name, M, A, n, matrix_free)
    else:
        precond = "none" if preconditioner is None else preconditioner
    precond_value = None if apply_m is not None else _enum(PRECONDITIONERS, precond,
                                                            "preconditioner")

    if isinstance(x0, str):
        if x0 != "Mb":
            raise ValueError(f"cnc.{name}: x0={x0!r}; the only string SciPy takes is 'Mb'")
        x0 = bvec.copy() if M is None else np.asarray(
            apply_m(bvec) if apply_m is not None else M @ bvec, dtype=np.float64).ravel()
    x_start = None if x0 is None else _check_vector(name, "x0", x0, n)

    if callback is not None and not callable(callback):
        raise TypeError(f"cnc.{name}: callback must be callable, not {type(callback).__name__}")

    # gmres: maxiter counts restart cycles, or inner iterations with the legacy callback.
    cycle = 1
    if solver == "gmres":
        restart = 20 if restart is None else _positive_int(name, "restart", restart)
        restart = min(restart, n) if n > 0 else restart
        if callback is not None and callback_type is None:
            warnings.warn(
                f"cnc.{name} called without specifying `callback_type`: as SciPy does, 'legacy' "
                "is used (the callback gets the relative residual of every inner iteration and "
                "maxiter counts inner iterations); pass callback_type='x', 'pr_norm' or 'legacy'.",
                DeprecationWarning,
                stacklevel=3,
            )
            callback_type = "legacy"
        if callback_type not in (None, "x", "pr_norm", "legacy"):
            raise ValueError(f"Unknown callback_type: {callback_type!r}")
        if callback is None:
            callback_type = None
        cycle = 1 if callback_type == "legacy" else restart

    if maxiter is None:
        maxiter = 10 * n
    else:
        maxiter = _positive_int(name, "maxiter", maxiter)
    inner_limit = min(max(maxiter, 1) * cycle, _INT32_MAX)

    bnorm = float(np.linalg.norm(bvec))
    if n == 0 or bnorm == 0.0:
        return np.zeros(n, dtype=dtype), 0  # SciPy: b = 0 returns x = 0 at once
    if not math.isfinite(bnorm):
        raise ValueError(f"cnc.{name}: b holds NaN or Inf")

    kind = "x"
    if solver == "gmres" and callback_type in ("pr_norm", "legacy"):
        kind = "residual"
    # gmres's callback(xk) after each cycle: cnc forms x at the end of a cycle only and does not
    # hand it out, so the cycles run one cnc solve each, restarted from the last x (restarted
    # GMRES is exactly that); no cncGetCurrentIterate needed.
    per_cycle = solver == "gmres" and callback is not None and kind == "x"
    if callback is not None and kind == "x" and not per_cycle and not has_function(
        "cncGetCurrentIterate"
    ):
        raise NotImplementedError(
            f"cnc.{name}(callback=...): the loaded libcnc ({lib._name}) has no "
            "cncGetCurrentIterate, so the iterates cannot be handed to the callback; use a newer "
            "libcnc, or drop the callback"
        )

    # ||r|| <= max(rtol ||b||, atol)  <=>  ||r|| <= t ||b||, t = max(rtol, atol / ||b||).
    threshold = max(rtol, atol / bnorm)
    if threshold <= 0.0:  # rtol = atol = 0: run to maxiter, as SciPy's `||r|| < 0` never holds
        threshold = 5e-324
    if threshold >= 1.0:  # beyond CNC_THRESHOLD's (0, 1): x0 may already pass, as x = 0 does
        r0 = bvec if x_start is None else bvec - np.asarray(apply_a(x_start)).ravel()
        if float(np.linalg.norm(r0)) <= threshold * bnorm:
            done = np.zeros(n) if x_start is None else x_start
            return done.astype(dtype), 0
        threshold = float(np.nextafter(1.0, 0.0))  # stricter than asked: still passes the test

    iterates = None if callback is None or per_cycle else _Iterates(callback, n, kind, dtype)
    with Context() as ctx:
        ctx.set_parameter(_c.SOLVER, {"cg": _c.CG, "bicgstab": _c.BICGSTAB, "gmres": _c.GMRES}[solver])
        ctx.set_parameter(_c.THRESHOLD, float(threshold))
        ctx.set_parameter(_c.MAX_ITERATIONS, int(cycle if per_cycle else inner_limit))
        if apply_m is not None:  # the caller's M, applied on the host (selects PRECOND_USER)
            ctx.set_operator(_c.OPERATOR_PRECONDITIONER, apply_m)
        else:
            ctx.set_parameter(_c.PRECONDITIONER, precond_value)
        if matrix_free:
            ctx.set_operator(_c.OPERATOR_MATRIX, apply_a)

            def solve_once(x_init: Any) -> Tuple[np.ndarray, Any]:
                return ctx.solve_operator(n, bvec, x0=x_init)
        else:
            def solve_once(x_init: Any) -> Tuple[np.ndarray, Any]:
                return ctx.solve_matrix(A, bvec, x0=x_init)
        if not (isinstance(backend, str) and backend.lower() == "auto"):
            ctx.set_parameter(_c.BACKEND, _enum(BACKENDS, backend, "backend"))
        if solver == "gmres" and restart is not None:
            ctx.set_parameter(_c.GMRES_RESTART, int(restart))
        if iterates is not None:
            ctx.set_parameter(_c.CHECK_INTERVAL, 1)  # a GPU checks (and calls back) every iteration
            ctx.set_progress_callback(iterates.progress)
        if per_cycle and callback is not None:
            x, info = _gmres_cycles(solve_once, bvec, x_start, maxiter, callback, dtype)
        else:
            x, info = solve_once(x_start)
    x = np.asarray(x, dtype=np.float64).reshape(n)

    if iterates is not None and info.reason_code != _c.REASON_STOPPED:
        iterates.finish(info.iterations, x, info.residual)
    code = _info_code(info, maxiter, cycle,
                      cycles_ran_out=per_cycle and info.reason_code == _c.REASON_STAGNATED)
    return x.astype(dtype, copy=False), code


def cg(
    A: MatrixLike,
    b: ArrayLike,
    x0: Optional[ArrayLike] = None,
    *,
    rtol: float = 1e-5,
    atol: float = 0.0,
    maxiter: Optional[int] = None,
    M: Any = None,
    callback: Optional[Callable[[np.ndarray], Any]] = None,
    preconditioner: Optional[str] = None,
    backend: str = "auto",
) -> Result:
    """Solves A x = b (A symmetric positive definite) with cnc's conjugate gradient, as
    scipy.sparse.linalg.cg does.

    A        scipy.sparse matrix or array, or dense array (n, n); real. A LinearOperator or a
             callable A(x) -> A x is solved matrix-free on the host. A CuPy matrix (with b, x0
             on the same GPU) is solved where it is and x comes back as a CuPy array, as with
             cupyx.scipy.sparse.linalg.cg (no M and no callback there).
    b        (n,) or (n, 1)
    x0       initial guess, (n,) or (n, 1); None is zero; "Mb" is M @ b
    rtol, atol  stop when ||b - A x|| <= max(rtol ||b||, atol)
    maxiter  iteration limit; None is SciPy's 10 n
    M        None (no preconditioner, as SciPy); Jacobi (scipy.sparse.diags(1 / A.diagonal()))
             runs as cnc's own; any other matrix, LinearOperator or callable M(r) is applied
             as given (z = M r) on the host
    callback callback(xk) after each iteration, xk a new (n,) array
    preconditioner  beyond SciPy: "none" (M=None's), "jacobi" (cnc.solve's default, often faster)
             or "ssor" (CPU); not together with M
    backend  beyond SciPy: "auto", "cpu", "opencl" or "cuda"

    Returns (x, info): x of shape (n,); info 0 converged, > 0 not converged (maxiter when the
    limit was reached), < 0 breakdown (cnc.INFO_INDEFINITE_MATRIX, ...). See cnc._scipy's
    documentation for what matches SciPy and what does not.
    """
    if _device.is_device_array(A) or _device.is_device_array(b):
        return _cg_on_device(A, b, x0, rtol, atol, maxiter, M, callback, preconditioner, backend)
    return _solve("cg", "cg", A, b, x0, rtol, atol, maxiter, M, callback, preconditioner, backend)


def bicgstab(
    A: MatrixLike,
    b: ArrayLike,
    x0: Optional[ArrayLike] = None,
    *,
    rtol: float = 1e-5,
    atol: float = 0.0,
    maxiter: Optional[int] = None,
    M: Any = None,
    callback: Optional[Callable[[np.ndarray], Any]] = None,
    preconditioner: Optional[str] = None,
    backend: str = "auto",
) -> Result:
    """Solves A x = b (any nonsingular A) with cnc's BiCGSTAB, as scipy.sparse.linalg.bicgstab.

    Arguments and result as cnc.cg (maxiter None is SciPy's 10 n); info
    cnc.INFO_BREAKDOWN (-10, SciPy's code) when an inner product vanishes.
    """
    return _solve("bicgstab", "bicgstab", A, b, x0, rtol, atol, maxiter, M, callback,
                  preconditioner, backend)


def gmres(
    A: MatrixLike,
    b: ArrayLike,
    x0: Optional[ArrayLike] = None,
    *,
    rtol: float = 1e-5,
    atol: float = 0.0,
    restart: Optional[int] = None,
    maxiter: Optional[int] = None,
    M: Any = None,
    callback: Optional[Callable[[Any], Any]] = None,
    callback_type: Optional[str] = None,
    preconditioner: Optional[str] = None,
    backend: str = "auto",
) -> Result:
    """Solves A x = b (any nonsingular A) with cnc's restarted GMRES, as
    scipy.sparse.linalg.gmres.

    restart  Krylov vectors per cycle; None is SciPy's min(20, n)
    maxiter  restart cycles (inner iterations with callback_type "legacy"); None is 10 n
    callback_type  "x": callback(xk) after each cycle; "pr_norm": callback(||r|| / ||b||) after
             each inner iteration; "legacy" (SciPy's default when a callback is given, with its
             DeprecationWarning): as "pr_norm", and maxiter counts inner iterations
    Other arguments and the result as cnc.cg. Without M both methods are the same GMRES; with
    Jacobi, cnc preconditions on the right where SciPy does on the left (different iterates,
    the same stopping test on b - A x).
    """
    return _solve("gmres", "gmres", A, b, x0, rtol, atol, maxiter, M, callback, preconditioner,
                  backend, restart=restart, callback_type=callback_type)
