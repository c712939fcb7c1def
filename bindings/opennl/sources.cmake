# The OpenNL layer's sources, in one list: libcnc_opennl (bindings/opennl/CMakeLists.txt) and the
# fuzz harness that links them statically with the library (fuzz/CMakeLists.txt).
set(CNC_OPENNL_SOURCES nl_compat.cpp nl_parameters.cpp nl_variables.cpp nl_assembly.cpp
  nl_solve.cpp nl_eigen.cpp nl_matrix.cpp nl_matrix_crs32.cpp nl_matrix_crs64.cpp)
list(TRANSFORM CNC_OPENNL_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
