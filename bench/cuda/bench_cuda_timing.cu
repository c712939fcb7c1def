// cnc's device_system and the textbook baseline as bench_cuda times them (see
// bench_cuda_timing.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "bench_cuda_timing.cuh"
#include "conversion/convert.hpp"
#include "textbook_pcg.cuh"

using namespace cnc;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- cnc (device_system)
// -------------------------------------------------------------------------

std::unique_ptr<backend> g_cnc;
double g_copy_bw = 0;  // bytes/s, read + write

cnc_run make_cnc(const problem& pb, format f, precision p, int k) {
  cnc_run r;
  host_matrix hm;
  hm.fmt = f;
  hm.csr = pb.csr;
  hm.bcrs = is_block(f) ? &pb.bcrs : nullptr;
  hm.sell = f == format::sell ? &pb.sell : nullptr;
  const std::int32_t np = hm.n_padded();
  std::vector<double> d(np, 1.0 / pb.diag);
  r.k = k;
  r.sys = g_cnc->create_system(hm, d, p, k);
  r.b = rhs(pb.csr.n, k);
  r.x0.assign(r.b.size(), 0.0);
  r.thr2.assign(k, 0.0);  // never "converged": time a fixed number of iterations
  r.config = dynamic_cast<cuda::system_probe*>(r.sys.get())->config();
  return r;
}

// Median seconds per iteration over `reps` runs of `iters` iterations from a fresh init.
// `ok` = every run did all its iterations (no system stopped early).
double time_cnc(cnc_run& r, int iters, int reps, bool& ok) {
  std::vector<rhs_state> st(r.k);
  std::vector<double> t;
  ok = true;
  for (int rep = 0; rep < reps; ++rep) {
    r.sys->set_vectors(r.b.data(), r.x0.data());
    r.sys->init(r.thr2.data());
    r.sys->read_state(st.data());
    const double t0 = now();
    r.sys->iterate(iters);
    r.sys->read_state(st.data());
    t.push_back((now() - t0) / iters);
    for (auto& s : st) ok = ok && s.iters == iters && s.status == running;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Iterations per timed run: about 0.1 s, multiple of 32, 64..512 (short enough that no
// system reaches its rounding floor).
int pick_iters(cnc_run& r) {
  bool ok;
  time_cnc(r, 64, 1, ok);  // warm-up: graph capture, clocks
  const double t = time_cnc(r, 64, 1, ok);
  const int it = static_cast<int>(0.1 / t) / 32 * 32;
  return std::clamp(it, 64, 512);
}

solve_result solve_cnc(cnc_run& r, const problem& pb, double tol) {
  const std::int64_t n = pb.csr.n;
  for (int j = 0; j < r.k; ++j) {
    double bb = 0;
    for (std::int64_t i = 0; i < n; ++i) bb += r.b[j * n + i] * r.b[j * n + i];
    r.thr2[j] = tol * tol * bb;
  }
  std::vector<rhs_state> st(r.k);
  solve_result s;
  r.sys->set_vectors(r.b.data(), r.x0.data());
  const double t0 = now();
  r.sys->init(r.thr2.data());
  for (int it = 0; it < 20000; it += 16) {
    r.sys->iterate(16);
    r.sys->read_state(st.data());
    if (st[0].status != running) break;
  }
  s.seconds = now() - t0;
  s.iters = st[0].iters;
  s.status = st[0].status;
  std::vector<double> x(r.b.size());
  r.sys->get_x(x.data());
  s.true_res = true_residual(pb.csr, r.b.data(), x.data());
  std::fill(r.thr2.begin(), r.thr2.end(), 0.0);
  return s;
}

// Minimum bytes of one iteration (see the top of bench_cuda.cu).
double floor_bytes(const problem& pb, format f, precision p, int k) {
  const double vs = p == precision::f32 ? 4 : 8, ms = p == precision::f64 ? 8 : 4;
  double mat, np;
  if (f == format::csr) {
    mat = double(pb.csr.nnz()) * (ms + 4) + (pb.csr.n + 1) * 8.0;
    np = pb.csr.n;
  } else if (f == format::sell) {  // padding entries are read too: they count
    mat = double(pb.sell.entries()) * (ms + 4) + (pb.sell.n_slices + 1) * 8.0;
    np = pb.sell.n_padded();
  } else {
    mat = double(pb.bcrs.n_blocks()) * (16 * ms + 4) + (pb.bcrs.n_block_rows + 1) * 8.0;
    np = pb.bcrs.n_padded();
  }
  return mat + (10.0 * k + 2.0) * np * vs;  // passes: bench_cuda.cu's header
}

// ---- baseline: cuSPARSE + cuBLAS, host-side scalars
// ----------------------------------------------

// Textbook Jacobi-PCG (textbook_pcg.cuh). Returns seconds per iteration (median of reps).
template <class T>
double time_baseline(const problem& pb, int iters, int reps) {
  const csr_matrix& a = pb.csr;
  const int n = a.n;
  std::vector<int> rp(a.row_ptr.begin(), a.row_ptr.end());
  std::vector<T> val(a.val.begin(), a.val.end());
  std::vector<double> b64 = rhs(n, 1);
  std::vector<T> bh(b64.begin(), b64.end());
  textbook::pcg<T> tb(n, a.nnz(), rp.data(), a.col.data(), val.data());
  std::vector<double> t;
  for (int rep = 0; rep < reps + 1; ++rep) {  // rep 0: warm-up
    double loop = 0;
    const int count = tb.solve(bh.data(), 0.0, rep == 0 ? std::min(iters, 8) : iters, &loop);
    if (rep > 0) t.push_back(loop / count);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
template double time_baseline<float>(const problem& pb, int iters, int reps);
template double time_baseline<double>(const problem& pb, int iters, int reps);

// ---- copy bandwidth
// ------------------------------------------------------------------------------

double copy_bandwidth() {
  const size_t bytes = size_t(2) << 30;
  void *a, *b;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int i = 0; i < 12; ++i) {
    CK(cudaEventRecord(e0));
    CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float m;
    CK(cudaEventElapsedTime(&m, e0, e1));
    if (i >= 2) ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes / (ms[ms.size() / 2] * 1e-3);
}

// ---- tables
// --------------------------------------------------------------------------------------

void header() {
  std::printf(
      "| problem | format | precision | n | nnz | cnc ms/iter | floor ms | %% of floor | cnc GB/s "
      "| cuSPARSE ms/iter | speed-up | launch config |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

// One table row. The baseline is timed when with_baseline, and its time stored in *base_t;
// otherwise a *base_t > 0 from an earlier row of the same problem gives the speed-up.
void row(const problem& pb, format f, precision p, bool with_baseline, double* base_t) {
  cnc_run r = make_cnc(pb, f, p, 1);
  const int iters = pick_iters(r);
  bool ok;
  const int reps = r.sys && pb.csr.n < 1000000 ? 7 : 3;
  const double t = time_cnc(r, iters, reps, ok);
  const double fb = floor_bytes(pb, f, p, 1);
  const double floor_t = fb / g_copy_bw;
  std::string base = "-", sp = "-";
  if (with_baseline) {
    const int bit = std::clamp(static_cast<int>(0.1 / (3 * t)), 10, 300);
    const double tb =
        p == precision::f32 ? time_baseline<float>(pb, bit, 3) : time_baseline<double>(pb, bit, 3);
    if (base_t) *base_t = tb;
    char s[64];
    std::snprintf(s, sizeof s, "%.4f%s", tb * 1e3, p == precision::mixed ? " (double)" : "");
    base = s;
    std::snprintf(s, sizeof s, "%.2fx", tb / t);
    sp = s;
  } else if (base_t && *base_t > 0) {
    char s[64];
    std::snprintf(s, sizeof s, "(same)");
    base = s;
    std::snprintf(s, sizeof s, "%.2fx", *base_t / t);
    sp = s;
  }
  std::printf("| %s | %s | %s | %d | %lld | %.4f%s | %.4f | %.1f%% | %.0f | %s | %s | %s |\n",
              pb.name.c_str(), format_name(f), pname(p), pb.csr.n,
              static_cast<long long>(pb.csr.nnz()), t * 1e3, ok ? "" : "*", floor_t * 1e3,
              100.0 * floor_t / t, fb / t * 1e-9, base.c_str(), sp.c_str(), r.config.c_str());
  std::fflush(stdout);
}

// Each step timed alone (20 back-to-back launches, no graph), against its own floor: SpMV =
// matrix + p read + q write; update_xr = 4 vector passes (q, r, d read, r written); update_p = 6
// (x, r, d, p read, x, p written).
void breakdown(const problem& pb, format f, precision p) {
  cnc_run r = make_cnc(pb, f, p, 1);
  std::vector<rhs_state> st(1);
  r.sys->set_vectors(r.b.data(), r.x0.data());
  r.sys->init(r.thr2.data());
  r.sys->iterate(64);
  r.sys->read_state(st.data());
  const double vs = p == precision::f32 ? 4 : 8;
  const double np = f == format::csr    ? pb.csr.n
                    : f == format::sell ? pb.sell.n_padded()
                                        : pb.bcrs.n_padded();
  const double mat = floor_bytes(pb, f, p, 1) - 12 * np * vs;
  const double floors[3] = {mat + 2 * np * vs, 4 * np * vs, 6 * np * vs};
  double t[3];
  for (int step = 0; step < 3; ++step) {
    const int reps = 20;
    const double t0 = now();
    for (int i = 0; i < reps; ++i) {
      if (step == 0) r.sys->spmv_dot();
      if (step == 1) r.sys->update_xr();
      if (step == 2) r.sys->update_p();
    }
    r.sys->read_state(st.data());
    t[step] = (now() - t0) / reps;
  }
  std::printf("| %s | %s | %s | %.4f (%.0f%%) | %.4f (%.0f%%) | %.4f (%.0f%%) | %s |\n",
              pb.name.c_str(), format_name(f), pname(p), t[0] * 1e3,
              100 * floors[0] / g_copy_bw / t[0], t[1] * 1e3, 100 * floors[1] / g_copy_bw / t[1],
              t[2] * 1e3, 100 * floors[2] / g_copy_bw / t[2],
              st[0].status == running ? "" : "stopped");
  std::fflush(stdout);
}
