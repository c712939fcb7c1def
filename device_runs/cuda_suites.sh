#!/bin/bash
# The CUDA suites of the whole tree on the GPU machine (a check after a change to what every CUDA
# solve runs): builds /tmp/b with every target, then the ctest entries named *cuda* and the
# public-API suites forced onto CUDA (CNC_BACKEND=cuda). Carried: .devfull (gpu_env.sh).
# Usage: OUT=... bash device_runs/cuda_suites.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/cuda-suites.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T=""
. device_runs/ab_build.sh
echo "built at ${SECONDS} s"
cuda_suites
