"""SolveInfo: what a solve reports, read back from the context's statistics right after it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from typing import NamedTuple

from . import constants as _c

REASON_NAMES = {
    _c.REASON_NONE: "none",
    _c.REASON_CONVERGED: "converged",
    _c.REASON_MAX_ITERATIONS: "max iterations",
    _c.REASON_INDEFINITE_MATRIX: "indefinite matrix",
    _c.REASON_INDEFINITE_PRECOND: "indefinite preconditioner",
    _c.REASON_NOT_FINITE: "not finite",
    _c.REASON_STOPPED: "stopped",
    _c.REASON_STAGNATED: "stagnated",
    _c.REASON_BREAKDOWN: "breakdown",
}

SOLVER_NAMES = {
    _c.CG: "cg",
    _c.BICGSTAB: "bicgstab",
    _c.GMRES: "gmres",
    _c.CHOLMOD: "cholmod",
    _c.SUPERLU: "superlu",
    _c.CUDSS: "cudss",
    _c.BLOCK_CG: "block_cg",
}


class Times(NamedTuple):
    """Seconds spent in each phase of the last solve (cncGetDoublev CNC_*_TIME)."""

    assembly: float
    conversion: float
    upload: float
    solve: float
    elapsed: float


@dataclass(frozen=True)
class SolveInfo:
    """Outcome of one solve.

    reason        cnc's text for the outcome (CNC_REASON_NAME): "converged", "max iterations", ...
    reason_code   the CNC_REASON_* value (compare with cnc.REASON_CONVERGED, ...)
    iterations    iterations used (max over right-hand sides)
    residual      final recursive ||r||/||b|| (max over right-hand sides)
    true_residual final ||b - A x||/||b|| computed in double (max over right-hand sides)
    solver        the method that ran: "cg", "bicgstab", "gmres", "block_cg", "cholmod" or
                  "superlu"
    backend, device, format   what ran: e.g. "cpu", the device name, "csr"
    times         Times(assembly, conversion, upload, solve, elapsed) in seconds
    nnz           stored nonzeros of the assembled matrix
    ordering      "natural" or "rcm": the order the unknowns were solved in (x is in yours)
    long_rows     rows whose SpMV work was cut into pieces (far longer than the average)
    choice        why: the format, the long rows and the ordering (CNC_CHOICE_REASON)
    """

    reason: str
    reason_code: int
    iterations: int
    residual: float
    true_residual: float
    true_residual_min: float
    solver: str
    backend: str
    device: str
    format: str
    times: Times
    nnz: int
    gflops: float
    bytes_per_iteration: int
    zero_diagonals: int
    block_fill_ratio: float
    ordering: str = "natural"
    long_rows: int = 0
    choice: str = ""

    @property
    def converged(self) -> bool:
        return self.reason_code == _c.REASON_CONVERGED


def read(ctx: Any) -> "SolveInfo":
    """SolveInfo from the statistics of `ctx` (a cnc.Context) after a solve."""
    code = ctx.get_integer(_c.REASON)
    return SolveInfo(
        reason=ctx.get_string(_c.REASON_NAME) or REASON_NAMES.get(code, str(code)),
        reason_code=code,
        iterations=ctx.get_integer(_c.USED_ITERATIONS),
        residual=ctx.get_double(_c.ERROR),
        true_residual=ctx.get_double(_c.TRUE_ERROR),
        true_residual_min=ctx.get_double(_c.TRUE_ERROR_MIN),
        solver=SOLVER_NAMES.get(ctx.get_integer(_c.SOLVER_USED), ""),
        backend=ctx.get_string(_c.BACKEND_NAME),
        device=ctx.get_string(_c.DEVICE_NAME),
        format=ctx.get_string(_c.FORMAT_NAME),
        times=Times(
            assembly=ctx.get_double(_c.ASSEMBLY_TIME),
            conversion=ctx.get_double(_c.CONVERSION_TIME),
            upload=ctx.get_double(_c.UPLOAD_TIME),
            solve=ctx.get_double(_c.SOLVE_TIME),
            elapsed=ctx.get_double(_c.ELAPSED_TIME),
        ),
        nnz=ctx.get_integer64(_c.NNZ),
        gflops=ctx.get_double(_c.GFLOPS),
        bytes_per_iteration=ctx.get_integer64(_c.BYTES_PER_ITERATION),
        zero_diagonals=ctx.get_integer(_c.ZERO_DIAGONALS),
        block_fill_ratio=ctx.get_double(_c.BLOCK_FILL_RATIO),
        ordering=ctx.get_string(_c.ORDERING_NAME),
        long_rows=ctx.get_integer64(_c.LONG_ROWS),
        choice=ctx.get_string(_c.CHOICE_REASON),
    )
