// CPU kernels compiled for the avx512 instruction set (flags set in CMakeLists.txt).
#include "backends/cpu/kernels_impl.hpp"

namespace cnc {

const cpu_kernel_table* cpu_kernels_avx512(precision p) { return select_table(p); }

}  // namespace cnc
