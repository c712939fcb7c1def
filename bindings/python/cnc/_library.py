"""Finds and loads libcnc, and declares the ctypes signature of every function of cnc.h.

Search order: the CNC_LIBRARY environment variable (a file, or a directory holding libcnc.so);
else a libcnc shared library next to this package (where the wheel that `pip install .` builds
puts libcnc.so.0); else ctypes.util.find_library("cnc") (the dynamic linker's cache and
LD_LIBRARY_PATH). When CNC_LIBRARY is set it is the only candidate,
so that a wrong path is reported instead of silently loading another copy.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os

# cnc.h's typedefs.
CNCint = ctypes.c_int32
CNCuint = ctypes.c_uint32
CNCint64 = ctypes.c_int64
CNCenum = ctypes.c_int
CNCboolean = ctypes.c_int
CNCstatus = ctypes.c_int
CNCcontext = ctypes.c_void_p

LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
PROGRESS_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, CNCint, ctypes.c_double, ctypes.c_void_p)
OPERATOR_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), CNCuint,
    ctypes.c_void_p,
)

_P = ctypes.POINTER
_double = ctypes.c_double
_charp = ctypes.c_char_p

# name: (restype, argtypes), in the order of cnc.h.
_SIGNATURES = {
    "cncNewContext": (CNCcontext, []),
    "cncDeleteContext": (None, [CNCcontext]),
    "cncMakeCurrent": (CNCstatus, [CNCcontext]),
    "cncGetCurrent": (CNCcontext, []),
    "cncSolverParameteri": (CNCstatus, [CNCenum, CNCint]),
    "cncSolverParameterd": (CNCstatus, [CNCenum, _double]),
    "cncSolverParameteri64": (CNCstatus, [CNCenum, CNCint64]),
    "cncGetIntegerv": (CNCstatus, [CNCenum, _P(CNCint)]),
    "cncGetInteger64v": (CNCstatus, [CNCenum, _P(CNCint64)]),
    "cncGetDoublev": (CNCstatus, [CNCenum, _P(_double)]),
    "cncGetString": (CNCstatus, [CNCenum, _P(_charp)]),
    "cncGetSystemIntegerv": (CNCstatus, [CNCuint, CNCenum, _P(CNCint)]),
    "cncGetSystemDoublev": (CNCstatus, [CNCuint, CNCenum, _P(_double)]),
    "cncEnable": (CNCstatus, [CNCenum]),
    "cncDisable": (CNCstatus, [CNCenum]),
    "cncIsEnabled": (CNCstatus, [CNCenum, _P(CNCboolean)]),
    "cncBegin": (CNCstatus, [CNCenum]),
    "cncEnd": (CNCstatus, [CNCenum]),
    "cncSetVariable": (CNCstatus, [CNCuint, _double]),
    "cncGetVariable": (CNCstatus, [CNCuint, _P(_double)]),
    "cncMultiSetVariable": (CNCstatus, [CNCuint, CNCuint, _double]),
    "cncMultiGetVariable": (CNCstatus, [CNCuint, CNCuint, _P(_double)]),
    "cncLockVariable": (CNCstatus, [CNCuint]),
    "cncUnlockVariable": (CNCstatus, [CNCuint]),
    "cncVariableIsLocked": (CNCstatus, [CNCuint, _P(CNCboolean)]),
    "cncCoefficient": (CNCstatus, [CNCuint, _double]),
    "cncRightHandSide": (CNCstatus, [_double]),
    "cncMultiRightHandSide": (CNCstatus, [CNCuint, _double]),
    "cncRowScaling": (CNCstatus, [_double]),
    "cncAddIJCoefficient": (CNCstatus, [CNCuint, CNCuint, _double]),
    "cncAddIRightHandSide": (CNCstatus, [CNCuint, _double]),
    "cncMultiAddIRightHandSide": (CNCstatus, [CNCuint, CNCuint, _double]),
    "cncSolve": (CNCstatus, []),
    "cncSolveCSR": (
        CNCstatus,
        [CNCuint, _P(CNCint64), _P(CNCuint), _P(_double), CNCint, CNCuint, _P(_double),
         _P(_double)],
    ),
    "cncSolveCSRn": (
        CNCstatus,
        [CNCuint, CNCint64, _P(CNCint64), _P(CNCuint), _P(_double), CNCint, CNCuint, _P(_double),
         _P(_double)],
    ),
    # Complex CSR: values, b and x as (re, im) pairs of doubles (numpy complex128).
    "cncSolveCSRComplex": (
        CNCstatus,
        [CNCuint, _P(CNCint64), _P(CNCuint), _P(_double), CNCint, CNCuint, _P(_double),
         _P(_double)],
    ),
    # Device pointers (CUDA): plain addresses, as __cuda_array_interface__ gives them.
    "cncSolveCSRDevice": (
        CNCstatus,
        [CNCuint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, CNCint, CNCuint,
         ctypes.c_void_p, ctypes.c_void_p],
    ),
    "cncGetError": (CNCstatus, []),
    "cncGetErrorMessage": (_charp, []),
    "cncGetLastErrorMessage": (_charp, []),
    "cncClearError": (CNCstatus, []),
    "cncStatusString": (_charp, [CNCstatus]),
    "cncSetLogCallback": (CNCstatus, [LOG_CALLBACK, ctypes.c_void_p]),
    "cncSetProgressCallback": (CNCstatus, [PROGRESS_CALLBACK, ctypes.c_void_p]),
    "cncGetVersion": (None, [_P(ctypes.c_int), _P(ctypes.c_int), _P(ctypes.c_int)]),
    "cncVersionString": (_charp, []),
    "cncBackendAvailable": (CNCboolean, [CNCenum]),
}

# Declared when the loaded library has them (a libcnc older than the package lacks them; callers
# test has_function(name) and say what is missing).
_OPTIONAL_SIGNATURES = {
    # From inside the progress callback: the current iterate, n x nb_systems values.
    "cncGetCurrentIterate": (CNCstatus, [_P(_double)]),
    # The devices each backend sees, as CNC_DEVICE_INDEX counts them.
    "cncGetDeviceCount": (CNCstatus, [CNCenum, _P(CNCint)]),
    "cncGetDeviceName": (CNCstatus, [CNCenum, CNCint, _P(_charp)]),
    # Matrix-free solves: the caller's operators.
    "cncSetOperator": (CNCstatus, [CNCenum, OPERATOR_CALLBACK, ctypes.c_void_p]),
    "cncSolveOperator": (CNCstatus, [CNCuint, CNCuint, _P(_double), _P(_double)]),
    # Whether CHOLMOD / SuperLU can be loaded.
    "cncDirectSolverAvailable": (CNCboolean, [CNCenum]),
    # The eigen solver (ARPACK).
    "cncEigenSolveCSR": (
        CNCstatus,
        [CNCuint, _P(CNCint64), _P(CNCuint), _P(_double), _P(CNCint64), _P(CNCuint), _P(_double),
         CNCint, CNCuint, CNCenum, _double, _P(_double), _P(_double)],
    ),
    "cncEigenSolverAvailable": (CNCboolean, []),
}

_NAMES = ("libcnc.so", "libcnc.so.*", "libcnc.dylib", "libcnc.*.dylib", "cnc.dll", "libcnc.dll")


def _in_directory(directory: str) -> list[str]:
    """Shared libraries named like libcnc in `directory`, the unversioned name first."""
    found = []
    for pattern in _NAMES:
        found += sorted(glob.glob(os.path.join(directory, pattern)))
    return found


def _candidates() -> list[tuple[str, str]]:
    """(description, path or name) pairs to try, in order."""
    env = os.environ.get("CNC_LIBRARY")
    if env:
        if os.path.isdir(env):
            paths = _in_directory(env)
            return [("CNC_LIBRARY directory", p) for p in paths] or [("CNC_LIBRARY", env)]
        return [("CNC_LIBRARY", env)]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [("next to the package", p) for p in _in_directory(here)]
    name = ctypes.util.find_library("cnc")
    if name:
        out.append(("ctypes.util.find_library('cnc')", name))
    return out


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)  # AttributeError: not a cnc library (or an incompatible one)
        fn.restype = restype
        fn.argtypes = argtypes
    for name, (restype, argtypes) in _OPTIONAL_SIGNATURES.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes
    return lib


def has_function(name: str) -> bool:
    """Whether the loaded libcnc exports `name` (e.g. "cncGetCurrentIterate")."""
    return getattr(lib, name, None) is not None


def load() -> ctypes.CDLL:
    """Loads libcnc and declares its functions; ImportError saying how to point at it."""
    tried = []
    for how, path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({how}): {e}")
            continue
        try:
            return _declare(lib)
        except AttributeError as e:
            tried.append(f"{path} ({how}): not a compatible cnc library: {e}")
    detail = "; ".join(tried) if tried else "no candidate found"
    raise ImportError(
        "cnc: cannot load the cnc shared library (libcnc.so). `pip install .` from the cnc "
        "repository builds a package that carries it; otherwise build it (cmake --build build) "
        "and set CNC_LIBRARY=/path/to/libcnc.so (or a directory holding it), or copy libcnc.so "
        "next to the cnc package, or install it where the dynamic linker finds it (ldconfig). "
        f"Tried: {detail}"
    )


lib = load()
