"""The state-machine API (cnc.Context) against numpy/scipy references."""

import threading

import numpy as np
import pytest
from conftest import poisson2d, reference, rel_err, sp

import cnc


def tridiagonal(n):
    return sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n)).tocsr()


def test_plain_assembly_and_states():
    n = 50
    rng = np.random.default_rng(0)
    b = rng.standard_normal(n)
    with cnc.Context(nb_variables=n) as ctx:
        assert ctx.state == cnc.STATE_INITIAL
        ctx.set_parameter(cnc.THRESHOLD, 1e-12)
        ctx.begin(cnc.SYSTEM)
        assert ctx.state == cnc.STATE_SYSTEM
        ctx.begin(cnc.MATRIX)
        assert ctx.state == cnc.STATE_MATRIX
        for i in range(n):
            ctx.add_ij(i, i, 2.0)
            if i > 0:
                ctx.add_ij(i, i - 1, -1.0)
            if i + 1 < n:
                ctx.add_ij(i, i + 1, -0.5)  # added in two halves: duplicates are summed
                ctx.add_ij(i, i + 1, -0.5)
            ctx.add_rhs(i, b[i])
        ctx.end(cnc.MATRIX)
        assert ctx.state == cnc.STATE_MATRIX_CONSTRUCTED
        ctx.end(cnc.SYSTEM)
        assert ctx.state == cnc.STATE_SYSTEM_CONSTRUCTED
        info = ctx.solve()
        assert ctx.state == cnc.STATE_SOLVED
        assert info.converged
        assert info.nnz == 3 * n - 2
        x = ctx.get_variables()
    assert rel_err(x, reference(tridiagonal(n), b)) < 1e-9


def test_block_helpers_and_row_wise_plain_mode():
    # In plain mode the k-th row is the equation of variable k.
    A = poisson2d(5)
    n = A.shape[0]
    b = np.arange(1.0, n + 1)
    with cnc.Context(nb_variables=n) as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-12)
        with ctx.system(), ctx.matrix():
            for i in range(n):
                with ctx.row():
                    for p in range(A.indptr[i], A.indptr[i + 1]):
                        ctx.coefficient(A.indices[p], A.data[p])
                    ctx.right_hand_side(b[i])
        ctx.solve()
        x = ctx.get_variables()
    assert rel_err(x, reference(A, b)) < 1e-9


def test_least_squares_fit():
    # Noisy samples of y = 0.5 - 2 t + 3 t^2: compare the fit with numpy's lstsq.
    rng = np.random.default_rng(4)
    t = np.linspace(-1.0, 2.0, 40)
    y = 0.5 - 2.0 * t + 3.0 * t**2 + 0.05 * rng.standard_normal(t.size)
    M = np.column_stack([np.ones_like(t), t, t**2])
    expected = np.linalg.lstsq(M, y, rcond=None)[0]
    with cnc.Context(nb_variables=3, least_squares=True) as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-13)
        with ctx.system(), ctx.matrix():
            for k in range(t.size):
                with ctx.row():
                    for j in range(3):
                        ctx.coefficient(j, M[k, j])
                    ctx.right_hand_side(y[k])
        info = ctx.solve()
        got = ctx.get_variables()
    assert info.converged
    assert np.allclose(got, expected, rtol=1e-8, atol=1e-10)


def test_least_squares_with_locked_variable():
    # The header's example 2: y = a + b t with a locked at 1; exact data y = 1 + 3 t.
    t = np.arange(10.0)
    y = 1.0 + 3.0 * t + np.where(t % 2 == 0, 0.1, -0.1)  # small alternating misfit
    expected_b = np.linalg.lstsq(t.reshape(-1, 1), y - 1.0, rcond=None)[0][0]
    with cnc.Context(nb_variables=2, least_squares=True) as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-13)
        ctx.begin(cnc.SYSTEM)
        ctx.set_variable(0, 1.0)
        ctx.lock(0)
        assert ctx.is_locked(0) and not ctx.is_locked(1)
        with ctx.matrix():
            for k in range(t.size):
                with ctx.row():
                    ctx.coefficient(0, 1.0)
                    ctx.coefficient(1, t[k])
                    ctx.right_hand_side(y[k])
        ctx.end(cnc.SYSTEM)
        ctx.solve()
        assert ctx.get_variable(0) == 1.0  # locked: untouched
        assert ctx.get_variable(1) == pytest.approx(expected_b, rel=1e-9)


def test_locked_variables_in_plain_mode_are_dirichlet_conditions():
    n = 30
    A = tridiagonal(n)
    rng = np.random.default_rng(6)
    b = rng.standard_normal(n)
    locked = {0: 1.5, 17: -2.0, n - 1: 0.25}
    free = np.array([i for i in range(n) if i not in locked])
    L = np.array(sorted(locked))
    xl = np.array([locked[i] for i in L])
    Af = A[free][:, free]
    rhs = b[free] - A[free][:, L] @ xl  # coefficients on locked variables move to the rhs
    expected = reference(Af, rhs)
    with cnc.Context(nb_variables=n) as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-12)
        ctx.begin(cnc.SYSTEM)
        for i, v in locked.items():
            ctx.set_variable(i, v)
            ctx.lock(i)
        with ctx.matrix():  # the full matrix: rows of locked variables are dropped
            for i in range(n):
                for p in range(A.indptr[i], A.indptr[i + 1]):
                    ctx.add_ij(i, A.indices[p], A.data[p])
                ctx.add_rhs(i, b[i])
        ctx.end(cnc.SYSTEM)
        ctx.solve()
        x = ctx.get_variables()
    assert np.array_equal(x[L], xl)
    assert rel_err(x[free], expected) < 1e-9


def test_several_systems():
    n = 40
    A = tridiagonal(n) + sp.identity(n)
    B = np.random.default_rng(8).standard_normal((n, 2))
    with cnc.Context(nb_variables=n, nb_systems=2) as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-12)
        with ctx.system(), ctx.matrix():
            for i in range(n):
                for p in range(A.indptr[i], A.indptr[i + 1]):
                    ctx.add_ij(i, A.indices[p], A.data[p])
                ctx.add_rhs(i, B[i, 0])
                ctx.add_rhs(i, B[i, 1], k=1)
        ctx.solve()
        X = np.column_stack([ctx.get_variables(0), ctx.get_variables(1)])
    assert rel_err(X, reference(A.tocsr(), B)) < 1e-9


def test_new_matrix_after_solve():
    n = 20
    with cnc.Context(nb_variables=n) as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-12)
        for scale in (1.0, 3.0):
            if ctx.state == cnc.STATE_INITIAL:
                ctx.begin(cnc.SYSTEM)
            ctx.begin(cnc.MATRIX)
            for i in range(n):
                ctx.add_ij(i, i, 2.0 * scale)
                if i > 0:
                    ctx.add_ij(i, i - 1, -scale)
                if i + 1 < n:
                    ctx.add_ij(i, i + 1, -scale)
                ctx.add_rhs(i, 1.0)
            ctx.end(cnc.MATRIX)
            if ctx.state == cnc.STATE_MATRIX_CONSTRUCTED:
                ctx.end(cnc.SYSTEM)
            ctx.solve()
            x = ctx.get_variables()
            assert rel_err(x, reference(tridiagonal(n) * scale, np.ones(n))) < 1e-9


def test_parameters_read_back():
    with cnc.Context() as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-9)
        ctx.set_parameter(cnc.MAX_ITERATIONS, 1234)
        ctx.set_parameter(cnc.PRECISION, cnc.MIXED)
        ctx.set_parameter(cnc.NNZ_HINT, 3 * 2**31)  # beyond 32 bits: goes through ...i64
        assert ctx.get_double(cnc.THRESHOLD) == 1e-9
        assert ctx.get_integer(cnc.MAX_ITERATIONS) == 1234
        assert ctx.get_integer(cnc.PRECISION) == cnc.MIXED
        assert ctx.get_integer64(cnc.NNZ_HINT) == 3 * 2**31
        assert not ctx.is_enabled(cnc.VERBOSE)
        ctx.enable(cnc.VERBOSE)
        assert ctx.is_enabled(cnc.VERBOSE)
        ctx.disable(cnc.VERBOSE)
        assert not ctx.is_enabled(cnc.VERBOSE)
        assert ctx.get_string(cnc.VERSION_STRING) == cnc.version_string()
        assert ctx.get_integer(cnc.REASON) == cnc.REASON_NONE


def test_state_errors_and_recovery():
    n = 4
    with cnc.Context(nb_variables=n) as ctx:
        with pytest.raises(cnc.CncError) as e:
            ctx.add_ij(0, 0, 1.0)  # INITIAL state
        assert e.value.status == cnc.ERR_STATE and "cncAddIJCoefficient" in e.value.message
        ctx.begin(cnc.SYSTEM)
        with pytest.raises(cnc.CncError) as e:
            ctx.set_parameter(cnc.NB_VARIABLES, 5)  # structural: INITIAL only
        assert e.value.status == cnc.ERR_STATE
        ctx.begin(cnc.MATRIX)
        with pytest.raises(cnc.CncError) as e:
            ctx.lock(0)  # SYSTEM state only
        assert e.value.status == cnc.ERR_STATE
        with pytest.raises(cnc.CncError) as e:
            ctx.coefficient(0, 1.0)  # outside ROW
        assert e.value.status == cnc.ERR_STATE
        with pytest.raises(cnc.CncError) as e:
            ctx.add_ij(n, 0, 1.0)
        assert e.value.status == cnc.ERR_INDEX_OUT_OF_RANGE
        with pytest.raises(cnc.CncError) as e:
            ctx.add_ij(-1, 0, 1.0)  # caught before the C call (CNCuint cannot be negative)
        assert e.value.status == cnc.ERR_INDEX_OUT_OF_RANGE
        with pytest.raises(cnc.CncError) as e:
            ctx.add_ij(1, 1, float("nan"))
        assert e.value.status == cnc.ERR_NOT_FINITE
        assert "cncAddIJCoefficient" in e.value.message and "nan" in e.value.message.lower()
        assert ctx.get_error() == cnc.OK  # raised errors are cleared: the next one shows
        # The context is still usable: finish a diagonal system and solve it.
        for i in range(n):
            ctx.add_ij(i, i, 2.0)
            ctx.add_rhs(i, 4.0)
        ctx.end(cnc.MATRIX)
        ctx.end(cnc.SYSTEM)
        ctx.solve()
        assert np.allclose(ctx.get_variables(), 2.0)
        with pytest.raises(cnc.CncError) as e:
            ctx.get_variable(n)
        assert e.value.status == cnc.ERR_INDEX_OUT_OF_RANGE
        with pytest.raises(cnc.CncError) as e:
            ctx.get_integer(0x7777)
        assert e.value.status == cnc.ERR_INVALID_ENUM


def test_closed_context_raises():
    ctx = cnc.Context()
    ctx.close()
    ctx.close()  # idempotent
    with pytest.raises(cnc.CncError) as e:
        ctx.begin(cnc.SYSTEM)
    assert e.value.status == cnc.ERR_NO_CONTEXT


def test_two_contexts_interleaved_on_one_thread():
    n = 15
    A1, A2 = tridiagonal(n), tridiagonal(n) * 2.0 + sp.identity(n)
    with cnc.Context(nb_variables=n) as c1, cnc.Context(nb_variables=n) as c2:
        for c in (c1, c2):
            c.set_parameter(cnc.THRESHOLD, 1e-12)
            c.begin(cnc.SYSTEM)
            c.begin(cnc.MATRIX)
        for i in range(n):  # alternate calls: each must land in its own context
            for c, A in ((c1, A1), (c2, A2.tocsr())):
                for p in range(A.indptr[i], A.indptr[i + 1]):
                    c.add_ij(i, A.indices[p], A.data[p])
                c.add_rhs(i, 1.0)
        for c in (c1, c2):
            c.end(cnc.MATRIX)
            c.end(cnc.SYSTEM)
            c.solve()
        assert rel_err(c1.get_variables(), reference(A1, np.ones(n))) < 1e-9
        assert rel_err(c2.get_variables(), reference(A2, np.ones(n))) < 1e-9


def test_context_used_from_another_thread():
    n = 10
    with cnc.Context(nb_variables=n) as ctx:
        ctx.begin(cnc.SYSTEM)
        ctx.begin(cnc.MATRIX)

        def fill():
            for i in range(n):
                ctx.add_ij(i, i, 4.0)
                ctx.add_rhs(i, 2.0)

        t = threading.Thread(target=fill)
        t.start()
        t.join()
        ctx.end(cnc.MATRIX)
        ctx.end(cnc.SYSTEM)
        ctx.solve()
        assert np.allclose(ctx.get_variables(), 0.5)


def test_solve_matrix_reuses_context():
    A = poisson2d(10)
    with cnc.Context() as ctx:
        ctx.set_parameter(cnc.THRESHOLD, 1e-11)
        for seed in range(2):
            b = np.random.default_rng(seed).standard_normal(A.shape[0])
            x, info = ctx.solve_matrix(A, b)
            assert info.converged and rel_err(x, reference(A, b)) < 1e-8


def test_progress_callback_and_stop():
    A = poisson2d(20)
    b = np.ones(A.shape[0])
    seen = []

    def progress(iteration, residual):
        seen.append((iteration, residual))
        return iteration >= 5

    with cnc.Context() as ctx:
        ctx.set_parameter(cnc.BACKEND, cnc.BACKEND_CPU)  # CPU: a check every iteration
        ctx.set_progress_callback(progress)
        _, info = ctx.solve_matrix(A, b)
        assert info.reason_code == cnc.REASON_STOPPED and not info.converged
        assert seen and seen[-1][0] >= 5 and info.iterations == seen[-1][0]
        assert all(np.isfinite(r) and r > 0 for _, r in seen)
        ctx.set_progress_callback(None)
        _, info = ctx.solve_matrix(A, b)
        assert info.converged


def test_progress_callback_exception_propagates():
    def progress(iteration, residual):
        raise KeyError("from the callback")

    with cnc.Context() as ctx:
        ctx.set_progress_callback(progress)
        with pytest.raises(KeyError):
            ctx.solve_matrix(poisson2d(10), np.ones(100))


def test_log_callback_receives_messages():
    messages = []
    with cnc.Context() as ctx:
        ctx.set_log_callback(lambda level, text: messages.append((level, text)))
        ctx.enable(cnc.VERBOSE)
        ctx.solve_matrix(poisson2d(8), np.ones(64))
        assert messages, "verbose solve logged nothing"
        assert all(level in (cnc.LOG_ERROR, cnc.LOG_WARNING, cnc.LOG_INFO) for level, _ in messages)
        assert all(isinstance(text, str) and text for _, text in messages)
        ctx.set_log_callback(None)
