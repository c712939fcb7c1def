"""Shared helpers of the cnc Python tests: model problems and the reference solver.

References are scipy.sparse.linalg.spsolve (a direct LU solve, independent of cnc's CG).
"""

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")
_spla = pytest.importorskip("scipy.sparse.linalg")

# SciPy before 1.12 (Debian 12 has 1.10) names rtol `tol`, and its atol defaults to a "legacy"
# rule; cnc follows today's SciPy (rtol, atol=0.0). The reference calls go through this shim,
# which hands an older SciPy the same stopping test under its old names.
SCIPY_HAS_RTOL = "rtol" in __import__("inspect").signature(_spla.cg).parameters


class _CurrentSciPy:
    def __getattr__(self, name):
        fn = getattr(_spla, name)
        if SCIPY_HAS_RTOL or name not in ("cg", "bicgstab", "gmres"):
            return fn

        def call(*args, **kwargs):
            if "rtol" in kwargs:
                kwargs["tol"] = kwargs.pop("rtol")
            kwargs.setdefault("atol", 0.0)
            return fn(*args, **kwargs)

        return call


spla = _CurrentSciPy()


def poisson2d(m, dtype=np.float64):
    """5-point Laplacian on an m x m grid (n = m*m), CSR, SPD."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (sp.kron(t, eye) + sp.kron(eye, t)).tocsr().astype(dtype)


def shifted_poisson2d(m, seed=0):
    """Poisson plus a random positive diagonal: SPD with entries that floats cannot hold exactly."""
    rng = np.random.default_rng(seed)
    A = poisson2d(m) + sp.diags(rng.uniform(0.1, 1.0, m * m))
    return A.tocsr()


def reference(A, b):
    """Direct solve of A x = b with scipy's sparse LU (one factorization for a block b)."""
    return spla.splu(sp.csc_matrix(A)).solve(np.asarray(b, dtype=np.float64))


def rel_err(x, ref):
    return np.linalg.norm(x - ref) / np.linalg.norm(ref)


def true_residual(A, x, b):
    """max over columns of ||b - A x|| / ||b||, computed here in double."""
    r = b - A @ x
    if b.ndim == 1:
        return np.linalg.norm(r) / np.linalg.norm(b)
    return max(np.linalg.norm(r[:, j]) / np.linalg.norm(b[:, j]) for j in range(b.shape[1]))
