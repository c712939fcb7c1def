#!/bin/bash
# (Run 154: the hoisted coefficients gained nothing and were not kept; .carry/base_c2 held block.cu with the mma products.)
# A/B: block CG's next-P pass (k_block_combine2) with each thread's coefficients in registers (this
# tree) against reading them from shared memory per element (.carry/base_c2: block.cu before);
# test_backend cuda; Nsight Compute on the combination (b0, b) and on the 8-column SELL SpMV of
# block CG and of the lock-step CG (b); bench_block_cg 128^3 k = 8 alternated twice.
# Usage: OUT=... bash device_runs/combine_ab.sh. Carried: .devfull, .carry.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/combine-ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git status --short | head
T="bench_block_cg test_backend" T0=bench_block_cg BASE=.carry/base_c2
. device_runs/ab_build.sh
echo "built at $SECONDS s"
echo "== test_backend cuda"
timeout 300 /tmp/b/tests/test_backend cuda 2>&1 | grep -E "PASSED|FAILED|ERROR|Failure|block_fused" | head
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M="--section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --print-summary per-kernel"
G="^  [^ ]|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occ|L1/TEX Hit|L2 Hit|Memory Throughput"
for d in b0 b; do
  echo "== ncu [$d]: k_block_combine2, 128^3 k = 8"
  timeout 120 $NCU $M --kernel-name regex:"k_block_combine2" --launch-skip 6 --launch-count 8 \
    $(bb $d) --backend cuda --n 128 --k 8 --reps 1 > "$OUT/ncu-c2-$d.txt" 2>&1
  grep -E "$G" "$OUT/ncu-c2-$d.txt" | head -20
done
# The kc = 8 SELL launches: the lock-step CG's come first (skip 20), block CG's after both
# lock-step runs (2 x 455 launches: skip 1000).
for m in "lockstep 20" "block 1000"; do
  set -- $m
  echo "== ncu [b]: SELL SpMV (kc = 8) in $1, 128^3 k = 8"
  timeout 150 $NCU $M --kernel-name-base demangled --kernel-name regex:"k_spmv_sell<double, double, 8>" \
    --launch-skip $2 --launch-count 8 $(bb b) --backend cuda --n 128 --k 8 --reps 1 > "$OUT/ncu-spmv-$1.txt" 2>&1
  grep -E "$G" "$OUT/ncu-spmv-$1.txt" | head -20
done
echo "prof done at $SECONDS s"
for r in 1 2; do
  for d in b0 b; do
    echo "== $d round $r"
    $(bb $d) --backend cuda --n 128 --k 8 --reps 3 --verbose 2>&1 | grep -E "block CG:|^\| (k sep|lock|block)" | tail -4
  done
done
echo "done at $SECONDS s"
