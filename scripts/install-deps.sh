#!/usr/bin/env bash
# Installs cnc's build and test dependencies from Debian 12's packages (run as root, or with sudo
# available). Skips apt-get when everything is already there, so repeated runs are quick.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config libcmocka-dev libeigen3-dev libxxhash-dev
      zlib1g-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo gfortran libpng-dev
      clang-format clang-tidy python3 python3-numpy python3-scipy python3-pytest python3-venv
      doxygen clang libclang-rt-14-dev llvm  # doxygen: the API reference; clang's libFuzzer and sanitizer runtimes, llvm-symbolizer
      libsuitesparse-dev libsuperlu-dev  # CHOLMOD and SuperLU: headers at build time, libraries opened at run time
      libopenblas0-pthread  # the system BLAS/LAPACK they, ARPACK and NumPy use (LSCM via CHOLMOD 2.5x faster)
      libarpack2-dev  # ARPACK (the eigen solver): opened at run time, no header needed
      libopenmpi-dev openmpi-bin  # MPI: libcnc_mpi and its tests (built only when found)
      jq)  # the README's cnc-solve example pipes --json into jq
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The CUDA toolkit is optional: the CUDA backend is built when nvcc is on PATH (or in
# /usr/local/cuda/bin); without it cnc builds CPU + OpenCL only.
