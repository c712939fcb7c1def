// What the direct solvers share: the method's name, availability, the symmetry check.
#include "direct/direct.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "cnc.h"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace cnc::direct {

std::optional<method> method_of(int solver) {
  switch (solver) {
    case CNC_CHOLMOD:
      return method::cholmod;
    case CNC_SUPERLU:
      return method::superlu;
    case CNC_CUDSS:
      return method::cudss;
    default:
      return std::nullopt;
  }
}

const char* name(method m) {
  return m == method::cholmod ? "CHOLMOD" : m == method::superlu ? "SuperLU" : "cuDSS";
}

bool available(method m, std::string* why) {
  return m == method::cholmod   ? cholmod_loadable(why)
         : m == method::superlu ? superlu_loadable(why)
                                : cudss_loadable(why);
}

void* open_library(env::var path_var, std::initializer_list<const char*> sonames,
                   const char* source, std::string& why) {
  if (const std::optional<std::string> chosen = env::text(path_var)) {
    void* lib = dlopen(chosen->c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) why = "cannot load " + *chosen + " (" + env::name(path_var) + "): " + dlerror();
    return lib;
  }
  for (const char* soname : sonames)
    if (void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return lib;
  why = std::string("no ") + *sonames.begin() + " on this machine (" + source + ")";
  return nullptr;
}

entry first_asymmetric(const csr_view& a) {
  // |a_ii|, for the scale of entries that are rounding noise: in a least-squares AᵀA, couplings
  // that cancel in exact arithmetic (LSCM's u-v terms) come out as a_ij = 1e-17 beside
  // a_ji = -3e-17 where the diagonal is 1.
  std::vector<double> diagonal(std::size_t(a.n), 0.0);
  for (std::int32_t i = 0; i < a.n; ++i)
    for (std::int64_t t = a.row_ptr[std::size_t(i)]; t < a.row_ptr[std::size_t(i) + 1]; ++t)
      if (a.col[std::size_t(t)] == i) diagonal[std::size_t(i)] = std::abs(a.val[std::size_t(t)]);
  for (std::int32_t i = 0; i < a.n; ++i) {
    for (std::int64_t t = a.row_ptr[std::size_t(i)]; t < a.row_ptr[std::size_t(i) + 1]; ++t) {
      const std::int32_t j = a.col[std::size_t(t)];
      if (j == i) continue;
      const auto b = a.col.begin() + a.row_ptr[std::size_t(j)],
                 e = a.col.begin() + a.row_ptr[std::size_t(j) + 1];
      const auto at = std::lower_bound(b, e, i);
      const double v = a.val[std::size_t(t)];
      const double w = at != e && *at == i ? a.val[std::size_t(at - a.col.begin())] : 0.0;
      const double scale =
          std::max({std::abs(v), std::abs(w),
                    std::sqrt(diagonal[std::size_t(i)] * diagonal[std::size_t(j)])});
      if (std::abs(v - w) > 1e-12 * scale) return {i, j};
    }
  }
  return {};
}

void* library_symbol(void* lib, const char* library, const char* symbol, std::string& why) {
  void* f = dlsym(lib, symbol);
  if (!f) why = std::string("the ") + library + " library lacks " + symbol;
  return f;
}

factored factor(method m, const csr_view& a, int device) {
  std::string why;
  if (!available(m, &why))
    throw error(CNC_ERR_UNSUPPORTED, std::string(": ") + name(m) + " is not available: " + why);
  // Inf or NaN (coefficients whose sum overflowed) never reach the libraries: SuperLU's pivot
  // search wrote out of bounds on such a matrix (found by fuzz_opennl), CHOLMOD factors NaN.
  const std::int64_t bad = first_index(a.nnz(), std::int64_t(1) << 16, host_threads(),
                                       [&](std::int64_t e) { return !std::isfinite(a.val[e]); });
  if (bad >= 0) {
    const auto row = std::upper_bound(a.row_ptr.begin(), a.row_ptr.end(), bad) - 1;
    factored r;
    r.reason = CNC_REASON_NOT_FINITE;
    r.why = std::string(name(m)) + ": A holds " + std::to_string(a.val[std::size_t(bad)]) +
            " at row " + std::to_string(row - a.row_ptr.begin()) + ", column " +
            std::to_string(a.col[std::size_t(bad)]) + ": not factored, x unchanged";
    return r;
  }
  if (m == method::cholmod) {
    const entry e = first_asymmetric(a);
    if (e.row >= 0)
      throw error(CNC_ERR_UNSUPPORTED,
                  ": CHOLMOD needs a symmetric matrix, and a(" + std::to_string(e.row) + ", " +
                      std::to_string(e.col) + ") differs from a(" + std::to_string(e.col) + ", " +
                      std::to_string(e.row) + "): use CNC_SUPERLU (or an iterative method)");
    return factor_with_cholmod(a);
  }
  if (m == method::cudss) return factor_with_cudss(a, first_asymmetric(a).row < 0, device);
  return factor_with_superlu(a);
}

}  // namespace cnc::direct
