# CUDA backend tests (included by tests/CMakeLists.txt). Built whenever the backend is built (CI
# has nvcc but no GPU: the programs then exit 77 after saying why, and CTest reports a skip).
if(NOT CNC_HAVE_CUDA)
  return()
endif()

# Kernels against host references; matrices from ${CNC_TEST_DATA_DIR}/matrices or CNC_MATRIX_DIR.
# cuda_kernels_spmv (SpMV), cuda_kernels_steps (each PCG step), cuda_kernels_solves (graphs,
# determinism, whole solves, statuses); helpers: support/cuda_kernels_support.*.
cnc_add_test_support(cnc_test_cuda_kernels_support
                     SOURCES ${CMAKE_CURRENT_LIST_DIR}/support/cuda_kernels_support.cpp
                     LIBS cnc_internal)
target_compile_definitions(cnc_test_cuda_kernels_support PRIVATE
  CNC_TEST_MATRIX_DIR="${CNC_TEST_DATA_DIR}/matrices")
foreach(part spmv steps solves)
  cnc_add_test(test_cuda_kernels_${part}
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_kernels_${part}.cpp
               LIBS cnc_test_cuda_kernels_support cnc_internal TEST_NAME cuda_kernels_${part})
endforeach()

# The generic backend suite, run against the CUDA backend.
cnc_add_test(test_backend TEST_NAME backend_cuda ARGS cuda)
# The same without the persistent kernel (which takes the small test systems): SELL's split-row
# SpMV and, in double at k = 8, its fused Gram product (spmv_gram), which must then be taken.
cnc_add_test(test_backend TEST_NAME backend_cuda_no_persistent ARGS cuda)
set_tests_properties(backend_cuda_no_persistent PROPERTIES ENVIRONMENT
                     "CNC_CUDA_PERSISTENT_ROWS=0;CNC_TEST_EXPECT_SPMV_GRAM=1;${CNC_TEST_ENV}")

# cncSolveCSRDevice through the public library, with arrays the test puts on the device.
find_package(CUDAToolkit REQUIRED)  # its imported targets are per directory
cnc_add_test(test_cuda_device_arrays SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_device_arrays.cpp
             LIBS cnc CUDA::cudart TEST_NAME cuda_device_arrays)
