#!/bin/bash
# A/B: SELL unroll 2 at kc = 8 (this tree) against 1 (.carry/base_u: common.cuh before), bench_block_cg 128^3 k = 8
# alternated twice, then test_backend cuda. Carried: .devfull, .carry.
set -uo pipefail
T="bench_block_cg test_backend" T0=bench_block_cg BASE=.carry/base_u
. device_runs/ab_build.sh
echo "built at $SECONDS s"
for r in 1 2; do
  for b in b0 b; do
    echo "== $b round $r"
    $(bb $b) --backend cuda --n 128 --k 8 --reps 3 --verbose 2>&1 | grep -E "block CG:|^\| (k sep|lock|block)" | tail -4
  done
done
echo "== test_backend cuda (U=2 at kc 8)"
timeout 300 /tmp/b/tests/test_backend cuda 2>&1 | grep -E "PASSED|FAILED|ERROR|Failure" | head
echo "done at $SECONDS s"
