"""Where a complex BiCGSTAB/GMRES call goes (cnc.solve's times and iterations) next to CuPy's
iteration counts, on bench_complex_krylov.py's damped magnetic Laplacian (diagnostic)."""
import sys, time
import numpy as np
sys.path.insert(0, "bench/python")
from bench_complex_krylov import damped_magnetic  # noqa: E402
from bench_krylov import with_tolerance  # noqa: E402
import cnc  # noqa: E402
import cupy, cupyx.scipy.sparse as csp, cupyx.scipy.sparse.linalg as cspla  # noqa: E402
for m in [int(s) for s in sys.argv[1].split(",")]:
    a = damped_magnetic(m); n = a.shape[0]; b = np.exp(0.1j * np.arange(n)); dinv = 1.0 / a.diagonal()
    for method in ("bicgstab", "gmres"):
        for rep in range(2):
            t = time.perf_counter()
            x, info = cnc.solve(a, b, tol=1e-8, solver=method, restart=30, max_iter=100000)
            t = time.perf_counter() - t
        tm = info.times
        print(f"m={m} cnc {method}: {t:.4f} s, {info.iterations} it, conversion {tm.conversion:.4f} "
              f"upload {tm.upload:.4f} solve {tm.solve:.4f} ({1e3*tm.solve/max(1,info.iterations):.3f} ms/it) "
              f"elapsed {tm.elapsed:.4f}, bytes/it {info.bytes_per_iteration/1e6:.1f} MB")
        ad = csp.csr_matrix(a); bd = cupy.asarray(b); dd = cupy.asarray(dinv)
        M = cspla.LinearOperator(a.shape, matvec=lambda v: dd * v, dtype=np.complex128)
        its = [0]
        def cb(*args): its[0] += 1
        fn = getattr(cspla, method)
        kw = {"restart": 30} if method == "gmres" else {}
        for rep in range(2):
            its[0] = 0
            cupy.cuda.Device().synchronize(); t = time.perf_counter()
            xd, _ = with_tolerance(fn, 1e-8, ad, bd, atol=0.0, M=M, maxiter=100000, callback=cb, **kw)
            cupy.cuda.Device().synchronize(); t = time.perf_counter() - t
        print(f"m={m} CuPy {method} (A on the device already): {t:.4f} s, {its[0]} callbacks")
