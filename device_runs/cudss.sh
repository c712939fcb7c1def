#!/bin/bash
# cuDSS (CNC_CUDSS) on the GPU: its tests (C and Python) and bench_direct against CHOLMOD.
# cuDSS is not installed on the GPU machines and its wheel's library (167 MB) is larger than one
# call may carry: it travels as three xz parts in .carry/ (split -b 48M of `xz -9` of the
# nvidia-cudss-cu13 1.0.0.35 wheel's nvidia/cu13/lib/libcudss.so.1), carried by consecutive calls
# and gathered in /tmp/cudss-parts by `bash device_runs/cudss.sh part`. CHOLMOD, SuperLU, OpenBLAS
# and cuDSS's header come in .devfull/root (Debian 12's packages, unpacked).
# Usage: bash device_runs/cudss.sh part    (each call carrying one .carry/cudss.xz.NN)
#        OUT=... bash device_runs/cudss.sh [bench args]   (carry [".devfull/root"])
set -uo pipefail
P=/tmp/cudss-parts; mkdir -p $P
if [[ "${1:-}" == part ]]; then cp -v .carry/cudss.xz.* $P/ 2>/dev/null; ls -la $P; exit 0; fi
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$PWD; C=$R/.devfull/root
exec > >(tee -a "$OUT/cudss.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1
. device_runs/gpu_env.sh
export LD_LIBRARY_PATH=$L/openblas-pthread:$LD_LIBRARY_PATH
# The VM's CPU model is one OpenBLAS 0.3.21 cannot name ("Core: Prescott": SSE3 kernels, and CHOLMOD
# 6x slower than with 8 threads of them, run 62); its kernels are chosen from the CPU's flags.
F=$(grep -m1 '^flags' /proc/cpuinfo)
if [[ $F == *avx512f* && $F == *avx512vl* ]]; then export OPENBLAS_CORETYPE=SkylakeX
elif [[ $F == *avx2* ]]; then export OPENBLAS_CORETYPE=Haswell; fi
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-} (OpenBLAS threads: ${OPENBLAS_NUM_THREADS:-all cores})"
# The wheel layout a pip user has: libcudss.so.1 beside the CUDA 13 wheels' libcublas.so.13.
W=$(dirname "$(find / -xdev -name 'libcublas.so.13' -path '*cu13*' 2>/dev/null | head -1)")
echo "cu13 wheel folder: $W"
if [[ ! -f $W/libcudss.so.1 ]]; then
  cat $P/cudss.xz.* | xz -d > $W/libcudss.so.1 || { echo "cuDSS parts missing: $(ls $P)"; exit 1; }
fi
export CNC_CUDSS_LIBRARY=$W/libcudss.so.1
cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE -DCNC_CUDSS_INCLUDE_DIR=$C/usr/include \
  -DCNC_CHOLMOD_INCLUDE_DIR=$C/usr/include/suitesparse -DCNC_SUPERLU_INCLUDE_DIR=$C/usr/include/superlu \
  > /tmp/cfg.log 2>&1 || { tail -30 /tmp/cfg.log; exit 1; }
grep -i "cudss\|direct solvers" /tmp/cfg.log
ninja -C /tmp/b cnc test_cudss test_direct test_direct_matrices bench_direct > /tmp/build.log 2>&1 \
  || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
(cd /tmp/b && ctest -R "test_cudss|test_direct" --output-on-failure) 2>&1 | tail -12
(cd bindings/python/tests && CNC_LIBRARY=/tmp/b/libcnc.so PYTHONPATH=$R/bindings/python \
  python3 -m pytest -q test_cudss.py test_direct.py 2>&1 | tail -4)
BD=$(find /tmp/b -name bench_direct -type f | head -1)
time $BD "$@"
