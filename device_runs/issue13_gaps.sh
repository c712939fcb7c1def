#!/bin/bash
# Issue 13's unmeasured corners, one run on the GPU machine:
#   refactor: test_backend opencl 'test_vector_surface' (the dots' shared tail, finish_dots) on
#             NVIDIA's OpenCL, up to 150 s;
#   width:    the complex CSR kernel's lanes a row on rows far longer than the 7-27 entries it was
#             tuned on: bench_complex on the magnetic 125-point stencil (the 5 x 5 x 5 box, ~110
#             complex entries a row) at 64^3, OpenCL with CNC_OPENCL_CSR_WIDTH automatic, 4, 8,
#             16, 32, CUDA with CNC_CUDA_SPMV_WIDTH automatic, 8, 16, 32; the textbook cuSPARSE
#             complex PCG in every run;
#   cols:     where COLS (a work-item per row and column) starts to pay on NVIDIA's OpenCL:
#             bench_block_cg 128^3 lock-step at k = 10, 12, 14 with CNC_OPENCL_SPMV_COLS=0|1,
#             alternated twice (runs 109-111 measured 4, 8 and 16 only);
#   rule:     the complex width rule after run 120 (a lane for 6 entries of the mean row, at least
#             4): the 125-point stencil automatic against 8 lanes (the rule before), alternated
#             twice; the 7-point 128^3 and 27-point 96^3 automatic (their widths unchanged: 4);
#             the complex tests on NVIDIA's OpenCL.
# Usage: OUT=... bash device_runs/issue13_gaps.sh [refactor] [width] [cols] [rule]. Carried:
# .devfull/mid.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/issue13-gaps.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T="cnc test_backend bench_complex bench_block_cg"
. device_runs/ab_build.sh
echo "built at ${SECONDS} s"
BC=$(find /tmp/b -name bench_complex -type f | head -1)
P="--grid7 0 --grid27 0 --grid125 64 --matrices none --reps 3"
for what in "$@"; do
  if [ "$what" = refactor ]; then
    echo "== test_backend opencl test_vector_surface (NVIDIA OpenCL, 150 s at most)"
    timeout 150 /tmp/b/tests/test_backend opencl 'test_vector_surface' 2>&1 |
      grep -E "PASSED|FAILED|ERROR|Failure" | head -6 || echo "(cut by the time limit)"
    echo "(${SECONDS} s)"
  fi
  if [ "$what" = width ]; then
    for w in 0 4 8 16 32; do
      echo "== OpenCL, CNC_OPENCL_CSR_WIDTH=$w (0: automatic)"
      CNC_OPENCL_CSR_WIDTH=$w $BC --backend opencl $P 2>&1 | grep -E "^\| magnetic" | head -4
    done
    for w in 0 8 16 32; do
      echo "== CUDA, CNC_CUDA_SPMV_WIDTH=$w (0: automatic)"
      CNC_CUDA_SPMV_WIDTH=$w $BC --backend cuda $P 2>&1 | grep -E "^\| magnetic" | head -4
    done
    echo "(${SECONDS} s)"
  fi
  if [ "$what" = rule ]; then
    for round in 1 2; do
      for w in 8 0; do
        echo "== OpenCL, 125-point, CNC_OPENCL_CSR_WIDTH=$w (0: automatic), round $round"
        CNC_OPENCL_CSR_WIDTH=$w $BC --backend opencl $P 2>&1 | grep -E "^\| magnetic" | head -1
      done
    done
    echo "== OpenCL, 7-point 128^3 and 27-point 96^3, automatic"
    $BC --backend opencl --grid7 128 --grid27 96 --matrices none --reps 3 2>&1 | grep -E "^\| magnetic" | head -2
    echo "== test_backend opencl 'test_zcsr*', ctest complex_opencl complex_zcsr_opencl (NVIDIA OpenCL)"
    /tmp/b/tests/test_backend opencl 'test_zcsr*' 2>&1 | grep -E "PASSED|FAILED|ERROR|Failure" | head -6
    (cd /tmp/b && ninja test_complex test_complex_zcsr > /dev/null 2>&1 &&
      ctest --timeout 300 --output-on-failure -R '^(complex_opencl|complex_zcsr_opencl)$') 2>&1 |
      grep -E "tests passed|Failed|\*\*\*"
    echo "(${SECONDS} s)"
  fi
  if [ "$what" = cols ]; then
    cols_ab 10 12 14
    echo "(${SECONDS} s)"
  fi
done
