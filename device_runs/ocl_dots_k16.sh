#!/bin/bash
# NVIDIA OpenCL with several right-hand sides, two questions in one run: (1) the flat walk of the
# vector surface's dot products (vec_dot_part, kernels/opencl/blas1.cl) against the row walk
# before it, same run: bench_block_cg 128^3 k = 8 and 16 on both builds, alternated (the files
# before the change in device_runs/baseline_bcg/, untracked); (2) where the lock-step CG's time
# goes at k = 16 (1.06x separate solves in run 109 against 1.4x at k = 8): the kernel profile
# (CNC_OPENCL_PROFILE=1) and the tuning knobs CNC_OPENCL_SELL_U and CNC_OPENCL_WG.
# Usage: bash device_runs/ocl_dots_k16.sh [tests]. Carried: .devfull/mid.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/ocl-dots-k16.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1
T="cnc test_backend test_opencl_kernels test_block_cg test_complex bench_block_cg"
T0="cnc bench_block_cg"
. device_runs/ab_build.sh
[ "${1:-}" = tests ] && ocl_tests
row() { grep -E "^\| (lock|block)" | head -2; }
for k in 8 16; do
  for round in 1 2; do
    for b in b0 b; do
      echo "== $b k = $k round $round"
      $(bb $b) --backend opencl --n 128 --k $k --reps 1 | row
    done
  done
done
echo "== k = 16, CNC_OPENCL_PROFILE=1 (the separate solves' system, then the k = 16 one)"
CNC_OPENCL_PROFILE=1 $(bb b) --backend opencl --n 128 --k 16 --reps 1 2>&1 | grep -v "^$" | grep -v "^|"
for u in 2 4 16; do
  echo "== k = 16, CNC_OPENCL_SELL_U=$u"
  CNC_OPENCL_SELL_U=$u $(bb b) --backend opencl --n 128 --k 16 --reps 1 | row
done
for w in 64 128 512; do
  echo "== k = 16, CNC_OPENCL_WG=$w"
  CNC_OPENCL_WG=$w $(bb b) --backend opencl --n 128 --k 16 --reps 1 | row
done
