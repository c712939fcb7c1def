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
//   bench_api [--quick | --small] [--reps R] [--tol T] [--max-n N] [--only NAME] [--verbose]
// (--only: the problems whose name contains NAME, e.g. "7-pt 256")
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

#include "cnc.h"
#include "textbook_pcg.cuh"
#if CNC_BENCH_EIGEN
#include "eigen_peer.hpp"
#endif

namespace {

using textbook::now;

struct problem {
  std::string name;
  std::int32_t n = 0;
  std::vector<std::int64_t> rp;
  std::vector<std::uint32_t> col;
  std::vector<double> val;
  std::int64_t nnz() const { return std::int64_t(col.size()); }
};

// Stencil Laplacian on m^3 (7 or 27 points), Dirichlet, SPD. `dof` > 1: each grid point carries
// dof coupled unknowns (dense dof x dof blocks: 4 for elasticity-like systems).
problem stencil(int m, int points, int dof) {
  problem p;
  p.name = std::to_string(points) + "-pt " + std::to_string(m) + "^3" +
           (dof > 1 ? " x" + std::to_string(dof) : "");
  const std::int64_t cells = std::int64_t(m) * m * m;
  p.n = std::int32_t(cells * dof);
  p.rp.reserve(std::size_t(p.n) + 1);
  p.rp.push_back(0);
  const int r = 1;
  for (std::int64_t c = 0; c < cells; ++c) {
    const int x = int(c % m), y = int((c / m) % m), z = int(c / (std::int64_t(m) * m));
    for (int a = 0; a < dof; ++a) {
      for (int dz = -r; dz <= r; ++dz)
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            const int nz = (dx != 0) + (dy != 0) + (dz != 0);
            if (points == 7 && nz > 1) continue;
            const int X = x + dx, Y = y + dy, Z = z + dz;
            if (X < 0 || Y < 0 || Z < 0 || X >= m || Y >= m || Z >= m) continue;
            const std::int64_t nc = X + std::int64_t(m) * (Y + std::int64_t(m) * Z);
            for (int b = 0; b < dof; ++b) {
              double v;
              if (nz == 0)
                v = a == b ? (points == 7 ? 6.0 : 26.0) * 1.01 + (dof > 1 ? 1.0 * dof : 0.0)
                           : 0.5 / (1 + a + b);
              else
                v = a == b ? -1.0 : -0.05;
              p.col.push_back(std::uint32_t(nc * dof + b));
              p.val.push_back(v);
            }
          }
      p.rp.push_back(std::int64_t(p.col.size()));
    }
  }
  return p;
}

// An irregular mesh: points on a jittered m x m x m lattice, each joined to every point within
// a radius (10-40 neighbours, varying), numbered along the lattice. Graph Laplacian + 1% shift.
problem mesh(int m) {
  problem p;
  p.name = "mesh " + std::to_string(m) + "^3";
  const std::int64_t cells = std::int64_t(m) * m * m;
  p.n = std::int32_t(cells);
  std::vector<float> pos(std::size_t(cells) * 3);
  std::uint64_t s = 12345;
  auto rnd = [&s] {
    return s = s * 6364136223846793005ull + 1442695040888963407ull, double(s >> 11) * 0x1p-53;
  };
  for (std::int64_t c = 0; c < cells; ++c)
    for (int d = 0; d < 3; ++d) {
      const std::int64_t k = d == 0 ? c % m : d == 1 ? (c / m) % m : c / (std::int64_t(m) * m);
      pos[std::size_t(c) * 3 + d] = float(double(k) + 0.45 * (rnd() - 0.5));
    }
  p.rp.push_back(0);
  std::vector<std::pair<std::uint32_t, double>> row;
  for (std::int64_t c = 0; c < cells; ++c) {
    const int x = int(c % m), y = int((c / m) % m), z = int(c / (std::int64_t(m) * m));
    const double rad2 = 1.3 + 0.9 * double((c * 2654435761u) % 100) / 100.0;  // varying degree
    row.clear();
    double deg = 0;
    for (int dz = -2; dz <= 2; ++dz)
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) {
          const int X = x + dx, Y = y + dy, Z = z + dz;
          if ((dx | dy | dz) == 0 || X < 0 || Y < 0 || Z < 0 || X >= m || Y >= m || Z >= m)
            continue;
          const std::int64_t o = X + std::int64_t(m) * (Y + std::int64_t(m) * Z);
          double d2 = 0;
          for (int d = 0; d < 3; ++d) {
            const double t = pos[std::size_t(c) * 3 + d] - pos[std::size_t(o) * 3 + d];
            d2 += t * t;
          }
          const double rad_o = 1.3 + 0.9 * double((o * 2654435761u) % 100) / 100.0;
          if (d2 > std::min(rad2, rad_o)) continue;  // symmetric: both must reach
          row.push_back({std::uint32_t(o), -1.0});
          deg += 1;
        }
    row.push_back({std::uint32_t(c), deg * 1.01 + 0.01});
    std::sort(row.begin(), row.end());
    for (auto& e : row) p.col.push_back(e.first), p.val.push_back(e.second);
    p.rp.push_back(std::int64_t(p.col.size()));
  }
  return p;
}

std::vector<double> rhs(std::int32_t n) {
  std::vector<double> b(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) b[i] = 1.0 + 0.5 * std::sin(0.001 * i);
  return b;
}

double true_residual(const problem& p, const std::vector<double>& b, const std::vector<double>& x) {
  double rr = 0, bb = 0;
  for (std::int32_t i = 0; i < p.n; ++i) {
    double ax = 0;
    for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k) ax += p.val[k] * x[p.col[k]];
    rr += (b[i] - ax) * (b[i] - ax);
    bb += b[i] * b[i];
  }
  return std::sqrt(rr / bb);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void check(CNCstatus s, const char* what) {
  if (s != CNC_OK) {
    std::fprintf(stderr, "%s failed: %s\n", what, cncGetErrorMessage());
    std::exit(1);
  }
}

struct cnc_times {
  double total = 0, conversion = 0, upload = 0, solve = 0, true_res = 0;
  int iterations = 0;
  std::string format, backend;
};

// One cncSolveCSR, timed from the call to its return; fills the phases from the statistics.
// `fresh`: the context first drops the matrix it keeps from the previous call (CNC_KEEP_MATRIX
// off and on, untimed), so the call is a first solve of these arrays; otherwise a call with the
// same arrays reuses it.
cnc_times run_cnc(const problem& p, const std::vector<double>& b, std::vector<double>& x,
                  double tol, int max_it, bool fresh = true) {
  check(cncSolverParameterd(CNC_THRESHOLD, tol), "threshold");
  check(cncSolverParameteri(CNC_MAX_ITERATIONS, max_it), "max iterations");
  if (fresh) {
    check(cncDisable(CNC_KEEP_MATRIX), "keep matrix off");
    check(cncEnable(CNC_KEEP_MATRIX), "keep matrix on");
  }
  std::fill(x.begin(), x.end(), 0.0);
  cnc_times t;
  const double t0 = now();
  check(
      cncSolveCSR(CNCuint(p.n), p.rp.data(), p.col.data(), p.val.data(), 0, 1, b.data(), x.data()),
      "cncSolveCSR");
  t.total = now() - t0;
  CNCint its = 0;
  cncGetDoublev(CNC_CONVERSION_TIME, &t.conversion);
  cncGetDoublev(CNC_UPLOAD_TIME, &t.upload);
  cncGetDoublev(CNC_SOLVE_TIME, &t.solve);
  cncGetIntegerv(CNC_USED_ITERATIONS, &its);
  t.iterations = its;
  const char* s = nullptr;
  cncGetString(CNC_FORMAT_NAME, &s);
  t.format = s ? s : "?";
  cncGetString(CNC_BACKEND_NAME, &s);
  t.backend = s ? s : "?";
  return t;
}

struct tb_times {
  double total = 0, upload = 0, loop = 0, resolve = 0, revalue = 0;
  int iterations = 0;
};

// The textbook solve from the host CSR; with b2, then a second solve of the same matrix (kept on
// the device) for b2, timed as `resolve` (b2 up, loop, x down); with val2 too, a third of the
// same pattern with values val2 for b, timed as `revalue` (values up, diagonal, b up, loop, x
// down).
tb_times run_textbook(const problem& p, const std::vector<int>& rp32, const std::vector<double>& b,
                      std::vector<double>& x, double tol, int max_it,
                      const std::vector<double>* b2 = nullptr,
                      const std::vector<double>* val2 = nullptr) {
  tb_times t;
  const double t0 = now();
  auto tb = std::make_unique<textbook::pcg<double>>(
      p.n, p.nnz(), rp32.data(), reinterpret_cast<const int*>(p.col.data()), p.val.data());
  t.upload = now() - t0;
  t.iterations = tb->solve(b.data(), tol, max_it, &t.loop);
  tb->get_x(x.data());
  t.total = now() - t0;
  if (b2) {  // its answer goes elsewhere: x is the first solve's, checked by the caller
    std::vector<double> x2(x.size());
    const double t1 = now();
    tb->solve(b2->data(), tol, max_it);
    tb->get_x(x2.data());
    t.resolve = now() - t1;
    if (val2) {
      const double t2 = now();
      tb->set_values(val2->data(), p.nnz());
      tb->solve(b.data(), tol, max_it);
      tb->get_x(x2.data());
      t.revalue = now() - t2;
    }
  }
  return t;
}

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

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int reps = 3;
  double tol = 1e-8;
  long long max_n = 1LL << 40;
  bool small = false, verbose = false;  // verbose: cnc's log on stderr
  std::string only;                     // only the problems whose name contains it
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[a], "--reps") && a + 1 < argc)
      reps = std::atoi(argv[++a]);
    else if (!std::strcmp(argv[a], "--tol") && a + 1 < argc)
      tol = std::atof(argv[++a]);
    else if (!std::strcmp(argv[a], "--max-n") && a + 1 < argc)
      max_n = std::atoll(argv[++a]);
    else if (!std::strcmp(argv[a], "--small"))
      small = true;
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
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) std::printf("device: %s\n", prop.name);
  std::vector<problem> probs;
  auto add = [&](problem p) {
    if (p.n <= max_n && p.name.find(only) != std::string::npos) probs.push_back(std::move(p));
  };
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
