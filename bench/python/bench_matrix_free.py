"""Matrix-free solves and the caller's preconditioner from Python, against SciPy in the same run.

    python3 bench/python/bench_matrix_free.py [--reps 5] [--m 700]

Three cases, each the same method with the same operators on both sides (so the same
iterations), timed from the call to x in memory, median of --reps runs:
  1. cg with A a LinearOperator (the 5-point Laplacian on an m x m grid, matvec by scipy's CSR);
  2. bicgstab with A a LinearOperator (a convection-diffusion 5-point stencil) and no M;
  3. bicgstab with that A as a scipy CSR and M = ILU's solve (scipy.sparse.linalg.spilu),
     applied as given.
cnc runs the method over host vectors on every core and calls the Python operators through
ctypes; SciPy runs its own method in NumPy. The operators' cost is the same on both sides.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import cnc


def laplacian(m: int, conv: float = 0.0) -> sp.csr_matrix:
    t = sp.diags([-1.0 - conv, 2.0, -1.0 + conv], [-1, 0, 1], shape=(m, m))
    return (sp.kron(sp.identity(m), t) + sp.kron(t, sp.identity(m))).tocsr()


def timed(fn, reps):
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--m", type=int, default=500)
    args = ap.parse_args()
    m, reps = args.m, args.reps
    rtol = 1e-8
    rows = []

    A = laplacian(m)
    n = A.shape[0]
    b = np.random.default_rng(1).standard_normal(n)
    calls = [0]  # operator applications: the same work on both sides, no callback overhead

    def counted(op):
        def apply(v):
            calls[0] += 1
            return op(v)
        return spla.LinearOperator((n, n), matvec=apply)

    def run(name, solve_cnc, solve_scipy, A_ref):
        calls[0] = 0
        tc, (xc, ic) = timed(solve_cnc, reps)
        cc, calls[0] = calls[0] // reps, 0
        ts, (xs, is_) = timed(solve_scipy, reps)
        cs = calls[0] // reps
        res = lambda x: np.linalg.norm(b - A_ref @ x) / np.linalg.norm(b)  # noqa: E731
        rows.append((name, n, tc, cc, res(xc), ic, ts, cs, res(xs), is_))
        print(f"{name}: cnc {tc:.3f} s, scipy {ts:.3f} s", flush=True)

    opa = counted(lambda v: A @ v)
    run("cg, A LinearOperator",
        lambda: cnc.cg(opa, b, rtol=rtol, maxiter=20000),
        lambda: spla.cg(opa, b, rtol=rtol, maxiter=20000), A)

    C = laplacian(m, conv=0.3)
    opc = counted(lambda v: C @ v)
    run("bicgstab, A LinearOperator",
        lambda: cnc.bicgstab(opc, b, rtol=rtol, maxiter=5000),
        lambda: spla.bicgstab(opc, b, rtol=rtol, maxiter=5000), C)

    ilu = spla.spilu(C.tocsc(), drop_tol=1e-4, fill_factor=5)
    M = counted(ilu.solve)
    run("bicgstab, A CSR, M = ILU",
        lambda: cnc.bicgstab(C, b, rtol=rtol, M=M, maxiter=5000),
        lambda: spla.bicgstab(C, b, rtol=rtol, M=M, maxiter=5000), C)

    print(f"median of {reps} runs, rtol {rtol}; cnc {cnc.__version__}")
    print("| case | n | cnc s | operator calls | true res | info | scipy s | operator calls | "
          "true res | info | cnc / scipy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, nn, tc, itc, rc, ic, ts, its, rs, is_) in rows:
        print(f"| {name} | {nn} | {tc:.3f} | {itc} | {rc:.1e} | {ic} | {ts:.3f} | {its} | "
              f"{rs:.1e} | {is_} | **{tc / ts:.2f}** |")


if __name__ == "__main__":
    main()
