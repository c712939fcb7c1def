#!/bin/bash
# The CUDA kernel tests and the internal-loop benchmark (bench/cuda/bench_cuda) on the GPU
# machine, from the same CMake build as device_runs/e2e.sh (/tmp/b; carry [".devfull"]).
#   bash device_runs/cuda_device.sh tests|bench|all     (logs under $OUT)
# BENCH_ARGS passes options to bench_cuda.
set -uo pipefail
MODE=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
exec > >(tee "$OUT/cuda-run.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
. device_runs/gpu_env.sh
if [ "$MODE" != bench ]; then
  echo "== ctest -R cuda"
  (cd /tmp/b && ctest --output-on-failure -R "cuda") | tail -20
fi
if [ "$MODE" != tests ]; then
  echo "== bench_cuda ${BENCH_ARGS:-}"
  /tmp/b/bench/cuda/bench_cuda ${BENCH_ARGS:-} | tee "$OUT/bench.txt"
  echo "bench_cuda exit code: $?"
fi
