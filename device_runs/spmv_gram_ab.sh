#!/bin/bash
# Block CG with PᵀQ taken in the SpMV's own pass (spmv_gram) and PᵀR carried from the update
# pass's RᵀZ, against the code before, same run: builds /tmp/b (this tree, every target) and
# /tmp/b0 (this tree with .carry/base_bcg/ put back: the files before the change), then the CUDA
# suites of /tmp/b (backend_cuda_no_persistent among them: spmv_gram must be taken there), and
# bench_block_cg 128^3 k = 8 (CUDA) base / new / base / new, the phases logged once each.
# Usage: OUT=... bash device_runs/spmv_gram_ab.sh. Carry [".devfull", ".carry"].
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/spmv-gram-ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1
T="" T0=bench_block_cg BASE=.carry/base_bcg
. device_runs/ab_build.sh
echo "built at $SECONDS s"
cuda_suites
grep -E "backend_cuda|block" "$OUT/ctest-cuda.txt" "$OUT/ctest-forced.txt" | head -12
for d in b0 b; do
  echo "== bench_block_cg --verbose [$d]"
  $(bb $d) --backend cuda --n 128 --k 8 --reps 1 --verbose 2>&1 | grep -E "block CG: [0-9]+ iter|^\| block" | head -3
done
for d in b0 b b0 b; do
  echo "== bench_block_cg [$d]"
  for k in 8 4; do $(bb $d) --backend cuda --n 128 --k $k --reps 3 | grep -E "^\| [klb]"; done
done
echo "done at $SECONDS s"
