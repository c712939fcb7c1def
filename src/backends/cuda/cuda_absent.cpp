// Factory used when cnc is built without its CUDA backend: CUDA is then simply absent.
#include "backends/backend.hpp"

namespace cnc {

std::unique_ptr<backend> make_cuda_backend(const backend_options&, std::string& why) {
  why = "cnc was built without the CUDA backend";
  return nullptr;
}

std::vector<std::string> list_cuda_devices(std::string& why) {
  why = "cnc was built without the CUDA backend";
  return {};
}

}  // namespace cnc
