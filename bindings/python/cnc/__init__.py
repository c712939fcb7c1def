"""Python bindings of cnc, the Concurrent Number Cruncher (a sparse SPD solver), over its C ABI.

    import cnc, scipy.sparse as sp
    x, info = cnc.solve(A, b, tol=1e-8)          # A: scipy.sparse or dense, b: (n,) or (n, k)
    print(info.reason, info.iterations, info.true_residual, info.backend)

    with cnc.Context(nb_variables=n) as ctx:     # the OpenNL-style state machine of cnc.h
        with ctx.system(), ctx.matrix():
            ctx.add_ij(0, 0, 2.0); ctx.add_rhs(0, 1.0); ...
        info = ctx.solve(); x0 = ctx.get_variable(0)

Constants carry cnc.h's names without the CNC_ prefix: cnc.ERR_STATE, cnc.NB_VARIABLES,
cnc.REASON_CONVERGED, ... Failures raise cnc.CncError (.status, .status_name, .message).

The shared library is found through CNC_LIBRARY (a path to libcnc.so or its directory), else
next to this package, else ctypes.util.find_library("cnc").
"""

from ._library import lib as _lib
from ._solve import solve
from . import constants
from .constants import *  # noqa: F401,F403 -- the cnc.h constants are the module's API
from .context import Context
from .errors import CncError, status_name
from .info import SolveInfo, Times

__version__ = "0.1.0"


def version():
    """(major, minor, patch) of the library actually loaded."""
    import ctypes

    parts = [ctypes.c_int() for _ in range(3)]
    _lib.cncGetVersion(*(ctypes.byref(p) for p in parts))
    return tuple(p.value for p in parts)


def version_string():
    """Version string of the library actually loaded, e.g. "0.1.0"."""
    return _lib.cncVersionString().decode()


def status_string(status):
    """cnc's short English text of a status code."""
    raw = _lib.cncStatusString(int(status))
    return raw.decode("utf-8", errors="replace") if raw else ""


def backend_available(backend):
    """Whether "cpu", "opencl" or "cuda" (or a cnc.BACKEND_* value) can run here."""
    from ._solve import BACKENDS, _enum

    return bool(_lib.cncBackendAvailable(_enum(BACKENDS, backend, "backend")))


def library_path():
    """Path (or name) of the loaded libcnc."""
    return _lib._name


__all__ = [
    "solve",
    "Context",
    "CncError",
    "SolveInfo",
    "Times",
    "status_name",
    "status_string",
    "version",
    "version_string",
    "backend_available",
    "library_path",
] + [_name for _name in dir(constants) if _name.isupper()]
