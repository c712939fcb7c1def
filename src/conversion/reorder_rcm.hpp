// Reverse Cuthill–McKee ordering of a sparse pattern: a level-synchronous breadth-first search
// whose levels are processed on every core, with a result that does not depend on the thread
// count (see reorder_rcm.cpp for the algorithm).
#pragma once

#include <cstdint>
#include <vector>

#include "matrix/matrix.hpp"

namespace cnc {

// Reverse Cuthill–McKee ordering of the graph whose vertex i is adjacent to the columns of row i
// of `a` (canonical CSR: 0-based, rows sorted, no duplicates; a symmetric pattern is assumed,
// the diagonal ignored). Returns perm with perm[new] = old, a permutation of 0..n-1. Every
// connected component is ordered, each from a pseudo-peripheral start vertex. The result is the
// same for any `threads` (>= 1; <= 0 means host_threads()) and from run to run.
// Components, before the final reversal: first that of the vertex of smallest (degree, index)
// with a neighbour, from that vertex; then each from the lowest-numbered vertex not yet placed.
// (George–Liu's search for a pseudo-peripheral vertex starts from those.)
// With a pattern that is not symmetric the result is still a permutation, of lesser quality.
std::vector<std::int32_t> rcm_order(const csr_view& a, int threads);

// The rest of an ordering made by another implementation of the same rules (the CUDA
// backend's, which stops after some components): perm (n values) holds perm[n - 1 - p] for the
// positions p < placed, whole components; the next component is looked for from vertex `cursor`
// on, and the result is what rcm_order(a, threads) returns.
void rcm_finish(const csr_view& a, int threads, std::vector<std::int32_t>& perm,
                std::int64_t placed, std::int32_t cursor);

}  // namespace cnc
