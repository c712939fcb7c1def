"""Matrices and vectors already on a CUDA device (CuPy, anything with __cuda_array_interface__
or DLPack) as the device arrays cncSolveCSRDevice reads: no copy through the host.

CuPy does the few device-side conversions (int32 row offsets to int64, a non-CSR sparse format
to CSR, Fortran order for several right-hand sides); it is imported only when a device array is
handed over. The arrays must live on the CUDA device the context runs on (cnc checks it).
"""

from . import constants as _c
from .errors import CncError

_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def is_device_array(obj):
    """True for a CUDA array or a CuPy sparse matrix (cupyx.scipy.sparse)."""
    if obj is None:
        return False
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    if type(obj).__module__.startswith("cupyx.") and hasattr(obj, "tocsr"):
        return True
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None:
        try:
            return int(dev()[0]) in _DLPACK_CUDA
        except Exception:  # noqa: BLE001 -- not a usable DLPack producer: not a device array
            return False
    return False


def _cupy():
    try:
        import cupy
        import cupyx.scipy.sparse
    except ImportError as e:
        raise CncError(
            _c.ERR_INVALID_VALUE,
            "cnc.solve: device arrays need CuPy (pip install cupy-cuda12x or cupy-cuda13x)",
        ) from e
    return cupy, cupyx.scipy.sparse


def _as_cupy(cp, obj, what):
    if hasattr(obj, "__cuda_array_interface__"):
        return cp.asarray(obj)  # no copy
    if is_device_array(obj):
        return cp.from_dlpack(obj)  # a CUDA DLPack producer: no copy
    return cp.asarray(obj)  # host data: uploaded once


def array_device(*objs):
    """The CUDA device ordinal of the first device array among objs, or None when none is one."""
    for obj in objs:
        if not is_device_array(obj):
            continue
        cp, sp = _cupy()
        if sp.issparse(obj):
            return int(obj.data.device.id)
        if hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "__dlpack_device__"):
            dev = getattr(obj, "device", None)
            if hasattr(dev, "id"):
                return int(dev.id)
            if hasattr(obj, "__dlpack_device__"):
                return int(obj.__dlpack_device__()[1])
            return int(_as_cupy(cp, obj, "array").device.id)
    return None


def device_csr(A):
    """(n, row_ptr int64, col_idx uint32, values float64) as CuPy arrays, 0-based."""
    cp, sp = _cupy()
    if not sp.issparse(A):
        A = _as_cupy(cp, A, "A")
        if A.ndim != 2:
            raise CncError(_c.ERR_SIZE_MISMATCH,
                           f"cnc.solve: A has {A.ndim} dimensions; it must be a square matrix")
        A = sp.csr_matrix(A)
    if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
        raise CncError(_c.ERR_SIZE_MISMATCH,
                       f"cnc.solve: A is {A.shape[0]}x{A.shape[1]}; it must be square")
    n = int(A.shape[0])
    if n > 2**32 - 1:
        raise CncError(_c.ERR_OVERFLOW, f"cnc.solve: n={n} exceeds cnc's 32-bit index range")
    csr = A if A.format == "csr" else A.tocsr()
    if csr.dtype.kind == "c":
        raise CncError(_c.ERR_INVALID_VALUE, "cnc.solve: A is complex; cnc solves real systems")
    row_ptr = cp.ascontiguousarray(csr.indptr, dtype=cp.int64)
    nnz = int(row_ptr[-1].get()) if n else 0
    col = cp.ascontiguousarray(csr.indices[:nnz])
    if col.dtype == cp.int32:
        col = col.view(cp.uint32)  # same bits; negative indices become huge and are refused
    elif col.dtype == cp.int64 and nnz and int(col.max().get()) > 2**32 - 1:
        raise CncError(_c.ERR_INDEX_OUT_OF_RANGE,
                       "cnc.solve: a column index of A exceeds cnc's 32-bit index range")
    else:
        col = col.astype(cp.uint32)
    values = cp.ascontiguousarray(csr.data[:nnz], dtype=cp.float64)
    return n, row_ptr, col, values


def device_block(b, n, what="b"):
    """(block, k): b of shape (n,) or (n, k) as an (n, k) Fortran-ordered float64 CuPy array."""
    cp, _ = _cupy()
    b = _as_cupy(cp, b, what)
    shape = b.shape
    if b.ndim == 1:
        b = b.reshape(-1, 1)
    if b.ndim != 2 or b.shape[0] != n:
        raise CncError(_c.ERR_SIZE_MISMATCH,
                       f"cnc.solve: {what} has shape {shape}; expected ({n},) or ({n}, k)")
    if b.dtype.kind not in "fiub":
        raise CncError(_c.ERR_INVALID_VALUE, f"cnc.solve: {what} must hold real numbers")
    return cp.asfortranarray(b, dtype=cp.float64), b.shape[1], shape


def pointer(a):
    return int(a.data.ptr) if a.size else 0
