// bench_opencl_patterns: the OpenCL backend's CSR SpMV on a power-law graph (hubs of 10^4 - 10^5
// entries at the lowest row indices) and on a 7-point stencil of about the same size, through
// device_system directly: the time of one PCG iteration (iterate: spmv_dot + the two updates)
// and of one vector-surface spmv (what BiCGSTAB and GMRES call), with the long rows the backend
// cut. CNC_LONG_ROW_MIN=-1 cuts no row (the group ranges stay balanced by work where that pays),
// CNC_LONG_ROW_MIN=N cuts rows longer than N: comparisons in the same build.
//
//   bench_opencl_patterns [--n ROWS] [--grid M] [--iters I] [--precision double|single|mixed]...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../cuda/api_problems.hpp"
#include "backends/backend.hpp"
#include "backends/opencl/opencl_backend.hpp"
#include "util/error.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const char* prec_name(cnc::precision p) {
  return p == cnc::precision::f64 ? "double" : p == cnc::precision::f32 ? "single" : "mixed";
}

cnc::csr_matrix to_csr(const api_bench::problem& p) {
  cnc::csr_matrix a;
  a.n = p.n;
  a.row_ptr = p.rp;
  a.col.assign(p.col.begin(), p.col.end());
  a.val.assign(p.val.begin(), p.val.end());
  return a;
}

// Best of 3 repetitions of `iters` calls of f, then sync(): seconds per call.
template <class F, class S>
double best_time(int iters, F f, S sync) {
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    sync();
    best = std::min(best, seconds_since(t0) / iters);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 200000, grid = 48, iters = 20;
  std::vector<cnc::precision> precs;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--n") {
      n = std::max(1000, std::atoi(v.c_str()));
    } else if (a == "--grid") {
      grid = std::max(4, std::atoi(v.c_str()));
    } else if (a == "--iters") {
      iters = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--precision") {
      precs.push_back(v == "single"  ? cnc::precision::f32
                      : v == "mixed" ? cnc::precision::mixed
                                     : cnc::precision::f64);
    } else {
      std::fprintf(stderr,
                   "usage: bench_opencl_patterns [--n ROWS] [--grid M] [--iters I] "
                   "[--precision double|single|mixed]...\n");
      return 2;
    }
  }
  if (precs.empty()) precs = {cnc::precision::f64};
  std::string why;
  const std::unique_ptr<cnc::backend> be = cnc::make_opencl_backend(cnc::backend_options{}, why);
  if (!be) {
    std::printf("# opencl: unavailable (%s)\n", why.c_str());
    return 1;
  }
  const char* forced = std::getenv("CNC_LONG_ROW_MIN");
  std::printf("# opencl device: %s (%s), CNC_LONG_ROW_MIN=%s\n", be->device_name().c_str(),
              cnc::opencl_backend_is_gpu(*be) ? "GPU" : "CPU", forced ? forced : "(unset)");
  std::printf(
      "\n| matrix | rows | entries | longest row | precision | long rows | ms/iteration | "
      "ms/spmv | GB/s (spmv, min bytes) |\n|---|---|---|---|---|---|---|---|---|\n");
  const api_bench::problem probs[] = {api_bench::power_law(n, 2.1, 12, 1, 7, std::to_string(n)),
                                      api_bench::stencil(grid, 7, 1)};
  for (const api_bench::problem& pr : probs) {
    const cnc::csr_matrix a = to_csr(pr);
    cnc::host_matrix hm;
    hm.fmt = cnc::format::csr;
    hm.csr = a;
    std::vector<double> d(std::size_t(a.n));
    for (std::int32_t i = 0; i < a.n; ++i)
      for (std::int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t)
        if (a.col[std::size_t(t)] == i) d[std::size_t(i)] = 1.0 / a.val[std::size_t(t)];
    const std::vector<double> b(std::size_t(a.n), 1.0), x(std::size_t(a.n), 0.0);
    for (cnc::precision p : precs) {
      try {
        auto sys = be->create_system(hm, d, p, 1);
        sys->set_vectors(b.data(), x.data());
        const double thr2 = 0;
        sys->init(&thr2);
        cnc::rhs_state st{};
        sys->iterate(3);
        sys->read_state(&st);
        const double t_it = best_time(
            iters, [&] { sys->iterate(1); }, [&] { sys->read_state(&st); });
        double dot = 0;
        const int q = cnc::device_system::vec_q;
        const double t_spmv = best_time(
            iters, [&] { sys->spmv(cnc::device_system::vec_r, q); },
            [&] { sys->dots(q, &q, 1, &dot); });
        const double vs = p == cnc::precision::f32 ? 4 : 8, ms = p == cnc::precision::f64 ? 8 : 4;
        const double bytes = double(a.nnz()) * (ms + 4) + (a.n + 1.0) * 4 + 2.0 * a.n * vs;
        std::printf("| %s | %d | %lld | %lld | %s | %lld | %.3f | %.3f | %.2f |\n", pr.name.c_str(),
                    a.n, (long long)a.nnz(), (long long)pr.longest_row(), prec_name(p),
                    (long long)sys->long_rows(), t_it * 1e3, t_spmv * 1e3, bytes / t_spmv / 1e9);
        std::fflush(stdout);
      } catch (const cnc::error& e) {
        std::printf("| %s | %s: error %s |\n", pr.name.c_str(), prec_name(p), e.what());
      }
    }
  }
  return 0;
}
