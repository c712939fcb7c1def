#!/bin/bash
# Where NVIDIA's OpenCL spends a solve with several right-hand sides: bench_block_cg 128^3 on
# OpenCL with CNC_OPENCL_PROFILE=1 (per-kernel device times of each system, printed when it is
# released), k = 8: the k separate solves, lock-step CG and block CG; then the CUDA figures of
# the same bench for comparison (k = 8), and OpenCL at k = 16. The bench's second table says
# where each method's last run went (conversion, upload, solve). Optionally first the OpenCL tests (tests).
# Usage: bash device_runs/ocl_profile.sh [tests]. Carried: .devfull/mid.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/ocl-profile.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1
T="cnc test_backend test_opencl_kernels test_block_cg test_complex bench_block_cg"
. device_runs/ab_build.sh
BB=$(find /tmp/b -name bench_block_cg -type f | head -1)
if [ "${1:-}" = tests ]; then
  ocl_tests
fi
echo "== bench_block_cg --backend opencl k = 8, CNC_OPENCL_PROFILE=1"
CNC_OPENCL_PROFILE=1 $BB --backend opencl --n 128 --k 8 --reps 1 2>&1 | grep -v "^$"
echo "== bench_block_cg --backend opencl k = 8"
$BB --backend opencl --n 128 --k 8 --reps 3 | grep -E "^\| [klb]"
echo "== bench_block_cg --backend cuda k = 8"
$BB --backend cuda --n 128 --k 8 --reps 3 | grep -E "^\| [klb]"
echo "== bench_block_cg --backend opencl k = 16"
$BB --backend opencl --n 128 --k 16 --reps 1 | grep -E "^\| [klb]"
