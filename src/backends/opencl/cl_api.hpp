// The OpenCL entry points cnc uses, resolved at run time from the ICD loader (libOpenCL.so.1).
//
// cnc never links libOpenCL: the Khronos headers give the types only, and the loader is
// dlopen'ed on first use so that libcnc.so loads and solves on machines without any OpenCL.
// The loader is opened once per process and never closed (ICDs do not like being unloaded).
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>

namespace cnc::ocl {

// One function pointer per entry point, named like the OpenCL function without its "cl" prefix.
struct api {
  decltype(&::clGetPlatformIDs) GetPlatformIDs;
  decltype(&::clGetPlatformInfo) GetPlatformInfo;
  decltype(&::clGetDeviceIDs) GetDeviceIDs;
  decltype(&::clGetDeviceInfo) GetDeviceInfo;
  decltype(&::clCreateContext) CreateContext;
  decltype(&::clCreateCommandQueue) CreateCommandQueue;
  decltype(&::clReleaseCommandQueue) ReleaseCommandQueue;
  decltype(&::clCreateBuffer) CreateBuffer;
  decltype(&::clReleaseMemObject) ReleaseMemObject;
  decltype(&::clEnqueueWriteBuffer) EnqueueWriteBuffer;
  decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer;
  decltype(&::clEnqueueCopyBuffer) EnqueueCopyBuffer;
  decltype(&::clEnqueueFillBuffer) EnqueueFillBuffer;
  decltype(&::clEnqueueMapBuffer) EnqueueMapBuffer;
  decltype(&::clEnqueueUnmapMemObject) EnqueueUnmapMemObject;
  decltype(&::clWaitForEvents) WaitForEvents;
  decltype(&::clReleaseEvent) ReleaseEvent;
  decltype(&::clGetEventInfo) GetEventInfo;
  decltype(&::clGetEventProfilingInfo) GetEventProfilingInfo;
  decltype(&::clCreateProgramWithSource) CreateProgramWithSource;
  decltype(&::clBuildProgram) BuildProgram;
  decltype(&::clGetProgramBuildInfo) GetProgramBuildInfo;
  decltype(&::clReleaseProgram) ReleaseProgram;
  decltype(&::clCreateKernel) CreateKernel;
  decltype(&::clReleaseKernel) ReleaseKernel;
  decltype(&::clSetKernelArg) SetKernelArg;
  decltype(&::clGetKernelWorkGroupInfo) GetKernelWorkGroupInfo;
  decltype(&::clEnqueueNDRangeKernel) EnqueueNDRangeKernel;
  decltype(&::clFlush) Flush;
  decltype(&::clFinish) Finish;
};

// The process-wide table, or nullptr with `why` set when no loader can be opened or it lacks an
// entry point. The library name can be overridden with CNC_OPENCL_LIBRARY (tests use it to
// simulate a machine without OpenCL).
const api* load_api(std::string& why);

}  // namespace cnc::ocl
