#!/bin/bash
# End-to-end run on the GPU machine: Release build (CUDA + OpenCL), the test suite with the
# automatic backend and forced onto CUDA, then bench_api (public API vs the textbook cuSPARSE
# PCG, same run). Carried: .devfull/ (cmocka, OpenCL headers and the ICD loader, extracted from
# Debian's packages, which that machine cannot fetch). Make it here, once, from the repository root:
#   mkdir -p .devfull/debs && (cd .devfull/debs && apt-get download libcmocka0 libcmocka-dev \
#     opencl-c-headers ocl-icd-libopencl1 libxxhash-dev && for f in *.deb; do dpkg -x $f ../root; done)
# The direct and eigen solvers' libraries (dlopen'ed; runs 47-50) go there the same way, with the
# headers copied from this machine's /usr/include/{suitesparse,superlu} into .devfull/root/usr/include:
#   apt-get download libcholmod3 libsuitesparseconfig5 libamd2 libcamd2 libcolamd2 libccolamd2 \
#     libmetis5 libopenblas0-pthread libsuperlu5 libgfortran5 libquadmath0 libarpack2
# (drop the reference blas/ and lapack/ folders: the carry is capped at 64 MiB), configure with
# -DCNC_CHOLMOD_INCLUDE_DIR=$C/usr/include/suitesparse -DCNC_SUPERLU_INCLUDE_DIR=$C/usr/include/superlu
# and run with LD_LIBRARY_PATH=$L/openblas-pthread:... CNC_CHOLMOD_LIBRARY=$L/libcholmod.so.3
# CNC_SUPERLU_LIBRARY=$L/libsuperlu.so.5 CNC_ARPACK_LIBRARY=$L/libarpack.so.2.
# then pass carry [".devfull"] to the device tool. Usage: bash device_runs/e2e.sh [build|tests|bench|python|all]
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
what=${1:-all}
exec > >(tee -a "$OUT/e2e-$what.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nproc
. device_runs/gpu_env.sh
if [ ! -f /tmp/b/build.ninja ]; then
  cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
fi
grep -E "cnc:" /tmp/cfg.log
ninja -C /tmp/b > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -80; exit 1; }
[ "$what" = build ] && exit 0
if [ "$what" != bench ] && [ "$what" != python ]; then
  echo "== ctest (auto backend)"
  (cd /tmp/b && ctest -j8 --timeout 300 --output-on-failure -E "python") 2>&1 | tail -45
  echo "== ctest with CNC_BACKEND=cuda"
  (cd /tmp/b && CNC_BACKEND=cuda ctest -j4 --timeout 300 --output-on-failure \
     -R "test_solve|test_bad_input|nonsymmetric|demo|opennl|threads|assembly") 2>&1 | tail -25
  echo "== python tests (CuPy device-array tests included when CuPy is here)"
  if python3 -c "import numpy, scipy, pytest" 2>/dev/null; then
    CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=bindings/python python3 -m pytest -q -rs \
      bindings/python/tests 2>&1 | tail -15
  else
    echo "python3 without numpy/scipy/pytest here: skipped"
  fi
fi
if [ "$what" != tests ] && [ "$what" != python ]; then
  echo "== cnc-solve --grid 256"
  /tmp/b/examples/cnc-solve --grid 256 --backend cuda
  /tmp/b/examples/cnc-solve --grid 256 --backend opencl
  echo "== bench_api"
  /tmp/b/bench/cuda/bench_api --reps 3
fi
if [ "$what" != tests ]; then
  echo "== python bench_api (when this machine's python3 has numpy and scipy)"
  if python3 -c "import numpy, scipy" 2>/dev/null; then
    CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=bindings/python python3 bench/python/bench_api.py \
      --sizes 64,128,200 --reps 3 --scipy-max-n 300000
  else
    echo "python3 without numpy/scipy here: skipped"
  fi
fi
