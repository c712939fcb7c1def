// Factory used when cnc is built without its OpenCL backend: OpenCL is then simply absent.
#include "backends/backend.hpp"
#include "backends/opencl/opencl_backend.hpp"

namespace cnc {

std::unique_ptr<backend> make_opencl_backend(const backend_options&, std::string& why) {
  why = "cnc was built without the OpenCL backend";
  return nullptr;
}

std::vector<std::string> list_opencl_devices(std::string& why) {
  why = "cnc was built without the OpenCL backend";
  return {};
}

int opencl_gpu_index(int) { return -1; }

bool opencl_backend_is_gpu(const backend&) { return false; }

double opencl_copy_bandwidth(const backend&, std::size_t, int) { return 0; }

}  // namespace cnc
