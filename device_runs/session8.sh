#!/bin/bash
# Session of 2026-11-28 (eighth): the review mends of the complex Jacobi on CUDA and NVIDIA's
# OpenCL (tests), then where block CG's iteration goes (bench_block_cg under nsys, kernel sums).
# Usage: bash device_runs/session8.sh [tests] [prof] [bench]. Carried: .devfull/mid, .devfull/matrices.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/session8.log") 2>&1
git log --oneline -1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
mkdir -p /tmp/shared/data && ln -sfn "$R/.devfull/matrices" /tmp/shared/data/matrices
BB=$(find /tmp/b -name bench_block_cg -type f | head -1)
for what in "$@"; do
  if [ "$what" = tests ]; then
    echo "== ctest (automatic backend)"
    (cd /tmp/b && ctest -j8 --timeout 300 --output-on-failure -E python) 2>&1 | tail -8
    echo "== ctest with CNC_BACKEND=cuda"
    (cd /tmp/b && CNC_BACKEND=cuda ctest -j4 --timeout 300 --output-on-failure \
       -R "complex|nonsymmetric|block|test_solve|bad_input") 2>&1 | tail -6
    for be in cuda opencl; do
      echo "== test_backend $be (complex and block entries)"
      /tmp/b/tests/test_backend $be 2>&1 | grep -E "zcsr|block|PASSED|FAILED|ERROR" | head -20
    done
    echo "== python (complex)"
    CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=$R/bindings/python python3 -m pytest -q \
      $R/bindings/python/tests -k "complex" 2>&1 | tail -2
  fi
  if [ "$what" = prof ]; then
    NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
    echo "nsys: ${NSYS:-none}"
    if [ -n "$NSYS" ]; then
      $NSYS profile -o /tmp/bcg --force-overwrite true $BB --backend cuda --n 128 --k 8 --reps 1 > /dev/null 2>&1
      $NSYS stats --report cuda_gpu_kern_sum --format csv /tmp/bcg.nsys-rep 2>/dev/null | head -30
      $NSYS stats --report cuda_api_sum --format csv /tmp/bcg.nsys-rep 2>/dev/null | head -15
    fi
  fi
  if [ "$what" = bench ]; then
    for k in 8 16; do $BB --backend cuda --n 128 --k $k --reps 3; done
  fi
done
