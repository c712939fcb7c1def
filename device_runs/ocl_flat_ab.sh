#!/bin/bash
# NVIDIA's OpenCL with several right-hand sides: the kernels before a change against the change,
# same run. Builds /tmp/b (this tree) and /tmp/b0 (this tree with device_runs/baseline_bcg/ put
# back: the files before the change, put there by hand, not committed), then
#   tests: test_backend opencl, test_opencl_kernels, test_block_cg and test_complex on OpenCL;
#   bench: bench_block_cg 128^3 on OpenCL, k = 8 (base / new / base / new), k = 4 and 16 (once).
# Usage: bash device_runs/ocl_flat_ab.sh [tests] [bench]. Carried: .devfull/mid.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/ocl-flat-ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1
T="cnc test_backend test_opencl_kernels test_block_cg test_complex bench_block_cg"
T0=bench_block_cg
. device_runs/ab_build.sh
for what in "$@"; do
  if [ "$what" = tests ]; then
    ocl_tests
  fi
  if [ "$what" = bench ]; then
    for d in b0 b b0 b; do
      echo "== bench_block_cg --backend opencl k = 8 [$d]"
      $(bb $d) --backend opencl --n 128 --k 8 --reps 3 | grep -E "^\| [kl]"
    done
    for d in b0 b; do
      for k in 4 16; do
        echo "== bench_block_cg --backend opencl k = $k [$d]"
        $(bb $d) --backend opencl --n 128 --k $k --reps 1 | grep -E "^\| [klb]"
      done
    done
  fi
done
