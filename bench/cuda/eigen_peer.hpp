// Eigen's sparse assembly, timed beside cnc's in bench_api's assembly table. It lives in its own
// file, compiled by the host compiler: nvcc and Eigen's headers do not mix well.
#pragma once

#include <cstdint>

namespace eigen_peer {

// Seconds that Eigen::SparseMatrix<double, RowMajor>::setFromTriplets takes on the n x n COO
// (i[t], j[t], v[t]), t < nnz (one thread, duplicates summed, as Eigen does it); the triplet
// vector is built before the clock starts. *nnz_out: nonzeros of Eigen's result.
double set_from_triplets_seconds(std::int32_t n, std::int64_t nnz, const std::uint32_t* i,
                                 const std::uint32_t* j, const double* v, std::int64_t* nnz_out);

}  // namespace eigen_peer
