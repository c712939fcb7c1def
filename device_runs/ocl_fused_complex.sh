#!/bin/bash
# Issue 13: the OpenCL backend's fused complex inner products and combinations (vec_zdot_part,
# vec_zcombine: device_system::zdots, zcombine) against the compositions over the real operations
# and zaxpby that krylov_ops used before on OpenCL. Builds /tmp/b from this tree and /tmp/b0 from
# HEAD with device_runs/baseline_ofc/'s files put back (the commit before the change, untracked,
# not committed), then
#   tests: test_backend opencl 'test_zcsr*' (NVIDIA OpenCL), test_complex opencl, and the complex
#          and Krylov ctests with CNC_BACKEND=opencl;
#   bench: bench/python/bench_complex_krylov.py --backend opencl, base / new alternated twice.
# Usage: OUT=... bash device_runs/ocl_fused_complex.sh [tests] [bench]. Carried: .devfull/mid,
# .devfull/matrices.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/ocl-fused-complex.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
. device_runs/gpu_env.sh
M=$R/.devfull/matrices
cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
ninja -C /tmp/b cnc test_backend test_complex > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
if [ -d device_runs/baseline_ofc ]; then
  rm -rf /tmp/src0 && mkdir -p /tmp/src0 && git archive HEAD | tar -x -C /tmp/src0
  cp -r device_runs/baseline_ofc/. /tmp/src0/
  (cmake -S /tmp/src0 -B /tmp/b0 -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg0.log 2>&1 &&
    ninja -C /tmp/b0 cnc > /tmp/build0.log 2>&1) || { tail -30 /tmp/build0.log; exit 1; }
fi
echo "built at ${SECONDS} s"
for what in "$@"; do
  if [ "$what" = tests ]; then
    /tmp/b/tests/test_backend opencl 'test_zcsr*' 2>&1 | grep -E "fused|no fused|PASSED|FAILED|ERROR" | head -8
    /tmp/b/tests/test_complex opencl 2>&1 | grep -E "PASSED|FAILED|ERROR" | head -8
    (cd /tmp/b && ninja -C /tmp/b > /tmp/build2.log 2>&1; CNC_BACKEND=opencl ctest -j8 --timeout 300 \
      --output-on-failure -R "complex|krylov|nonsymmetric|bicgstab|gmres") 2>&1 | tail -6
    echo "tests done at ${SECONDS} s"
  fi
  if [ "$what" = bench ]; then
    for d in b0 b b0 b; do
      [ -d /tmp/$d ] || continue
      echo "== bench_complex_krylov.py --backend opencl [$d]"
      CNC_LIBRARY=/tmp/$d/libcnc.so PYTHONPATH=bindings/python python3 \
        bench/python/bench_complex_krylov.py --sizes 100,160 --reps 3 --backend opencl \
        --matrices "$M" --scipy-max-n 0 2>&1 | grep -v Warn
      echo "(${SECONDS} s)"
    done
  fi
done
