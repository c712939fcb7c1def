// Status codes as text (cncStatusString).
#include "cnc.h"

extern "C" CNC_API const char* cncStatusString(CNCstatus status) {
  switch (status) {
    case CNC_OK:
      return "CNC_OK: success";
    case CNC_ERR_STATE:
      return "CNC_ERR_STATE: call not allowed in the current state";
    case CNC_ERR_INVALID_ENUM:
      return "CNC_ERR_INVALID_ENUM: unknown or inapplicable enum";
    case CNC_ERR_INVALID_VALUE:
      return "CNC_ERR_INVALID_VALUE: value outside its allowed range";
    case CNC_ERR_INDEX_OUT_OF_RANGE:
      return "CNC_ERR_INDEX_OUT_OF_RANGE: index too large";
    case CNC_ERR_NOT_FINITE:
      return "CNC_ERR_NOT_FINITE: NaN or Inf given";
    case CNC_ERR_SIZE_MISMATCH:
      return "CNC_ERR_SIZE_MISMATCH: sizes or counts disagree";
    case CNC_ERR_OUT_OF_MEMORY:
      return "CNC_ERR_OUT_OF_MEMORY: allocation failed";
    case CNC_ERR_NO_CONTEXT:
      return "CNC_ERR_NO_CONTEXT: no current context on this thread";
    case CNC_ERR_BACKEND_UNAVAILABLE:
      return "CNC_ERR_BACKEND_UNAVAILABLE: backend not available";
    case CNC_ERR_DEVICE:
      return "CNC_ERR_DEVICE: a device or driver call failed";
    case CNC_ERR_UNSUPPORTED:
      return "CNC_ERR_UNSUPPORTED: not supported by this build or device";
    case CNC_ERR_OVERFLOW:
      return "CNC_ERR_OVERFLOW: count exceeds what cnc can index";
    case CNC_ERR_NULL_POINTER:
      return "CNC_ERR_NULL_POINTER: required pointer is NULL";
    case CNC_ERR_INTERNAL:
      return "CNC_ERR_INTERNAL: internal error (please report)";
    case CNC_ERR_NO_FP64:
      return "CNC_ERR_NO_FP64: device has no double precision";
    case CNC_ERR_CALLBACK:
      return "CNC_ERR_CALLBACK: a caller's operator reported failure";
  }
  return "unknown cnc status";
}
