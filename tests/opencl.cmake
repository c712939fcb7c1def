# OpenCL backend tests (included by tests/CMakeLists.txt). On a machine without any OpenCL device
# the programs exit 77 after saying why (a CTest skip); CI runs them on PoCL (CPU device).
if(NOT CNC_HAVE_OPENCL)
  return()
endif()

# The suite's environment (it gives PoCL a writable kernel cache), or a fallback of our own.
if(DEFINED CNC_TEST_ENV)
  set(CNC_OPENCL_TEST_ENV "${CNC_TEST_ENV}")
else()
  set(CNC_OPENCL_TEST_ENV "POCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/pocl-cache"
                          "CMOCKA_MESSAGE_OUTPUT=stdout")
endif()

cnc_add_test(test_opencl_kernels SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_opencl_kernels.cpp
             LIBS cnc_internal TEST_NAME opencl_kernels)
set_tests_properties(opencl_kernels PROPERTIES ENVIRONMENT "${CNC_OPENCL_TEST_ENV}")

# The GPU code paths (work-groups with barriers, CSR stream and CSR vector) on the CPU device:
# PoCL's default shape here is one work-item per group, which a GPU never uses.
cnc_add_test(test_opencl_kernels TEST_NAME opencl_kernels_gpu_stream)
set_tests_properties(opencl_kernels_gpu_stream PROPERTIES ENVIRONMENT
  "CNC_OPENCL_WG=64;CNC_OPENCL_CSR_WIDTH=-1;${CNC_OPENCL_TEST_ENV}")
cnc_add_test(test_opencl_kernels TEST_NAME opencl_kernels_gpu_vector)
set_tests_properties(opencl_kernels_gpu_vector PROPERTIES ENVIRONMENT
  "CNC_OPENCL_WG=32;CNC_OPENCL_CSR_WIDTH=4;${CNC_OPENCL_TEST_ENV}")

# The SpMV with a work-item per row and column (spmv.cl's COLS, chosen from k = 16), forced for
# the suite's k = 3 on SELL and on CSR (one work-item a row, which COLS needs).
cnc_add_test(test_opencl_kernels TEST_NAME opencl_kernels_gpu_cols)
set_tests_properties(opencl_kernels_gpu_cols PROPERTIES ENVIRONMENT
  "CNC_OPENCL_WG=64;CNC_OPENCL_CSR_WIDTH=1;CNC_OPENCL_SPMV_COLS=1;${CNC_OPENCL_TEST_ENV}")

# Machines without OpenCL, simulated: no platform (an empty ICD folder), no loader at all.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/opencl-empty-vendors)
add_test(NAME opencl_no_platform COMMAND test_opencl_kernels --expect-absent "no OpenCL platform")
set_tests_properties(opencl_no_platform PROPERTIES ENVIRONMENT
  "OCL_ICD_VENDORS=${CMAKE_CURRENT_BINARY_DIR}/opencl-empty-vendors;${CNC_OPENCL_TEST_ENV}")
add_test(NAME opencl_no_loader COMMAND test_opencl_kernels --expect-absent "cannot load")
set_tests_properties(opencl_no_loader PROPERTIES ENVIRONMENT
  "CNC_OPENCL_LIBRARY=${CMAKE_CURRENT_BINARY_DIR}/no-such-dir/libOpenCL.so.1;${CNC_OPENCL_TEST_ENV}")

# The generic backend suite, run against the OpenCL backend; again through the GPU's CSR stream
# kernel (tiles windowed, long rows left to their pieces, empty rows).
cnc_add_test(test_backend TEST_NAME backend_opencl ARGS opencl)
set_tests_properties(backend_opencl PROPERTIES ENVIRONMENT "${CNC_OPENCL_TEST_ENV}")
cnc_add_test(test_backend TEST_NAME backend_opencl_gpu_stream ARGS opencl)
set_tests_properties(backend_opencl_gpu_stream PROPERTIES ENVIRONMENT
  "CNC_OPENCL_WG=64;CNC_OPENCL_CSR_WIDTH=-1;${CNC_OPENCL_TEST_ENV}")
# And through COLS, forced (its long rows summed from their pieces, masked columns, k = 3, 8, 9).
cnc_add_test(test_backend TEST_NAME backend_opencl_gpu_cols ARGS opencl)
set_tests_properties(backend_opencl_gpu_cols PROPERTIES ENVIRONMENT
  "CNC_OPENCL_WG=64;CNC_OPENCL_CSR_WIDTH=1;CNC_OPENCL_SPMV_COLS=1;${CNC_OPENCL_TEST_ENV}")

# The complex kernels with several lanes a complex row (GPUs' choice; PoCL takes one a row),
# their sums met in local memory: 4 lanes in groups of 32, and 8 in groups of 64.
cnc_add_test(test_backend TEST_NAME backend_opencl_gpu_zcsr_lanes4 ARGS opencl "test_zcsr*")
set_tests_properties(backend_opencl_gpu_zcsr_lanes4 PROPERTIES ENVIRONMENT
  "CNC_OPENCL_WG=32;CNC_OPENCL_CSR_WIDTH=4;${CNC_OPENCL_TEST_ENV}")
cnc_add_test(test_backend TEST_NAME backend_opencl_gpu_zcsr_lanes8 ARGS opencl "test_zcsr*")
set_tests_properties(backend_opencl_gpu_zcsr_lanes8 PROPERTIES ENVIRONMENT
  "CNC_OPENCL_WG=64;CNC_OPENCL_CSR_WIDTH=8;${CNC_OPENCL_TEST_ENV}")

# The re-runs above with a GPU's work-group shapes: the same host code as opencl_kernels and
# backend_opencl, other kernels inside PoCL (compiled by it, not by the sanitizers' compiler), so
# the sanitizer stages of scripts/test.sh leave them out by this label.
set_tests_properties(opencl_kernels_gpu_stream opencl_kernels_gpu_vector opencl_kernels_gpu_cols
                     backend_opencl_gpu_stream backend_opencl_gpu_cols
                     backend_opencl_gpu_zcsr_lanes4 backend_opencl_gpu_zcsr_lanes8
                     PROPERTIES LABELS opencl_shape)

# The main job on the OpenCL device, large enough (262 K unknowns, 14 MB of values) for the
# staged (pinned) matrix upload: must converge to the known solution.
if(TARGET cnc-solve)
  add_test(NAME cnc_solve_opencl COMMAND cnc-solve --grid 64 --backend opencl --max-iter 2000)
  set_tests_properties(cnc_solve_opencl PROPERTIES ENVIRONMENT "${CNC_OPENCL_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "converged after [0-9]+ iterations.*max \\|x - x\\*\\| = [0-9.]+e-(0[6-9]|1[0-9])"
    SKIP_REGULAR_EXPRESSION "backend not available")
  # CNC_OPENCL_PROFILE=1: the system's kernel times on stderr when it is released (the table
  # sorted by time, so only that a step kernel is counted is matched; stderr and stdout
  # interleave in any order, and the solve itself is cnc_solve_opencl's test).
  add_test(NAME cnc_solve_opencl_profile COMMAND cnc-solve --grid 16 --backend opencl)
  set_tests_properties(cnc_solve_opencl_profile PROPERTIES
    ENVIRONMENT "CNC_OPENCL_PROFILE=1;${CNC_OPENCL_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "cnc OpenCL kernel times [^\n]*ms in all\n.* update_xr +[1-9][0-9]* calls"
    SKIP_REGULAR_EXPRESSION "backend not available")
endif()

# Threads that first use OpenCL at once, in a process that has not touched it (device discovery
# is done once, under a lock). use_sigaltstack=0: under AddressSanitizer (GCC 12) a thread that
# has called into PoCL fails ASan's own unmapping of its alternate signal stack at thread exit
# ("unable to unmap", a CHECK inside the runtime's thread teardown, every run); the option only
# stops ASan from installing that stack.
cnc_add_test(test_opencl_cold_threads SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_opencl_cold_threads.c
             LIBS cnc Threads::Threads TEST_NAME opencl_cold_threads)
set_tests_properties(opencl_cold_threads PROPERTIES ENVIRONMENT
  "ASAN_OPTIONS=use_sigaltstack=0;${CNC_OPENCL_TEST_ENV}")
