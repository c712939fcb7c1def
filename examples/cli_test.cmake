# One cnc-solve run for CTest (cmake -P): -DPROG=<cnc-solve> -DARGS=<arguments, '|'-separated>
# -DRC=<expected exit status> -DMATCH=<regular expression the output must contain>. The status
# must be exactly RC, so a LeakSanitizer report on an error path (status 23) fails the test.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${PROG} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT rc STREQUAL RC)
  message(FATAL_ERROR "cnc-solve ${args}: exit status ${rc}, expected ${RC}")
endif()
if(NOT out MATCHES "${MATCH}")
  message(FATAL_ERROR "cnc-solve ${args}: the output does not match '${MATCH}'")
endif()
