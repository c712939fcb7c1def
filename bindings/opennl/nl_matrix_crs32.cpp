// OpenNL's compressed rows with 32-bit counts (NLuint_big = NLuint): see nl_matrix_crs.inc.
#define CNC_NL_CRS_NAMESPACE crs32
#include "nl_matrix_crs.inc"
