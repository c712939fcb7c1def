#!/usr/bin/env bash
# The test job: install dependencies, then
#   0. every C/C++/CUDA source clang-formatted (scripts/check-format.sh), and the library's C++
#      sources clean under clang-tidy's checks in .clang-tidy (scripts/check-tidy.sh, build-tidy);
#   1. Release build with warnings as errors (CUDA backend compiled when nvcc exists), all tests;
#      that build installed into a temporary prefix and used from C (pkg-config), CMake, Fortran
#      and OpenNL programs and by its cnc-solve (scripts/test-install.sh); the Python wheel that
#      `pip install .` builds, in a clean venv, and its tests (scripts/test-python.sh); the
#      README's code blocks, each run or saying why not (scripts/test-readme.sh); the API
#      reference, Doxygen with every name of cnc.h documented and pydoc (scripts/docs.sh);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build, all tests but the MPI ones (Open MPI's
#      own allocations are reported as leaks: tests/mpi.cmake) and the OpenCL suites re-run with a
#      GPU's work-group shapes (label opencl_shape: they change which kernel PoCL runs, compiled
#      by PoCL and not instrumented, while the host code they drive is backend_opencl's);
#   3. ThreadSanitizer build: the multi-threaded tests, the nonsymmetric solvers, the backend
#      contract suite on the CPU and on OpenCL (PoCL), and the parallel reordering (not the
#      opencl_shape re-runs, nor the CPU's prefetching kernel, whose threads are backend_cpu's);
#   4. the libFuzzer harnesses of fuzz/ (clang, ASan + UBSan), 40 s each (scripts/fuzz.sh).
# Tests that need a GPU or ../shared/data skip (CTest exit code 77) and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
stage() { echo "=== $1 (at $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s) ==="; }
stage "dependencies"
bash scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
stage "format and tidy"
bash scripts/check-format.sh
bash scripts/check-tidy.sh build-tidy
# One PoCL kernel cache for every stage (tests/CMakeLists.txt, CNC_TEST_POCL_CACHE): the
# sanitizer stages' OpenCL tests then compile no kernel the Release stage compiled.
export POCL_CACHE_DIR="${TMPDIR:-/tmp}/cnc-pocl-cache"
jobs=$(nproc)
# With TESTED_ONLY=1, only the programs the selected tests run are built
# (scripts/tested-programs.py).
run_suite() {  # name, build dir, cmake args..., then ctest args after --
  local name=$1 dir=$2; shift 2
  local cfg=() ct=() targets=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do cfg+=("$1"); shift; done
  [ $# -gt 0 ] && shift && ct=("$@")
  stage "$name"
  cmake -S . -B "$dir" -G Ninja -DCNC_WERROR=ON -DCNC_BUILD_BENCH=OFF \
    -DCNC_TEST_POCL_CACHE="$POCL_CACHE_DIR" "${cfg[@]}" >/dev/null
  if [ "${TESTED_ONLY:-0}" = 1 ]; then
    mapfile -t targets < <(python3 scripts/tested-programs.py "$dir" "${ct[@]}")
    [ ${#targets[@]} -gt 0 ] || { echo "test.sh: no programs found for $name's tests"; exit 1; }
    echo "building the ${#targets[@]} programs its tests run: ${targets[*]}"
    cmake --build "$dir" -j"$jobs" --target "${targets[@]}"
  else
    cmake --build "$dir" -j"$jobs"
  fi
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 "${ct[@]}")
}
run_suite "release" build-test -DCMAKE_BUILD_TYPE=Release
stage "install, python, readme, docs"
CNC_INSTALL_BUILD=build-test CNC_INSTALL_CONFIGURE=0 bash scripts/test-install.sh
bash scripts/test-python.sh
bash scripts/test-readme.sh build-test  # README.md's code blocks, against build-test installed
# The API reference: Doxygen (every cnc.h name documented) and pydoc of the Python package.
CNC_DOCS_STRICT=1 CNC_LIBRARY="$PWD/build-test/libcnc.so" bash scripts/docs.sh build-docs
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0:intercept_tls_get_addr=0"
export UBSAN_OPTIONS="print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1"  # no suppressions: PoCL and the ICD included
run_suite "asan+ubsan" build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCNC_WITH_CUDA=OFF \
  -DCNC_SANITIZE=address,undefined -- -E "pytest|python|mpi_solve|mpi_assembly" -LE opencl_shape
TESTED_ONLY=1 run_suite "tsan" build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCNC_WITH_CUDA=OFF \
  -DCNC_SANITIZE=thread -- -R "thread|nonsymmetric|backend_cpu|backend_opencl|reorder" \
  -E prefetch -LE opencl_shape
stage "fuzz"
bash scripts/fuzz.sh 40 build-fuzz  # the four libFuzzer harnesses of fuzz/, 40 s each
stage "done"
echo "test.sh: all suites passed"
