#!/bin/bash
# Issue 13's complex benchmark on the GPU machine: bench/cuda/bench_complex (cncSolveCSRComplex
# against a textbook cuSPARSE + cuBLAS complex PCG, and against cnc's own real-valued solve of the
# same graph) with cnc on CUDA, on the GPU's OpenCL and on the CPU; the textbook peer is on CUDA
# in every run. Magnetic Laplacians of >= 2 M rows (7-point and 27-point 128^3, the mesh 128^3 on
# CUDA; 27-point 96^3 on OpenCL and the CPU, to keep the script short), and on CUDA the complex
# Matrix Market file(s) of the matrices folder (carried as .devfull/matrices, else
# ../shared/data/matrices). Same configuration as device_runs/e2e.sh
# (carry [".devfull"]), building only bench_complex. About 5 minutes on an H100 after the build.
# Logs: $OUT/complex_bench.log (everything) and $OUT/complex-bench-{cuda,opencl,cpu}.txt (each
# run's tables, to copy into device_runs/logs/ as complex-bench-<backend>-<gpu>-<run>.txt).
# Usage: OUT=... bash device_runs/complex_bench.sh [reps] [all|cuda|others|whole]  (others: OpenCL
# and CPU; whole: the CUDA problems alone, with --verbose)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
reps=${1:-3}
what=${2:-all}
exec > >(tee -a "$OUT/complex_bench.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc
git log --oneline -1
. device_runs/gpu_env.sh
if [ ! -f /tmp/b/build.ninja ]; then
  cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
fi
ninja -C /tmp/b bench_complex test_backend test_complex test_complex_zcsr > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -80; exit 1; }
# The complex tests on the GPU first (CUDA and NVIDIA's OpenCL): the contract suite has the
# zcsr kernels against a plain complex loop, the API tests against a dense complex solve.
# TESTS: another ctest regex (the OpenCL contract suite alone takes ~150 s).
(cd /tmp/b && ctest --output-on-failure -R "${TESTS:-^(backend_cuda|backend_opencl|complex_cuda|complex_opencl|complex_zcsr_cuda|complex_zcsr_opencl)$}") 2>&1 | tail -15
M=$R/.devfull/matrices; [ -d "$M" ] || M=$R/../shared/data/matrices
BC=/tmp/b/bench/cuda/bench_complex
run() {  # backend, then bench_complex's options
  local backend=$1; shift
  echo "== bench_complex --backend $backend $*"
  $BC --backend "$backend" --reps "$reps" "$@" | tee "$OUT/complex-bench-$backend.txt"
  echo "(${SECONDS} s since the start)"
}
if [[ $what == whole ]]; then  # the CUDA problems only, with cnc's choices (--verbose)
  run cuda --grid7 128 --grid27 128 --mesh 128 --matrices "$M" --verbose
  exit 0
fi
if [[ $what != others ]]; then
run cuda --grid7 128 --grid27 128 --mesh 128 --matrices "$M"
# The former real-equivalent storage (BCRS 2x2, forced) on the same problems, same run.
$BC --backend cuda --reps "$reps" --format bcrs2 --grid7 128 --grid27 128 --mesh 0 --matrices none \
  | tee "$OUT/complex-bench-cuda-bcrs2.txt"
fi
[[ $what == cuda ]] && exit 0
run opencl --grid7 128 --grid27 96 --matrices none
run cpu --grid7 128 --grid27 96 --matrices none
