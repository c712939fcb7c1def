// bench_api's timed runs and the copy bandwidth (see api_runs.cuh).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "api_runs.cuh"
#include "textbook_pcg.cuh"

namespace api_bench {

using textbook::now;

void check(CNCstatus s, const char* what) {
  if (s != CNC_OK) {
    std::fprintf(stderr, "%s failed: %s\n", what, cncGetErrorMessage());
    std::exit(1);
  }
}

namespace {

std::string text(CNCenum what) {
  const char* s = nullptr;
  return cncGetString(what, &s) == CNC_OK && s ? s : "?";
}

}  // namespace

cnc_times run_cnc(const problem& p, const std::vector<double>& b, std::vector<double>& x,
                  double tol, int max_it, bool fresh, bool must_succeed) {
  check(cncSolverParameterd(CNC_THRESHOLD, tol), "threshold");
  check(cncSolverParameteri(CNC_MAX_ITERATIONS, max_it), "max iterations");
  if (fresh) {
    check(cncDisable(CNC_KEEP_MATRIX), "keep matrix off");
    check(cncEnable(CNC_KEEP_MATRIX), "keep matrix on");
  }
  std::fill(x.begin(), x.end(), 0.0);
  cnc_times t;
  const double t0 = now();
  t.status =
      cncSolveCSR(CNCuint(p.n), p.rp.data(), p.col.data(), p.val.data(), 0, 1, b.data(), x.data());
  t.total = now() - t0;
  if (t.status != CNC_OK) {
    if (must_succeed) check(t.status, "cncSolveCSR");
    std::fprintf(stderr, "%s: cncSolveCSR failed: %s\n", p.name.c_str(), cncGetErrorMessage());
    cncClearError();
    return t;
  }
  CNCint its = 0;
  cncGetDoublev(CNC_CONVERSION_TIME, &t.conversion);
  cncGetDoublev(CNC_UPLOAD_TIME, &t.upload);
  cncGetDoublev(CNC_SOLVE_TIME, &t.solve);
  cncGetIntegerv(CNC_USED_ITERATIONS, &its);
  t.iterations = its;
  t.format = text(CNC_FORMAT_NAME);
  t.backend = text(CNC_BACKEND_NAME);
  t.reason = text(CNC_REASON_NAME);
#ifdef CNC_ORDERING_NAME  // cnc with reordering (CNC_REORDER)
  t.ordering = text(CNC_ORDERING_NAME);
#endif
#ifdef CNC_CHOICE_REASON
  t.choice = text(CNC_CHOICE_REASON);
#endif
  return t;
}

// Device-to-device copy bandwidth in bytes per second: cudaMemcpy of 2 GiB from one device buffer
// to another, timed with events, median of 10 after 2 untimed; a copy reads and writes every
// byte, so it counts 2 x 2 GiB.
double copy_bandwidth() {
  const std::size_t bytes = std::size_t(2) << 30;
  void *a = nullptr, *b = nullptr;
  TB_CK(cudaMalloc(&a, bytes));
  TB_CK(cudaMalloc(&b, bytes));
  TB_CK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  TB_CK(cudaEventCreate(&e0));
  TB_CK(cudaEventCreate(&e1));
  std::vector<double> ms;
  for (int i = 0; i < 12; ++i) {
    TB_CK(cudaEventRecord(e0));
    TB_CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    TB_CK(cudaEventRecord(e1));
    TB_CK(cudaEventSynchronize(e1));
    float m = 0;
    TB_CK(cudaEventElapsedTime(&m, e0, e1));
    if (i >= 2) ms.push_back(m);
  }
  TB_CK(cudaEventDestroy(e0));
  TB_CK(cudaEventDestroy(e1));
  TB_CK(cudaFree(a));
  TB_CK(cudaFree(b));
  return 2.0 * double(bytes) / (median(ms) * 1e-3);
}

tb_times run_textbook(const problem& p, const std::vector<int>& rp32, const std::vector<double>& b,
                      std::vector<double>& x, double tol, int max_it, const std::vector<double>* b2,
                      const std::vector<double>* val2) {
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

}  // namespace api_bench
