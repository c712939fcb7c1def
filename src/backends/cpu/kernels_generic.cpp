// CPU kernels compiled for the generic instruction set (flags set in CMakeLists.txt).
#include "backends/cpu/kernels_impl.hpp"

namespace cnc {

const cpu_kernel_table* cpu_kernels_generic(precision p) { return select_table(p); }

}  // namespace cnc
