#!/bin/bash
# Nsight Compute on the kc = 8 kernels of bench_block_cg 128^3 k = 8: the lock-step CG's SELL SpMV,
# update_xr and update_p (its launches come first among the kc = 8 ones), and block CG's SpMV
# (after both lock-step runs, 2 x 455 launches). Usage: OUT=... bash device_runs/kc8_prof.sh.
# Carried: .devfull.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/kc8-prof.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git status --short | head
T="bench_block_cg"
. device_runs/ab_build.sh
echo "built at $SECONDS s"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M="--section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats --print-summary per-kernel"
G="^  [^ ]|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occ|L1/TEX Hit|L2 Hit|Memory Throughput|Grid Size"
set -f
for m in "lockstep 20 (k_spmv_sell|k_update_xr|k_update_p)<double, (double, )?\(int\)8>" "block 1000 k_spmv_sell<double, double, \(int\)8>"; do
  set -- $m
  name=$1 skip=$2; shift 2
  echo "== ncu: $name, kernels $*"
  timeout 200 $NCU $M --kernel-name-base demangled --kernel-name regex:"$*" \
    --launch-skip $skip --launch-count 12 $(bb b) --backend cuda --n 128 --k 8 --reps 1 > "$OUT/ncu-$name.txt" 2>&1
  grep -E "$G" "$OUT/ncu-$name.txt" | head -60
done
echo "done at $SECONDS s"
