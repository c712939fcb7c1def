#!/bin/bash
# Issue 13, session of 2026-11-27 (fifth): complex BiCGSTAB and GMRES in complex arithmetic (the
# vector surface's zaxpby on CUDA and NVIDIA OpenCL). Builds /tmp/b (e2e.sh), then
#   tests: every suite (e2e.sh tests) and the complex ones by name on each GPU backend;
#   bench: young1c through cnc-solve on each backend, and bench/python/bench_complex_krylov.py
#          (cnc.solve against CuPy's and SciPy's complex gmres/bicgstab, same run).
# Usage: bash device_runs/complex_krylov.sh [tests] [bench]. Carried: .devfull/root, .devfull/matrices.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/complex-krylov.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
M=$R/.devfull/matrices
mkdir -p /tmp/shared/data && ln -sfn "$M" /tmp/shared/data/matrices
for what in "$@"; do
  if [ "$what" = tests ]; then
    for be in cuda opencl; do
      echo "== test_backend $be, test_complex $be"
      /tmp/b/tests/test_backend $be 2>&1 | grep -E "zaxpby|PASSED|FAILED|ERROR" | head -12
      /tmp/b/tests/test_complex $be 2>&1 | grep -E "solver 0x20[23]|PASSED|FAILED|ERROR" | head -20
    done
    bash device_runs/e2e.sh tests 2>&1 | grep -vE "^\s+Start|Test +#[0-9]+: .* Passed"
  fi
  if [ "$what" = bench ]; then
    CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=bindings/python python3 device_runs/complex_breakdown.py 100,160 2>&1 | grep -v Warn
    for be in cuda opencl cpu; do
      for s in bicgstab gmres; do
        echo "== cnc-solve young1c --backend $be --solver $s"
        /tmp/b/examples/cnc-solve --backend $be --solver $s --max-iter 20000 -q \
          "$M/young1c.mtx" 2>&1 | grep -E "^(result|residual|time|backend|device)"
      done
    done
    echo "== bench_complex_krylov.py (backend auto, then opencl)"
    CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=bindings/python python3 \
      bench/python/bench_complex_krylov.py --sizes 64,100,160 --reps 3 --matrices "$M"
    CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=bindings/python python3 \
      bench/python/bench_complex_krylov.py --sizes 100 --reps 3 --backend opencl --matrices "$M" \
      --scipy-max-n 0
  fi
done
