#!/bin/bash
# Issue 11 run 31: the device-arrays suite (BCRS counted on the device with hub rows), then
# bench_api --patterns over every family and SuiteSparse matrix, then the power-law 2M graph
# under several long-row thresholds (CNC_LONG_ROW_MIN). Carried: .devfull/ (see e2e.sh).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/intake2.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
echo "== test_cuda_device_arrays"
/tmp/b/tests/test_cuda_device_arrays 2>&1 | tail -12
echo "== bench_api --patterns --reps 3"
/tmp/b/bench/cuda/bench_api --patterns --reps 3 --mtx-dir "$R/.devfull/matrices"
for m in 32 64 256 1024 -1; do
  echo "== power-law 2M, CNC_LONG_ROW_MIN=$m"
  CNC_LONG_ROW_MIN=$m /tmp/b/bench/cuda/bench_api --patterns --reps 3 --only "power-law 2M" |
    grep -E "^\| power-law"
done
