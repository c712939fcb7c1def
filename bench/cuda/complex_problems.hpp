// The complex problems of bench_complex (CUDA) and bench_complex_cpu (plain C++, no CUDA): complex
// CSR matrices on the host in cncSolveCSRComplex's form (64-bit row offsets, 32-bit columns
// sorted within each row, no duplicates, values as interleaved (re, im) doubles), made from the
// graphs of bench_api's generators (api_problems.hpp) or read from complex Matrix Market files.
// Deterministic: the same call gives the same matrix on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api_problems.hpp"

namespace api_bench {

struct cproblem {
  std::string name;
  std::int32_t n = 0;
  std::vector<std::int64_t> rp;
  std::vector<std::uint32_t> col;
  std::vector<double> val;  // 2 per entry: val[2k] = Re a, val[2k + 1] = Im a
  bool hermitian = true;    // Hermitian with a real positive diagonal (by construction or checked)
  std::int64_t nnz() const { return std::int64_t(col.size()); }
};

// The magnetic Laplacian of the graph whose edges are the off-diagonal entries of `graph` (a
// symmetric pattern on an m x m x m lattice numbered x + m (y + m z): bench_api's stencil or
// mesh): H_ij = -exp(i theta_ij) on every edge, the phases of a uniform magnetic field along z
// with `flux` flux quanta through each unit square of the xy plane (Landau gauge, theta_ij =
// 2 pi flux (x_i + x_j) / 2 (y_j - y_i), theta_ji = -theta_ij), and H_ii = 1.01 deg(i) + 0.01
// (graph_laplacian's, with these phases on its edges). Hermitian, strictly diagonally dominant with
// a positive diagonal: positive definite. No gauge makes it real (the field is not zero). Named
// "magnetic <graph.name>".
cproblem magnetic_laplacian(const problem& graph, int m, double flux);

// Its real counterpart (theta = 0: same n, nnz and diagonal) is real_laplacian (api_problems.hpp).

// A complex Matrix Market file (any symmetry the reader takes: general, symmetric, hermitian;
// both triangles here, duplicates summed). False with *why set when the file is not complex or
// is malformed. `hermitian` is set by the check below. Named "mtx <file name>".
bool read_complex_matrix_market(const std::string& path, cproblem* p, std::string* why);

// Whether a_ji = conj(a_ij) for every entry (to 1e-12 of the larger modulus) and every diagonal
// entry is present, real and > 0: what CG (cnc's and the textbook's) needs besides definiteness.
// False with *why naming the first entry that fails.
bool hermitian_positive_diagonal(const cproblem& p, std::string* why);

// b: 2n doubles, (re, im) pairs, smooth and nonzero in both parts.
std::vector<double> complex_rhs(std::int32_t n);
// ||b - A x|| / ||b|| in double complex on the host; b and x interleaved.
double complex_true_residual(const cproblem& p, const std::vector<double>& b,
                             const std::vector<double>& x);

}  // namespace api_bench
