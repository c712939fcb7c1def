#!/bin/bash
# The whole test suite and the main job on the GPU machine (H200): CUDA and OpenCL (NVIDIA's ICD)
# backends. Run from the repository root there with the carried folder .devfull/ (cmocka, the
# Khronos headers, the ocl-icd loader and a copy of ../shared/data, none of which that machine
# has). Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull
exec > >(tee "$OUT/full-suite.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
sed -i "s|/CMROOT|$C/cm|" $C/cm/lib/pkgconfig/cmocka.pc
export PKG_CONFIG_PATH=$C/cm/lib/pkgconfig LD_LIBRARY_PATH=$C/cm/lib:$C/lib:${LD_LIBRARY_PATH:-}
NV=$(find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
mkdir -p /tmp/icd && echo "${NV:-libnvidia-opencl.so.1}" > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CNC_OPENCL_LIBRARY=$C/lib/libOpenCL.so.1
[ -e ../shared ] || ln -s $C/shared ../shared
cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCNC_WERROR=ON \
  -DCNC_OPENCL_INCLUDE_DIR=$C/include > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
grep -E "cnc:" /tmp/cfg.log
ninja -C /tmp/b > /tmp/build.log 2>&1 || { grep -B2 -A10 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
echo "== ldd libcnc.so"; ldd /tmp/b/libcnc.so
echo "== ctest (auto backend; cuda and opencl suites on the H200)"
(cd /tmp/b && ctest -j8 --timeout 300 --output-on-failure -E "bindings_python") 2>&1 | tail -60
echo "== ctest with CNC_BACKEND=cuda (public-API suites forced onto the GPU)"
(cd /tmp/b && CNC_BACKEND=cuda ctest -j4 --timeout 300 --output-on-failure \
   -R "test_solve|nonsymmetric|demo|opennl|readme|cnc_solve_poisson|threads") 2>&1 | tail -40
echo "== ctest with CNC_BACKEND=opencl"
(cd /tmp/b && CNC_BACKEND=opencl ctest -j4 --timeout 300 --output-on-failure \
   -R "test_solve|nonsymmetric|demo|opennl|readme|cnc_solve_poisson") 2>&1 | tail -30
echo "== main job"
for a in "--grid 128" "--grid 128 --backend cuda --precision mixed" "--grid 256 --backend cuda" \
         "--grid 128 --backend opencl" "--grid 128 --backend cpu --threads 16" "--grid 128 --rhs 4"; do
  echo "-- cnc-solve $a"; /tmp/b/examples/cnc-solve $a
done
