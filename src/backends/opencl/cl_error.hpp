// OpenCL status codes turned into cnc::error: allocation failures become
// CNC_ERR_OUT_OF_MEMORY, everything else CNC_ERR_DEVICE with the CL error's name.
#pragma once

#include <string>

#include "backends/opencl/cl_api.hpp"

namespace cnc::ocl {

const char* error_name(cl_int code);  // "CL_OUT_OF_RESOURCES", ... or "unknown OpenCL error"

// Throws cnc::error when `code` is not CL_SUCCESS; `what` names the call (and its purpose).
void check(cl_int code, const char* what);
[[noreturn]] void throw_error(cl_int code, const std::string& what);

}  // namespace cnc::ocl
