#!/bin/bash
# Issue 13's OpenCL complex target (real % of floor / complex % of floor <= 1.3): bench_complex on
# NVIDIA's OpenCL (magnetic 27-point 96^3 and 7-point 128^3, cncSolveCSRComplex and the same
# graph's real solve, textbook cuSPARSE complex PCG in each run), the zcsr kernel's lanes a row
# (CNC_OPENCL_CSR_WIDTH) and work-group size (CNC_OPENCL_WG) swept. If device_runs/baseline_zc/
# holds kernels/opencl/*.cl of an earlier commit (untracked, not committed), that tree is built
# beside as /tmp/b0 and alternated with this one. Same configuration as device_runs/e2e.sh.
# Usage: OUT=... [CFGS='-;CNC_OPENCL_CSR_WIDTH=4;...'] [ABCFGS=...] [M='bench options'] bash device_runs/ocl_zcsr.sh [tests] [sweep] [ab]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/ocl_zcsr.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
git log --oneline -1; git status --short | head
. device_runs/gpu_env.sh
build() {  # source dir, build dir
  [ -f "$2/build.ninja" ] || cmake -S "$1" -B "$2" -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
  ninja -C "$2" bench_complex test_backend test_complex_zcsr test_complex > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -80; exit 1; }
}
build . /tmp/b
if [ -d device_runs/baseline_zc ]; then
  rm -rf /tmp/src0; mkdir -p /tmp/src0; git archive HEAD | tar -x -C /tmp/src0
  cp device_runs/baseline_zc/*.cl /tmp/src0/kernels/opencl/
  build /tmp/src0 /tmp/b0
fi
echo "built at ${SECONDS} s"
if [[ " $* " == *" tests "* ]]; then
  (cd /tmp/b && ctest --output-on-failure -R '^(backend_opencl|complex_opencl|complex_zcsr_opencl)$') 2>&1 | tail -8
  for w in 1 2 4 8 32; do
    echo "== test_backend opencl, CNC_OPENCL_CSR_WIDTH=$w"
    CNC_OPENCL_CSR_WIDTH=$w /tmp/b/tests/test_backend opencl "test_zcsr*" 2>&1 | tail -3
  done
  echo "tests done at ${SECONDS} s"
fi
M=${M:-"--grid27 96 --grid7 128 --matrices none --reps 3"}
if [[ " $* " == *" sweep "* ]]; then
  # CFGS: the configurations, ';'-separated (each an environment assignment list, '-' for none)
  IFS=';' read -ra cfgs <<< "${CFGS:--;CNC_OPENCL_CSR_WIDTH=4;CNC_OPENCL_CSR_WIDTH=8;CNC_OPENCL_CSR_WIDTH=32;CNC_OPENCL_WG=128;CNC_OPENCL_WG=256}"
  for cfg in "${cfgs[@]}"; do
    [[ $cfg == - ]] && cfg=""
    echo "== [$cfg] bench_complex --backend opencl $M"
    env $cfg /tmp/b/bench/cuda/bench_complex --backend opencl $M
    echo "(${SECONDS} s)"
  done
fi
if [[ " $* " == *" ab "* && -d /tmp/b0 ]]; then
  # ABCFGS: as CFGS, each run by both builds, alternated twice
  IFS=';' read -ra abcfgs <<< "${ABCFGS:--}"
  for cfg in "${abcfgs[@]}"; do
    [[ $cfg == - ]] && cfg=""
    for round in 1 2; do
      for t in b0 b; do
        echo "== [$cfg] round $round build $t: bench_complex --backend opencl $M"
        env $cfg /tmp/$t/bench/cuda/bench_complex --backend opencl $M
        echo "(${SECONDS} s)"
      done
    done
  done
fi
