/* Helpers shared by the test_bad_input_* suites. Bad arguments go through the public API: every
 * refused call must return its documented status, and the same context must then still solve a
 * system correctly (checked against a dense Cholesky solve done here).
 *
 * Here: the tiny system (N unknowns) and its dense Cholesky solution, the check that a context
 * still solves it, and EXPECT (a refused call's status, and a message that names the call). */
#ifndef CNC_BAD_INPUT_SUPPORT_H
#define CNC_BAD_INPUT_SUPPORT_H

#include "cnc.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { N = 7 };

/* The tiny SPD system: a (N x N, row-major), b, and x_ref by dense Cholesky. */
void tiny_system(double* a, double* b, double* x_ref);
/* Assembles the tiny system in the current context (from INITIAL or SOLVED), solves it and
 * checks the answer: proves the context is still usable after the errors before. */
void solve_tiny_and_check(void);

/* Checks a refused call: its status, and that its message names the call. */
void expect(CNCstatus got, CNCstatus want, const char* call, int line);
#define EXPECT(expr, want, name) expect((expr), (want), (name), __LINE__)

#ifdef __cplusplus
}
#endif

#endif
