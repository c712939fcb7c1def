#!/bin/bash
# NVIDIA OpenCL, several right-hand sides: spmv_fused with a work-item per (row, column) (COLS in
# kernels/opencl/spmv.cl) against the work-item per row with its staged epilogue (STAGE), same
# build, switched by CNC_OPENCL_SPMV_COLS=0|1, alternated twice: bench_block_cg 128^3 at k = 2, 4,
# 8, 16; then the k = 16 kernel profile with the automatic choice. First (tests) the OpenCL
# suites with the automatic choice, and test_backend with COLS forced on (k = 3 and 9 too).
# Usage: bash device_runs/ocl_cols.sh [tests]. Carried: .devfull/mid.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/ocl-cols.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1; git status --short | head
T="cnc test_backend test_opencl_kernels test_block_cg test_complex bench_block_cg"
. device_runs/ab_build.sh
if [ "${1:-}" = tests ]; then
  ocl_tests
  echo "== test_backend opencl, CNC_OPENCL_SPMV_COLS=1"
  CNC_OPENCL_SPMV_COLS=1 /tmp/b/tests/test_backend opencl 2>&1 | grep -E "PASSED|FAILED|ERROR|Failure" | head
fi
cols_ab 2 4 8 16
BB=$(bb b)
echo "== k = 16, automatic, CNC_OPENCL_PROFILE=1"
CNC_OPENCL_PROFILE=1 $BB --backend opencl --n 128 --k 16 --reps 1 2>&1 | grep -E "kernel times|spmv|update" | grep -v "^|"
