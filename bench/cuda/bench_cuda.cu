// Benchmark of the CUDA backend against a textbook cuSPARSE + cuBLAS Jacobi-PCG, in one run.
//
// Prints tables: time per iteration of cnc's fused, device-resident PCG (driven through the
// device_system like the solver does: iterate() graphs, one state read per check) and of the
// baseline (cusparseSpMV on CSR, cuBLAS dots/axpys, scalars on the host, as NVIDIA's samples),
// the minimum-bytes floor from the device-to-device copy bandwidth measured in the same run,
// iterations and true residuals to a fixed tolerance (mixed vs double), and k = 8 right-hand
// sides against 8 separate solves.
//
// Floor bytes of one cnc iteration (3 fused steps): matrix values + column indices once, 64-bit
// row offsets once, plus vector passes of n_padded values each: SpMV reads p and writes q (2k);
// update_xr reads q, r and d, writes r (3k + 1); update_p reads x, r, d, p and writes x, p
// (5k + 1): 10k + 2 passes, 12 for k = 1. d is shared by the k systems.
//
//   bench_cuda [quick]     ("quick": small sizes only, for a smoke test)
//
// bench_cuda_problems.cu builds the problems; bench_cuda_timing.cu times cnc and the baseline and
// prints the table rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "bench_cuda_problems.cuh"
#include "bench_cuda_timing.cuh"

using namespace cnc;

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;
  std::string why;
  backend_options o;
  g_cnc = make_cuda_backend(o, why);
  if (!g_cnc) {
    std::printf("CUDA backend unavailable: %s\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_copy_bw = copy_bandwidth();
  std::printf("device: %s, %d SMs, L2 %d MiB; device-to-device copy (read+write): %.0f GB/s\n\n",
              g_cnc->device_name().c_str(), prop.multiProcessorCount, prop.l2CacheSize >> 20,
              g_copy_bw * 1e-9);

  const precision precs[] = {precision::f64, precision::f32, precision::mixed};
  std::vector<std::pair<int, int>> sizes = {{7, 46},  {7, 64},   {7, 128}, {7, 256},
                                            {27, 64}, {27, 128}, {27, 256}};
  if (quick) sizes = {{7, 46}, {27, 64}};

  std::printf(
      "## Time per iteration, k = 1 (floor = minimum bytes / copy bandwidth; * = a run "
      "stopped early)\n\n");
  header();
  for (auto [pts, N] : sizes) {
    problem pb;
    poisson(pb, N, pts);
    for (precision p : precs) {
      double tb = 0;
      row(pb, format::csr, p, true, &tb);
      row(pb, format::sell, p, false, &tb);
    }
  }
  {
    problem pb;
    block4(pb, quick ? 32 : 100);
    for (precision p : precs) {
      double tb = 0;
      row(pb, format::csr, p, true, &tb);
      row(pb, format::bcrs4, p, false, &tb);
      row(pb, format::sell, p, false, &tb);
    }
  }

  // Small systems: the persistent kernel (SELL, one cooperative launch per 16 iterations) against
  // the CUDA-graph path of the same SELL matrix and of CSR, and its blocks per SM.
  std::printf(
      "\n## Small systems: persistent kernel vs graphs (double, us/iter)\n\n"
      "| problem | n | csr graph | sell graph | sell persistent (auto grid) | 1 block/SM | "
      "2 blocks/SM | 4 blocks/SM | cuSPARSE | speed-up (persistent) |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::pair<int, int>> small = {{7, 24}, {7, 32}, {7, 46}, {7, 64}, {7, 80}, {27, 46}};
  if (quick) small = {{7, 32}, {7, 46}};
  for (auto [pts, N] : small) {
    problem pb;
    poisson(pb, N, pts);
    auto us = [&](format f, const char* rows, const char* per_sm, std::string* cfg) {
      setenv("CNC_CUDA_PERSISTENT_ROWS", rows, 1);
      if (per_sm) setenv("CNC_CUDA_PERSISTENT_BLOCKS_PER_SM", per_sm, 1);
      cnc_run r = make_cnc(pb, f, precision::f64, 1);
      unsetenv("CNC_CUDA_PERSISTENT_ROWS");
      unsetenv("CNC_CUDA_PERSISTENT_BLOCKS_PER_SM");
      bool ok;
      pick_iters(r);  // warm-up
      // iterate(16) + read_state: what the solver does per convergence check.
      std::vector<double> t;
      std::vector<rhs_state> st(1);
      for (int rep = 0; rep < 7; ++rep) {
        r.sys->set_vectors(r.b.data(), r.x0.data());
        r.sys->init(r.thr2.data());
        r.sys->read_state(st.data());
        const double t0 = now();
        for (int c = 0; c < 16; ++c) {
          r.sys->iterate(16);
          r.sys->read_state(st.data());
        }
        t.push_back((now() - t0) / 256);
        ok = st[0].iters == 256;
        if (!ok) std::printf("(stopped early at %d) ", st[0].iters);
      }
      std::sort(t.begin(), t.end());
      if (cfg) *cfg = r.config;
      return t[3] * 1e6;
    };
    std::string cfg;
    const double csr_g = us(format::csr, "0", nullptr, nullptr);
    const double sell_g = us(format::sell, "0", nullptr, nullptr);
    const double pers = us(format::sell, "1073741824", nullptr, &cfg);
    const double p1 = us(format::sell, "1073741824", "1", nullptr);
    const double p2 = us(format::sell, "1073741824", "2", nullptr);
    const double p4 = us(format::sell, "1073741824", "4", nullptr);
    const int bit = std::clamp(static_cast<int>(0.1 / (3 * pers * 1e-6)), 10, 300);
    const double tb = time_baseline<double>(pb, bit, 3) * 1e6;
    std::printf("| %s | %d | %.1f | %.1f | %.1f (%s) | %.1f | %.1f | %.1f | %.1f | %.2fx |\n",
                pb.name.c_str(), pb.csr.n, csr_g, sell_g, pers, cfg.c_str(), p1, p2, p4, tb,
                tb / pers);
    std::fflush(stdout);
  }

  // Sub-warp width sweep of the CSR kernel on the largest problems (double).
  std::printf(
      "\n## CSR lanes per row (double)\n\n| problem | width | ms/iter | %% of floor |\n"
      "|---|---|---|---|\n");
  for (auto [pts, N] :
       std::vector<std::pair<int, int>>{{7, quick ? 64 : 256}, {27, quick ? 64 : 256}}) {
    problem pb;
    poisson(pb, N, pts);
    for (int w : {2, 4, 8, 16, 32}) {
      if ((pts == 7 && w > 8) || (pts == 27 && (w < 4 || w > 16))) continue;
      setenv("CNC_CUDA_SPMV_WIDTH", std::to_string(w).c_str(), 1);
      cnc_run r = make_cnc(pb, format::csr, precision::f64, 1);
      unsetenv("CNC_CUDA_SPMV_WIDTH");
      const int iters = pick_iters(r);
      bool ok;
      const double t = time_cnc(r, iters, 3, ok);
      const double floor_t = floor_bytes(pb, format::csr, precision::f64, 1) / g_copy_bw;
      std::printf("| %s | %d | %.4f | %.1f%% |\n", pb.name.c_str(), w, t * 1e3, 100 * floor_t / t);
      std::fflush(stdout);
    }
  }

  std::printf(
      "\n## Steps timed alone: ms (%% of the step's floor)\n\n| problem | format | "
      "precision | spmv_dot | update_xr | update_p | |\n|---|---|---|---|---|---|---|\n");
  {
    problem pb;
    poisson(pb, quick ? 64 : 256, 7);
    for (precision p : precs) breakdown(pb, format::csr, p);
    for (precision p : precs) breakdown(pb, format::sell, p);
  }
  {
    problem pb;
    poisson(pb, quick ? 64 : 256, 27);
    breakdown(pb, format::csr, precision::f64);
    breakdown(pb, format::csr, precision::mixed);
    breakdown(pb, format::sell, precision::f64);
    breakdown(pb, format::sell, precision::mixed);
  }
  {
    problem pb;
    block4(pb, quick ? 32 : 100);
    breakdown(pb, format::bcrs4, precision::f64);
    breakdown(pb, format::csr, precision::f64);
  }

  // Mixed vs double to a fixed tolerance.
  const double tol = 1e-8;
  std::printf(
      "\n## Solve to ||r|| <= %g ||b|| (state read every 16 iterations)\n\n"
      "| problem | format | precision | iterations | s | ms/iter | true residual | "
      "time vs double |\n|---|---|---|---|---|---|---|---|\n",
      tol);
  std::vector<std::pair<int, int>> conv = {{7, 128}, {7, 256}, {27, 128}};
  if (quick) conv = {{7, 46}};
  for (auto [pts, N] : conv) {
    problem pb;
    poisson(pb, N, pts);
    for (format f : {format::csr, format::sell}) {
      double t64 = 0;
      for (precision p : {precision::f64, precision::mixed, precision::f32}) {
        cnc_run r = make_cnc(pb, f, p, 1);
        solve_cnc(r, pb, tol);  // warm-up
        const solve_result s = solve_cnc(r, pb, tol);
        if (p == precision::f64) t64 = s.seconds;
        std::printf("| %s | %s | %s | %d | %.4f | %.4f | %.2e | %.2fx |\n", pb.name.c_str(),
                    format_name(f), pname(p), s.iters, s.seconds,
                    s.seconds / std::max(1, s.iters) * 1e3, s.true_res, t64 / s.seconds);
        std::fflush(stdout);
      }
    }
  }
  {
    problem pb;
    block4(pb, quick ? 32 : 100);
    double t64 = 0;
    for (precision p : {precision::f64, precision::mixed}) {
      cnc_run r = make_cnc(pb, format::bcrs4, p, 1);
      solve_cnc(r, pb, tol);
      const solve_result s = solve_cnc(r, pb, tol);
      if (p == precision::f64) t64 = s.seconds;
      std::printf("| %s | bcrs4 | %s | %d | %.4f | %.4f | %.2e | %.2fx |\n", pb.name.c_str(),
                  pname(p), s.iters, s.seconds, s.seconds / std::max(1, s.iters) * 1e3, s.true_res,
                  t64 / s.seconds);
    }
  }

  // k = 8 right-hand sides in one system vs one system per right-hand side.
  std::printf(
      "\n## k = 8 right-hand sides vs 8 separate solves (time per iteration)\n\n"
      "| problem | format | precision | k=1 ms/iter | k=8 ms/iter | per-rhs speed-up | k=8 "
      "%% of floor |\n|---|---|---|---|---|---|---|\n");
  std::vector<std::pair<int, int>> ks = {{7, 128}, {7, 256}, {27, 128}};
  if (quick) ks = {{7, 46}};
  for (auto [pts, N] : ks) {
    problem pb;
    poisson(pb, N, pts);
    for (format f : {format::csr, format::sell})
      for (precision p : {precision::f64, precision::mixed}) {
        cnc_run r1 = make_cnc(pb, f, p, 1);
        bool ok1, ok8;
        const double t1 = time_cnc(r1, pick_iters(r1), 3, ok1);
        r1.sys.reset();
        cnc_run r8 = make_cnc(pb, f, p, 8);
        const double t8 = time_cnc(r8, std::max(64, pick_iters(r8)), 3, ok8);
        const double floor_t = floor_bytes(pb, f, p, 8) / g_copy_bw;
        std::printf("| %s | %s | %s | %.4f%s | %.4f%s | %.2fx | %.1f%% |\n", pb.name.c_str(),
                    format_name(f), pname(p), t1 * 1e3, ok1 ? "" : "*", t8 * 1e3, ok8 ? "" : "*",
                    8 * t1 / t8, 100 * floor_t / t8);
        std::fflush(stdout);
      }
  }
  g_cnc.reset();
  return 0;
}
