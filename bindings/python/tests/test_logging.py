"""cnc's log messages reach Python's logging, logger "cnc", at the matching levels."""

import logging

import numpy as np
import pytest
from conftest import poisson2d, sp

import cnc


def zero_diagonal_matrix():
    A = (poisson2d(6) + sp.diags(np.ones(36))).tolil()
    A[5, 5] = 0.0
    return A.tocsr()


def test_warning_reaches_logger(caplog):
    caplog.set_level(logging.WARNING, logger="cnc")
    x, info = cnc.solve(zero_diagonal_matrix(), np.ones(36), solver="bicgstab")
    records = [r for r in caplog.records if r.name == "cnc"]
    assert any(r.levelno == logging.WARNING and "diagonal" in r.getMessage() for r in records), \
        [r.getMessage() for r in records]


def test_ssor_warning_reaches_logger(caplog, monkeypatch):
    """SSOR runs on the CPU; a GPU backend asked through CNC_BACKEND is ignored, and said so."""
    monkeypatch.setenv("CNC_BACKEND", "opencl")
    caplog.set_level(logging.WARNING, logger="cnc")
    _, info = cnc.solve(poisson2d(8), np.ones(64), preconditioner="ssor")
    assert info.converged and info.backend == "cpu"
    assert any("SSOR" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records if r.name == "cnc")


def test_warning_printed_without_logging_configured():
    """No handler configured: Python's last-resort handler prints cnc's warnings on stderr."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, scipy.sparse as sp, cnc\n"
        "A = (sp.diags([-1.0, 3.0, -1.0], [-1, 0, 1], shape=(8, 8))).tolil(); A[2, 2] = 0\n"
        "cnc.solve(A.tocsr(), np.ones(8), solver='gmres')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "diagonal" in out.stderr


def test_info_and_verbose_at_info_level(caplog):
    caplog.set_level(logging.INFO, logger="cnc")
    with cnc.Context() as ctx:
        ctx.enable(cnc.VERBOSE)
        ctx.solve_matrix(poisson2d(8), np.ones(64))
    infos = [r for r in caplog.records if r.name == "cnc" and r.levelno == logging.INFO]
    assert any("solving n=64" in r.getMessage() for r in infos)


def test_errors_raise_and_log_at_debug_only(caplog):
    caplog.set_level(logging.DEBUG, logger="cnc")
    with pytest.raises(cnc.CncError) as err:
        with cnc.Context() as ctx:
            ctx.set_parameter(cnc.THRESHOLD, -1.0)
    records = [r for r in caplog.records if r.name == "cnc"]
    assert records and all(r.levelno == logging.DEBUG for r in records)
    assert any(err.value.message in r.getMessage() for r in records)


def test_user_log_callback_replaces_and_none_restores(caplog):
    caplog.set_level(logging.INFO, logger="cnc")
    mine = []
    with cnc.Context() as ctx:
        ctx.set_log_callback(lambda level, text: mine.append((level, text)))
        ctx.enable(cnc.VERBOSE)
        ctx.solve_matrix(poisson2d(6), np.ones(36))
        assert mine and not [r for r in caplog.records if r.name == "cnc"]
        ctx.set_log_callback(None)
        ctx.solve_matrix(poisson2d(6), np.ones(36))
        assert [r for r in caplog.records if r.name == "cnc"]
