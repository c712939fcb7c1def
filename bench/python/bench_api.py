"""End to end from Python, as a user runs it: a scipy CSR matrix and a numpy b in, x out.

cnc.solve(A, b) against, in the same run, SciPy's cg with a Jacobi preconditioner (CPU) and,
when CuPy is importable, cupyx.scipy.sparse.linalg.cg with Jacobi on the GPU, timed from the
host matrix (CuPy's transfer of A and b included) to x back in host memory. A second table
starts from CuPy arrays already on the GPU (cnc.solve takes them without a host copy) and leaves x
there. All to ||r|| <= tol ||b|| from x = 0; the true residual of each answer is computed here.

    python3 bench/python/bench_api.py [--sizes 32,64,128] [--reps 3] [--tol 1e-8] [--backend auto]
                                      [--scipy-max-n N]
Needs libcnc.so (CNC_LIBRARY=build/libcnc.so) and bindings/python on the path.
"""
import argparse
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import cnc


def poisson3d(m):
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m), format="csr")
    eye = sp.identity(m, format="csr")
    a = sp.kron(sp.kron(one, eye), eye) + sp.kron(sp.kron(eye, one), eye) + sp.kron(sp.kron(eye, eye), one)
    a = a.tocsr()
    a.sort_indices()
    return a


def rel_residual(a, x, b):
    return float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))


def timed(fn, reps):
    fn()  # warm-up
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="32,64,100")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--scipy-max-n", type=int, default=2_200_000,
                    help="skip SciPy's cg (one thread) above this many unknowns")
    o = ap.parse_args()
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cspla
    except Exception as e:  # noqa: BLE001 - any import failure means "no CuPy here"
        cupy = None
        print(f"# CuPy not available ({type(e).__name__}): its column is left out")
    print(f"# cnc {cnc.version_string()} python end to end, tol {o.tol}, medians of {o.reps}")
    print("| problem | n | cnc backend/format | cnc s | its | true res | scipy cg s | its | true res | cnc / scipy |"
          + (" cupy cg s | true res | cnc / cupy |" if cupy else ""))
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if cupy else ""))
    dev_rows = []
    for m in (int(s) for s in o.sizes.split(",")):
        a = poisson3d(m)
        n = a.shape[0]
        b = 1.0 + 0.5 * np.sin(0.001 * np.arange(n))
        tc, (x, info) = timed(lambda: cnc.solve(a, b, tol=o.tol, backend=o.backend, max_iter=100000), o.reps)
        dinv = 1.0 / a.diagonal()
        its = [0]

        def scipy_solve():
            its[0] = 0
            m_op = spla.LinearOperator(a.shape, matvec=lambda v: dinv * v)

            def count(_):
                its[0] += 1
            try:  # SciPy >= 1.12 names the relative tolerance rtol, older ones tol
                xs, _ = spla.cg(a, b, rtol=o.tol, atol=0.0, maxiter=100000, M=m_op, callback=count)
            except TypeError:
                xs, _ = spla.cg(a, b, tol=o.tol, atol=0.0, maxiter=100000, M=m_op, callback=count)
            return xs
        row = (f"| 7-pt {m}^3 | {n} | {info.backend}/{info.format} | {tc:.4f} | {info.iterations} | "
               f"{rel_residual(a, x, b):.1e} |")
        if n <= o.scipy_max_n:
            ts, xs = timed(scipy_solve, o.reps)
            row += f" {ts:.4f} | {its[0]} | {rel_residual(a, xs, b):.1e} | **{tc / ts:.2f}** |"
        else:
            row += " (skipped) | | | |"
        if cupy:
            def cupy_solve():
                ad = csp.csr_matrix(a)
                bd = cupy.asarray(b)
                dd = cupy.asarray(dinv)
                m_op = cspla.LinearOperator(a.shape, matvec=lambda v: dd * v)
                try:  # newer CuPy names the relative tolerance rtol
                    xd, _ = cspla.cg(ad, bd, rtol=o.tol, atol=0.0, maxiter=100000, M=m_op)
                except TypeError:
                    xd, _ = cspla.cg(ad, bd, tol=o.tol, atol=0.0, maxiter=100000, M=m_op)
                return cupy.asnumpy(xd)
            tg, xg = timed(cupy_solve, o.reps)
            row += f" {tg:.4f} | {rel_residual(a, xg, b):.1e} | **{tc / tg:.2f}** |"
        print(row, flush=True)
        if cupy:
            dev_rows.append(cupy_inputs(cupy, csp, cspla, m, a, b, o))
    if cupy:
        print("\n## CuPy inputs: A (cupyx CSR) and b already on the GPU, x left there\n")
        print("| problem | n | cnc s | its | true res | cupy cg s | its | true res | cnc / cupy |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in dev_rows:
            print(r)
    return 0


def cupy_inputs(cupy, csp, cspla, m, a, b, o):
    """cnc.solve(cupyx CSR, cupy b) against CuPy's cg on the same device arrays, each with
    Jacobi from the device diagonal, synchronized at the end; true residuals computed on the host."""
    ad, bd = csp.csr_matrix(a), cupy.asarray(b)
    sync = cupy.cuda.Device().synchronize

    def cnc_solve():
        x, info = cnc.solve(ad, bd, tol=o.tol, backend=o.backend, max_iter=100000)
        sync()
        return x, info
    tc, (xc, info) = timed(cnc_solve, o.reps)
    its = [0]

    def cupy_solve():
        its[0] = 0
        dd = 1.0 / ad.diagonal()
        m_op = cspla.LinearOperator(a.shape, matvec=lambda v: dd * v)

        def count(_):
            its[0] += 1
        try:
            xd, _ = cspla.cg(ad, bd, rtol=o.tol, atol=0.0, maxiter=100000, M=m_op, callback=count)
        except TypeError:
            xd, _ = cspla.cg(ad, bd, tol=o.tol, atol=0.0, maxiter=100000, M=m_op, callback=count)
        sync()
        return xd
    tg, xg = timed(cupy_solve, o.reps)
    return (f"| 7-pt {m}^3 | {a.shape[0]} | {tc:.4f} | {info.iterations} | "
            f"{rel_residual(a, cupy.asnumpy(xc), b):.1e} | {tg:.4f} | {its[0]} | "
            f"{rel_residual(a, cupy.asnumpy(xg), b):.1e} | **{tc / tg:.2f}** |")


if __name__ == "__main__":
    sys.exit(main())
