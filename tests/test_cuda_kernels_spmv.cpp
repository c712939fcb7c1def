// CUDA backend kernels against simple host references (cmocka): the SpMV.
//
// apply() of the device_system is the SpMV (CSR, BCRS 2x2, 4x4, SELL, every sub-warp width, 1 to
// 11 right-hand sides, three precisions), checked against the host product on random SPD matrices
// and on real ones from the SuiteSparse test set (CNC_MATRIX_DIR, default
// /work/shared/data/matrices; skipped, saying so, when absent). Without a usable CUDA device the
// whole program exits 77 after printing why.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "cnc.h"
#include "conversion/convert.hpp"
#include "cuda_kernels_support.hpp"
#include "host_reference.hpp"

// cmocka last: its fail() macro would clash with std::ios::fail in the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace cnc;

namespace {

void set_width(int w) {
  if (w)
    setenv("CNC_CUDA_SPMV_WIDTH", std::to_string(w).c_str(), 1);
  else
    unsetenv("CNC_CUDA_SPMV_WIDTH");
}

std::vector<int> widths(format f) {
  switch (f) {
    case format::csr:
      return {0, 2, 4, 8, 16, 32};
    case format::bcrs2:
      return {0, 4, 8, 16, 32};
    case format::bcrs4:
      return {0, 16, 32};
    case format::sell:
      return {0};
    case format::zcsr:  // not in all_formats: the suite's backend_zcsr.cpp tests it
      return {0, 2, 4, 8, 16, 32};
    case format::zsell:  // not in all_formats either (backend_zcsr.cpp)
      return {0};
  }
  return {0};
}

// ---- SpMV
// ----------------------------------------------------------------------------------------

// apply() against the host product, for every width, k and precision. Returns checks done.
int check_spmv(const csr_matrix& a, const char* label) {
  int checks = 0;
  for (format f : all_formats) {
    auto t = make_test_matrix(a, f);
    for (precision p : all_precisions)
      for (int k : {1, 3, 8, 11}) {
        // Host vectors have n real rows; the reference works on the padded rows with zeros.
        std::vector<double> x = random_vec(std::size_t(a.n) * k, 7u * k + 1u);
        std::vector<double> xp(std::size_t(t->np) * k, 0.0);
        for (int j = 0; j < k; ++j)
          for (int i = 0; i < a.n; ++i)
            xp[std::size_t(j) * t->np + i] = vec_round(p, x[std::size_t(j) * a.n + i]);
        std::vector<double> yref;
        ref_spmv(t->ref, p, k, xp, t->np, yref);
        for (int w : widths(f)) {
          set_width(w);
          auto sys = g_backend->create_system(t->hm, t->d, p, k);
          set_width(0);
          std::vector<double> y(std::size_t(a.n) * k, NAN);
          sys->apply(x.data(), y.data());
          std::vector<double> yr(std::size_t(a.n) * k);
          for (int j = 0; j < k; ++j)
            for (int i = 0; i < a.n; ++i)
              yr[std::size_t(j) * a.n + i] = yref[std::size_t(j) * t->np + i];
          for (int j = 0; j < k; ++j) {
            const double err = rel_err(y, yr, a.n, a.n, j);
            if (!(err <= vec_tol(p))) {
              auto* probe = dynamic_cast<cuda::system_probe*>(sys.get());
              fail_msg("%s %s %s k=%d system %d (%s): SpMV relative error %g", label,
                       format_name(f), pname(p), k, j, probe ? probe->config().c_str() : "?", err);
            }
            ++checks;
          }
        }
      }
  }
  return checks;
}

void test_spmv_random(void**) {
  int checks = 0;
  checks += check_spmv(random_spd(1, 0, 1), "n=1");
  checks += check_spmv(random_spd(37, 3, 2), "random n=37");
  checks += check_spmv(random_spd(1003, 20, 3), "random n=1003 long rows");
  checks += check_spmv(random_spd(5000, 4, 4), "random n=5000");
  std::printf("spmv random: %d comparisons\n", checks);
}

const char* real_matrices[] = {"lap3D_7pt_n20.mtx", "bcsstk13.mtx", "nos6.mtx", "494_bus.mtx",
                               "bcsstk11.mtx"};

void test_spmv_real(void**) {
  int found = 0, checks = 0;
  for (const char* name : real_matrices) {
    const csr_matrix a = read_mtx(matrix_dir() + "/" + name);
    if (a.n == 0) continue;
    ++found;
    checks += check_spmv(a, name);
  }
  if (!found) {
    std::printf("no matrix of the test set under %s: skipped\n", matrix_dir().c_str());
    skip();
  }
  std::printf("spmv real: %d matrices, %d comparisons\n", found, checks);
}

}  // namespace

int main() {
  const int early = open_cuda_backend();  // 77 (skipped) without a usable CUDA device
  if (early >= 0) return early;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spmv_random),
      cmocka_unit_test(test_spmv_real),
  };
  const int rc = cmocka_run_group_tests(tests, nullptr, nullptr);
  g_backend.reset();
  return rc;
}
