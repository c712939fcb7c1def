"""cnc.solve with CuPy inputs (cncSolveCSRDevice), checked against scipy's direct solver.

Needs CuPy and a CUDA device on which cnc's CUDA backend runs; skipped otherwise, saying why.
"""

import numpy as np
import pytest
from conftest import poisson2d, reference, rel_err, shifted_poisson2d, sp

import cnc

cp = pytest.importorskip("cupy", reason="CuPy is not installed")
csp = pytest.importorskip("cupyx.scipy.sparse", reason="CuPy is not installed")
try:
    _gpus = cp.cuda.runtime.getDeviceCount()
except Exception:  # noqa: BLE001 -- no driver
    _gpus = 0
if _gpus == 0 or not cnc.backend_available("cuda"):
    pytest.skip("no CUDA device for cnc's CUDA backend", allow_module_level=True)


def rhs(n, k=None, seed=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n if k is None else (n, k))


def test_cupy_matrix_and_vector_stay_on_the_device():
    A = shifted_poisson2d(200)  # 40 000 rows: above the automatic GPU threshold
    b = rhs(A.shape[0])
    x, info = cnc.solve(csp.csr_matrix(A), cp.asarray(b), tol=1e-10)
    assert isinstance(x, cp.ndarray) and x.shape == b.shape
    assert info.converged and info.backend == "cuda" and info.format in ("sell", "csr")
    assert rel_err(cp.asnumpy(x), reference(A, b)) < 1e-7
    # The same system from host arrays: same iterations to one convergence check.
    xh, ih = cnc.solve(A, b, tol=1e-10, backend="cuda")
    assert abs(info.iterations - ih.iterations) <= 16
    assert rel_err(cp.asnumpy(x), xh) < 1e-8


def test_several_rhs_and_x0():
    A = poisson2d(150)
    B = rhs(A.shape[0], 3)
    x0 = np.full(A.shape[0], 0.1)
    X, info = cnc.solve(csp.csr_matrix(A), cp.asarray(B), tol=1e-10, x0=cp.asarray(x0))
    assert X.shape == B.shape and info.converged
    assert rel_err(cp.asnumpy(X), reference(A, B)) < 1e-7


def test_device_matrix_host_vector_returns_numpy():
    A = poisson2d(150)
    b = rhs(A.shape[0])
    x, info = cnc.solve(csp.csr_matrix(A), b, tol=1e-10)
    assert isinstance(x, np.ndarray) and info.converged
    assert rel_err(x, reference(A, b)) < 1e-7


def test_other_sparse_formats_and_unsorted_rows():
    A = shifted_poisson2d(120)
    b = rhs(A.shape[0])
    x, info = cnc.solve(csp.coo_matrix(A), cp.asarray(b), tol=1e-10, backend="cuda")
    assert info.converged and rel_err(cp.asnumpy(x), reference(A, b)) < 1e-7
    # Rows reversed: not canonical, converted through the host, same answer.
    R = A.tocsr()
    for i in range(R.shape[0]):
        s, e = R.indptr[i], R.indptr[i + 1]
        R.indices[s:e] = R.indices[s:e][::-1].copy()
        R.data[s:e] = R.data[s:e][::-1].copy()
    R.has_sorted_indices = False
    x, info = cnc.solve(csp.csr_matrix(R), cp.asarray(b), tol=1e-10, backend="cuda")
    assert info.converged and rel_err(cp.asnumpy(x), reference(A, b)) < 1e-7


def test_bad_device_input_raises_and_leaves_x0():
    A = poisson2d(100)
    b = cp.asarray(rhs(A.shape[0]))
    b[5] = cp.nan
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(csp.csr_matrix(A), b)
    assert e.value.status == cnc.ERR_NOT_FINITE
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(csp.csr_matrix(A), cp.ones(7))
    assert e.value.status == cnc.ERR_SIZE_MISMATCH
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(csp.csr_matrix(A), cp.ones(A.shape[0]), backend="cpu")
    assert e.value.status == cnc.ERR_INVALID_VALUE
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(csp.csr_matrix(A), cp.ones(A.shape[0]), precision="single")
    assert e.value.status == cnc.ERR_INVALID_VALUE
    bad = A.tocsr().copy()
    bad.data[10] = np.inf
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(csp.csr_matrix(bad), cp.ones(A.shape[0]))
    assert e.value.status == cnc.ERR_NOT_FINITE and "values[10]" in str(e.value)


@pytest.mark.skipif(_gpus < 2, reason="arrays on another GPU need two CUDA devices")
def test_arrays_on_another_gpu():
    A = shifted_poisson2d(150)
    b = rhs(A.shape[0])
    with cp.cuda.Device(1):
        Ad, bd = csp.csr_matrix(A), cp.asarray(b)
    # cnc.solve runs on the GPU that holds the arrays, and x stays there.
    x, info = cnc.solve(Ad, bd, tol=1e-10)
    assert info.converged and info.backend == "cuda" and x.device.id == 1
    assert rel_err(cp.asnumpy(x), reference(A, b)) < 1e-7
    # A context on device 0 (CNC_DEVICE_INDEX's default) refuses them, naming device 1.
    with cnc.Context() as ctx:
        with pytest.raises(cnc.CncError) as e:
            ctx.solve_matrix(Ad, bd)
        assert e.value.status == cnc.ERR_INVALID_VALUE and "device 1" in str(e.value)


def test_cg_takes_cupy_as_cupyx_does():
    """cnc.cg on CuPy arrays: solved on the device, x a CuPy array, SciPy's (x, info) and
    stopping test, the same answer as cupyx.scipy.sparse.linalg.cg."""
    import cupyx.scipy.sparse.linalg as cspla

    A = poisson2d(200)  # 40 000 rows
    b = rhs(A.shape[0])
    Ad, bd = csp.csr_matrix(A), cp.asarray(b)
    x, info = cnc.cg(Ad, bd, rtol=1e-8)
    assert isinstance(x, cp.ndarray) and x.shape == (A.shape[0],) and info == 0
    xh = cp.asnumpy(x)
    assert np.linalg.norm(b - A @ xh) <= 1e-8 * np.linalg.norm(b) * 1.0001
    import inspect

    tol_name = "rtol" if "rtol" in inspect.signature(cspla.cg).parameters else "tol"
    xc, info_c = cspla.cg(Ad, bd, **{tol_name: 1e-8}, atol=0.0, maxiter=10 * A.shape[0])
    assert info_c == 0 and rel_err(xh, cp.asnumpy(xc)) < 1e-5
    # The limit reached: info = maxiter, as SciPy; b = 0: x = 0 at once.
    _, info = cnc.cg(Ad, bd, rtol=1e-12, maxiter=5)
    assert info == 5
    x0, info = cnc.cg(Ad, cp.zeros_like(bd))
    assert info == 0 and not cp.any(x0)
    with pytest.raises(NotImplementedError):
        cnc.cg(Ad, bd, callback=lambda xk: None)
    with pytest.raises(TypeError):
        cnc.bicgstab(Ad, bd)
