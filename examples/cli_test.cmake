# One cnc-solve run for CTest (cmake -P):
#   -DPROG=<cnc-solve> -DARGS=<arguments, '|'-separated> -DRC=<expected exit status>
#   -DMATCH=<regular expression stdout + stderr (or stderr + stdout) must contain>
# and optionally:
#   -DSTDOUT_MATCH=<regular expression stdout alone must contain>
#   -DSTDERR_EMPTY=1          stderr must be empty
#   -DNOMATCH=<regular expression stdout + stderr must not contain>
#   -DREMOVE=<files, '|'-separated, removed before the run, so that none is left from before>
#   -DSTDOUT_FILE=<file that receives stdout>
#   -DCHECK=<a command run after, '|'-separated (cli/cli_check.py): it must exit 0>
# The status must be exactly RC, so a LeakSanitizer report on an error path (status 23) fails
# the test.
string(REPLACE "|" ";" args "${ARGS}")
if(DEFINED REMOVE)
  string(REPLACE "|" ";" _remove "${REMOVE}")
  file(REMOVE ${_remove})
endif()
execute_process(COMMAND ${PROG} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("stdout:\n${out}\nstderr:\n${err}")
if(DEFINED STDOUT_FILE)
  file(WRITE "${STDOUT_FILE}" "${out}")
endif()
if(NOT rc STREQUAL RC)
  message(FATAL_ERROR "cnc-solve ${args}: exit status ${rc}, expected ${RC}")
endif()
if(NOT "${out}${err}" MATCHES "${MATCH}" AND NOT "${err}${out}" MATCHES "${MATCH}")
  message(FATAL_ERROR "cnc-solve ${args}: the output does not match '${MATCH}'")
endif()
if(DEFINED STDOUT_MATCH AND NOT out MATCHES "${STDOUT_MATCH}")
  message(FATAL_ERROR "cnc-solve ${args}: stdout does not match '${STDOUT_MATCH}'")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  message(FATAL_ERROR "cnc-solve ${args}: stderr is not empty")
endif()
if(DEFINED NOMATCH AND "${out}${err}" MATCHES "${NOMATCH}")
  message(FATAL_ERROR "cnc-solve ${args}: the output matches '${NOMATCH}'")
endif()
if(DEFINED CHECK)
  string(REPLACE "|" ";" _check "${CHECK}")
  execute_process(COMMAND ${_check} RESULT_VARIABLE crc OUTPUT_VARIABLE cout
                  ERROR_VARIABLE cout)
  message("check:\n${cout}")
  if(NOT crc STREQUAL "0")
    message(FATAL_ERROR "cnc-solve ${args}: the check '${_check}' failed (${crc})")
  endif()
endif()
