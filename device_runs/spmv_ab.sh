#!/bin/bash
# A/B of a change to the CUDA SpMV kernels (kernels/cuda/spmv_*.cu) on the GPU machine: this
# tree's build (/tmp/b) against the code before, built beside it (/tmp/b0) from this tree with
# $BASE put back over it (default .carry/baseline_z/: the files before the change, untracked),
# alternated twice; bench_complex --backend cuda per iteration and whole call on the magnetic
# Laplacians 7-point, 27-point and mesh 128^3, textbook cuSPARSE complex PCG in each run. First the
# complex GPU suites of this tree (CUDA contract suite with the zcsr kernels against a plain complex
# loop, the API tests against a dense complex solve). Carry [".devfull", ".carry"].
# modes: the matrix loads' cache hint (CNC_CUDA_STREAM_LOADS: 0 __ldg, 1 streaming, the default)
# on the complex 27-point and 7-point 128^3 and through bench_api on the power-law graphs, the
# mesh and 27-point 160^3, the reordered mesh 128^3 and 7-point 192^3 (MR rounds, default 1;
# MODES, default "0 1"). Runs 140-142 (logs h200-run14[0-2]*) also tried modes 2 (L1::no_allocate)
# and 3 (x streaming in the vector steps as well), since removed.
# headline: bench_api --only "7-pt 256" with the two settings, then the default bench_api tables.
# Usage: OUT=... bash device_runs/spmv_ab.sh [tests] [ab] [modes] [headline]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/spmv_ab.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
git log --oneline -1
T="bench_complex bench/cuda/bench_api test_backend test_complex test_complex_zcsr"
case " $* " in *" ab "*) T0="bench_complex" ;; esac  # the code before: only for ab
BASE=${BASE:-.carry/baseline_z} . device_runs/ab_build.sh
echo "(built in ${SECONDS} s)"
for what in "$@"; do
  case $what in
    tests)
      (cd /tmp/b && CNC_BACKEND=cuda ctest --output-on-failure --timeout 300 \
        -R "^(backend_cuda|complex_cuda|complex_zcsr_cuda)$") 2>&1 | tail -8
      /tmp/b/tests/test_backend cuda 'test_zcsr*' 2>&1 | grep -E "PASSED|FAILED|ERROR" | head -5 ;;
    ab)
      for round in 1 2; do
        for b in b0 b; do
          echo "== round $round, /tmp/$b"
          /tmp/$b/bench/cuda/bench_complex --backend cuda --reps 3 --grid7 128 --grid27 128 \
            --mesh 128 --matrices none
        done
      done ;;
    modes)
      for round in $(seq "${MR:-1}"); do
        for m in ${MODES:-0 1}; do
          echo "== round $round, CNC_CUDA_STREAM_LOADS=$m"
          export CNC_CUDA_STREAM_LOADS=$m
          /tmp/b/bench/cuda/bench_complex --backend cuda --reps 3 --grid7 0 --grid27 128 \
            --mesh 0 --matrices none | grep -E "^\|" | head -8
          /tmp/b/bench/cuda/bench_complex --backend cuda --reps 3 --grid7 128 --grid27 0 \
            --mesh 0 --matrices none | grep -E "^\| magnetic" | head -1
          for only in "power-law" "27-pt 160" "mesh 160"; do
            /tmp/b/bench/cuda/bench_api --reps 3 --patterns --only "$only" --mtx-dir /nonexistent |
              grep -E "^\|" | head -12
          done
          /tmp/b/bench/cuda/bench_api --reps 3 --patterns --only "mesh 128" --reorder rcm \
            --mtx-dir /nonexistent | grep -E "^\|" | head -12
          /tmp/b/bench/cuda/bench_api --reps 3 --patterns --only "7-pt 192" --reorder rcm \
            --mtx-dir /nonexistent | grep -E "^\|" | head -12
          unset CNC_CUDA_STREAM_LOADS
        done
      done ;;
    headline)
      for m in 0 1; do
        echo "== bench_api --only 7-pt 256, CNC_CUDA_STREAM_LOADS=$m"
        CNC_CUDA_STREAM_LOADS=$m /tmp/b/bench/cuda/bench_api --reps 3 --only "7-pt 256" |
          grep -E "^\|" | grep -v -- "---" | head -20
      done
      echo "== bench_api --reps 3 (the default tables)"
      timeout "${HEADLINE_S:-280}" /tmp/b/bench/cuda/bench_api --reps 3 ;;
  esac
  echo "(${SECONDS} s since the start)"
done
