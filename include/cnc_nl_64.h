/*
 * cnc_nl_64.h -- OpenNL 4's nl_64.h for cnc (installed as <NL/nl_64.h> too).
 *
 * C++ programs built with GARGANTUA (64-bit counts) index variables with NLulong: these overloads
 * take such indices, check that they fit the 32-bit variable numbering (matrices stay limited to
 * 2^32 rows; only their entry counts are 64-bit) and call the NLuint functions.
 */
#ifndef NL_64_H
#define NL_64_H

#include "cnc_nl.h"

#if defined(__cplusplus) && defined(GARGANTUA)

#include <cassert>
#include <limits>

inline NLuint nlTo32(NLulong x) {
  assert(x <= NLulong(std::numeric_limits<NLuint>::max()));
  return NLuint(x);
}

inline double nlGetVariable(NLulong i) { return nlGetVariable(nlTo32(i)); }
inline void nlSetVariable(NLulong i, NLdouble a) { nlSetVariable(nlTo32(i), a); }
inline void nlLockVariable(NLulong i) { nlLockVariable(nlTo32(i)); }
inline NLboolean nlVariableIsLocked(NLulong i) { return nlVariableIsLocked(nlTo32(i)); }
inline void nlCoefficient(NLulong i, NLdouble a) { nlCoefficient(nlTo32(i), a); }
inline NLulong nlAddIJCoefficient(NLulong i, NLulong j, NLdouble a) {
  return nlAddIJCoefficient(nlTo32(i), nlTo32(j), a);
}
inline double nlGetEigenValue(int i) { return nlGetEigenValue(NLuint(i)); }
inline double nlGetEigenValue(NLulong i) { return nlGetEigenValue(nlTo32(i)); }
inline double nlMultiGetVariable(NLulong i, NLulong j) {
  return nlMultiGetVariable(nlTo32(i), nlTo32(j));
}

#endif

#endif /* NL_64_H */
