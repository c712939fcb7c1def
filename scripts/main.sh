#!/usr/bin/env bash
# The main job: install dependencies, build cnc (Release) and solve the embedded default problem
# (7-point 3D Poisson, 64^3 = 262,144 unknowns) with the automatically chosen backend.
# Extra arguments go to cnc-solve, e.g. scripts/main.sh --grid 128 or scripts/main.sh file.mtx
# File arguments are taken from where you stand: a relative path that names an existing file
# (also the FILE of --option=FILE) is made absolute, and cnc-solve runs in your directory, so
# files it writes land there too.
# It builds everything `cmake --install build` installs (the default target, all), so
#   cmake --install build --prefix /usr/local
# works after it. The benchmarks are left out unless CNC_BUILD_BENCH=ON is in the environment.
set -euo pipefail
caller=$PWD
args=()
for a in "$@"; do
  case $a in
    /* | -* | '') ;; # absolute, an option, or empty: as given
    *) if [[ ! $a =~ ^[0-9.eE+-]+$ ]] && [ -e "$caller/$a" ]; then a="$caller/$a"; fi ;;
  esac
  # --option=FILE
  if [[ $a == --*=* ]]; then
    v=${a#*=}
    if [ -n "$v" ] && [[ $v != /* ]] && [ -e "$caller/$v" ]; then a="${a%%=*}=$caller/$v"; fi
  fi
  args+=("$a")
done
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/install-deps.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCNC_BUILD_TESTS=OFF \
  -DCNC_BUILD_BENCH="${CNC_BUILD_BENCH:-OFF}" >/dev/null
cmake --build build -j"$(nproc)"
cd "$caller"
"$root/build/examples/cnc-solve" ${args[@]+"${args[@]}"}
