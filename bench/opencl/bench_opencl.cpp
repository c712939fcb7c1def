// bench_opencl: per-iteration time of the OpenCL backend's PCG steps on a 7-point 3D Poisson
// matrix, against the minimum-bytes floor at the device copy bandwidth measured in the same run,
// and against the other backends (cpu, cuda) driven the same way in the same run.
//
//   bench_opencl [--grid N]... [--precision double|single|mixed]... [--format csr|sell]...
//                [--iters I] [--backends opencl,cpu,cuda] [--copy-mib M] [--sweep W:G:WG,...]
//
// --sweep adds OpenCL rows for other launch shapes (CSR work-items per row W, work-groups G,
// work-group size WG; 0 = automatic), set through CNC_OPENCL_CSR_WIDTH/GROUPS/WG.
//
// Each backend gets the same matrix (CSR, or SELL: 32-row slices padded to their longest row),
// b = 1, x = 0, thr2 = 0 (never converges), warms up,
// then runs I iterations through iterate() with one read_state at the end (what the solver does
// between two convergence checks). Minimum bytes per iteration (as CNC_BYTES_PER_ITERATION):
// values + column indices (SELL: padding included) + 8-byte row (slice) offsets once, plus 12
// vector passes of n_padded values (13 before x moved into update_p). --sweep applies to the CSR
// rows.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/opencl/opencl_backend.hpp"
#include "conversion/convert.hpp"
#include "util/error.hpp"

namespace {

cnc::csr_matrix poisson3d(int g) {
  cnc::csr_matrix a;
  a.n = g * g * g;
  a.row_ptr.reserve(a.n + 1);
  a.row_ptr.push_back(0);
  a.col.reserve(static_cast<std::size_t>(a.n) * 7);
  a.val.reserve(static_cast<std::size_t>(a.n) * 7);
  for (int z = 0; z < g; ++z)
    for (int y = 0; y < g; ++y)
      for (int x = 0; x < g; ++x) {
        const int i = (z * g + y) * g + x;
        auto add = [&](int j, double v) {
          a.col.push_back(j);
          a.val.push_back(v);
        };
        if (z > 0) add(i - g * g, -1);
        if (y > 0) add(i - g, -1);
        if (x > 0) add(i - 1, -1);
        add(i, 6);
        if (x + 1 < g) add(i + 1, -1);
        if (y + 1 < g) add(i + g, -1);
        if (z + 1 < g) add(i + g * g, -1);
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
      }
  return a;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const char* prec_name(cnc::precision p) {
  return p == cnc::precision::f64 ? "double" : p == cnc::precision::f32 ? "single" : "mixed";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> grids;
  std::vector<cnc::precision> precs;
  std::vector<cnc::format> formats;
  std::vector<std::string> names = {"opencl", "cpu", "cuda"};
  int iters = 100;
  double copy_mib = 0;
  std::vector<std::string> sweep;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--grid") {
      grids.push_back(std::atoi(v));
      ++i;
    } else if (a == "--precision") {
      const std::string s = v;
      precs.push_back(s == "single"  ? cnc::precision::f32
                      : s == "mixed" ? cnc::precision::mixed
                                     : cnc::precision::f64);
      ++i;
    } else if (a == "--format") {
      formats.push_back(std::string(v) == "sell" ? cnc::format::sell : cnc::format::csr);
      ++i;
    } else if (a == "--iters") {
      iters = std::max(1, std::atoi(v));
      ++i;
    } else if (a == "--copy-mib") {
      copy_mib = std::atof(v);
      ++i;
    } else if (a == "--sweep") {
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');) sweep.push_back(t);
      ++i;
    } else if (a == "--backends") {
      names.clear();
      std::stringstream ss(v);
      for (std::string s; std::getline(ss, s, ',');) names.push_back(s);
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: bench_opencl [--grid N]... [--precision double|single|mixed]... "
                   "[--format csr|sell]... [--iters I] [--backends opencl,cpu,cuda] [--copy-mib M] "
                   "[--sweep W:G:WG,...]\n");
      return 2;
    }
  }
  if (grids.empty()) grids = {64};
  if (precs.empty()) precs = {cnc::precision::f64, cnc::precision::mixed};
  if (formats.empty()) formats = {cnc::format::csr};

  struct entry {
    std::string name;
    std::unique_ptr<cnc::backend> b;
    double copy_bw = 0;
  };
  std::vector<entry> backends;
  for (const std::string& n : names) {
    std::string why;
    cnc::backend_options o;
    std::unique_ptr<cnc::backend> b = n == "opencl" ? cnc::make_opencl_backend(o, why)
                                      : n == "cuda" ? cnc::make_cuda_backend(o, why)
                                                    : cnc::make_cpu_backend(o, why);
    if (!b) {
      std::printf("# %s: unavailable (%s)\n", n.c_str(), why.c_str());
      continue;
    }
    entry e{n, std::move(b), 0};
    if (n == "opencl") {
      const double mib = copy_mib > 0 ? copy_mib : cnc::opencl_backend_is_gpu(*e.b) ? 2048 : 256;
      e.copy_bw = cnc::opencl_copy_bandwidth(*e.b, static_cast<std::size_t>(mib * 1048576), 5);
      std::printf(
          "# opencl device: %s (%s), clEnqueueCopyBuffer %.0f MiB: %.1f GB/s (read+write)\n",
          e.b->device_name().c_str(), cnc::opencl_backend_is_gpu(*e.b) ? "GPU" : "CPU", mib,
          e.copy_bw / 1e9);
    } else {
      std::printf("# %s device: %s\n", n.c_str(), e.b->device_name().c_str());
    }
    backends.push_back(std::move(e));
  }
  if (backends.empty()) return 1;

  std::printf(
      "\n| grid | unknowns | format | precision | backend | ms/iteration | GB/s (min bytes) | "
      "%% of copy-BW floor | time vs opencl |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int g : grids) {
    const cnc::csr_matrix a = poisson3d(g);
    const std::vector<double> b(a.n, 1.0), x(a.n, 0.0);
    const double thr2 = 0;
    for (cnc::format f : formats) {
      cnc::sell_matrix sell;
      cnc::host_matrix hm;
      hm.fmt = f;
      hm.csr = a;
      if (f == cnc::format::sell) {
        sell = cnc::csr_to_sell(a);
        hm.sell = &sell;
      }
      const std::vector<double> d(static_cast<std::size_t>(hm.n_padded()), 1.0 / 6.0);
      const double entries = f == cnc::format::sell ? double(sell.entries()) : double(a.nnz());
      const double offsets = f == cnc::format::sell ? sell.n_slices + 1.0 : a.n + 1.0;
      for (cnc::precision p : precs) {
        const double vs = p == cnc::precision::f32 ? 4 : 8, ms = p == cnc::precision::f64 ? 8 : 4;
        const double bytes = entries * (ms + 4) + offsets * 8 + 12.0 * hm.n_padded() * vs;
        double opencl_t = 0;
        std::vector<std::pair<entry*, std::string>> runs;  // (backend, OpenCL launch shape)
        for (entry& e : backends) {
          runs.emplace_back(&e, "");
          if (e.name == "opencl" && f == cnc::format::csr)
            for (const std::string& t : sweep) runs.emplace_back(&e, t);
        }
        for (auto& [ep, shape] : runs) {
          entry& e = *ep;
          std::string label = e.name;
          if (!shape.empty()) {
            int w = 0, gr = 0, wg = 0;
            std::sscanf(shape.c_str(), "%d:%d:%d", &w, &gr, &wg);
            setenv("CNC_OPENCL_CSR_WIDTH", std::to_string(w).c_str(), 1);
            setenv("CNC_OPENCL_GROUPS", std::to_string(gr).c_str(), 1);
            setenv("CNC_OPENCL_WG", std::to_string(wg).c_str(), 1);
            label += " W:G:WG=" + shape;
          }
          try {
            auto sys = e.b->create_system(hm, d, p, 1);
            if (!shape.empty())
              for (const char* v : {"CNC_OPENCL_CSR_WIDTH", "CNC_OPENCL_GROUPS", "CNC_OPENCL_WG"})
                unsetenv(v);
            sys->set_vectors(b.data(), x.data());
            sys->init(&thr2);
            cnc::rhs_state st{};
            sys->iterate(5);
            sys->read_state(&st);
            double best = 1e30;
            for (int rep = 0; rep < 3; ++rep) {
              const auto t0 = std::chrono::steady_clock::now();
              sys->iterate(iters);
              sys->read_state(&st);
              best = std::min(best, seconds_since(t0) / iters);
            }
            if (st.status != cnc::running)
              std::printf("# note: %s stopped with status %d after %d iterations\n", e.name.c_str(),
                          st.status, st.iters);
            if (e.name == "opencl" && shape.empty()) opencl_t = best;
            char floor[32] = "-", ratio[32] = "-";
            if (e.copy_bw > 0)
              std::snprintf(floor, sizeof floor, "%.0f%%", 100.0 * (bytes / e.copy_bw) / best);
            if (opencl_t > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", best / opencl_t);
            std::printf("| %d^3 | %d | %s | %s | %s | %.4f | %.1f | %s | %s |\n", g, a.n,
                        cnc::format_name(f), prec_name(p), label.c_str(), best * 1e3,
                        bytes / best / 1e9, floor, ratio);
            std::fflush(stdout);
          } catch (const cnc::error& err) {
            std::printf("| %d^3 | %d | %s | %s | %s | error: %s | | | |\n", g, a.n,
                        cnc::format_name(f), prec_name(p), label.c_str(), err.what());
          }
        }
      }
    }
  }
  return 0;
}
