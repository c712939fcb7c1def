"""Python bindings of cnc, the Concurrent Number Cruncher (sparse iterative solvers), over its C ABI.

    import cnc, scipy.sparse as sp
    x, info = cnc.cg(A, b, rtol=1e-8)            # scipy.sparse.linalg's signature and (x, info)
    x, info = cnc.bicgstab(A, b); x, info = cnc.gmres(A, b, restart=30)

    x, info = cnc.solve(A, b, tol=1e-8)          # the richer front: b (n,) or (n, k), GPU arrays
    w, v = cnc.eigsh(K, k=20, M=M, sigma=-1e-3)  # eigenpairs, scipy's eigsh shape (ARPACK)
    print(info.reason, info.iterations, info.true_residual, info.backend)

    with cnc.Context(nb_variables=n) as ctx:     # the OpenNL-style state machine of cnc.h
        with ctx.system(), ctx.matrix():
            ctx.add_ij(0, 0, 2.0); ctx.add_rhs(0, 1.0); ...
        info = ctx.solve(); x0 = ctx.get_variable(0)

Constants carry cnc.h's names without the CNC_ prefix: cnc.ERR_STATE, cnc.NB_VARIABLES,
cnc.REASON_CONVERGED, ... Failures raise cnc.CncError (.status, .status_name, .message). cnc's log
messages go to Python's logging, logger "cnc" (warnings reach stderr when logging is not
configured).

The shared library is found through CNC_LIBRARY (a path to libcnc.so or its directory), else
next to this package (where `pip install .` puts it), else ctypes.util.find_library("cnc").
"""

from __future__ import annotations

import ctypes as _ctypes
from typing import Tuple, Union

from ._library import lib as _lib
from ._scipy import (
    INFO_BREAKDOWN,
    INFO_INDEFINITE_MATRIX,
    INFO_INDEFINITE_PRECONDITIONER,
    INFO_NOT_FINITE,
    bicgstab,
    cg,
    gmres,
)
from ._solve import solve
from ._eigen import ArpackNoConvergence, eigen_solver_available, eigsh
from . import constants
from .constants import *  # noqa: F401,F403 -- the cnc.h constants are the module's API
from .constants import VERSION_MAJOR as _MAJOR, VERSION_MINOR as _MINOR, VERSION_PATCH as _PATCH
from .context import Context
from .errors import CncError, status_name
from .info import SolveInfo, Times

# The package's version is the C library's it was made with (constants.py, checked against
# cnc.h by the tests and against CMake's project(VERSION) by the wheel's build).
__version__ = f"{_MAJOR}.{_MINOR}.{_PATCH}"


def version() -> Tuple[int, int, int]:
    """(major, minor, patch) of the library actually loaded."""
    parts = [_ctypes.c_int() for _ in range(3)]
    _lib.cncGetVersion(*(_ctypes.byref(p) for p in parts))
    major, minor, patch = (p.value for p in parts)
    return major, minor, patch


def version_string() -> str:
    """Version string of the library actually loaded, e.g. "0.1.0"."""
    return _lib.cncVersionString().decode()


def status_string(status: int) -> str:
    """cnc's short English text of a status code."""
    raw = _lib.cncStatusString(int(status))
    return raw.decode("utf-8", errors="replace") if raw else ""


def backend_available(backend: Union[str, int]) -> bool:
    """Whether "cpu", "opencl" or "cuda" (or a cnc.BACKEND_* value) can run here."""
    from ._solve import BACKENDS, _enum

    return bool(_lib.cncBackendAvailable(_enum(BACKENDS, backend, "backend")))


def direct_solver_available(solver: Union[str, int]) -> bool:
    """Whether direct solver "cholmod", "superlu" or "cudss" (or cnc.CHOLMOD / cnc.SUPERLU /
    cnc.CUDSS) can run here: its library loads (Debian: libcholmod3, libsuperlu5; PyPI:
    nvidia-cudss-cu13, with a CUDA GPU) and this libcnc was built with its header. False for a
    libcnc without direct solvers."""
    from ._library import has_function
    from ._solve import SOLVERS, _enum

    value = _enum(SOLVERS, solver, "solver")
    if value not in (constants.CHOLMOD, constants.SUPERLU, constants.CUDSS) or not has_function(
        "cncDirectSolverAvailable"
    ):
        return False
    return bool(_lib.cncDirectSolverAvailable(value))


def devices(backend: Union[str, int, None] = None) -> list[tuple[str, int, str]]:
    """The devices cnc can run on here, as (backend, index, description) tuples: every backend's
    (cpu, opencl, cuda), or `backend`'s only. `index` is what the `device=` of a solve (cnc.h's
    CNC_DEVICE_INDEX) selects. An absent backend has none."""
    import ctypes

    from . import _library
    from ._solve import BACKENDS, _enum

    def check(status: int) -> None:  # no context: the thread's last message says why
        if status != 0:
            raise CncError(status, (_lib.cncGetLastErrorMessage() or b"").decode("utf-8", "replace"))

    if not _library.has_function("cncGetDeviceCount"):
        raise NotImplementedError("the loaded libcnc predates cncGetDeviceCount: rebuild it")
    names = ["cpu", "opencl", "cuda"] if backend is None else [backend]
    out = []
    for b in names:
        kind = _enum(BACKENDS, b, "backend")
        label = next((k for k, v in BACKENDS.items() if v == kind), str(b))
        count = ctypes.c_int32()
        check(_lib.cncGetDeviceCount(kind, ctypes.byref(count)))
        for i in range(count.value):
            name = ctypes.c_char_p()
            check(_lib.cncGetDeviceName(kind, i, ctypes.byref(name)))
            out.append((label, i, (name.value or b"").decode("utf-8", "replace")))
    return out


def library_path() -> str:
    """Path (or name) of the loaded libcnc."""
    return str(_lib._name)


__all__ = [
    "cg",
    "bicgstab",
    "gmres",
    "INFO_BREAKDOWN",
    "INFO_INDEFINITE_MATRIX",
    "INFO_INDEFINITE_PRECONDITIONER",
    "INFO_NOT_FINITE",
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
    "direct_solver_available",
    "eigsh",
    "eigen_solver_available",
    "ArpackNoConvergence",
    "devices",
    "library_path",
] + [_name for _name in dir(constants) if _name.isupper()]
