"""The k smallest eigenpairs of a generalized problem, cnc.eigsh against scipy.sparse.linalg.eigsh
in the same run: both ARPACK in shift-invert mode around sigma = 0, scipy factoring K - sigma M
with SuperLU (splu), cnc with CHOLMOD (SPD here). Timed from the call to (w, v) in memory, median of
--reps; the residuals max_i ||K v_i - w_i M v_i|| / ||K v_i|| are computed here for both.

    python3 bench/python/bench_eigsh.py [--m 320] [--k 20] [--reps 3]

K: the 5-point Laplacian on an m x m grid (Dirichlet), M: a lumped mass with random weights in
[0.5, 1.5] (so the problem is a true generalized one).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import cnc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=320)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    m, k = args.m, args.k
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    K = (sp.kron(sp.identity(m), t) + sp.kron(t, sp.identity(m))).tocsr()
    n = K.shape[0]
    M = sp.diags(np.random.default_rng(3).uniform(0.5, 1.5, n)).tocsr()

    def worst(w, v):
        r = K @ v - (M @ v) * w
        return float(np.max(np.linalg.norm(r, axis=0) / np.linalg.norm(K @ v, axis=0)))

    rows = []
    for name, fn in (("cnc.eigsh", lambda: cnc.eigsh(K, k=k, M=M, sigma=0.0)),
                     ("scipy eigsh", lambda: spla.eigsh(K, k=k, M=M, sigma=0.0))):
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            w, v = fn()
            times.append(time.perf_counter() - t0)
        w = np.sort(w)
        rows.append((name, statistics.median(times), w[0], w[-1], worst(*fn())))
    print(f"n = {n}, k = {k}, median of {args.reps}")
    print("| solver | s | smallest w | largest w | max relative residual |")
    print("|---|---|---|---|---|")
    for name, s, w0, w1, res in rows:
        print(f"| {name} | {s:.3f} | {w0:.10g} | {w1:.10g} | {res:.1e} |")
    print(f"cnc / scipy: {rows[0][1] / rows[1][1]:.2f}")


if __name__ == "__main__":
    main()
