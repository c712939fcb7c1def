#!/bin/bash
# Device run of the OpenCL backend on the H200 (through NVIDIA's OpenCL driver): build, the
# OpenCL tests, the benchmark. Run from the repository root on the device machine; writes logs
# to $OUT. Needs the Khronos headers and the ocl-icd loader carried in .device-opencl/.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
R=$PWD
exec > >(tee "$OUT/opencl-device.log") 2>&1
echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
NV=$(find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
[ -z "$NV" ] && NV=$(find /usr/local/nvidia /usr/lib* -name 'libnvidia-opencl.so*' 2>/dev/null | head -1)
echo "nvidia OpenCL ICD: ${NV:-not found}"
mkdir -p /tmp/icd && echo "${NV:-libnvidia-opencl.so.1}" > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
export CNC_OPENCL_LIBRARY=$R/.device-opencl/lib/libOpenCL.so.1
# cmocka is not installed there: carried headers and library.
CM=$R/.device-opencl/cm
sed -i "s|/CMROOT|$CM|" $CM/lib/pkgconfig/cmocka.pc
export PKG_CONFIG_PATH=$CM/lib/pkgconfig LD_LIBRARY_PATH=$CM/lib:${LD_LIBRARY_PATH:-}
echo "== configure + build"
CUDA=ON
cmake -S . -B /tmp/b -G Ninja -DCNC_WERROR=ON -DCNC_WITH_CUDA=$CUDA -DCNC_BUILD_EXAMPLES=ON \
  -DCNC_OPENCL_INCLUDE_DIR=$R/.device-opencl/include > /tmp/cfg.log 2>&1 || {
  tail -5 /tmp/cfg.log; CUDA=OFF; rm -rf /tmp/b
  cmake -S . -B /tmp/b -G Ninja -DCNC_WERROR=ON -DCNC_WITH_CUDA=OFF \
    -DCNC_OPENCL_INCLUDE_DIR=$R/.device-opencl/include > /tmp/cfg.log 2>&1 || tail -20 /tmp/cfg.log; }
echo "CUDA backend: $CUDA"
T="test_opencl_kernels test_backend bench_opencl cnc-solve"
if ! ninja -C /tmp/b $T > /tmp/build.log 2>&1; then
  grep -E "error|FAILED" /tmp/build.log | head -10
  if [ $CUDA = ON ]; then
    echo "build failed with CUDA on: rebuilding without the CUDA backend"; CUDA=OFF
    cmake -S . -B /tmp/b -DCNC_WITH_CUDA=OFF > /tmp/cfg.log 2>&1
    ninja -C /tmp/b $T 2>&1 | grep -E "error|FAILED" | head -10
  fi
fi
echo "== tests"
export CNC_TEST_DATA=$R/.device-opencl/data  # the four real matrices test_opencl_kernels reads
(cd /tmp/b && ctest -R "opencl" --output-on-failure --timeout 200) 2>&1 | tail -40
/tmp/b/tests/test_opencl_kernels 2>&1 | grep -E "device|SpMV:|steps:|PASSED|FAILED" | head
echo "== cnc-solve through the public API"
CNC_BACKEND=opencl /tmp/b/examples/cnc-solve --grid 128 --precision double 2>&1 | tail -7
echo "== bench"
B="--backends opencl,cuda"; [ $CUDA = OFF ] && B="--backends opencl"
/tmp/b/bench/opencl/bench_opencl --grid 128 --grid 256 --precision double --precision mixed \
  --format csr --format sell \
  --iters 200 $B --sweep -1:0:0,1:0:0,2:0:0,4:0:0,-1:528:0,-1:2112:0,-1:0:128,-1:0:512 2>&1
