"""Diagnostic (run 99): where the time of a complex BiCGSTAB with Jacobi on the complex diagonal
goes, against the same pattern with a real diagonal (the device's real Jacobi), same binary."""
import sys, time, logging
logging.basicConfig(level=logging.INFO, format="%(message)s")
sys.path.insert(0, "bench/python")
import numpy as np
import scipy.sparse as sp
from bench_complex_krylov import damped_magnetic
import cnc
a = damped_magnetic(160); n = a.shape[0]; b = np.exp(0.1j * np.arange(n))
real_diag = (a - sp.diags(1j * a.diagonal().imag)).tocsr()
for name, m in (("complex diagonal", a), ("real diagonal", real_diag)):
    for rep in range(2):
        t = time.perf_counter()
        x, info = cnc.solve(m, b, tol=1e-8, solver="bicgstab", max_iter=100000)
        print(name, "wall", time.perf_counter() - t, info.iterations, info.times.solve)
