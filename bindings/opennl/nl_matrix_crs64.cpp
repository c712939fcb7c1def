// OpenNL's compressed rows with 64-bit counts (GARGANTUA: NLuint_big = NLulong), under the *_64
// names that cnc_nl_matrix.h selects for programs built with GARGANTUA: see nl_matrix_crs.inc.
#define GARGANTUA
#define CNC_NL_CRS_NAMESPACE crs64
#include "nl_matrix_crs.inc"
