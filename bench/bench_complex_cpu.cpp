// bench_complex_cpu: bench_complex's cnc side without CUDA (no textbook peer), for machines with
// no GPU: cncSolveCSRComplex on the magnetic Laplacians (complex_problems.hpp) and the complex
// Matrix Market files, on --backend cpu (default) or opencl. Per Hermitian problem: fixed
// --iters iterations of the complex system and of the same graph's real Laplacian (cncSolveCSR),
// each as a share of its bandwidth floor (pcg_floor_bytes, value bytes 16 and 8) over this
// machine's triad bandwidth (bench/triad.hpp; --bandwidth GB/s replaces it, e.g. a GPU's copy
// bandwidth for --backend opencl), and the whole first call to --tol with cnc's iterations and
// the true residual recomputed here. General complex files: BiCGSTAB and GMRES. Medians of
// --reps after a warm-up; every timed call is a first solve (the kept matrix dropped).
//
//   bench_complex_cpu [options of bench_complex; see complex_runs.cpp's complex_usage]
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cnc.h"
#include "cuda/complex_runs.hpp"
#include "triad.hpp"

using namespace api_bench;

int main(int argc, char** argv) {
  complex_options o;
  o.backend = "cpu";
  if (!parse_complex_options(argc, argv, &o)) {
    std::fprintf(stderr, "usage: bench_complex_cpu %s\n", complex_usage);
    return 2;
  }
  const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const double gbs = o.bandwidth_gbs > 0 ? o.bandwidth_gbs : triad_gbs(threads, 5);
  std::printf("# bench_complex_cpu: cnc %s, complex Hermitian PCG through cncSolveCSRComplex\n",
              cncVersionString());
  std::printf("floor bandwidth: %.1f GB/s (%s)\n", gbs,
              o.bandwidth_gbs > 0 ? "--bandwidth"
                                  : ("triad on " + std::to_string(threads) + " threads").c_str());
  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  setup_complex_context(o);
  const std::vector<case_source> sources = complex_sources(o);
  print_fraction_header(o, gbs * 1e9);
  std::vector<std::string> solved, general, choices;
  for (const case_source& s : sources) {
    if (s.name.find(o.only) == std::string::npos) continue;
    const complex_case c = s.make();
    if (!c.a.hermitian) {
      for (const std::string& r : general_rows(c.a, o)) general.push_back(r);
      continue;
    }
    const cnc_measure m = measure_cnc(c, o);
    std::printf("%s", fraction_row(c, m, gbs * 1e9).c_str());
    std::fflush(stdout);
    char line[400];
    std::snprintf(line, sizeof line, "| %s | %s/%s | %.4f | %d | %s | %.1e |\n", c.a.name.c_str(),
                  m.solved.backend.c_str(), m.solved.format.c_str(), m.total, m.solved.iterations,
                  m.solved.reason.c_str(), m.true_res);
    solved.push_back(line);
    if (o.verbose) choices.push_back("- " + c.a.name + ": " + m.solved.choice);
  }
  std::printf(
      "\n## To ||r|| <= %.0e ||b||: the whole first cncSolveCSRComplex, host arrays to x in host "
      "memory (medians of %d)\n\n| problem | backend/format | s | its | reason | true res |\n"
      "|---|---|---|---|---|---|\n",
      o.tol, o.reps);
  for (const std::string& l : solved) std::printf("%s", l.c_str());
  if (!general.empty()) {
    print_general_header(o);
    for (const std::string& l : general) std::printf("%s", l.c_str());
  }
  for (const std::string& l : choices) std::printf("%s\n", l.c_str());
  cncDeleteContext(ctx);
  return 0;
}
