"""cnc.solve with solver="cudss" (NVIDIA cuDSS on a CUDA GPU), checked against scipy's sparse LU
and the residual computed here; where cuDSS cannot run, the solve is refused (CncError,
ERR_UNSUPPORTED) and the GPU checks are skipped."""

import numpy as np
import pytest
from conftest import poisson2d, reference, rel_err, sp, true_residual

import cnc

CUDSS = cnc.direct_solver_available("cudss")
needs_cudss = pytest.mark.skipif(
    not CUDSS, reason="SKIP: cuDSS cannot run here (a CUDA GPU and PyPI's nvidia-cudss-cu13)"
)


@pytest.mark.skipif(CUDSS, reason="SKIP: cuDSS runs here; the refusal is not reachable")
def test_refused_where_absent():
    A = poisson2d(5)
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(A, np.ones(A.shape[0]), solver="cudss")
    assert e.value.status == cnc.ERR_UNSUPPORTED
    assert "cuDSS is not available" in str(e.value)


@needs_cudss
def test_spd_several_rhs():
    A = poisson2d(30)
    b = np.random.default_rng(1).standard_normal((A.shape[0], 3))
    x, info = cnc.solve(A, b, solver="cudss")
    assert info.converged and info.solver == "cudss" and info.iterations == 0
    assert info.backend == "cuda"
    assert rel_err(x, reference(A, b)) < 1e-10
    assert info.true_residual == pytest.approx(true_residual(A, x, b), rel=1e-3, abs=1e-16)


@needs_cudss
def test_nonsymmetric():
    rng = np.random.default_rng(3)
    n = 200
    A = sp.tril(sp.random(n, n, density=0.05, random_state=rng), -1)
    A = (A + 10.0 * sp.triu(sp.random(n, n, density=0.05, random_state=rng), 1)).tocsr()
    A = (A + sp.diags(abs(A).sum(axis=1).A1 + 1.0)).tocsr()
    b = rng.standard_normal(n)
    x, info = cnc.solve(A, b, solver="cudss")
    ref = reference(A, b)
    assert rel_err(reference(A.T.tocsr(), b), ref) > 1e-2  # A and Aᵀ are told apart
    assert info.converged and rel_err(x, ref) < 1e-10


@needs_cudss
def test_not_positive_definite():
    A = poisson2d(6).tolil()
    A[3, 3] = -4.0  # symmetric, not positive definite
    x, info = cnc.solve(A.tocsr(), np.ones(A.shape[0]), solver="cudss")
    assert info.reason_code == cnc.REASON_INDEFINITE_MATRIX and not info.converged
    assert np.all(x == 0)
