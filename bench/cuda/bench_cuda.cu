// Benchmark of the CUDA backend against a textbook cuSPARSE + cuBLAS Jacobi-PCG, in one run.
//
// Prints tables: time per iteration of cnc's fused, device-resident PCG (driven through the
// device_system like the solver does: iterate() graphs, one state read per check) and of the
// baseline (cusparseSpMV on CSR, cuBLAS dots/axpys, scalars on the host, as NVIDIA's samples),
// the minimum-bytes floor from the device-to-device copy bandwidth measured in the same run,
// iterations and true residuals to a fixed tolerance (mixed vs double), and k = 8 right-hand
// sides against 8 separate solves.
//
// Floor bytes of one cnc iteration (3 fused steps): matrix values + column indices once, 64-bit
// row offsets once, plus vector passes of n_padded values each: SpMV reads p and writes q (2k);
// update_xr reads p, q, x, r and d, writes x and r (6k + 1); update_p reads r, d, p and writes p
// (3k + 1): 11k + 2 passes, 13 for k = 1. d is shared by the k systems.
//
//   bench_cuda [quick]     ("quick": small sizes only, for a smoke test)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "conversion/convert.hpp"
#include "textbook_pcg.cuh"

using namespace cnc;

namespace {

#define CK(call)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
void parallel_for(std::int64_t n, F f) {
  const int t = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> th;
  for (int i = 0; i < t; ++i)
    th.emplace_back([=] {
      for (std::int64_t r = n * i / t; r < n * (i + 1) / t; ++r) f(r);
    });
  for (auto& x : th) x.join();
}

// ---- problems
// ------------------------------------------------------------------------------------

struct problem {
  std::string name;
  csr_matrix csr;
  bcrs_matrix bcrs;  // b = 4 problems only
  sell_matrix sell;  // every problem
  double diag = 1;   // constant diagonal (Jacobi: d = 1/diag)
  bool has_bcrs = false;
};

// 3D Poisson on an N^3 grid (Dirichlet): 7-point (6, -1) or 27-point (26, -1) stencil.
void poisson(problem& pb, int N, int points) {
  const int r = 1;
  const std::int64_t n = std::int64_t(N) * N * N;
  csr_matrix& m = pb.csr;
  m.n = static_cast<std::int32_t>(n);
  m.row_ptr.assign(n + 1, 0);
  auto count = [&](std::int64_t i) {
    const int x = i % N, y = (i / N) % N, z = i / (std::int64_t(N) * N);
    auto span = [&](int c) { return 1 + (c > 0) + (c < N - 1); };
    return points == 7 ? 1 + (x > 0) + (x < N - 1) + (y > 0) + (y < N - 1) + (z > 0) + (z < N - 1)
                       : span(x) * span(y) * span(z);
  };
  parallel_for(n, [&](std::int64_t i) { m.row_ptr[i + 1] = count(i); });
  for (std::int64_t i = 0; i < n; ++i) m.row_ptr[i + 1] += m.row_ptr[i];
  m.col.resize(m.row_ptr[n]);
  m.val.resize(m.row_ptr[n]);
  pb.diag = points == 7 ? 6.0 : 26.0;
  parallel_for(n, [&](std::int64_t i) {
    const int x = i % N, y = (i / N) % N, z = i / (std::int64_t(N) * N);
    std::int64_t e = m.row_ptr[i];
    for (int dz = -r; dz <= r; ++dz)
      for (int dy = -r; dy <= r; ++dy)
        for (int dx = -r; dx <= r; ++dx) {
          const int nz = std::abs(dx) + std::abs(dy) + std::abs(dz);
          if (points == 7 && nz > 1) continue;
          if (x + dx < 0 || x + dx >= N || y + dy < 0 || y + dy >= N || z + dz < 0 || z + dz >= N)
            continue;
          m.col[e] =
              static_cast<std::int32_t>(i + dx + std::int64_t(N) * (dy + std::int64_t(N) * dz));
          m.val[e] = nz == 0 ? pb.diag : -1.0;
          ++e;
        }
  });
  pb.sell = csr_to_sell(m);
  pb.name = std::to_string(points) + "-pt " + std::to_string(N) + "^3";
}

// 4 unknowns per node of an M^3 grid, 7-point node stencil, dense 4x4 blocks (SPD: diagonally
// dominant). Built as BCRS 4x4 and as the same matrix in CSR.
void block4(problem& pb, int M) {
  const std::int64_t nodes = std::int64_t(M) * M * M;
  bcrs_matrix& b = pb.bcrs;
  b.b = 4;
  b.n = static_cast<std::int32_t>(nodes * 4);
  b.n_block_rows = static_cast<std::int32_t>(nodes);
  b.row_ptr.assign(nodes + 1, 0);
  auto nbrs = [&](std::int64_t i, std::int64_t* out) {
    const int x = i % M, y = (i / M) % M, z = i / (std::int64_t(M) * M);
    int c = 0;
    const std::int64_t MM = std::int64_t(M) * M;
    if (z > 0) out[c++] = i - MM;
    if (y > 0) out[c++] = i - M;
    if (x > 0) out[c++] = i - 1;
    out[c++] = i;
    if (x < M - 1) out[c++] = i + 1;
    if (y < M - 1) out[c++] = i + M;
    if (z < M - 1) out[c++] = i + MM;
    return c;
  };
  parallel_for(nodes, [&](std::int64_t i) {
    std::int64_t t[7];
    b.row_ptr[i + 1] = nbrs(i, t);
  });
  for (std::int64_t i = 0; i < nodes; ++i) b.row_ptr[i + 1] += b.row_ptr[i];
  const std::int64_t nb = b.row_ptr[nodes];
  b.col.resize(nb);
  b.val.resize(nb * 16);
  pb.diag = 10.0;
  auto entry = [](bool self, int r, int c) {
    return self ? (r == c ? 10.0 : 0.5) : (r == c ? -1.0 : -0.1);
  };
  parallel_for(nodes, [&](std::int64_t i) {
    std::int64_t t[7];
    const int c = nbrs(i, t);
    for (int s = 0; s < c; ++s) {
      const std::int64_t blk = b.row_ptr[i] + s;
      b.col[blk] = static_cast<std::int32_t>(t[s]);
      for (int r = 0; r < 4; ++r)
        for (int cc = 0; cc < 4; ++cc) b.val[blk * 16 + r * 4 + cc] = entry(t[s] == i, r, cc);
    }
  });
  csr_matrix& m = pb.csr;
  m.n = b.n;
  m.row_ptr.assign(std::int64_t(b.n) + 1, 0);
  for (std::int64_t i = 0; i < nodes; ++i)
    for (int r = 0; r < 4; ++r)
      m.row_ptr[i * 4 + r + 1] = m.row_ptr[i * 4 + r] + 4 * (b.row_ptr[i + 1] - b.row_ptr[i]);
  m.col.resize(m.row_ptr[b.n]);
  m.val.resize(m.row_ptr[b.n]);
  parallel_for(nodes, [&](std::int64_t i) {
    for (int r = 0; r < 4; ++r) {
      std::int64_t e = m.row_ptr[i * 4 + r];
      for (std::int64_t s = b.row_ptr[i]; s < b.row_ptr[i + 1]; ++s)
        for (int cc = 0; cc < 4; ++cc) {
          m.col[e] = b.col[s] * 4 + cc;
          m.val[e] = b.val[s * 16 + r * 4 + cc];
          ++e;
        }
    }
  });
  pb.has_bcrs = true;
  pb.sell = csr_to_sell(pb.csr);
  pb.name = "4x4-node " + std::to_string(M) + "^3";
}

std::vector<double> rhs(std::int64_t n, int k) {
  std::vector<double> b(n * k);
  for (int j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < n; ++i) b[j * n + i] = 1.0 + 0.5 * std::sin(0.001 * i * (j + 1));
  return b;
}

// ‖b - A x‖ / ‖b‖ in double on the host (system 0).
double true_residual(const csr_matrix& a, const double* b, const double* x) {
  std::vector<double> num(a.n), den(a.n);
  parallel_for(a.n, [&](std::int64_t i) {
    double s = 0;
    for (std::int64_t e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) s += a.val[e] * x[a.col[e]];
    num[i] = (b[i] - s) * (b[i] - s);
    den[i] = b[i] * b[i];
  });
  double sn = 0, sd = 0;
  for (std::int32_t i = 0; i < a.n; ++i) sn += num[i], sd += den[i];
  return std::sqrt(sn / sd);
}

const char* pname(precision p) {
  return p == precision::f64 ? "double" : p == precision::f32 ? "single" : "mixed";
}

// ---- cnc (device_system)
// -------------------------------------------------------------------------

std::unique_ptr<backend> g_cnc;
double g_copy_bw = 0;  // bytes/s, read + write

struct cnc_run {
  std::unique_ptr<device_system> sys;
  std::vector<double> b, x0, thr2;
  int k = 1;
  std::string config;
};

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

// Solves to ‖r‖ <= tol ‖b‖ with a state read every 16 iterations: iterations, seconds, true
// residual of system 0.
struct solve_result {
  int iters = 0;
  double seconds = 0, true_res = 0;
  int status = 0;
};
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

// Minimum bytes of one iteration (see the top of the file).
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
  return mat + (11.0 * k + 2.0) * np * vs;
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
void row(const problem& pb, format f, precision p, bool with_baseline, double* base_t = nullptr) {
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
// matrix + p read + q write; update_xr = 7 vector passes; update_p = 4.
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
  const double mat = floor_bytes(pb, f, p, 1) - 13 * np * vs;
  const double floors[3] = {mat + 2 * np * vs, 7 * np * vs, 4 * np * vs};
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

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;
  std::string why;
  backend_options o;
  g_cnc = make_cuda_backend(o, why);
  if (!g_cnc) {
    std::printf("CUDA backend unavailable: %s\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_copy_bw = copy_bandwidth();
  std::printf("device: %s, %d SMs, L2 %d MiB; device-to-device copy (read+write): %.0f GB/s\n\n",
              g_cnc->device_name().c_str(), prop.multiProcessorCount, prop.l2CacheSize >> 20,
              g_copy_bw * 1e-9);

  const precision precs[] = {precision::f64, precision::f32, precision::mixed};
  std::vector<std::pair<int, int>> sizes = {{7, 46},  {7, 64},   {7, 128}, {7, 256},
                                            {27, 64}, {27, 128}, {27, 256}};
  if (quick) sizes = {{7, 46}, {27, 64}};

  std::printf(
      "## Time per iteration, k = 1 (floor = minimum bytes / copy bandwidth; * = a run "
      "stopped early)\n\n");
  header();
  for (auto [pts, N] : sizes) {
    problem pb;
    poisson(pb, N, pts);
    for (precision p : precs) {
      double tb = 0;
      row(pb, format::csr, p, true, &tb);
      row(pb, format::sell, p, false, &tb);
    }
  }
  {
    problem pb;
    block4(pb, quick ? 32 : 100);
    for (precision p : precs) {
      double tb = 0;
      row(pb, format::csr, p, true, &tb);
      row(pb, format::bcrs4, p, false, &tb);
      row(pb, format::sell, p, false, &tb);
    }
  }

  // Small systems: the persistent kernel (SELL, one cooperative launch per 16 iterations) against
  // the CUDA-graph path of the same SELL matrix and of CSR, and its blocks per SM.
  std::printf(
      "\n## Small systems: persistent kernel vs graphs (double, us/iter)\n\n"
      "| problem | n | csr graph | sell graph | sell persistent (auto grid) | 1 block/SM | "
      "2 blocks/SM | 4 blocks/SM | cuSPARSE | speed-up (persistent) |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::pair<int, int>> small = {{7, 24}, {7, 32}, {7, 46}, {7, 64}, {7, 80}, {27, 46}};
  if (quick) small = {{7, 32}, {7, 46}};
  for (auto [pts, N] : small) {
    problem pb;
    poisson(pb, N, pts);
    auto us = [&](format f, const char* rows, const char* per_sm, std::string* cfg) {
      setenv("CNC_CUDA_PERSISTENT_ROWS", rows, 1);
      if (per_sm) setenv("CNC_CUDA_PERSISTENT_BLOCKS_PER_SM", per_sm, 1);
      cnc_run r = make_cnc(pb, f, precision::f64, 1);
      unsetenv("CNC_CUDA_PERSISTENT_ROWS");
      unsetenv("CNC_CUDA_PERSISTENT_BLOCKS_PER_SM");
      bool ok;
      pick_iters(r);  // warm-up
      // iterate(16) + read_state: what the solver does per convergence check.
      std::vector<double> t;
      std::vector<rhs_state> st(1);
      for (int rep = 0; rep < 7; ++rep) {
        r.sys->set_vectors(r.b.data(), r.x0.data());
        r.sys->init(r.thr2.data());
        r.sys->read_state(st.data());
        const double t0 = now();
        for (int c = 0; c < 16; ++c) {
          r.sys->iterate(16);
          r.sys->read_state(st.data());
        }
        t.push_back((now() - t0) / 256);
        ok = st[0].iters == 256;
        if (!ok) std::printf("(stopped early at %d) ", st[0].iters);
      }
      std::sort(t.begin(), t.end());
      if (cfg) *cfg = r.config;
      return t[3] * 1e6;
    };
    std::string cfg;
    const double csr_g = us(format::csr, "0", nullptr, nullptr);
    const double sell_g = us(format::sell, "0", nullptr, nullptr);
    const double pers = us(format::sell, "1073741824", nullptr, &cfg);
    const double p1 = us(format::sell, "1073741824", "1", nullptr);
    const double p2 = us(format::sell, "1073741824", "2", nullptr);
    const double p4 = us(format::sell, "1073741824", "4", nullptr);
    const int bit = std::clamp(static_cast<int>(0.1 / (3 * pers * 1e-6)), 10, 300);
    const double tb = time_baseline<double>(pb, bit, 3) * 1e6;
    std::printf("| %s | %d | %.1f | %.1f | %.1f (%s) | %.1f | %.1f | %.1f | %.1f | %.2fx |\n",
                pb.name.c_str(), pb.csr.n, csr_g, sell_g, pers, cfg.c_str(), p1, p2, p4, tb,
                tb / pers);
    std::fflush(stdout);
  }

  // Sub-warp width sweep of the CSR kernel on the largest problems (double).
  std::printf(
      "\n## CSR lanes per row (double)\n\n| problem | width | ms/iter | %% of floor |\n"
      "|---|---|---|---|\n");
  for (auto [pts, N] :
       std::vector<std::pair<int, int>>{{7, quick ? 64 : 256}, {27, quick ? 64 : 256}}) {
    problem pb;
    poisson(pb, N, pts);
    for (int w : {2, 4, 8, 16, 32}) {
      if ((pts == 7 && w > 8) || (pts == 27 && (w < 4 || w > 16))) continue;
      setenv("CNC_CUDA_SPMV_WIDTH", std::to_string(w).c_str(), 1);
      cnc_run r = make_cnc(pb, format::csr, precision::f64, 1);
      unsetenv("CNC_CUDA_SPMV_WIDTH");
      const int iters = pick_iters(r);
      bool ok;
      const double t = time_cnc(r, iters, 3, ok);
      const double floor_t = floor_bytes(pb, format::csr, precision::f64, 1) / g_copy_bw;
      std::printf("| %s | %d | %.4f | %.1f%% |\n", pb.name.c_str(), w, t * 1e3, 100 * floor_t / t);
      std::fflush(stdout);
    }
  }

  std::printf(
      "\n## Steps timed alone: ms (%% of the step's floor)\n\n| problem | format | "
      "precision | spmv_dot | update_xr | update_p | |\n|---|---|---|---|---|---|---|\n");
  {
    problem pb;
    poisson(pb, quick ? 64 : 256, 7);
    for (precision p : precs) breakdown(pb, format::csr, p);
    for (precision p : precs) breakdown(pb, format::sell, p);
  }
  {
    problem pb;
    poisson(pb, quick ? 64 : 256, 27);
    breakdown(pb, format::csr, precision::f64);
    breakdown(pb, format::csr, precision::mixed);
    breakdown(pb, format::sell, precision::f64);
    breakdown(pb, format::sell, precision::mixed);
  }
  {
    problem pb;
    block4(pb, quick ? 32 : 100);
    breakdown(pb, format::bcrs4, precision::f64);
    breakdown(pb, format::csr, precision::f64);
  }

  // Mixed vs double to a fixed tolerance.
  const double tol = 1e-8;
  std::printf(
      "\n## Solve to ||r|| <= %g ||b|| (state read every 16 iterations)\n\n"
      "| problem | format | precision | iterations | s | ms/iter | true residual | "
      "time vs double |\n|---|---|---|---|---|---|---|---|\n",
      tol);
  std::vector<std::pair<int, int>> conv = {{7, 128}, {7, 256}, {27, 128}};
  if (quick) conv = {{7, 46}};
  for (auto [pts, N] : conv) {
    problem pb;
    poisson(pb, N, pts);
    for (format f : {format::csr, format::sell}) {
      double t64 = 0;
      for (precision p : {precision::f64, precision::mixed, precision::f32}) {
        cnc_run r = make_cnc(pb, f, p, 1);
        solve_cnc(r, pb, tol);  // warm-up
        const solve_result s = solve_cnc(r, pb, tol);
        if (p == precision::f64) t64 = s.seconds;
        std::printf("| %s | %s | %s | %d | %.4f | %.4f | %.2e | %.2fx |\n", pb.name.c_str(),
                    format_name(f), pname(p), s.iters, s.seconds,
                    s.seconds / std::max(1, s.iters) * 1e3, s.true_res, t64 / s.seconds);
        std::fflush(stdout);
      }
    }
  }
  {
    problem pb;
    block4(pb, quick ? 32 : 100);
    double t64 = 0;
    for (precision p : {precision::f64, precision::mixed}) {
      cnc_run r = make_cnc(pb, format::bcrs4, p, 1);
      solve_cnc(r, pb, tol);
      const solve_result s = solve_cnc(r, pb, tol);
      if (p == precision::f64) t64 = s.seconds;
      std::printf("| %s | bcrs4 | %s | %d | %.4f | %.4f | %.2e | %.2fx |\n", pb.name.c_str(),
                  pname(p), s.iters, s.seconds, s.seconds / std::max(1, s.iters) * 1e3, s.true_res,
                  t64 / s.seconds);
    }
  }

  // k = 8 right-hand sides in one system vs one system per right-hand side.
  std::printf(
      "\n## k = 8 right-hand sides vs 8 separate solves (time per iteration)\n\n"
      "| problem | format | precision | k=1 ms/iter | k=8 ms/iter | per-rhs speed-up | k=8 "
      "%% of floor |\n|---|---|---|---|---|---|---|\n");
  std::vector<std::pair<int, int>> ks = {{7, 128}, {7, 256}, {27, 128}};
  if (quick) ks = {{7, 46}};
  for (auto [pts, N] : ks) {
    problem pb;
    poisson(pb, N, pts);
    for (format f : {format::csr, format::sell})
      for (precision p : {precision::f64, precision::mixed}) {
        cnc_run r1 = make_cnc(pb, f, p, 1);
        bool ok1, ok8;
        const double t1 = time_cnc(r1, pick_iters(r1), 3, ok1);
        r1.sys.reset();
        cnc_run r8 = make_cnc(pb, f, p, 8);
        const double t8 = time_cnc(r8, std::max(64, pick_iters(r8)), 3, ok8);
        const double floor_t = floor_bytes(pb, f, p, 8) / g_copy_bw;
        std::printf("| %s | %s | %s | %.4f%s | %.4f%s | %.2fx | %.1f%% |\n", pb.name.c_str(),
                    format_name(f), pname(p), t1 * 1e3, ok1 ? "" : "*", t8 * 1e3, ok8 ? "" : "*",
                    8 * t1 / t8, 100 * floor_t / t8);
        std::fflush(stdout);
      }
  }
  g_cnc.reset();
  return 0;
}
