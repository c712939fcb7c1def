#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang (AddressSanitizer + UndefinedBehaviorSanitizer,
# LeakSanitizer on, no suppressions) and runs each, one after the other, for a time box over a
# copy of its committed corpus (fuzz/corpus/<harness>; the copy takes what the run finds, the
# committed corpus is never changed). Fails on any crash, leak, timeout (10 s an input) or memory
# over 2 GiB; the input that did it is kept in <build>/findings/<harness>/.
#   scripts/fuzz.sh [seconds per harness (default 60)] [build folder (default build-fuzz)] [harness...]
#   scripts/fuzz.sh runs=N [build folder] [harness...]   runs each harness for N inputs instead
# (fuzz/RESULTS.md records the long runs made this way).
# Reproduce a finding: <build>/fuzz/fuzz_<harness> <input file>
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
dir=${2:-build-fuzz}
shift $(($# < 2 ? $# : 2))
if [[ $secs == runs=* ]]; then
  budget=(-runs="${secs#runs=}")
  what="${secs#runs=} inputs"
else
  budget=(-max_total_time="$secs")
  what="$secs s"
fi
command -v clang >/dev/null || { echo "fuzz: clang not found (scripts/install-deps.sh)"; exit 1; }
# Only the CPU backend: the harnesses test cnc's own code, not a GPU runtime.
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCNC_FUZZ=ON \
  -DCNC_SANITIZE=address,undefined -DCNC_WERROR=ON -DCNC_WITH_CUDA=OFF -DCNC_WITH_OPENCL=OFF \
  -DCNC_BUILD_TESTS=OFF -DCNC_BUILD_EXAMPLES=OFF -DCNC_BUILD_BENCH=OFF >/dev/null
harnesses=(matrix_market solve_csr state_machine opennl)
[ $# -gt 0 ] && harnesses=("$@")
cmake --build "$dir" -j"$(nproc)" --target "${harnesses[@]/#/fuzz_}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export LSAN_OPTIONS="print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for h in "${harnesses[@]}"; do
  work=$dir/fuzz-run/$h
  rm -rf "$work"
  mkdir -p "$work/corpus" "$dir/findings/$h"
  cp fuzz/corpus/"$h"/* "$work/corpus/"
  dict=()
  [ -f "fuzz/$h.dict" ] && dict=("-dict=fuzz/$h.dict")
  echo "=== fuzz_$h: $what ==="
  if ! "$dir/fuzz/fuzz_$h" "$work/corpus" "${dict[@]}" "${budget[@]}" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/findings/$h/" \
    >"$work/log" 2>&1; then
    tail -n 80 "$work/log"
    echo "fuzz: fuzz_$h failed (log: $work/log, input: $dir/findings/$h/)"
    exit 1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)|^Done |^INFO: seed corpus' \
    "$work/log" | sed 's/^/  /'
done
echo "fuzz: ${#harnesses[@]} harnesses, $what each: no crash, leak, timeout or misread"
