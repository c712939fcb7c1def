"""cnc.cg, cnc.bicgstab and cnc.gmres against scipy.sparse.linalg on the same problems: the
(x, info) contract, maxiter, rtol/atol, x0, b = 0, callbacks, M, and what cnc refuses."""

import warnings

import numpy as np
import pytest
from conftest import SCIPY_HAS_RTOL, poisson2d, reference, rel_err, shifted_poisson2d, sp, spla

import cnc
from cnc._library import has_function

SOLVERS = ["cg", "bicgstab", "gmres"]
# Tests that compare with a behaviour SciPy changed in 1.12 (b = 0, atol checks, gmres's cycles):
# run against a current SciPy (scripts/test-python.sh installs one), skipped with an older one.
modern_scipy = pytest.mark.skipif(
    not SCIPY_HAS_RTOL, reason="compares with SciPy >= 1.12 behaviour; this SciPy is older"
)
needs_iterate = pytest.mark.skipif(
    not has_function("cncGetCurrentIterate"),
    reason="the loaded libcnc has no cncGetCurrentIterate (callback(xk) unavailable)",
)


def convection_diffusion(m, wind=0.3):
    """Nonsymmetric: 2-D Laplacian plus an upwind convection term (n = m*m)."""
    t = sp.diags([-1.0 - wind, 2.0 + wind, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (sp.kron(t, eye) + sp.kron(eye, t)).tocsr()


def rhs(n, seed=1):
    return np.random.default_rng(seed).standard_normal(n)


def problem(name, m=16):
    return poisson2d(m) if name == "cg" else convection_diffusion(m)


def relres(A, x, b):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def run(name, *args, **kwargs):
    """The SciPy call and the cnc call with the same arguments."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(spla, name)(*args, **kwargs), getattr(cnc, name)(*args, **kwargs)


# ---- results and info codes ----------------------------------------------------------------
@pytest.mark.parametrize("name", SOLVERS)
def test_defaults_converge_as_scipy(name):
    A = problem(name)
    b = rhs(A.shape[0])
    (xs, info_s), (xc, info_c) = run(name, A, b)
    assert info_s == 0 and info_c == 0
    assert xc.shape == (A.shape[0],) and xc.dtype == np.float64
    # SciPy's default test, ||r|| <= 1e-5 ||b||, holds for cnc's answer (cnc checks it on b - A x).
    assert relres(A, xc, b) <= 1e-5 * 1.0001
    assert rel_err(xc, xs) < 1e-3


@pytest.mark.parametrize("name", SOLVERS)
def test_tight_rtol_matches_direct_solve(name):
    A = problem(name)
    b = rhs(A.shape[0])
    (xs, info_s), (xc, info_c) = run(name, A, b, rtol=1e-11)
    assert info_s == info_c == 0
    assert relres(A, xc, b) <= 1e-11 * 1.0001
    assert rel_err(xc, reference(A, b)) < 1e-7


def test_cg_iterates_are_scipys():
    """No preconditioner by default, as SciPy: the same method, so the same iterates."""
    A = shifted_poisson2d(14)
    b = rhs(A.shape[0])
    for maxiter in (1, 3, 10):
        (xs, info_s), (xc, info_c) = run("cg", A, b, maxiter=maxiter, rtol=1e-12)
        assert info_s == info_c == maxiter
        assert rel_err(xc, xs) < 1e-9


@pytest.mark.parametrize("name", SOLVERS)
def test_maxiter_reached_returns_maxiter(name):
    A = problem(name, 24)
    b = rhs(A.shape[0])
    (xs, info_s), (xc, info_c) = run(name, A, b, rtol=1e-14, maxiter=2)
    assert info_s == 2 and info_c == 2  # gmres: 2 restart cycles of min(20, n)
    assert relres(A, xc, b) > 1e-14
    # More iterations do better.
    _, (x_more, _) = run(name, A, b, rtol=1e-14, maxiter=4)
    assert relres(A, x_more, b) < relres(A, xc, b)


def test_gmres_maxiter_counts_cycles_and_restart():
    A = convection_diffusion(20)
    b = rhs(A.shape[0])
    (xs, info_s), (xc, info_c) = run("gmres", A, b, restart=5, maxiter=3, rtol=1e-14)
    assert info_s == info_c == 3
    assert rel_err(xc, xs) < 1e-8  # no preconditioner: the same GMRES(5), 15 inner iterations
    _, (x1, _) = run("gmres", A, b, restart=5, maxiter=1, rtol=1e-14)
    assert relres(A, x1, b) > relres(A, xc, b)


@pytest.mark.parametrize("name", SOLVERS)
def test_atol_semantics(name):
    """||r|| <= max(rtol ||b||, atol): atol rules when rtol ||b|| is smaller."""
    A = problem(name)
    b = 1e3 * rhs(A.shape[0])
    bnorm = np.linalg.norm(b)
    atol = 1e-4 * bnorm
    (xs, info_s), (xc, info_c) = run(name, A, b, rtol=0.0, atol=atol)
    assert info_s == info_c == 0
    assert np.linalg.norm(b - A @ xc) <= atol * 1.0001
    # rtol alone, looser than atol: rtol rules (cnc stops no later than SciPy's test allows).
    _, (x_rtol, info) = run(name, A, b, rtol=1e-2, atol=atol)
    assert info == 0 and np.linalg.norm(b - A @ x_rtol) <= 1e-2 * bnorm * 1.0001
    assert np.linalg.norm(b - A @ x_rtol) > np.linalg.norm(b - A @ xc)


def test_cg_atol_and_rtol_give_scipys_answer():
    A = poisson2d(16)
    b = rhs(A.shape[0])
    for kw in ({"rtol": 1e-6}, {"rtol": 0.0, "atol": 1e-4}, {"rtol": 1e-3, "atol": 1e-6}):
        (xs, info_s), (xc, info_c) = run("cg", A, b, **kw)
        assert info_s == info_c == 0
        assert rel_err(xc, xs) < 1e-9, kw


@modern_scipy
@pytest.mark.parametrize("name", SOLVERS)
def test_invalid_atol_raises_as_scipy(name):
    A = problem(name, 6)
    b = rhs(A.shape[0])
    for atol in (-1.0, None):
        with pytest.raises(ValueError):
            getattr(spla, name)(A, b, atol=atol)
        with pytest.raises(ValueError):
            getattr(cnc, name)(A, b, atol=atol)


@modern_scipy
@pytest.mark.parametrize("name", SOLVERS)
def test_zero_rhs_returns_zero(name):
    A = problem(name, 8)
    b = np.zeros(A.shape[0])
    x0 = np.ones(A.shape[0])
    (xs, info_s), (xc, info_c) = run(name, A, b, x0=x0)
    assert info_s == info_c == 0
    assert np.array_equal(xc, np.zeros_like(b)) and np.array_equal(xs, xc)


@pytest.mark.parametrize("name", SOLVERS)
def test_x0(name):
    A = problem(name)
    b = rhs(A.shape[0])
    exact = reference(A, b)
    # Starting at the answer: done at once.
    calls = []
    x, info = getattr(cnc, name)(A, b, x0=exact, rtol=1e-8,
                                 **({"callback_type": "pr_norm"} if name == "gmres" else {}),
                                 callback=calls.append if name == "gmres" else None)
    assert info == 0 and rel_err(x, exact) < 1e-8
    if name == "gmres":
        assert calls == []  # no iteration ran
    # A (n, 1) x0 and b are accepted as SciPy accepts them; x comes back (n,).
    x2, info2 = getattr(cnc, name)(A, b.reshape(-1, 1), x0=exact.reshape(-1, 1) * 0.5)
    assert info2 == 0 and x2.shape == (A.shape[0],)
    # A good start needs fewer iterations: with maxiter=3, x0 near the answer ends nearer.
    near = exact + 1e-6 * rhs(A.shape[0], seed=5)
    _, (x_near, _) = run(name, A, b, x0=near, maxiter=3, rtol=1e-14)
    _, (x_zero, _) = run(name, A, b, maxiter=3, rtol=1e-14)
    assert relres(A, x_near, b) < relres(A, x_zero, b)
    # x0 is not modified.
    before = near.copy()
    getattr(cnc, name)(A, b, x0=near)
    assert np.array_equal(near, before)


def test_x0_mb():
    A = poisson2d(10)
    b = rhs(A.shape[0])
    M = sp.diags(1.0 / A.diagonal())
    (xs, info_s), (xc, info_c) = run("cg", A, b, x0="Mb", M=M, maxiter=2, rtol=1e-14)
    assert info_s == info_c == 2 and rel_err(xc, xs) < 1e-9
    with pytest.raises(ValueError):
        cnc.cg(A, b, x0="bad")


@pytest.mark.parametrize("name", SOLVERS)
def test_shapes_refused(name):
    A = problem(name, 6)
    n = A.shape[0]
    with pytest.raises(ValueError):
        getattr(cnc, name)(A, np.ones(n + 1))
    with pytest.raises(ValueError):
        getattr(cnc, name)(A, np.ones((n, 2)))
    with pytest.raises(ValueError):
        getattr(cnc, name)(A, np.ones(n), x0=np.ones(n - 1))
    with pytest.raises(ValueError):
        getattr(cnc, name)(sp.random(n, n + 1, density=0.5, format="csr"), np.ones(n))
    with pytest.raises(ValueError):
        getattr(cnc, name)(A, np.ones(n), maxiter=0)


def test_dense_and_other_formats():
    A = poisson2d(8)
    b = rhs(A.shape[0])
    x_ref, _ = cnc.cg(A, b, rtol=1e-10)
    for form in (A.toarray(), A.tocoo(), A.tocsc(), sp.csr_array(A), A.todia()):
        x, info = cnc.cg(form, b, rtol=1e-10)
        assert info == 0 and rel_err(x, x_ref) < 1e-12


def test_float32_in_float32_out_as_scipy():
    A = poisson2d(8).astype(np.float32)
    b = rhs(A.shape[0]).astype(np.float32)
    (xs, _), (xc, info) = run("cg", A, b)
    assert info == 0 and xc.dtype == xs.dtype == np.float32
    xi, _ = cnc.cg(poisson2d(8), np.ones(64, dtype=np.int64))
    assert xi.dtype == np.float64


def test_breakdown_codes_are_negative():
    # CG on an indefinite matrix: pᵀAp <= 0 stops it (SciPy's CG would go on).
    A = sp.diags([1.0, -1.0, 2.0, -3.0]).tocsr()
    x, info = cnc.cg(A, np.ones(4))
    assert info == cnc.INFO_INDEFINITE_MATRIX < 0
    # BiCGSTAB on [[0, 1], [1, 0]] from b = e1: r̃ᵀA p = 0 at once, a breakdown for both.
    A = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
    (_, info_s), (_, info_c) = run("bicgstab", A, np.array([1.0, 0.0]))
    assert info_s < 0 and info_c == cnc.INFO_BREAKDOWN
    # Bad values are cnc's input errors, raised as for cnc.solve.
    B = poisson2d(4).tolil()
    B[3, 3] = np.nan
    with pytest.raises(cnc.CncError, match="not finite"):
        cnc.bicgstab(B.tocsr(), np.ones(16))


# ---- callbacks -------------------------------------------------------------------------------
@needs_iterate
@pytest.mark.parametrize("name", ["cg", "bicgstab"])
def test_callback_gets_each_iterate(name):
    A = problem(name)
    b = rhs(A.shape[0])
    seen_s, seen_c = [], []
    xs, _ = getattr(spla, name)(A, b, callback=lambda xk: seen_s.append(xk.copy()))
    xc, info = getattr(cnc, name)(A, b, callback=lambda xk: seen_c.append(xk))
    assert info == 0
    assert all(isinstance(v, np.ndarray) and v.shape == (A.shape[0],) for v in seen_c)
    assert all(v.dtype == np.float64 for v in seen_c)
    # One call per iteration, the last with the answer.
    assert abs(len(seen_c) - len(seen_s)) <= (0 if name == "cg" else 1)
    assert np.array_equal(seen_c[-1], xc)
    if name == "cg":  # the same method: the same iterates
        for vs, vc in zip(seen_s, seen_c):
            assert rel_err(vc, vs) < 1e-8
    # Residuals decrease overall: the iterates are the solver's, not a constant.
    assert relres(A, seen_c[-1], b) < relres(A, seen_c[0], b)


@needs_iterate
def test_callback_with_maxiter_and_exception():
    A = poisson2d(12)
    b = rhs(A.shape[0])
    seen = []
    _, info = cnc.cg(A, b, maxiter=4, rtol=1e-14, callback=seen.append)
    assert info == 4 and len(seen) == 4

    def boom(xk):
        raise KeyError("from the callback")

    with pytest.raises(KeyError):
        cnc.cg(A, b, callback=boom)


@needs_iterate
@modern_scipy
def test_gmres_callback_x_once_per_cycle():
    A = convection_diffusion(16)
    b = rhs(A.shape[0])
    seen_s, seen_c = [], []
    xs, info_s = spla.gmres(A, b, restart=5, rtol=1e-10, callback=lambda x: seen_s.append(x.copy()),
                            callback_type="x")
    xc, info_c = cnc.gmres(A, b, restart=5, rtol=1e-10, callback=seen_c.append, callback_type="x")
    assert info_s == info_c == 0
    assert all(v.shape == (A.shape[0],) for v in seen_c)
    assert len(seen_c) == len(seen_s)
    assert np.array_equal(seen_c[-1], xc)
    for vs, vc in zip(seen_s, seen_c):
        assert rel_err(vc, vs) < 1e-6


def test_gmres_callback_pr_norm_and_legacy():
    A = convection_diffusion(16)
    b = rhs(A.shape[0])
    res_s, res_c = [], []
    spla.gmres(A, b, restart=10, callback=res_s.append, callback_type="pr_norm")
    _, info = cnc.gmres(A, b, restart=10, callback=res_c.append, callback_type="pr_norm")
    assert info == 0
    assert all(isinstance(r, float) for r in res_c)
    assert len(res_c) == len(res_s)
    np.testing.assert_allclose(res_c, res_s, rtol=1e-6)
    # callback without callback_type: SciPy's 'legacy', with its DeprecationWarning; maxiter then
    # counts inner iterations.
    legacy = []
    with pytest.warns(DeprecationWarning):
        _, info = cnc.gmres(A, b, restart=10, maxiter=7, rtol=1e-14, callback=legacy.append)
    assert info == 7 and len(legacy) == 7
    with pytest.raises(ValueError):
        cnc.gmres(A, b, callback=legacy.append, callback_type="bogus")


def test_callback_without_iterate_support_raises(monkeypatch):
    import cnc._scipy as front

    monkeypatch.setattr(front, "has_function", lambda name: False)
    A = poisson2d(6)
    with pytest.raises(NotImplementedError, match="cncGetCurrentIterate"):
        cnc.cg(A, np.ones(36), callback=lambda xk: None)
    # gmres's residual callbacks need no iterate.
    cnc.gmres(A, np.ones(36), callback=lambda r: None, callback_type="pr_norm")


# ---- M and preconditioner ----------------------------------------------------------------------
@pytest.mark.parametrize("name", SOLVERS)
def test_jacobi_M_is_applied(name):
    A = problem(name)
    d = np.linspace(1.0, 50.0, A.shape[0])
    A = (sp.diags(d) @ A).tocsr() if name != "cg" else (A + sp.diags(d)).tocsr()
    b = rhs(A.shape[0])
    M = sp.diags(1.0 / A.diagonal())
    x_m, info_m = getattr(cnc, name)(A, b, M=M, rtol=1e-10)
    x_j, info_j = getattr(cnc, name)(A, b, preconditioner="jacobi", rtol=1e-10)
    assert info_m == info_j == 0
    assert np.array_equal(x_m, x_j)  # M = diag(1/a_ii) is exactly preconditioner="jacobi"
    # As a dense matrix, too, and the identity is "none".
    x_d, _ = getattr(cnc, name)(A, b, M=np.diag(1.0 / A.diagonal()), rtol=1e-10)
    assert np.array_equal(x_d, x_j)
    x_i, _ = getattr(cnc, name)(A, b, M=sp.identity(A.shape[0]), rtol=1e-10)
    x_n, _ = getattr(cnc, name)(A, b, rtol=1e-10)
    assert np.array_equal(x_i, x_n)
    if name == "cg":
        xs, info_s = spla.cg(A, b, M=M, rtol=1e-10)
        assert info_s == 0 and rel_err(x_m, xs) < 1e-8


@pytest.mark.parametrize("name", SOLVERS)
def test_M_applied_as_given(name):
    """An M cnc has no kernel for (a LinearOperator, a callable, a dense or sparse matrix) is
    applied as given, z = M r: the same preconditioned method as SciPy's with that M."""
    A = problem(name, 8)
    n = A.shape[0]
    b = rhs(n)
    solve = getattr(cnc, name)
    ref = reference(A, b)
    d = 2.0 / A.diagonal()  # a diagonal M that is not Jacobi: not cnc's own
    for M in (spla.LinearOperator((n, n), matvec=lambda v: d * v), lambda v: d * v,
              sp.diags(d), np.diag(d)):
        x, info = solve(A, b, M=M, rtol=1e-10)
        assert info == 0 and rel_err(x, ref) < 1e-7
    if name == "cg":  # the same iterations as SciPy's CG with this M (same method)
        mine, theirs = [], []
        cnc.cg(A, b, M=lambda v: d * v, rtol=1e-10, callback=mine.append)
        spla.cg(A, b, M=spla.LinearOperator((n, n), matvec=lambda v: d * v), rtol=1e-10,
                callback=theirs.append)
        assert abs(len(mine) - len(theirs)) <= 1
    # An exact inverse as M: one iteration.
    inverse = np.linalg.inv(A.toarray())
    its = []
    x, info = solve(A, b, M=inverse, rtol=1e-10, **({"callback": its.append} if name != "gmres"
                                                   else {}))
    assert info == 0 and rel_err(x, ref) < 1e-8
    if name == "cg":
        assert len(its) <= 2
    # An exception in M is the caller's.
    def broken(v):
        raise ArithmeticError("M failed")
    with pytest.raises(ArithmeticError, match="M failed"):
        solve(A, b, M=broken)
    with pytest.raises(ValueError, match="shape"):
        solve(A, b, M=sp.identity(n + 1))
    with pytest.raises(ValueError, match="not both"):
        solve(A, b, M=sp.identity(n), preconditioner="jacobi")


def test_preconditioner_keyword():
    A = shifted_poisson2d(12)
    b = rhs(A.shape[0])
    for pc in ("none", "jacobi", "ssor"):
        x, info = cnc.cg(A, b, preconditioner=pc, rtol=1e-10)
        assert info == 0 and rel_err(x, reference(A, b)) < 1e-7
    with pytest.raises(cnc.CncError):
        cnc.cg(A, b, preconditioner="ilu")


# ---- what cnc refuses ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", SOLVERS)
def test_matrix_free_A(name):
    """A LinearOperator or a callable A: the solution of the assembled system, every call of
    the operator made by cnc's method (counted), errors in it raised as they are."""
    A = problem(name, 6)
    n = A.shape[0]
    b = rhs(n)
    ref = reference(A, b)
    calls = []

    def counted(v):
        calls.append(1)
        return A @ v

    for op in (spla.aslinearoperator(A), spla.LinearOperator((n, n), matvec=counted), counted):
        calls.clear()
        x, info = getattr(cnc, name)(op, b, rtol=1e-10)
        assert info == 0 and rel_err(x, ref) < 1e-7
    calls.clear()
    getattr(cnc, name)(counted, b, rtol=1e-10)
    assert len(calls) >= 2  # the operator is what cnc applied
    # A scaled operator is what is solved: x / 3.
    x3, info = getattr(cnc, name)(lambda v: 3.0 * (A @ v), b, rtol=1e-10)
    assert info == 0 and rel_err(3.0 * x3, ref) < 1e-7
    # Jacobi needs A's diagonal, which an operator does not have: refused, not replaced.
    with pytest.raises(cnc.CncError, match="JACOBI"):
        getattr(cnc, name)(counted, b, preconditioner="jacobi")

    def broken(v):
        raise ZeroDivisionError("operator failed")
    with pytest.raises(ZeroDivisionError, match="operator failed"):
        getattr(cnc, name)(broken, b)
    with pytest.raises(ValueError, match="returned"):
        getattr(cnc, name)(lambda v: v[:2], b)
    with pytest.raises(ValueError, match="square"):
        getattr(cnc, name)(spla.LinearOperator((n, n + 1), matvec=lambda v: v[:n]), b)


def test_matrix_free_context():
    """Context.set_operator + solve_operator: several right-hand sides, the caller's M."""
    A = poisson2d(10)
    n = A.shape[0]
    B = np.stack([rhs(n), np.zeros(n), 2.0 * rhs(n)], axis=1)
    with cnc.Context() as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-10)
        ctx.set_operator(cnc.OPERATOR_MATRIX, lambda v: A @ v)
        ctx.set_operator(cnc.OPERATOR_PRECONDITIONER, lambda v: v / A.diagonal())
        assert ctx.get_integer(cnc.PRECONDITIONER) == cnc.PRECOND_USER
        X, info = ctx.solve_operator(n, B)
        assert info.reason_code == cnc.REASON_CONVERGED
        for j in range(3):
            assert np.linalg.norm(A @ X[:, j] - B[:, j]) <= 2e-10 * max(np.linalg.norm(B[:, j]),
                                                                        1e-300)
        assert np.all(X[:, 1] == 0.0)
        ctx.set_operator(cnc.OPERATOR_PRECONDITIONER, None)
        assert ctx.get_integer(cnc.PRECONDITIONER) == cnc.PRECOND_JACOBI


def test_complex_is_refused():
    A = poisson2d(4).astype(np.complex128)
    with pytest.raises(TypeError, match="complex"):
        cnc.cg(A, np.ones(16))
    with pytest.raises(TypeError, match="complex"):
        cnc.cg(poisson2d(4), np.ones(16) * 1j)


def test_backend_keyword():
    A = poisson2d(8)
    b = rhs(A.shape[0])
    x, info = cnc.cg(A, b, backend="cpu", rtol=1e-10)
    assert info == 0 and rel_err(x, reference(A, b)) < 1e-8


@pytest.mark.skipif(not SCIPY_HAS_RTOL, reason="this SciPy predates 1.12's rtol signatures")
def test_signatures_match_scipy():
    import inspect

    for name in SOLVERS:
        ours = inspect.signature(getattr(cnc, name)).parameters
        theirs = inspect.signature(getattr(spla, name)).parameters
        for pname, p in theirs.items():
            assert pname in ours, (name, pname)
            assert ours[pname].kind == p.kind, (name, pname)
            if p.default is not inspect.Parameter.empty:
                assert ours[pname].default == p.default, (name, pname)


@modern_scipy
@pytest.mark.parametrize("name", SOLVERS)
def test_tolerance_edges_as_scipy(name):
    A = problem(name, 6)
    b = rhs(A.shape[0])
    # rtol = atol = 0: no iterate passes SciPy's test, so the limit is reached.
    (_, info_s), (_, info_c) = run(name, A, b, rtol=0.0, atol=0.0, maxiter=3)
    assert info_s == info_c == 3
    # rtol > 1 (beyond CNC_THRESHOLD's range): x = 0 passes at once, as in SciPy.
    (xs, info_s), (xc, info_c) = run(name, A, b, rtol=2.0)
    assert info_s == info_c == 0 and np.array_equal(xs, xc)
    # ... but a bad x0 does not: cnc then iterates to a threshold just below 1.
    x0 = 100 * rhs(A.shape[0], seed=9)
    xc, info_c = getattr(cnc, name)(A, b, x0=x0, rtol=1.5)
    assert info_c == 0 and np.linalg.norm(b - A @ xc) <= 1.5 * np.linalg.norm(b)
