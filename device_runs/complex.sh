#!/bin/bash
# Complex systems (cncSolveCSRComplex) on the GPU machine: the test program on CUDA and on the
# GPU's OpenCL, against its dense complex reference. Same configuration as device_runs/e2e.sh
# (carry [".devfull"]), building only what it runs.   bash device_runs/complex.sh   (log in $OUT)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/complex.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
. device_runs/gpu_env.sh
if [ ! -f /tmp/b/build.ninja ]; then
  cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
fi
ninja -C /tmp/b cnc test_complex cnc-solve > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -80; exit 1; }
for backend in cuda opencl; do
  echo "== test_complex $backend"
  /tmp/b/tests/test_complex $backend; echo "exit code $?"
done
echo "== cnc-solve on the CLI's complex matrices"
for f in /tmp/b/examples/cli_matrices/hermitian.mtx /tmp/b/examples/cli_matrices/complex.mtx; do
  /tmp/b/examples/cnc-solve --backend cuda "$f" | grep -E "backend|solver|result"
done
