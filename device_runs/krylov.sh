#!/bin/bash
# BiCGSTAB and GMRES through cnc.h on the GPU machine: bench/bench_krylov with this tree's
# library (device-resident methods) and, in the same run, the same program linked against the
# library of commit 125a1c5 (host-vector methods), carried in .devfull/baseline (make it with
# `git archive 125a1c5 | tar -x -C .devfull/baseline`). Needs /tmp/b built by e2e.sh first.
# Then bench/python/bench_krylov.py (cnc.solve against CuPy's GMRES from scipy arrays, same run).
# Usage: bash device_runs/krylov.sh [sizes] [reps] [baseline: yes|no]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
sizes=${1:-100,160}; reps=${2:-3}; baseline=${3:-yes}
exec > >(tee -a "$OUT/krylov.log") 2>&1
. device_runs/gpu_env.sh
[ -x /tmp/b/bench/bench_krylov ] || { echo "build /tmp/b first (bash device_runs/e2e.sh tests)"; exit 1; }
if [ "$baseline" = yes ] && [ ! -f /tmp/old/libcnc.so ]; then
  cmake -S .devfull/baseline -B /tmp/old -G Ninja -DCMAKE_BUILD_TYPE=Release -DCNC_BUILD_TESTS=OFF \
    -DCNC_BUILD_BENCH=OFF -DCNC_BUILD_EXAMPLES=OFF -DCNC_WITH_OPENCL=OFF \
    -DCNC_XXHASH_INCLUDE_DIR=$C/usr/include > /tmp/old-cfg.log 2>&1 || { tail -20 /tmp/old-cfg.log; exit 1; }
  ninja -C /tmp/old cnc > /tmp/old-build.log 2>&1 || { tail -30 /tmp/old-build.log; exit 1; }
fi
echo "== this tree (cuda)"
/tmp/b/bench/bench_krylov --backend cuda --sizes "$sizes" --reps "$reps"
if [ "$baseline" = yes ]; then
  cc -O2 bench/bench_krylov.c -I.devfull/baseline/include -L/tmp/old -lcnc -Wl,-rpath,/tmp/old \
    -o /tmp/bench_krylov_old || exit 1
  echo "== commit 125a1c5, host-vector BiCGSTAB/GMRES (cuda)"
  /tmp/bench_krylov_old --backend cuda --sizes "$sizes" --reps 1
fi
echo "== this tree, OpenCL on the same GPU"
/tmp/b/bench/bench_krylov --backend opencl --sizes "$sizes" --reps "$reps"
echo "== python: cnc.solve against CuPy's GMRES (and SciPy's bicgstab up to 300 K unknowns)"
if python3 -c "import numpy, scipy" 2>/dev/null; then
  CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=bindings/python python3 bench/python/bench_krylov.py \
    --sizes "$sizes" --reps "$reps"
else
  echo "python3 without numpy/scipy here: skipped"
fi
