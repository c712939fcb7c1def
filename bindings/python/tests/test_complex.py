"""Complex systems through cnc.solve (cncSolveCSRComplex) against numpy.linalg.solve."""

import numpy as np
import pytest
from conftest import sp

import cnc


def magnetic_laplacian(m, shift=0.05, skew=0.0):
    """Graph Laplacian of an m x m grid with unit-modulus phases on its edges, plus a shift:
    Hermitian positive definite (skew adds i * skew to the diagonal: not Hermitian)."""
    n = m * m
    rng = np.random.default_rng(5)
    rows, cols, vals = [], [], []
    deg = np.zeros(n)
    for y in range(m):
        for x in range(m):
            i = y * m + x
            for j in ([i + 1] if x + 1 < m else []) + ([i + m] if y + 1 < m else []):
                phase = np.exp(1j * rng.uniform(-np.pi, np.pi))
                rows += [i, j]
                cols += [j, i]
                vals += [-phase, -np.conj(phase)]
                deg[i] += 1
                deg[j] += 1
    rows += list(range(n))
    cols += list(range(n))
    vals += list(deg + shift + 1j * skew)
    return sp.csr_matrix((np.array(vals), (rows, cols)), shape=(n, n))


def backends():
    return [b for b in ("cpu", "opencl") if cnc.backend_available(b)]


@pytest.mark.parametrize("backend", backends())
def test_hermitian_cg_vs_numpy(backend):
    A = magnetic_laplacian(12)
    rng = np.random.default_rng(1)
    b = rng.standard_normal((A.shape[0], 3)) + 1j * rng.standard_normal((A.shape[0], 3))
    x, info = cnc.solve(A, b, tol=1e-12, backend=backend)
    assert info.converged, info.reason
    assert x.dtype == np.complex128 and x.shape == b.shape
    ref = np.linalg.solve(A.toarray(), b)
    assert np.linalg.norm(x - ref) <= 1e-9 * np.linalg.norm(ref)


@pytest.mark.parametrize("solver", ["bicgstab", "gmres"])
def test_general_complex_vs_numpy(solver):
    A = magnetic_laplacian(10, shift=0.2, skew=1.5)
    b = np.exp(1j * np.arange(A.shape[0]))
    x, info = cnc.solve(A, b, tol=1e-12, solver=solver, backend="cpu")
    assert info.converged, info.reason
    ref = np.linalg.solve(A.toarray(), b)
    assert np.linalg.norm(x - ref) <= 1e-9 * np.linalg.norm(ref)


def test_real_matrix_complex_rhs_and_dense():
    # A real A with a complex b (or x0) is solved as a complex system; dense A too.
    A = magnetic_laplacian(6).real.toarray()
    A = A + A.T + 8 * np.eye(A.shape[0])
    b = np.arange(A.shape[0]) * (1 - 2j)
    x, info = cnc.solve(A, b, tol=1e-12, backend="cpu", x0=np.ones(A.shape[0]))
    assert info.converged
    assert np.linalg.norm(x - np.linalg.solve(A, b)) <= 1e-9 * np.linalg.norm(x)


@pytest.mark.parametrize("backend", backends())
def test_formats(backend):
    # A complex A runs in the native complex CSR ("zcsr") by default and with "csr"; "bcrs2"
    # forces its real-equivalent. A real A refuses "zcsr".
    A = magnetic_laplacian(9)
    b = np.exp(0.3j * np.arange(A.shape[0]))
    ref = np.linalg.solve(A.toarray(), b)
    for fmt, used in (("auto", "zcsr"), ("csr", "zcsr"), ("zcsr", "zcsr"), ("bcrs2", "bcrs2")):
        x, info = cnc.solve(A, b, tol=1e-12, backend=backend, format=fmt)
        assert info.converged and info.format == used, (fmt, info.format)
        assert np.linalg.norm(x - ref) <= 1e-9 * np.linalg.norm(ref)
    with pytest.raises(cnc.CncError):
        cnc.solve(A.real, b.real, backend=backend, format="zcsr")
