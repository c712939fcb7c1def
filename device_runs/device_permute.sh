#!/bin/bash
# Issue 11: P A Pᵀ of a reordered real matrix made on the device (permute_device_csr, after the
# caller's CSR is uploaded as it is) instead of on the host. Builds /tmp/b from this tree and
# /tmp/b0 from it with device_runs/baseline_perm/'s files put back (the files before the change,
# untracked, not committed), then
#   tests: test_backend cuda 'test_device_*' (P A Pᵀ on the device against the host's, array for
#          array), the reorder ctests (automatic backend, and CUDA forced with the public-API
#          suites);
#   bench: the whole call with --reorder rcm on the randomly numbered mesh and 7-point stencil,
#          base / new alternated twice, the textbook cuSPARSE PCG in each run, with cnc's log of
#          the ordering and intake stages;
#   faults: test_fault_injection cuda rcm with the N-th device allocation failing, N = 1..16
#          (which N falls in P A Pᵀ on the device, worked around on the host).
# Usage: OUT=... [FULL=1] bash device_runs/device_permute.sh [tests] [bench] [faults] (FULL: every
# target built, the CUDA-forced public-API suites and test_backend cuda in full). Carried: .devfull/mid,
# .devfull/matrices.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD
exec > >(tee -a "$OUT/device-permute.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
. device_runs/gpu_env.sh
[ -e ../shared ] || { mkdir -p ../shared/data && ln -s $R/.devfull/matrices ../shared/data/matrices; }
T="cnc test_backend test_solve_reorder test_reorder_rcm test_fault_injection bench/cuda/bench_api"
cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
ninja -C /tmp/b ${FULL:+all} $T > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
if [ -d device_runs/baseline_perm ]; then
  rm -rf /tmp/src0 && mkdir -p /tmp/src0 && cp -r "$R"/. /tmp/src0/ && rm -rf /tmp/src0/build* /tmp/src0/.devfull
  cp -r device_runs/baseline_perm/. /tmp/src0/
  (cmake -S /tmp/src0 -B /tmp/b0 -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg0.log 2>&1 &&
    ninja -C /tmp/b0 bench/cuda/bench_api > /tmp/build0.log 2>&1) || { tail -30 /tmp/build0.log; exit 1; }
fi
echo "built at ${SECONDS} s"
for what in "$@"; do
  if [ "$what" = tests ]; then
    echo "== test_backend cuda 'test_device_*'"
    /tmp/b/tests/test_backend cuda 'test_device_*' 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|differs|Failure" | head -12
    echo "== test_solve_reorder, test_reorder_rcm (automatic backend: every backend present)"
    /tmp/b/tests/test_solve_reorder 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|Failure" | head -12
    /tmp/b/tests/test_reorder_rcm 2>&1 | grep -E "PASSED|FAILED|ERROR" | head -4
    echo "== ctest, CUDA forced (public-API suites; all of them with FULL=1)"
    R_=${FULL:+"test_solve|test_bad_input|nonsymmetric|demo|opennl|threads|assembly|complex|block|cuda"}
    (cd /tmp/b && CNC_BACKEND=cuda ctest -j8 --timeout 300 --output-on-failure \
      -R "${R_:-^(test_solve_reorder|test_reorder_rcm)$}") 2>&1 |
      grep -E "tests passed|tests failed|\*\*\*|Failed|Not Run|Skipped"
    if [ -n "${FULL:-}" ]; then
      echo "== test_backend cuda (every test)"
      /tmp/b/tests/test_backend cuda 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|Failure" | head -12
    fi
    echo "tests done at ${SECONDS} s"
  fi
  if [ "$what" = faults ]; then
    nvcc --version | tail -2
    for n in $(seq 1 16); do
      echo "-- device-alloc:$n, RCM"
      CNC_FAULT_INJECT=device-alloc:$n CNC_BACKEND=auto /tmp/b/tests/test_fault_injection cuda rcm \
        "P A Pᵀ not made on the device" 2>&1 |
        grep -E "absorbed|injected|PASSED|FAILED|Failure|P A P|host path" | cut -c1-300 | head -6
    done
    echo "faults done at ${SECONDS} s"
  fi
  if [ "$what" = bench ]; then
    for only in "mesh 128" "7-pt 192"; do
      for d in b0 b b0 b; do
        [ -d /tmp/$d ] || continue
        echo "-- $only, RCM [$d]"
        /tmp/$d/bench/cuda/bench_api --reps 3 --patterns --only "$only" --reorder rcm --verbose 2>&1 |
          grep -E "^\| [a-z0-9]|^## |ordering rcm.* ms|device intake|P A P|info: call"
      done
    done
    echo "bench done at ${SECONDS} s"
  fi
done
