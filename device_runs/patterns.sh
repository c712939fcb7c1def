#!/bin/bash
# Issue 11 on the GPU machine: build, the long-row and reordering tests on CUDA (and NVIDIA's
# OpenCL), then bench_api --patterns (every sparsity family vs the textbook cuSPARSE PCG, same
# run). Carried: .devfull/ (see e2e.sh; .devfull/matrices holds a copy of shared/data/matrices).
# Usage: bash device_runs/patterns.sh [tests|bench|all] [bench_api options...]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
what=${1:-all}; shift || true
exec > >(tee -a "$OUT/patterns-$what.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
if [ "$what" != bench ]; then
  echo "== test_backend cuda / opencl"
  /tmp/b/tests/test_backend cuda 2>&1 | tail -14
  /tmp/b/tests/test_backend opencl 2>&1 | grep -E "long_rows|PASSED|FAILED|ERROR" | head
  echo "== reorder and refill tests, CUDA"
  (cd /tmp/b && CNC_BACKEND=cuda ctest --output-on-failure -R "test_solve_(reorder|refill|matrices)") 2>&1 | tail -8
fi
if [ "$what" != tests ]; then
  echo "== bench_api --patterns $*"
  /tmp/b/bench/cuda/bench_api --patterns --mtx-dir "$R/.devfull/matrices" "$@"
fi
