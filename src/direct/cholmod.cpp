// CHOLMOD (SuiteSparse) through dlopen: supernodal or simplicial Cholesky, CHOLMOD's choice
// (Common->supernodal = CHOLMOD_AUTO), with its fill-reducing ordering, over the long-index
// interface (cholmod_l_*: nnz may pass 2^31). Its header gives the types only.
#include "cnc.h"
#include "direct/direct.hpp"
#include "util/error.hpp"

#ifdef CNC_HAVE_CHOLMOD_H

#include <cholmod.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace cnc::direct {
namespace {

struct cholmod_api {
  decltype(&cholmod_l_start) start = nullptr;
  decltype(&cholmod_l_finish) finish = nullptr;
  decltype(&cholmod_l_analyze) analyze = nullptr;
  decltype(&cholmod_l_factorize) factorize = nullptr;
  decltype(&cholmod_l_solve) solve = nullptr;
  decltype(&cholmod_l_free_factor) free_factor = nullptr;
  decltype(&cholmod_l_free_dense) free_dense = nullptr;
  decltype(&cholmod_l_change_factor) change_factor = nullptr;
  // libgomp's, where CHOLMOD was built with OpenMP (Debian's is): optional.
  void (*omp_set_dynamic)(int) = nullptr;
  int (*omp_get_dynamic)() = nullptr;
  bool ok = false;
  std::string why;
};

// Opened once per process, kept open (its handle is never closed).
const cholmod_api& api() {
  static const cholmod_api loaded = [] {
    cholmod_api a;
    void* lib = open_library(env::var::cholmod_library, {"libcholmod.so.3", "libcholmod.so"},
                             "Debian's package libcholmod3", a.why);
    if (!lib) return a;
    std::string& w = a.why;
    a.ok = resolve(lib, "CHOLMOD", "cholmod_l_start", a.start, w) &&
           resolve(lib, "CHOLMOD", "cholmod_l_finish", a.finish, w) &&
           resolve(lib, "CHOLMOD", "cholmod_l_analyze", a.analyze, w) &&
           resolve(lib, "CHOLMOD", "cholmod_l_factorize", a.factorize, w) &&
           resolve(lib, "CHOLMOD", "cholmod_l_solve", a.solve, w) &&
           resolve(lib, "CHOLMOD", "cholmod_l_free_factor", a.free_factor, w) &&
           resolve(lib, "CHOLMOD", "cholmod_l_free_dense", a.free_dense, w) &&
           resolve(lib, "CHOLMOD", "cholmod_l_change_factor", a.change_factor, w);
    // Searched in CHOLMOD's dependencies too; none is required.
    std::string ignored;
    if (!resolve(lib, "CHOLMOD", "omp_set_dynamic", a.omp_set_dynamic, ignored) ||
        !resolve(lib, "CHOLMOD", "omp_get_dynamic", a.omp_get_dynamic, ignored))
      a.omp_set_dynamic = nullptr, a.omp_get_dynamic = nullptr;
    return a;
  }();
  return loaded;
}

// CHOLMOD's supernodal factorization opens OpenMP regions of a fixed 4 threads
// (CHOLMOD_OMP_NUM_THREADS, a num_threads clause that omp_set_num_threads does not lower), many of
// them short: on 2 cores, or cores other work holds, the threads wait on each other at every
// region's barrier (measured: the LSCM 25 K disk factored in 0.83-1.15 s, against 0.46-0.67 s
// with OMP_THREAD_LIMIT 1 or 2 or OMP_DYNAMIC true, same run). Dynamic threads for the calling
// thread's regions let libgomp give them no more threads than idle cores; restored after.
class dynamic_omp_threads {
 public:
  dynamic_omp_threads() {
    if (!api().omp_set_dynamic) return;
    was_ = api().omp_get_dynamic();
    if (!was_) api().omp_set_dynamic(1);
  }
  ~dynamic_omp_threads() {
    if (api().omp_set_dynamic && was_ == 0) api().omp_set_dynamic(0);
  }
  dynamic_omp_threads(const dynamic_omp_threads&) = delete;
  dynamic_omp_threads& operator=(const dynamic_omp_threads&) = delete;

 private:
  int was_ = -1;  // -1: not changed
};

class cholmod_factorization final : public factorization {
 public:
  cholmod_factorization() {
    api().start(&common_);
    common_.print = 0;  // failures are reported through cnc's statuses and log, not stdout
    // LLᵀ from the start, also for a simplicial factor: its LDLᵀ (CHOLMOD's default there) would
    // factor an indefinite A instead of reporting it not positive definite.
    common_.final_ll = 1;
  }
  ~cholmod_factorization() override {
    if (l_) api().free_factor(&l_, &common_);
    api().finish(&common_);
  }
  cholmod_factorization(const cholmod_factorization&) = delete;
  cholmod_factorization& operator=(const cholmod_factorization&) = delete;

  // Analysis and numerical factorization; "" on success, else why there is none.
  std::string factor(const csr_view& a, int& reason) {
    // A's rows as CSC columns: with stype 1 CHOLMOD reads the entries above the diagonal of that
    // CSC matrix, which are A's lower triangle: for a symmetric A, the same matrix.
    std::vector<SuiteSparse_long> p(a.row_ptr.begin(), a.row_ptr.end()),
        i(a.col.begin(), a.col.end());
    cholmod_sparse s{};
    s.nrow = s.ncol = std::size_t(a.n);
    s.nzmax = std::size_t(a.nnz());
    s.p = p.data();
    s.i = i.data();
    s.x = const_cast<double*>(a.val.data());  // read only
    s.stype = 1;
    s.itype = CHOLMOD_LONG;
    s.xtype = CHOLMOD_REAL;
    s.dtype = CHOLMOD_DOUBLE;
    s.sorted = 1;
    s.packed = 1;
    const dynamic_omp_threads dynamic;
    l_ = api().analyze(&s, &common_);
    if (!l_) failure("analysis");
    const int done = api().factorize(&s, l_, &common_);
    if (common_.status == CHOLMOD_NOT_POSDEF || (done && l_->minor < std::size_t(a.n))) {
      reason = CNC_REASON_INDEFINITE_MATRIX;
      return "CHOLMOD: A is not positive definite (the factorization stopped at column " +
             std::to_string(l_->minor) + " of " + std::to_string(a.n) + ")";
    }
    if (!done || common_.status < CHOLMOD_OK) failure("factorization");
    return "";
  }

  void solve(int k, const double* b, double* x) override {
    // One vector at a time (ARPACK's shift-invert asks for hundreds): the supernodal solve calls
    // BLAS-2 on each supernode, which a threaded BLAS (OpenBLAS) spreads over every core per
    // call: measured 14x slower than the simplicial solve's plain loops on 2 busy cores, 2x on
    // 16 quiet ones. The factor is converted once (same numbers, simplicial LLᵀ layout), from
    // the second solve on: the conversion costs more than one supernodal solve (LSCM 25 K disk on
    // 2 busy cores, median of 5: one solve 0.669 s -> 0.551 s total with the reference BLAS,
    // conversion 0.035 s against a solve of 0.014 s either way; 0.277 s -> 0.249 s with OpenBLAS
    // on 2 threads).
    if (k == 1 && l_->is_super && ++single_solves_ > 1) {
      if (!api().change_factor(CHOLMOD_REAL, 1, 0, 1, 1, l_, &common_)) failure("conversion");
    }
    cholmod_dense rhs{};
    rhs.nrow = std::size_t(l_->n);
    rhs.ncol = std::size_t(k);
    rhs.nzmax = rhs.d = rhs.nrow;
    rhs.nzmax *= rhs.ncol;
    rhs.x = const_cast<double*>(b);  // read only (CHOLMOD_A: a new X)
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    cholmod_dense* sol = api().solve(CHOLMOD_A, l_, &rhs, &common_);
    if (!sol) failure("solve");
    std::memcpy(x, sol->x, sizeof(double) * rhs.nzmax);
    api().free_dense(&sol, &common_);
  }

 private:
  // Throws for CHOLMOD's own failures (memory, a bad matrix): they are not A's property.
  [[noreturn]] void failure(const char* stage) {
    if (common_.status == CHOLMOD_OUT_OF_MEMORY)
      throw error(CNC_ERR_OUT_OF_MEMORY,
                  std::string(": CHOLMOD's ") + stage + " ran out of memory");
    throw error(CNC_ERR_INTERNAL, std::string(": CHOLMOD's ") + stage + " failed (CHOLMOD status " +
                                      std::to_string(common_.status) + ")");
  }

  cholmod_common common_{};
  cholmod_factor* l_ = nullptr;
  int single_solves_ = 0;  // one-vector solves asked of this factor
};

}  // namespace

bool cholmod_loadable(std::string* why) {
  if (!api().ok && why) *why = api().why;
  return api().ok;
}

factored factor_with_cholmod(const csr_view& a) {
  auto f = std::make_unique<cholmod_factorization>();
  factored r;
  r.why = f->factor(a, r.reason);
  if (r.why.empty()) r.f = std::move(f);
  return r;
}

}  // namespace cnc::direct

#else  // built without cholmod.h

namespace cnc::direct {

bool cholmod_loadable(std::string* why) {
  if (why) *why = "this cnc was built without CHOLMOD's header (Debian: libsuitesparse-dev)";
  return false;
}

factored factor_with_cholmod(const csr_view&) {
  throw error(CNC_ERR_UNSUPPORTED, ": this cnc was built without CHOLMOD");
}

}  // namespace cnc::direct

#endif
