/*
 * cnc_nl_private.h -- what programs still use of OpenNL's nl_private.h (installed as
 * <NL/nl_private.h> too): its allocation macros (zeroed, malloc-family memory, which
 * nlDeleteMatrix and OpenNL's structs expect), MIN / MAX, the integer bounds, nl_arg_used.
 * OpenNL's internal functions declared there (assertions, DLL loading, timers) are not provided.
 */
#ifndef CNC_NL_PRIVATE_H
#define CNC_NL_PRIVATE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnc_nl.h"

#define nl_arg_used(x) (void)x

#ifndef MIN
#define MIN(x, y) (((x) < (y)) ? (x) : (y))
#endif
#ifndef MAX
#define MAX(x, y) (((x) > (y)) ? (x) : (y))
#endif

#define NL_NEW(T) (T*)(calloc(1, sizeof(T)))
#define NL_NEW_ARRAY(T, NB) (T*)(calloc((size_t)(NB), sizeof(T)))
#define NL_RENEW_ARRAY(T, x, NB) (T*)(realloc(x, (size_t)(NB) * sizeof(T)))
#define NL_DELETE(x) \
  free(x);           \
  x = NULL
#define NL_DELETE_ARRAY(x) \
  free(x);                 \
  x = NULL
#define NL_CLEAR(T, x) memset(x, 0, sizeof(T))
#define NL_CLEAR_ARRAY(T, x, NB) memset(x, 0, (size_t)(NB) * sizeof(T))

#define NL_UINT_MAX 0xffffffff
#define NL_USHORT_MAX 0xffff

#endif /* CNC_NL_PRIVATE_H */
