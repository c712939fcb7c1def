// Helpers shared by the cuda_kernels_* suites (see cuda_kernels_support.hpp).
#include "cuda_kernels_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "host_reference.hpp"
#include "matrix_market.h"

// cmocka last: its fail() macro would clash with std::ios::fail in the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace cnc;

std::unique_ptr<backend> g_backend;

int open_cuda_backend() {
  std::string why;
  backend_options o;
  g_backend = make_cuda_backend(o, why);
  if (!g_backend) {
    std::printf("CUDA backend unavailable here (%s): skipping\n", why.c_str());
    return 77;
  }
  std::printf("CUDA device: %s\n", g_backend->device_name().c_str());
  if (!g_backend->prefers_sliced()) {  // the automatic format choice relies on it
    std::printf("the CUDA backend must prefer sliced formats\n");
    return 1;
  }
  return -1;
}

// ---- matrices
// ------------------------------------------------------------------------------------

struct coo {
  int n = 0;
  std::map<std::pair<int, int>, double> e;
};

csr_matrix to_csr(const coo& c) {
  csr_matrix m;
  m.n = c.n;
  m.row_ptr.assign(c.n + 1, 0);
  for (const auto& [ij, v] : c.e) {
    m.row_ptr[ij.first + 1]++;
    m.col.push_back(ij.second);
    m.val.push_back(v);
  }
  for (int i = 0; i < c.n; ++i) m.row_ptr[i + 1] += m.row_ptr[i];
  return m;  // std::map iterates rows then columns in order: already sorted CSR
}

// Random symmetric, strictly diagonally dominant (hence SPD) matrix with irregular rows.
csr_matrix random_spd(int n, int max_off, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> cnt(0, max_off), col(0, n - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  coo c;
  c.n = n;
  std::vector<double> rowsum(n, 0.0);
  for (int i = 0; i < n; ++i) {
    const int m = cnt(rng);
    for (int t = 0; t < m; ++t) {
      const int j = col(rng);
      if (j == i) continue;
      const double v = val(rng);
      c.e[{i, j}] += v;
      c.e[{j, i}] += v;
    }
  }
  for (const auto& [ij, v] : c.e) rowsum[ij.first] += std::fabs(v);
  for (int i = 0; i < n; ++i) c.e[{i, i}] = rowsum[i] + 0.5 + 0.5 * val(rng);
  return to_csr(c);
}

// A real or integer square Matrix Market file, through the shared reader
// (examples/common/matrix_market.h); empty matrix on failure.
csr_matrix read_mtx(const std::string& path) {
  csr_matrix none;
  mm_matrix m;
  char err[512];
  if (mm_read(path.c_str(), &m, err, sizeof err) != 0) return none;
  const std::unique_ptr<mm_matrix, void (*)(mm_matrix*)> owner(&m, mm_free);
  if (m.field == MM_COMPLEX || m.field == MM_PATTERN || m.rows != m.cols) return none;
  coo c;
  c.n = m.rows;
  for (std::int64_t t = 0; t < m.nnz; ++t) c.e[{m.row[t], m.col[t]}] += m.val[t];
  for (int i = 0; i < c.n; ++i) c.e.try_emplace({i, i}, 0.0);  // explicit (maybe zero) diagonal
  return to_csr(c);
}

// CSR -> BCRS with identity padding rows (the layout matrix.hpp describes).
bcrs_matrix to_bcrs(const csr_matrix& a, int b) {
  bcrs_matrix m;
  m.b = b;
  m.n = a.n;
  m.n_block_rows = (a.n + b - 1) / b;
  m.row_ptr.push_back(0);
  for (int br = 0; br < m.n_block_rows; ++br) {
    std::map<int, std::vector<double>> blocks;
    for (int rr = 0; rr < b; ++rr) {
      const int i = br * b + rr;
      if (i >= a.n) {
        auto& blk = blocks[br];
        blk.resize(b * b, 0.0);
        blk[rr * b + rr] = 1.0;
        continue;
      }
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) {
        auto& blk = blocks[a.col[e] / b];
        blk.resize(b * b, 0.0);
        blk[rr * b + a.col[e] % b] += a.val[e];
      }
    }
    for (auto& [bc, blk] : blocks) {
      m.col.push_back(bc);
      m.val.insert(m.val.end(), blk.begin(), blk.end());
    }
    m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
  }
  return m;
}

std::unique_ptr<test_matrix> make_test_matrix(const csr_matrix& a, format f) {
  auto t = std::make_unique<test_matrix>();
  t->csr = a;
  t->hm.fmt = f;
  t->hm.csr = t->csr;
  if (f == format::csr) {
    t->ref = a;
  } else if (f == format::sell) {
    // The library's conversion (checked against CSR in test_assembly); the reference rows are
    // read back from the slices, padding entries included.
    t->sell = csr_to_sell(a);
    t->hm.sell = &t->sell;
    const sell_matrix& m = t->sell;
    t->ref.n = m.n_padded();
    t->ref.row_ptr.assign(t->ref.n + 1, 0);
    for (int i = 0; i < t->ref.n; ++i) {
      const int s = i / sell_slice, l = i % sell_slice;
      for (std::int64_t e = m.slice_ptr[s] + l; e < m.slice_ptr[s + 1]; e += sell_slice) {
        t->ref.col.push_back(m.col[e]);
        t->ref.val.push_back(m.val[e]);
      }
      t->ref.row_ptr[i + 1] = static_cast<std::int64_t>(t->ref.col.size());
    }
  } else {
    t->bcrs = to_bcrs(a, block_size(f));
    t->hm.bcrs = &t->bcrs;
    // Expand the blocks back to CSR over the padded rows (explicit zeros kept: harmless).
    const bcrs_matrix& m = t->bcrs;
    const int b = m.b;
    t->ref.n = m.n_padded();
    t->ref.row_ptr.assign(t->ref.n + 1, 0);
    for (int br = 0; br < m.n_block_rows; ++br)
      for (int rr = 0; rr < b; ++rr) {
        const int i = br * b + rr;
        for (std::int64_t s = m.row_ptr[br]; s < m.row_ptr[br + 1]; ++s)
          for (int cc = 0; cc < b; ++cc) {
            t->ref.col.push_back(m.col[s] * b + cc);
            t->ref.val.push_back(m.val[s * b * b + rr * b + cc]);
          }
        t->ref.row_ptr[i + 1] = static_cast<std::int64_t>(t->ref.col.size());
      }
  }
  t->np = t->hm.n_padded();
  t->d.assign(t->np, 1.0);
  for (int i = 0; i < t->ref.n; ++i)
    for (std::int64_t e = t->ref.row_ptr[i]; e < t->ref.row_ptr[i + 1]; ++e)
      if (t->ref.col[e] == i && t->ref.val[e] != 0.0) t->d[i] = 1.0 / t->ref.val[e];
  return t;
}

// ---- precision helpers
// ---------------------------------------------------------------------------

double vec_tol(precision p) { return p == precision::f32 ? 2e-5 : 1e-12; }

// y = A x over the padded rows, column-major with `ld` rows per system, in double.
void ref_spmv(const csr_matrix& a, precision p, int k, const std::vector<double>& x, int ld,
              std::vector<double>& y) {
  y.assign(static_cast<std::size_t>(ld) * k, 0.0);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < a.n; ++i) {
      double s = 0.0;
      for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e)
        s += mat_round(p, a.val[e]) * x[std::size_t(j) * ld + a.col[e]];
      y[std::size_t(j) * ld + i] = s;
    }
}

// ‖a - b‖ / max(‖b‖, tiny) over rows [0, rows) of system j (column-major, ld rows).
double rel_err(const std::vector<double>& a, const std::vector<double>& b, int ld, int rows,
               int j) {
  double num = 0.0, den = 0.0;
  for (int i = 0; i < rows; ++i) {
    const double u = a[std::size_t(j) * ld + i], v = b[std::size_t(j) * ld + i];
    if (!std::isfinite(u)) return INFINITY;
    num += (u - v) * (u - v);
    den += v * v;
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

std::vector<double> random_vec(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

const format all_formats[] = {format::csr, format::bcrs2, format::bcrs4, format::sell};
const precision all_precisions[] = {precision::f64, precision::f32, precision::mixed};
const char* pname(precision p) {
  return p == precision::f64 ? "double" : p == precision::f32 ? "single" : "mixed";
}

std::string matrix_dir() {
  const char* d = std::getenv("CNC_MATRIX_DIR");
#ifdef CNC_TEST_MATRIX_DIR
  return d && *d ? d : CNC_TEST_MATRIX_DIR;
#else
  return d && *d ? d : "../shared/data/matrices";
#endif
}
