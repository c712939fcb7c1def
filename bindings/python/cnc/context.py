"""Context: one cnc context and its OpenNL-style state machine, driven from Python.

cnc's current context is thread-local, so every method makes this context current on the
calling thread before its C call (cncMakeCurrent is cheap) and holds a per-context lock for the
call and the reading of its results: a Context may be shared between Python threads, which then
take turns, while two Contexts in two threads run concurrently (ctypes releases the GIL during
C calls). Every failing call raises CncError with cnc's status and the message of that call; the
context's sticky error is then cleared so that the next failure reports itself.
"""

import contextlib
import ctypes
import operator
import threading

import numpy as np

from . import _device, _matrix
from . import constants as _c
from . import info as _info
from ._library import LOG_CALLBACK, PROGRESS_CALLBACK, lib
from .errors import CncError

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UINT32_MAX = 2**32 - 1


def _text(raw):
    return raw.decode("utf-8", errors="replace") if raw else ""


def _uint(value, what, call):
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
    """

    def __init__(self, nb_variables=None, *, nb_systems=None, least_squares=None):
        self._lock = threading.RLock()
        self._log_cb = None
        self._progress_cb = None
        self._callback_error = None
        self._handle = lib.cncNewContext()
        if not self._handle:
            raise CncError(_c.ERR_OUT_OF_MEMORY, "cncNewContext: returned NULL")
        if nb_variables is not None:
            self.set_parameter(_c.NB_VARIABLES, nb_variables)
        if nb_systems is not None:
            self.set_parameter(_c.NB_SYSTEMS, nb_systems)
        if least_squares is not None:
            self.set_parameter(_c.LEAST_SQUARES, bool(least_squares))

    # ---- lifetime ---------------------------------------------------------------------------
    def close(self):
        """Deletes the context (idempotent)."""
        with self._lock:
            if self._handle:
                lib.cncDeleteContext(self._handle)
                self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    @property
    def handle(self):
        """The raw CNCcontext pointer (an int), e.g. to hand to other C code."""
        return self._handle

    def make_current(self):
        """Makes this context current on the calling thread (methods do it themselves)."""
        with self._lock:
            self._activate()

    def _activate(self):
        if not self._handle:
            raise CncError(_c.ERR_NO_CONTEXT, "cnc.Context: the context is closed")
        status = lib.cncMakeCurrent(self._handle)
        if status != _c.OK:
            raise CncError(status, f"cncMakeCurrent: {_text(lib.cncStatusString(status))}")

    def _fail(self, status):
        """Raises the error of the call that just failed (context current, lock held)."""
        message = _text(lib.cncGetLastErrorMessage()) or _text(lib.cncStatusString(status))
        lib.cncClearError()
        raise CncError(status, message)

    def _call(self, fn, *args):
        with self._lock:
            self._activate()
            status = fn(*args)
            if status != _c.OK:
                self._fail(status)

    def _get(self, fn, ctype, pname):
        out = ctype()
        with self._lock:
            self._activate()
            status = fn(pname, ctypes.byref(out))
            if status != _c.OK:
                self._fail(status)
            return out.value

    # ---- parameters, statistics, flags --------------------------------------------------------
    def set_parameter(self, pname, value):
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

    def get_integer(self, pname):
        return self._get(lib.cncGetIntegerv, ctypes.c_int32, pname)

    def get_integer64(self, pname):
        return self._get(lib.cncGetInteger64v, ctypes.c_int64, pname)

    def get_double(self, pname):
        return self._get(lib.cncGetDoublev, ctypes.c_double, pname)

    def get_string(self, pname):
        # Decoded under the lock: cnc's string lives only until the next call on the context.
        return _text(self._get(lib.cncGetString, ctypes.c_char_p, pname))

    def enable(self, flag):
        self._call(lib.cncEnable, flag)

    def disable(self, flag):
        self._call(lib.cncDisable, flag)

    def is_enabled(self, flag):
        return bool(self._get(lib.cncIsEnabled, ctypes.c_int, flag))

    @property
    def state(self):
        """The CNC_STATE_* value of the context."""
        return self.get_integer(_c.STATE)

    # ---- life cycle ------------------------------------------------------------------------
    def begin(self, primitive):
        self._call(lib.cncBegin, primitive)

    def end(self, primitive):
        self._call(lib.cncEnd, primitive)

    @contextlib.contextmanager
    def _block(self, primitive):
        self.begin(primitive)
        yield self
        self.end(primitive)  # not reached on an exception: the first error is the one to see

    def system(self):
        """`with ctx.system():` is begin(SYSTEM) ... end(SYSTEM)."""
        return self._block(_c.SYSTEM)

    def matrix(self):
        """`with ctx.matrix():` is begin(MATRIX) ... end(MATRIX)."""
        return self._block(_c.MATRIX)

    def row(self):
        """`with ctx.row():` is begin(ROW) ... end(ROW)."""
        return self._block(_c.ROW)

    # ---- variables -------------------------------------------------------------------------
    def set_variable(self, i, value, k=0):
        """Variable i of system k: a locked value or an initial guess."""
        i = _uint(i, "i", "cncSetVariable")
        if k == 0:
            self._call(lib.cncSetVariable, i, float(value))
        else:
            self._call(lib.cncMultiSetVariable, i, _uint(k, "k", "cncMultiSetVariable"),
                       float(value))

    def get_variable(self, i, k=0):
        """Variable i of system k (the solution after solve())."""
        i = _uint(i, "i", "cncGetVariable")
        out = ctypes.c_double()
        if k == 0:
            self._call(lib.cncGetVariable, i, ctypes.byref(out))
        else:
            self._call(lib.cncMultiGetVariable, i, _uint(k, "k", "cncMultiGetVariable"),
                       ctypes.byref(out))
        return out.value

    def get_variables(self, k=0):
        """All n variables of system k as a numpy array."""
        n = self.get_integer(_c.NB_VARIABLES)
        return np.array([self.get_variable(i, k) for i in range(n)], dtype=np.float64)

    def set_variables(self, values, k=0):
        for i, v in enumerate(np.asarray(values, dtype=np.float64).ravel()):
            self.set_variable(i, v, k)

    def lock(self, i):
        self._call(lib.cncLockVariable, _uint(i, "i", "cncLockVariable"))

    def unlock(self, i):
        self._call(lib.cncUnlockVariable, _uint(i, "i", "cncUnlockVariable"))

    def is_locked(self, i):
        out = ctypes.c_int()
        self._call(lib.cncVariableIsLocked, _uint(i, "i", "cncVariableIsLocked"),
                   ctypes.byref(out))
        return bool(out.value)

    # ---- assembly --------------------------------------------------------------------------
    def coefficient(self, j, value):
        """Adds a_(row, j) += value to the current row (inside ROW)."""
        self._call(lib.cncCoefficient, _uint(j, "j", "cncCoefficient"), float(value))

    def right_hand_side(self, value, k=0):
        """Sets the current row's right-hand side of system k."""
        if k == 0:
            self._call(lib.cncRightHandSide, float(value))
        else:
            self._call(lib.cncMultiRightHandSide, _uint(k, "k", "cncMultiRightHandSide"),
                       float(value))

    def row_scaling(self, value):
        self._call(lib.cncRowScaling, float(value))

    def add_ij(self, i, j, value):
        """a_ij += value (inside MATRIX, plain mode)."""
        self._call(lib.cncAddIJCoefficient, _uint(i, "i", "cncAddIJCoefficient"),
                   _uint(j, "j", "cncAddIJCoefficient"), float(value))

    def add_rhs(self, i, value, k=0):
        """b_i += value in system k (inside MATRIX, plain mode)."""
        i = _uint(i, "i", "cncAddIRightHandSide")
        if k == 0:
            self._call(lib.cncAddIRightHandSide, i, float(value))
        else:
            self._call(lib.cncMultiAddIRightHandSide, i,
                       _uint(k, "k", "cncMultiAddIRightHandSide"), float(value))

    # ---- solving ---------------------------------------------------------------------------
    def _run_solve(self, fn, *args):
        """Runs a solve call, then reads its statistics, all under the lock."""
        with self._lock:
            self._callback_error = None
            self._call(fn, *args)
            if self._callback_error is not None:
                error, self._callback_error = self._callback_error, None
                raise error
            return _info.read(self)

    def solve(self):
        """cncSolve on the assembled system; returns a SolveInfo (solution: get_variable)."""
        return self._run_solve(lib.cncSolve)

    def solve_matrix(self, A, b, x0=None):
        """cncSolveCSR on A (scipy.sparse or dense) with this context's solver parameters.

        b has shape (n,) or (n, k); x0 (initial guess) the shape of b or (n,). Returns (x, info)
        with x shaped like b. The context's assembled system is left untouched.

        When A or b is on a CUDA device (CuPy, __cuda_array_interface__, DLPack), everything goes
        to cncSolveCSRDevice with no copy through the host, and x is a CuPy array when b was on
        the device (a numpy array otherwise).
        """
        if _device.is_device_array(A) or _device.is_device_array(b):
            return self._solve_device(A, b, x0)
        n, row_ptr, col_idx, values = _matrix.csr_arrays(A)
        b_block, k = _matrix.column_block(b, n)
        if x0 is None:
            x_block = np.zeros((n, k), dtype=np.float64, order="F")
        else:
            x0 = np.asarray(x0)
            if np.iscomplexobj(x0):
                raise CncError(_c.ERR_INVALID_VALUE, "cnc.solve: x0 is complex")
            if x0.shape not in ((n,), (n, k)):
                raise CncError(_c.ERR_SIZE_MISMATCH,
                               f"cnc.solve: x0 has shape {x0.shape}; b has {np.shape(b)}")
            x_block = np.empty((n, k), dtype=np.float64, order="F")  # cnc writes the solution here
            x_block[...] = x0.reshape(n, -1)  # (n,) broadcasts to every right-hand side
        dptr = ctypes.POINTER(ctypes.c_double)
        info = self._run_solve(
            lib.cncSolveCSRn,
            n,
            min(len(col_idx), len(values)),  # the C library checks row_ptr against it too
            row_ptr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
            col_idx.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
            values.ctypes.data_as(dptr),
            0,
            k,
            b_block.ctypes.data_as(dptr),
            x_block.ctypes.data_as(dptr),
        )
        return x_block.reshape(np.shape(b)), info

    def _solve_device(self, A, b, x0):
        cp, _ = _device._cupy()
        # CuPy works (and x is made) on the GPU that holds the arrays; cnc checks that it is the
        # context's (CNC_DEVICE_INDEX).
        with cp.cuda.Device(_device.array_device(A, b, x0)):
            return self._solve_device_here(A, b, x0)

    def _solve_device_here(self, A, b, x0):
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
    def get_error(self):
        """The sticky first error status (CNC_OK if none; failures raised here clear it)."""
        with self._lock:
            self._activate()
            return lib.cncGetError()

    def get_error_message(self):
        with self._lock:
            self._activate()
            return _text(lib.cncGetErrorMessage())

    def clear_error(self):
        self._call(lib.cncClearError)

    def set_log_callback(self, callback):
        """callback(level, message) receives cnc's log; None removes it."""
        if callback is None:
            self._call(lib.cncSetLogCallback, LOG_CALLBACK(), None)
            self._log_cb = None
            return

        def trampoline(level, message, _user):
            callback(level, _text(message))

        cb = LOG_CALLBACK(trampoline)
        self._call(lib.cncSetLogCallback, cb, None)
        self._log_cb = cb  # cnc keeps the pointer: keep the ctypes thunk alive

    def set_progress_callback(self, callback):
        """callback(iteration, relative_residual) -> truthy to stop; None removes it.

        An exception in the callback stops the solve and is re-raised by solve().
        """
        if callback is None:
            self._call(lib.cncSetProgressCallback, PROGRESS_CALLBACK(), None)
            self._progress_cb = None
            return

        def trampoline(iteration, residual, _user):
            try:
                return 1 if callback(iteration, residual) else 0
            except BaseException as e:  # noqa: B902 -- re-raised by _run_solve
                self._callback_error = e
                return 1

        cb = PROGRESS_CALLBACK(trampoline)
        self._call(lib.cncSetProgressCallback, cb, None)
        self._progress_cb = cb
