"""cnc.solve with the direct solvers ("cholmod", "superlu"), checked against scipy's sparse LU
and the residual computed here; their failures (not positive definite, singular, not symmetric)."""

import numpy as np
import pytest
from conftest import poisson2d, reference, rel_err, sp, true_residual

import cnc

pytestmark = pytest.mark.skipif(
    not (cnc.direct_solver_available("cholmod") and cnc.direct_solver_available("superlu")),
    reason="SKIP: CHOLMOD or SuperLU not available (Debian: libcholmod3, libsuperlu5)",
)


def nonsymmetric(n, seed=3):
    """Diagonally dominant, strongly nonsymmetric (upper entries ten times the lower ones)."""
    rng = np.random.default_rng(seed)
    lower = sp.random(n, n, density=0.05, random_state=rng, format="csr")
    A = sp.tril(lower, -1) + 10.0 * sp.triu(sp.random(n, n, density=0.05, random_state=rng), 1)
    A = A.tocsr()
    return (A + sp.diags(abs(A).sum(axis=1).A1 + 1.0)).tocsr()


def test_available():
    assert cnc.direct_solver_available("cholmod") and cnc.direct_solver_available(cnc.SUPERLU)
    assert not cnc.direct_solver_available("cg")


def test_cholmod_several_rhs():
    A = poisson2d(20)
    b = np.random.default_rng(1).standard_normal((A.shape[0], 3))
    x, info = cnc.solve(A, b, solver="cholmod")
    assert info.converged and info.solver == "cholmod" and info.iterations == 0
    assert rel_err(x, reference(A, b)) < 1e-12
    assert info.true_residual == pytest.approx(true_residual(A, x, b), rel=1e-3, abs=1e-16)
    assert info.backend == "cpu"


def test_superlu_nonsymmetric():
    A = nonsymmetric(150)
    b = np.random.default_rng(2).standard_normal(A.shape[0])
    x, info = cnc.solve(A, b, solver="superlu")
    assert info.converged and info.solver == "superlu"
    ref = reference(A, b)
    assert rel_err(reference(A.T.tocsr(), b), ref) > 1e-2  # A and Aᵀ are told apart
    assert rel_err(x, ref) < 1e-12


def test_failures():
    A = poisson2d(6).tolil()
    A[3, 3] = -4.0  # symmetric, not positive definite
    A = A.tocsr()
    b = np.ones(A.shape[0])
    x, info = cnc.solve(A, b, solver="cholmod")
    assert info.reason_code == cnc.REASON_INDEFINITE_MATRIX and not info.converged
    assert np.all(x == 0)  # x0 (zeros) left as it was
    S = sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 4.0]]))
    x, info = cnc.solve(S, np.ones(2), solver="superlu")
    assert info.reason_code == cnc.REASON_BREAKDOWN and np.all(x == 0)
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(nonsymmetric(20), np.ones(20), solver="cholmod")
    assert e.value.status == cnc.ERR_UNSUPPORTED and "symmetric" in str(e.value)
