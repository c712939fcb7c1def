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

#include "cnc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The current context's assembled system, read in place (OpenNL's nlGetCurrentMatrix): from
 * cncEnd(CNC_MATRIX) on, the matrix over the free variables (free index f = the f-th unlocked
 * variable, least squares: AᵀA) as a canonical CSR: n rows, 0-based, columns sorted, no
 * duplicates. The arrays are the context's and stay valid until the next cncBegin(CNC_MATRIX) or
 * cncDeleteContext. CNC_ERR_STATE before cncEnd(CNC_MATRIX), CNC_ERR_NULL_POINTER for a NULL
 * argument. */
CNC_API CNCstatus cncInternalGetSystemCSR(CNCint* n, const CNCint64** row_ptr, const CNCint** col,
                                          const double** val);
/* Replaces system k's right-hand side, the n free rows of the assembled system (after
 * cncEnd(CNC_MATRIX); OpenNL's nlUpdateRightHandSide), with b[0..n-1]; the matrix, and a direct
 * solver's kept factorization, stay. A solved system goes back to SYSTEM_CONSTRUCTED. Nothing
 * changes when it fails: CNC_ERR_STATE, CNC_ERR_NULL_POINTER, CNC_ERR_INDEX_OUT_OF_RANGE (k
 * at least CNC_NB_SYSTEMS), CNC_ERR_NOT_FINITE (a value of b). */
CNC_API CNCstatus cncInternalSetRightHandSide(CNCuint k, const double* b);

#ifdef __cplusplus
}
#endif

#endif /* CNC_INTERNAL_H */
