# Nonsymmetric solvers (BiCGSTAB, GMRES) through the public API (included by tests/CMakeLists.txt).
# `nonsymmetric` runs generated problems (its OpenCL part is skipped without a device);
# `nonsymmetric_matrices` the real matrices of shared/data/matrices (77 when absent).

cnc_add_test(test_nonsymmetric SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_nonsymmetric.c LIBS cnc
             TEST_NAME nonsymmetric)
cnc_add_test(test_nonsymmetric TEST_NAME nonsymmetric_matrices ARGS matrices)
