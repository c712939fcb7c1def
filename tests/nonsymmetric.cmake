# Nonsymmetric solvers (BiCGSTAB, GMRES) through the public API (included by tests/CMakeLists.txt).
# `nonsymmetric` runs generated problems (its OpenCL part is skipped without a device);
# `nonsymmetric_matrices` the real matrices of shared/data/matrices (77 when absent).

cnc_add_test(test_nonsymmetric SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_nonsymmetric.c LIBS cnc
             TEST_NAME nonsymmetric)
cnc_add_test(test_nonsymmetric TEST_NAME nonsymmetric_matrices ARGS matrices)

# Under AddressSanitizer, LeakSanitizer's exit-time scan of this test crashes in its tracer on a
# corrupt dynamic-TLS entry of the main thread ("DTLS 7 at 0x53d-...", signal 11), after all 13
# cases passed. ASan's memory checks and UBSan stay on; only the exit-time leak scan is skipped.
if(CNC_SANITIZE MATCHES "address")
  set_property(TEST nonsymmetric APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endif()
