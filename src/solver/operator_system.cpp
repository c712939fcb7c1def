#include "solver/operator_system.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "cnc.h"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace cnc {

namespace {

constexpr std::int64_t grain = std::int64_t(1) << 14;  // rows of one piece of a vector operation

class operator_system final : public device_system {
 public:
  operator_system(std::int32_t n, int k, column_operator a, column_operator m, int threads)
      : n_(n),
        k_(k),
        a_(std::move(a)),
        m_(std::move(m)),
        threads_(host_threads(threads)),
        mask_(std::size_t(k), 1) {
    vecs_.resize(vec_first_extra);
    for (auto& v : vecs_) v.assign(len(), 0.0);
  }

  void set_vectors(const double* b, const double* x) override {
    std::copy(b, b + len(), vecs_[vec_b].begin());
    if (x)
      std::copy(x, x + len(), vecs_[vec_x].begin());
    else
      std::fill(vecs_[vec_x].begin(), vecs_[vec_x].end(), 0.0);
  }
  // The fused steps need the matrix in the backend's hands; no method calls them here.
  void init(const double*) override { no_steps(); }
  void spmv_dot() override { no_steps(); }
  void update_xr() override { no_steps(); }
  void update_p() override { no_steps(); }
  void read_state(rhs_state*) override { no_steps(); }
  void get_x(double* x) override { std::copy(vecs_[vec_x].begin(), vecs_[vec_x].end(), x); }
  void apply(const double* x, double* y) override {
    for (int j = 0; j < k_; ++j) a_(x + col(j), y + col(j));
  }

  int add_vectors(int count) override {
    const int first = int(vecs_.size());
    for (int i = 0; i < count; ++i) vecs_.emplace_back(len(), 0.0);
    return first;
  }
  void release_vectors() override { vecs_.resize(vec_first_extra); }
  void set_mask(const std::uint8_t* active) override { mask_.assign(active, active + k_); }
  void spmv(int in, int out) override {
    for (int j = 0; j < k_; ++j)
      if (mask_[std::size_t(j)]) a_(v(in) + col(j), v(out) + col(j));
  }
  void precondition(int in, int out) override {
    for (int j = 0; j < k_; ++j) {
      if (!mask_[std::size_t(j)]) continue;
      if (m_)
        m_(v(in) + col(j), v(out) + col(j));
      else
        std::memcpy(v(out) + col(j), v(in) + col(j), sizeof(double) * std::size_t(n_));
    }
  }
  void residual(int in, int out) override {
    spmv(in, out);
    for (int j = 0; j < k_; ++j) {
      if (!mask_[std::size_t(j)]) continue;
      const double* b = v(vec_b) + col(j);
      double* o = v(out) + col(j);
      pieces([&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) o[r] = b[r] - o[r];
      });
    }
  }
  void dots(int u, const int* w, int count, double* out) override {
    const std::int64_t pieces = piece_count(n_, grain);
    std::vector<double> part(static_cast<std::size_t>(pieces));
    for (int i = 0; i < count; ++i)
      for (int j = 0; j < k_; ++j) {
        double& res = out[std::size_t(i) * std::size_t(k_) + std::size_t(j)];
        res = 0.0;
        if (!mask_[std::size_t(j)]) continue;
        const double* x = v(u) + col(j);
        const double* y = v(w[i]) + col(j);
        parallel_pieces(n_, grain, threads_,
                        [&](std::int64_t piece, std::int64_t r0, std::int64_t r1) {
                          // Four running sums, combined in a fixed order: vectorizable, and
                          // the same bits for any thread count.
                          double s[4] = {0.0, 0.0, 0.0, 0.0};
                          std::int64_t r = r0;
                          for (; r + 4 <= r1; r += 4)
                            for (int l = 0; l < 4; ++l) s[l] += x[r + l] * y[r + l];
                          for (; r < r1; ++r) s[0] += x[r] * y[r];
                          part[std::size_t(piece)] = (s[0] + s[1]) + (s[2] + s[3]);
                        });
        for (const double s : part) res += s;  // pieces in order: the same bits for any threads
      }
  }
  void axpby(const double* alpha, int x, const double* beta, int y) override {
    for (int j = 0; j < k_; ++j) {
      if (!mask_[std::size_t(j)]) continue;
      const double al = alpha[j], be = beta[j];
      const double* xs = v(x) + col(j);
      double* ys = v(y) + col(j);
      pieces([&](std::int64_t r0, std::int64_t r1) {
        if (be == 0.0)  // overwrites: NaN in y does not survive
          for (std::int64_t r = r0; r < r1; ++r) ys[r] = al * xs[r];
        else
          for (std::int64_t r = r0; r < r1; ++r) ys[r] = al * xs[r] + be * ys[r];
      });
    }
  }
  void combine(const int* w, int count, const double* coef, const double* beta, int y) override {
    for (int j = 0; j < k_; ++j) {
      if (!mask_[std::size_t(j)]) continue;
      const double be = beta[j];
      double* ys = v(y) + col(j);
      std::vector<const double*> src(static_cast<std::size_t>(count));
      std::vector<double> c(static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i)
        src[std::size_t(i)] = v(w[i]) + col(j),
        c[std::size_t(i)] = coef[std::size_t(i) * std::size_t(k_) + std::size_t(j)];
      pieces([&](std::int64_t r0, std::int64_t r1) {
        if (be == 0.0)
          for (std::int64_t r = r0; r < r1; ++r) ys[r] = 0.0;
        else if (be != 1.0)
          for (std::int64_t r = r0; r < r1; ++r) ys[r] *= be;
        for (int i = 0; i < count; ++i) {  // summed in i order, as the contract says
          const double ci = c[std::size_t(i)];
          const double* si = src[std::size_t(i)];
          for (std::int64_t r = r0; r < r1; ++r) ys[r] += ci * si[r];
        }
      });
    }
  }
  void read(int w, double* out) override { std::copy(vecs_[w].begin(), vecs_[w].end(), out); }
  // Cross-column products: every pair of columns in one pass over fixed pieces of rows, the
  // pieces' partials summed in piece order (the same bits for any thread count).
  void block_dots(int u, int w, double* out) override {
    const std::size_t ks = std::size_t(k_), width = ks * ks;
    std::vector<double> part(std::size_t(piece_count(n_, grain)) * width, 0.0);
    const double *x = v(u), *y = v(w);
    parallel_pieces(n_, grain, threads_, [&](std::int64_t piece, std::int64_t r0, std::int64_t r1) {
      double* p = part.data() + std::size_t(piece) * width;
      for (std::size_t j = 0; j < ks; ++j) {
        if (!mask_[j]) continue;
        const double* yj = y + col(int(j));
        for (std::size_t i = 0; i < ks; ++i) {
          const double* xi = x + col(int(i));
          double s = 0.0;
          for (std::int64_t r = r0; r < r1; ++r) s += xi[r] * yj[r];
          p[i * ks + j] = s;
        }
      }
    });
    for (std::size_t e = 0; e < width; ++e) {
      double s = 0.0;
      for (std::size_t c = 0; c < part.size() / width; ++c) s += part[c * width + e];
      out[e] = s;
    }
  }
  void block_combine(int w, const double* coef, const double* beta, int y) override {
    if (w == y) throw error(CNC_ERR_INVALID_VALUE, ": block_combine into its input");
    const std::size_t ks = std::size_t(k_);
    for (std::size_t j = 0; j < ks; ++j) {
      if (!mask_[j]) continue;
      const double be = beta[j];
      double* ys = v(y) + col(int(j));
      pieces([&](std::int64_t r0, std::int64_t r1) {
        if (be == 0.0)
          for (std::int64_t r = r0; r < r1; ++r) ys[r] = 0.0;
        else if (be != 1.0)
          for (std::int64_t r = r0; r < r1; ++r) ys[r] *= be;
        for (std::size_t i = 0; i < ks; ++i) {  // in i order; zero coefficients skipped
          const double ci = coef[i * ks + j];
          if (ci == 0.0) continue;
          const double* si = v(w) + col(int(i));
          for (std::int64_t r = r0; r < r1; ++r) ys[r] += ci * si[r];
        }
      });
    }
  }

 private:
  [[noreturn]] static void no_steps() {
    throw error(CNC_ERR_INTERNAL, "an operator system runs the vector surface only");
  }
  std::size_t len() const { return std::size_t(n_) * std::size_t(k_); }
  std::size_t col(int j) const { return std::size_t(j) * std::size_t(n_); }
  double* v(int i) { return vecs_[std::size_t(i)].data(); }
  // f(r0, r1) over the rows of one column in fixed pieces, on the host's cores.
  template <class F>
  void pieces(F&& f) {
    parallel_pieces(n_, grain, threads_,
                    [&](std::int64_t, std::int64_t r0, std::int64_t r1) { f(r0, r1); });
  }

  std::int32_t n_;
  int k_;
  column_operator a_, m_;
  int threads_;
  std::vector<std::uint8_t> mask_;
  std::vector<std::vector<double>> vecs_;
};

}  // namespace

std::unique_ptr<device_system> make_operator_system(std::int32_t n, int k, column_operator a,
                                                    column_operator m, int threads) {
  return std::make_unique<operator_system>(n, k, std::move(a), std::move(m), threads);
}

column_operator csr_operator(const csr_view& a, int threads) {
  const int workers = host_threads(threads);
  return [a, workers](const double* x, double* y) {
    parallel_pieces(
        a.n, std::int64_t(1) << 12, workers, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
          for (std::int64_t r = r0; r < r1; ++r) {
            double s = 0.0;
            for (std::int64_t e = a.row_ptr[std::size_t(r)]; e < a.row_ptr[std::size_t(r) + 1]; ++e)
              s += a.val[std::size_t(e)] * x[a.col[std::size_t(e)]];
            y[r] = s;
          }
        });
  };
}

}  // namespace cnc
