"""BiCGSTAB and GMRES from Python, as a user runs them: a scipy CSR matrix and a numpy b in, x out.

cnc.solve(A, b, solver="bicgstab" | "gmres") against, in the same run, CuPy's GMRES
(cupyx.scipy.sparse.linalg.gmres, Jacobi, restart 30; and its bicgstab where this CuPy has one),
timed from the host matrix (CuPy's transfer of A and b included) to x back in host memory, and
SciPy's bicgstab (Jacobi, one CPU thread) up to --scipy-max-n unknowns. The matrix is
bench/bench_krylov.c's: 7-point convection-diffusion on an N^3 grid, upwind. All to
||r|| <= tol ||b|| from x = 0; the true residual of each answer is computed here.

    python3 bench/python/bench_krylov.py [--sizes 64,100] [--reps 3] [--tol 1e-8] [--backend auto]
Needs libcnc.so (CNC_LIBRARY=build/libcnc.so) and bindings/python on the path.
"""
import argparse
import os
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_api import rel_residual, timed  # noqa: E402

import cnc  # noqa: E402


def convection_diffusion(m, c=(0.9, 0.4, 0.2)):
    eye = sp.identity(m, format="csr")

    def one_d(cv):  # -u'' + cv u' with upwind differences
        return sp.diags([-1.0 - cv, 2.0 + cv, -1.0], [-1, 0, 1], shape=(m, m), format="csr")

    a = (sp.kron(eye, sp.kron(eye, one_d(c[0]))) + sp.kron(eye, sp.kron(one_d(c[1]), eye))
         + sp.kron(one_d(c[2]), sp.kron(eye, eye))).tocsr()
    a.sort_indices()
    return a


def with_tolerance(fn, tol, *args, **kw):
    try:  # newer SciPy and CuPy name the relative tolerance rtol, older ones tol
        return fn(*args, rtol=tol, **kw)
    except TypeError:
        return fn(*args, tol=tol, **kw)


def peer_rows(a, b, dinv, tol, reps, scipy_methods):
    """(name, median seconds, true residual, method) of CuPy's gmres and bicgstab (Jacobi from
    dinv, restart 30; from the host arrays to x in host memory) where CuPy is installed, and of
    SciPy's `scipy_methods` (one CPU thread, timed once), in a's dtype."""
    rows = []
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cspla
    except ImportError:
        cupy = None
    if cupy is not None:
        def cupy_run(fn, **kw):
            def run():
                ad = csp.csr_matrix(a)
                bd = cupy.asarray(b)
                dd = cupy.asarray(dinv)
                m_op = cspla.LinearOperator(a.shape, matvec=lambda v: dd * v, dtype=a.dtype)
                xd, _ = with_tolerance(fn, tol, ad, bd, atol=0.0, M=m_op, **kw)
                out = cupy.asnumpy(xd)
                cupy.cuda.Device().synchronize()
                return out
            return run
        t, x = timed(cupy_run(cspla.gmres, restart=30, maxiter=100000), reps)
        rows.append(("CuPy gmres", t, rel_residual(a, x, b), "gmres"))
        if hasattr(cspla, "bicgstab"):
            t, x = timed(cupy_run(cspla.bicgstab, maxiter=100000), reps)
            rows.append(("CuPy bicgstab", t, rel_residual(a, x, b), "bicgstab"))
    m_op = spla.LinearOperator(a.shape, matvec=lambda v: dinv * v, dtype=a.dtype)
    for method in scipy_methods:
        kw = {"restart": 30} if method == "gmres" else {}
        fn = getattr(spla, method)
        t, (x, _) = timed(lambda: with_tolerance(fn, tol, a, b, atol=0.0, maxiter=100000, M=m_op,
                                                 **kw), 1)
        rows.append((f"SciPy {method} (1 thread)", t, rel_residual(a, x, b), method))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,100")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--scipy-max-n", type=int, default=300_000)
    o = ap.parse_args()
    try:
        import cupy
    except ImportError:
        cupy = None
    print(f"# cnc {cnc.version_string()}, backend {o.backend}, tol {o.tol}, GMRES(30), "
          f"median of {o.reps}; CuPy {cupy.__version__ if cupy else 'absent'}")
    print(f"{'N^3':>5} {'n':>9}  {'solver':<24} {'seconds':>9} {'true err':>9} {'vs cnc':>7}")
    for m in [int(s) for s in o.sizes.split(",")]:
        a = convection_diffusion(m)
        n = a.shape[0]
        b = 1.0 + (np.arange(n) % 7) * 0.125
        dinv = 1.0 / a.diagonal()
        rows = []
        for method in ("bicgstab", "gmres"):
            t, (x, info) = timed(lambda: cnc.solve(a, b, tol=o.tol, solver=method, restart=30,
                                                   backend=o.backend, max_iter=100000), o.reps)
            rows.append((f"cnc {method} ({info.backend})", t, rel_residual(a, x, b), method))
        rows += peer_rows(a, b, dinv, o.tol, o.reps, ("bicgstab",) if n <= o.scipy_max_n else ())
        ours = {r[3]: r[1] for r in rows if r[0].startswith("cnc")}
        for name, t, err, method in rows:
            print(f"{m:>5} {n:>9}  {name:<24} {t:>9.4f} {err:>9.2e} {t / ours[method]:>6.2f}x")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
