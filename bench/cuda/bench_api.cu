// End to end through the public API, as a user runs it: host arrays in, x back in host memory.
//
// For each problem (family x size), in one run:
//   cnc       cncSolveCSR(n, row_ptr, col, values, 0, 1, b, x) on the automatic backend: the
//             call's wall time, split by cnc's own statistics (host CSR intake + conversion,
//             upload, solve) plus what is left (x copies, bookkeeping).
//   textbook  the user's alternative (textbook_pcg.cuh): cudaMalloc, upload of the same host CSR
//             (32-bit offsets, its natural input), Jacobi diagonal on the device, cuSPARSE +
//             cuBLAS PCG to the same tolerance with a host check per iteration, x back.
// Both to ||r|| <= tol ||b|| from x = 0; the true residual of each answer is computed here on
// the host. Medians of `reps` runs after a warm-up run (CUDA context and cnc backend made); every
// timed cnc call is a first solve of its arrays (the context's kept matrix dropped before it).
// Then both solve again for a new b with the same matrix: cnc through a second cncSolveCSR with
// the same arrays (it finds the matrix it keeps), the textbook path with its matrix still on the
// device. And again with new values of the same pattern (A scaled and its diagonal raised, in
// other arrays): cnc through a third cncSolveCSR (same pattern: only the values go up), the
// textbook path uploading the values into its matrix and recomputing its diagonal.
// A second table runs a fixed number of iterations (threshold 0) and prints per-iteration times.
// A third times assembly: cncAddIJCoefficient per entry, cncAddIJCoefficients in bulk,
// pattern-first (row lengths, then cncSetIJCoefficientAtRowOffset per entry), each with its
// cncEnd(CNC_MATRIX), and Eigen's setFromTriplets (eigen_peer.cpp), from the same COO.
//
// A fourth (--small, alone) times small systems on the CPU and on CUDA, for the automatic
// backend's size threshold (src/backends/registry.hpp).
//
// --patterns (alone; api_patterns.cu) covers the sparsity-pattern families (api_problems.cpp):
// power-law graph Laplacians (Chung-Lu, 100 K and 2 M rows, longest rows ~21 K and ~356 K), a
// 7-point stencil 192^3 and the mesh 128^3 with their unknowns numbered at random, the 27-point
// stencil 160^3, the mesh 160^3, and every real symmetric Matrix Market file with a positive
// diagonal in --mtx-dir (default ../shared/data/matrices, from the current directory; skipped
// with a message when absent). Per problem, after a warm-up, medians of R: (1) n, nnz, longest
// row, cnc's backend/format and ordering, ms per iteration of cnc (CNC_SOLVE_TIME over 200
// iterations, threshold 1e-300) and of the textbook loop, their ratio, and cnc's share of the
// bandwidth floor (floor_bytes in api_patterns.cu: CSR bytes + 9 vectors of n doubles, over the
// device-to-device copy bandwidth measured in the same run and printed once); (2) the whole
// first cncSolveCSR to --tol (kept matrix dropped) and its iterations against the textbook's
// whole solve and iterations, with the true residuals and the ratio. --verbose adds cnc's
// CNC_CHOICE_REASON per problem and why Matrix Market files were skipped.
//
// --reorder none|rcm|auto sets CNC_REORDER in the main context (every solve but --small's
// contexts forced onto one backend) where cnc has it; the ordering column
// reads CNC_ORDERING_NAME, "-" with a cnc that has neither.
//
//   bench_api [--quick | --small | --patterns] [--reps R] [--tol T] [--max-n N] [--only NAME]
//             [--mtx-dir DIR] [--reorder none|rcm|auto] [--format auto|csr|sell|bcrs2|bcrs4]
//             [--verbose]
// (--only: the problems whose name contains NAME, e.g. "7-pt 256" or "power-law")
//
// Sources: bench_api.cu (main, the default tables), api_runs.cu (the timed cnc and textbook
// runs), api_patterns.cu (--patterns), api_problems.cpp (the problems, plain C++).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api_problems.hpp"
#include "api_runs.cuh"
#include "cnc.h"
#include "textbook_pcg.cuh"
#if CNC_BENCH_EIGEN
#include "eigen_peer.hpp"
#endif

namespace {

using namespace api_bench;
using textbook::now;

void solve_table(const std::vector<problem>& probs, int reps, double tol) {
  std::printf("\n## To ||r|| <= %.0e ||b||, host arrays -> x in host memory (medians of %d)\n\n",
              tol, reps);
  std::printf(
      "| problem | n | nnz | cnc backend/format | cnc total s | intake+conv | upload | solve | its "
      "| true res | textbook total s | upload+diag | loop | its | true res | cnc / textbook |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::string> again, revalued;  // rows of the re-solve tables
  for (const problem& p : probs) {
    const std::vector<double> b = rhs(p.n);
    std::vector<double> b2 = b;
    for (std::size_t i = 0; i < b2.size(); ++i)
      b2[i] = b[i] * (1.0 + 0.25 * std::cos(0.01 * double(i)));
    std::vector<double> x(static_cast<std::size_t>(p.n)), xt(std::size_t(p.n));
    std::vector<int> rp32(p.rp.begin(), p.rp.end());
    const int max_it = 20000;
    run_cnc(p, b, x, tol, max_it);  // warm-up
    run_textbook(p, rp32, b, xt, tol, max_it);
    // The same pattern with other values (SPD still): 1.3 A + 0.1 diag(A), in other arrays.
    problem p3 = p;
    for (std::int32_t i = 0; i < p.n; ++i)
      for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k)
        p3.val[k] = p.val[k] * (std::int32_t(p.col[k]) == i ? 1.4 : 1.3);
    std::vector<cnc_times> c, c2, c3;
    std::vector<tb_times> t;
    std::vector<double> res2, res3;
    for (int r = 0; r < reps; ++r) {
      c.push_back(run_cnc(p, b, x, tol, max_it));
      std::vector<double> x2(x.size());
      c2.push_back(run_cnc(p, b2, x2, tol, max_it, false));  // same arrays, new b
      res2.push_back(true_residual(p, b2, x2));
      c3.push_back(run_cnc(p3, b, x2, tol, max_it, false));  // same pattern, new values
      res3.push_back(true_residual(p3, b, x2));
      t.push_back(run_textbook(p, rp32, b, xt, tol, max_it, &b2, &p3.val));
    }
    auto med = [](auto& v, auto f) {
      std::vector<double> a;
      for (auto& e : v) a.push_back(f(e));
      return median(a);
    };
    const double ct = med(c, [](const cnc_times& e) { return e.total; });
    const double tt = med(t, [](const tb_times& e) { return e.total; });
    std::printf(
        "| %s | %d | %lld | %s/%s | %.4f | %.4f | %.4f | %.4f | %d | %.1e | %.4f | %.4f | %.4f | "
        "%d | %.1e | **%.2f** |\n",
        p.name.c_str(), p.n, (long long)p.nnz(), c[0].backend.c_str(), c[0].format.c_str(), ct,
        med(c, [](const cnc_times& e) { return e.conversion; }),
        med(c, [](const cnc_times& e) { return e.upload; }),
        med(c, [](const cnc_times& e) { return e.solve; }), c[0].iterations, true_residual(p, b, x),
        tt, med(t, [](const tb_times& e) { return e.upload; }),
        med(t, [](const tb_times& e) { return e.loop; }), t[0].iterations, true_residual(p, b, xt),
        ct / tt);
    std::fflush(stdout);
    // A row of a re-solve table: cnc's calls `cs` against the textbook's times picked by `tb`.
    auto again_row = [&](const std::vector<cnc_times>& cs, const std::vector<double>& res,
                         double (*tb)(const tb_times&)) {
      const double cst = med(cs, [](const cnc_times&e) { return e.total; }), tbt = med(t, tb);
      char line[512];
      std::snprintf(line, sizeof line,
                    "| %s | %d | %.4f | %.4f | %.4f | %.4f | %d | %.1e | %.4f | **%.2f** |\n",
                    p.name.c_str(), p.n, cst,
                    med(cs, [](const cnc_times& e) { return e.conversion; }),
                    med(cs, [](const cnc_times& e) { return e.upload; }),
                    med(cs, [](const cnc_times& e) { return e.solve; }), cs[0].iterations,
                    median(res), tbt, cst / tbt);
      return std::string(line);
    };
    again.push_back(again_row(c2, res2, [](const tb_times& e) { return e.resolve; }));
    revalued.push_back(again_row(c3, res3, [](const tb_times& e) { return e.revalue; }));
  }
  std::printf(
      "\n## Again with a new b, same arrays (cnc: a second cncSolveCSR, which finds the matrix it "
      "keeps; textbook: its matrix kept on the device, b up, loop, x down)\n\n"
      "| problem | n | cnc s | fingerprint check | upload | solve | its | true res | textbook s | "
      "cnc / textbook |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& l : again) std::printf("%s", l.c_str());
  std::printf(
      "\n## Again with new values of the same pattern, other arrays (cnc: a third cncSolveCSR, "
      "which finds the pattern it keeps and moves only the values; textbook: values up into its "
      "matrix, diagonal again, b up, loop, x down)\n\n"
      "| problem | n | cnc s | pattern check + refill | values up | solve | its | true res | "
      "textbook s | cnc / textbook |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& l : revalued) std::printf("%s", l.c_str());
}

// Small systems on each backend, for the automatic backend's size threshold: the same first
// cncSolveCSR in a context forced onto the CPU and one forced onto CUDA (each warmed up), the
// automatic choice, and the textbook path.
void backend_table(const std::vector<problem>& probs, int reps, double tol) {
  std::printf("\n## Small systems: CPU or GPU (first solve of each, to %.0e, medians of %d)\n\n",
              tol, reps);
  std::printf(
      "| problem | n | nnz | cnc cpu s | cnc cuda s | auto picks | textbook s | cpu / textbook | "
      "cuda / textbook |\n|---|---|---|---|---|---|---|---|---|\n");
  CNCcontext home = cncGetCurrent();
  CNCcontext ctx[2] = {cncNewContext(), cncNewContext()};
  const CNCint kinds[2] = {CNC_BACKEND_CPU, CNC_BACKEND_CUDA};
  for (int c = 0; c < 2; ++c) {
    cncMakeCurrent(ctx[c]);
    check(cncSolverParameteri(CNC_BACKEND, kinds[c]), "backend");
  }
  for (const problem& p : probs) {
    const std::vector<double> b = rhs(p.n);
    std::vector<double> x(static_cast<std::size_t>(p.n));
    std::vector<int> rp32(p.rp.begin(), p.rp.end());
    std::vector<double> med[3];
    for (int c = 0; c < 2; ++c) {
      cncMakeCurrent(ctx[c]);
      run_cnc(p, b, x, tol, 20000);  // warm-up
      for (int r = 0; r < reps; ++r) med[c].push_back(run_cnc(p, b, x, tol, 20000).total);
    }
    run_textbook(p, rp32, b, x, tol, 20000);
    for (int r = 0; r < reps; ++r) med[2].push_back(run_textbook(p, rp32, b, x, tol, 20000).total);
    cncMakeCurrent(home);
    const cnc_times a = run_cnc(p, b, x, tol, 20000);
    const double cpu = median(med[0]), gpu = median(med[1]), tb = median(med[2]);
    std::printf("| %s | %d | %lld | %.4f | %.4f | %s | %.4f | **%.2f** | **%.2f** |\n",
                p.name.c_str(), p.n, (long long)p.nnz(), cpu, gpu, a.backend.c_str(), tb, cpu / tb,
                gpu / tb);
    std::fflush(stdout);
  }
  cncMakeCurrent(home);
  for (CNCcontext c : ctx) cncDeleteContext(c);
}

void iteration_table(const std::vector<problem>& probs, int reps, int iters) {
  std::printf("\n## Fixed %d iterations through cncSolveCSR: ms per iteration (medians of %d)\n\n",
              iters, reps);
  std::printf(
      "| problem | cnc format | cnc ms/it (solve stat) | cnc GB/s | textbook ms/it (loop) | "
      "textbook / cnc |\n|---|---|---|---|---|---|\n");
  for (const problem& p : probs) {
    const std::vector<double> b = rhs(p.n);
    std::vector<double> x(static_cast<std::size_t>(p.n));
    std::vector<int> rp32(p.rp.begin(), p.rp.end());
    // Threshold 1e-300: never converges, so every run does exactly `iters` iterations.
    run_cnc(p, b, x, 1e-300, iters);
    std::vector<double> c, t, g;
    for (int r = 0; r < reps; ++r) {
      cnc_times ct = run_cnc(p, b, x, 1e-300, iters);
      double gb = 0;
      cncGetDoublev(CNC_GBYTES_PER_SECOND, &gb);
      c.push_back(ct.solve / ct.iterations * 1e3);
      g.push_back(gb);
      tb_times tt = run_textbook(p, rp32, b, x, 0.0, iters);
      t.push_back(tt.loop / tt.iterations * 1e3);
    }
    const char* f = nullptr;
    cncGetString(CNC_FORMAT_NAME, &f);
    std::printf("| %s | %s | %.4f | %.0f | %.4f | **%.2f** |\n", p.name.c_str(), f ? f : "?",
                median(c), median(g), median(t), median(t) / median(c));
    std::fflush(stdout);
  }
}

void assembly_table(const std::vector<problem>& probs) {
  std::printf("\n## Assembly from COO (rows in order): million coefficients per second\n\n");
  std::printf(
      "Per call and bulk fill the hash table (CNC_NNZ_HINT = nnz). Pattern-first states the row "
      "lengths (cncSetRowLengths, timed) and sets each entry at its row offset "
      "(cncSetIJCoefficientAtRowOffset). Eigen: SparseMatrix<double, RowMajor>::setFromTriplets "
      "(one thread) from a triplet vector built before its clock.\n\n");
  std::printf(
      "| problem | nnz | per call (cncAddIJCoefficient) M/s | bulk (cncAddIJCoefficients) M/s | "
      "pattern-first M/s | Eigen setFromTriplets M/s | cncEnd(MATRIX) s bulk / pattern | "
      "total bulk+End s | total pattern+End s | Eigen s |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const problem& p : probs) {
    std::vector<std::uint32_t> ri(static_cast<std::size_t>(p.nnz()));
    std::vector<CNCuint> lengths(static_cast<std::size_t>(p.n));
    for (std::int32_t i = 0; i < p.n; ++i) {
      for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k) ri[k] = std::uint32_t(i);
      lengths[i] = CNCuint(p.rp[i + 1] - p.rp[i]);
    }
    double rate[3] = {0, 0, 0}, fill_s[3] = {0, 0, 0}, end_s[3] = {0, 0, 0};
    for (int mode = 0; mode < 3; ++mode) {  // per call, bulk, pattern-first
      CNCcontext c = cncNewContext();
      cncMakeCurrent(c);
      check(cncSolverParameteri(CNC_NB_VARIABLES, p.n), "n");
      if (mode < 2) check(cncSolverParameteri64(CNC_NNZ_HINT, p.nnz()), "hint");
      check(cncBegin(CNC_SYSTEM), "begin");
      double pattern_s = 0;
      if (mode == 2) {
        const double tp = now();
        check(cncBegin(CNC_MATRIX_PATTERN), "begin pattern");
        check(cncSetRowLengths(lengths.data()), "row lengths");
        check(cncEnd(CNC_MATRIX_PATTERN), "end pattern");
        pattern_s = now() - tp;
      }
      check(cncBegin(CNC_MATRIX), "begin");
      const double t0 = now();
      if (mode == 0) {
        for (std::int64_t k = 0; k < p.nnz(); ++k) cncAddIJCoefficient(ri[k], p.col[k], p.val[k]);
      } else if (mode == 1) {
        check(cncAddIJCoefficients(p.nnz(), ri.data(), p.col.data(), p.val.data()), "bulk");
      } else {
        for (std::int32_t i = 0; i < p.n; ++i)
          for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k)
            cncSetIJCoefficientAtRowOffset(CNCuint(i), p.col[k], p.val[k], CNCuint(k - p.rp[i]));
      }
      const double t1 = now();
      check(cncGetError(), "per-entry calls");
      check(cncEnd(CNC_MATRIX), "end");
      const double t2 = now();
      fill_s[mode] = t1 - t0 + pattern_s;
      rate[mode] = double(p.nnz()) / fill_s[mode] * 1e-6;
      end_s[mode] = t2 - t1;
      cncDeleteContext(c);
    }
    char eigen_rate[32] = "-", eigen_time[32] = "-";
#if CNC_BENCH_EIGEN
    std::int64_t eigen_nnz = 0;
    const double e = eigen_peer::set_from_triplets_seconds(p.n, p.nnz(), ri.data(), p.col.data(),
                                                           p.val.data(), &eigen_nnz);
    if (eigen_nnz != p.nnz()) {
      std::fprintf(stderr, "Eigen kept %lld of %lld entries\n", (long long)eigen_nnz,
                   (long long)p.nnz());
      std::exit(1);
    }
    std::snprintf(eigen_rate, sizeof eigen_rate, "%.1f", double(p.nnz()) / e * 1e-6);
    std::snprintf(eigen_time, sizeof eigen_time, "%.3f", e);
#endif
    std::printf("| %s | %lld | %.1f | %.1f | %.1f | %s | %.3f / %.3f | %.3f | %.3f | %s |\n",
                p.name.c_str(), (long long)p.nnz(), rate[0], rate[1], rate[2], eigen_rate, end_s[1],
                end_s[2], fill_s[1] + end_s[1], fill_s[2] + end_s[2], eigen_time);
    std::fflush(stdout);
  }
}

#ifdef CNC_REORDER  // cnc with reordering
// CNC_REORDER's value for --reorder's word; false for an unknown word.
bool reorder_value(const char* word, int* value) {
  const struct {
    const char* word;
    int value;
  } names[] = {{"none", CNC_REORDER_NONE}, {"rcm", CNC_REORDER_RCM}, {"auto", CNC_REORDER_AUTO}};
  for (const auto& e : names)
    if (!std::strcmp(word, e.word)) return *value = e.value, true;
  return false;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, patterns = false;
  int reps = 3;
  double tol = 1e-8;
  long long max_n = 1LL << 40;
  bool small = false, verbose = false;  // verbose: cnc's log on stderr
  std::string only;                     // only the problems whose name contains it
  std::string mtx_dir = patterns_options().mtx_dir;
  const char* reorder = nullptr;  // --reorder's word
  const char* format = nullptr;   // --format's word: CNC_MATRIX_FORMAT of the main context
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[a], "--reps") && a + 1 < argc)
      reps = std::max(1, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--tol") && a + 1 < argc)
      tol = std::atof(argv[++a]);
    else if (!std::strcmp(argv[a], "--max-n") && a + 1 < argc)
      max_n = std::atoll(argv[++a]);
    else if (!std::strcmp(argv[a], "--small"))
      small = true;
    else if (!std::strcmp(argv[a], "--patterns"))
      patterns = true;
    else if (!std::strcmp(argv[a], "--mtx-dir") && a + 1 < argc)
      mtx_dir = argv[++a];
    else if (!std::strcmp(argv[a], "--reorder") && a + 1 < argc)
      reorder = argv[++a];
    else if (!std::strcmp(argv[a], "--format") && a + 1 < argc)
      format = argv[++a];
    else if (!std::strcmp(argv[a], "--verbose"))
      verbose = true;
    else if (!std::strcmp(argv[a], "--only") && a + 1 < argc)
      only = argv[++a];
  }
  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  if (verbose) cncEnable(CNC_VERBOSE);
  std::printf("# bench_api: cnc %s, end to end through cnc.h vs a textbook cuSPARSE+cuBLAS PCG\n",
              cncVersionString());
  if (reorder) {
#ifdef CNC_REORDER
    int value = 0;
    if (!reorder_value(reorder, &value)) {
      std::fprintf(stderr, "--reorder: none, rcm or auto, not \"%s\"\n", reorder);
      return 2;
    }
    check(cncSolverParameteri(CNC_REORDER, value), "CNC_REORDER");
    std::printf("CNC_REORDER: %s\n", reorder);
#else
    std::printf("--reorder %s ignored: this cnc has no CNC_REORDER\n", reorder);
#endif
  }
  if (format) {
    static const struct {
      const char* word;
      int value;
    } formats[] = {{"auto", CNC_FORMAT_AUTO},
                   {"csr", CNC_FORMAT_CSR},
                   {"sell", CNC_FORMAT_SELL},
                   {"bcrs2", CNC_FORMAT_BCRS2},
                   {"bcrs4", CNC_FORMAT_BCRS4}};
    int value = -1;
    for (const auto& f : formats)
      if (!std::strcmp(format, f.word)) value = f.value;
    if (value < 0) {
      std::fprintf(stderr, "--format: auto, csr, sell, bcrs2 or bcrs4, not \"%s\"\n", format);
      return 2;
    }
    check(cncSolverParameteri(CNC_MATRIX_FORMAT, value), "CNC_MATRIX_FORMAT");
    std::printf("CNC_MATRIX_FORMAT: %s\n", format);
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) std::printf("device: %s\n", prop.name);
  std::vector<problem> probs;
  auto add = [&](problem p) {
    if (p.n <= max_n && p.name.find(only) != std::string::npos) probs.push_back(std::move(p));
  };
  if (patterns) {
    patterns_options o;
    o.reps = reps;
    o.tol = tol;
    o.only = only;
    o.mtx_dir = mtx_dir;
    o.verbose = verbose;
    patterns_tables(o);
    cncDeleteContext(ctx);
    return 0;
  }
  if (small) {
    for (int m : {10, 14, 18, 22, 26, 30, 36, 48}) add(stencil(m, 7, 1));
    for (int m : {16, 22, 30}) add(mesh(m));
    for (int m : {12, 16, 20}) add(stencil(m, 27, 1));
    backend_table(probs, reps, tol);
    cncDeleteContext(ctx);
    return 0;
  }
  if (quick) {
    add(stencil(22, 7, 1));
    add(stencil(48, 7, 1));
    add(mesh(30));
  } else {
    add(stencil(22, 7, 1));   // 10.6 K
    add(stencil(48, 7, 1));   // 110 K
    add(stencil(128, 7, 1));  // 2.1 M
    add(stencil(200, 7, 1));  // 8 M
    add(stencil(256, 7, 1));  // 16.8 M
    add(stencil(64, 27, 1));
    add(stencil(160, 27, 1));
    add(stencil(64, 7, 4));  // 1 M unknowns, 4x4 blocks
    add(mesh(40));
    add(mesh(128));  // 2.1 M
  }
  solve_table(probs, reps, tol);
  std::vector<problem> big;
  for (const problem& p : probs)
    if (p.n >= 100000) big.push_back(p);
  iteration_table(big, reps, 200);
  cncMakeCurrent(nullptr);
  assembly_table(big);
  cncDeleteContext(ctx);
  return 0;
}
