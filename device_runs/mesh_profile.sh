#!/bin/bash
# Issue 11, session of 2026-11-27: the suites on the GPU (the CUDA edits since run 74 unverified)
# and where a reordered random mesh's iteration goes: Nsight Compute over the kernels of the fixed
# 200-iteration solve of "mesh 128^3 random" with RCM (cnc's CSR SpMV vs its vector steps).
# Usage: bash device_runs/mesh_profile.sh [tests] [profile]. Carried: .devfull/root, .devfull/matrices.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/mesh-profile.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
B=/tmp/b/bench/cuda/bench_api
for what in "$@"; do
  if [ "$what" = tests ]; then
    bash device_runs/e2e.sh tests 2>&1 | grep -vE "^\s+Start|Test +#[0-9]+: .* Passed"
  fi
  if [ "$what" = profile ]; then
    echo "== mesh 128 random, RCM and natural; mesh 160"
    $B --patterns --reps 3 --only "mesh" --reorder rcm | grep -E "^\|"
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    timeout 300 $NCU --section SpeedOfLight --section MemoryWorkloadAnalysis --print-summary per-kernel \
      --launch-skip 150 --launch-count 40 $B --patterns --reps 1 --only "mesh 128" --reorder rcm \
      > "$OUT/ncu-mesh.txt" 2>&1
    grep -E "^  [^ ]|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Invocations" \
      "$OUT/ncu-mesh.txt" | head -120
  fi
done
