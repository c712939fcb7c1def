// Direct solvers: a sparse factorization of A, kept, then applied to any number of right-hand
// sides. CHOLMOD (SuiteSparse: Cholesky, symmetric positive definite A) and SuperLU (LU with
// partial pivoting, general A) on the host; cuDSS (NVIDIA: Cholesky or LU on a CUDA GPU). The
// libraries are opened at run time (dlopen, Debian's sonames libcholmod.so.3 and libsuperlu.so.5,
// the nvidia-cudss-cu13 wheel's libcudss.so.1, or the paths in CNC_CHOLMOD_LIBRARY,
// CNC_SUPERLU_LIBRARY, CNC_CUDSS_LIBRARY): libcnc has no link dependency on them, and a machine
// without them gets CNC_ERR_UNSUPPORTED with the reason. Their headers serve at build time only,
// for the types (cholmod.cpp, superlu.cpp and cudss.cpp build a "not built" stub where CMake
// found no header; cudss.cpp also without the CUDA backend).
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "matrix/matrix.hpp"
#include "util/environment.hpp"

namespace cnc::direct {

enum class method { cholmod, superlu, cudss };

// The method of a CNC_SOLVER value (CNC_CHOLMOD, CNC_SUPERLU, CNC_CUDSS), or none for an
// iterative one: the one table from the API's values to the direct methods.
std::optional<method> method_of(int solver);
inline bool is_direct_solver(int solver) { return method_of(solver).has_value(); }
// Whether `m` factors on the host (CHOLMOD, SuperLU) or on a CUDA device (cuDSS).
constexpr bool on_gpu(method m) { return m == method::cudss; }

// "CHOLMOD", "SuperLU" or "cuDSS".
const char* name(method m);

// Whether the library of `m` can be loaded here (opened once per process); when not, *why (may
// be null) says why.
bool available(method m, std::string* why);

// A factorization of A, independent of the CSR it was made from.
class factorization {
 public:
  factorization() = default;
  factorization(const factorization&) = delete;
  factorization& operator=(const factorization&) = delete;
  virtual ~factorization() = default;
  // x = A⁻¹ b for k column-major right-hand sides of n rows each; x is written only on success.
  // Throws cnc::error.
  virtual void solve(int k, const double* b, double* x) = 0;
};

// What factor() gives: the factorization, or none with the CNC_REASON_* that says why A has
// none (not positive definite: CNC_REASON_INDEFINITE_MATRIX; singular, a zero pivot:
// CNC_REASON_BREAKDOWN) and a line for the log.
struct factored {
  std::unique_ptr<factorization> f;
  int reason = 0;
  std::string why;
};

// Factors the canonical CSR `a` (square, 0-based, sorted, no duplicates) with `m`. CHOLMOD reads
// A's lower triangle (A's rows are its upper triangle's columns) after checking that A is
// symmetric. cuDSS factors a symmetric A by Cholesky (not positive definite: no factorization,
// CNC_REASON_INDEFINITE_MATRIX, as CHOLMOD) and any other by LU, on CUDA device `device` (-1:
// the CUDA backend's default, CNC_CUDA_DEVICE else 0). Throws cnc::error: CNC_ERR_UNSUPPORTED when
// the library cannot be loaded or `a` is not symmetric (CHOLMOD) or too large for the library's
// indices; CNC_ERR_OUT_OF_MEMORY.
factored factor(method m, const csr_view& a, int device = -1);

// The first entry (row, column) whose mirror differs (|a_ij - a_ji| above 1e-12 of the largest
// of |a_ij|, |a_ji| and sqrt(|a_ii a_jj|): rounding noise beside the diagonal is symmetric; a
// missing mirror counts as 0), or {-1, -1} when A is symmetric. One pass over the entries, a
// binary search in the mirror row each.
struct entry {
  std::int64_t row = -1, col = -1;
};
entry first_asymmetric(const csr_view& a);

// The implementations (cholmod.cpp, superlu.cpp), and what they share: the library at the path
// in environment variable `path_var`, else the first of `sonames` that loads (the caller keeps
// it open for the process); nullptr with `why` set (naming `source`, where the library comes
// from, e.g. "Debian's package libcholmod3") when none loads.
void* open_library(env::var path_var, std::initializer_list<const char*> sonames,
                   const char* source, std::string& why);
// The function `symbol` of an opened library (dlsym); nullptr, with `why` naming `library` and
// the symbol, when it lacks it.
void* library_symbol(void* lib, const char* library, const char* symbol, std::string& why);
template <typename F>
bool resolve(void* lib, const char* library, const char* symbol, F& fn, std::string& why) {
  fn = reinterpret_cast<F>(library_symbol(lib, library, symbol, why));
  return fn != nullptr;
}
bool cholmod_loadable(std::string* why);
factored factor_with_cholmod(const csr_view& a);
bool superlu_loadable(std::string* why);
factored factor_with_superlu(const csr_view& a);
// cuDSS: loadable when its library loads and a CUDA device is there.
bool cudss_loadable(std::string* why);
factored factor_with_cudss(const csr_view& a, bool symmetric, int device);

}  // namespace cnc::direct
