#!/bin/bash
# Issue 11: the reverse Cuthill–McKee ordering made on the CUDA device (backend::rcm_device,
# kernels/cuda/rcm.cu: one cooperative launch, the host's rcm_order bit for bit) from the upload
# of the caller's CSR, instead of on the host. Builds /tmp/b from this tree and, when
# .carry/baseline_rcm holds the files of the code before (untracked, not committed), /tmp/b0 from
# them, then
#   tests: test_backend cuda 'test_device_*' (the device's ordering and P A Pᵀ against the host's),
#          test_reorder_rcm, test_solve_reorder (CUDA, automatic, OpenCL), test_solve_iterate
#          (progress callbacks reading x with RCM), the fault-injection
#          runs with an allocation failing in the ordering (4), in P A Pᵀ (9) and in the
#          ordering's upload for the device's renumbering of b and x (37);
#   bench: the whole call with --reorder rcm on the randomly numbered mesh and 7-point stencil
#          and the power-law graph, base / new alternated twice, the textbook cuSPARSE PCG in
#          each run, with cnc's log of the ordering and intake stages.
#   numbering_fault: the device allocation whose failure the host's renumbering of b and x
#          answers (the device's renumbering, set_numbering, has no room).
# Usage: OUT=... [PROBLEMS="mesh 128;7-pt 192"] bash device_runs/device_rcm.sh [tests]
#        [numbering_fault] [bench]
# (PROBLEMS: bench_api --only names, ';' between; default the three above). Carried: .devfull,
# .carry.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/device-rcm.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
T="cnc test_backend test_solve_reorder test_solve_iterate test_reorder_rcm test_fault_injection bench/cuda/bench_api"
if [ -d .carry/baseline_rcm ]; then T0=bench/cuda/bench_api BASE=.carry/baseline_rcm; fi
. device_runs/ab_build.sh
echo "built at ${SECONDS} s"
for what in "$@"; do
  if [ "$what" = tests ]; then
    echo "== test_backend cuda 'test_device_*'"
    timeout 300 /tmp/b/tests/test_backend cuda 'test_device_*' 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|differs|Failure|note|refused" | head -20
    echo "== test_reorder_rcm"
    timeout 300 /tmp/b/tests/test_reorder_rcm 2>&1 | grep -E "PASSED|FAILED|ERROR|differs" | head -6
    echo "== test_solve_reorder, CUDA forced, automatic, NVIDIA's OpenCL forced"
    for be in cuda auto opencl; do
      echo "-- CNC_BACKEND=$be"
      CNC_BACKEND=$be timeout 300 /tmp/b/tests/test_solve_reorder 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|Failure" | head -12
    done
    echo "== test_solve_iterate (progress callbacks, RCM among them)"
    timeout 300 /tmp/b/tests/test_solve_iterate 2>&1 | grep -E "SKIP|PASSED|FAILED|ERROR|Failure|RCM" | head -12
    echo "== fault injection, RCM on CUDA"
    (cd /tmp/b && ctest --timeout 300 --output-on-failure -R 'fault_cuda_rcm') 2>&1 |
      grep -E "tests passed|tests failed|Failed|absorbed|not worked|ordering|P A P" | cut -c1-300 | head -12
    echo "tests done at ${SECONDS} s"
  fi
  if [ "$what" = numbering_fault ]; then
    # Which device allocation of a reordered CUDA solve is the ordering's upload for the device's
    # renumbering of b and x (set_numbering): the first N whose failure the log answers with the
    # host's renumbering, the solve correct (for the CTest entry).
    for n in $(seq 10 60); do
      if CNC_FAULT_INJECT=device-alloc:$n CNC_BACKEND=auto timeout 120 /tmp/b/tests/test_fault_injection cuda rcm \
           "b and x renumbered on the host" > /tmp/fault-$n.log 2>&1; then
        echo "device-alloc:$n absorbed by the host's renumbering"; grep -m1 -o "no room[^)]*)" /tmp/fault-$n.log; break
      fi
    done
  fi
  if [ "$what" = bench ]; then
    IFS=';' read -ra problems <<< "${PROBLEMS:-mesh 128;7-pt 192;power-law 2M}"
    for only in "${problems[@]}"; do
      for d in b0 b b0 b; do
        [ -d /tmp/$d ] || continue
        echo "-- $only, RCM [$d]"
        timeout 200 /tmp/$d/bench/cuda/bench_api --reps 3 --patterns --only "$only" --reorder rcm --verbose 2>&1 |
          grep -E "^\| [a-z0-9]|^## |ordering .* ms|device intake|P A P|not made|info: call"
      done
    done
    echo "bench done at ${SECONDS} s"
  fi
done
