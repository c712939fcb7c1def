# The Python wheel (`pip install .` through scikit-build-core, see pyproject.toml): libcnc goes
# into the `cnc` package folder, next to cnc/__init__.py, where cnc/_library.py looks for it.
# Active only when scikit-build-core drives CMake (it defines SKBUILD); the wheel installs only
# the `python` component, so the C install (headers, CMake package, pkg-config) stays out of it.
if(NOT DEFINED SKBUILD)
  return()
endif()

# One real file under the library's SONAME (libcnc.so.0 on Linux): a wheel is a zip and cannot
# hold the libcnc.so -> libcnc.so.0 -> libcnc.so.0.1.0 symlink chain (each link would become a
# full copy). Nothing links against it inside the wheel: ctypes opens it by path.
if(APPLE)
  set(_cnc_wheel_lib_name "libcnc.${PROJECT_VERSION_MAJOR}.dylib")
elseif(WIN32)
  set(_cnc_wheel_lib_name "cnc.dll")
else()
  set(_cnc_wheel_lib_name "libcnc.so.${PROJECT_VERSION_MAJOR}")
endif()
install(FILES "$<TARGET_FILE:cnc>" DESTINATION cnc RENAME "${_cnc_wheel_lib_name}"
  COMPONENT python)

# The package's constants (cnc/constants.py, shipped as they are) must carry the version that
# the wheel's metadata (read from project(VERSION)) and the library say.
file(READ "${PROJECT_SOURCE_DIR}/bindings/python/cnc/constants.py" _cnc_py_constants)
foreach(part MAJOR MINOR PATCH)
  string(REGEX MATCH "VERSION_${part} = ([0-9]+)" _m "${_cnc_py_constants}")
  if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION_${part})
    message(FATAL_ERROR "bindings/python/cnc/constants.py VERSION_${part}=${CMAKE_MATCH_1} but "
      "project() says ${PROJECT_VERSION_${part}}")
  endif()
endforeach()
message(STATUS "cnc: Python wheel build: ${_cnc_wheel_lib_name} into the cnc package")
