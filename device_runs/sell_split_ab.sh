#!/bin/bash
# A/B: the SELL SpMV with a row's kc values split over lanes (16 bytes a lane, kc * value size >=
# 32 bytes; this tree) against one lane a row (.carry/base_split: spmv_sell.cu before). Every
# CUDA suite of this tree first (ctest -R cuda, the public-API suites forced onto CUDA), Nsight
# Compute on the kc = 8 SELL SpMV of the lock-step CG, then bench_block_cg 128^3 at k = 8 (both
# builds alternated twice) and k = 4. Usage: OUT=... bash device_runs/sell_split_ab.sh.
# Carried: .devfull, .carry.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/sell-split-ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git status --short | head
T="" T0=bench_block_cg BASE=.carry/base_split
. device_runs/ab_build.sh
echo "built at $SECONDS s"
cuda_suites
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M="--section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats --print-summary per-kernel"
G="^  [^ ]|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|L1/TEX Hit|L2 Hit|Memory Throughput|Grid Size"
echo "== ncu [b]: the kc = 8 SELL SpMV of the lock-step CG"
timeout 150 $NCU $M --kernel-name-base demangled --kernel-name regex:"k_spmv_sell.*<double, double, \(int\)8>" \
  --launch-skip 20 --launch-count 6 $(bb b) --backend cuda --n 128 --k 8 --reps 1 > "$OUT/ncu-split.txt" 2>&1
grep -E "$G" "$OUT/ncu-split.txt" | head -20
for r in 1 2; do
  for d in b0 b; do
    echo "== $d k = 8 round $r"
    $(bb $d) --backend cuda --n 128 --k 8 --reps 3 2>&1 | grep -E "^\| (k sep|lock|block)|iterations /" | head -4
  done
done
for d in b0 b; do
  echo "== $d k = 4"
  $(bb $d) --backend cuda --n 128 --k 4 --reps 3 2>&1 | grep -E "^\| (k sep|lock|block)" | head -3
done
echo "done at $SECONDS s"
