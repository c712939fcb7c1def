#!/bin/bash
# Block CG's cross-column products on CUDA, the code before a change against the change, same
# run: builds /tmp/b (this tree) and /tmp/b0 (this tree with device_runs/baseline_bcg/ put back:
# the files before the change, put there by hand, not committed), then
#   tests: test_backend cuda and opencl (block_dots / block_combine against plain loops),
#          test_block_cg on each;
#   prof:  Nsight Compute's duration and DRAM throughput of the block kernels, both builds;
#   bench: bench_block_cg 128^3, k = 8 and 16, CUDA, base / new / base / new;
#   oclbench: the same on NVIDIA's OpenCL, base / new (k = 16: one run).
# Usage: bash device_runs/block_cg_ab.sh [tests] [prof] [bench] [oclbench]. Carried: .devfull/mid.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/block-cg-ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="cnc test_backend test_block_cg bench_block_cg"
T0=bench_block_cg
. device_runs/ab_build.sh
for what in "$@"; do
  if [ "$what" = tests ]; then
    for be in cuda opencl; do
      /tmp/b/tests/test_backend $be 2>&1 | grep -E "block|PASSED|FAILED|ERROR" | head
      (cd /tmp/b && CNC_BACKEND=$be ctest --output-on-failure -R "block") 2>&1 | tail -4
    done
  fi
  if [ "$what" = prof ]; then
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for d in b0 b; do
      echo "== ncu [$d]: block CG's kernels, 128^3 k = 8"
      timeout 240 $NCU --section SpeedOfLight --print-summary per-kernel \
        --kernel-name regex:"gram|combine" --launch-skip 40 --launch-count 24 \
        $(bb $d) --backend cuda --n 128 --k 8 --reps 1 > "$OUT/ncu-$d.txt" 2>&1
      grep -E "^  [^ ]|Duration|DRAM Throughput|Invocations" "$OUT/ncu-$d.txt" | head -40
    done
  fi
  if [ "$what" = bench ]; then
    for d in b0 b b0 b; do
      echo "== bench_block_cg [$d]"
      for k in 8 16; do $(bb $d) --backend cuda --n 128 --k $k --reps 3 | grep -E "^\|"; done
    done
  fi
  if [ "$what" = oclbench ]; then
    for d in b0 b; do
      echo "== bench_block_cg --backend opencl [$d]"
      $(bb $d) --backend opencl --n 128 --k 8 --reps 3 | grep -E "^\|"
      $(bb $d) --backend opencl --n 128 --k 16 --reps 1 | grep -E "^\|"
    done
  fi
done
