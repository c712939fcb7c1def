"""cnc.solve on generated problems, checked against scipy's direct solver."""

import threading

import numpy as np
import pytest
from conftest import poisson2d, reference, rel_err, shifted_poisson2d, sp, true_residual

import cnc


def rhs(n, k=None, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n if k is None else (n, k))


def test_poisson_matches_scipy():
    A = poisson2d(30)
    b = rhs(A.shape[0])
    x, info = cnc.solve(A, b, tol=1e-10)
    assert info.converged and info.reason == "converged"
    assert info.reason_code == cnc.REASON_CONVERGED
    assert x.shape == b.shape and x.dtype == np.float64
    assert rel_err(x, reference(A, b)) < 1e-7
    assert 0 < info.iterations < 5 * A.shape[0]
    assert info.residual <= 1e-10
    # cnc's own true residual agrees with one computed here.
    assert info.true_residual == pytest.approx(true_residual(A, x, b), rel=1e-3, abs=1e-14)
    assert info.nnz == A.nnz
    assert info.backend in ("cpu", "opencl", "cuda") and info.format in ("csr", "bcrs2", "bcrs4", "sell")
    assert info.solver == "cg"
    assert info.times.elapsed >= info.times.solve >= 0.0


def test_default_tolerance_is_1e_6():
    A = poisson2d(20)
    b = rhs(A.shape[0])
    _, loose = cnc.solve(A, b)
    _, tight = cnc.solve(A, b, tol=1e-12)
    assert loose.converged and tight.converged
    assert loose.residual <= 1e-6 and tight.residual <= 1e-12
    assert loose.iterations < tight.iterations


def test_multiple_right_hand_sides():
    A = shifted_poisson2d(20)
    B = rhs(A.shape[0], 3)
    X, info = cnc.solve(A, B, tol=1e-10)
    assert X.shape == B.shape
    assert info.converged
    for j in range(3):  # each column is its own system
        assert rel_err(X[:, j], reference(A, B[:, j])) < 1e-7
    assert true_residual(A, X, B) < 1e-9


def test_single_column_2d_rhs_keeps_shape():
    A = poisson2d(10)
    b = rhs(A.shape[0], 1)
    x, _ = cnc.solve(A, b, tol=1e-10)
    assert x.shape == (A.shape[0], 1)
    assert rel_err(x[:, 0], reference(A, b[:, 0])) < 1e-7


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_index_types(index_dtype):
    A = shifted_poisson2d(16)
    B = A.copy()
    # Set after construction: scipy's constructor would downcast int64 indices to int32.
    B.indices = A.indices.astype(index_dtype)
    B.indptr = A.indptr.astype(index_dtype)
    assert B.indices.dtype == index_dtype and B.indptr.dtype == index_dtype
    b = rhs(A.shape[0])
    x, info = cnc.solve(B, b, tol=1e-10)
    assert info.converged
    assert rel_err(x, reference(A, b)) < 1e-7


def test_coo_with_duplicates_is_summed():
    A = shifted_poisson2d(12)
    coo = A.tocoo()
    # Split every entry into three pieces: 0.5 + 0.25 + 0.25 of the value, in shuffled order.
    rows = np.concatenate([coo.row] * 3)
    cols = np.concatenate([coo.col] * 3)
    vals = np.concatenate([coo.data * 0.5, coo.data * 0.25, coo.data * 0.25])
    perm = np.random.default_rng(3).permutation(rows.size)
    dup = sp.coo_matrix((vals[perm], (rows[perm], cols[perm])), shape=A.shape)
    b = rhs(A.shape[0])
    x, info = cnc.solve(dup, b, tol=1e-10)
    assert info.converged
    assert rel_err(x, reference(A, b)) < 1e-7
    assert info.nnz == A.nnz


def test_csr_with_duplicates_and_unsorted_columns_is_summed_by_cnc():
    # A CSR input goes to cncSolveCSR untouched, so this checks cnc's own summing.
    A = shifted_poisson2d(10)
    n = A.shape[0]
    rows_ptr, cols, vals = [0], [], []
    for i in range(n):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        c, v = A.indices[lo:hi][::-1], A.data[lo:hi][::-1]  # reversed: unsorted
        cols += list(c) + list(c)
        vals += list(v * 0.75) + list(v * 0.25)
        rows_ptr.append(len(cols))
    dup = sp.csr_matrix((np.array(vals), np.array(cols), np.array(rows_ptr)), shape=A.shape)
    assert dup.nnz == 2 * A.nnz  # scipy has not summed them
    b = rhs(n)
    x, info = cnc.solve(dup, b, tol=1e-10)
    assert info.converged
    assert rel_err(x, reference(A, b)) < 1e-7


def test_csc_input():
    A = shifted_poisson2d(14)
    b = rhs(A.shape[0])
    x, info = cnc.solve(A.tocsc(), b, tol=1e-10)
    assert info.converged
    assert rel_err(x, reference(A, b)) < 1e-7


def test_conversion_of_non_symmetric_formats_matches_scipy():
    # A solve cannot tell A from Aᵀ on SPD matrices: check the CSR arrays handed to cnc directly.
    from cnc import _matrix

    rng = np.random.default_rng(5)
    M = sp.random(40, 40, density=0.2, random_state=7, format="coo") + sp.identity(40)
    for fmt in ("csc", "coo", "lil", "dok", "bsr"):
        n, row_ptr, col_idx, values = _matrix.csr_arrays(M.asformat(fmt))
        got = sp.csr_matrix((values, col_idx.astype(np.int64), row_ptr), shape=(n, n))
        assert abs(got - M.tocsr()).max() == 0, fmt
    D = rng.standard_normal((6, 6)) * (rng.random((6, 6)) < 0.5)
    n, row_ptr, col_idx, values = _matrix.csr_arrays(D)
    got = sp.csr_matrix((values, col_idx.astype(np.int64), row_ptr), shape=(n, n)).toarray()
    assert np.array_equal(got, D)


def test_dense_numpy_input():
    A = shifted_poisson2d(6).toarray()
    b = rhs(A.shape[0])
    x, info = cnc.solve(A, b, tol=1e-12)
    assert info.converged
    assert np.allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-12)


def test_float32_matrix_values_are_accepted():
    A = poisson2d(12, dtype=np.float32)
    b = rhs(A.shape[0])
    x, info = cnc.solve(A, b, tol=1e-10)
    assert info.converged
    assert rel_err(x, reference(A.astype(np.float64), b)) < 1e-7


@pytest.mark.parametrize(
    "precision, tol, bound",
    [("double", 1e-10, 1e-7), ("mixed", 1e-6, 1e-4), ("single", 1e-5, 1e-3)],
)
def test_precisions(precision, tol, bound):
    A = shifted_poisson2d(20, seed=4)
    b = rhs(A.shape[0])
    x, info = cnc.solve(A, b, tol=tol, precision=precision)
    assert info.converged, (precision, info.reason, info.residual, info.true_residual)
    assert rel_err(x, reference(A, b)) < bound
    assert true_residual(A, x, b) < 10 * tol


def test_single_precision_is_really_single():
    # Float vectors cannot reach a 1e-12 true residual on this matrix; double can.
    A = shifted_poisson2d(20, seed=4)
    b = rhs(A.shape[0])
    x, _ = cnc.solve(A, b, tol=1e-5, precision="single")
    xd, _ = cnc.solve(A, b, tol=1e-13, precision="double")
    assert rel_err(xd, reference(A, b)) < 1e-10
    assert rel_err(x, reference(A, b)) > 1e-10


@pytest.mark.parametrize("fmt", ["csr", "bcrs2", "bcrs4"])
def test_formats(fmt):
    A = shifted_poisson2d(15)  # n = 225: not a multiple of 2 or 4, so padding is exercised
    B = rhs(A.shape[0], 2)
    X, info = cnc.solve(A, B, tol=1e-10, format=fmt, backend="cpu")
    assert info.format == fmt
    assert info.converged
    assert rel_err(X, reference(A, B)) < 1e-7


def test_no_preconditioner_and_threads():
    A = shifted_poisson2d(15)
    b = rhs(A.shape[0])
    ref = reference(A, b)
    for threads in (1, 2):
        x, info = cnc.solve(A, b, tol=1e-10, preconditioner="none", threads=threads)
        assert info.converged and rel_err(x, ref) < 1e-7


def test_jacobi_matters_on_badly_scaled_matrix():
    # D A D with a wildly varying D: Jacobi undoes the scaling, plain CG struggles.
    A = poisson2d(12)
    d = sp.diags(np.logspace(0, 3, A.shape[0]))
    S = (d @ A @ d).tocsr()
    b = rhs(S.shape[0])
    xj, jac = cnc.solve(S, b, tol=1e-8, max_iter=20000)
    _, plain = cnc.solve(S, b, tol=1e-8, max_iter=20000, preconditioner="none")
    assert jac.converged and rel_err(xj, reference(S, b)) < 1e-5
    assert jac.iterations < plain.iterations


def test_max_iterations_reason():
    A = poisson2d(30)
    b = rhs(A.shape[0])
    x, info = cnc.solve(A, b, tol=1e-12, max_iter=3)
    assert not info.converged
    assert info.reason_code == cnc.REASON_MAX_ITERATIONS
    assert info.reason == "max_iterations" or "iteration" in info.reason
    assert info.iterations == 3
    assert info.residual > 1e-12


def test_initial_guess_exact_solution_needs_no_iteration():
    A = poisson2d(12)
    b = rhs(A.shape[0])
    ref = reference(A, b)
    x, info = cnc.solve(A, b, tol=1e-8, x0=ref)
    assert info.converged and info.iterations == 0
    assert rel_err(x, ref) < 1e-12
    # A 1-D x0 is used for every column of a 2-D b.
    X, info = cnc.solve(A, np.column_stack([b, b]), tol=1e-8, x0=ref)
    assert info.iterations == 0 and rel_err(X[:, 1], ref) < 1e-12


def test_zero_rhs_gives_zero():
    A = poisson2d(8)
    x, info = cnc.solve(A, np.zeros(A.shape[0]))
    assert np.all(x == 0.0)


def test_inputs_are_not_modified():
    A = shifted_poisson2d(8)
    b = rhs(A.shape[0])
    x0 = np.ones_like(b)
    copies = [A.data.copy(), A.indices.copy(), A.indptr.copy(), b.copy(), x0.copy()]
    cnc.solve(A, b, x0=x0)
    for before, after in zip(copies, [A.data, A.indices, A.indptr, b, x0]):
        assert np.array_equal(before, after)


def test_indefinite_matrix_is_reported_not_raised():
    A = poisson2d(8)
    A = (A - 10.0 * sp.identity(A.shape[0])).tocsr()  # negative definite
    _, info = cnc.solve(A, rhs(A.shape[0]), preconditioner="none")
    assert info.reason_code in (cnc.REASON_INDEFINITE_MATRIX, cnc.REASON_INDEFINITE_PRECOND)
    assert not info.converged


def test_concurrent_solves_in_threads():
    problems = [(shifted_poisson2d(18, seed=s), rhs(324, seed=s)) for s in range(4)]
    results = [None] * len(problems)

    def work(i):
        A, b = problems[i]
        results[i] = cnc.solve(A, b, tol=1e-10, threads=1)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(problems))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (A, b), (x, info) in zip(problems, results):
        assert info.converged and rel_err(x, reference(A, b)) < 1e-7


@pytest.mark.parametrize("solver", ["bicgstab", "gmres"])
def test_nonsymmetric_solvers(solver):
    # Convection-diffusion (central differences): a nonsymmetric, nonsingular matrix.
    m = 20
    one = sp.eye(m, format="csr")
    conv = sp.diags([-1.45, 4.0, -0.55], [-1, 0, 1], shape=(m, m))  # -1 -/+ 0.45
    A = (sp.kron(one, conv) + sp.kron(sp.diags([-1.0, -1.0], [-1, 1], shape=(m, m)), one)).tocsr()
    assert abs(A - A.T).max() > 0.5
    B = rhs(A.shape[0], 2, seed=7)
    X, info = cnc.solve(A, B, tol=1e-10, solver=solver, restart=20)
    assert info.converged, info.reason
    assert info.solver == solver
    for j in range(2):
        assert rel_err(X[:, j], reference(A, B[:, j])) < 1e-7
    # CG is not meant for it; a bad solver name is rejected before anything runs.
    with pytest.raises(cnc.CncError):
        cnc.solve(A, B[:, 0], solver="lu")


def test_ssor_is_ssor_on_the_cpu():
    """preconditioner="ssor": the right answer in fewer iterations than Jacobi, on the CPU
    (backend "auto"); a GPU backend named explicitly is refused; omega is checked."""
    A = poisson2d(30)
    b = rhs(A.shape[0])
    xj, jacobi = cnc.solve(A, b, tol=1e-10, preconditioner="jacobi", backend="cpu")
    xs, ssor = cnc.solve(A, b, tol=1e-10, preconditioner="ssor")
    assert jacobi.converged and ssor.converged and ssor.backend == "cpu"
    assert rel_err(xs, reference(A, b)) < 1e-7
    assert 2 * ssor.iterations <= jacobi.iterations + 10
    _, w1 = cnc.solve(A, b, tol=1e-10, preconditioner="ssor", omega=1.0)
    assert w1.converged and w1.iterations != ssor.iterations
    for backend in ("cuda", "opencl"):
        with pytest.raises(cnc.CncError):
            cnc.solve(A, b, preconditioner="ssor", backend=backend)
    for omega in (0.0, 2.0, -1.0):
        with pytest.raises(cnc.CncError):
            cnc.solve(A, b, preconditioner="ssor", omega=omega)


def test_reorder_keeps_callers_numbering():
    """reorder="rcm" renumbers inside cnc; x comes back in the caller's numbering."""
    A = poisson2d(40).tocsr()
    rng = np.random.default_rng(3)
    p = rng.permutation(A.shape[0])
    Ap = A[p][:, p].tocsr()  # randomly numbered unknowns
    b = rng.standard_normal((A.shape[0], 2))
    x, info = cnc.solve(Ap, b, tol=1e-11, backend="cpu", reorder="rcm")
    assert info.converged and info.ordering == "rcm"
    assert "ordering rcm" in info.choice
    assert rel_err(x, reference(Ap, b)) < 1e-8
    x2, info2 = cnc.solve(Ap, b, tol=1e-11, backend="cpu", reorder="none")
    assert info2.ordering == "natural"
    assert rel_err(x, x2) < 1e-8
    with pytest.raises(cnc.CncError):
        cnc.solve(Ap, b, reorder="sometimes")
