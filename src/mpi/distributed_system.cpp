#include "mpi/distributed_system.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <string>
#include <utility>

#include "cnc.h"
#include "conversion/convert.hpp"
#include "mpi/api_mpi_internal.hpp"
#include "mpi/nccl_halo.hpp"
#include "pipeline/pipeline.hpp"
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

mpi_doubles::mpi_doubles(int count) {
  check_mpi(MPI_Type_contiguous(count, MPI_DOUBLE, &type_), "MPI_Type_contiguous");
  if (const int code = MPI_Type_commit(&type_); code != MPI_SUCCESS) {
    MPI_Type_free(&type_);
    check_mpi(code, "MPI_Type_commit");
  }
}
mpi_doubles::~mpi_doubles() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
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

// The system of one process: the backend's system over the local block (its vectors, vector
// surface and SpMV), whose halo operations (backend.hpp) gather the rows other processes read and
// add the halo block's product. A process that owns no rows has an empty operator system instead.
class distributed_system final : public device_system {
 public:
  distributed_system(MPI_Comm comm, const distributed_matrix& m, int k, bool jacobi, backend* be,
                     int threads, std::int64_t* reductions)
      : k_(k),
        halo_type_(k),
        comm_(comm),
        size_(comm_size(comm)),
        reductions_(reductions),
        m_(m),
        rows_(m.n > 0),
        requests_(m.recv_rank.size() + m.send_rank.size(), MPI_REQUEST_NULL) {
    if (m.n == 0 || !be) {
      if (m.n > 0) throw error(CNC_ERR_INTERNAL, "a distributed system without a backend");
      inner_ = make_operator_system(
          0, k, [](const double*, double*) {}, {}, threads);
      return;
    }
    prep_.fmt = choose_format(m.local, sizeof(double), be->prefers_sliced());
    build_system(*be, m.local, precision::f64, jacobi, k, prep_);
    inner_ = std::move(prep_.dev);
    if (!inner_->set_halo(m.halo, m.halo_size, m.send_row.data(), std::int32_t(m.send_row.size())))
      throw error(CNC_ERR_UNSUPPORTED,
                  std::string("the ") + be->name() +
                      " backend offers no halo operations for this system: distributed solves "
                      "need them");
  }

  format local_format() const { return prep_.fmt; }

  // NCCL (nccl_halo.hpp): whether the halo can move on the device, and the switch to it.
  bool device_halo() {
    double *send = nullptr, *recv = nullptr;
    return rows_ && inner_->halo_device(&send, &recv) != nullptr;
  }
  void set_nccl(nccl_halo* h) {
    nccl_ = nullptr;
    if (!h) return;
    stream_ = inner_->halo_device(&device_send_, &device_recv_);
    if (!stream_) throw error(CNC_ERR_INTERNAL, "NCCL halo for a system without device buffers");
    nccl_ = h;
  }

  // Everything but the products and the reductions is this process's rows: the inner system's.
  void set_vectors(const double* b, const double* x) override { inner_->set_vectors(b, x); }
  void get_x(double* x) override { inner_->get_x(x); }
  int add_vectors(int count) override { return inner_->add_vectors(count); }
  void release_vectors() override { inner_->release_vectors(); }
  void set_mask(const std::uint8_t* active) override { inner_->set_mask(active); }
  void precondition(int in, int out) override { inner_->precondition(in, out); }
  void axpby(const double* alpha, int x, const double* beta, int y) override {
    inner_->axpby(alpha, x, beta, y);
  }
  void combine(const int* v, int count, const double* coef, const double* beta, int y) override {
    inner_->combine(v, count, coef, beta, y);
  }
  void read(int v, double* out) override { inner_->read(v, out); }
  std::int64_t long_rows() const override { return inner_->long_rows(); }

  // The fused PCG steps (pcg_contract.h), so that pcg_solve runs here as in one process. One
  // process: the backend's own steps. Several: the steps' local sums become global between steps
  // (the state is read, its sums added over the processes, and written back), and the two steps
  // that multiply by A are made of the surface's operations, which know the halo.
  void init(const double* thr2) override {
    if (size_ == 1) return inner_->init(thr2);
    all_.assign(std::size_t(k_), 1);
    set_mask(all_.data());
    residual(vec_x, vec_r);  // r = b - A x
    precondition(vec_r, vec_p);
    const int rp[2] = {vec_p, vec_r};
    sums_.resize(2 * std::size_t(k_));
    dots(vec_r, rp, 2, sums_.data());  // r·d r and r·r, global
    state_.resize(std::size_t(k_));
    for (int j = 0; j < k_; ++j) {
      const double rz = sums_[std::size_t(j)], rr = sums_[std::size_t(k_) + std::size_t(j)];
      state_[std::size_t(j)] =
          rhs_state{rz, 0.0, rr, 0.0, thr2[j], cnc_status_of_residual(rr, rz, thr2[j]), 0};
    }
    if (rows_) inner_->write_state(state_.data());
  }
  void spmv_dot() override {
    if (size_ == 1) return inner_->spmv_dot();
    running_.assign(std::size_t(k_), 0);
    bool any = false;
    for (int j = 0; j < k_; ++j) {
      running_[std::size_t(j)] = state_[std::size_t(j)].status == running ? 1 : 0;
      any = any || running_[std::size_t(j)] != 0;
    }
    if (!any) return;  // the same on every process: the same state
    set_mask(running_.data());
    spmv(vec_p, vec_q);
    const int q = vec_q;
    sums_.resize(std::size_t(k_));
    dots(vec_p, &q, 1, sums_.data());
    for (int j = 0; j < k_; ++j)
      if (running_[std::size_t(j)]) state_[std::size_t(j)].pq = sums_[std::size_t(j)];
    if (rows_) inner_->write_state(state_.data());
  }
  void update_xr() override {
    if (size_ == 1) return inner_->update_xr();
    local_step([&] { inner_->update_xr(); }, true);
  }
  void update_p() override {
    if (size_ == 1) return inner_->update_p();
    local_step([&] { inner_->update_p(); }, false);
  }
  void read_state(rhs_state* out) override {
    if (size_ == 1) return inner_->read_state(out);
    std::copy(state_.begin(), state_.end(), out);
  }
  void iterate(int count) override {
    if (size_ == 1) return inner_->iterate(count);
    device_system::iterate(count);
  }
  void apply(const double*, double*) override {
    throw error(CNC_ERR_INTERNAL, "a distributed system has no host product");
  }

  // The halo travels while the local block is multiplied; its block is added once it is here.
  void spmv(int in, int out) override {
    begin_exchange(in);
    inner_->spmv(in, out);
    end_exchange(1.0, out);
  }
  void residual(int in, int out) override {  // b - A_local in - A_halo h
    begin_exchange(in);
    inner_->residual(in, out);
    end_exchange(-1.0, out);
  }

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
  static constexpr int tag = 14;

  // Runs a step on this process's rows; with `sums` (update_xr), the systems still running after
  // it have their r·z and r·r (local sums) replaced by the global ones, in one collective.
  template <class Step>
  void local_step(Step&& step, bool sums) {
    bool any = false;
    for (const rhs_state& st : state_) any = any || st.status == running;
    if (!any) return;  // a no-op by the contract, on every process alike
    if (rows_) step();
    // update_xr's sums are read back; update_p's scalar part is comparisons and copies of values
    // every process holds (rr, rz_new, thr2), mirrored here without a read.
    if (rows_ && sums)
      inner_->read_state(state_.data());
    else
      host_step(sums);
    if (!sums) return;
    sums_.clear();
    for (const rhs_state& st : state_)
      if (st.status == running) sums_.push_back(st.rz_new), sums_.push_back(st.rr);
    sum_over_ranks(sums_.data(), int(sums_.size()));  // the same count on every process
    std::size_t i = 0;
    for (rhs_state& st : state_)
      if (st.status == running) st.rz_new = sums_[i], st.rr = sums_[i + 1], i += 2;
    if (rows_) inner_->write_state(state_.data());
  }
  // The steps' scalars by the contract: update_xr's for a process without rows (its local sums
  // are 0), update_p's for every process.
  void host_step(bool xr) {
    for (rhs_state& st : state_) {
      if (st.status != running) continue;
      if (xr) {
        st.status = cnc_status_of_pq(st.pq);
        if (st.status != running) continue;
        st.rz_new = 0.0, st.rr = 0.0, ++st.iters;
      } else {
        st.status = cnc_status_of_residual(st.rr, st.rz_new, st.thr2);
        if (st.status == running) st.rz = st.rz_new;
      }
    }
  }

  // The rows the others read, gathered from `in` (every column: a message holds all k; the
  // backend's previous use of its receive buffer has run when this returns), then the receives
  // into the backend's receive buffer and the sends from its send buffer.
  void begin_exchange(int in) {
    if (nccl_) {  // device to device, queued: the local product follows on the same stream
      inner_->gather_halo_on_device(in);
      nccl_->exchange(m_, k_, device_send_, device_recv_, stream_);
      return;
    }
    const std::size_t nr = m_.recv_rank.size(), ns = m_.send_rank.size();
    const int k = k_;
    if (rows_) inner_->gather_halo(in);
    double* recv = rows_ ? inner_->halo_recv() : nullptr;
    const double* send = rows_ ? inner_->halo_send() : nullptr;
    for (std::size_t i = 0; i < nr; ++i)
      check_mpi(MPI_Irecv(recv + std::size_t(m_.recv_at[i]) * std::size_t(k),
                          m_.recv_at[i + 1] - m_.recv_at[i], halo_type_.type(), m_.recv_rank[i],
                          tag, comm_, &requests_[i]),
                "MPI_Irecv");
    for (std::size_t i = 0; i < ns; ++i)
      check_mpi(MPI_Isend(send + std::size_t(m_.send_at[i]) * std::size_t(k),
                          m_.send_at[i + 1] - m_.send_at[i], halo_type_.type(), m_.send_rank[i],
                          tag, comm_, &requests_[nr + i]),
                "MPI_Isend");
  }
  void end_exchange(double alpha, int out) {
    if (nccl_) {
      if (m_.halo_size > 0) inner_->add_halo_on_device(alpha, out);
      return;
    }
    check_mpi(MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
    if (m_.halo_size > 0) inner_->add_halo(alpha, out);
  }

  int k_;                  // dots write count * k values
  mpi_doubles halo_type_;  // a halo row's k values: the messages count rows (int), not values
  MPI_Comm comm_;
  int size_;
  std::int64_t* reductions_;
  const distributed_matrix& m_;
  bool rows_;             // this process owns rows (else inner_ is an empty operator system)
  prepared_system prep_;  // the local block's layout (a CPU backend reads it) and format
  std::unique_ptr<device_system> inner_;
  std::vector<double> gathered_, sums_;
  std::vector<MPI_Request> requests_;
  std::vector<rhs_state> state_;  // several processes: the steps' state, global sums
  std::vector<std::uint8_t> all_, running_;
  nccl_halo* nccl_ = nullptr;  // set: the halo moves device to device through it
  void* stream_ = nullptr;     // the backend system's stream and device halo buffers
  double *device_send_ = nullptr, *device_recv_ = nullptr;
};

}  // namespace

bool halo_on_device(device_system& d) { return dynamic_cast<distributed_system&>(d).device_halo(); }

void use_nccl(device_system& d, nccl_halo* h) { dynamic_cast<distributed_system&>(d).set_nccl(h); }

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

requests count_requests(const std::vector<std::int32_t>& cols,
                        const std::vector<std::int64_t>& starts) {
  const std::size_t size = starts.size() - 1;
  if (cols.size() > std::size_t(INT_MAX))
    throw error(CNC_ERR_INVALID_VALUE, std::to_string(cols.size()) +
                                           " columns owned by other ranks: past MPI's int count");
  requests q;
  q.need.assign(size, 0), q.give.assign(size, 0);
  q.need_at.assign(size + 1, 0), q.give_at.assign(size + 1, 0);
  for (const std::int32_t c : cols)
    ++q.need[std::size_t(std::upper_bound(starts.begin(), starts.end(), std::int64_t(c)) -
                         starts.begin() - 1)];
  for (std::size_t r = 0; r < size; ++r) q.need_at[r + 1] = q.need_at[r] + q.need[r];
  return q;
}

void exchange_requests(MPI_Comm comm, requests& q, const std::vector<std::int32_t>& cols,
                       const char* call, const std::function<void(std::size_t)>& prepare) {
  const int me = comm_rank(comm), size = comm_size(comm);
  check_mpi(MPI_Alltoall(q.need.data(), 1, MPI_INT, q.give.data(), 1, MPI_INT, comm),
            "MPI_Alltoall");
  std::string message;
  const int status = local_status(message, [&] {
    std::int64_t total = 0;
    for (std::size_t r = 0; r < std::size_t(size); ++r) total += q.give[r];
    // Refused rather than sent in pieces: n < 2^31, so this needs one rank's rows read by many
    // ranks each, far past what one rank's memory and the halo exchange would carry anyway.
    if (total > INT_MAX)
      throw error(CNC_ERR_INVALID_VALUE, "the other ranks ask this rank for " +
                                             std::to_string(total) +
                                             " rows: past MPI's int count (2^31 - 1)");
    for (std::size_t r = 0; r < std::size_t(size); ++r) q.give_at[r + 1] = q.give_at[r] + q.give[r];
    reserve_host(4.0 * double(total),
                 "the rows the other ranks ask of this one (" + std::to_string(total) + ")");
    q.asked.resize(std::size_t(total));
    prepare(std::size_t(total));
  });
  agree(comm, size, me, status, message, call);
  check_mpi(MPI_Alltoallv(cols.data(), q.need.data(), q.need_at.data(), MPI_INT32_T, q.asked.data(),
                          q.give.data(), q.give_at.data(), MPI_INT32_T, comm),
            "MPI_Alltoallv");
}

void plan_exchange(MPI_Comm comm, distributed_matrix& m, requests& q,
                   const std::vector<std::int64_t>& starts, const char* call) {
  const int me = comm_rank(comm), size = comm_size(comm);
  const std::int64_t lo = starts[std::size_t(me)], hi = starts[std::size_t(me) + 1];
  exchange_requests(comm, q, m.halo_global, call, [&](std::size_t asked) {
    m.send_row.resize(asked);
    m.recv_rank.reserve(std::size_t(size)), m.send_rank.reserve(std::size_t(size));
    m.recv_at.reserve(std::size_t(size) + 1), m.send_at.reserve(std::size_t(size) + 1);
  });
  m.recv_at.push_back(0);
  m.send_at.push_back(0);
  for (std::size_t r = 0; r < std::size_t(size); ++r) {
    if (q.need[r] > 0) {
      m.recv_rank.push_back(int(r));
      m.recv_at.push_back(q.need_at[r + 1]);
    }
    if (q.give[r] > 0) {
      m.send_rank.push_back(int(r));
      m.send_at.push_back(q.give_at[r + 1]);
    }
  }
  for (std::size_t t = 0; t < q.asked.size(); ++t) {
    if (q.asked[t] < lo || q.asked[t] >= hi)
      throw error(CNC_ERR_INTERNAL, "a process asked for row " + std::to_string(q.asked[t]) +
                                        " that this one does not own");
    m.send_row[t] = std::int32_t(q.asked[t] - lo);
  }
}

std::unique_ptr<device_system> make_distributed_system(MPI_Comm comm, const distributed_matrix& m,
                                                       int k, bool jacobi, backend* be, int threads,
                                                       std::int64_t* reductions, format* fmt) {
  auto sys = std::make_unique<distributed_system>(comm, m, k, jacobi, be, threads, reductions);
  if (fmt) *fmt = sys->local_format();
  return sys;
}

}  // namespace cnc::mpi
