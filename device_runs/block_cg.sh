#!/bin/bash
# Block CG on the GPU: the CUDA contract tests (block_dots / block_combine among them), the block CG
# tests on CUDA, and bench_block_cg (3D Poisson, k = 8 and 16). Carry [".devfull"].
# Usage: OUT=... bash device_runs/block_cg.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/block_cg.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1
. device_runs/gpu_env.sh
cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
ninja -C /tmp/b test_backend test_block_cg bench_block_cg > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
(cd /tmp/b && ctest -R "backend_cuda|test_block_cg" --output-on-failure) 2>&1 | tail -6
BB=$(find /tmp/b -name bench_block_cg -type f | head -1)
$BB --backend cuda --n 128 --k 8 --reps 3
$BB --backend cuda --n 128 --k 16 --reps 3
