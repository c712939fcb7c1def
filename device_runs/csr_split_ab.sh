#!/bin/bash
# A/B: the CSR SpMV with a row's kc values split over lanes where they span 32 bytes or more (this
# tree) against one lane's share of a row holding all kc values (.carry/base_csr: spmv_csr.cu
# before). Every CUDA suite of this tree first, Nsight Compute on the kc = 8 CSR SpMV of the
# lock-step CG (both builds), then bench_block_cg 128^3 --format csr at k = 8 and 4 (alternated
# twice) and --format sell at k = 8 (the SELL kernel's shared helpers).
# Usage: OUT=... bash device_runs/csr_split_ab.sh. Carried: .devfull, .carry.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/csr-split-ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git status --short | head
T="" T0=bench_block_cg BASE=.carry/base_csr
. device_runs/ab_build.sh
echo "built at $SECONDS s"
cuda_suites
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M="--section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --print-summary per-kernel"
G="^  [^ ]|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|L1/TEX Hit|L2 Hit|Memory Throughput"
for d in b0 b; do
  echo "== ncu [$d]: the kc = 8 CSR SpMV of the lock-step CG"
  timeout 120 $NCU $M --kernel-name-base demangled --kernel-name regex:"k_spmv_csr<double, double, \(int\)[0-9]+, \(int\)8>" \
    --launch-skip 20 --launch-count 6 $(bb $d) --backend cuda --n 128 --k 8 --reps 1 --format csr > "$OUT/ncu-csr-$d.txt" 2>&1
  grep -E "$G" "$OUT/ncu-csr-$d.txt" | head -14
done
for r in 1 2; do
  for d in b0 b; do
    for k in 8 4; do
      echo "== $d csr k = $k round $r"
      $(bb $d) --backend cuda --n 128 --k $k --reps 3 --format csr 2>&1 | grep -E "^\| (k sep|lock|block)" | head -3
    done
  done
done
for d in b0 b; do
  echo "== $d sell k = 8"
  $(bb $d) --backend cuda --n 128 --k 8 --reps 3 --format sell 2>&1 | grep -E "^\| (k sep|lock|block)" | head -3
done
echo "done at $SECONDS s"
