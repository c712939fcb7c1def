/* cnc.h alone must compile as strict C99 (-std=c99 -pedantic -Werror -Wall -Wextra
 * -Wstrict-prototypes): this file includes nothing else and uses a few of its types and macros. */
#include "cnc.h"

int cnc_header_c99_probe(void);

int cnc_header_c99_probe(void) {
  CNCstatus (*solve)(void) = cncSolve;
  CNClogCallback log = 0;
  CNCprogressCallback progress = 0;
  CNCcontext ctx = 0;
  CNCint64 big = (CNCint64)CNC_VERSION_NUMBER;
  (void)log, (void)progress, (void)ctx;
  return (solve != 0) + (int)(big > 0) + CNC_ERR_NO_FP64 + CNC_STATE_SOLVED;
}
