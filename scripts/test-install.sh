#!/usr/bin/env bash
# The installed tree, tested as its users use it. Builds cnc (Release, target all), installs it
# with `cmake --install` into a temporary prefix, moves that prefix (an installed tree must not
# depend on where it was installed), then builds and runs, against nothing but the moved prefix:
#   a. C through pkg-config (cnc.pc; and cnc_opennl.pc with OpenNL's <NL/nl.h>);
#   b. CMake projects: find_package(cnc) + cnc::cnc, and find_package(cnc COMPONENTS opennl) +
#      cnc::cnc_opennl with <NL/nl.h>;
#   c. Fortran (gfortran): the installed module source share/cnc/fortran/cnc.f90 with a program,
#      and the installed example.f90;
#   d. the installed bin/cnc-solve --grid 16, with no LD_LIBRARY_PATH: its RUNPATH ($ORIGIN/../lib)
#      finds the installed libcnc, and libcnc_opennl's ($ORIGIN) finds it too.
# Each program solves a small system with a known solution and checks it (tests/consumer/).
# Every check runs even when an earlier one failed; the script prints each failure, with its log,
# and exits 1 when there was any.
#
# Environment: CNC_INSTALL_BUILD (build folder, default build-install), CNC_INSTALL_CUDA (ON to
# build the CUDA backend when nvcc exists; default OFF: the installed layout is the same and the
# kernels take long to compile on a small CI machine), CNC_INSTALL_CONFIGURE=0 (use the build
# folder as it is configured, e.g. CNC_INSTALL_BUILD=build-test after scripts/test.sh's release
# suite: no second build of the library), CNC_INSTALL_KEEP=1 keeps the temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${CNC_INSTALL_BUILD:-build-install}
cuda=${CNC_INSTALL_CUDA:-OFF}
jobs=$(nproc)
start=$(date +%s)

# Nothing from the caller's environment may point the consumers at another copy of cnc.
unset LD_LIBRARY_PATH LIBRARY_PATH CPATH C_INCLUDE_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH cnc_DIR \
  PKG_CONFIG_LIBDIR
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cnc-test-install.XXXXXX")
cleanup() {
  if [ "${CNC_INSTALL_KEEP:-0}" = 1 ]; then echo "test-install: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

die() {
  echo "test-install: FAILED: $*" >&2
  exit 1
}
failures=()
n=0
# check NAME COMMAND...: runs the command with its output in a log; prints the log on failure.
check() {
  local name=$1 log
  shift
  n=$((n + 1))
  log="$tmp/log.$n"
  # A subshell with errexit of its own: any failing command inside the check fails it (a
  # function called as an `if` condition would run with errexit ignored).
  local rc=0
  set +e
  (
    set -e
    "$@"
  ) >"$log" 2>&1
  rc=$?
  set -e
  if [ $rc = 0 ]; then
    echo "ok    $name"
    sed 's/^/      /' "$log" | grep -E 'OK|error|passed|result|residual|RUNPATH|=>' | head -n 8 || true
  else
    echo "FAIL  $name"
    sed 's/^/      /' "$log"
    failures+=("$name")
  fi
}

# --- Build and install -------------------------------------------------------------------------
bash scripts/install-deps.sh # quick when all is there (scripts/test.sh has run it already)
export PATH="$PATH:/usr/local/cuda/bin"
if [ "$cuda" = ON ] && ! command -v nvcc >/dev/null; then cuda=OFF; fi
if [ "${CNC_INSTALL_CONFIGURE:-1}" = 0 ]; then
  [ -f "$build/CMakeCache.txt" ] || die "$build is not configured (CNC_INSTALL_CONFIGURE=0)"
  echo "test-install: building in $build as it is configured"
else
  echo "test-install: building in $build (CUDA backend: $cuda)"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCNC_WERROR=ON \
    -DCNC_BUILD_TESTS=OFF -DCNC_BUILD_BENCH=OFF -DCNC_WITH_CUDA="$cuda" \
    -DCMAKE_INSTALL_PREFIX=/usr/local >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log"; die "configuring $build"; }
fi
cmake --build "$build" -j"$jobs" >"$tmp/build.log" 2>&1 ||
  { tail -n 60 "$tmp/build.log"; die "building $build"; }
cmake --install "$build" --prefix "$tmp/staged" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; die "cmake --install $build"; }
mv "$tmp/staged" "$tmp/prefix"
prefix=$(cd "$tmp/prefix" && pwd -P)
echo "test-install: installed into a prefix, then moved it to $prefix"

pcfile=$(find "$prefix" -name cnc.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pcfile" ] || die "no cnc.pc installed"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pcfile")
libdir=$(cd "$(pkg-config --variable=libdir cnc)" && pwd -P)
export CMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON # (a CMake >= 3.16 variable, read from -D below)

# --- What is installed --------------------------------------------------------------------------
installed_files() {
  local f missing=0
  for f in bin/cnc-solve include/cnc.h include/cnc_nl.h include/cnc_opennl/NL/nl.h \
    include/cnc_opennl/NL/nl_ext.h share/cnc/fortran/cnc.f90 share/cnc/fortran/example.f90 \
    share/doc/cnc/LICENSE share/doc/cnc/CITATION.cff; do
    [ -e "$prefix/$f" ] || { echo "missing: $f"; missing=1; }
  done
  for f in libcnc.so libcnc.so.0 libcnc_opennl.so libcnc_opennl.so.0 pkgconfig/cnc.pc \
    pkgconfig/cnc_opennl.pc cmake/cnc/cncConfig.cmake cmake/cnc/cncConfigVersion.cmake \
    cmake/cnc/cncTargets.cmake; do
    [ -e "$libdir/$f" ] || { echo "missing: ${libdir#"$prefix"/}/$f"; missing=1; }
  done
  # No installed text file names the build or source tree (the tree was moved: none names the
  # install prefix either).
  if grep -rIl -e "$root" -e "$tmp/staged" "$prefix"; then
    echo "the files above name $root or the staging prefix"
    missing=1
  fi
  [ $missing = 0 ] && echo "all expected files installed"
}
check "installed files" installed_files

# --- a. C through pkg-config -------------------------------------------------------------------
c_pkgconfig() {
  pkg-config --validate cnc
  pkg-config --validate cnc_opennl
  local flags nlflags
  flags=$(pkg-config --cflags --libs cnc)
  nlflags=$(pkg-config --cflags --libs cnc_opennl)
  echo "pkg-config --cflags --libs cnc: $flags"
  echo "pkg-config --cflags --libs cnc_opennl: $nlflags"
  case "$flags $nlflags" in *"$root"*) echo "pkg-config flags name the source tree"; return 1 ;; esac
  # shellcheck disable=SC2086
  cc -std=c99 -pedantic -Wall -Wextra -Werror tests/consumer/consumer.c -o "$tmp/c_pc" $flags \
    -Wl,-rpath,"$libdir" -lm
  "$tmp/c_pc"
  # shellcheck disable=SC2086
  cc -std=c99 -pedantic -Wall -Wextra -Werror tests/consumer/opennl/nl_consumer.c \
    -o "$tmp/nl_pc" $nlflags -Wl,-rpath,"$libdir" -lm
  "$tmp/nl_pc"
}
check "a. C via pkg-config (cnc, cnc_opennl)" c_pkgconfig

# --- b. CMake find_package ---------------------------------------------------------------------
cmake_consumer() { # source folder, binary folder, program
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_C_FLAGS="-Wall -Wextra -Werror"
  local dir
  dir=$(sed -n 's/^cnc_DIR:PATH=//p' "$2/CMakeCache.txt")
  echo "cnc_DIR=$dir"
  case "$dir" in "$prefix"/*) ;; *) echo "find_package(cnc) found $dir, not the prefix"; return 1 ;; esac
  cmake --build "$2"
  "$2/$3"
}
check "b. CMake find_package(cnc) + cnc::cnc" \
  cmake_consumer tests/consumer "$tmp/cmake-cnc" consumer
check "b. CMake find_package(cnc COMPONENTS opennl) + cnc::cnc_opennl, <NL/nl.h>" \
  cmake_consumer tests/consumer/opennl "$tmp/cmake-opennl" nl_consumer

# --- c. Fortran --------------------------------------------------------------------------------
fortran_consumer() {
  local libs
  libs=$(pkg-config --libs cnc)
  mkdir -p "$tmp/fortran"
  cd "$tmp/fortran"
  gfortran -std=f2008 -Wall -Wextra -Werror -c "$prefix/share/cnc/fortran/cnc.f90"
  # shellcheck disable=SC2086
  gfortran -std=f2008 -Wall -Wextra -Werror "$root/tests/consumer/fortran/consumer.f90" cnc.o \
    -o consumer_f90 $libs -Wl,-rpath,"$libdir"
  ./consumer_f90
  # shellcheck disable=SC2086
  gfortran -std=f2008 "$prefix/share/cnc/fortran/example.f90" cnc.o -o example_f90 $libs \
    -Wl,-rpath,"$libdir"
  ./example_f90
}
if command -v gfortran >/dev/null; then
  check "c. Fortran, installed module source (gfortran)" fortran_consumer
else
  echo "FAIL  c. Fortran: gfortran not found (scripts/install-deps.sh installs it)"
  failures+=("c. Fortran: no gfortran")
fi

# --- d. Installed programs and libraries find the installed libcnc -----------------------------
runpaths() {
  local f rp
  for f in "$prefix/bin/cnc-solve" "$libdir/libcnc_opennl.so"; do
    rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
    echo "${f#"$prefix"/}: RUNPATH [$rp]"
    # shellcheck disable=SC2016 # $ORIGIN is literal
    case "$f:$rp" in
      */cnc-solve:'$ORIGIN/../'*) ;;
      */libcnc_opennl.so:'$ORIGIN') ;;
      *) echo "unexpected RUNPATH"; return 1 ;;
    esac
    # ldd: every library resolves, libcnc from the prefix.
    ldd "$f" | grep -E 'libcnc|not found' | sed 's/^\s*/  /'
    if ldd "$f" | grep -q 'not found'; then return 1; fi
    local found
    found=$(ldd "$f" | sed -n 's/^\s*libcnc\.so\.0 => \(\S*\) .*/\1/p')
    if [ -z "$found" ] || [ "$(readlink -f "$found")" != "$(readlink -f "$libdir/libcnc.so.0")" ]; then
      echo "libcnc.so.0 resolves to '$found', not to $libdir/libcnc.so.0"
      return 1
    fi
  done
}
check "d. RUNPATH of bin/cnc-solve and libcnc_opennl" runpaths
cli() {
  local out err
  out=$("$prefix/bin/cnc-solve" --grid 16)
  echo "$out"
  grep -q 'converged' <<<"$out" || { echo "cnc-solve did not converge"; return 1; }
  # The embedded problem's right-hand side is A x* for a known x*: its error must be small.
  err=$(sed -n 's/.*max |x - x\*| = \([0-9.e+-]*\).*/\1/p' <<<"$out")
  [ -n "$err" ] || { echo "cnc-solve printed no 'max |x - x*|'"; return 1; }
  awk -v e="$err" 'BEGIN { exit !(e < 1e-4) }' || { echo "max |x - x*| = $err is too large"; return 1; }
  echo "OK: max |x - x*| = $err"
}
check "d. bin/cnc-solve --grid 16 (no LD_LIBRARY_PATH)" cli

secs=$(($(date +%s) - start))
if [ ${#failures[@]} -gt 0 ]; then
  echo "test-install: ${#failures[@]} check(s) FAILED (${secs} s):"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "test-install: the installed tree works (pkg-config, CMake, Fortran, cnc-solve) in ${secs} s"
