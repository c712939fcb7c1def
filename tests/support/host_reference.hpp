// Host references shared by the C++ backend tests: test_support matrices as cnc::csr_matrix, and
// the step contract (kernels/pcg_contract.h: its status decisions are used as they are, the
// vector arithmetic is written here) computed in double, each stored value rounded as a backend
// stores it (matrix values in float for single and mixed, vectors in float for single), so that a
// backend is compared with what the contract says it must produce.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/backend.hpp"
#include "matrix/matrix.hpp"
#include "test_support.h"

namespace cnc_test {

inline double mat_round(cnc::precision p, double v) {
  return p == cnc::precision::f64 ? v : double(float(v));
}
inline double vec_round(cnc::precision p, double v) {
  return p == cnc::precision::f32 ? double(float(v)) : v;
}

inline cnc::csr_matrix from_ts(const ts_csr& a) {
  cnc::csr_matrix m;
  m.n = a.n;
  m.row_ptr.assign(a.row_ptr, a.row_ptr + a.n + 1);
  m.col.assign(a.col, a.col + a.nnz);
  m.val.assign(a.val, a.val + a.nnz);
  return m;
}

// k systems over the n rows of `a`; vectors column-major, n values per system. alpha and beta
// are rounded to the vector type, as the backends apply them.
class host_pcg {
 public:
  std::int32_t n;
  int k;
  std::vector<double> x, r, pv, q, b;
  std::vector<cnc::rhs_state> st;

  // dinv: at least n inverse-diagonal values (padding past n is ignored).
  host_pcg(const cnc::csr_matrix& a, const std::vector<double>& dinv, cnc::precision p, int nrhs)
      : n(a.n), k(nrhs), a_(a), p_(p), d_(dinv.begin(), dinv.begin() + a.n) {
    for (double& v : d_) v = vec_round(p_, v);
    x.assign(std::size_t(n) * k, 0.0);
    r = pv = q = b = x;
    st.assign(std::size_t(k), cnc::rhs_state{});
  }
  double& at(std::vector<double>& v, int j, std::int32_t i) { return v[std::size_t(j) * n + i]; }

  void set_vectors(const double* bb, const double* xx) {
    for (std::size_t i = 0; i < x.size(); ++i)
      b[i] = vec_round(p_, bb[i]), x[i] = vec_round(p_, xx[i]);
  }
  void init(const double* thr2) {
    for (int j = 0; j < k; ++j) {
      double rz = 0, rr = 0;
      for (std::int32_t i = 0; i < n; ++i) {
        const double ri = vec_round(p_, at(b, j, i) - row(x, j, i));
        at(r, j, i) = ri;
        at(pv, j, i) = vec_round(p_, d_[i] * ri);
        rz += d_[i] * ri * ri;
        rr += ri * ri;
      }
      cnc::rhs_state& s = st[j];
      s.rz = s.rz_new = rz;
      s.rr = rr;
      s.pq = 0;
      s.iters = 0;
      s.thr2 = thr2[j];
      s.status = cnc_status_of_residual(rr, rz, s.thr2);
    }
  }
  void spmv_dot() {
    for (int j = 0; j < k; ++j) {
      if (st[j].status != cnc::running) continue;
      double pq = 0;
      for (std::int32_t i = 0; i < n; ++i) at(q, j, i) = row(pv, j, i);
      for (std::int32_t i = 0; i < n; ++i) pq += at(pv, j, i) * at(q, j, i);
      st[j].pq = pq;
    }
  }
  void update_xr() {
    for (int j = 0; j < k; ++j) {
      cnc::rhs_state& s = st[j];
      if (s.status != cnc::running) continue;
      s.status = cnc_status_of_pq(s.pq);
      if (s.status != cnc::running) continue;
      const double alpha = vec_round(p_, s.rz / s.pq);
      double rz = 0, rr = 0;
      for (std::int32_t i = 0; i < n; ++i) {
        const double ri = vec_round(p_, at(r, j, i) - alpha * at(q, j, i));
        at(r, j, i) = ri;
        rz += d_[i] * ri * ri;
        rr += ri * ri;
      }
      s.rz_new = rz;
      s.rr = rr;
      s.iters += 1;
    }
  }
  void update_p() {
    for (int j = 0; j < k; ++j) {
      cnc::rhs_state& s = st[j];
      if (s.status != cnc::running) continue;
      const double alpha = vec_round(p_, s.rz / s.pq);  // update_xr's step, taken here on x
      for (std::int32_t i = 0; i < n; ++i)
        at(x, j, i) = vec_round(p_, at(x, j, i) + alpha * at(pv, j, i));
      s.status = cnc_status_of_residual(s.rr, s.rz_new, s.thr2);
      if (s.status == cnc::running) {
        const double beta = vec_round(p_, s.rz_new / s.rz);
        s.rz = s.rz_new;
        for (std::int32_t i = 0; i < n; ++i)
          at(pv, j, i) = vec_round(p_, d_[i] * at(r, j, i) + beta * at(pv, j, i));
      }
    }
  }

 private:
  // (A v)_i of system j, with the matrix values rounded as stored.
  double row(const std::vector<double>& v, int j, std::int32_t i) const {
    double s = 0;
    for (std::int64_t e = a_.row_ptr[i]; e < a_.row_ptr[i + 1]; ++e)
      s += mat_round(p_, a_.val[e]) * v[std::size_t(j) * n + a_.col[e]];
    return vec_round(p_, s);
  }

  const cnc::csr_matrix& a_;
  cnc::precision p_;
  std::vector<double> d_;
};

}  // namespace cnc_test
