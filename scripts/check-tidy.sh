#!/usr/bin/env bash
# Fails (and lists the findings) when clang-tidy, with the repository's .clang-tidy, finds
# anything in the library's C++ sources: the src/**/*.cpp files of a build's
# compile_commands.json, and the repository headers they include. CUDA kernels (.cu) are left to
# nvcc. Runs one clang-tidy per source, as many at once as there are cores.
#   scripts/check-tidy.sh [build folder]   (default build-tidy; configured here when new)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${1:-build-tidy}
command -v clang-tidy >/dev/null || { echo "check-tidy: clang-tidy not found"; exit 1; }
start=$SECONDS
if [ -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" >/dev/null
else
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
# The sources include generated headers (the embedded OpenCL kernels): build those only.
if grep -q '^CNC_HAVE_OPENCL:INTERNAL=ON' "$dir/CMakeCache.txt"; then
  cmake --build "$dir" --target cnc_opencl_kernels >/dev/null
fi
# clang-tidy reads the compile commands through clang, which rejects GCC-only flags.
out=$dir/tidy
rm -rf "$out" && mkdir -p "$out/logs"
sed -e 's/ -mtls-dialect=gnu2//g' "$dir/compile_commands.json" >"$out/compile_commands.json"
mapfile -t files < <(grep -o '"file": *"[^"]*"' "$out/compile_commands.json" |
  sed 's/^"file": *"//; s/"$//' | grep "^$root/src/.*\.cpp$" | sort -u)
if [ ${#files[@]} -eq 0 ]; then
  echo "check-tidy: no src/**/*.cpp in $dir/compile_commands.json"
  exit 1
fi
export CNC_TIDY_DB=$out CNC_TIDY_FILTER="^$root/(src|include|kernels)/.*\.(h|hpp|cuh)$"
# shellcheck disable=SC2016  # the single-quoted script expands its own variables
printf '%s\0' "${files[@]}" | xargs -0 -n1 -P"$(nproc)" bash -c '
  log=$CNC_TIDY_DB/logs/$(echo "${1#"$PWD"/}" | tr / _).log
  clang-tidy -p "$CNC_TIDY_DB" --quiet --header-filter="$CNC_TIDY_FILTER" "$1" >"$log" 2>&1 ||
    echo "$1" >>"$CNC_TIDY_DB/failed"' _
if [ -s "$out/failed" ]; then
  # Warnings are errors (.clang-tidy), and a header's finding shows once however many include it.
  echo "check-tidy: clang-tidy findings (full output in $out/logs):"
  cat "$out"/logs/*.log | { grep -E '^([^ ]+:[0-9]+:[0-9]+: )?error: ' || true; } |
    sed "s|^$root/||" | sort -u | sed 's/^/  /'
  while read -r f; do  # a clang-tidy that failed without a diagnostic (a crash): its output
    rel=${f#"$root"/}
    log=$out/logs/$(echo "$rel" | tr / _).log
    grep -q 'error: ' "$log" && continue
    echo "check-tidy: clang-tidy failed on $rel:"
    tail -20 "$log"
  done < <(sort "$out/failed")
  echo "check-tidy: failed on $(wc -l <"$out/failed") of ${#files[@]} sources"
  exit 1
fi
echo "check-tidy: ${#files[@]} sources clean ($((SECONDS - start)) s)"
