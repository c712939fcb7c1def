#!/bin/bash
# Block CG and complex systems on the GPU machine: the whole test suite (device_runs/e2e.sh
# tests: CUDA contract tests with block_dots/block_combine, test_block_cg, test_complex on CUDA
# and the GPU's OpenCL), then bench_block_cg (block CG against k separate solves and lock-step
# multi-RHS CG, 3D Poisson, k = 8, 1e-8) on CUDA. Carry [".devfull"] (with Eigen's headers).
# Usage: OUT=... bash device_runs/issue13.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
git log --oneline -1
bash device_runs/e2e.sh tests
exec > >(tee -a "$OUT/issue13.log") 2>&1
echo "== test_complex (cuda, opencl)"
for b in cuda opencl; do /tmp/b/tests/test_complex $b 2>&1 | tail -3; echo "exit $?"; done
echo "== test_block_cg cuda"
/tmp/b/tests/test_block_cg cuda 2>&1 | tail -5
echo "== bench_block_cg, CUDA"
BB=$(find /tmp/b -name bench_block_cg -type f | head -1)
$BB --backend cuda --n 128 --k 8 --reps 3
$BB --backend cuda --n 200 --k 8 --reps 3
$BB --backend cuda --n 128 --k 16 --reps 3
