"""Context: one cnc context and its OpenNL-style state machine, driven from Python.

cnc's current context is thread-local, so every method makes this context current on the
calling thread before its C call (cncMakeCurrent is cheap) and holds a per-context lock for the
call and the reading of its results: a Context may be shared between Python threads, which then
take turns, while two Contexts in two threads run concurrently (ctypes releases the GIL during
C calls). Every failing call raises CncError with cnc's status and the message of that call; the
context's sticky error is then cleared so that the next failure reports itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import operator
import threading
from typing import Any, Callable, Iterator, Optional, Tuple

import numpy as np

from . import _device, _log, _matrix
from . import constants as _c
from . import info as _info
from ._library import LOG_CALLBACK, OPERATOR_CALLBACK, PROGRESS_CALLBACK, has_function, lib
from .errors import CncError

LogCallback = Callable[[int, str], None]
ProgressCallback = Callable[[int, float], Any]
Operator = Callable[[np.ndarray], Any]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UINT32_MAX = 2**32 - 1


def _text(raw: Optional[bytes]) -> str:
    return raw.decode("utf-8", errors="replace") if raw else ""


def _uint(value: int, what: str, call: str) -> int:
    """A CNCuint argument; negative or too large values are cnc's INDEX_OUT_OF_RANGE."""
    v = operator.index(value)
    if v < 0 or v > _UINT32_MAX:
        raise CncError(_c.ERR_INDEX_OUT_OF_RANGE, f"{call}({what}={v}): outside 0..{_UINT32_MAX}")
    return v


class Context:
    """A cnc context (cncNewContext ... cncDeleteContext).

    Use it as a context manager, or call close(). Optional keyword arguments set the structural
    parameters at once: nb_variables (CNC_NB_VARIABLES), nb_systems (CNC_NB_SYSTEMS),
    least_squares (CNC_LEAST_SQUARES).

    cnc's log messages go to Python's logging, logger "cnc" (warnings on stderr when logging is
    not configured; see set_log_callback).
    """

    def __init__(
        self,
        nb_variables: Optional[int] = None,
        *,
        nb_systems: Optional[int] = None,
        least_squares: Optional[bool] = None,
    ) -> None:
        self._lock = threading.RLock()
        self._log_cb: Any = None
        self._progress_cb: Any = None
        self._operators: dict = {}  # which -> the ctypes thunk cnc holds
        self._callback_error: Optional[BaseException] = None
        self._handle = lib.cncNewContext()
        if not self._handle:
            raise CncError(_c.ERR_OUT_OF_MEMORY, "cncNewContext: returned NULL")
        self.set_log_callback(None)  # cnc's log -> logging.getLogger("cnc")
        if nb_variables is not None:
            self.set_parameter(_c.NB_VARIABLES, nb_variables)
        if nb_systems is not None:
            self.set_parameter(_c.NB_SYSTEMS, nb_systems)
        if least_squares is not None:
            self.set_parameter(_c.LEAST_SQUARES, bool(least_squares))

    # ---- lifetime ---------------------------------------------------------------------------
    def close(self) -> None:
        """Deletes the context (idempotent)."""
        with self._lock:
            if self._handle:
                lib.cncDeleteContext(self._handle)
                self._handle = None

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    @property
    def handle(self) -> Optional[int]:
        """The raw CNCcontext pointer (an int), e.g. to hand to other C code."""
        return self._handle

    def make_current(self) -> None:
        """Makes this context current on the calling thread (methods do it themselves)."""
        with self._lock:
            self._activate()

    def _activate(self) -> None:
        if not self._handle:
            raise CncError(_c.ERR_NO_CONTEXT, "cnc.Context: the context is closed")
        status = lib.cncMakeCurrent(self._handle)
        if status != _c.OK:
            raise CncError(status, f"cncMakeCurrent: {_text(lib.cncStatusString(status))}")

    def _fail(self, status: int) -> None:
        """Raises the error of the call that just failed (context current, lock held)."""
        message = _text(lib.cncGetLastErrorMessage()) or _text(lib.cncStatusString(status))
        lib.cncClearError()
        raise CncError(status, message)

    def _call(self, fn: Any, *args: Any) -> None:
        with self._lock:
            self._activate()
            status = fn(*args)
            if status != _c.OK:
                self._fail(status)

    def _get(self, fn: Any, ctype: Any, pname: int) -> Any:
        out = ctype()
        with self._lock:
            self._activate()
            status = fn(pname, ctypes.byref(out))
            if status != _c.OK:
                self._fail(status)
            return out.value

    # ---- parameters, statistics, flags --------------------------------------------------------
    def set_parameter(self, pname: int, value: "int | float | bool") -> None:
        """cncSolverParameteri/i64/d: bools and ints as integers, floats as doubles."""
        if isinstance(value, (bool, np.bool_)):
            return self._call(lib.cncSolverParameteri, pname, int(value))
        if isinstance(value, (float, np.floating)):
            return self._call(lib.cncSolverParameterd, pname, float(value))
        v = operator.index(value)
        if _INT32_MIN <= v <= _INT32_MAX:
            return self._call(lib.cncSolverParameteri, pname, v)
        if _INT64_MIN <= v <= _INT64_MAX:
            return self._call(lib.cncSolverParameteri64, pname, v)
        raise CncError(_c.ERR_INVALID_VALUE, f"cncSolverParameteri64(value={v}): beyond 64 bits")

    def get_integer(self, pname: int) -> int:
        """cncGetIntegerv."""
        return self._get(lib.cncGetIntegerv, ctypes.c_int32, pname)

    def get_integer64(self, pname: int) -> int:
        """cncGetInteger64v."""
        return self._get(lib.cncGetInteger64v, ctypes.c_int64, pname)

    def get_double(self, pname: int) -> float:
        """cncGetDoublev."""
        return self._get(lib.cncGetDoublev, ctypes.c_double, pname)

    def get_string(self, pname: int) -> str:
        # Decoded under the lock: cnc's string lives only until the next call on the context.
        return _text(self._get(lib.cncGetString, ctypes.c_char_p, pname))

    def enable(self, flag: int) -> None:
        """cncEnable (cnc.VERBOSE, cnc.NORMALIZE_ROWS, cnc.KEEP_MATRIX)."""
        self._call(lib.cncEnable, flag)

    def disable(self, flag: int) -> None:
        """cncDisable."""
        self._call(lib.cncDisable, flag)

    def is_enabled(self, flag: int) -> bool:
        """cncIsEnabled."""
        return bool(self._get(lib.cncIsEnabled, ctypes.c_int, flag))

    @property
    def state(self) -> int:
        """The CNC_STATE_* value of the context."""
        return self.get_integer(_c.STATE)

    # ---- life cycle ------------------------------------------------------------------------
    def begin(self, primitive: int) -> None:
        """cncBegin (cnc.SYSTEM, cnc.MATRIX, cnc.ROW, cnc.MATRIX_PATTERN)."""
        self._call(lib.cncBegin, primitive)

    def end(self, primitive: int) -> None:
        """cncEnd."""
        self._call(lib.cncEnd, primitive)

    @contextlib.contextmanager
    def _block(self, primitive: int) -> Iterator["Context"]:
        self.begin(primitive)
        yield self
        self.end(primitive)  # not reached on an exception: the first error is the one to see

    def system(self) -> contextlib.AbstractContextManager:
        """`with ctx.system():` is begin(SYSTEM) ... end(SYSTEM)."""
        return self._block(_c.SYSTEM)

    def matrix(self) -> contextlib.AbstractContextManager:
        """`with ctx.matrix():` is begin(MATRIX) ... end(MATRIX)."""
        return self._block(_c.MATRIX)

    def row(self) -> contextlib.AbstractContextManager:
        """`with ctx.row():` is begin(ROW) ... end(ROW)."""
        return self._block(_c.ROW)

    # ---- variables -------------------------------------------------------------------------
    def set_variable(self, i: int, value: float, k: int = 0) -> None:
        """Variable i of system k: a locked value or an initial guess."""
        i = _uint(i, "i", "cncSetVariable")
        if k == 0:
            self._call(lib.cncSetVariable, i, float(value))
        else:
            self._call(lib.cncMultiSetVariable, i, _uint(k, "k", "cncMultiSetVariable"),
                       float(value))

    def get_variable(self, i: int, k: int = 0) -> float:
        """Variable i of system k (the solution after solve())."""
        i = _uint(i, "i", "cncGetVariable")
        out = ctypes.c_double()
        if k == 0:
            self._call(lib.cncGetVariable, i, ctypes.byref(out))
        else:
            self._call(lib.cncMultiGetVariable, i, _uint(k, "k", "cncMultiGetVariable"),
                       ctypes.byref(out))
        return out.value

    def get_variables(self, k: int = 0) -> np.ndarray:
        """All n variables of system k as a numpy array."""
        n = self.get_integer(_c.NB_VARIABLES)
        return np.array([self.get_variable(i, k) for i in range(n)], dtype=np.float64)

    def set_variables(self, values: Any, k: int = 0) -> None:
        """Sets variables 0..len(values)-1 of system k."""
        for i, v in enumerate(np.asarray(values, dtype=np.float64).ravel()):
            self.set_variable(i, v, k)

    def lock(self, i: int) -> None:
        """cncLockVariable."""
        self._call(lib.cncLockVariable, _uint(i, "i", "cncLockVariable"))

    def unlock(self, i: int) -> None:
        """cncUnlockVariable."""
        self._call(lib.cncUnlockVariable, _uint(i, "i", "cncUnlockVariable"))

    def is_locked(self, i: int) -> bool:
        """cncVariableIsLocked."""
        out = ctypes.c_int()
        self._call(lib.cncVariableIsLocked, _uint(i, "i", "cncVariableIsLocked"),
                   ctypes.byref(out))
        return bool(out.value)

    # ---- assembly --------------------------------------------------------------------------
    def coefficient(self, j: int, value: float) -> None:
        """Adds a_(row, j) += value to the current row (inside ROW)."""
        self._call(lib.cncCoefficient, _uint(j, "j", "cncCoefficient"), float(value))

    def right_hand_side(self, value: float, k: int = 0) -> None:
        """Sets the current row's right-hand side of system k."""
        if k == 0:
            self._call(lib.cncRightHandSide, float(value))
        else:
            self._call(lib.cncMultiRightHandSide, _uint(k, "k", "cncMultiRightHandSide"),
                       float(value))

    def row_scaling(self, value: float) -> None:
        """cncRowScaling."""
        self._call(lib.cncRowScaling, float(value))

    def add_ij(self, i: int, j: int, value: float) -> None:
        """a_ij += value (inside MATRIX, plain mode)."""
        self._call(lib.cncAddIJCoefficient, _uint(i, "i", "cncAddIJCoefficient"),
                   _uint(j, "j", "cncAddIJCoefficient"), float(value))

    def add_rhs(self, i: int, value: float, k: int = 0) -> None:
        """b_i += value in system k (inside MATRIX, plain mode)."""
        i = _uint(i, "i", "cncAddIRightHandSide")
        if k == 0:
            self._call(lib.cncAddIRightHandSide, i, float(value))
        else:
            self._call(lib.cncMultiAddIRightHandSide, i,
                       _uint(k, "k", "cncMultiAddIRightHandSide"), float(value))

    # ---- solving ---------------------------------------------------------------------------
    def _run_solve(self, fn: Any, *args: Any) -> _info.SolveInfo:
        """Runs a solve call, then reads its statistics, all under the lock."""
        with self._lock:
            self._callback_error = None
            try:
                self._call(fn, *args)
            except CncError as failed:  # an operator's exception failed it: raise that one
                error, self._callback_error = self._callback_error, None
                if error is not None:
                    raise error from failed
                raise
            if self._callback_error is not None:
                error, self._callback_error = self._callback_error, None
                raise error
            return _info.read(self)

    def solve(self) -> _info.SolveInfo:
        """cncSolve on the assembled system; returns a SolveInfo (solution: get_variable)."""
        return self._run_solve(lib.cncSolve)

    def solve_matrix(
        self, A: Any, b: Any, x0: Any = None
    ) -> Tuple[Any, _info.SolveInfo]:
        """cncSolveCSR on A (scipy.sparse or dense) with this context's solver parameters.

        b has shape (n,) or (n, k); x0 (initial guess) the shape of b or (n,). Returns (x, info)
        with x shaped like b. The context's assembled system is left untouched.

        When A or b is on a CUDA device (CuPy, __cuda_array_interface__, DLPack), everything goes
        to cncSolveCSRDevice with no copy through the host, and x is a CuPy array when b was on
        the device (a numpy array otherwise).

        When A, b or x0 is complex (host arrays), the system goes to cncSolveCSRComplex as
        complex128 and x is complex128: CG and block CG need A Hermitian positive definite (checked
        by cnc: CncError CNC_ERR_INVALID_VALUE otherwise), BiCGSTAB and GMRES take any nonsingular
        A.
        """
        if _device.is_device_array(A) or _device.is_device_array(b):
            return self._solve_device(A, b, x0)
        cplx = (
            _matrix.is_complex(A)
            or _matrix.is_complex(b)
            or (x0 is not None and _matrix.is_complex(x0))
        )
        n, row_ptr, col_idx, values = _matrix.csr_arrays(A, complex_ok=cplx)
        b_block, k = _matrix.column_block(b, n, complex_ok=cplx)
        dtype = np.complex128 if cplx else np.float64
        if x0 is None:
            x_block = np.zeros((n, k), dtype=dtype, order="F")
        else:
            x0 = np.asarray(x0)
            if np.iscomplexobj(x0) and not cplx:
                raise CncError(_c.ERR_INVALID_VALUE, "cnc.solve: x0 is complex")
            if x0.shape not in ((n,), (n, k)):
                raise CncError(_c.ERR_SIZE_MISMATCH,
                               f"cnc.solve: x0 has shape {x0.shape}; b has {np.shape(b)}")
            x_block = np.empty((n, k), dtype=dtype, order="F")  # cnc writes the solution here
            x_block[...] = x0.reshape(n, -1)  # (n,) broadcasts to every right-hand side
        dptr = ctypes.POINTER(ctypes.c_double)
        arrays = (
            row_ptr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
            col_idx.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
            values.ctypes.data_as(dptr),
            0,
            k,
            b_block.ctypes.data_as(dptr),
            x_block.ctypes.data_as(dptr),
        )
        if cplx:  # complex128: (re, im) pairs of doubles, as cncSolveCSRComplex reads them
            info = self._run_solve(lib.cncSolveCSRComplex, n, *arrays)
        else:  # the C library checks row_ptr against the entry count too
            info = self._run_solve(lib.cncSolveCSRn, n, min(len(col_idx), len(values)), *arrays)
        return x_block.reshape(np.shape(b)), info

    def _solve_device(self, A: Any, b: Any, x0: Any) -> Tuple[Any, _info.SolveInfo]:
        cp, _ = _device._cupy()
        # CuPy works (and x is made) on the GPU that holds the arrays; cnc checks that it is the
        # context's (CNC_DEVICE_INDEX).
        with cp.cuda.Device(_device.array_device(A, b, x0)):
            return self._solve_device_here(A, b, x0)

    def _solve_device_here(self, A: Any, b: Any, x0: Any) -> Tuple[Any, _info.SolveInfo]:
        n, row_ptr, col_idx, values = _device.device_csr(A)
        b_on_device = _device.is_device_array(b)
        b_block, k, b_shape = _device.device_block(b, n)
        cp, _ = _device._cupy()
        if x0 is None:
            x_block = cp.zeros((n, k), dtype=cp.float64, order="F")
        else:
            x0_block, k0, _ = _device.device_block(x0, n, "x0")
            if k0 not in (1, k):
                raise CncError(_c.ERR_SIZE_MISMATCH,
                               f"cnc.solve: x0 has {k0} columns; b has {k}")
            x_block = cp.empty((n, k), dtype=cp.float64, order="F")
            x_block[...] = x0_block  # (n, 1) broadcasts to every right-hand side
        p = _device.pointer
        info = self._run_solve(
            lib.cncSolveCSRDevice, n, p(row_ptr), p(col_idx), p(values), 0, k, p(b_block),
            p(x_block),
        )
        x = x_block.reshape(b_shape)
        return (x if b_on_device else cp.asnumpy(x)), info

    # ---- errors and callbacks ------------------------------------------------------------
    def get_error(self) -> int:
        """The sticky first error status (CNC_OK if none; failures raised here clear it)."""
        with self._lock:
            self._activate()
            return lib.cncGetError()

    def get_error_message(self) -> str:
        """cncGetErrorMessage: the message of the sticky first error."""
        with self._lock:
            self._activate()
            return _text(lib.cncGetErrorMessage())

    def clear_error(self) -> None:
        """cncClearError."""
        self._call(lib.cncClearError)

    def set_operator(self, which: int, op: Optional[Operator]) -> None:
        """cncSetOperator: op(x) returns Op x for one vector x (a fresh (n,) float64 array);
        which is cnc.OPERATOR_MATRIX (y = A x: cnc.h's matrix-free solves, solve_operator, and
        solve() in place of the assembled matrix) or cnc.OPERATOR_PRECONDITIONER (y = M⁻¹ x,
        selecting cnc.PRECOND_USER). None clears it. An exception in op stops the solve and is
        re-raised by it; a result of the wrong size raises ValueError there."""
        if not has_function("cncSetOperator"):
            raise NotImplementedError(
                f"set_operator: the loaded libcnc ({lib._name}) has no cncSetOperator; use a "
                "newer libcnc"
            )
        if op is None:
            self._call(lib.cncSetOperator, which, OPERATOR_CALLBACK(), None)
            self._operators.pop(which, None)
            return

        def trampoline(xp: Any, yp: Any, n: int, _user: Any) -> int:
            try:
                x = np.ctypeslib.as_array(xp, shape=(n,)).copy()
                y = np.asarray(op(x), dtype=np.float64).reshape(-1)
                if y.shape != (n,):
                    raise ValueError(f"the operator returned {y.size} values for a vector of {n}")
                np.ctypeslib.as_array(yp, shape=(n,))[:] = y
                return 0
            except BaseException as e:  # noqa: B902 -- re-raised by the solve
                self._callback_error = e
                return 1

        cb = OPERATOR_CALLBACK(trampoline)
        self._call(lib.cncSetOperator, which, cb, None)
        self._operators[which] = cb  # cnc keeps the pointer: keep the ctypes thunk alive

    def solve_operator(self, n: int, b: Any, x0: Any = None) -> Tuple[np.ndarray, _info.SolveInfo]:
        """cncSolveOperator: A x = b with the matrix operator (set_operator), n unknowns, b of
        shape (n,) or (n, k); returns (x, info) with x shaped like b."""
        if not has_function("cncSolveOperator"):
            raise NotImplementedError(
                f"solve_operator: the loaded libcnc ({lib._name}) has no cncSolveOperator"
            )
        b_block, k = _matrix.column_block(b, n)
        x_block = np.zeros((n, k), dtype=np.float64, order="F")
        if x0 is not None:
            x0 = np.asarray(x0, dtype=np.float64)
            if x0.shape not in ((n,), (n, k)):
                raise CncError(_c.ERR_SIZE_MISMATCH,
                               f"solve_operator: x0 has shape {x0.shape}; b has {np.shape(b)}")
            x_block[...] = x0.reshape(n, -1)
        dptr = ctypes.POINTER(ctypes.c_double)
        info = self._run_solve(lib.cncSolveOperator, n, k, b_block.ctypes.data_as(dptr),
                               x_block.ctypes.data_as(dptr))
        return x_block.reshape(np.shape(b)), info

    def set_log_callback(self, callback: Optional[LogCallback]) -> None:
        """callback(level, message) receives cnc's log (level: cnc.LOG_ERROR, LOG_WARNING,
        LOG_INFO) instead of the "cnc" logger; None routes it to logging.getLogger("cnc") again
        (the default: warnings at WARNING, info and CNC_VERBOSE progress at INFO, errors, which
        are raised as CncError anyway, at DEBUG)."""
        if callback is None:
            self._call(lib.cncSetLogCallback, _log.ROUTE_TO_LOGGING, None)
            self._log_cb = _log.ROUTE_TO_LOGGING
            return

        def trampoline(level: int, message: Optional[bytes], _user: Any) -> None:
            callback(level, _text(message))

        cb = LOG_CALLBACK(trampoline)
        self._call(lib.cncSetLogCallback, cb, None)
        self._log_cb = cb  # cnc keeps the pointer: keep the ctypes thunk alive

    def set_progress_callback(self, callback: Optional[ProgressCallback]) -> None:
        """callback(iteration, relative_residual) -> truthy to stop; None removes it.

        An exception in the callback stops the solve and is re-raised by solve().
        """
        if callback is None:
            self._call(lib.cncSetProgressCallback, PROGRESS_CALLBACK(), None)
            self._progress_cb = None
            return

        def trampoline(iteration: int, residual: float, _user: Any) -> int:
            try:
                return 1 if callback(iteration, residual) else 0
            except BaseException as e:  # noqa: B902 -- re-raised by _run_solve
                self._callback_error = e
                return 1

        cb = PROGRESS_CALLBACK(trampoline)
        self._call(lib.cncSetProgressCallback, cb, None)
        self._progress_cb = cb
