#include "mpi/distributed_system.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <utility>

#include "cnc.h"
#include "solver/operator_system.hpp"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace cnc::mpi {

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  throw error(CNC_ERR_DEVICE,
              std::string(call) + " failed: " + std::string(text, std::size_t(len)));
}

namespace {

constexpr std::int64_t row_grain = std::int64_t(1) << 12;  // rows of one piece of a product

int comm_rank(MPI_Comm comm) {
  int r = 0;
  check_mpi(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
  return r;
}
int comm_size(MPI_Comm comm) {
  int s = 0;
  check_mpi(MPI_Comm_size(comm, &s), "MPI_Comm_size");
  return s;
}

// The halo exchange and the two blocks' products of one column: what the operator system calls
// as its matrix.
class halo_product {
 public:
  halo_product(MPI_Comm comm, const distributed_matrix& m, int threads)
      : comm_(comm),
        m_(m),
        threads_(threads),
        local_(csr_operator(m.local, threads)),
        halo_(std::size_t(m.halo_size)),
        send_(m.send_row.size()),
        requests_(m.recv_rank.size() + m.send_rank.size(), MPI_REQUEST_NULL) {}

  void apply(const double* x, double* y) {
    const std::size_t nr = m_.recv_rank.size(), ns = m_.send_rank.size();
    // Receives first, so that no message waits in an unexpected queue.
    for (std::size_t i = 0; i < nr; ++i)
      check_mpi(MPI_Irecv(halo_.data() + m_.recv_at[i], m_.recv_at[i + 1] - m_.recv_at[i],
                          MPI_DOUBLE, m_.recv_rank[i], tag, comm_, &requests_[i]),
                "MPI_Irecv");
    for (std::size_t t = 0; t < m_.send_row.size(); ++t) send_[t] = x[m_.send_row[t]];
    for (std::size_t i = 0; i < ns; ++i)
      check_mpi(MPI_Isend(send_.data() + m_.send_at[i], m_.send_at[i + 1] - m_.send_at[i],
                          MPI_DOUBLE, m_.send_rank[i], tag, comm_, &requests_[nr + i]),
                "MPI_Isend");
    local_(x, y);  // while the halo travels
    check_mpi(MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
    if (m_.halo_size == 0) return;
    const csr_matrix& h = m_.halo;
    parallel_pieces(m_.n, row_grain, threads_, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t e0 = h.row_ptr[std::size_t(r)], e1 = h.row_ptr[std::size_t(r) + 1];
        if (e0 == e1) continue;
        double s = 0.0;
        for (std::int64_t e = e0; e < e1; ++e)
          s += h.val[std::size_t(e)] * halo_[std::size_t(h.col[std::size_t(e)])];
        y[r] += s;
      }
    });
  }

 private:
  static constexpr int tag = 14;
  MPI_Comm comm_;
  const distributed_matrix& m_;
  int threads_;
  column_operator local_;
  std::vector<double> halo_, send_;
  std::vector<MPI_Request> requests_;
};

class distributed_system final : public device_system {
 public:
  distributed_system(MPI_Comm comm, const distributed_matrix& m, int k, bool jacobi, int threads,
                     std::int64_t* reductions)
      : k_(k),
        comm_(comm),
        size_(comm_size(comm)),
        reductions_(reductions),
        product_(std::make_unique<halo_product>(comm, m, threads)) {
    halo_product* hp = product_.get();
    column_operator a = [hp](const double* x, double* y) { hp->apply(x, y); };
    column_operator d;
    if (jacobi) {
      const double* inv = m.inv_diag.data();
      const std::int32_t n = m.n;
      d = [inv, n, threads](const double* r, double* z) {
        parallel_pieces(n, std::int64_t(1) << 14, threads,
                        [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                          for (std::int64_t i = i0; i < i1; ++i) z[i] = inv[i] * r[i];
                        });
      };
    }
    inner_ = make_operator_system(m.n, k, std::move(a), std::move(d), threads);
  }

  // Everything but the reductions is this process's rows: the operator system's.
  void set_vectors(const double* b, const double* x) override { inner_->set_vectors(b, x); }
  void init(const double* thr2) override { inner_->init(thr2); }
  void spmv_dot() override { inner_->spmv_dot(); }
  void update_xr() override { inner_->update_xr(); }
  void update_p() override { inner_->update_p(); }
  void read_state(rhs_state* out) override { inner_->read_state(out); }
  void get_x(double* x) override { inner_->get_x(x); }
  void apply(const double* x, double* y) override { inner_->apply(x, y); }
  int add_vectors(int count) override { return inner_->add_vectors(count); }
  void release_vectors() override { inner_->release_vectors(); }
  void set_mask(const std::uint8_t* active) override { inner_->set_mask(active); }
  void spmv(int in, int out) override { inner_->spmv(in, out); }
  void precondition(int in, int out) override { inner_->precondition(in, out); }
  void residual(int in, int out) override { inner_->residual(in, out); }
  void axpby(const double* alpha, int x, const double* beta, int y) override {
    inner_->axpby(alpha, x, beta, y);
  }
  void combine(const int* v, int count, const double* coef, const double* beta, int y) override {
    inner_->combine(v, count, coef, beta, y);
  }
  void read(int v, double* out) override { inner_->read(v, out); }

  // The local sums in their fixed order, then one collective for all of them.
  void dots(int u, const int* v, int count, double* out) override {
    inner_->dots(u, v, count, out);
    sum_over_ranks(out, count * k_);
  }
  void sum_over_ranks(double* values, int count) override {
    if (reductions_) ++*reductions_;
    if (count <= 0) return;
    gathered_.resize(std::size_t(count) * std::size_t(size_));
    check_mpi(MPI_Allgather(values, count, MPI_DOUBLE, gathered_.data(), count, MPI_DOUBLE, comm_),
              "MPI_Allgather");
    for (int i = 0; i < count; ++i) {
      double s = 0.0;
      for (int r = 0; r < size_; ++r) s += gathered_[std::size_t(r) * std::size_t(count) + i];
      values[i] = s;
    }
  }

 private:
  int k_;  // dots write count * k values
  MPI_Comm comm_;
  int size_;
  std::int64_t* reductions_;
  std::unique_ptr<halo_product> product_;  // before inner_: the operator system calls it
  std::unique_ptr<device_system> inner_;
  std::vector<double> gathered_;
};

}  // namespace

distributed_matrix split_rows(const csr_view& rows, const std::vector<std::int64_t>& starts, int me,
                              int threads) {
  const std::int64_t lo = starts[std::size_t(me)], hi = starts[std::size_t(me) + 1];
  distributed_matrix m;
  m.n = rows.n;
  const std::size_t n = std::size_t(rows.n);
  // The distinct columns other processes own, sorted: the halo, numbered in that order (so the
  // values from one process are contiguous, processes in rank order).
  std::vector<std::int32_t> halo_cols;
  for (std::int64_t e = 0; e < rows.nnz(); ++e) {
    const std::int32_t c = rows.col[std::size_t(e)];
    if (c < lo || c >= hi) halo_cols.push_back(c);
  }
  std::sort(halo_cols.begin(), halo_cols.end());
  halo_cols.erase(std::unique(halo_cols.begin(), halo_cols.end()), halo_cols.end());
  m.halo_size = std::int32_t(halo_cols.size());

  // The two blocks: row lengths, then entries (rows are sorted, so both blocks are too).
  m.local.n = m.halo.n = rows.n;
  m.local.row_ptr.assign(n + 1, 0);
  m.halo.row_ptr.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t in = 0;
    for (std::int64_t e = rows.row_ptr[i]; e < rows.row_ptr[i + 1]; ++e) {
      const std::int32_t c = rows.col[std::size_t(e)];
      in += (c >= lo && c < hi) ? 1 : 0;
    }
    m.local.row_ptr[i + 1] = m.local.row_ptr[i] + in;
    m.halo.row_ptr[i + 1] = m.halo.row_ptr[i] + (rows.row_ptr[i + 1] - rows.row_ptr[i] - in);
  }
  m.local.col.resize(std::size_t(m.local.row_ptr[n]));
  m.local.val.resize(std::size_t(m.local.row_ptr[n]));
  m.halo.col.resize(std::size_t(m.halo.row_ptr[n]));
  m.halo.val.resize(std::size_t(m.halo.row_ptr[n]));
  m.inv_diag.assign(n, 1.0);
  parallel_pieces(rows.n, row_grain, threads, [&](std::int64_t, std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0; i < r1; ++i) {
      std::int64_t l = m.local.row_ptr[std::size_t(i)], h = m.halo.row_ptr[std::size_t(i)];
      for (std::int64_t e = rows.row_ptr[std::size_t(i)]; e < rows.row_ptr[std::size_t(i) + 1];
           ++e) {
        const std::int32_t c = rows.col[std::size_t(e)];
        const double v = rows.val[std::size_t(e)];
        if (c >= lo && c < hi) {
          m.local.col[std::size_t(l)] = std::int32_t(c - lo), m.local.val[std::size_t(l)] = v;
          ++l;
          if (c - lo == i && std::fabs(v) >= DBL_MIN) m.inv_diag[std::size_t(i)] = 1.0 / v;
        } else {
          const auto at = std::lower_bound(halo_cols.begin(), halo_cols.end(), c);
          m.halo.col[std::size_t(h)] = std::int32_t(at - halo_cols.begin());
          m.halo.val[std::size_t(h)] = v;
          ++h;
        }
      }
    }
  });
  for (std::size_t i = 0; i < n; ++i) {  // as cnc's Jacobi: a zero diagonal counts as 1
    bool found = false;
    for (std::int64_t e = m.local.row_ptr[i]; e < m.local.row_ptr[i + 1]; ++e)
      found = found || (m.local.col[std::size_t(e)] == std::int32_t(i) &&
                        std::fabs(m.local.val[std::size_t(e)]) >= DBL_MIN);
    m.zero_diagonals += found ? 0 : 1;
  }
  m.halo_global = std::move(halo_cols);
  return m;
}

void plan_exchange(MPI_Comm comm, distributed_matrix& m, const std::vector<std::int64_t>& starts) {
  const int me = comm_rank(comm), size = comm_size(comm);
  const std::int64_t lo = starts[std::size_t(me)], hi = starts[std::size_t(me) + 1];
  const std::vector<std::int32_t>& halo_cols = m.halo_global;

  // Who needs what: halo values per owner (one all-to-all of counts), then the global indices
  // themselves (one all-to-all-v), which each owner turns into its rows to send.
  std::vector<int> need(std::size_t(size), 0), give(std::size_t(size), 0);
  for (const std::int32_t c : halo_cols) {
    const auto owner =
        std::upper_bound(starts.begin(), starts.end(), std::int64_t(c)) - starts.begin() - 1;
    ++need[std::size_t(owner)];
  }
  check_mpi(MPI_Alltoall(need.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm), "MPI_Alltoall");
  std::vector<int> need_at(std::size_t(size) + 1, 0), give_at(std::size_t(size) + 1, 0);
  for (int r = 0; r < size; ++r) {
    need_at[std::size_t(r) + 1] = need_at[std::size_t(r)] + need[std::size_t(r)];
    give_at[std::size_t(r) + 1] = give_at[std::size_t(r)] + give[std::size_t(r)];
  }
  std::vector<std::int32_t> asked(static_cast<std::size_t>(give_at[std::size_t(size)]));
  check_mpi(MPI_Alltoallv(halo_cols.data(), need.data(), need_at.data(), MPI_INT32_T, asked.data(),
                          give.data(), give_at.data(), MPI_INT32_T, comm),
            "MPI_Alltoallv");
  m.recv_at.push_back(0);
  m.send_at.push_back(0);
  for (int r = 0; r < size; ++r) {
    if (need[std::size_t(r)] > 0) {
      m.recv_rank.push_back(r);
      m.recv_at.push_back(need_at[std::size_t(r) + 1]);
    }
    if (give[std::size_t(r)] > 0) {
      m.send_rank.push_back(r);
      m.send_at.push_back(give_at[std::size_t(r) + 1]);
    }
  }
  m.send_row.resize(asked.size());
  for (std::size_t t = 0; t < asked.size(); ++t) {
    if (asked[t] < lo || asked[t] >= hi)
      throw error(CNC_ERR_INTERNAL, "a process asked for row " + std::to_string(asked[t]) +
                                        " that this one does not own");
    m.send_row[t] = std::int32_t(asked[t] - lo);
  }
}

std::unique_ptr<device_system> make_distributed_system(MPI_Comm comm, const distributed_matrix& m,
                                                       int k, bool jacobi, int threads,
                                                       std::int64_t* reductions) {
  return std::make_unique<distributed_system>(comm, m, k, jacobi, threads, reductions);
}

}  // namespace cnc::mpi
