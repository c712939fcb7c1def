// cuDSS (NVIDIA's sparse direct solver) through dlopen: Cholesky of a symmetric A (matrix type
// SPD, its upper triangle), LU of any other (type GENERAL), on one CUDA device: reordering and
// symbolic analysis, numerical factorization, kept; then each solve uploads b and downloads x
// (through device buffers kept with the factorization, grown when a solve needs more).
// cuDSS indexes with int: nnz at most 2^31 - 1. cuDSS 1.x only (libcudss.so.1: the header's
// cudssMatrixCreateCsr has the offset type that 0.7 and older lack). Its header (the
// nvidia-cudss-cu13 wheel's include folder) gives the types only; the CUDA runtime is libcnc's own
// (the static one).
#include "cnc.h"
#include "direct/direct.hpp"
#include "util/error.hpp"

#if defined(CNC_HAVE_CUDSS_H)

#include <cuda_runtime.h>
#include <cudss.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace cnc::direct {
namespace {

struct cudss_api {
  decltype(&cudssCreate) create = nullptr;
  decltype(&cudssDestroy) destroy = nullptr;
  decltype(&cudssConfigCreate) config_create = nullptr;
  decltype(&cudssConfigDestroy) config_destroy = nullptr;
  decltype(&cudssDataCreate) data_create = nullptr;
  decltype(&cudssDataDestroy) data_destroy = nullptr;
  decltype(&cudssDataGet) data_get = nullptr;
  decltype(&cudssMatrixCreateCsr) create_csr = nullptr;
  decltype(&cudssMatrixCreateDn) create_dense = nullptr;
  decltype(&cudssMatrixDestroy) matrix_destroy = nullptr;
  decltype(&cudssExecute) execute = nullptr;
  bool ok = false;
  std::string why;
};

// libcudss.so.1 needs libcublas.so.13 and libnvrtc.so.13, which the wheels put in one folder that
// is not on the loader's path: when CNC_CUDSS_LIBRARY names the file, its folder's copies are
// loaded first (global), so that the loader finds them by soname.
void preload_neighbours() {
  const std::optional<std::string> chosen = env::text(env::var::cudss_library);
  if (!chosen) return;
  const std::filesystem::path dir = std::filesystem::path(*chosen).parent_path();
  for (const char* dep : {"libcublasLt.so.13", "libcublas.so.13", "libnvrtc.so.13"}) {
    std::error_code ec;
    const std::filesystem::path p = dir / dep;
    if (std::filesystem::exists(p, ec)) dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
}

// Opened once per process, kept open; also needs a CUDA device.
const cudss_api& api() {
  static const cudss_api loaded = [] {
    cudss_api a;
    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
      a.why = std::string("no CUDA device (") +
              (e != cudaSuccess ? cudaGetErrorString(e) : "none found") + ")";
      cudaGetLastError();  // a missing driver is not an error of a later CUDA call
      return a;
    }
    preload_neighbours();
    void* lib = open_library(env::var::cudss_library, {"libcudss.so.1"},
                             "PyPI's nvidia-cudss-cu13: its nvidia/cu13/lib folder on "
                             "LD_LIBRARY_PATH, or CNC_CUDSS_LIBRARY naming libcudss.so.1",
                             a.why);
    if (!lib) return a;
    std::string& w = a.why;
    const char* l = "cuDSS";
    a.ok = resolve(lib, l, "cudssCreate", a.create, w) &&
           resolve(lib, l, "cudssDestroy", a.destroy, w) &&
           resolve(lib, l, "cudssConfigCreate", a.config_create, w) &&
           resolve(lib, l, "cudssConfigDestroy", a.config_destroy, w) &&
           resolve(lib, l, "cudssDataCreate", a.data_create, w) &&
           resolve(lib, l, "cudssDataDestroy", a.data_destroy, w) &&
           resolve(lib, l, "cudssDataGet", a.data_get, w) &&
           resolve(lib, l, "cudssMatrixCreateCsr", a.create_csr, w) &&
           resolve(lib, l, "cudssMatrixCreateDn", a.create_dense, w) &&
           resolve(lib, l, "cudssMatrixDestroy", a.matrix_destroy, w) &&
           resolve(lib, l, "cudssExecute", a.execute, w);
    return a;
  }();
  return loaded;
}

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();
  throw error(e == cudaErrorMemoryAllocation ? CNC_ERR_OUT_OF_MEMORY : CNC_ERR_DEVICE,
              std::string(": cuDSS: ") + what + ": " + cudaGetErrorString(e));
}

void check(cudssStatus_t s, const char* what) {
  if (s == CUDSS_STATUS_SUCCESS) return;
  throw error(
      s == CUDSS_STATUS_ALLOC_FAILED ? CNC_ERR_OUT_OF_MEMORY : CNC_ERR_INTERNAL,
      std::string(": cuDSS's ") + what + " failed (cuDSS status " + std::to_string(int(s)) + ")");
}

// Device memory of `count` elements of T, freed with the owner.
template <typename T>
struct device_array {
  T* p = nullptr;
  device_array() = default;
  explicit device_array(std::size_t count) {
    check_cuda(
        cudaMalloc(reinterpret_cast<void**>(&p), std::max<std::size_t>(count, 1) * sizeof(T)),
        "device memory");
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  device_array(device_array&& o) noexcept : p(o.p) { o.p = nullptr; }
  device_array& operator=(device_array&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  ~device_array() {
    if (p) cudaFree(p);
  }
};

class cudss_factorization final : public factorization {
 public:
  // `device` -1: the CUDA backend's default (CNC_CUDA_DEVICE, else 0). Always pinned: the
  // factor lives on that device, and a later solve may come with another device current.
  explicit cudss_factorization(int device)
      : device_(device >= 0 ? device : std::max(0, int(env::integer(env::var::cuda_device, 0)))) {
    select();
    try {
      check(api().create(&handle_), "cudssCreate");
      check(api().config_create(&config_), "cudssConfigCreate");
      check(api().data_create(handle_, &data_), "cudssDataCreate");
    } catch (...) {  // the destructor does not run for a constructor that throws
      release();
      throw;
    }
  }
  ~cudss_factorization() override {
    cudaSetDevice(device_);  // not select(): a destructor does not throw
    release();
  }
  cudss_factorization(const cudss_factorization&) = delete;
  cudss_factorization& operator=(const cudss_factorization&) = delete;

  // Analysis and numerical factorization; "" on success, else why there is none.
  std::string factor(const csr_view& a, bool symmetric, int& reason) {
    n_ = a.n;
    // cuDSS's int indices; a symmetric A as its upper triangle (the entries cuDSS reads).
    std::vector<int> rows(std::size_t(a.n) + 1, 0), cols;
    std::vector<double> vals;
    cols.reserve(std::size_t(symmetric ? (a.nnz() + a.n) / 2 : a.nnz()));
    vals.reserve(cols.capacity());
    for (std::int32_t i = 0; i < a.n; ++i) {
      for (std::int64_t t = a.row_ptr[std::size_t(i)]; t < a.row_ptr[std::size_t(i) + 1]; ++t) {
        if (symmetric && a.col[std::size_t(t)] < i) continue;
        cols.push_back(a.col[std::size_t(t)]);
        vals.push_back(a.val[std::size_t(t)]);
      }
      rows[std::size_t(i) + 1] = int(cols.size());
    }
    rows_ = device_array<int>(rows.size());
    cols_ = device_array<int>(cols.size());
    vals_ = device_array<double>(vals.size());
    check_cuda(cudaMemcpy(rows_.p, rows.data(), rows.size() * sizeof(int), cudaMemcpyHostToDevice),
               "upload");
    check_cuda(cudaMemcpy(cols_.p, cols.data(), cols.size() * sizeof(int), cudaMemcpyHostToDevice),
               "upload");
    check_cuda(
        cudaMemcpy(vals_.p, vals.data(), vals.size() * sizeof(double), cudaMemcpyHostToDevice),
        "upload");
    check(api().create_csr(&a_, a.n, a.n, std::int64_t(cols.size()), rows_.p, nullptr, cols_.p,
                           vals_.p, CUDA_R_32I, CUDA_R_32I, CUDA_R_64F,
                           symmetric ? CUDSS_MTYPE_SPD : CUDSS_MTYPE_GENERAL,
                           symmetric ? CUDSS_MVIEW_UPPER : CUDSS_MVIEW_FULL, CUDSS_BASE_ZERO),
          "cudssMatrixCreateCsr");
    // The phases need solution and right-hand-side descriptors; one column, never read here.
    device_array<double> scratch(2 * std::size_t(a.n));
    const dense x(scratch.p, a.n, 1), b(scratch.p + a.n, a.n, 1);
    check(api().execute(handle_, CUDSS_PHASE_ANALYSIS, config_, data_, a_, x.m, b.m), "analysis");
    check(api().execute(handle_, CUDSS_PHASE_FACTORIZATION, config_, data_, a_, x.m, b.m),
          "factorization");
    check_cuda(cudaDeviceSynchronize(), "factorization");
    int info = 0;
    std::size_t written = 0;
    check(api().data_get(handle_, data_, CUDSS_DATA_INFO, &info, sizeof info, &written),
          "cudssDataGet(INFO)");
    if (info != 0) {
      reason = symmetric ? CNC_REASON_INDEFINITE_MATRIX : CNC_REASON_BREAKDOWN;
      return std::string("cuDSS: ") +
             (symmetric ? "A is not positive definite" : "a zero pivot, A is singular") +
             " (cuDSS's info " + std::to_string(info) + ")";
    }
    return "";
  }

  void solve(int k, const double* b, double* x) override {
    select();
    const std::size_t len = std::size_t(n_) * std::size_t(k);
    // b and x kept for the next solve (a kept factorization serves many): made anew only when
    // more right-hand sides come, the old ones freed first to leave room for them.
    if (len > staged_) {
      staged_ = 0;
      b_ = device_array<double>(), x_ = device_array<double>();
      b_ = device_array<double>(len), x_ = device_array<double>(len);
      staged_ = len;
    }
    check_cuda(cudaMemcpy(b_.p, b, len * sizeof(double), cudaMemcpyHostToDevice), "upload of b");
    const dense xs(x_.p, n_, k), bs(b_.p, n_, k);
    check(api().execute(handle_, CUDSS_PHASE_SOLVE, config_, data_, a_, xs.m, bs.m), "solve");
    check_cuda(cudaMemcpy(x, x_.p, len * sizeof(double), cudaMemcpyDeviceToHost), "download of x");
  }

 private:
  // A column-major dense descriptor of device memory, destroyed with it.
  struct dense {
    cudssMatrix_t m = nullptr;
    dense(double* p, std::int32_t rows, int cols) {
      check(api().create_dense(&m, rows, cols, rows, p, CUDA_R_64F, CUDSS_LAYOUT_COL_MAJOR),
            "cudssMatrixCreateDn");
    }
    dense(const dense&) = delete;
    dense& operator=(const dense&) = delete;
    ~dense() { api().matrix_destroy(m); }
  };

  void select() const { check_cuda(cudaSetDevice(device_), "cudaSetDevice"); }
  void release() noexcept {
    if (a_) api().matrix_destroy(a_);
    if (data_) api().data_destroy(handle_, data_);
    if (config_) api().config_destroy(config_);
    if (handle_) api().destroy(handle_);
    a_ = nullptr, data_ = nullptr, config_ = nullptr, handle_ = nullptr;
  }

  int device_ = 0;
  std::int32_t n_ = 0;
  cudssHandle_t handle_ = nullptr;
  cudssConfig_t config_ = nullptr;
  cudssData_t data_ = nullptr;
  cudssMatrix_t a_ = nullptr;
  device_array<int> rows_, cols_;
  device_array<double> vals_;
  device_array<double> b_, x_;  // solve's right-hand sides and solutions, staged_ values each
  std::size_t staged_ = 0;
};

}  // namespace

bool cudss_loadable(std::string* why) {
  if (!api().ok && why) *why = api().why;
  return api().ok;
}

factored factor_with_cudss(const csr_view& a, bool symmetric, int device) {
  if (a.nnz() > INT_MAX)
    throw error(CNC_ERR_UNSUPPORTED, ": cuDSS indexes with int: A has " + std::to_string(a.nnz()) +
                                         " entries, more than 2^31 - 1");
  auto f = std::make_unique<cudss_factorization>(device);
  factored r;
  r.why = f->factor(a, symmetric, r.reason);
  if (r.why.empty()) r.f = std::move(f);
  return r;
}

}  // namespace cnc::direct

#else  // built without cudss.h or without the CUDA backend

namespace cnc::direct {

bool cudss_loadable(std::string* why) {
  if (why)
    *why =
        "this cnc was built without cuDSS's header (PyPI: nvidia-cudss-cu13; "
        "CNC_CUDSS_INCLUDE_DIR) or without the CUDA backend";
  return false;
}

factored factor_with_cudss(const csr_view&, bool, int) {
  throw error(CNC_ERR_UNSUPPORTED, ": this cnc was built without cuDSS");
}

}  // namespace cnc::direct

#endif
