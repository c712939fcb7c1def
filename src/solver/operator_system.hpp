// A device_system whose matrix (and optionally preconditioner) is applied by the caller:
// matrix-free solves (cncSetOperator). The vectors live in host memory, column-major, in double, so
// the caller's functions read and write them in place; the vector surface runs on the host's cores
// in fixed pieces (the same bits for any thread count). Only the vector surface is offered: the
// methods of src/solver/krylov.hpp (CG, BiCGSTAB, GMRES) run on it, the fused PCG steps do not.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "backends/backend.hpp"
#include "matrix/matrix.hpp"

namespace cnc {

// y = Op x for one column of n values (x and y do not overlap). Throws cnc::error when the
// caller's function reports a failure.
using column_operator = std::function<void(const double* x, double* y)>;

// n rows, k systems. `a` applies the matrix; `m` the preconditioner (empty: none, z = r).
// threads: the host's worker count for the vector operations (0: one per core).
std::unique_ptr<device_system> make_operator_system(std::int32_t n, int k, column_operator a,
                                                    column_operator m, int threads);

// y = A x on the host's cores, for a canonical CSR: the matrix of an operator system whose
// matrix is assembled but whose preconditioner is the caller's.
column_operator csr_operator(const csr_view& a, int threads);

}  // namespace cnc
