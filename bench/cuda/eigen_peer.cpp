// Eigen's setFromTriplets, timed for bench_api (see eigen_peer.hpp).
#include "eigen_peer.hpp"

#include <Eigen/Sparse>
#include <chrono>
#include <vector>

namespace eigen_peer {

double set_from_triplets_seconds(std::int32_t n, std::int64_t nnz, const std::uint32_t* i,
                                 const std::uint32_t* j, const double* v, std::int64_t* nnz_out) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<std::size_t>(nnz));
  for (std::int64_t k = 0; k < nnz; ++k) t.emplace_back(int(i[k]), int(j[k]), v[k]);
  Eigen::SparseMatrix<double, Eigen::RowMajor> a(n, n);
  const auto t0 = std::chrono::steady_clock::now();
  a.setFromTriplets(t.begin(), t.end());
  const auto t1 = std::chrono::steady_clock::now();
  *nnz_out = a.nonZeros();
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace eigen_peer
