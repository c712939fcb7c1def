#!/bin/bash
# Where the OpenCL BiCGSTAB/GMRES time goes on the GPU machine: bench_krylov on OpenCL and on CUDA
# at a small and a large grid (time per iteration tells latency from bandwidth), then under
# Nsight Systems when it is there (per-kernel device time). Needs /tmp/b (device_runs/e2e.sh).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/opencl-profile.log") 2>&1
. device_runs/gpu_env.sh
for be in opencl cuda; do
  echo "== $be, grids 20 and 100"
  /tmp/b/bench/bench_krylov --backend $be --sizes 20,100 --reps 1
done
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  echo "== nsys: OpenCL BiCGSTAB/GMRES at grid 100"
  "$NSYS" profile -o /tmp/ocl --force-overwrite true -t opencl,cuda,osrt \
    /tmp/b/bench/bench_krylov --backend opencl --sizes 100 --reps 1 > /dev/null 2>&1
  "$NSYS" stats -r cuda_gpu_kern_sum,opencl_api_sum,osrt_sum /tmp/ocl.nsys-rep 2>&1 | head -80
else
  echo "no nsys on this machine"
fi
