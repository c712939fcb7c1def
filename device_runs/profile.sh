#!/bin/bash
# Issue 11 runs 33-34: the power-law whole call divided as cnc's log divides it, and, with Nsight
# Compute (the machine has ncu), the time and throughput of each kernel of a power-law 2M solve,
# cnc's and the textbook cuSPARSE PCG's. Carried: .devfull/.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/profile.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
B=/tmp/b/bench/cuda/bench_api
echo "== power-law, verbose"
$B --patterns --reps 3 --verbose --only power-law 2>&1 |
  grep -E "cnc info: (device|call)|^\| power|to the tolerance"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
echo "== ncu: power-law 2M, kernels of the fixed-iteration solves"
timeout 400 $NCU --section SpeedOfLight --print-summary per-kernel --launch-skip 100 \
  --launch-count 600 $B --patterns --reps 1 --only "power-law 2M" > "$OUT/ncu-powerlaw.txt" 2>&1
grep -E "^  [^ ]|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Invocations" \
  "$OUT/ncu-powerlaw.txt" | head -150
