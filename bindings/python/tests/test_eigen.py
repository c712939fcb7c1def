"""cnc.eigsh (ARPACK through cncEigenSolveCSR) against dense references: scipy.linalg.eigh of
the same matrices, the 1D Laplacian's closed form, the residual and M-orthonormality computed
here; shift-invert finds the eigenvalues nearest sigma; bad input raises with nothing returned."""

import numpy as np
import pytest
import scipy.linalg
from conftest import poisson2d, sp

import cnc

pytestmark = pytest.mark.skipif(
    not cnc.eigen_solver_available(), reason="SKIP: ARPACK not available (Debian: libarpack2)"
)


def laplacian_1d(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]).tocsr()


def check_pairs(A, M, w, v, tol=1e-9):
    Md = np.eye(A.shape[0]) if M is None else M.toarray()
    R = A @ v - (Md @ v) * w
    assert np.linalg.norm(R, axis=0).max() < tol
    assert np.abs(v.T @ Md @ v - np.eye(len(w))).max() < 1e-10
    assert np.all(np.diff(w) >= 0)


def test_closed_form_smallest_largest():
    n = 60
    A = laplacian_1d(n)
    exact = 2 - 2 * np.cos(np.arange(1, n + 1) * np.pi / (n + 1))
    w, v = cnc.eigsh(A, k=4, which="SA")
    assert np.allclose(w, exact[:4], atol=1e-11, rtol=0)
    check_pairs(A, None, w, v)
    w = cnc.eigsh(A, k=3, which="LM", return_eigenvectors=False)
    assert np.allclose(w, exact[-3:], atol=1e-11, rtol=0)


# M and shift-invert need a factorization; inside the spectrum an indefinite one (SuperLU).
needs_superlu = pytest.mark.skipif(
    not cnc.direct_solver_available("superlu"),
    reason="SKIP: SuperLU not available (Debian: libsuperlu5; a libcnc built with its header)",
)


@needs_superlu
def test_against_dense_eigh_generalized():
    A = poisson2d(12)  # 144 unknowns
    n = A.shape[0]
    rng = np.random.default_rng(5)
    M = sp.diags(0.5 + rng.random(n)).tocsr()
    ref = scipy.linalg.eigh(A.toarray(), M.toarray(), eigvals_only=True)
    w, v = cnc.eigsh(A, k=6, M=M, which="SA")
    assert np.allclose(w, ref[:6], rtol=1e-10, atol=0)
    check_pairs(A, M, w, v)
    w, v = cnc.eigsh(A, k=6, M=M, sigma=0.0)  # shift-invert below the spectrum: the same
    assert np.allclose(w, ref[:6], rtol=1e-10, atol=0)
    check_pairs(A, M, w, v)
    # Inside the spectrum: the five nearest sigma (A - sigma M indefinite: SuperLU).
    sigma = 0.5 * (ref[40] + ref[41])
    w, v = cnc.eigsh(A, k=5, M=M, sigma=sigma)
    nearest = np.sort(ref[np.argsort(np.abs(ref - sigma))[:5]])
    assert np.allclose(w, nearest, rtol=1e-10, atol=0)
    check_pairs(A, M, w, v)
    # The vectors agree with the dense ones up to sign (simple eigenvalues here).
    _, V = scipy.linalg.eigh(A.toarray(), M.toarray())
    idx = np.argsort(np.abs(ref - sigma))[:5]
    for j, col in enumerate(sorted(idx)):
        assert abs(abs(V[:, col] @ M.toarray() @ v[:, j]) - 1) < 1e-8


def test_bad_input():
    A = laplacian_1d(10)
    with pytest.raises(cnc.CncError) as e:
        cnc.eigsh(A, k=10)
    assert e.value.status == cnc.ERR_INVALID_VALUE
    with pytest.raises(cnc.CncError) as e:
        cnc.eigsh(sp.csr_matrix(np.triu(A.toarray())), k=2)
    assert e.value.status == cnc.ERR_UNSUPPORTED and "symmetric" in e.value.message
    with pytest.raises(cnc.CncError) as e:
        cnc.eigsh(A, k=2, sigma=1.0, which="SA")
    assert e.value.status == cnc.ERR_INVALID_VALUE
    with pytest.raises(cnc.CncError) as e:
        cnc.eigsh(A, k=2, M=sp.identity(9, format="csr"))
    assert e.value.status == cnc.ERR_SIZE_MISMATCH
    bad = A.copy()
    bad.data[0] = np.nan
    with pytest.raises(cnc.CncError) as e:
        cnc.eigsh(bad, k=2)
    assert e.value.status == cnc.ERR_NOT_FINITE


def test_no_convergence():
    with pytest.raises(cnc.ArpackNoConvergence):
        cnc.eigsh(laplacian_1d(400), k=4, which="SA", maxiter=1)
