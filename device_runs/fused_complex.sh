#!/bin/bash
# Issue 13, session of 2026-11-28 (seventh): the fused complex inner products and combinations
# (device_system::zdots, zcombine) against the compositions over the real operations and zaxpby
# (runs 96-97), then Jacobi on the complex diagonal applied on the device (zprecondition) against
# A D^-1 built on the host (run 98).
# Builds /tmp/b (e2e.sh) and /tmp/b0, the same tree with the files of device_runs/baseline_fc/
# (the commit before the change, put there by hand, not committed) put back (libcnc only), then
#   tests: test_backend cuda and opencl (NVIDIA OpenCL), the complex suites on both;
#   bench: bench/python/bench_complex_krylov.py with libcnc base / new / base / new, CuPy's
#          gmres and bicgstab in every run; complex_breakdown.py per iteration, base / new.
# Usage: bash device_runs/fused_complex.sh [tests] [bench]. Carried: .devfull/mid, .devfull/matrices.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/fused-complex.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
M=$R/.devfull/matrices
mkdir -p /tmp/shared/data && ln -sfn "$M" /tmp/shared/data/matrices
rm -rf /tmp/base && mkdir -p /tmp/base && cp -r "$R"/. /tmp/base/ && rm -rf /tmp/base/build*
cp -r device_runs/baseline_fc/. /tmp/base/
(cd /tmp/base && cmake -S . -B /tmp/b0 -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg0.log 2>&1 &&
  ninja -C /tmp/b0 cnc > /tmp/build0.log 2>&1) || { tail -30 /tmp/build0.log; exit 1; }
for what in "$@"; do
  if [ "$what" = tests ]; then
    for be in cuda opencl; do
      echo "== test_backend $be"
      /tmp/b/tests/test_backend $be 2>&1 | grep -E "fused|zprecond|PASSED|FAILED|ERROR" | head -12
      /tmp/b/tests/test_complex $be 2>&1 | grep -E "iteration\(s\)|PASSED|FAILED|ERROR" | head -12
    done
    echo "== ctest complex|krylov|nonsymmetric (automatic backend, then CUDA forced)"
    (cd /tmp/b && ctest -j4 --timeout 300 --output-on-failure -R "complex|krylov|nonsymmetric|bicgstab|gmres") 2>&1 | tail -4
    (cd /tmp/b && CNC_BACKEND=cuda ctest -j4 --timeout 300 --output-on-failure -R "complex|nonsymmetric") 2>&1 | tail -4
    (cd /tmp/b && CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=$R/bindings/python python3 -m pytest -q \
       $R/bindings/python/tests -k "complex" 2>&1 | tail -2)
  fi
  if [ "$what" = bench ]; then
    for d in b0 b; do
      echo "== complex_breakdown.py [$d]"
      CNC_LIBRARY=/tmp/$d/libcnc.so PYTHONPATH=bindings/python python3 device_runs/complex_breakdown.py 100,160 2>&1 | grep -v Warn
    done
    for d in b0 b b0 b; do
      echo "== bench_complex_krylov.py [$d]"
      CNC_LIBRARY=/tmp/$d/libcnc.so PYTHONPATH=bindings/python python3 \
        bench/python/bench_complex_krylov.py --sizes 100,160 --reps 3 --matrices "$M" --scipy-max-n 0
    done
    for d in b0 b; do
      echo "== bench_complex_krylov.py --backend opencl [$d]"
      CNC_LIBRARY=/tmp/$d/libcnc.so PYTHONPATH=bindings/python python3 \
        bench/python/bench_complex_krylov.py --sizes 100 --reps 3 --backend opencl --matrices "$M" \
        --scipy-max-n 0
    done
  fi
done
