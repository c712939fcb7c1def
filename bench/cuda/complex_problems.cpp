// bench_complex's problems (see complex_problems.hpp).
#include "complex_problems.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numbers>

#include "matrix_market.h"

namespace api_bench {

namespace {

bool fail(std::string* why, std::string msg) {
  *why = std::move(msg);
  return false;
}

}  // namespace

cproblem magnetic_laplacian(const problem& graph, int m, double flux) {
  cproblem p;
  p.name = "magnetic " + graph.name;
  p.n = graph.n;
  // Landau gauge A = B x e_y with B = 2 pi flux: theta_ij = B (x_i + x_j) / 2 (y_j - y_i) on the
  // lattice coordinates of i and j (index = x + m (y + m z)); antisymmetric, so H_ji =
  // conj(H_ij) bit for bit (cos is even, the sine's sign flips with the direction).
  const double field = 2 * std::numbers::pi * flux;
  graph_laplacian(
      graph, 2,
      [field, m](std::uint32_t i, std::uint32_t j, double* v) {
        const lattice_point a = lattice(i, m), b = lattice(j, m);
        const double theta = field * 0.5 * double(a.x + b.x) * double(b.y - a.y);
        v[0] = -std::cos(theta);
        v[1] = -std::sin(theta);
      },
      p.rp, p.col, p.val);
  return p;
}

bool read_complex_matrix_market(const std::string& path, cproblem* p, std::string* why) {
  mm_matrix m;
  char err[512];
  if (mm_read(path.c_str(), &m, err, sizeof err) != 0) return fail(why, err);
  const std::unique_ptr<mm_matrix, void (*)(mm_matrix*)> owner(&m, mm_free);
  if (m.field != MM_COMPLEX) return fail(why, "not complex");
  const std::int64_t int_max = std::numeric_limits<std::int32_t>::max();
  if (m.rows != m.cols || m.rows >= int_max / 2 || m.nnz > int_max)
    return fail(why, "unsupported sizes " + std::to_string(m.rows) + " x " +
                         std::to_string(m.cols) + ", " + std::to_string(m.nnz) + " entries");
  std::vector<std::int64_t> order(std::size_t(m.nnz));
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = std::int64_t(k);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return m.row[a] != m.row[b] ? m.row[a] < m.row[b] : m.col[a] < m.col[b];
  });
  cproblem& q = *p;
  q = cproblem();
  std::string file = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".mtx"})
    if (file.size() > std::strlen(ext) && file.ends_with(ext))
      file.resize(file.size() - std::strlen(ext));
  q.name = "mtx " + file;
  q.n = m.rows;
  q.rp.assign(std::size_t(m.rows) + 1, 0);
  for (std::size_t t = 0; t < order.size(); ++t) {
    const std::int64_t k = order[t];
    if (t > 0 && m.row[k] == m.row[order[t - 1]] && m.col[k] == m.col[order[t - 1]]) {
      q.val[q.val.size() - 2] += m.val[k];  // duplicates summed
      q.val.back() += m.imag[k];
      continue;
    }
    q.col.push_back(std::uint32_t(m.col[k]));
    q.val.push_back(m.val[k]);
    q.val.push_back(m.imag[k]);
    ++q.rp[std::size_t(m.row[k]) + 1];
  }
  for (std::size_t i = 0; i < std::size_t(m.rows); ++i) q.rp[i + 1] += q.rp[i];
  std::string ignored;
  q.hermitian = hermitian_positive_diagonal(q, &ignored);
  return true;
}

bool hermitian_positive_diagonal(const cproblem& p, std::string* why) {
  auto fail_at = [why](const char* what, std::int32_t i, std::uint32_t j) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "%s at (%d, %u)", what, i, j);
    return fail(why, msg);
  };
  for (std::int32_t i = 0; i < p.n; ++i) {
    bool diagonal = false;
    for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k) {
      const std::uint32_t j = p.col[k];
      const double re = p.val[2 * k], im = p.val[2 * k + 1];
      if (j == std::uint32_t(i)) {
        if (!(re > 0) || im != 0) return fail_at("diagonal entry not real and > 0", i, j);
        diagonal = true;
        continue;
      }
      const auto b = p.col.begin() + p.rp[j], e = p.col.begin() + p.rp[j + 1];
      const auto f = std::lower_bound(b, e, std::uint32_t(i));
      if (f == e || *f != std::uint32_t(i)) return fail_at("no mirror entry", i, j);
      const std::size_t m = std::size_t(f - p.col.begin());
      const double tol =
          1e-12 * std::max(std::hypot(re, im), std::hypot(p.val[2 * m], p.val[2 * m + 1]));
      if (std::abs(p.val[2 * m] - re) > tol || std::abs(p.val[2 * m + 1] + im) > tol)
        return fail_at("a_ji != conj(a_ij)", i, j);
    }
    if (!diagonal) return fail_at("no diagonal entry", i, std::uint32_t(i));
  }
  return true;
}

std::vector<double> complex_rhs(std::int32_t n) {
  std::vector<double> b(2 * static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) {
    b[2 * std::size_t(i)] = 1.0 + 0.5 * std::sin(0.001 * i);
    b[2 * std::size_t(i) + 1] = 0.5 * std::cos(0.0007 * i);
  }
  return b;
}

double complex_true_residual(const cproblem& p, const std::vector<double>& b,
                             const std::vector<double>& x) {
  double rr = 0, bb = 0;
  for (std::int32_t i = 0; i < p.n; ++i) {
    double re = b[2 * std::size_t(i)], im = b[2 * std::size_t(i) + 1];
    bb += re * re + im * im;
    for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k) {
      const double ar = p.val[2 * k], ai = p.val[2 * k + 1];
      const double xr = x[2 * std::size_t(p.col[k])], xi = x[2 * std::size_t(p.col[k]) + 1];
      re -= ar * xr - ai * xi;
      im -= ar * xi + ai * xr;
    }
    rr += re * re + im * im;
  }
  return std::sqrt(rr / bb);
}

}  // namespace api_bench
