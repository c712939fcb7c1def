"""Complex non-Hermitian BiCGSTAB and GMRES from Python, as a user runs them: a complex scipy CSR
matrix and a complex numpy b in, x out.

cnc.solve(A, b, solver="bicgstab" | "gmres") against, in the same run, CuPy's gmres and bicgstab
(cupyx.scipy.sparse.linalg, Jacobi on the complex diagonal, restart 30) where CuPy is installed,
timed from the host matrix (CuPy's transfer of A and b included) to x back in host memory, and
SciPy's (the same Jacobi, one CPU thread) up to --scipy-max-n unknowns. Problems:
  - young1c from ../shared/data/matrices (SuiteSparse HB/young1c, acoustics, CC-BY 4.0; n 841,
    not Hermitian, real parts of its diagonal down to -2e-4), when the file is there;
  - a damped magnetic Laplacian on an N^3 grid: the graph Laplacian of the 7-point grid with a
    random unit phase on each edge, shifted by -1 (indefinite) with 0.5 i damping on the diagonal.
All to ||r|| <= tol ||b|| from x = 0; the true residual of each answer is computed here.

    python3 bench/python/bench_complex_krylov.py [--sizes 64,100] [--reps 3] [--tol 1e-8]
        [--backend auto] [--matrices ../shared/data/matrices]
Needs libcnc.so (CNC_LIBRARY=build/libcnc.so) and bindings/python on the path.
"""
import argparse
import os
import sys

import numpy as np
import scipy.io as sio
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_api import rel_residual, timed  # noqa: E402
from bench_krylov import peer_rows  # noqa: E402

import cnc  # noqa: E402


def damped_magnetic(m, shift=-1.0, damping=0.5, seed=3):
    n = m ** 3
    idx = np.arange(n).reshape(m, m, m)
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for axis in range(3):
        lo = idx.take(range(m - 1), axis=axis).ravel()
        hi = idx.take(range(1, m), axis=axis).ravel()
        e = -np.exp(1j * rng.uniform(0.0, 2.0 * np.pi, lo.size))
        rows += [lo, hi]
        cols += [hi, lo]
        vals += [e, np.conj(e)]
    a = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, n))
    degree = np.asarray(abs(a).sum(axis=1)).ravel()
    a = (a + sp.diags(degree + shift + 1j * damping)).tocsr()
    a.sort_indices()
    return a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,100")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--scipy-max-n", type=int, default=300_000)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--matrices",
                    default=os.path.join(here, "..", "..", "..", "shared", "data", "matrices"))
    o = ap.parse_args()
    try:
        import cupy
    except ImportError:
        cupy = None
    print(f"# cnc {cnc.version_string()}, backend {o.backend}, tol {o.tol}, GMRES(30), "
          f"median of {o.reps}; CuPy {cupy.__version__ if cupy else 'absent'}")
    print(f"{'problem':<16} {'n':>9}  {'solver':<26} {'seconds':>9} {'true err':>9} {'vs cnc':>7}")
    problems = []
    young = os.path.join(o.matrices, "young1c.mtx")
    if os.path.exists(young):
        problems.append(("young1c", sp.csr_matrix(sio.mmread(young))))
    else:
        print(f"# {young} absent: young1c skipped")
    problems += [(f"magnetic {m}^3", damped_magnetic(m)) for m in
                 [int(s) for s in o.sizes.split(",") if s]]
    for name, a in problems:
        n = a.shape[0]
        b = np.exp(0.1j * np.arange(n))
        dinv = 1.0 / a.diagonal()
        rows = []
        for method in ("bicgstab", "gmres"):
            t, (x, info) = timed(lambda: cnc.solve(a, b, tol=o.tol, solver=method, restart=30,
                                                   backend=o.backend, max_iter=100000), o.reps)
            rows.append((f"cnc {method} ({info.backend})", t, rel_residual(a, x, b), method))
        rows += peer_rows(a, b, dinv, o.tol, o.reps,
                          ("bicgstab", "gmres") if n <= o.scipy_max_n else ())
        ours = {r[3]: r[1] for r in rows if r[0].startswith("cnc")}
        for label, t, err, method in rows:
            print(f"{name:<16} {n:>9}  {label:<26} {t:>9.4f} {err:>9.2e} {t / ours[method]:>6.2f}x")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
