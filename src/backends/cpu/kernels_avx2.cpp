// CPU kernels compiled for the avx2 instruction set (flags set in CMakeLists.txt).
#include "backends/cpu/kernels_impl.hpp"

namespace cnc {

const cpu_kernel_table* cpu_kernels_avx2(precision p) { return select_table(p); }

}  // namespace cnc
