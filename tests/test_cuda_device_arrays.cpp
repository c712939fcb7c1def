// cncSolveCSRDevice: a CSR, b and x in CUDA device memory, through the public API only.
//
// The answer is compared with cncSolveCSR on the same host arrays (the same backend and format:
// the same iterations and x to rounding) and with the test's own residual ‖b − A x‖ in double.
// Bad input (host memory, NaN, out-of-range columns, a CPU/BCRS/single/BiCGSTAB setting) must
// answer with its status and leave x untouched; so must arrays on another GPU than the context's
// (checked when two are present). Without a usable CUDA device the program exits
// 77 after saying why (CTest: skipped).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "cnc.h"

namespace {

int failures = 0;
#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

struct csr {
  CNCuint n = 0;
  std::vector<CNCint64> row_ptr;
  std::vector<CNCuint> col;
  std::vector<double> val;
};

// 7-point Laplacian on an m³ grid plus a small shift (SPD), natural order.
csr stencil(int m) {
  csr a;
  a.n = CNCuint(m) * m * m;
  a.row_ptr.push_back(0);
  for (int z = 0; z < m; ++z)
    for (int y = 0; y < m; ++y)
      for (int x = 0; x < m; ++x) {
        const long i = (long(z) * m + y) * m + x;
        auto add = [&](long j, double v) { a.col.push_back(CNCuint(j)), a.val.push_back(v); };
        if (z > 0) add(i - long(m) * m, -1);
        if (y > 0) add(i - m, -1);
        if (x > 0) add(i - 1, -1);
        add(i, 6.01);
        if (x + 1 < m) add(i + 1, -1);
        if (y + 1 < m) add(i + m, -1);
        if (z + 1 < m) add(i + long(m) * m, -1);
        a.row_ptr.push_back(CNCint64(a.col.size()));
      }
  return a;
}

template <class T>
struct dev_array {
  T* p = nullptr;
  std::size_t count = 0;
  explicit dev_array(const std::vector<T>& h) : count(h.size()) {
    if (cudaMalloc(&p, sizeof(T) * count) != cudaSuccess) std::abort();
    cudaMemcpy(p, h.data(), sizeof(T) * count, cudaMemcpyHostToDevice);
  }
  ~dev_array() { cudaFree(p); }
  std::vector<T> get() const {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), p, sizeof(T) * count, cudaMemcpyDeviceToHost);
    return h;
  }
  dev_array(const dev_array&) = delete;
  dev_array& operator=(const dev_array&) = delete;
};

struct dev_csr {
  dev_array<CNCint64> row_ptr;
  dev_array<CNCuint> col;
  dev_array<double> val;
  explicit dev_csr(const csr& a) : row_ptr(a.row_ptr), col(a.col), val(a.val) {}
};

// max_j ‖b_j − A x_j‖ / ‖b_j‖ in double (systems with b_j = 0: ‖x_j‖ instead).
double residual(const csr& a, int k, const std::vector<double>& b, const std::vector<double>& x) {
  double worst = 0;
  for (int j = 0; j < k; ++j) {
    double rr = 0, bb = 0, xx = 0;
    for (CNCuint i = 0; i < a.n; ++i) {
      double ax = 0;
      for (CNCint64 t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t)
        ax += a.val[t] * x[std::size_t(j) * a.n + a.col[t]];
      const double r = b[std::size_t(j) * a.n + i] - ax;
      rr += r * r, bb += b[std::size_t(j) * a.n + i] * b[std::size_t(j) * a.n + i];
      xx += x[std::size_t(j) * a.n + i] * x[std::size_t(j) * a.n + i];
    }
    worst = std::max(worst, bb > 0 ? std::sqrt(rr / bb) : std::sqrt(xx));
  }
  return worst;
}

std::vector<double> rhs(CNCuint n, int k) {
  std::vector<double> b(std::size_t(n) * k);
  for (std::size_t t = 0; t < b.size(); ++t) b[t] = std::sin(0.001 * double(t)) + 0.5;
  return b;
}

void new_context() {
  cncMakeCurrent(cncNewContext());
  cncSolverParameteri(CNC_BACKEND, CNC_BACKEND_CUDA);
  cncSolverParameterd(CNC_THRESHOLD, 1e-10);
}
void end_context() { cncDeleteContext(cncGetCurrent()); }

// Device solve against the host solve of the same system, and against the test's residual.
void same_as_host(const csr& a, int k, CNCenum format, int expect_format) {
  new_context();
  cncSolverParameteri(CNC_MATRIX_FORMAT, format);
  std::vector<double> b = rhs(a.n, k), x0(b.size(), 0.0);
  for (std::size_t t = 0; t < x0.size(); t += 7) x0[t] = 0.25;
  std::vector<double> xh = x0;
  CHECK(cncSolveCSR(a.n, a.row_ptr.data(), a.col.data(), a.val.data(), 0, CNCuint(k), b.data(),
                    xh.data()) == CNC_OK);
  CNCint it_host = 0, fmt_host = 0;
  cncGetIntegerv(CNC_USED_ITERATIONS, &it_host);
  cncGetIntegerv(CNC_FORMAT_USED, &fmt_host);
  dev_csr d(a);
  dev_array<double> db(b), dx(x0);
  CHECK(cncSolveCSRDevice(a.n, d.row_ptr.p, d.col.p, d.val.p, 0, CNCuint(k), db.p, dx.p) == CNC_OK);
  CNCint it = 0, fmt = 0, reason = 0, backend = 0;
  cncGetIntegerv(CNC_USED_ITERATIONS, &it);
  cncGetIntegerv(CNC_FORMAT_USED, &fmt);
  cncGetIntegerv(CNC_REASON, &reason);
  cncGetIntegerv(CNC_BACKEND_USED, &backend);
  const std::vector<double> x = dx.get();
  double diff = 0, scale = 0;
  for (std::size_t t = 0; t < x.size(); ++t)
    diff = std::max(diff, std::fabs(x[t] - xh[t])), scale = std::max(scale, std::fabs(xh[t]));
  std::printf(
      "  n=%u k=%d format %d: device %d its, host %d its, max|x_dev - x_host| = %.2e, "
      "residual %.2e\n",
      a.n, k, fmt, it, it_host, diff, residual(a, k, b, x));
  CHECK(reason == CNC_REASON_CONVERGED);
  CHECK(backend == CNC_BACKEND_CUDA);
  CHECK(fmt == expect_format && fmt_host == expect_format);
  CHECK(std::abs(it - it_host) <= 16);  // one convergence check apart at most
  CHECK(diff <= 1e-8 * scale);
  CHECK(residual(a, k, b, x) <= 2e-10);
  CHECK(db.get() == b);  // b is not written
  end_context();
}

void test_canonical() {
  std::printf("canonical CSR, converted on the device:\n");
  const csr a = stencil(40);  // 64000 rows
  same_as_host(a, 1, CNC_FORMAT_AUTO, CNC_FORMAT_SELL);
  same_as_host(a, 3, CNC_FORMAT_AUTO, CNC_FORMAT_SELL);
  same_as_host(a, 1, CNC_FORMAT_CSR, CNC_FORMAT_CSR);
}

// A 4-dof system: the 7-point stencil with a dense 4x4 block per stencil entry (the unknowns of
// a node coupled), n not a multiple of 4 so that the last block row is padded.
csr block_system(int m, int drop) {
  const csr s = stencil(m);
  const CNCuint n = s.n * 4 - CNCuint(drop);
  csr a;
  a.n = n;
  a.row_ptr.push_back(0);
  for (CNCuint node = 0; node < s.n; ++node)
    for (int u = 0; u < 4; ++u) {
      const CNCuint i = node * 4 + CNCuint(u);
      if (i >= n) break;
      for (CNCint64 t = s.row_ptr[node]; t < s.row_ptr[node + 1]; ++t)
        for (int w = 0; w < 4; ++w) {
          const CNCuint j = s.col[t] * 4 + CNCuint(w);
          if (j >= n) continue;
          const bool diag = s.col[t] == node;
          a.col.push_back(j);
          // Symmetric and strictly diagonally dominant (9.01 > 6 * 1.15 + 3 * 0.5): SPD.
          a.val.push_back(u == w ? s.val[t] + (diag ? 3.0 : 0.0) : diag ? 0.5 : 0.05 * s.val[t]);
        }
      a.row_ptr.push_back(CNCint64(a.col.size()));
    }
  return a;
}

// `a` with hub rows: row hubs[h] coupled (both ways, -0.01) to every strides[h]-th unknown, the
// diagonals raised to keep strict dominance. Block row 0 then holds thousands of entries (the
// device counts such block rows by entries, not with one thread merging them).
csr with_hubs(const csr& a, std::vector<CNCuint> hubs, std::vector<CNCuint> strides) {
  std::vector<std::vector<std::pair<CNCuint, double>>> rows(a.n);
  for (CNCuint i = 0; i < a.n; ++i)
    for (CNCint64 t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t)
      rows[i].emplace_back(a.col[t], a.val[t]);
  auto add = [&](CNCuint i, CNCuint j, double v) {
    for (auto& [c, w] : rows[i])
      if (c == j) return void(w += v);
    rows[i].emplace_back(j, v);
  };
  for (std::size_t h = 0; h < hubs.size(); ++h)
    for (CNCuint j = 0; j < a.n; j += strides[h]) {
      if (j == hubs[h]) continue;
      add(hubs[h], j, -0.01), add(j, hubs[h], -0.01);
      add(hubs[h], hubs[h], 0.02), add(j, j, 0.02);
    }
  csr b;
  b.n = a.n;
  b.row_ptr.push_back(0);
  for (auto& r : rows) {
    std::sort(r.begin(), r.end());
    for (const auto& [c, v] : r) b.col.push_back(c), b.val.push_back(v);
    b.row_ptr.push_back(CNCint64(b.col.size()));
  }
  return b;
}

void blocks_built_on_the_device(const csr& a) {
  csr one = a;
  for (auto& r : one.row_ptr) ++r;
  for (auto& c : one.col) ++c;
  for (CNCenum f : {CNC_FORMAT_BCRS2, CNC_FORMAT_BCRS4, CNC_FORMAT_AUTO}) {
    new_context();
    cncSolverParameteri(CNC_MATRIX_FORMAT, f);
    std::vector<double> b = rhs(a.n, 1), xh(a.n, 0.0);
    CHECK(cncSolveCSR(a.n, one.row_ptr.data(), one.col.data(), one.val.data(), 1, 1, b.data(),
                      xh.data()) == CNC_OK);  // host conversion
    CNCint it_host = 0, fmt_host = 0;
    cncGetIntegerv(CNC_USED_ITERATIONS, &it_host);
    cncGetIntegerv(CNC_FORMAT_USED, &fmt_host);
    // What the device reports of its build (stored blocks, padding) gives the host's statistics.
    double fill_host = 0, bytes_host = 0;
    cncGetDoublev(CNC_BLOCK_FILL_RATIO, &fill_host);
    cncGetDoublev(CNC_BYTES_PER_ITERATION, &bytes_host);
    std::vector<double> xi(a.n, 0.0);
    CHECK(cncSolveCSR(a.n, a.row_ptr.data(), a.col.data(), a.val.data(), 0, 1, b.data(),
                      xi.data()) == CNC_OK);  // uploaded as it is, converted on the device
    CNCint fmt_intake = 0;
    cncGetIntegerv(CNC_FORMAT_USED, &fmt_intake);
    double fill = 0, bytes = 0;
    cncGetDoublev(CNC_BLOCK_FILL_RATIO, &fill);
    cncGetDoublev(CNC_BYTES_PER_ITERATION, &bytes);
    CHECK(fill == fill_host && bytes == bytes_host);
    dev_csr d(a);
    dev_array<double> db(b), dx(std::vector<double>(a.n, 0.0));
    const CNCstatus st = cncSolveCSRDevice(a.n, d.row_ptr.p, d.col.p, d.val.p, 0, 1, db.p, dx.p);
    CNCint it = 0, fmt = 0, reason = 0;
    cncGetIntegerv(CNC_USED_ITERATIONS, &it);
    cncGetIntegerv(CNC_FORMAT_USED, &fmt);
    cncGetIntegerv(CNC_REASON, &reason);
    CHECK(reason == CNC_REASON_CONVERGED);
    const std::vector<double> x = dx.get();
    double diff = 0, diff_i = 0;
    for (CNCuint t = 0; t < a.n; ++t)
      diff = std::max(diff, std::fabs(x[t] - xh[t])),
      diff_i = std::max(diff_i, std::fabs(xi[t] - xh[t]));
    std::printf(
        "  format %d (host %d, intake %d): %d its (host %d), max|x_dev - x_host| = %.2e, "
        "intake %.2e, residual %.2e\n",
        fmt, fmt_host, fmt_intake, it, it_host, diff, diff_i, residual(a, 1, b, x));
    CHECK(st == CNC_OK);
    if (f != CNC_FORMAT_AUTO) CHECK(fmt == f && fmt_host == f && fmt_intake == f);
    CHECK(fmt_intake == fmt_host);  // the device's block counts give the host's choice
    CHECK(std::abs(it - it_host) <= 16);
    CHECK(diff_i == 0.0);  // same layout, same kernels: same bits
    CHECK(residual(a, 1, b, x) <= 2e-10);
    end_context();
  }
}

void test_blocks_built_on_the_device() {
  std::printf("BCRS built on the device, against the host's BCRS (1-based input):\n");
  blocks_built_on_the_device(block_system(20, 3));
  std::printf("the same with hub rows (block row 0: over 9000 entries):\n");
  blocks_built_on_the_device(with_hubs(block_system(20, 3), {0, 1, 2}, {7, 5, 11}));
}

// An assembled system goes through the same device intake; the prepared matrix is reused by
// the next solve, and re-made when a method needs the host diagonal (BiCGSTAB, GMRES).
void test_assembled_solves_in_turn() {
  std::printf("assembled system, CG then BiCGSTAB then GMRES then CG:\n");
  const csr a = stencil(40);
  new_context();
  cncSolverParameteri(CNC_NB_VARIABLES, CNCint(a.n));
  cncBegin(CNC_SYSTEM);
  cncBegin(CNC_MATRIX);
  std::vector<CNCuint> rows;
  for (CNCuint i = 0; i < a.n; ++i)
    for (CNCint64 t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t) rows.push_back(i);
  CHECK(cncAddIJCoefficients(CNCint64(rows.size()), rows.data(), a.col.data(), a.val.data()) ==
        CNC_OK);
  const std::vector<double> b = rhs(a.n, 1);
  for (CNCuint i = 0; i < a.n; ++i) cncAddIRightHandSide(i, b[i]);
  cncEnd(CNC_MATRIX);
  cncEnd(CNC_SYSTEM);
  for (CNCenum solver : {CNC_CG, CNC_BICGSTAB, CNC_GMRES, CNC_CG}) {
    cncSolverParameteri(CNC_SOLVER, solver);
    for (CNCuint i = 0; i < a.n; ++i) cncSetVariable(i, 0.0);
    CHECK(cncSolve() == CNC_OK);
    std::vector<double> x(a.n);
    for (CNCuint i = 0; i < a.n; ++i) cncGetVariable(i, &x[i]);
    CNCint reason = 0, backend = 0;
    double conversion = -1;
    cncGetIntegerv(CNC_REASON, &reason);
    cncGetIntegerv(CNC_BACKEND_USED, &backend);
    cncGetDoublev(CNC_UPLOAD_TIME, &conversion);
    std::printf("  solver 0x%x: reason 0x%x, upload %.4f s, residual %.2e\n", solver, reason,
                conversion, residual(a, 1, b, x));
    CHECK(reason == CNC_REASON_CONVERGED && backend == CNC_BACKEND_CUDA);
    CHECK(residual(a, 1, b, x) <= 1e-9);
  }
  end_context();
}

void test_fallbacks() {
  std::printf("non-canonical CSR (through the host), 1-based and unsorted:\n");
  const csr a = stencil(24);
  csr one = a;  // 1-based
  for (auto& r : one.row_ptr) ++r;
  for (auto& c : one.col) ++c;
  new_context();
  std::vector<double> b = rhs(a.n, 1), x(a.n, 0.0);
  dev_csr d(one);
  dev_array<double> db(b), dx(x);
  CHECK(cncSolveCSRDevice(a.n, d.row_ptr.p, d.col.p, d.val.p, 1, 1, db.p, dx.p) == CNC_OK);
  CHECK(residual(a, 1, b, dx.get()) <= 2e-10);
  end_context();
  csr rev = a;  // every row's entries reversed
  for (CNCuint i = 0; i < a.n; ++i) {
    std::reverse(rev.col.begin() + rev.row_ptr[i], rev.col.begin() + rev.row_ptr[i + 1]);
    std::reverse(rev.val.begin() + rev.row_ptr[i], rev.val.begin() + rev.row_ptr[i + 1]);
  }
  new_context();
  dev_csr dr(rev);
  dev_array<double> dx2(x);
  CHECK(cncSolveCSRDevice(a.n, dr.row_ptr.p, dr.col.p, dr.val.p, 0, 1, db.p, dx2.p) == CNC_OK);
  CHECK(residual(a, 1, b, dx2.get()) <= 2e-10);
  end_context();
}

void test_zero_rhs() {
  std::printf("a zero right-hand side gives x = 0 for that system only:\n");
  const csr a = stencil(30);
  new_context();
  std::vector<double> b = rhs(a.n, 2), x(b.size(), 1.0);
  std::fill(b.begin() + a.n, b.end(), 0.0);  // system 1: b = 0, x0 = 1
  dev_csr d(a);
  dev_array<double> db(b), dx(x);
  CHECK(cncSolveCSRDevice(a.n, d.row_ptr.p, d.col.p, d.val.p, 0, 2, db.p, dx.p) == CNC_OK);
  const std::vector<double> xs = dx.get();
  bool zero = true;
  for (CNCuint i = 0; i < a.n; ++i) zero = zero && xs[a.n + i] == 0.0;
  CHECK(zero);
  CHECK(residual(a, 2, b, xs) <= 2e-10);
  std::vector<double> z(b.size(), 0.0);
  dev_array<double> dz(z);
  CHECK(cncSolveCSRDevice(a.n, d.row_ptr.p, d.col.p, d.val.p, 0, 2, dz.p, dx.p) == CNC_OK);
  CHECK(dx.get() == z);
  end_context();
}

// One bad call: the expected status, and x unchanged.
void expect_error(const char* what, CNCstatus want, const csr& a, const CNCint64* rp,
                  const CNCuint* col, const double* val, int base, const double* b, double* x,
                  const dev_array<double>& dx) {
  const std::vector<double> before = dx.get();
  const CNCstatus got = cncSolveCSRDevice(a.n, rp, col, val, base, 1, b, x);
  std::printf("  %-34s -> %s\n", what, cncGetLastErrorMessage());
  CHECK(got == want);
  CHECK(dx.get() == before);
  cncClearError();
}

void test_bad_input() {
  std::printf("bad input answered with a status, x unchanged:\n");
  const csr a = stencil(24);
  std::vector<double> b = rhs(a.n, 1), x(a.n, 0.5);
  dev_csr d(a);
  dev_array<double> db(b), dx(x);
  new_context();
  expect_error("b in host memory", CNC_ERR_INVALID_VALUE, a, d.row_ptr.p, d.col.p, d.val.p, 0,
               b.data(), dx.p, dx);
  expect_error("row_ptr in host memory", CNC_ERR_INVALID_VALUE, a, a.row_ptr.data(), d.col.p,
               d.val.p, 0, db.p, dx.p, dx);
  std::vector<double> nb = b;
  nb[123] = NAN;
  dev_array<double> dnb(nb);
  expect_error("NaN in b", CNC_ERR_NOT_FINITE, a, d.row_ptr.p, d.col.p, d.val.p, 0, dnb.p, dx.p,
               dx);
  csr bad = a;
  bad.val[77] = INFINITY;
  dev_csr dbad(bad);
  expect_error("Inf in values", CNC_ERR_NOT_FINITE, a, dbad.row_ptr.p, dbad.col.p, dbad.val.p, 0,
               db.p, dx.p, dx);
  csr oob = a;
  oob.col[100] = a.n + 5;
  dev_csr doob(oob);
  expect_error("column out of range", CNC_ERR_INDEX_OUT_OF_RANGE, a, doob.row_ptr.p, doob.col.p,
               doob.val.p, 0, db.p, dx.p, dx);
  csr dec = a;
  dec.row_ptr[50] = dec.row_ptr[52];
  dev_csr ddec(dec);
  expect_error("row_ptr decreasing", CNC_ERR_INVALID_VALUE, a, ddec.row_ptr.p, ddec.col.p,
               ddec.val.p, 0, db.p, dx.p, dx);
  expect_error("base 1 with 0-based arrays", CNC_ERR_INVALID_VALUE, a, d.row_ptr.p, d.col.p,
               d.val.p, 1, db.p, dx.p, dx);
  const std::pair<CNCenum, CNCint> settings[] = {
      {CNC_BACKEND, CNC_BACKEND_CPU}, {CNC_PRECISION, CNC_SINGLE}, {CNC_SOLVER, CNC_BICGSTAB}};
  for (const auto& [p, v] : settings) {
    new_context();
    cncSolverParameteri(p, v);
    expect_error("unsupported setting", CNC_ERR_INVALID_VALUE, a, d.row_ptr.p, d.col.p, d.val.p, 0,
                 db.p, dx.p, dx);
    end_context();
  }
  end_context();
}

// Arrays on a second GPU: refused, naming that device, while the context runs on device 0 (x
// untouched); solved with CNC_DEVICE_INDEX = 1. Skipped (said) with one GPU.
void test_other_device(int count) {
  if (count < 2) {
    std::printf("arrays on another GPU: SKIP (%d CUDA device)\n", count);
    return;
  }
  std::printf("arrays on another GPU:\n");
  const csr a = stencil(12);
  const std::vector<double> b = rhs(a.n, 1), x0(b.size(), 0.0);
  cudaSetDevice(1);
  {
    dev_csr d(a);
    dev_array<double> db(b), dx(x0);
    new_context();  // CNC_DEVICE_INDEX 0
    expect_error("arrays on device 1, cnc on 0", CNC_ERR_INVALID_VALUE, a, d.row_ptr.p, d.col.p,
                 d.val.p, 0, db.p, dx.p, dx);
    cncSolveCSRDevice(a.n, d.row_ptr.p, d.col.p, d.val.p, 0, 1, db.p, dx.p);
    CHECK(std::strstr(cncGetLastErrorMessage(), "device 1") != nullptr);
    end_context();
    new_context();
    cncSolverParameteri(CNC_DEVICE_INDEX, 1);
    CHECK(cncSolveCSRDevice(a.n, d.row_ptr.p, d.col.p, d.val.p, 0, 1, db.p, dx.p) == CNC_OK);
    const double r = residual(a, 1, b, dx.get());
    std::printf("  CNC_DEVICE_INDEX 1: residual %.2e\n", r);
    CHECK(r <= 2e-10);
    end_context();
  }
  cudaSetDevice(0);
}

}  // namespace

int main() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0 || !cncBackendAvailable(CNC_BACKEND_CUDA)) {
    std::printf("SKIP: no usable CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cnc's CUDA backend unavailable");
    return 77;
  }
  test_canonical();
  test_blocks_built_on_the_device();
  test_assembled_solves_in_turn();
  test_fallbacks();
  test_zero_rhs();
  test_bad_input();
  test_other_device(count);
  std::printf(failures ? "FAILED: %d check(s)\n" : "all checks passed\n", failures);
  return failures ? 1 : 0;
}
