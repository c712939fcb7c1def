// Helpers shared by the test_assembly_* suites (assembly and conversion, internal and public):
// COO triplets split into duplicated parts and shuffled, the test's own CSR of them, a bit-exact
// CSR comparison, CNC_NUM_THREADS for the host stages, and a CPU/CSR context driven through the
// public API to a bit-reproducible solution.
#pragma once

#include <cstdint>
#include <vector>

#include "cnc.h"
#include "matrix/matrix.hpp"

struct triplet {
  std::int32_t i, j;
  double v;
};

// Random matrix entries, each split into 1..4 parts (duplicates) with non-dyadic values, so that
// summation order matters in plain floating point.
std::vector<triplet> random_parts(std::int32_t n, int per_row, std::uint64_t seed);
void shuffle(std::vector<triplet>& t, std::uint64_t seed);
// Fails the test unless a and b hold the same structure and the same value bits.
void expect_same_csr(const cnc::csr_matrix& a, const cnc::csr_matrix& b, const char* what);
// The test's own CSR of the same triplets (sorted, duplicates summed), as a cnc::csr_matrix.
cnc::csr_matrix reference_csr(std::int32_t n, const std::vector<triplet>& t);
// Sets CNC_NUM_THREADS (host stages read it on every call).
void set_threads(int t);

// A new current context in state SYSTEM for n variables: CPU backend with `threads` threads, CSR,
// threshold 1e-10 (so that x is reproducible bit for bit).
CNCcontext new_cpu_csr_system(std::int32_t n, int threads);
// Ends the matrix and the system of context c (current), solves, reads x and deletes c.
void solve_read_delete(CNCcontext c, std::int32_t n, std::vector<double>& x);
