#!/bin/bash
# Issue 11 on the GPU machine, the final tree: every suite (auto backend, CUDA forced, NVIDIA's
# OpenCL, Python) or the benchmarks: bench_api --patterns on CUDA (AUTO and forced RCM on the
# randomly numbered families) and on NVIDIA's OpenCL, bench_cpu_patterns on the 16 host cores.
# Carried: .devfull/ (see e2e.sh; .devfull/matrices holds a copy of shared/data/matrices).
# Usage: bash device_runs/patterns_final.sh tests|bench
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
what=${1:-tests}
exec > >(tee -a "$OUT/final-$what.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
B=/tmp/b/bench/cuda/bench_api
if [ "$what" = tests ]; then
  bash device_runs/e2e.sh tests 2>&1 | grep -vE "^\s+Start|Test +#[0-9]+: .* Passed"
  echo "== test_backend opencl (NVIDIA) with every row of more than 100 entries cut"
  CNC_LONG_ROW_MIN=100 /tmp/b/tests/test_backend opencl 2>&1 | tail -3
  exit 0
fi
echo "== CUDA: bench_api --patterns --reps 3"
$B --patterns --reps 3 --verbose --mtx-dir "$R/.devfull/matrices" 2>&1 | grep -v "^cnc info"
echo "== CUDA: forced RCM on the randomly numbered families"
$B --patterns --reps 3 --reorder rcm --only random | grep -E "^\|"
echo "== NVIDIA OpenCL: bench_api --patterns (power-law, 27-pt) with CNC_BACKEND=opencl"
for w in power-law "27-pt"; do
  CNC_BACKEND=opencl $B --patterns --reps 3 --only "$w" | grep -E "^\| [a-z0-9]"
done
echo "== CPU backend, 16 threads: bench_cpu_patterns"
/tmp/b/bench/bench_cpu_patterns --threads 16 --reps 3 2>&1 | tail -30
