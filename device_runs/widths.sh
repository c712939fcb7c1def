#!/bin/bash
# Issue 11 run 32: where the power-law and randomly numbered meshes' time goes: cnc's log of the
# whole call (power-law 100K / 2M), and the CSR sub-warp width (CNC_CUDA_SPMV_WIDTH) against the
# automatic one, on the power-law 2M graph and the random mesh after RCM. Carried: .devfull/.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/widths.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
B=/tmp/b/bench/cuda/bench_api
echo "== power-law, verbose"
$B --patterns --reps 3 --verbose --only power-law 2>&1 | grep -E "cnc info|^\| power"
for w in 2 4 8 16 32; do
  echo "== power-law 2M, CNC_CUDA_SPMV_WIDTH=$w"
  CNC_CUDA_SPMV_WIDTH=$w $B --patterns --reps 3 --only "power-law 2M" | grep -E "^\| power-law"
done
for w in 0 2 8 16; do
  echo "== mesh 128^3 random, rcm, CNC_CUDA_SPMV_WIDTH=$w"
  CNC_CUDA_SPMV_WIDTH=$w $B --patterns --reps 3 --reorder rcm --only "mesh 128" | grep -E "^\| mesh"
done
