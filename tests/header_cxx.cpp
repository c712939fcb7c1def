// cnc.h alone must compile as C++ (-pedantic -Werror -Wall -Wextra), with C linkage for its API.
#include "cnc.h"

int cnc_header_cxx_probe();

int cnc_header_cxx_probe() {
  CNCstatus (*solve)() = cncSolve;
  const char* (*status_string)(CNCstatus) = cncStatusString;
  return (solve != nullptr) + (status_string != nullptr) + CNC_OK;
}
