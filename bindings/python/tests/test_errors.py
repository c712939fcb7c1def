"""Bad input raises cnc.CncError with the right status and a message naming the problem."""

import numpy as np
import pytest
from conftest import poisson2d, sp

import cnc


@pytest.fixture
def A():
    return poisson2d(6)


@pytest.fixture
def b(A):
    return np.ones(A.shape[0])


def raises(status, fn, *args, **kwargs):
    with pytest.raises(cnc.CncError) as e:
        fn(*args, **kwargs)
    err = e.value
    assert err.status == status, (err.status_name, err.message)
    assert err.status_name == cnc.status_name(status)
    assert err.message, "CncError without a message"
    assert err.status_name in str(err)
    return err


def test_non_square_sparse(b):
    err = raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, sp.random(36, 30, density=0.1, format="csr"), b)
    assert "square" in err.message


def test_non_square_dense():
    raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, np.ones((3, 4)), np.ones(3))


def test_one_dimensional_matrix():
    raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, np.ones(4), np.ones(4))


def test_rhs_size_mismatch(A):
    raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, A, np.ones(A.shape[0] + 1))
    raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, A, np.ones((A.shape[0], 2, 2)))


def test_x0_size_mismatch(A, b):
    raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, A, b, x0=np.zeros(A.shape[0] - 1))
    n = A.shape[0]
    raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, A, np.ones((n, 2)), x0=np.zeros((n, 3)))


def test_nan_in_matrix_is_found_by_cnc(A, b):
    A = A.copy()
    A.data[5] = np.nan
    err = raises(cnc.ERR_NOT_FINITE, cnc.solve, A, b)
    assert "cncSolveCSR" in err.message  # the message comes from cnc and names the call


def test_inf_in_matrix(A, b):
    A = A.copy()
    A.data[0] = np.inf
    raises(cnc.ERR_NOT_FINITE, cnc.solve, A, b)


def test_nan_in_rhs(A, b):
    b = b.copy()
    b[3] = np.nan
    err = raises(cnc.ERR_NOT_FINITE, cnc.solve, A, b)
    assert "cncSolveCSR" in err.message


def test_nan_in_initial_guess(A, b):
    x0 = np.zeros_like(b)
    x0[1] = np.nan
    raises(cnc.ERR_NOT_FINITE, cnc.solve, A, b, x0=x0)


def test_nan_in_dense_matrix():
    D = np.eye(3)
    D[1, 2] = np.nan
    raises(cnc.ERR_NOT_FINITE, cnc.solve, D, np.ones(3))


def test_column_index_out_of_range(b):
    n = b.size
    bad = sp.csr_matrix((np.ones(n), np.arange(n), np.arange(n + 1)), shape=(n, n))
    bad.indices[2] = n + 5  # scipy does not re-check after construction
    raises(cnc.ERR_INDEX_OUT_OF_RANGE, cnc.solve, bad, b)


@pytest.mark.parametrize(
    "option, value",
    [("precision", "quad"), ("backend", "tpu"), ("format", "ell"), ("preconditioner", "ilu")],
)
def test_unknown_option_strings(A, b, option, value):
    err = raises(cnc.ERR_INVALID_ENUM, cnc.solve, A, b, **{option: value})
    assert repr(value) in err.message


def test_wrong_enum_constant_is_rejected_by_cnc(A, b):
    # An integer is passed through to cnc as is: cnc itself must refuse a value of another enum.
    err = raises(cnc.ERR_INVALID_ENUM, cnc.solve, A, b, precision=cnc.FORMAT_CSR)
    assert err.message.startswith("cnc")


@pytest.mark.parametrize("tol", [0.0, -1e-6])
def test_bad_tolerance(A, b, tol):
    err = raises(cnc.ERR_INVALID_VALUE, cnc.solve, A, b, tol=tol)
    assert err.message.startswith("cnc")  # found by cnc: its message names the call


@pytest.mark.parametrize("tol", [float("nan"), float("inf")])
def test_non_finite_tolerance(A, b, tol):
    with pytest.raises(cnc.CncError) as e:
        cnc.solve(A, b, tol=tol)
    assert e.value.status in (cnc.ERR_INVALID_VALUE, cnc.ERR_NOT_FINITE)


@pytest.mark.parametrize("max_iter", [0, -5])
def test_bad_max_iter(A, b, max_iter):
    raises(cnc.ERR_INVALID_VALUE, cnc.solve, A, b, max_iter=max_iter)


def test_bad_threads(A, b):
    raises(cnc.ERR_INVALID_VALUE, cnc.solve, A, b, threads=-1)


def test_unavailable_backend(A, b):
    missing = [name for name in ("cuda", "opencl") if not cnc.backend_available(name)]
    if not missing:
        pytest.skip("SKIP: every backend is available here, none to ask for in vain")
    err = raises(cnc.ERR_BACKEND_UNAVAILABLE, cnc.solve, A, b, backend=missing[0])
    assert err.message


def test_cpu_backend_is_always_available():
    assert cnc.backend_available("cpu")


def test_bad_complex_input_is_refused(A, b):
    # Complex systems are solved (test_complex.py); what CG cannot take, and NaN, are refused.
    Z = A.astype(np.complex128).tolil()
    Z[0, 1] = -1 + 0.5j  # a_10 stays -1: not Hermitian
    err = raises(cnc.ERR_INVALID_VALUE, cnc.solve, Z.tocsr(), b)
    assert "Hermitian" in err.message
    Z = A.astype(np.complex128).tolil()
    Z[2, 2] = 4 + 1j  # a complex diagonal
    err = raises(cnc.ERR_INVALID_VALUE, cnc.solve, Z.tocsr(), b)
    assert "not real" in err.message
    bz = b.astype(np.complex128)
    bz[3] = complex(1.0, np.nan)
    err = raises(cnc.ERR_NOT_FINITE, cnc.solve, A, bz)
    assert "imaginary" in err.message


def test_zero_right_hand_sides(A):
    # k = 0 columns reaches cnc as nrhs = 0, which it must refuse.
    err = raises(cnc.ERR_INVALID_VALUE, cnc.solve, A, np.ones((A.shape[0], 0)))
    assert "cncSolveCSR" in err.message


def _identity_csr(n):
    return sp.csr_matrix((np.full(n, 2.0), np.arange(n), np.arange(n + 1)), shape=(n, n))


def test_indptr_past_the_arrays_is_refused_before_cnc_reads(b):
    # scipy keeps a CSR whose indptr[-1] exceeds its arrays; cncSolveCSR would read past them.
    bad = _identity_csr(b.size)
    bad.indptr[-1] = b.size + 1000
    err = raises(cnc.ERR_SIZE_MISMATCH, cnc.solve, bad, b)
    assert "indptr[-1]" in err.message


def test_decreasing_indptr_is_refused(b):
    bad = _identity_csr(b.size)
    bad.indptr[3] = 0
    err = raises(cnc.ERR_INVALID_VALUE, cnc.solve, bad, b)
    assert "decreases" in err.message


def test_int64_column_index_past_32_bits_does_not_wrap(b):
    # 2**32 + 1 would become column 1 after a cast to uint32: a different, valid matrix.
    n = b.size
    bad = sp.csr_matrix(
        (np.full(n, 2.0), np.arange(n, dtype=np.int64), np.arange(n + 1, dtype=np.int64)),
        shape=(n, n),
    )
    bad.indices = bad.indices.astype(np.int64)
    bad.indices[1] = 2**32 + 1
    err = raises(cnc.ERR_INDEX_OUT_OF_RANGE, cnc.solve, bad, b)
    assert str(2**32 + 1) in err.message


def test_negative_column_index_is_refused(b):
    bad = _identity_csr(b.size)
    bad.indices[4] = -3
    raises(cnc.ERR_INDEX_OUT_OF_RANGE, cnc.solve, bad, b)


def test_string_values_are_refused(A, b):
    # numpy parses "2.0" into 2.0: a string array must not be solved as numbers.
    strings = A.copy()
    strings.data = strings.data.astype(str)
    raises(cnc.ERR_INVALID_VALUE, cnc.solve, strings, b)
    raises(cnc.ERR_INVALID_VALUE, cnc.solve, A, b.astype(str))


def test_float_indices_are_refused(b):
    bad = _identity_csr(b.size)
    bad.indices = bad.indices.astype(np.float64)
    raises(cnc.ERR_INVALID_VALUE, cnc.solve, bad, b)
