# Demos (documentation that runs): LSCM parameterization, Laplacian smoothing with three
# right-hand sides, Poisson / heat by finite differences. Each prints the backend, iterations,
# residual and time, writes files a person can look at (OBJ, PNG, VTK) and checks its answer.
# CTest runs them on ../shared/data/meshes; without the data they exit 77 (skipped).
find_package(PNG QUIET)

add_library(cnc_demo_common STATIC common/mesh.c common/image.c common/render.c common/report.c)
target_include_directories(cnc_demo_common PUBLIC ${CMAKE_CURRENT_LIST_DIR}/common)
target_compile_options(cnc_demo_common PRIVATE ${CNC_WARNINGS})
target_link_libraries(cnc_demo_common PUBLIC cnc m)
if(PNG_FOUND)
  target_compile_definitions(cnc_demo_common PRIVATE CNC_HAVE_PNG)
  target_link_libraries(cnc_demo_common PRIVATE PNG::PNG)
else()
  message(STATUS "libpng not found: the demos write PPM images instead of PNG")
endif()

foreach(demo lscm smoothing poisson harmonics)
  add_executable(cnc-${demo} ${demo}/${demo}.c)
  target_link_libraries(cnc-${demo} PRIVATE cnc cnc_demo_common m)
  target_compile_options(cnc-${demo} PRIVATE ${CNC_WARNINGS})
endforeach()

if(CNC_BUILD_TESTS)
  enable_testing() # this folder is configured before the top level enables testing
  if(DEFINED CNC_SHARED_DATA)
    set(_meshes ${CNC_SHARED_DATA}/meshes)
  else()
    set(_meshes ${PROJECT_SOURCE_DIR}/../shared/data/meshes)
  endif()
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/demo_output)
  file(MAKE_DIRECTORY ${_out})
  add_test(NAME demo_lscm_camelhead
    COMMAND cnc-lscm ${_meshes}/camelhead.off ${_out}/camelhead_uv.obj ${_out}/camelhead_uv.png)
  add_test(NAME demo_lscm_lion
    COMMAND cnc-lscm ${_meshes}/lion.off ${_out}/lion_uv.obj ${_out}/lion_uv.png)
  # The direct solver on a mesh of the data (skipped without it, or without CHOLMOD), and on a
  # generated curved disk (--disk: no data needed) with CHOLMOD and with CG.
  add_test(NAME demo_lscm_camelhead_cholmod
    COMMAND cnc-lscm --solver cholmod ${_meshes}/camelhead.off ${_out}/camelhead_cholmod_uv.obj
            ${_out}/camelhead_cholmod_uv.png)
  add_test(NAME demo_lscm_disk_cholmod
    COMMAND cnc-lscm --solver cholmod --disk 20000 ${_out}/disk_cholmod_uv.obj
            ${_out}/disk_cholmod_uv.png)
  add_test(NAME demo_lscm_disk_cg
    COMMAND cnc-lscm --disk 2000 ${_out}/disk_cg_uv.obj ${_out}/disk_cg_uv.png)
  add_test(NAME demo_smoothing_bunny
    COMMAND cnc-smoothing ${_meshes}/bunny.off 3 ${_out}/bunny_smooth.obj ${_out}/bunny_smooth.png)
  # Manifold harmonics: the 20 smallest eigenpairs of the cotangent Laplacian (ARPACK).
  add_test(NAME demo_harmonics_bunny
    COMMAND cnc-harmonics ${_meshes}/bunny.off 20 ${_out}/bunny_harmonics.png)
  add_test(NAME demo_poisson COMMAND cnc-poisson -n 32 -o ${_out}/poisson)
  add_test(NAME demo_heat COMMAND cnc-poisson -n 24 --heat 5 -o ${_out}/heat)
  set_tests_properties(demo_lscm_camelhead demo_lscm_lion demo_lscm_camelhead_cholmod
    demo_lscm_disk_cholmod demo_lscm_disk_cg demo_smoothing_bunny demo_poisson demo_heat
    demo_harmonics_bunny PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS demo
    FAIL_REGULAR_EXPRESSION "check: FAILED")
endif()
