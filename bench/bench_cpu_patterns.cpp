// bench_cpu_patterns: the CPU backend's CG iteration on a 7-point stencil and on power-law
// graphs (hubs of 10^4-10^5 entries at low row indices), through cnc.h, as a fraction of the
// bandwidth floor: the same floor as bench_api --patterns (api_patterns.cu, floor_bytes: CSR
// bytes + 9 vectors of n doubles) over this machine's STREAM-like triad bandwidth. Issue 11's
// aim: power-law graphs within 1.3x of the stencil's fraction.
//
// Every solve runs a fixed --iters iterations (threshold 1e-300) in the caller's numbering
// (CNC_REORDER_NONE, unless --reorder auto), Jacobi CG in double; medians of --reps solves after
// one warm-up. "heaviest 8192-row chunk" is the share of all entries in the fixed row chunk that
// holds most of them: the work one thread did alone before chunks were cut by entries. "T-thread
// span" models the sweep's balance on T threads from the matrix alone: work items claimed in
// order by whichever thread is free first, an item costing its entries plus its rows; the
// busiest thread's work over the mean (1.00: balanced), for the fixed 8192-row chunks (rows) and
// for the backend's chunks by entries with long rows in pieces (entries; the rule of
// src/backends/cpu/cpu_partition.hpp, restated here since the bench sees only cnc.h).
//
//   bench_cpu_patterns [--threads N] [--iters 100] [--reps 3] [--stencil 128]
//                      [--power-law 2000000] [--reorder none|auto] [--only NAME]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "cnc.h"
#include "cuda/api_problems.hpp"
#include "triad.hpp"

namespace {

using api_bench::problem;

void check(CNCstatus s, const char* what) {
  if (s != CNC_OK) {
    std::fprintf(stderr, "%s: %s\n%s\n", what, cncStatusString(s), cncGetErrorMessage());
    std::exit(1);
  }
}

double floor_bytes(const problem& p) { return api_bench::pcg_floor_bytes(p.n, p.nnz(), 8); }

// Share of all entries in the fixed 8192-row chunk that holds the most.
double heaviest_chunk_share(const problem& p) {
  std::int64_t most = 0;
  for (std::int32_t r = 0; r < p.n; r += 8192)
    most = std::max(most, p.rp[std::size_t(std::min(p.n, r + 8192))] - p.rp[std::size_t(r)]);
  return double(most) / double(std::max<std::int64_t>(1, p.nnz()));
}

// The busiest of `threads` threads over the mean, items (costs) claimed in order.
double span(const std::vector<double>& items, int threads) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int t = 0; t < threads; ++t) free_at.push(0.0);
  double total = 0, end = 0;
  for (double c : items) {
    const double t = free_at.top() + c;
    free_at.pop();
    free_at.push(t);
    total += c, end = std::max(end, t);
  }
  return end / (total / threads);
}

// Work items of the fixed row chunks (by_entries false) or of the chunks by entries: at most
// 8192 rows and 65536 entries, rows over 65536 cut into pieces of 32768, pieces first.
std::vector<double> work_items(const problem& p, bool by_entries) {
  const std::int64_t budget = 65536, piece = 32768;
  std::vector<double> chunks, pieces;
  std::int32_t open = 0;
  std::int64_t held = 0;
  auto close = [&](std::int32_t r) {
    if (r > open)
      chunks.push_back(double(p.rp[std::size_t(r)] - p.rp[std::size_t(open)] + r - open));
    open = r, held = 0;
  };
  for (std::int32_t r = 0; r < p.n; ++r) {
    const std::int64_t len = p.rp[std::size_t(r) + 1] - p.rp[std::size_t(r)];
    if (by_entries && len > budget) {
      close(r);
      for (std::int64_t e = 0; e < len; e += piece)
        pieces.push_back(double(std::min(piece, len - e)));
      open = r + 1;
      continue;
    }
    if (r - open >= 8192 || (by_entries && r > open && held + len > budget)) close(r);
    held += len;
  }
  close(p.n);
  pieces.insert(pieces.end(), chunks.begin(), chunks.end());
  return pieces;
}

struct run_result {
  double ms_per_it = 0;
  long long long_rows = 0;
  std::string format;
};

run_result solve(const problem& p, int iters) {
  const std::vector<double> b = api_bench::rhs(p.n);
  std::vector<double> x(std::size_t(p.n), 0.0);
  check(
      cncSolveCSR(CNCuint(p.n), p.rp.data(), p.col.data(), p.val.data(), 0, 1, b.data(), x.data()),
      "cncSolveCSR");
  run_result r;
  double t = 0;
  CNCint its = 0;
  CNCint64 longs = 0;
  const char* f = nullptr;
  cncGetDoublev(CNC_SOLVE_TIME, &t);
  cncGetIntegerv(CNC_USED_ITERATIONS, &its);
  cncGetInteger64v(CNC_LONG_ROWS, &longs);
  cncGetString(CNC_FORMAT_NAME, &f);
  if (its != iters) std::fprintf(stderr, "%s: %d iterations, not %d\n", p.name.c_str(), its, iters);
  r.ms_per_it = 1e3 * t / double(std::max<CNCint>(1, its));
  r.long_rows = longs;
  r.format = f ? f : "?";
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = int(std::thread::hardware_concurrency()), iters = 100, reps = 3, m = 128;
  int pl = 2000000, reorder = CNC_REORDER_NONE;
  std::string only;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string k = argv[a];
    const char* v = argv[a + 1];
    if (k == "--threads") threads = std::max(1, std::atoi(v));
    if (k == "--iters") iters = std::max(1, std::atoi(v));
    if (k == "--reps") reps = std::max(1, std::atoi(v));
    if (k == "--stencil") m = std::atoi(v);
    if (k == "--power-law") pl = std::atoi(v);
    if (k == "--reorder") reorder = std::strcmp(v, "auto") ? CNC_REORDER_NONE : CNC_REORDER_AUTO;
    if (k == "--only") only = v;
  }
  const double bw = triad_gbs(threads, reps);
  std::printf("%u hardware threads, cnc %s on %d threads; triad %.2f GB/s\n",
              std::thread::hardware_concurrency(), cncVersionString(), threads, bw);
  std::printf(
      "Jacobi CG, double, %d iterations, medians of %d; floor = (nnz x 12 + (n + 1) x 8 + 9 x n x "
      "8) bytes / triad\n\n",
      iters, reps);
  std::printf(
      "| problem | n | nnz | longest row | heaviest 8192-row chunk | %d-thread span: rows / "
      "entries | 16-thread span: rows / entries | format | long rows | ms/it | %% of floor |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n",
      threads);
  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  check(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), "backend");
  check(cncSolverParameteri(CNC_NB_THREADS, threads), "threads");
  check(cncSolverParameteri(CNC_SOLVER, CNC_CG), "solver");
  check(cncSolverParameteri(CNC_REORDER, reorder), "reorder");
  check(cncSolverParameterd(CNC_THRESHOLD, 1e-300), "threshold");  // never converges
  check(cncSolverParameteri(CNC_MAX_ITERATIONS, iters), "max iterations");
  const std::vector<std::pair<std::string, std::function<problem()>>> sources = {
      {"7-pt", [&] { return api_bench::stencil(m, 7, 1); }},
      {"power-law 100K", [] { return api_bench::power_law(100000, 2.1, 12, 1, 7, "100K"); }},
      {"power-law big",
       [&] { return api_bench::power_law(pl, 2.05, 13, 1, 7, std::to_string(pl)); }},
  };
  for (const auto& [name, make] : sources) {
    if (name.find(only) == std::string::npos) continue;
    const problem p = make();
    solve(p, iters);  // warm-up: prepares the matrix, kept for the next calls
    std::vector<double> ms;
    run_result r;
    for (int k = 0; k < reps; ++k) ms.push_back((r = solve(p, iters)).ms_per_it);
    const double t = api_bench::median(ms);
    const std::vector<double> rows = work_items(p, false), entries = work_items(p, true);
    std::printf(
        "| %s | %d | %lld | %lld | %.1f%% | %.2f / %.2f | %.2f / %.2f | %s | %lld | %.3f | %.0f%% "
        "|\n",
        p.name.c_str(), p.n, (long long)p.nnz(), (long long)p.longest_row(),
        100 * heaviest_chunk_share(p), span(rows, threads), span(entries, threads), span(rows, 16),
        span(entries, 16), r.format.c_str(), r.long_rows, t,
        100 * floor_bytes(p) / (bw * 1e9) / (t * 1e-3));
    std::fflush(stdout);
  }
  cncDeleteContext(ctx);
  return 0;
}
