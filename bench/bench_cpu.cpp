// bench_cpu: cnc's CPU backend against Eigen on the same machine, in the same run.
//
//  1. STREAM-like triad a = b + s c over 3 x 128 MiB with all threads: the bandwidth ceiling.
//  2. Jacobi-PCG on the 7-point 3D Poisson problem (64^3, 128^3; double and float): cnc through
//     its C API vs Eigen::ConjugateGradient<RowMajor, Lower|Upper, DiagonalPreconditioner>
//     (multithreaded SpMV through OpenMP, as Eigen documents), same tolerance, same b.
//     Reports ms/iteration, cnc's achieved GB/s on its minimum bytes/iteration and % of triad.
//  3. Assembly: 7-point 128^3 through cncAddIJCoefficient + End(MATRIX) (hash + CSR) on one
//     thread, vs Eigen's setFromTriplets (triplet vector filled outside the timing).
// Each measurement is repeated --repeat times (default 3) and the median is printed.
//
//   bench_cpu [--sizes 64,128] [--repeat 3] [--threads N]
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/Sparse>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cnc.h"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int g_threads = 0;

double triad_gbs(int repeat) {
  const std::size_t n = std::size_t(16) << 20;  // 16 Mi doubles = 128 MiB per array
  std::vector<double> a(n), b(n), c(n);
  const int T = g_threads;
  auto run = [&](auto fn) {
    std::vector<std::thread> th;
    for (int t = 0; t < T; ++t) th.emplace_back(fn, t);
    for (auto& x : th) x.join();
  };
  run([&](int t) {  // first touch by the threads that use the pages
    for (std::size_t i = n * t / T; i < n * (t + 1) / T; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
  });
  std::vector<double> times;
  for (int r = 0; r < repeat + 1; ++r) {
    double t0 = now();
    run([&](int t) {
      for (std::size_t i = n * t / T; i < n * (t + 1) / T; ++i) a[i] = b[i] + 3.0 * c[i];
    });
    if (r > 0) times.push_back(now() - t0);  // first run warms up
  }
  return 3.0 * 8.0 * double(n) / median(times) * 1e-9;
}

// Bandwidth of writing freshly allocated memory (page faults + zeroing by the kernel): it bounds
// any assembly that builds new arrays, and is far below the triad on some virtual machines.
double fresh_touch_gbs() {
  const std::size_t n = std::size_t(256) << 20;
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    char* p = static_cast<char*>(std::malloc(n));
    double t0 = now();
    std::memset(p, 1, n);
    t.push_back(now() - t0);
    std::free(p);
  }
  return double(n) / median(t) * 1e-9;
}

struct poisson {
  int g;
  long n;
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<double> b;
};

poisson make_poisson(int g) {
  poisson p{g, long(g) * g * g, {}, {}};
  const long g2 = long(g) * g;
  p.triplets.reserve(std::size_t(7 * p.n));
  p.b.assign(std::size_t(p.n), 1.0);
  for (long i = 0; i < p.n; ++i) {
    long x = i % g, y = (i / g) % g, z = i / g2;
    p.triplets.emplace_back(i, i, 6.0);
    if (x > 0) p.triplets.emplace_back(i, i - 1, -1.0);
    if (x < g - 1) p.triplets.emplace_back(i, i + 1, -1.0);
    if (y > 0) p.triplets.emplace_back(i, i - g, -1.0);
    if (y < g - 1) p.triplets.emplace_back(i, i + g, -1.0);
    if (z > 0) p.triplets.emplace_back(i, i - g2, -1.0);
    if (z < g - 1) p.triplets.emplace_back(i, i + g2, -1.0);
  }
  return p;
}

void check(CNCstatus s, const char* what) {
  if (s != CNC_OK) {
    std::fprintf(stderr, "%s: %s\n%s\n", what, cncStatusString(s), cncGetErrorMessage());
    std::exit(1);
  }
}

// Assembles p through the entry-wise API; returns seconds (Begin(MATRIX) .. End(MATRIX)).
double cnc_assemble(const poisson& p, int precision, double tol) {
  check(cncSolverParameteri(CNC_NB_VARIABLES, CNCint(p.n)), "n");
  check(cncSolverParameteri(CNC_PRECISION, precision), "precision");
  check(cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CPU), "backend");
  check(cncSolverParameteri(CNC_NB_THREADS, g_threads), "threads");
  check(cncSolverParameteri64(CNC_NNZ_HINT, CNCint64(p.triplets.size())), "hint");
  check(cncSolverParameterd(CNC_THRESHOLD, tol), "threshold");
  check(cncBegin(CNC_SYSTEM), "begin system");
  double t0 = now();
  check(cncBegin(CNC_MATRIX), "begin matrix");
  for (const auto& t : p.triplets)
    cncAddIJCoefficient(CNCuint(t.row()), CNCuint(t.col()), t.value());
  for (long i = 0; i < p.n; ++i) cncAddIRightHandSide(CNCuint(i), p.b[i]);
  check(cncEnd(CNC_MATRIX), "end matrix");
  double t = now() - t0;
  check(cncEnd(CNC_SYSTEM), "end system");
  return t;
}

struct result {
  double ms_per_it, seconds, gbs;
  long iterations;
  double residual;
};

result cnc_solve_once(long n) {
  for (long i = 0; i < n; ++i) cncSetVariable(CNCuint(i), 0.0);  // same start as Eigen: x = 0
  check(cncSolve(), "solve");
  CNCint64 it;
  double solve, gbs, res;
  cncGetInteger64v(CNC_USED_ITERATIONS, &it);
  cncGetDoublev(CNC_SOLVE_TIME, &solve);
  cncGetDoublev(CNC_GBYTES_PER_SECOND, &gbs);
  cncGetDoublev(CNC_TRUE_ERROR, &res);
  return {1e3 * solve / double(it), solve, gbs, long(it), res};
}

template <class Scalar>
result eigen_solve(const poisson& p, double tol) {
  using Mat = Eigen::SparseMatrix<Scalar, Eigen::RowMajor>;
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  Mat a(p.n, p.n);
  std::vector<Eigen::Triplet<Scalar>> tr;
  tr.reserve(p.triplets.size());
  for (const auto& t : p.triplets) tr.emplace_back(t.row(), t.col(), Scalar(t.value()));
  a.setFromTriplets(tr.begin(), tr.end());
  Vec b = Vec::Ones(p.n);
  Eigen::ConjugateGradient<Mat, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<Scalar>>
      cg;
  cg.setTolerance(Scalar(tol));
  cg.setMaxIterations(100000);
  cg.compute(a);
  double t0 = now();
  Vec x = cg.solve(b);
  double t = now() - t0;
  Eigen::Matrix<double, Eigen::Dynamic, 1> r =
      b.template cast<double>() - a.template cast<double>() * x.template cast<double>();
  return {1e3 * t / double(cg.iterations()), t, 0.0, long(cg.iterations()),
          r.norm() / std::sqrt(double(p.n))};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {64, 128};
  int repeat = 3;
  g_threads = int(std::thread::hardware_concurrency());
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--repeat")) repeat = std::max(1, std::atoi(argv[a + 1]));
    if (!std::strcmp(argv[a], "--threads")) g_threads = std::max(1, std::atoi(argv[a + 1]));
    if (!std::strcmp(argv[a], "--sizes")) {
      sizes.clear();
      for (char* s = std::strtok(argv[a + 1], ","); s; s = std::strtok(nullptr, ","))
        sizes.push_back(std::atoi(s));
    }
  }
  Eigen::setNbThreads(g_threads);
  const double triad = triad_gbs(repeat);
  std::printf("machine: %u hardware threads, cnc %s, Eigen %d.%d.%d with %d OpenMP threads\n",
              std::thread::hardware_concurrency(), cncVersionString(), EIGEN_WORLD_VERSION,
              EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, Eigen::nbThreads());
  std::printf("triad bandwidth (%d threads): %.2f GB/s (median of %d)\n\n", g_threads, triad,
              repeat);

  std::printf(
      "Jacobi-PCG, 7-point 3D Poisson, tol 1e-8 (double) / 1e-6 (float), b = 1, x0 = 0, "
      "medians of %d runs\n",
      repeat);
  std::printf("%-8s %-7s | %6s %9s %8s %6s | %6s %9s | %8s\n", "grid", "prec", "cnc it", "ms/it",
              "GB/s", "%triad", "Eig it", "ms/it", "speed-up");
  std::vector<std::pair<int, double>> asm_rates;
  for (int g : sizes) {
    poisson p = make_poisson(g);
    for (int prec : {CNC_DOUBLE, CNC_SINGLE}) {
      CNCcontext ctx = cncNewContext();
      cncMakeCurrent(ctx);
      const double tol = prec == CNC_DOUBLE ? 1e-8 : 1e-6;  // float cannot reach 1e-8
      cnc_assemble(p, prec, tol);
      std::vector<double> c_ms, e_ms, c_gbs;
      result c{}, e{};
      for (int r = 0; r < repeat; ++r) {
        c = cnc_solve_once(p.n);
        c_ms.push_back(c.ms_per_it);
        c_gbs.push_back(c.gbs);
        e = prec == CNC_DOUBLE ? eigen_solve<double>(p, tol) : eigen_solve<float>(p, tol);
        e_ms.push_back(e.ms_per_it);
      }
      cncDeleteContext(ctx);
      double cm = median(c_ms), em = median(e_ms), gb = median(c_gbs);
      std::printf("%-8s %-7s | %6ld %9.3f %8.2f %5.0f%% | %6ld %9.3f | %7.2fx\n",
                  (std::to_string(g) + "^3").c_str(), prec == CNC_DOUBLE ? "double" : "float",
                  c.iterations, cm, gb, 100.0 * gb / triad, e.iterations, em,
                  (em * double(e.iterations)) / (cm * double(c.iterations)));
    }
  }
  std::printf("(speed-up = Eigen solve time / cnc solve time; ms/it per iteration of each)\n\n");

  const int ga = sizes.back();
  poisson p = make_poisson(ga);
  std::vector<double> c_t, e_t, e_all;
  for (int r = 0; r < repeat; ++r) {
    CNCcontext ctx = cncNewContext();
    cncMakeCurrent(ctx);
    c_t.push_back(cnc_assemble(p, CNC_DOUBLE, 1e-8));
    cncDeleteContext(ctx);
    // Eigen end to end: the user's triplet list (as cncAddIJCoefficient calls) + setFromTriplets.
    double t0 = now();
    std::vector<Eigen::Triplet<double>> tr;
    tr.reserve(p.triplets.size());
    for (const auto& t : p.triplets) tr.emplace_back(t.row(), t.col(), t.value());
    Eigen::SparseMatrix<double, Eigen::RowMajor> a(p.n, p.n);
    double t1 = now();
    a.setFromTriplets(tr.begin(), tr.end());
    double t2 = now();
    e_t.push_back(t2 - t1);
    e_all.push_back(t2 - t0);
  }
  const double nc = double(p.triplets.size());
  std::printf("assembly, 7-point %d^3 (%.1f M coefficients), one thread, medians of %d runs\n", ga,
              nc * 1e-6, repeat);
  std::printf("  cnc   AddIJCoefficient calls + End(MATRIX) -> CSR : %7.3f s  %7.1f M coeff/s\n",
              median(c_t), nc / median(c_t) * 1e-6);
  std::printf("  Eigen triplet push_back + setFromTriplets        : %7.3f s  %7.1f M coeff/s\n",
              median(e_all), nc / median(e_all) * 1e-6);
  std::printf("  Eigen setFromTriplets alone                      : %7.3f s  %7.1f M coeff/s\n",
              median(e_t), nc / median(e_t) * 1e-6);
  std::printf("  ratio cnc/Eigen rate (end to end): %.2fx\n", median(e_all) / median(c_t));
  std::printf("  (fresh-memory write bandwidth on this machine: %.2f GB/s, one thread)\n",
              fresh_touch_gbs());
  return 0;
}
