#!/bin/bash
# Issue 11: NVIDIA OpenCL on the power-law 2M graph under several long-row thresholds
# (CNC_LONG_ROW_MIN; -1 cuts none, the group ranges stay balanced by work), through cncSolveCSR
# against the textbook cuSPARSE PCG in the same run. Carried: .devfull/.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/opencl-longrows.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
for m in default -1 64 512 4096; do
  echo "== CNC_BACKEND=opencl CNC_LONG_ROW_MIN=$m"
  if [ $m = default ]; then unset CNC_LONG_ROW_MIN; else export CNC_LONG_ROW_MIN=$m; fi
  CNC_BACKEND=opencl /tmp/b/bench/cuda/bench_api --patterns --reps 3 --verbose --only "power-law 2M" |
    grep -E "^\| power|200 its"
done
