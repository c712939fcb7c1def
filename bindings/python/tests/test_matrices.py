"""cnc.solve on real SPD matrices (SuiteSparse, /work/shared/data/matrices) against scipy.

b = A x* for a random x*; cnc (tol 1e-10) must converge, its residual computed here must be
small, and its solution must agree with scipy's direct solve to within what the condition
number allows. Skipped, saying so, when the matrix folder is absent (CNC_MATRIX_DIR overrides).
"""

import os
from pathlib import Path

import numpy as np
import pytest
from conftest import reference, rel_err, true_residual

import cnc

MATRIX_DIR = Path(os.environ.get("CNC_MATRIX_DIR", "/work/shared/data/matrices"))

# SPD matrices with a 2-norm condition number up to ~1e7 (SuiteSparse metadata, see SOURCES.txt;
# for the synthetic Laplacians an upper estimate).
MATRICES = {
    "Trefethen_20b.mtx": 3.1e1,
    "bcsstm21.mtx": 2.4e1,
    "gr_900_900_crg.mtx": 2.0e2,
    "lap3D_7pt_n20.mtx": 5.0e2,
    "nos4_header-added.mtx": 1.6e3,
    "bcsstk02.mtx": 4.4e3,
    "bcsstm07.mtx": 7.7e3,
    "bcsstk09.mtx": 9.6e3,
    "lap2D_5pt_n100.mtx": 1.0e4,
    "bcsstk05.mtx": 1.5e4,
    "bcsstk22.mtx": 1.2e5,
    "bcsstk10.mtx": 5.3e5,
    "662_bus.mtx": 8.0e5,
    "bcsstk01.mtx": 8.9e5,
    "494_bus.mtx": 2.5e6,
    "bcsstk04.mtx": 2.3e6,
    "LF10.mtx": 3.9e6,
    "bcsstk03.mtx": 6.8e6,
    "bcsstk06.mtx": 7.6e6,
    "nos6.mtx": 7.7e6,
}


def load(name):
    path = MATRIX_DIR / name
    if not path.is_file():
        pytest.skip(f"SKIP: {path} not found (real matrices absent)")
    from scipy.io import mmread

    return mmread(str(path)).tocsr().astype(np.float64)


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_real_spd_matrix(name):
    A = load(name)
    n = A.shape[0]
    assert abs(A - A.T).max() <= 1e-12 * abs(A).max(), "test matrix is not symmetric"
    x_star = np.random.default_rng(11).standard_normal(n)
    b = A @ x_star
    tol = 1e-10
    x, info = cnc.solve(A, b, tol=tol, max_iter=100 * n)
    assert info.converged, (info.reason, info.iterations, info.residual, info.true_residual)
    assert true_residual(A, x, b) < 100 * tol
    bound = max(1e-8, 10 * MATRICES[name] * tol)
    assert rel_err(x, reference(A, b)) < bound


@pytest.mark.parametrize("name", ["bcsstk05.mtx", "lap2D_5pt_n100.mtx"])
def test_real_matrix_block_formats_and_several_rhs(name):
    A = load(name)
    n = A.shape[0]
    B = np.random.default_rng(2).standard_normal((n, 3))
    ref = reference(A, B)
    for fmt in ("csr", "bcrs2", "bcrs4", "sell"):
        X, info = cnc.solve(A, B, tol=1e-10, max_iter=100 * n, format=fmt, backend="cpu")
        assert info.converged and info.format == fmt
        assert rel_err(X, ref) < max(1e-8, 10 * MATRICES[name] * 1e-10), fmt
