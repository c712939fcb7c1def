/* One line a demo prints after cncSolve: backend, device, iterations, reason, true residual,
 * time and GFLOP/s of the current context's last solve. */
#ifndef CNC_DEMO_REPORT_H
#define CNC_DEMO_REPORT_H

void demo_report(const char* what);

#endif
