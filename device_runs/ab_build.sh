# Sourced by the device scripts that build this tree and, for an A/B, the code before a change:
# sets up the GPU environment (gpu_env.sh), builds /tmp/b (this tree) with the targets in $T and,
# when $T0 is set, /tmp/b0 with the targets in $T0 from a copy of this tree with $BASE (default
# device_runs/baseline_bcg/) put back over it (the files before the change, put there by hand,
# not committed); exits on a failed build. bb b|b0: that build's bench_block_cg; cuda_suites;
# ocl_tests;
# cols_ab K...: COLS against the per-row SpMV on NVIDIA's OpenCL.
. device_runs/gpu_env.sh
cmake -S . -B /tmp/b -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg.log 2>&1 &&
  ninja -C /tmp/b $T > /tmp/build.log 2>&1 || { grep -B2 -A12 -E "error|FAILED" /tmp/build.log | head -60; exit 1; }
if [ -n "${T0:-}" ]; then
  rm -rf /tmp/base && mkdir -p /tmp/base && cp -r "$PWD"/. /tmp/base/ && rm -rf /tmp/base/build*
  cp -r "${BASE:-device_runs/baseline_bcg}"/. /tmp/base/
  (cd /tmp/base && cmake -S . -B /tmp/b0 -G Ninja $CNC_DEVICE_CMAKE > /tmp/cfg0.log 2>&1 &&
    ninja -C /tmp/b0 $T0 > /tmp/build0.log 2>&1) || { tail -30 /tmp/build0.log; exit 1; }
fi
bb() { find /tmp/$1 -name bench_block_cg -type f | head -1; }
# Every CUDA suite of /tmp/b (built with every target: T=""): the ctest entries named *cuda* and
# the public-API suites forced onto CUDA (CNC_BACKEND=cuda); whole outputs in $OUT, the summaries
# and failures printed.
cuda_suites() {
  local pick="tests passed|tests failed|\(Failed\)|Timeout|ERROR|FAILED|differ|expected"
  echo "== ctest -R cuda"
  (cd /tmp/b && ctest -j8 --timeout 200 --output-on-failure -R cuda) > "$OUT/ctest-cuda.txt" 2>&1
  grep -E "$pick" "$OUT/ctest-cuda.txt" | head -30
  echo "== ctest with CNC_BACKEND=cuda (public-API suites forced onto the GPU)"
  (cd /tmp/b && CNC_BACKEND=cuda ctest -j8 --timeout 200 --output-on-failure \
     -R "test_solve|nonsymmetric|demo|opennl|readme|cnc_solve_poisson|block|iterate") \
    > "$OUT/ctest-forced.txt" 2>&1
  grep -E "$pick" "$OUT/ctest-forced.txt" | head -20
  echo "tests done at $SECONDS s"
}
# The OpenCL suites of /tmp/b (needs test_backend, test_opencl_kernels, test_block_cg and
# test_complex in $T).
ocl_tests() {
  echo "== test_backend opencl"
  /tmp/b/tests/test_backend opencl 2>&1 | grep -E "PASSED|FAILED|ERROR|Failure" | head -20
  echo "== ctest on OpenCL (kernels, block CG, complex)"
  (cd /tmp/b && CNC_BACKEND=opencl ctest -j4 --timeout 300 --output-on-failure \
     -R "opencl_kernels$|block|complex_opencl") 2>&1 | tail -6
}
# COLS (a work-item per row and column) against the work-item per row on NVIDIA's OpenCL, same
# build (bench_block_cg in $T), switched by CNC_OPENCL_SPMV_COLS=0|1 and alternated twice:
# bench_block_cg 128^3 lock-step at each k given.
cols_ab() {
  local bench k round c
  bench=$(bb b)
  for k in "$@"; do
    for round in 1 2; do
      for c in 0 1; do
        echo "== k = $k round $round CNC_OPENCL_SPMV_COLS=$c"
        CNC_OPENCL_SPMV_COLS=$c $bench --backend opencl --n 128 --k $k --reps 1 | grep -E "^\| [klb]" | head -3
      done
    done
  done
}
