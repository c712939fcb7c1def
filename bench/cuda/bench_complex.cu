// bench_complex: complex Hermitian PCG through the public API against a textbook cuSPARSE +
// cuBLAS complex PCG (issue 13: "complex Hermitian PCG per iteration >= 85% of its bandwidth
// floor at n >= 2 M, >= 1.5x a textbook cuSPARSE complex PCG"; "CPU and OpenCL: complex within
// 1.3x of their real-valued fraction of the floor").
//
// Problems (complex_problems.hpp, the same generators as bench_complex_cpu): magnetic Laplacians
// H_ij = -exp(i theta_ij) (random gauge, H_ji = conj(H_ij), H_ii = 1.01 deg + 0.01: Hermitian
// positive definite) on the graphs of the 7-point stencil (--grid7 M, 128^3 = 2.1 M rows by
// default), the 27-point stencil (--grid27 M, 128^3) and optionally the irregular mesh (--mesh M),
// and every complex .mtx of --matrices DIR (default ../shared/data/matrices): a Hermitian one
// with a positive real diagonal goes through CG like the generated ones, any other (young1c:
// complex general) through cnc's BiCGSTAB and GMRES alone, with no textbook peer.
//
//   cnc       cncSolveCSRComplex(n, row_ptr, col, values, 0, 1, b, x) from the host arrays (values,
//             b and x interleaved (re, im)) to x in host memory, on --backend (CNC_BACKEND: cuda by
//             default, opencl, cpu, auto), CG with Jacobi; every timed call a first solve (the
//             kept matrix dropped, untimed, as bench_api does). cnc's format (CNC_FORMAT_NAME)
//             and its own bytes per iteration (CNC_BYTES_PER_ITERATION) are printed: whatever
//             the library chose for a complex matrix.
//   textbook  textbook_pcg.cuh in complex double (textbook_complex.cuh): cudaMalloc and upload
//             of the same host CSR (32-bit row offsets, CUDA_C_64F values), the Jacobi diagonal
//             on the device, cusparseSpMV + cublasZdotc/Zaxpy/Zscal with every scalar back on the
//             host, x back.
// Table 1: fixed --iters iterations (threshold 1e-300 for cnc, none for the textbook): ms per
// iteration of each (cnc: CNC_SOLVE_TIME / iterations; textbook: its loop), their ratio, and each
// one's share of the bandwidth floor of a native complex CSR PCG (pcg_floor_bytes with 16-byte
// values: nnz x 20 + (n + 1) x 8 + n x (8 x 16 + 8) bytes) over the device-to-device copy
// bandwidth measured here (api_runs.cu's copy_bandwidth; for --backend cpu, cnc's share is over
// the host's triad bandwidth, bench/triad.hpp). Table 2: the whole calls to ||r|| <= --tol ||b||,
// iterations and true residuals (recomputed on the host) of both. Table 3: cnc's complex share of
// its floor against the real counterpart's (cncSolveCSR on the same graph's real Laplacian,
// 8-byte floor), on the chosen backend. Table 4: the general complex files. Medians of --reps
// after a warm-up of each kind of run.
//
//   bench_complex [--backend cuda|opencl|cpu|auto] [--reps R] [--iters N] [--tol T]
//                 [--grid7 M] [--grid27 M] [--mesh M] [--only NAME] [--matrices DIR|none]
//                 [--bandwidth GB/s] [--verbose] [--quick]
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../triad.hpp"
#include "api_runs.cuh"
#include "cnc.h"
#include "complex_runs.hpp"
#include "textbook_complex.cuh"

namespace {

using namespace api_bench;
using textbook::now;
using textbook::zcomplex;

struct tb_run {
  double total = 0, loop = 0;
  int iterations = 0;
};

// The textbook complex PCG from the host arrays: upload, diagonal, loop (tol 0: max_it
// iterations exactly), x back; `total` all of it, `loop` the loop alone.
tb_run run_textbook_complex(const cproblem& a, const std::vector<int>& rp32,
                            const std::vector<double>& b, std::vector<double>& x, double tol,
                            int max_it) {
  tb_run t;
  const double t0 = now();
  auto tb = std::make_unique<textbook::pcg<zcomplex>>(
      a.n, a.nnz(), rp32.data(), reinterpret_cast<const int*>(a.col.data()),
      reinterpret_cast<const zcomplex*>(a.val.data()));
  t.iterations = tb->solve(reinterpret_cast<const zcomplex*>(b.data()), tol, max_it, &t.loop);
  tb->get_x(reinterpret_cast<zcomplex*>(x.data()));
  t.total = now() - t0;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  complex_options o;
  o.backend = "cuda";
  if (!parse_complex_options(argc, argv, &o)) {
    std::fprintf(stderr, "usage: bench_complex %s\n", complex_usage);
    return 2;
  }
  std::printf(
      "# bench_complex: cnc %s, complex Hermitian PCG through cncSolveCSRComplex vs a textbook "
      "cuSPARSE+cuBLAS complex PCG\n",
      cncVersionString());
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) std::printf("device: %s\n", prop.name);
  // The GPU's floor (the textbook's, and cnc's on cuda or opencl) and cnc's (the host's triad for
  // --backend cpu); --bandwidth replaces cnc's.
  const double gpu_bw = copy_bandwidth();
  std::printf("device-to-device copy bandwidth: %.0f GB/s (cudaMemcpy of 2 GiB, read + write)\n",
              gpu_bw * 1e-9);
  double cnc_bw = gpu_bw;
  if (o.bandwidth_gbs > 0) {
    cnc_bw = o.bandwidth_gbs * 1e9;
    std::printf("cnc's floors over --bandwidth %.1f GB/s\n", o.bandwidth_gbs);
  } else if (o.backend == "cpu") {
    const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    cnc_bw = triad_gbs(threads, 5) * 1e9;
    std::printf("cnc's floors (cpu backend) over the host's triad: %.1f GB/s on %d threads\n",
                cnc_bw * 1e-9, threads);
  }
  CNCcontext ctx = cncNewContext();
  cncMakeCurrent(ctx);
  setup_complex_context(o);
  const std::vector<case_source> sources = complex_sources(o);
  std::printf(
      "\n## Fixed %d iterations, ms per iteration (medians of %d): cnc (--backend %s) against the "
      "textbook complex PCG (CUDA)\n\n"
      "Floor: a native complex CSR Jacobi-PCG, nnz x 20 + (n + 1) x 8 + n x (8 x 16 + 8) bytes "
      "per iteration, over the bandwidth above. cnc MB/it: cnc's own CNC_BYTES_PER_ITERATION.\n\n"
      "| problem | n | nnz | cnc backend/format | cnc MB/it | floor MB/it | cnc ms/it | textbook "
      "ms/it | textbook / cnc | cnc %% of floor | textbook %% of floor |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n",
      o.iters, o.reps, o.backend.c_str());
  std::vector<std::string> solved, fractions, general, choices;
  for (const case_source& s : sources) {
    if (s.name.find(o.only) == std::string::npos) continue;
    const double t0 = now();
    const complex_case c = s.make();
    std::fprintf(stderr, "%s: made in %.2f s\n", c.a.name.c_str(), now() - t0);
    if (!c.a.hermitian) {
      for (const std::string& r : general_rows(c.a, o)) general.push_back(r);
      continue;
    }
    const cnc_measure m = measure_cnc(c, o);
    const std::vector<double> b = complex_rhs(c.a.n);
    std::vector<double> xt(b.size());
    const std::vector<int> rp32(c.a.rp.begin(), c.a.rp.end());
    run_textbook_complex(c.a, rp32, b, xt, 0.0, o.iters);  // warm-up
    std::vector<double> tms, tts;
    for (int r = 0; r < o.reps; ++r) {
      const tb_run t = run_textbook_complex(c.a, rp32, b, xt, 0.0, o.iters);
      tms.push_back(1e3 * t.loop / t.iterations);
    }
    run_textbook_complex(c.a, rp32, b, xt, o.tol, o.max_it);
    tb_run t;
    for (int r = 0; r < o.reps; ++r) {
      t = run_textbook_complex(c.a, rp32, b, xt, o.tol, o.max_it);
      tts.push_back(t.total);
    }
    const double tm = median(tms), tt = median(tts), fl = pcg_floor_bytes(c.a.n, c.a.nnz(), 16);
    std::printf(
        "| %s | %d | %lld | %s/%s | %.1f | %.1f | %.4f | %.4f | **%.2f** | %.0f%% | %.0f%% |\n",
        c.a.name.c_str(), c.a.n, (long long)c.a.nnz(), m.fixed.backend.c_str(),
        m.fixed.format.c_str(), m.fixed.bytes_per_it * 1e-6, fl * 1e-6, m.ms_per_it, tm,
        tm / m.ms_per_it, 100 * fl / cnc_bw / (m.ms_per_it * 1e-3),
        100 * fl / gpu_bw / (tm * 1e-3));
    std::fflush(stdout);
    char line[512];
    std::snprintf(line, sizeof line,
                  "| %s | %d | %s/%s | %.4f | %d | %s | %.1e | %.4f | %d | %.1e | **%.2f** |\n",
                  c.a.name.c_str(), c.a.n, m.solved.backend.c_str(), m.solved.format.c_str(),
                  m.total, m.solved.iterations, m.solved.reason.c_str(), m.true_res, tt,
                  t.iterations, complex_true_residual(c.a, b, xt), tt / m.total);
    solved.push_back(line);
    fractions.push_back(fraction_row(c, m, cnc_bw));
    if (o.verbose) choices.push_back("- " + c.a.name + ": " + m.solved.choice);
  }
  std::printf(
      "\n## To ||r|| <= %.0e ||b||: the whole call from host arrays to x in host memory (cnc: a "
      "first cncSolveCSRComplex; textbook: allocation, upload, diagonal, loop, x back; medians "
      "of %d)\n\n"
      "| problem | n | cnc backend/format | cnc s | cnc its | cnc reason | cnc true res | "
      "textbook s | textbook its | textbook true res | textbook / cnc |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n",
      o.tol, o.reps);
  for (const std::string& l : solved) std::printf("%s", l.c_str());
  print_fraction_header(o, cnc_bw);
  for (const std::string& l : fractions) std::printf("%s", l.c_str());
  if (!general.empty()) {
    print_general_header(o);
    for (const std::string& l : general) std::printf("%s", l.c_str());
  }
  if (!choices.empty()) {
    std::printf("\n## cnc's choices (CNC_CHOICE_REASON, the to-tolerance solve)\n\n");
    for (const std::string& l : choices) std::printf("%s\n", l.c_str());
  }
  cncDeleteContext(ctx);
  return 0;
}
