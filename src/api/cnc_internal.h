/* Parameters and statistics outside the public API (not in cnc.h, not documented there): for
 * cnc's own bindings only (the OpenNL layer, bindings/opennl), numbered away from the public
 * enums. cncSolverParameteri / cncGetIntegerv / cncGetDoublev accept them. */
#ifndef CNC_INTERNAL_H
#define CNC_INTERNAL_H

/* bool (0): CG runs on past pᵀAp <= 0 or rᵀz < 0 (logged once as a warning), as OpenNL's CG
 * does, instead of stopping with CNC_REASON_INDEFINITE_*; only a zero pᵀAp or rᵀz stops it. */
#define CNC_INTERNAL_CG_INDEFINITE 0x7F01
/* int: iterations of the last system of the last solve (OpenNL reports its last system). */
#define CNC_INTERNAL_LAST_ITERATIONS 0x7F02
/* double: true relative residual ||b - A x|| / ||b|| of the last system of the last solve. */
#define CNC_INTERNAL_LAST_TRUE_ERROR 0x7F03

#endif /* CNC_INTERNAL_H */
