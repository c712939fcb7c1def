#!/bin/bash
# A/B: block CG's fused Gram products on the FP64 tensor cores (this tree) against the running sums
# (.carry/base_mma: block.cu before), plus this tree with two update steps a thread (b2):
# tests of the new build (test_backend cuda with test_block_fused, ctest block CG on CUDA), Nsight
# Compute on the fused kernels of b0 and b, bench_block_cg 128^3 k = 8 alternated twice.
# Usage: OUT=... bash device_runs/gram_mma_ab.sh. Carried: .devfull, .carry.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/gram-mma-ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git status --short | head
T="bench_block_cg test_backend test_block_cg" T0=bench_block_cg BASE=.carry/base_mma
. device_runs/ab_build.sh
rm -rf /tmp/v2 && mkdir -p /tmp/v2 && cp -r "$PWD"/. /tmp/v2/ && rm -rf /tmp/v2/build*
sed -i 's/^constexpr int update_unroll = 1;/constexpr int update_unroll = 2;/' /tmp/v2/kernels/cuda/block.cu
grep -n "^constexpr int update_unroll" /tmp/v2/kernels/cuda/block.cu
(cd /tmp/v2 && cmake -S . -B /tmp/b2 -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg2.log 2>&1 &&
  ninja -C /tmp/b2 bench_block_cg > /tmp/build2.log 2>&1) || { tail -30 /tmp/build2.log; }
echo "built at $SECONDS s"
echo "== test_backend cuda"
timeout 300 /tmp/b/tests/test_backend cuda 2>&1 | grep -E "PASSED|FAILED|ERROR|Failure|block_fused" | head
echo "== ctest block CG on CUDA"
(cd /tmp/b && CNC_BACKEND=cuda ctest -j4 --timeout 300 --output-on-failure -R block) 2>&1 | tail -4
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for d in b0 b; do
  echo "== ncu [$d]: block CG's fused kernels, 128^3 k = 8"
  timeout 150 $NCU --section SpeedOfLight --section Occupancy --print-summary per-kernel \
    --kernel-name regex:"k_block_(grams|update)" --launch-skip 12 --launch-count 16 \
    $(bb $d) --backend cuda --n 128 --k 8 --reps 1 > "$OUT/ncu-$d.txt" 2>&1
  grep -E "^  [^ ]|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occ" "$OUT/ncu-$d.txt" | head -40
done
echo "prof done at $SECONDS s"
for r in 1 2; do
  for d in b0 b b2; do
    [ -x "$(bb $d)" ] || continue
    echo "== $d round $r"
    $(bb $d) --backend cuda --n 128 --k 8 --reps 3 --verbose 2>&1 | grep -E "block CG:|^\| (k sep|lock|block)" | tail -4
  done
done
echo "done at $SECONDS s"
