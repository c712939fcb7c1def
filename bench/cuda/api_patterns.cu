// bench_api --patterns: cnc through cncSolveCSR against the textbook cuSPARSE + cuBLAS PCG on the
// sparsity-pattern families that stress a GPU SpMV differently: power-law graphs (a few rows of
// 10^4 to 10^5 entries among rows of 1 to 10), stencils and meshes with their unknowns numbered at
// random (no locality in the gathers of x), a 27-point stencil and a mesh of 4 M rows (large,
// regular or irregular rows in natural order), and the symmetric Matrix Market files of a
// directory. Two tables: a fixed number of iterations (ms per iteration, and cnc's share of the
// bandwidth floor), then the whole first solve to the tolerance. Problems are made one at a time
// and freed after their rows are printed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api_runs.cuh"
#include "textbook_pcg.cuh"

namespace api_bench {

namespace {

using textbook::now;

// The bandwidth floor of one Jacobi-PCG iteration, in bytes; divided by the copy bandwidth it is
// the least time an iteration can take. The matrix in CSR as the caller hands it (double values,
// 32-bit columns, 64-bit row offsets) read once: nnz * (8 + 4) + (n + 1) * 8. Vectors: 9 passes
// of n doubles: the four working vectors x, r, p and q = A p each read once and written once (8:
// each changes every iteration, and each new value needs its old one or is needed by another
// step), plus the Jacobi diagonal read once (1); z = D^-1 r is never stored, the dot products ride
// on those passes, and the SpMV's gathers of p are taken as one pass (perfect reuse in cache).
// An idealization below every three-kernel PCG (cnc's fused steps move 12 passes, see
// bench_cuda.cu; the textbook's cuSPARSE and cuBLAS calls 21), so that the floor is one number
// per matrix, whatever the implementation: the percentage compares patterns, not kernel designs.
// cnc's own ceiling on this scale is (matrix + 72 n) / (matrix + 96 n): 87% for a 7-point
// stencil in CSR, 94% for a 27-point one; a pattern whose gathers miss the cache sits below it.
double floor_bytes(const problem& p) { return pcg_floor_bytes(p.n, p.nnz(), 8); }

struct source {
  std::string name;
  std::function<problem()> make;
};

// The problems, in order; made only when their name passes --only. The Matrix Market files are
// read here (they are small) and kept if real or integer symmetric with a positive diagonal.
std::vector<source> sources(const patterns_options& o) {
  std::vector<source> s;
  // Power-law graphs: gamma and the draws per vertex tuned so that ~10 distinct neighbours remain
  // per row on average and the longest row is ~21 K (100 K rows) and ~356 K (2 M rows).
  s.push_back({"power-law 100K", [] { return power_law(100000, 2.1, 12, 1, 7, "100K"); }});
  s.push_back({"power-law 2M", [] { return power_law(2000000, 2.05, 13, 1, 7, "2M"); }});
  s.push_back({"7-pt 192^3 random", [] { return permuted(stencil(192, 7, 1), 11); }});
  s.push_back({"mesh 128^3 random", [] { return permuted(mesh(128), 13); }});
  s.push_back({"27-pt 160^3", [] { return stencil(160, 27, 1); }});
  s.push_back({"mesh 160^3", [] { return mesh(160); }});
  std::string why;
  const std::vector<std::string> files = mtx_files(o.mtx_dir, &why);
  if (files.empty())
    std::printf("Matrix Market: no .mtx files in %s%s%s: skipped\n", o.mtx_dir.c_str(),
                why.empty() ? "" : ": ", why.c_str());
  int kept = 0;
  for (const std::string& f : files) {
    auto p = std::make_shared<problem>();
    if (!read_matrix_market(f, p.get(), &why)) {
      if (o.verbose) std::printf("skipped %s: %s\n", f.c_str(), why.c_str());
      continue;
    }
    if (!positive_diagonal(*p)) {
      if (o.verbose)
        std::printf("skipped %s: a diagonal entry absent or not positive\n", f.c_str());
      continue;
    }
    ++kept;
    std::string name = p->name;
    s.push_back({std::move(name), [p] { return std::move(*p); }});
  }
  if (!files.empty())
    std::printf(
        "Matrix Market: %d of the %zu files in %s are real symmetric with a positive "
        "diagonal%s\n",
        kept, files.size(), o.mtx_dir.c_str(),
        o.verbose ? "" : " (--verbose: why the others were skipped)");
  return s;
}

}  // namespace

void patterns_tables(const patterns_options& o) {
  const double bw = copy_bandwidth();
  std::printf("device-to-device copy bandwidth: %.0f GB/s (cudaMemcpy of 2 GiB, read + write)\n",
              bw * 1e-9);
  std::vector<source> all = sources(o);
  const int iters = 200, max_it = 20000;
  std::printf(
      "\n## Sparsity patterns: fixed %d iterations, ms per iteration (medians of %d)\n\n"
      "Floor: CSR bytes (nnz x 12 + (n + 1) x 8) + 9 vectors of n doubles, over the copy "
      "bandwidth above (api_patterns.cu, floor_bytes).\n\n"
      "| problem | n | nnz | longest row | cnc backend/format | cnc ordering | cnc ms/it | "
      "textbook ms/it | textbook / cnc | cnc %% of floor |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n",
      iters, o.reps);
  std::vector<std::string> solved, choices;  // rows of the second table; --verbose: reasons
  for (source& src : all) {
    if (src.name.find(o.only) == std::string::npos) continue;
    const double t0 = now();
    const problem p = src.make();
    std::fprintf(stderr, "%s: made in %.2f s\n", p.name.c_str(), now() - t0);
    const std::vector<double> b = rhs(p.n);
    std::vector<double> x(std::size_t(p.n)), xt(std::size_t(p.n));
    const std::vector<int> rp32(p.rp.begin(), p.rp.end());
    // Threshold 1e-300: never converges, so every run does exactly `iters` iterations (unless
    // the residual becomes exactly zero, as on a diagonal matrix: the textbook loop, whose
    // squared threshold underflows to 0, then stops too instead of dividing 0 by 0).
    run_cnc(p, b, x, 1e-300, iters, true, false);  // warm-ups
    run_textbook(p, rp32, b, xt, 1e-300, iters);
    std::vector<double> cms, tms;
    cnc_times c;
    for (int r = 0; r < o.reps; ++r) {
      c = run_cnc(p, b, x, 1e-300, iters, true, false);
      if (c.status != CNC_OK) break;
      cms.push_back(c.solve / std::max(1, c.iterations) * 1e3);
      const tb_times t = run_textbook(p, rp32, b, xt, 1e-300, iters);
      tms.push_back(t.loop / std::max(1, t.iterations) * 1e3);
    }
    if (c.status != CNC_OK) {
      std::printf("| %s | %d | %lld | %lld | failed (%d) | | | | | |\n", p.name.c_str(), p.n,
                  (long long)p.nnz(), (long long)p.longest_row(), c.status);
      continue;
    }
    const double cm = median(cms), tm = median(tms);
    char floor_pct[32] = "-";  // the floor is the GPU's: only for a solve that ran there
    if (c.backend == "cuda")
      std::snprintf(floor_pct, sizeof floor_pct, "%.0f%%", 100 * floor_bytes(p) / bw / (cm * 1e-3));
    std::printf("| %s | %d | %lld | %lld | %s/%s | %s | %.4f | %.4f | **%.2f** | %s |\n",
                p.name.c_str(), p.n, (long long)p.nnz(), (long long)p.longest_row(),
                c.backend.c_str(), c.format.c_str(), c.ordering.c_str(), cm, tm, tm / cm,
                floor_pct);
    std::fflush(stdout);
    if (o.verbose)
      choices.push_back("- " + p.name + " (" + std::to_string(iters) + " its): " + c.choice);

    // To the tolerance: the whole call, each a first solve of its arrays.
    run_cnc(p, b, x, o.tol, max_it, true, false);  // warm-ups
    run_textbook(p, rp32, b, xt, o.tol, max_it);
    std::vector<double> ct, tt;
    tb_times t;
    for (int r = 0; r < o.reps; ++r) {
      c = run_cnc(p, b, x, o.tol, max_it, true, false);
      if (c.status != CNC_OK) break;
      ct.push_back(c.total);
      t = run_textbook(p, rp32, b, xt, o.tol, max_it);
      tt.push_back(t.total);
    }
    char line[640];
    if (c.status != CNC_OK) {
      std::snprintf(line, sizeof line, "| %s | failed (%d) | | | | | | | |\n", p.name.c_str(),
                    c.status);
    } else {
      const std::string its =
          std::to_string(c.iterations) + (c.reason == "converged" ? "" : " (" + c.reason + ")");
      std::snprintf(
          line, sizeof line, "| %s | %s | %.4f | %s | %.1e | %.4f | %d | %.1e | **%.2f** |\n",
          p.name.c_str(), c.ordering.c_str(), median(ct), its.c_str(), true_residual(p, b, x),
          median(tt), t.iterations, true_residual(p, b, xt), median(tt) / median(ct));
      if (o.verbose) {
        char split[200];  // the last rep's whole call as cnc's statistics divide it
        std::snprintf(split, sizeof split,
                      "; call %.2f ms = conversion %.2f + upload %.2f + solve %.2f + other %.2f; "
                      "textbook upload+diagonal %.2f, loop %.2f",
                      1e3 * c.total, 1e3 * c.conversion, 1e3 * c.upload, 1e3 * c.solve,
                      1e3 * (c.total - c.conversion - c.upload - c.solve), 1e3 * t.upload,
                      1e3 * t.loop);
        choices.push_back("- " + p.name + " (to the tolerance): " + c.choice + split);
      }
    }
    solved.push_back(line);
  }
  std::printf(
      "\n## Sparsity patterns: time to ||r|| <= %.0e ||b|| (the whole call: cncSolveCSR from host "
      "arrays, a first solve each time; the textbook's upload, diagonal, loop and x back; medians "
      "of %d)\n\n"
      "| problem | cnc ordering | cnc s | cnc its | cnc true res | textbook s | textbook its | "
      "textbook true res | textbook / cnc |\n|---|---|---|---|---|---|---|---|---|\n",
      o.tol, o.reps);
  for (const std::string& l : solved) std::printf("%s", l.c_str());
  if (o.verbose) {
    std::printf("\n## cnc's choices (CNC_CHOICE_REASON)\n\n");
    for (const std::string& l : choices) std::printf("%s\n", l.c_str());
  }
}

}  // namespace api_bench
