// The generic backend suite's harness (tests/test_backend.cpp and tests/backend_vectors.cpp, one
// executable per backend): the backend under test, the test matrices, and a matrix prepared in
// one format for create_system.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "conversion/convert.hpp"
#include "host_reference.hpp"
#include "matrix/matrix.hpp"
#include "test_support.h"

namespace suite {

inline std::string g_name;
inline std::unique_ptr<cnc::backend> g_backend;

inline const char* prec_name(cnc::precision p) {
  return p == cnc::precision::f64 ? "f64" : p == cnc::precision::f32 ? "f32" : "mixed";
}

struct test_matrix {
  std::string name;
  ts_csr a;  // owned
};

inline std::vector<test_matrix> g_matrices;

// A matrix in one format, ready for create_system (keeps the storage the host_matrix points to).
struct prepared {
  cnc::csr_matrix csr;
  cnc::bcrs_matrix bcrs;
  cnc::sell_matrix sell;
  cnc::host_matrix hm;
  std::vector<double> d;  // inverse diagonal, n_padded
};

inline std::unique_ptr<prepared> prepare(const ts_csr& a, cnc::format f) {
  auto p = std::make_unique<prepared>();
  p->csr = cnc_test::from_ts(a);
  p->hm.fmt = f;
  p->hm.csr = p->csr;
  if (cnc::is_block(f)) {
    p->bcrs = cnc::csr_to_bcrs(p->csr, cnc::block_size(f));
    p->hm.bcrs = &p->bcrs;
  }
  if (f == cnc::format::sell) {
    p->sell = cnc::csr_to_sell(p->csr);
    p->hm.sell = &p->sell;
  }
  // Jacobi inverse diagonal computed here (1 where absent or zero, and on padding rows).
  p->d.assign(std::size_t(p->hm.n_padded()), 1.0);
  for (std::int32_t i = 0; i < a.n; ++i) {
    double di = ts_csr_get(&a, i, i);
    if (di != 0.0) p->d[i] = 1.0 / di;
  }
  return p;
}

inline std::vector<double> random_vec(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  ts_rng r;
  ts_rng_seed(&r, seed);
  std::vector<double> v(n);
  for (double& x : v) x = (ts_rng_uniform(&r) * 2.0 - 1.0) * scale;
  return v;
}

inline bool close(double a, double b, double tol) {
  return std::fabs(a - b) <= tol * std::max(std::fabs(a), std::fabs(b)) + 1e-300;
}

struct combo {
  const test_matrix* m;
  cnc::format f;
  cnc::precision p;
  int k;
  std::string label() const {
    char s[160];
    std::snprintf(s, sizeof s, "%s %s %s k=%d on %s", m->name.c_str(), cnc::format_name(f),
                  prec_name(p), k, g_name.c_str());
    return s;
  }
};

// k = 1, 3 and 8: one system, and counts the CPU's kernels are compiled for (a group of 8 on CUDA).
inline std::vector<combo> all_combos() {
  std::vector<combo> c;
  for (const test_matrix& m : g_matrices)
    for (cnc::format f :
         {cnc::format::csr, cnc::format::bcrs2, cnc::format::bcrs4, cnc::format::sell})
      for (cnc::precision p : {cnc::precision::f64, cnc::precision::mixed, cnc::precision::f32}) {
        if (p != cnc::precision::f32 && !g_backend->has_fp64()) continue;
        for (int k : {1, 3, 8}) c.push_back({&m, f, p, k});
      }
  return c;
}

}  // namespace suite
