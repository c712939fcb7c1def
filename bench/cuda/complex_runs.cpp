// bench_complex's cnc side and shared tables (see complex_runs.hpp).
#include "complex_runs.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace api_bench {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A first solve: the kept matrix dropped (untimed), x zeroed, `call` timed, statistics read.
cnc_run first_solve(double tol, int max_it, const std::function<CNCstatus()>& call,
                    const char* what) {
  check_call(cncSolverParameterd(CNC_THRESHOLD, tol), "threshold");
  check_call(cncSolverParameteri(CNC_MAX_ITERATIONS, max_it), "max iterations");
  check_call(cncDisable(CNC_KEEP_MATRIX), "keep matrix off");
  check_call(cncEnable(CNC_KEEP_MATRIX), "keep matrix on");
  cnc_run r;
  const double t0 = now();
  r.status = call();
  r.total = now() - t0;
  check_call(r.status, what);
  CNCint its = 0;
  cncGetDoublev(CNC_SOLVE_TIME, &r.solve);
  cncGetDoublev(CNC_BYTES_PER_ITERATION, &r.bytes_per_it);
  cncGetIntegerv(CNC_USED_ITERATIONS, &its);
  r.iterations = its;
  r.backend = cnc_text(CNC_BACKEND_NAME);
  r.format = cnc_text(CNC_FORMAT_NAME);
  r.reason = cnc_text(CNC_REASON_NAME);
  r.choice = cnc_text(CNC_CHOICE_REASON);
  return r;
}

template <class F>
double median_of(const std::vector<cnc_run>& v, F f) {
  std::vector<double> a;
  for (const cnc_run& r : v) a.push_back(f(r));
  return median(a);
}

}  // namespace

void check_call(CNCstatus s, const char* what) {
  if (s != CNC_OK) {
    std::fprintf(stderr, "%s failed: %s\n", what, cncGetErrorMessage());
    std::exit(1);
  }
}

std::string cnc_text(CNCenum what) {
  const char* s = nullptr;
  return cncGetString(what, &s) == CNC_OK && s ? s : "?";
}

const char* const complex_usage =
    "[--backend cuda|opencl|cpu|auto] [--reps R] [--iters N] [--tol T] [--max-it N]\n"
    "  [--grid7 M] [--grid27 M] [--grid125 M] [--mesh M] [--only NAME] [--matrices DIR|none]\n"
    "  [--flux F] [--bandwidth GB/s] [--format auto|zcsr|zsell|bcrs2] [--verbose] [--quick]\n"
    "(--grid7/--grid27/--grid125/--mesh M: the m^3 magnetic Laplacians, 0 leaves one out; "
    "defaults 128, 128, 0, 0; --flux: flux quanta per unit square of the magnetic field, default "
    "1/64)";

bool parse_complex_options(int argc, char** argv, complex_options* o) {
  for (int a = 1; a < argc; ++a) {
    const std::string k = argv[a];
    if (k == "--verbose") {
      o->verbose = true;
      continue;
    }
    if (k == "--quick") {
      o->grid7 = o->grid27 = 32, o->mesh = 0, o->reps = 3;
      continue;
    }
    if (a + 1 >= argc) {
      std::fprintf(stderr, "%s: unknown option or no value\n", k.c_str());
      return false;
    }
    const char* v = argv[++a];
    if (k == "--backend")
      o->backend = v;
    else if (k == "--reps")
      o->reps = std::max(1, std::atoi(v));
    else if (k == "--iters")
      o->iters = std::max(1, std::atoi(v));
    else if (k == "--tol")
      o->tol = std::atof(v);
    else if (k == "--max-it")
      o->max_it = std::max(1, std::atoi(v));
    else if (k == "--grid7")
      o->grid7 = std::atoi(v);
    else if (k == "--grid27")
      o->grid27 = std::atoi(v);
    else if (k == "--grid125")
      o->grid125 = std::atoi(v);
    else if (k == "--mesh")
      o->mesh = std::atoi(v);
    else if (k == "--only")
      o->only = v;
    else if (k == "--matrices")
      o->matrices = v;
    else if (k == "--flux")
      o->flux = std::atof(v);
    else if (k == "--bandwidth")
      o->bandwidth_gbs = std::atof(v);
    else if (k == "--format")
      o->format = v;
    else {
      std::fprintf(stderr, "%s: unknown option\n", k.c_str());
      return false;
    }
  }
  if (o->backend != "cuda" && o->backend != "opencl" && o->backend != "cpu" &&
      o->backend != "auto") {
    std::fprintf(stderr, "--backend: cuda, opencl, cpu or auto, not \"%s\"\n", o->backend.c_str());
    return false;
  }
  if (o->format != "auto" && o->format != "zcsr" && o->format != "zsell" && o->format != "bcrs2") {
    std::fprintf(stderr, "--format: auto, zcsr, zsell or bcrs2, not \"%s\"\n", o->format.c_str());
    return false;
  }
  return true;
}

std::vector<case_source> complex_sources(const complex_options& o) {
  std::vector<case_source> s;
  auto graph = [&s, flux = o.flux](const std::string& kind, int m,
                                   std::function<problem(int)> make) {
    s.push_back({"magnetic " + kind + " " + std::to_string(m) + "^3", [=] {
                   const problem g = make(m);
                   return complex_case{magnetic_laplacian(g, m, flux), real_laplacian(g)};
                 }});
  };
  if (o.grid7 > 0) graph("7-pt", o.grid7, [](int m) { return stencil(m, 7, 1); });
  if (o.grid27 > 0) graph("27-pt", o.grid27, [](int m) { return stencil(m, 27, 1); });
  if (o.grid125 > 0) graph("125-pt", o.grid125, [](int m) { return stencil(m, 125, 1); });
  if (o.mesh > 0) graph("mesh", o.mesh, [](int m) { return mesh(m); });
  if (o.matrices == "none") return s;
  std::string why;
  const std::vector<std::string> files = mtx_files(o.matrices, &why);
  if (files.empty())
    std::printf("Matrix Market: no .mtx files in %s%s%s: skipped\n", o.matrices.c_str(),
                why.empty() ? "" : ": ", why.c_str());
  for (const std::string& f : files) {
    auto p = std::make_shared<cproblem>();
    if (!read_complex_matrix_market(f, p.get(), &why)) continue;  // the real files
    std::string name = p->name, herm;
    std::printf("Matrix Market: %s is complex, %d x %d, %lld entries; %s\n", f.c_str(), p->n, p->n,
                (long long)p->nnz(),
                hermitian_positive_diagonal(*p, &herm)
                    ? "Hermitian with a positive real diagonal: CG against the textbook PCG"
                    : ("not Hermitian positive definite (" + herm +
                       "): no CG, cnc's BiCGSTAB and GMRES only")
                          .c_str());
    s.push_back({std::move(name), [p] { return complex_case{std::move(*p), problem()}; }});
  }
  return s;
}

namespace {
// CNC_MATRIX_FORMAT of the complex solves (--format); the real ones keep AUTO.
CNCint complex_format = CNC_FORMAT_AUTO;
}  // namespace

void setup_complex_context(const complex_options& o) {
  complex_format = o.format == "zcsr"    ? CNC_FORMAT_ZCSR
                   : o.format == "zsell" ? CNC_FORMAT_ZSELL
                   : o.format == "bcrs2" ? CNC_FORMAT_BCRS2
                                         : CNC_FORMAT_AUTO;
  const CNCint backend = o.backend == "cuda"     ? CNC_BACKEND_CUDA
                         : o.backend == "opencl" ? CNC_BACKEND_OPENCL
                         : o.backend == "cpu"    ? CNC_BACKEND_CPU
                                                 : CNC_BACKEND_AUTO;
  check_call(cncSolverParameteri(CNC_BACKEND, backend), "CNC_BACKEND");
  check_call(cncSolverParameteri(CNC_SOLVER, CNC_CG), "CNC_SOLVER");
  if (o.verbose) cncEnable(CNC_VERBOSE);
}

cnc_run run_cnc_complex(const cproblem& a, const std::vector<double>& b, std::vector<double>& x,
                        double tol, int max_it) {
  std::fill(x.begin(), x.end(), 0.0);
  return first_solve(
      tol, max_it,
      [&] {
        check_call(cncSolverParameteri(CNC_MATRIX_FORMAT, complex_format), "CNC_MATRIX_FORMAT");
        const CNCstatus st = cncSolveCSRComplex(CNCuint(a.n), a.rp.data(), a.col.data(),
                                                a.val.data(), 0, 1, b.data(), x.data());
        check_call(cncSolverParameteri(CNC_MATRIX_FORMAT, CNC_FORMAT_AUTO), "CNC_MATRIX_FORMAT");
        return st;
      },
      "cncSolveCSRComplex");
}

cnc_run run_cnc_real(const problem& p, const std::vector<double>& b, std::vector<double>& x,
                     double tol, int max_it) {
  std::fill(x.begin(), x.end(), 0.0);
  return first_solve(
      tol, max_it,
      [&] {
        return cncSolveCSR(CNCuint(p.n), p.rp.data(), p.col.data(), p.val.data(), 0, 1, b.data(),
                           x.data());
      },
      "cncSolveCSR");
}

cnc_measure measure_cnc(const complex_case& c, const complex_options& o) {
  cnc_measure m;
  const std::vector<double> b = complex_rhs(c.a.n);
  std::vector<double> x(b.size());
  std::vector<cnc_run> runs;
  // Threshold 1e-300: never reached, so every run does exactly o.iters iterations.
  run_cnc_complex(c.a, b, x, 1e-300, o.iters);  // warm-up
  for (int r = 0; r < o.reps; ++r) runs.push_back(run_cnc_complex(c.a, b, x, 1e-300, o.iters));
  m.fixed = runs.back();
  m.ms_per_it = median_of(runs, [](const cnc_run& r) { return r.ms_per_it(); });
  if (c.real.n > 0) {
    const std::vector<double> rb = rhs(c.real.n);
    std::vector<double> rx(rb.size());
    runs.clear();
    run_cnc_real(c.real, rb, rx, 1e-300, o.iters);
    for (int r = 0; r < o.reps; ++r) runs.push_back(run_cnc_real(c.real, rb, rx, 1e-300, o.iters));
    m.real_fixed = runs.back();
    m.real_ms_per_it = median_of(runs, [](const cnc_run& r) { return r.ms_per_it(); });
  }
  runs.clear();
  run_cnc_complex(c.a, b, x, o.tol, o.max_it);
  for (int r = 0; r < o.reps; ++r) runs.push_back(run_cnc_complex(c.a, b, x, o.tol, o.max_it));
  m.solved = runs.back();
  m.total = median_of(runs, [](const cnc_run& r) { return r.total; });
  m.true_res = complex_true_residual(c.a, b, x);
  return m;
}

double complex_floor_s(const cproblem& a, double bw) {
  return pcg_floor_bytes(a.n, a.nnz(), 16) / bw;
}
double real_floor_s(const problem& p, double bw) { return pcg_floor_bytes(p.n, p.nnz(), 8) / bw; }

void print_fraction_header(const complex_options& o, double bw) {
  std::printf(
      "\n## Complex against real on the %s backend: fixed %d iterations, ms per iteration and "
      "share of each one's floor (medians of %d)\n\n"
      "Floors over %.0f GB/s: complex = native complex CSR PCG, nnz x 20 + (n + 1) x 8 + n x "
      "(8 x 16 + 8) bytes; real = the same graph's real Laplacian (-1 per edge, same diagonal) "
      "through cncSolveCSR, nnz x 12 + (n + 1) x 8 + n x 9 x 8 bytes. cnc MB/it: cnc's own "
      "CNC_BYTES_PER_ITERATION. Target (issue 13, CPU and OpenCL): real %% / complex %% <= "
      "1.3.\n\n"
      "| problem | n | nnz | backend | complex format | complex cnc MB/it | complex floor MB/it | "
      "complex ms/it | complex %% of floor | real format | real ms/it | real %% of floor | real "
      "%% / complex %% |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      o.backend.c_str(), o.iters, o.reps, bw * 1e-9);
}

std::string fraction_row(const complex_case& c, const cnc_measure& m, double bw) {
  const double cf = 100 * complex_floor_s(c.a, bw) / (m.ms_per_it * 1e-3);
  char real[200] = "- | - | - | -";
  if (c.real.n > 0) {
    const double rf = 100 * real_floor_s(c.real, bw) / (m.real_ms_per_it * 1e-3);
    std::snprintf(real, sizeof real, "%s | %.4f | %.0f%% | **%.2f**", m.real_fixed.format.c_str(),
                  m.real_ms_per_it, rf, rf / cf);
  }
  char line[640];
  std::snprintf(line, sizeof line,
                "| %s | %d | %lld | %s | %s | %.1f | %.1f | %.4f | %.0f%% | %s |\n",
                c.a.name.c_str(), c.a.n, (long long)c.a.nnz(), m.fixed.backend.c_str(),
                m.fixed.format.c_str(), m.fixed.bytes_per_it * 1e-6,
                pcg_floor_bytes(c.a.n, c.a.nnz(), 16) * 1e-6, m.ms_per_it, cf, real);
  return line;
}

void print_general_header(const complex_options& o) {
  std::printf(
      "\n## General complex matrices (not Hermitian positive definite: no CG, no textbook PCG "
      "peer): cncSolveCSRComplex with BiCGSTAB and GMRES(30), Jacobi, to ||r|| <= %.0e ||b||, "
      "whole call (medians of %d)\n\n"
      "| matrix | n | nnz | solver | backend/format | s | its | reason | true res |\n"
      "|---|---|---|---|---|---|---|---|---|\n",
      o.tol, o.reps);
}

std::vector<std::string> general_rows(const cproblem& a, const complex_options& o) {
  std::vector<std::string> rows;
  const std::vector<double> b = complex_rhs(a.n);
  std::vector<double> x(b.size());
  const struct {
    CNCint solver;
    const char* name;
  } solvers[] = {{CNC_BICGSTAB, "BiCGSTAB"}, {CNC_GMRES, "GMRES(30)"}};
  for (const auto& s : solvers) {
    check_call(cncSolverParameteri(CNC_SOLVER, s.solver), "CNC_SOLVER");
    std::vector<cnc_run> runs;
    run_cnc_complex(a, b, x, o.tol, o.max_it);
    for (int r = 0; r < o.reps; ++r) runs.push_back(run_cnc_complex(a, b, x, o.tol, o.max_it));
    const cnc_run& l = runs.back();
    char line[400];
    std::snprintf(line, sizeof line, "| %s | %d | %lld | %s | %s/%s | %.4f | %d | %s | %.1e |\n",
                  a.name.c_str(), a.n, (long long)a.nnz(), s.name, l.backend.c_str(),
                  l.format.c_str(), median_of(runs, [](const cnc_run& r) { return r.total; }),
                  l.iterations, l.reason.c_str(), complex_true_residual(a, b, x));
    rows.push_back(line);
  }
  check_call(cncSolverParameteri(CNC_SOLVER, CNC_CG), "CNC_SOLVER");
  return rows;
}

}  // namespace api_bench
