#!/bin/bash
# A/B of CUDA kernel files in one run: the tree as it is (/tmp/b) against the same tree with the
# files of device_runs/baseline/ put back (/tmp/b0: common.cuh and the .cu files of kernels/cuda
# of the commit before the change, put there by hand, not committed: run 78 used those of b4296b7,
# run 81 common.cuh, pcg_vectors.cu and pcg_persistent.cu of ba6f64c), each benchmark alternated
# base / new, the textbook cuSPARSE PCG in every run. "ocl": the OpenCL suites on NVIDIA's OpenCL.
# "oclbench": bench_api --patterns with CNC_BACKEND=opencl (NVIDIA's OpenCL), base / new.
# "reorder": the whole call with --reorder rcm on the randomly numbered mesh and stencil, base /
# new twice, with cnc's log of the ordering stage (run 91: src/conversion and src/pipeline files).
# Usage: bash device_runs/ab_kernels.sh [tests] [ocl] [oclbench] [reorder] [bench]. Carried: .devfull/root,
# .devfull/matrices.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/ab-kernels.log") 2>&1
bash device_runs/e2e.sh build > /dev/null 2>&1 || { tail -40 "$OUT/e2e-build.log"; exit 1; }
. device_runs/gpu_env.sh
rm -rf /tmp/base && mkdir -p /tmp/base && cp -r "$R"/. /tmp/base/ && rm -rf /tmp/base/build*
# Files at device_runs/baseline/*.cu* go to kernels/cuda (runs 78, 81); a tree under it
# (device_runs/baseline/kernels/opencl/spmv.cl, run 83) goes to the same path.
for f in device_runs/baseline/*; do
  t=$(basename "$f")
  if [ -d "$f" ]; then cp -r "$f" /tmp/base/; else cp "$f" /tmp/base/kernels/cuda/"$t"; fi
done
(cd /tmp/base && cmake -S . -B /tmp/b0 -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg0.log 2>&1 &&
  ninja -C /tmp/b0 bench/cuda/bench_api bench/cuda/bench_complex > /tmp/build0.log 2>&1) ||
  { tail -30 /tmp/build0.log; exit 1; }
for what in "$@"; do
  if [ "$what" = tests ]; then
    echo "== test_backend cuda (widths auto, 2, 32; long rows from 100 entries)"
    for w in 0 2 32; do CNC_CUDA_SPMV_WIDTH=$w /tmp/b/tests/test_backend cuda 2>&1 | grep -E "PASSED|FAILED"; done
    CNC_LONG_ROW_MIN=100 /tmp/b/tests/test_backend cuda 2>&1 | grep -E "PASSED|FAILED"
    echo "== ctest, CUDA forced"
    (cd /tmp/b && CNC_BACKEND=cuda ctest -j4 --timeout 300 --output-on-failure \
       -R "test_solve|test_bad_input|nonsymmetric|opennl|threads|assembly|complex|block|cuda") 2>&1 | tail -4
  fi
  if [ "$what" = ocl ]; then
    echo "== test_backend opencl, test_opencl_kernels (NVIDIA OpenCL)"
    ninja -C /tmp/b tests/test_opencl_kernels > /dev/null 2>&1
    /tmp/b/tests/test_backend opencl 2>&1 | grep -E "^backend|PASSED|FAILED|ERROR"
    echo "== the same with the CSR stream kernel forced (CNC_OPENCL_CSR_WIDTH=-1)"
    CNC_OPENCL_CSR_WIDTH=-1 /tmp/b/tests/test_backend opencl 2>&1 | grep -E "PASSED|FAILED|ERROR"
    CNC_OPENCL_CSR_WIDTH=-1 /tmp/b/tests/test_opencl_kernels 2>&1 | grep -E "PASSED|FAILED|ERROR" | head
    /tmp/b/tests/test_opencl_kernels 2>&1 | grep -E "PASSED|FAILED|ERROR" | head
  fi
  if [ "$what" = oclbench ]; then
    for only in power-law mesh 27-pt; do
      for d in b0 b; do
        echo "-- OpenCL $only [$d]"
        CNC_BACKEND=opencl /tmp/$d/bench/cuda/bench_api --reps 3 --patterns --only "$only" | grep -E "^\| [a-z0-9]"
      done
    done
  fi
  if [ "$what" = reorder ]; then  # host-side ordering stage: whole calls with RCM, base / new
    echo "== ctest -R reorder|complex_zcsr (new tree)"
    (cd /tmp/b && ctest -j4 --timeout 300 --output-on-failure -R "reorder|complex_zcsr") 2>&1 | tail -3
    echo "== test_reorder_rcm: RCM and P A Pᵀ at 1, 2 and all threads (new tree)"
    /tmp/b/tests/test_reorder_rcm 2>&1 | grep -E "thread|stencil|Boost|bandwidth|PASSED|FAILED"
    for only in "mesh 128" "7-pt 192"; do
      for d in b0 b b0 b; do
        echo "-- $only, RCM [$d]"
        /tmp/$d/bench/cuda/bench_api --reps 3 --patterns --only "$only" --reorder rcm --verbose 2>&1 |
          grep -E "^\| [a-z0-9]|ordering rcm.* ms|info: call"
      done
    done
  fi
  if [ "$what" = bench ]; then
    run() {  # label, then bench_api arguments
      local label=$1; shift
      for d in b0 b; do
        echo "-- $label [$d]"
        /tmp/$d/bench/cuda/bench_api --reps 3 "$@" | grep -E "^\| [a-z0-9]"
      done
    }
    run "mesh, RCM" --patterns --only mesh --reorder rcm
    run "7-pt 192 random, RCM" --patterns --only "7-pt 192" --reorder rcm
    run "27-pt" --patterns --only "27-pt"
    run "power-law" --patterns --only power-law
    run "default families" --only "256"
    for d in b0 b; do
      echo "-- complex 7-pt/27-pt/mesh 128 [$d]"
      /tmp/$d/bench/cuda/bench_complex --backend cuda --matrices none --grid27 128 --grid7 128 --mesh 128 --reps 3 2>&1 | grep -E "^\| [a-z0-9]"
    done
  fi
done
