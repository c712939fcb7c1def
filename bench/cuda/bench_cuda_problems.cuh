// The problems bench_cuda times (see bench_cuda.cu): 3D Poisson (7- and 27-point) and a
// 4-unknowns-per-node block problem, built on the host in every format cnc takes, their
// right-hand sides, and the true residual in double on the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "matrix/matrix.hpp"

struct problem {
  std::string name;
  cnc::csr_matrix csr;
  cnc::bcrs_matrix bcrs;  // b = 4 problems only
  cnc::sell_matrix sell;  // every problem
  double diag = 1;        // constant diagonal (Jacobi: d = 1/diag)
  bool has_bcrs = false;
};

// 3D Poisson on an N^3 grid (Dirichlet): 7-point (6, -1) or 27-point (26, -1) stencil.
void poisson(problem& pb, int N, int points);
// 4 unknowns per node of an M^3 grid, 7-point node stencil, dense 4x4 blocks (SPD: diagonally
// dominant). Built as BCRS 4x4 and as the same matrix in CSR.
void block4(problem& pb, int M);
// k right-hand sides of n values (column-major).
std::vector<double> rhs(std::int64_t n, int k);
// ‖b - A x‖ / ‖b‖ in double on the host (system 0).
double true_residual(const cnc::csr_matrix& a, const double* b, const double* x);
const char* pname(cnc::precision p);
