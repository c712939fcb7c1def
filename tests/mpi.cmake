# libcnc_mpi (built when MPI is found): the distributed solves on 1, 2, 3 and 4 processes, each
# against the one-process cncSolveCSR in the same run (test_mpi_solve.c), and the distributed
# state machine against libcnc's one-process state machine (test_mpi_assembly.c). mpiexec is CMake's
# (MPIEXEC_EXECUTABLE, MPIEXEC_NUMPROC_FLAG, MPIEXEC_PREFLAGS, MPIEXEC_POSTFLAGS). With Open MPI:
# --oversubscribe (more processes than cores is how the tests run on a small machine), and the
# environment variables that let it run as root (CI containers); other MPIs ignore them.
# Not in the sanitizer runs (scripts/test.sh): under ASan, Open MPI 4.1 alone (MPI_Init, one
# MPI_Allreduce, MPI_Finalize, nothing of cnc) leaves about 120 KB in 3,350 allocations that
# LeakSanitizer reports; TSan's run selects its tests by name and these are not among them. The
# shared code they reach runs under the sanitizers elsewhere: the Krylov methods over an operator
# system in test_solve_operator (ASan), the methods themselves in the nonsymmetric tests (TSan).
if(NOT TARGET cnc_mpi)
  return()
endif()
foreach(name test_mpi_solve test_mpi_assembly)
  add_executable(${name} ${name}.c)
  target_link_libraries(${name} PRIVATE cnc_mpi cnc MPI::MPI_C m)
  target_compile_options(${name} PRIVATE ${CNC_WARNINGS})
endforeach()
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE cnc_mpiexec_version
                ERROR_QUIET)
set(cnc_mpiexec_flags ${MPIEXEC_PREFLAGS})
if(cnc_mpiexec_version MATCHES "Open MPI|OpenRTE")
  list(APPEND cnc_mpiexec_flags --oversubscribe)
endif()
foreach(part solve assembly)
  foreach(np 1 2 3 4)
    add_test(NAME mpi_${part}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${cnc_mpiexec_flags}
                     $<TARGET_FILE:test_mpi_${part}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(mpi_${part}_np${np} PROPERTIES TIMEOUT 120 ENVIRONMENT
      "${CNC_TEST_ENV};OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endforeach()
# One rank's host allocation failing inside a collective call (CNC_FAULT_INJECT=host-alloc:N on
# the last of 2 ranks alone, an MPMD launch; N reaches each reservation of Begin(SYSTEM),
# End(MATRIX) with locks (3) and cncMPISolve (3) in turn): every rank gets its
# CNC_ERR_OUT_OF_MEMORY, none waits in a collective, and the call then succeeds.
foreach(fault 1 2 3 4 5 6 7)
  add_test(NAME mpi_assembly_host_alloc_${fault}
           COMMAND ${MPIEXEC_EXECUTABLE} ${cnc_mpiexec_flags}
                   ${MPIEXEC_NUMPROC_FLAG} 1 $<TARGET_FILE:test_mpi_assembly> --host-alloc-fault
                   ${MPIEXEC_POSTFLAGS} :
                   ${MPIEXEC_NUMPROC_FLAG} 1 env CNC_FAULT_INJECT=host-alloc:${fault}
                   $<TARGET_FILE:test_mpi_assembly> --host-alloc-fault ${MPIEXEC_POSTFLAGS})
  # N counts the CPU ranks' reservations: CNC_BACKEND pinned (a GPU backend reserves others).
  set_tests_properties(mpi_assembly_host_alloc_${fault} PROPERTIES TIMEOUT 60 ENVIRONMENT
    "${CNC_TEST_ENV};CNC_BACKEND=cpu;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
endforeach()
# cnc_mpi.h alone, as strict C99 (as test_header_c99 checks cnc.h).
list(TRANSFORM MPI_C_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE cnc_mpi_includes)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/header_mpi_c99.c
     "#include <cnc_mpi.h>\nint main(void) {\n  CNCMPIcontext c = 0;\n  return c != 0;\n}\n")
add_test(NAME test_header_mpi_c99
         COMMAND ${CMAKE_C_COMPILER} -std=c99 -pedantic -Werror -Wall -Wextra -Wstrict-prototypes
                 -fsyntax-only -I${PROJECT_SOURCE_DIR}/include ${cnc_mpi_includes}
                 ${CMAKE_CURRENT_BINARY_DIR}/header_mpi_c99.c)
