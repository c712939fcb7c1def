// ARPACK's symmetric driver (arpack.hpp) through dlopen: dsaupd's reverse communication with the
// operator of the chosen mode, then dseupd for the Ritz vectors, sorted and checked here.
//   regular   (mode 1, B = I):  OP = K
//   M⁻¹ K     (mode 2, B = M):  OP = M⁻¹ K (M factored)
//   shift-invert (mode 3, B = M or I): OP = (K − σM)⁻¹ M, the eigenvalues nearest σ first
#include "eigen/arpack.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <vector>

#include "cnc.h"
#include "direct/direct.hpp"
#include "solver/operator_system.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/timer.hpp"

namespace cnc::eigen {
namespace {

// ARPACK-NG's ISO C bindings (arpack.h, a_int = int in Debian's build): declared here so that the
// build needs no ARPACK header.
using saupd_fn = void (*)(int* ido, const char* bmat, int n, const char* which, int nev, double tol,
                          double* resid, int ncv, double* v, int ldv, int* iparam, int* ipntr,
                          double* workd, double* workl, int lworkl, int* info);
using seupd_fn = void (*)(int rvec, const char* howmny, const int* select, double* d, double* z,
                          int ldz, double sigma, const char* bmat, int n, const char* which,
                          int nev, double tol, double* resid, int ncv, double* v, int ldv,
                          int* iparam, int* ipntr, double* workd, double* workl, int lworkl,
                          int* info);

struct arpack_api {
  saupd_fn saupd = nullptr;
  seupd_fn seupd = nullptr;
  bool ok = false;
  std::string why;
};

// Opened once per process, kept open.
const arpack_api& api() {
  static const arpack_api loaded = [] {
    arpack_api a;
    void* lib = direct::open_library(env::var::arpack_library, {"libarpack.so.2", "libarpack.so"},
                                     "Debian's package libarpack2", a.why);
    if (!lib) return a;
    a.saupd = reinterpret_cast<saupd_fn>(dlsym(lib, "dsaupd_c"));
    a.seupd = reinterpret_cast<seupd_fn>(dlsym(lib, "dseupd_c"));
    a.ok = a.saupd && a.seupd;
    if (!a.ok)
      a.why = "the ARPACK library lacks dsaupd_c/dseupd_c (ARPACK-NG 3.6 or later has them)";
    return a;
  }();
  return loaded;
}

// ARPACK keeps its state in Fortran SAVE variables: one eigen solve at a time in the process.
std::mutex& arpack_lock() {
  static std::mutex m;
  return m;
}

// What dsaupd's and dseupd's negative info values mean (ARPACK's documentation), for messages.
const char* info_text(int info) {
  switch (info) {
    case -1:
      return "n must be positive";
    case -2:
      return "nev must be positive";
    case -3:
      return "ncv must be in (nev, n]";
    case -4:
      return "the iteration limit must be positive";
    case -5:
      return "which must be one of LM, SM, LA, SA, BE";
    case -6:
      return "bmat must be I or G";
    case -7:
      return "the work array is too short";
    case -8:
      return "LAPACK's tridiagonal eigensolver failed";
    case -9:
      return "the starting vector is zero";
    case -10:
      return "iparam(7) (the mode) must be 1 to 5";
    case -11:
      return "mode 1 needs bmat = I";
    case -12:
      return "iparam(1) must be 0 or 1";
    case -13:
      return "nev and which = BE are incompatible";
    case -14:
      return "dsaupd found no eigenvalue to sufficient accuracy";
    case -15:
      return "howmny must be A or S";
    case -16:
      return "howmny = S is not implemented";
    case -17:
      return "dseupd found a different number of converged Ritz values than dsaupd";
    case -9999:
      return "no Lanczos factorization could be built";
    default:
      return "an unknown ARPACK error";
  }
}

void check_symmetric(const csr_view& a, const char* name) {
  const direct::entry e = direct::first_asymmetric(a);
  if (e.row >= 0)
    throw error(CNC_ERR_UNSUPPORTED,
                std::string(": the eigen solver (ARPACK's symmetric driver) needs a symmetric ") +
                    name + ", and " + name + "(" + std::to_string(e.row) + ", " +
                    std::to_string(e.col) + ") differs from " + name + "(" + std::to_string(e.col) +
                    ", " + std::to_string(e.row) + ")");
}

// M must be positive definite: a diagonal entry <= 0 (or absent) rules it out cheaply.
void check_mass_diagonal(const csr_view& m) {
  for (std::int32_t i = 0; i < m.n; ++i) {
    const auto b = m.col.begin() + m.row_ptr[std::size_t(i)],
               e = m.col.begin() + m.row_ptr[std::size_t(i) + 1];
    const auto at = std::lower_bound(b, e, i);
    const double d = at != e && *at == i ? m.val[std::size_t(at - m.col.begin())] : 0.0;
    if (!(d > 0))
      throw error(CNC_ERR_INVALID_VALUE, ": M must be positive definite, and M(" +
                                             std::to_string(i) + ", " + std::to_string(i) +
                                             ") = " + std::to_string(d) + " is not positive");
  }
}

// K − σM (M = I when m is null) over the union of the patterns, rows merged in order.
csr_matrix shifted(const csr_view& k, const csr_view* m, double sigma) {
  csr_matrix s;
  s.n = k.n;
  s.row_ptr.assign(std::size_t(k.n) + 1, 0);
  const std::int64_t bound = k.nnz() + (m ? m->nnz() : k.n);
  s.col.resize(std::size_t(bound));
  s.val.resize(std::size_t(bound));
  std::int64_t out = 0;
  for (std::int32_t i = 0; i < k.n; ++i) {
    std::int64_t a = k.row_ptr[std::size_t(i)];
    const std::int64_t ae = k.row_ptr[std::size_t(i) + 1];
    std::int64_t b = m ? m->row_ptr[std::size_t(i)] : 0;
    const std::int64_t be = m ? m->row_ptr[std::size_t(i) + 1] : 1;
    auto b_col = [&](std::int64_t t) { return m ? m->col[std::size_t(t)] : i; };
    auto b_val = [&](std::int64_t t) { return m ? m->val[std::size_t(t)] : 1.0; };
    while (a < ae || b < be) {
      const std::int32_t ca = a < ae ? k.col[std::size_t(a)] : INT32_MAX;
      const std::int32_t cb = b < be ? b_col(b) : INT32_MAX;
      const std::int32_t c = std::min(ca, cb);
      double v = 0;
      if (ca == c) v += k.val[std::size_t(a++)];
      if (cb == c) v -= sigma * b_val(b++);
      s.col[std::size_t(out)] = c;
      s.val[std::size_t(out)] = v;
      ++out;
    }
    s.row_ptr[std::size_t(i) + 1] = out;
  }
  s.col.resize(std::size_t(out));
  s.val.resize(std::size_t(out));
  return s;
}

// A factorization of the symmetric `a`: CHOLMOD when it loads and finds a Cholesky factor,
// else SuperLU. `what` names the matrix in messages.
std::unique_ptr<direct::factorization> factor(const csr_view& a, const std::string& what,
                                              const options& o, const char*& by) {
  std::string why_cholmod, why_superlu;
  if (direct::available(direct::method::cholmod, &why_cholmod)) {
    direct::factored r = direct::factor(direct::method::cholmod, a);
    if (r.f) {
      by = "CHOLMOD";
      return std::move(r.f);
    }
    if (o.log)
      o.log(CNC_LOG_INFO, "eigen solver: CHOLMOD found no Cholesky factor of " + what + " (" +
                              r.why + "): SuperLU factors it");
  }
  if (!direct::available(direct::method::superlu, &why_superlu))
    throw error(CNC_ERR_UNSUPPORTED,
                ": the eigen solver must factor " + what +
                    " and no direct solver can: " + why_superlu +
                    "; CHOLMOD: " + (why_cholmod.empty() ? "indefinite" : why_cholmod));
  direct::factored r = direct::factor(direct::method::superlu, a);
  if (!r.f)
    throw error(CNC_ERR_INVALID_VALUE,
                ": " + what + " is singular (" + r.why + ")" +
                    (o.which == which::nearest ? ": σ is an eigenvalue; move it a little" : ""));
  by = "SuperLU";
  return std::move(r.f);
}

// A deterministic starting vector (ARPACK's own random one changes from call to call).
void starting_vector(std::vector<double>& r) {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  for (double& x : r) {
    s += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x = double(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  }
}

double inf_norm(const csr_view& a) {
  double worst = 0;
  for (std::int32_t i = 0; i < a.n; ++i) {
    double s = 0;
    for (std::int64_t t = a.row_ptr[std::size_t(i)]; t < a.row_ptr[std::size_t(i) + 1]; ++t)
      s += std::abs(a.val[std::size_t(t)]);
    worst = std::max(worst, s);
  }
  return worst;
}

}  // namespace

bool available(std::string* why) {
  const arpack_api& a = api();
  if (!a.ok && why) *why = a.why;
  return a.ok;
}

result solve(const csr_view& k, const csr_view* m, const options& o, double* values,
             double* vectors) {
  std::string why;
  if (!available(&why)) throw error(CNC_ERR_UNSUPPORTED, ": ARPACK is not available: " + why);
  const int n = k.n;
  if (o.nev < 1 || o.nev >= n)
    throw error(CNC_ERR_INVALID_VALUE, ": nev = " + std::to_string(o.nev) +
                                           " must be in [1, n - 1] = [1, " + std::to_string(n - 1) +
                                           "] (ARPACK's Lanczos needs nev < n; a dense "
                                           "eigensolver suits such small problems)");
  if (m && m->n != n) throw error(CNC_ERR_SIZE_MISMATCH, ": K and M differ in size");
  if (!std::isfinite(o.sigma)) throw error(CNC_ERR_NOT_FINITE, ": sigma is not finite");
  check_symmetric(k, "K");
  if (m) {
    check_symmetric(*m, "M");
    check_mass_diagonal(*m);
  }
  const int nev = o.nev;
  const int ncv = std::min(n, std::max(2 * nev + 1, 20));
  const int lworkl = ncv * (ncv + 8);
  memory::reserve(8.0 * (double(n) * (ncv + nev + 6) + lworkl), [&] {
    return "ARPACK's Lanczos basis (" + std::to_string(n) + " rows, " + std::to_string(ncv) +
           " vectors of 8 bytes)";
  });
  result res;
  const double t0 = now_seconds();
  const int mode = o.which == which::nearest ? 3 : m ? 2 : 1;
  std::unique_ptr<direct::factorization> inverse;  // of K − σM (mode 3) or M (mode 2)
  if (mode == 3) {
    const csr_matrix s = shifted(k, m, o.sigma);
    char what[96];
    std::snprintf(what, sizeof what, "K - sigma %s (sigma = %g)", m ? "M" : "I", o.sigma);
    inverse = factor(s, what, o, res.factored_by);
  } else if (mode == 2) {
    inverse = factor(*m, "M", o, res.factored_by);
  }
  res.factor_time = now_seconds() - t0;
  const column_operator kx = csr_operator(k, o.threads);
  const column_operator mx = m ? csr_operator(*m, o.threads) : column_operator{};
  const auto un = static_cast<std::size_t>(n);
  std::vector<double> resid(un), v(un * static_cast<std::size_t>(ncv)), workd(3 * un),
      workl(static_cast<std::size_t>(lworkl)), t(un);
  starting_vector(resid);
  int iparam[11] = {}, ipntr[11] = {};
  iparam[0] = 1;  // exact shifts
  iparam[2] = int(std::min<std::int64_t>(o.max_restarts, INT_MAX));
  iparam[6] = mode;
  const char* bmat = mode == 1 || !m ? "I" : "G";
  const char* target = o.which == which::nearest ? "LM" : o.which == which::largest ? "LA" : "SA";
  int ido = 0, info = 1;  // info = 1: resid holds the starting vector
  // 0 means machine precision, given explicitly: Debian's ARPACK-NG 3.8 with tol = 0 (its own
  // dlamch) took 218 operator applications where tol = 1e-16 took 77 (a 2D Laplacian, 20 pairs).
  const double tol = o.tolerance > 0 ? o.tolerance : std::numeric_limits<double>::epsilon();
  auto apply_b = [&](const double* x, double* y) {
    if (mx)
      mx(x, y);
    else
      std::copy(x, x + n, y);
  };
  const std::lock_guard<std::mutex> hold(arpack_lock());
  const double ti = now_seconds();
  for (;;) {
    api().saupd(&ido, bmat, n, target, nev, tol, resid.data(), ncv, v.data(), n, iparam, ipntr,
                workd.data(), workl.data(), lworkl, &info);
    if (ido == 99) break;
    double* x = workd.data() + ipntr[0] - 1;
    double* y = workd.data() + ipntr[1] - 1;
    if (ido == 2) {  // y = B x
      apply_b(x, y);
      continue;
    }
    if (ido != 1 && ido != -1)
      throw error(CNC_ERR_INTERNAL, ": ARPACK asked for ido = " + std::to_string(ido));
    ++res.products;
    if (mode == 1) {
      kx(x, y);
    } else if (mode == 2) {  // x is overwritten with K x, as ARPACK's mode 2 wants
      kx(x, t.data());
      std::copy(t.begin(), t.end(), x);
      inverse->solve(1, t.data(), y);
    } else {  // ido = 1 in mode 3: B x is already at ipntr[2]
      const double* bx = workd.data() + ipntr[2] - 1;
      if (ido == -1 || !m) {
        apply_b(x, t.data());
        bx = t.data();
      }
      inverse->solve(1, bx, y);
    }
  }
  res.restarts = iparam[2];
  res.converged = iparam[4];
  res.iterate_time = now_seconds() - ti;
  if (info == 1 || info == 3 || info == -9999) {
    res.reason = info == 1 ? CNC_REASON_MAX_ITERATIONS : CNC_REASON_BREAKDOWN;
    res.why = info == 1 ? "the iteration limit (" + std::to_string(o.max_restarts) +
                              " restarts) was reached with " + std::to_string(res.converged) +
                              " of " + std::to_string(nev) + " eigenpairs converged"
              : info == 3
                  ? "ARPACK could apply no shift during a restart (ncv = " + std::to_string(ncv) +
                        " is too small for this spectrum)"
                  : std::string("ARPACK: ") + info_text(info);
    return res;
  }
  if (info != 0)
    throw error(CNC_ERR_INTERNAL,
                ": dsaupd returned info = " + std::to_string(info) + " (" + info_text(info) + ")");
  std::vector<int> select(static_cast<std::size_t>(ncv), 1);
  std::vector<double> d(static_cast<std::size_t>(nev)), z(un * static_cast<std::size_t>(nev));
  api().seupd(1, "A", select.data(), d.data(), z.data(), n, o.sigma, bmat, n, target, nev, tol,
              resid.data(), ncv, v.data(), n, iparam, ipntr, workd.data(), workl.data(), lworkl,
              &info);
  if (info == -14) {
    res.reason = CNC_REASON_BREAKDOWN;
    res.why = std::string("ARPACK: ") + info_text(info);
    return res;
  }
  if (info != 0)
    throw error(CNC_ERR_INTERNAL,
                ": dseupd returned info = " + std::to_string(info) + " (" + info_text(info) + ")");
  // Ascending, each vector's largest component positive; the residual of each pair, in double.
  std::vector<int> order(static_cast<std::size_t>(nev));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return d[std::size_t(a)] < d[std::size_t(b)]; });
  const double k_norm = inf_norm(k), m_norm = m ? inf_norm(*m) : 1.0;
  std::vector<double> sorted(z.size()), kv(un), mv(un);
  for (int j = 0; j < nev; ++j) {
    const double* src = z.data() + std::size_t(order[std::size_t(j)]) * std::size_t(n);
    double* dst = sorted.data() + std::size_t(j) * std::size_t(n);
    std::size_t big = 0;
    for (std::size_t i = 1; i < std::size_t(n); ++i)
      if (std::abs(src[i]) > std::abs(src[big])) big = i;
    const double sign = src[big] < 0 ? -1.0 : 1.0;
    for (std::size_t i = 0; i < std::size_t(n); ++i) dst[i] = sign * src[i];
    const double lambda = d[std::size_t(order[std::size_t(j)])];
    kx(dst, kv.data());
    apply_b(dst, mv.data());
    double r2 = 0, v2 = 0;
    for (std::size_t i = 0; i < std::size_t(n); ++i) {
      const double r = kv[i] - lambda * mv[i];
      r2 += r * r;
      v2 += dst[i] * dst[i];
    }
    const double rel = std::sqrt(r2 / v2) / (k_norm + std::abs(lambda) * m_norm);
    if (!std::isfinite(lambda) || !std::isfinite(rel)) {
      res.reason = CNC_REASON_NOT_FINITE;
      res.why = "ARPACK returned a value that is not finite";
      return res;
    }
    res.residual = std::max(res.residual, rel);
  }
  for (int j = 0; j < nev; ++j) values[j] = d[std::size_t(order[std::size_t(j)])];
  std::copy(sorted.begin(), sorted.end(), vectors);
  res.reason = CNC_REASON_CONVERGED;
  return res;
}

}  // namespace cnc::eigen
