#!/bin/bash
# The CUDA suites of the whole tree on the GPU machine (a check after a change to what every CUDA
# solve runs): builds /tmp/b with every target, then the ctest entries named *cuda* and the
# public-API suites forced onto CUDA (CNC_BACKEND=cuda). Carried: .devfull (gpu_env.sh).
# Usage: OUT=... bash device_runs/cuda_suites.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/cuda-suites.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
. device_runs/gpu_env.sh
cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 &&
  ninja -C /tmp/b > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
echo "built at ${SECONDS} s"
echo "== ctest -R cuda"
(cd /tmp/b && ctest -j8 --timeout 200 --output-on-failure -R cuda) 2>&1 | grep -E "tests passed|tests failed|Failed|\(Failed\)|Timeout" | head -20
echo "== ctest with CNC_BACKEND=cuda (public-API suites forced onto the GPU)"
(cd /tmp/b && CNC_BACKEND=cuda ctest -j8 --timeout 200 --output-on-failure \
   -R "test_solve|nonsymmetric|demo|opennl|readme|cnc_solve_poisson|block|iterate") 2>&1 |
  grep -E "tests passed|tests failed|Failed|\(Failed\)|Timeout" | head -20
echo "done at ${SECONDS} s"
