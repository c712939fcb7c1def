// The problems bench_cuda times (see bench_cuda_problems.cuh).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "bench_cuda_problems.cuh"
#include "conversion/convert.hpp"

using namespace cnc;

namespace {

template <class F>
void parallel_for(std::int64_t n, F f) {
  const int t = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> th;
  for (int i = 0; i < t; ++i)
    th.emplace_back([=] {
      for (std::int64_t r = n * i / t; r < n * (i + 1) / t; ++r) f(r);
    });
  for (auto& x : th) x.join();
}

}  // namespace

// ---- problems
// ------------------------------------------------------------------------------------

// 3D Poisson on an N^3 grid (Dirichlet): 7-point (6, -1) or 27-point (26, -1) stencil.
void poisson(problem& pb, int N, int points) {
  const int r = 1;
  const std::int64_t n = std::int64_t(N) * N * N;
  csr_matrix& m = pb.csr;
  m.n = static_cast<std::int32_t>(n);
  m.row_ptr.assign(n + 1, 0);
  auto count = [&](std::int64_t i) {
    const int x = i % N, y = (i / N) % N, z = i / (std::int64_t(N) * N);
    auto span = [&](int c) { return 1 + (c > 0) + (c < N - 1); };
    return points == 7 ? 1 + (x > 0) + (x < N - 1) + (y > 0) + (y < N - 1) + (z > 0) + (z < N - 1)
                       : span(x) * span(y) * span(z);
  };
  parallel_for(n, [&](std::int64_t i) { m.row_ptr[i + 1] = count(i); });
  for (std::int64_t i = 0; i < n; ++i) m.row_ptr[i + 1] += m.row_ptr[i];
  m.col.resize(m.row_ptr[n]);
  m.val.resize(m.row_ptr[n]);
  pb.diag = points == 7 ? 6.0 : 26.0;
  parallel_for(n, [&](std::int64_t i) {
    const int x = i % N, y = (i / N) % N, z = i / (std::int64_t(N) * N);
    std::int64_t e = m.row_ptr[i];
    for (int dz = -r; dz <= r; ++dz)
      for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          const int nz = std::abs(dx) + std::abs(dy) + std::abs(dz);
          if (points == 7 && nz > 1) continue;
          if (x + dx < 0 || x + dx >= N || y + dy < 0 || y + dy >= N || z + dz < 0 || z + dz >= N)
            continue;
          m.col[e] =
              static_cast<std::int32_t>(i + dx + std::int64_t(N) * (dy + std::int64_t(N) * dz));
          m.val[e] = nz == 0 ? pb.diag : -1.0;
          ++e;
        }
  });
  pb.sell = csr_to_sell(m);
  pb.name = std::to_string(points) + "-pt " + std::to_string(N) + "^3";
}

// 4 unknowns per node of an M^3 grid, 7-point node stencil, dense 4x4 blocks (SPD: diagonally
// dominant). Built as BCRS 4x4 and as the same matrix in CSR.
void block4(problem& pb, int M) {
  const std::int64_t nodes = std::int64_t(M) * M * M;
  bcrs_matrix& b = pb.bcrs;
  b.b = 4;
  b.n = static_cast<std::int32_t>(nodes * 4);
  b.n_block_rows = static_cast<std::int32_t>(nodes);
  b.row_ptr.assign(nodes + 1, 0);
  auto nbrs = [&](std::int64_t i, std::int64_t* out) {
    const int x = i % M, y = (i / M) % M, z = i / (std::int64_t(M) * M);
    int c = 0;
    const std::int64_t MM = std::int64_t(M) * M;
    if (z > 0) out[c++] = i - MM;
    if (y > 0) out[c++] = i - M;
    if (x > 0) out[c++] = i - 1;
    out[c++] = i;
    if (x < M - 1) out[c++] = i + 1;
    if (y < M - 1) out[c++] = i + M;
    if (z < M - 1) out[c++] = i + MM;
    return c;
  };
  parallel_for(nodes, [&](std::int64_t i) {
    std::int64_t t[7];
    b.row_ptr[i + 1] = nbrs(i, t);
  });
  for (std::int64_t i = 0; i < nodes; ++i) b.row_ptr[i + 1] += b.row_ptr[i];
  const std::int64_t nb = b.row_ptr[nodes];
  b.col.resize(nb);
  b.val.resize(nb * 16);
  pb.diag = 10.0;
  auto entry = [](bool self, int r, int c) {
    return self ? (r == c ? 10.0 : 0.5) : (r == c ? -1.0 : -0.1);
  };
  parallel_for(nodes, [&](std::int64_t i) {
    std::int64_t t[7];
    const int c = nbrs(i, t);
    for (int s = 0; s < c; ++s) {
      const std::int64_t blk = b.row_ptr[i] + s;
      b.col[blk] = static_cast<std::int32_t>(t[s]);
      for (int r = 0; r < 4; ++r)
        for (int cc = 0; cc < 4; ++cc) b.val[blk * 16 + r * 4 + cc] = entry(t[s] == i, r, cc);
    }
  });
  csr_matrix& m = pb.csr;
  m.n = b.n;
  m.row_ptr.assign(std::int64_t(b.n) + 1, 0);
  for (std::int64_t i = 0; i < nodes; ++i)
    for (int r = 0; r < 4; ++r)
      m.row_ptr[i * 4 + r + 1] = m.row_ptr[i * 4 + r] + 4 * (b.row_ptr[i + 1] - b.row_ptr[i]);
  m.col.resize(m.row_ptr[b.n]);
  m.val.resize(m.row_ptr[b.n]);
  parallel_for(nodes, [&](std::int64_t i) {
    for (int r = 0; r < 4; ++r) {
      std::int64_t e = m.row_ptr[i * 4 + r];
      for (std::int64_t s = b.row_ptr[i]; s < b.row_ptr[i + 1]; ++s)
        for (int cc = 0; cc < 4; ++cc) {
          m.col[e] = b.col[s] * 4 + cc;
          m.val[e] = b.val[s * 16 + r * 4 + cc];
          ++e;
        }
    }
  });
  pb.has_bcrs = true;
  pb.sell = csr_to_sell(pb.csr);
  pb.name = "4x4-node " + std::to_string(M) + "^3";
}

std::vector<double> rhs(std::int64_t n, int k) {
  std::vector<double> b(n * k);
  for (int j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < n; ++i) b[j * n + i] = 1.0 + 0.5 * std::sin(0.001 * i * (j + 1));
  return b;
}

// ‖b - A x‖ / ‖b‖ in double on the host (system 0).
double true_residual(const csr_matrix& a, const double* b, const double* x) {
  std::vector<double> num(a.n), den(a.n);
  parallel_for(a.n, [&](std::int64_t i) {
    double s = 0;
    for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) s += a.val[e] * x[a.col[e]];
    num[i] = (b[i] - s) * (b[i] - s);
    den[i] = b[i] * b[i];
  });
  double sn = 0, sd = 0;
  for (std::int32_t i = 0; i < a.n; ++i) sn += num[i], sd += den[i];
  return std::sqrt(sn / sd);
}

const char* pname(precision p) {
  return p == precision::f64 ? "double" : p == precision::f32 ? "single" : "mixed";
}
