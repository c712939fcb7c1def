#!/usr/bin/env bash
# A long fuzzing campaign on a many-core machine: 10^6 inputs per harness, each harness split over
# several processes (own seed, own copy of the committed corpus), all running at once. The
# harnesses come prebuilt (scripts/fuzz.sh builds them; the binaries need only libc and
# libstdc++, so they can be copied to another machine with the corpora).
#   fuzz/campaign.sh BIN_DIR CORPUS_DIR OUT_DIR [harness:processes ...]
# BIN_DIR holds fuzz_<harness>; CORPUS_DIR is fuzz/corpus; default split: state_machine:4
# solve_csr:8 opennl:4 (matrix_market runs 10^6 inputs in minutes on one core: scripts/fuzz.sh).
# CNC_FUZZ_RUNS changes the 10^6. Writes OUT_DIR/<harness>-<p>.log and OUT_DIR/crashes/; exits 1 if any process failed.
set -u
runs=${CNC_FUZZ_RUNS:-1000000}  # inputs per harness
bin=$1 corpus=$2 out=$3
shift 3
specs=("$@")
[ ${#specs[@]} -eq 0 ] && specs=(state_machine:4 solve_csr:8 opennl:4)
dicts=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
work=$(mktemp -d)
mkdir -p "$out/crashes"
for spec in "${specs[@]}"; do
  h=${spec%:*} p_count=${spec#*:}
  for p in $(seq 1 "$p_count"); do
    mkdir -p "$work/$h-$p/corpus" "$work/$h-$p/findings"
    cp "$corpus/$h"/* "$work/$h-$p/corpus/"
    dict=()
    [ -f "$dicts/$h.dict" ] && dict=("-dict=$dicts/$h.dict")
    (
      start=$(date +%s)
      "$bin/fuzz_$h" "$work/$h-$p/corpus" "${dict[@]}" -runs=$((runs / p_count)) \
        -seed=$((1000 + p)) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/$h-$p/findings/" >"$out/$h-$p.log" 2>&1
      echo "rc=$? wall=$(($(date +%s) - start))" >>"$out/$h-$p.log"
    ) &
  done
done
wait
find "$work" -path "*/findings/*" -type f -exec cp {} "$out/crashes/" \;
rm -rf "$work"
failed=0
for f in "$out"/*.log; do
  grep -q "^rc=0 " "$f" || failed=1
  echo "$(basename "$f" .log): $(grep -E '^Done' "$f" || echo 'FAILED') $(grep -E '^rc=' "$f")"
done
exit $failed
