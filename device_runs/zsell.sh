#!/bin/bash
# ZSELL (complex SELL, CUDA) on the GPU machine: the CUDA suites (device_runs/cuda_suites.sh:
# every target built, ctest -R cuda, the public-API suites forced onto CUDA), then
# bench/cuda/bench_complex with the complex format forced to zcsr and left to AUTO (zsell where
# its padding is small), alternated, the textbook cuSPARSE complex PCG in each run.
# Carried: .devfull. Usage: OUT=... bash device_runs/zsell.sh [tests] [bench] (default both)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
what=${*:-tests bench}
exec > >(tee -a "$OUT/zsell.log") 2>&1
git log --oneline -1; git status --short | head -30
if [[ $what == *tests* ]]; then
  bash device_runs/cuda_suites.sh || exit 1
fi
. device_runs/gpu_env.sh
[ -f /tmp/b/build.ninja ] || cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1
ninja -C /tmp/b bench_complex > /tmp/build2.log 2>&1 || { tail -30 /tmp/build2.log; exit 1; }
if [[ $what == *bench* ]]; then
  BC=/tmp/b/bench/cuda/bench_complex
  for f in ${FORMATS:-zcsr auto zcsr auto}; do
    echo "== bench_complex --backend cuda --format $f ${ARGS:---grid7 128 --grid27 128 --mesh 128}"
    $BC --backend cuda --reps "${REPS:-3}" --matrices none --format "$f" \
      ${ARGS:---grid7 128 --grid27 128 --mesh 128}
    echo "(${SECONDS} s since the start)"
  done
fi
