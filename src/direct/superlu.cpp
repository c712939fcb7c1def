// SuperLU through dlopen: LU with partial pivoting, columns ordered by COLAMD, factored once
// (dgstrf) and applied to each new right-hand side (dgstrs), the steps of SuperLU's dgssv driver
// kept apart. SuperLU wants CSC, and A's CSR is Aᵀ's CSC: cnc factors Aᵀ = Pᵀ L U Qᵀ without a
// copy and solves with trans = TRANS, as dgssv does for row-stored input. SuperLU 5 indexes
// with int: nnz is limited to 2^31 - 1. Its header gives the types only.
#include "cnc.h"
#include "direct/direct.hpp"
#include "util/error.hpp"

#ifdef CNC_HAVE_SUPERLU_H

#include <algorithm>
#include <climits>
#include <vector>

#include "slu_ddefs.h"

namespace cnc::direct {
namespace {

struct superlu_api {
  decltype(&set_default_options) default_options = nullptr;
  decltype(&StatInit) stat_init = nullptr;
  decltype(&StatFree) stat_free = nullptr;
  decltype(&dCreate_CompCol_Matrix) create_csc = nullptr;
  decltype(&dCreate_Dense_Matrix) create_dense = nullptr;
  decltype(&get_perm_c) perm_c = nullptr;
  decltype(&sp_preorder) preorder = nullptr;
  decltype(&sp_ienv) ienv = nullptr;
  decltype(&dgstrf) gstrf = nullptr;
  decltype(&dgstrs) gstrs = nullptr;
  decltype(&Destroy_SuperMatrix_Store) destroy_store = nullptr;
  decltype(&Destroy_SuperNode_Matrix) destroy_supernode = nullptr;
  decltype(&Destroy_CompCol_Matrix) destroy_csc = nullptr;
  decltype(&Destroy_CompCol_Permuted) destroy_permuted = nullptr;
  bool ok = false;
  std::string why;
};

// Opened once per process, kept open.
const superlu_api& api() {
  static const superlu_api loaded = [] {
    superlu_api a;
    void* lib = open_library(env::var::superlu_library, {"libsuperlu.so.5", "libsuperlu.so"},
                             "Debian's package libsuperlu5", a.why);
    if (!lib) return a;
    std::string& w = a.why;
    a.ok = resolve(lib, "SuperLU", "set_default_options", a.default_options, w) &&
           resolve(lib, "SuperLU", "StatInit", a.stat_init, w) &&
           resolve(lib, "SuperLU", "StatFree", a.stat_free, w) &&
           resolve(lib, "SuperLU", "dCreate_CompCol_Matrix", a.create_csc, w) &&
           resolve(lib, "SuperLU", "dCreate_Dense_Matrix", a.create_dense, w) &&
           resolve(lib, "SuperLU", "get_perm_c", a.perm_c, w) &&
           resolve(lib, "SuperLU", "sp_preorder", a.preorder, w) &&
           resolve(lib, "SuperLU", "sp_ienv", a.ienv, w) &&
           resolve(lib, "SuperLU", "dgstrf", a.gstrf, w) &&
           resolve(lib, "SuperLU", "dgstrs", a.gstrs, w) &&
           resolve(lib, "SuperLU", "Destroy_SuperMatrix_Store", a.destroy_store, w) &&
           resolve(lib, "SuperLU", "Destroy_SuperNode_Matrix", a.destroy_supernode, w) &&
           resolve(lib, "SuperLU", "Destroy_CompCol_Matrix", a.destroy_csc, w) &&
           resolve(lib, "SuperLU", "Destroy_CompCol_Permuted", a.destroy_permuted, w);
    return a;
  }();
  return loaded;
}

// SuperLU's statistics, which dgstrf and dgstrs both need.
struct stat_scope {
  SuperLUStat_t s{};
  stat_scope() { api().stat_init(&s); }
  ~stat_scope() { api().stat_free(&s); }
  stat_scope(const stat_scope&) = delete;
  stat_scope& operator=(const stat_scope&) = delete;
};

class superlu_factorization final : public factorization {
 public:
  superlu_factorization() = default;
  superlu_factorization(const superlu_factorization&) = delete;
  superlu_factorization& operator=(const superlu_factorization&) = delete;
  ~superlu_factorization() override {
    if (factored_) api().destroy_supernode(&l_), api().destroy_csc(&u_);
  }

  // "" on success, else why there is no factorization.
  std::string factor(const csr_view& a, int& reason) {
    const int n = a.n;
    if (a.nnz() > INT_MAX)
      throw error(CNC_ERR_UNSUPPORTED, ": SuperLU indexes with int: " + std::to_string(a.nnz()) +
                                           " entries are too many (at most 2^31 - 1)");
    // A row or column without any entry is singular, and SuperLU 5.3's pivot search writes out of
    // bounds on such an empty column (a 2 x 2 matrix with one entry, found by fuzz_opennl).
    std::vector<char> used(static_cast<std::size_t>(n), 0);
    for (const std::int32_t c : a.col) used[std::size_t(c)] = 1;
    for (std::int32_t i = 0; i < n; ++i) {
      const bool empty_row = a.row_ptr[std::size_t(i) + 1] == a.row_ptr[std::size_t(i)];
      if (!empty_row && used[std::size_t(i)]) continue;
      reason = CNC_REASON_BREAKDOWN;
      return "SuperLU: A is singular (" + std::string(empty_row ? "row " : "column ") +
             std::to_string(i) + " holds no entry): not factored";
    }
    // The CSR's arrays as Aᵀ's CSC (SuperLU reads them only, though its types are not const).
    std::vector<int> offsets(a.row_ptr.begin(), a.row_ptr.end());
    std::vector<int> rows(a.col.begin(), a.col.end());
    std::vector<double> values(a.val.begin(), a.val.end());
    superlu_options_t options;
    api().default_options(&options);
    options.ColPerm = COLAMD;
    options.PrintStat = NO;
    SuperMatrix at{};
    api().create_csc(&at, n, n, int(a.nnz()), values.data(), rows.data(), offsets.data(), SLU_NC,
                     SLU_D, SLU_GE);
    perm_c_.resize(std::size_t(n));
    perm_r_.resize(std::size_t(n));
    std::vector<int> etree(static_cast<std::size_t>(n));
    api().perm_c(int(options.ColPerm), &at, perm_c_.data());
    SuperMatrix ac{};
    api().preorder(&options, &at, perm_c_.data(), etree.data(), &ac);
    GlobalLU_t glu{};
    stat_scope stat;
    int info = 0;
    api().gstrf(&options, &ac, api().ienv(2), api().ienv(1), etree.data(), nullptr, 0,
                perm_c_.data(), perm_r_.data(), &l_, &u_, &glu, &stat.s, &info);
    api().destroy_permuted(&ac);
    api().destroy_store(&at);  // the arrays are the vectors above
    if (info > n)
      throw error(CNC_ERR_OUT_OF_MEMORY, ": SuperLU's factorization ran out of memory (" +
                                             std::to_string(info - n) + " bytes allocated)");
    if (info < 0)
      throw error(CNC_ERR_INTERNAL, ": SuperLU's dgstrf refused argument " + std::to_string(-info));
    factored_ = true;  // L and U are complete, also with a zero pivot
    if (info > 0) {
      reason = CNC_REASON_BREAKDOWN;
      return "SuperLU: A is singular (U(" + std::to_string(info - 1) + ", " +
             std::to_string(info - 1) + ") is exactly zero)";
    }
    return "";
  }

  void solve(int k, const double* b, double* x) override {
    const int n = l_.nrow;
    std::vector<double> sol(b, b + std::size_t(n) * std::size_t(k));  // solved in place
    SuperMatrix rhs{};
    api().create_dense(&rhs, n, k, sol.data(), n, SLU_DN, SLU_D, SLU_GE);
    stat_scope stat;
    int info = 0;
    api().gstrs(TRANS, &l_, &u_, perm_c_.data(), perm_r_.data(), &rhs, &stat.s, &info);
    api().destroy_store(&rhs);
    if (info != 0)
      throw error(CNC_ERR_INTERNAL, ": SuperLU's dgstrs refused argument " + std::to_string(-info));
    std::copy(sol.begin(), sol.end(), x);
  }

 private:
  SuperMatrix l_{}, u_{};
  std::vector<int> perm_c_, perm_r_;
  bool factored_ = false;
};

}  // namespace

bool superlu_loadable(std::string* why) {
  if (!api().ok && why) *why = api().why;
  return api().ok;
}

factored factor_with_superlu(const csr_view& a) {
  auto f = std::make_unique<superlu_factorization>();
  factored r;
  r.why = f->factor(a, r.reason);
  if (r.why.empty()) r.f = std::move(f);
  return r;
}

}  // namespace cnc::direct

#else  // built without SuperLU's header

namespace cnc::direct {

bool superlu_loadable(std::string* why) {
  if (why) *why = "this cnc was built without SuperLU's header (Debian: libsuperlu-dev)";
  return false;
}

factored factor_with_superlu(const csr_view&) {
  throw error(CNC_ERR_UNSUPPORTED, ": this cnc was built without SuperLU");
}

}  // namespace cnc::direct

#endif
