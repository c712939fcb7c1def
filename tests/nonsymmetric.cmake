# Nonsymmetric solvers (BiCGSTAB, GMRES) through the public API (included by tests/CMakeLists.txt).
# `nonsymmetric_accuracy`, `nonsymmetric_outcomes` and `nonsymmetric_parameters` run generated
# problems (the OpenCL part is skipped without a device); `nonsymmetric_matrices` the real
# matrices of shared/data/matrices (77 when absent). Helpers: support/nonsymmetric_support.*.
# Every name keeps "nonsymmetric" (scripts select these tests with ctest -R nonsymmetric).
cnc_add_test_support(cnc_test_nonsymmetric_support
                     SOURCES ${CMAKE_CURRENT_LIST_DIR}/support/nonsymmetric_support.c LIBS cnc)
foreach(part accuracy outcomes parameters matrices)
  cnc_add_test(test_nonsymmetric_${part}
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_nonsymmetric_${part}.c
               LIBS cnc_test_nonsymmetric_support cnc TEST_NAME nonsymmetric_${part})
endforeach()
