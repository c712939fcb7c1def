# CUDA backend tests (included by tests/CMakeLists.txt). Built whenever the backend is built (CI
# has nvcc but no GPU: the programs then exit 77 after saying why, and CTest reports a skip).
if(NOT CNC_HAVE_CUDA)
  return()
endif()

# Kernels against host references; matrices from ${CNC_TEST_DATA_DIR}/matrices or CNC_MATRIX_DIR.
cnc_add_test(test_cuda_kernels SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_kernels.cpp
             LIBS cnc_internal TEST_NAME cuda_kernels)
target_compile_definitions(test_cuda_kernels PRIVATE
  CNC_TEST_MATRIX_DIR="${CNC_TEST_DATA_DIR}/matrices")

# The generic backend suite, run against the CUDA backend.
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/test_backend.cpp)
  cnc_add_test(test_backend TEST_NAME backend_cuda ARGS cuda)
endif()

# cncSolveCSRDevice through the public library, with arrays the test puts on the device.
find_package(CUDAToolkit REQUIRED)  # its imported targets are per directory
cnc_add_test(test_cuda_device_arrays SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_device_arrays.cpp
             LIBS cnc CUDA::cudart TEST_NAME cuda_device_arrays)
