#!/bin/bash
# Issue 11, the intake of long rows on the GPU machine: the CUDA suites that cross the device
# check (scan_csr), the diagonal and the format screen, then bench_api --patterns on the power-law
# and randomly numbered families with cnc's log (where the whole call's time goes), textbook
# cuSPARSE PCG in the same run. Carried: .devfull/ (see e2e.sh).
# Usage: bash device_runs/intake.sh [bench_api --only word...]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/intake.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
echo "== test_backend cuda"
/tmp/b/tests/test_backend cuda 2>&1 | tail -3
echo "== CUDA-forced solve, bad-input and conversion suites"
(cd /tmp/b && CNC_BACKEND=cuda ctest -j6 --timeout 300 --output-on-failure \
   -R "test_solve|test_bad_input|assembly|nonsymmetric") 2>&1 | tail -12
words=("$@"); [ $# -eq 0 ] && words=(power-law random)
for w in "${words[@]}"; do
  echo "== bench_api --patterns --only $w"
  /tmp/b/bench/cuda/bench_api --patterns --reps 3 --verbose --only "$w" 2>&1 |
    grep -vE "^cnc (info|debug): (solving|max iterations|converged)"
done
