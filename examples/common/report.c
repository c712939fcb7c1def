/* Solve report shared by the demos (see report.h). */
#include "report.h"

#include <stdio.h>

#include "cnc.h"

void demo_report(const char* what) {
  const char *backend = "", *device = "", *reason = "";
  CNCint iterations = 0;
  double residual = 0.0, seconds = 0.0, gflops = 0.0;
  cncGetString(CNC_BACKEND_NAME, &backend);
  cncGetString(CNC_DEVICE_NAME, &device);
  cncGetString(CNC_REASON_NAME, &reason);
  cncGetIntegerv(CNC_USED_ITERATIONS, &iterations);
  cncGetDoublev(CNC_TRUE_ERROR, &residual);
  cncGetDoublev(CNC_ELAPSED_TIME, &seconds);
  cncGetDoublev(CNC_GFLOPS, &gflops);
  printf("%s: backend %s (%s): %d iterations, %s, residual %.3g, %.3f s, %.2f GFLOP/s\n", what,
         backend, device, iterations, reason, residual, seconds, gflops);
}
