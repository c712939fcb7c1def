#!/bin/bash
# Issue 13: block CG's fused iteration on CUDA (backend::block_grams / block_update /
# block_combine2, kernels/cuda/block.cu's k_block_fused and k_block_combine2: 4 passes over the
# block a iteration instead of 9), the code before the change against the change, same run.
# Builds /tmp/b (this tree) and, when .carry/baseline_bcg holds the files before the change
# (untracked, not committed), /tmp/b0 from them, then
#   tests: test_backend cuda (test_block_fused among them: the fused products against plain
#          loops, in double), test_block_cg on CUDA and NVIDIA's OpenCL, and the device ordering's
#          tests (test_backend cuda 'test_device_*', test_reorder_rcm, test_solve_reorder, the
#          fault-injection runs of the ordering);
#   prof:  Nsight Compute's duration and DRAM throughput of block CG's kernels, 128^3 k = 8;
#   bench: bench_block_cg 128^3, k = 8 and 16, CUDA, base / new / variant, twice (the variant:
#          .carry/variant's files over this tree, untracked, when there is one).
# Usage: OUT=... bash device_runs/block_fused.sh [tests] [prof] [bench]. Carried: .devfull, .carry.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/block-fused.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="cnc test_backend test_block_cg bench_block_cg test_solve_reorder test_reorder_rcm test_fault_injection"
if [ -d .carry/baseline_bcg ]; then T0=bench_block_cg BASE=.carry/baseline_bcg; fi
. device_runs/ab_build.sh
# A variant of the change (.carry/variant: its files put over this tree), built as /tmp/b2.
if [ -d .carry/variant ]; then
  rm -rf /tmp/var && mkdir -p /tmp/var && cp -r "$PWD"/. /tmp/var/ && rm -rf /tmp/var/build*
  cp -r .carry/variant/. /tmp/var/
  (cd /tmp/var && cmake -S . -B /tmp/b2 -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg2.log 2>&1 &&
    ninja -C /tmp/b2 bench_block_cg > /tmp/build2.log 2>&1) || { tail -30 /tmp/build2.log; exit 1; }
fi
echo "built at ${SECONDS} s"
for what in "$@"; do
  if [ "$what" = tests ]; then
    echo "== test_backend cuda"
    timeout 400 /tmp/b/tests/test_backend cuda 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|Failure|declined|expected|changed" | head -30
    for be in cuda opencl; do
      echo "== test_block_cg, CNC_BACKEND=$be"
      (cd /tmp/b && CNC_BACKEND=$be ctest --timeout 300 --output-on-failure -R "block_cg") 2>&1 | tail -4
    done
    echo "== test_reorder_rcm"
    timeout 300 /tmp/b/tests/test_reorder_rcm 2>&1 | grep -E "PASSED|FAILED|ERROR|differs" | head -6
    echo "== test_solve_reorder, CUDA forced, automatic"
    for be in cuda auto; do
      echo "-- CNC_BACKEND=$be"
      CNC_BACKEND=$be timeout 300 /tmp/b/tests/test_solve_reorder 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|Failure" | head -12
    done
    echo "== fault injection, RCM on CUDA"
    (cd /tmp/b && ctest --timeout 300 --output-on-failure -R 'fault_cuda_rcm') 2>&1 |
      grep -E "tests passed|tests failed|Failed|absorbed|not worked|ordering|P A P" | cut -c1-300 | head -12
    echo "tests done at ${SECONDS} s"
  fi
  if [ "$what" = prof ]; then
    # Block CG's own kernels (the Gram and update passes, combine2: no other solver launches them).
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    S="--section SpeedOfLight --section Occupancy --section LaunchStats --print-summary per-kernel"
    echo "== ncu [b]: block CG's fused kernels, 128^3 k = 8"
    timeout 200 $NCU $S --kernel-name regex:"k_block_(grams|update|combine2)" --launch-skip 12 --launch-count 24 \
      $(bb b) --backend cuda --n 128 --k 8 --reps 1 > "$OUT/ncu-fused.txt" 2>&1
    grep -E "^  [^ ]|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occ|Grid Size|Invocations" "$OUT/ncu-fused.txt" | head -80
    echo "prof done at ${SECONDS} s"
  fi
  if [ "$what" = bench ]; then
    for d in b0 b b2 b0 b b2; do
      [ -d /tmp/$d ] || continue
      echo "== bench_block_cg [$d]"
      for k in 8 16; do timeout 120 $(bb $d) --backend cuda --n 128 --k $k --reps 3 | grep -E "^\||iterations /"; done
    done
    echo "bench done at ${SECONDS} s"
  fi
done
