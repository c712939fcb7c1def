// The C API of libcnc_mpi (include/cnc_mpi.h): distributed contexts, parameters and
// cncMPISolveCSR (the state machine: api_mpi_assembly.cpp).
// A solve agrees on its arguments before any rank starts the methods: each rank checks its own
// (and makes its rows canonical), one all-gather gives every rank every rank's verdict, row block
// and parameters, and every rank then takes the same decision from the same data.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/registry.hpp"
#include "cnc_mpi.h"
#include "conversion/convert.hpp"
#include "mpi/api_mpi_internal.hpp"
#include "mpi/distributed_system.hpp"
#include "mpi/nccl_halo.hpp"
#include "pipeline/pipeline_internal.hpp"
#include "solver/krylov.hpp"
#include "solver/pcg.hpp"
#include "solver/scaling.hpp"
#include "util/environment.hpp"
#include "util/error.hpp"
#include "util/fault.hpp"
#include "util/memory.hpp"
#include "util/parallel.hpp"
#include "util/timer.hpp"

namespace {

using cnc::error;
using cnc::mpi::agree;
using cnc::mpi::local_status;
using cnc::mpi::throw_first_failure;

// What each rank tells the others before a solve: its verdict on its own arguments, its row
// block and the arguments that must agree.
enum field : int {
  f_status,
  f_row_begin,
  f_row_end,
  f_n,
  f_base,
  f_nrhs,
  f_solver,
  f_precond,
  f_max_iterations,
  f_restart,
  f_threshold_bits,
  f_count
};
constexpr int message_bytes = 512;

const char* field_name(int f) {
  switch (f) {
    case f_n:
      return "n";
    case f_base:
      return "base";
    case f_nrhs:
      return "nrhs";
    case f_solver:
      return "CNC_SOLVER";
    case f_precond:
      return "CNC_PRECONDITIONER";
    case f_max_iterations:
      return "CNC_MAX_ITERATIONS";
    case f_restart:
      return "CNC_GMRES_RESTART";
    default:
      return "CNC_THRESHOLD";
  }
}

template <class F>
CNCstatus guarded(CNCMPIcontext c, F&& f) {
  if (!c) return CNC_ERR_NULL_POINTER;
  std::string message;
  const int s = local_status(message, f);
  if (s != CNC_OK) c->message = message;
  return s;
}

std::int64_t first_not_finite(const double* v, std::int64_t count) {
  if (count <= 0) return -1;
  return cnc::first_index(count, std::int64_t(1) << 16, cnc::host_threads(),
                          [&](std::int64_t i) { return !std::isfinite(v[i]); });
}

// The backend this rank runs on: the context's CNC_BACKEND, else the CNC_BACKEND environment
// variable, else CUDA for a block of at least auto_gpu_min_nnz entries where a GPU is present, else
// the CPU (OpenCL only when asked for). The GPU (CUDA, or an OpenCL GPU) is the rank's node-local
// index modulo the GPUs present, unless CNC_DEVICE_INDEX (or, for OpenCL, CNC_OPENCL_DEVICE)
// names one.
// Kept in the context for the next solve with the same choice.
cnc::backend* rank_backend(CNCMPIcontext c, std::int64_t local_nnz, int threads) {
  const int requested =
      c->backend != CNC_BACKEND_AUTO ? c->backend : cnc::backend_from_environment();
  int device = c->device_index;
  auto fits = [&](int kind) {
    if (device < 0 && kind == CNC_BACKEND_CUDA) {
      std::string why;
      const std::size_t gpus = cnc::list_cuda_devices(why).size();
      device = gpus > 0 ? int(std::size_t(c->local_rank) % gpus) : -1;
    }
    if (device < 0 && kind == CNC_BACKEND_OPENCL) device = cnc::opencl_gpu_index(c->local_rank);
    if (c->be && c->be_kind == kind && c->be_device == device && c->be_threads == threads)
      return true;
    cnc::backend_options o;
    o.threads = threads, o.device_index = device;
    std::string why;
    std::unique_ptr<cnc::backend> b = cnc::make_backend(kind, o, why);
    if (!b) {
      if (requested != CNC_BACKEND_AUTO)
        throw error(CNC_ERR_BACKEND_UNAVAILABLE, "the requested backend is unavailable: " + why);
      return false;
    }
    c->be = std::move(b), c->be_kind = kind, c->be_device = device, c->be_threads = threads;
    return true;
  };
  if (requested != CNC_BACKEND_AUTO) {
    fits(requested);
  } else if (!(local_nnz >= cnc::auto_gpu_min_nnz && fits(CNC_BACKEND_CUDA))) {
    device = -1;
    fits(CNC_BACKEND_CPU);
  }
  return c->be.get();
}

}  // namespace

namespace cnc::mpi {

void throw_first_failure(MPI_Comm comm, const std::vector<std::int64_t>& statuses, int me,
                         const std::string& mine, const char* call) {
  for (std::size_t r = 0; r < statuses.size(); ++r) {
    if (statuses[r] == CNC_OK) continue;
    char text[message_bytes] = {};
    if (int(r) == me) std::strncpy(text, mine.c_str(), message_bytes - 1);
    check_mpi(MPI_Bcast(text, message_bytes, MPI_CHAR, int(r), comm), "MPI_Bcast");
    text[message_bytes - 1] = '\0';
    throw error(int(statuses[r]), std::string(call) + ": rank " + std::to_string(r) + ": " + text);
  }
}

void agree(MPI_Comm comm, int size, int me, int status, const std::string& message,
           const char* call) {
  std::int64_t s = status;
  std::vector<std::int64_t> all(std::size_t(size), 0);
  check_mpi(MPI_Allgather(&s, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm), "MPI_Allgather");
  throw_first_failure(comm, all, me, message, call);
}

void reserve_host(double bytes, const std::string& what) {
  if (cnc::fault::fire(cnc::fault::point::host_alloc))
    throw error(CNC_ERR_OUT_OF_MEMORY, "not enough host memory for " + what + cnc::fault::note);
  cnc::memory::reserve(bytes, [&] { return what; });
}

void solve_rows(CNCMPIcontext c, const char* call, CNCuint n, CNCuint row_begin, CNCuint row_end,
                const CNCint64* row_ptr, const CNCuint* col_idx, const double* values, CNCint base,
                CNCuint nrhs, const double* b, double* x) {
  const double t0 = cnc::now_seconds();
  c->iterations = c->reductions = c->halo_values = 0;
  c->neighbours = 0, c->reason = CNC_REASON_NONE, c->solver_used = 0;
  c->backend_used = c->format_used = 0;
  c->error = c->true_error = c->solve_time = c->elapsed = 0;
  // Threads: the context's, else CNC_NUM_THREADS, else this node's cores shared by its ranks.
  const long long env_threads = cnc::env::integer(cnc::env::var::num_threads, 0);
  const int threads =
      c->threads > 0 ? c->threads
      : env_threads > 0 && env_threads <= 1 << 16
          ? int(env_threads)
          : std::max(1, int(std::max(1u, std::thread::hardware_concurrency())) / c->local_size);
  const std::int64_t rows = std::int64_t(row_end) - std::int64_t(row_begin);

  // 1. This rank's arguments, its rows made canonical (global columns).
  cnc::user_csr a;
  std::string message;
  const int status = local_status(message, [&] {
    if (n == 0 || n > CNCuint(std::numeric_limits<std::int32_t>::max()))
      throw error(CNC_ERR_INVALID_VALUE, "n=" + std::to_string(n) + " is out of range");
    if (base != 0 && base != 1)
      throw error(CNC_ERR_INVALID_VALUE, "base=" + std::to_string(base) + " is neither 0 nor 1");
    if (nrhs == 0 || nrhs > 4096)  // as cncSolveCSR; the solve counts in int
      throw error(CNC_ERR_INVALID_VALUE, "nrhs=" + std::to_string(nrhs) + " is not in [1, 4096]");
    if (row_begin > row_end || row_end > n)
      throw error(CNC_ERR_INVALID_VALUE, "rows [" + std::to_string(row_begin) + ", " +
                                             std::to_string(row_end) + ") are not inside [0, " +
                                             std::to_string(n) + ")");
    if (!row_ptr) throw error(CNC_ERR_NULL_POINTER, "row_ptr is NULL");
    if (rows > 0 && (!b || !x)) throw error(CNC_ERR_NULL_POINTER, "b or x is NULL");
    cnc::check_row_ptr(std::int32_t(rows), row_ptr, base);
    if (row_ptr[rows] > base && (!col_idx || !values))
      throw error(CNC_ERR_NULL_POINTER, "col_idx or values is NULL");
    a = cnc::csr_from_user(std::int32_t(rows), row_ptr, col_idx, values, base, std::int32_t(n));
    const std::int64_t len = rows * std::int64_t(nrhs);
    if (const std::int64_t i = first_not_finite(b, len); i >= 0)
      throw error(CNC_ERR_NOT_FINITE, "b[" + std::to_string(i) + "] is not finite");
    if (const std::int64_t i = first_not_finite(x, len); i >= 0)
      throw error(CNC_ERR_NOT_FINITE, "x[" + std::to_string(i) + "] is not finite");
  });

  // 2. Every rank's verdict, block and parameters, in one all-gather.
  std::int64_t mine[f_count];
  mine[f_status] = status, mine[f_row_begin] = row_begin, mine[f_row_end] = row_end;
  mine[f_n] = n, mine[f_base] = base, mine[f_nrhs] = nrhs, mine[f_solver] = c->solver;
  mine[f_precond] = c->precond, mine[f_max_iterations] = c->max_iterations;
  mine[f_restart] = c->restart;
  std::memcpy(&mine[f_threshold_bits], &c->threshold, sizeof(double));
  std::vector<std::int64_t> all(std::size_t(f_count) * std::size_t(c->size));
  cnc::mpi::check_mpi(
      MPI_Allgather(mine, f_count, MPI_INT64_T, all.data(), f_count, MPI_INT64_T, c->comm),
      "MPI_Allgather");
  auto at = [&](int r, int f) { return all[std::size_t(r) * f_count + std::size_t(f)]; };
  std::vector<std::int64_t> statuses(std::size_t(c->size));
  for (int r = 0; r < c->size; ++r) statuses[std::size_t(r)] = at(r, f_status);
  throw_first_failure(c->comm, statuses, c->rank, message, call);
  for (int r = 0; r < c->size; ++r)  // the same data on every rank: the same verdict
    for (int f = f_n; f < f_count; ++f)
      if (at(r, f) != at(0, f))
        throw error(CNC_ERR_INVALID_VALUE,
                    std::string(call) + ": " + std::string(field_name(f)) +
                        " differs between rank 0 (" + std::to_string(at(0, f)) + ") and rank " +
                        std::to_string(r) + " (" + std::to_string(at(r, f)) + ")");
  std::vector<std::int64_t> starts(std::size_t(c->size) + 1);
  for (int r = 0; r < c->size; ++r) {
    const std::int64_t expected = r == 0 ? 0 : at(r - 1, f_row_end);
    if (at(r, f_row_begin) != expected)
      throw error(CNC_ERR_INVALID_VALUE,
                  std::string(call) + ": the row blocks do not tile [0, n) in rank order: rank " +
                      std::to_string(r) + " starts at row " + std::to_string(at(r, f_row_begin)) +
                      ", expected " + std::to_string(expected));
    starts[std::size_t(r)] = at(r, f_row_begin);
  }
  starts[std::size_t(c->size)] = at(c->size - 1, f_row_end);
  if (starts.back() != std::int64_t(n))
    throw error(CNC_ERR_INVALID_VALUE,
                std::string(call) + ": the row blocks do not tile [0, n): they end at row " +
                    std::to_string(starts.back()) + ", not at n=" + std::to_string(n));

  // 3. The two blocks and the exchange plan; the vectors' memory asked for before anyone enters
  // a collective that another rank's failure would leave waiting.
  const int k = int(nrhs);
  const int vectors = 5 + (c->solver == CNC_GMRES ? c->restart + 3 : 4);
  cnc::mpi::distributed_matrix m;
  cnc::mpi::requests q;
  std::vector<double> max_abs;
  cnc::backend* be = nullptr;
  message.clear();
  const int split = local_status(message, [&] {
    if (rows > 0) be = rank_backend(c, a.view.nnz(), threads);
    if (!be || be->api_id() == CNC_BACKEND_CPU)
      cnc::mpi::reserve_host(double(rows) * k * 8.0 * vectors,
                             "the distributed solve's vectors (" + std::to_string(vectors) +
                                 " of " + std::to_string(rows) + " rows x " + std::to_string(k) +
                                 " systems)");
    m = cnc::mpi::split_rows(a.view, starts, c->rank, threads);
    q = cnc::mpi::count_requests(m.halo_global, starts);
    max_abs = cnc::column_max_abs(b, std::size_t(rows), k);
  });
  agree(c->comm, c->size, c->rank, split, message, call);
  // b of extreme magnitude solved scaled, as in one process (solver/scaling.hpp), by the same
  // power of two on every rank: max |b_j| over the ranks.
  cnc::mpi::check_mpi(MPI_Allreduce(MPI_IN_PLACE, max_abs.data(), k, MPI_DOUBLE, MPI_MAX, c->comm),
                      "MPI_Allreduce");
  cnc::mpi::plan_exchange(c->comm, m, q, starts, call);
  a = cnc::user_csr();  // the two blocks are all the solve needs

  // 4. The method, unchanged, over the distributed system (made on every rank before any enters
  // the method's collectives: a rank that cannot make its own tells the others).
  std::int64_t reductions = 0;
  std::unique_ptr<cnc::device_system> sys;
  cnc::format fmt = cnc::format::csr;
  std::optional<cnc::rhs_scaling> scaled;  // its copies of b and x made before the agreement
  const int made = local_status(message, [&] {
    const bool copies = !cnc::rhs_exponents(max_abs).empty();  // b outside the band: scaled
    cnc::mpi::reserve_host(copies ? 16.0 * double(rows) * k : 0.0,
                           "the scaled copies of b and x (" + std::to_string(rows) + " rows x " +
                               std::to_string(k) + " systems)");
    scaled.emplace(max_abs, b, x, std::size_t(rows), k);
    sys = cnc::mpi::make_distributed_system(c->comm, m, k, c->precond == CNC_PRECOND_JACOBI, be,
                                            threads, &reductions, &fmt);
  });
  agree(c->comm, c->size, c->rank, made, message, call);
  // NCCL for the halo, where every rank can (a collective decision; the communicator is kept).
  c->nccl_used = false;
  if (c->nccl && c->size > 1) {
    const bool want = cnc::mpi::halo_on_device(*sys);
    const int device = c->be_device;
    const bool have = c->nccl_comm && c->nccl_comm->device() == device;
    int keep = want && have ? 1 : 0, all_keep = 0;
    cnc::mpi::check_mpi(MPI_Allreduce(&keep, &all_keep, 1, MPI_INT, MPI_MIN, c->comm),
                        "MPI_Allreduce");
    if (!all_keep) {
      c->nccl_comm.reset();
      std::string why;
      c->nccl_comm = cnc::mpi::make_nccl_halo(c->comm, want, device, why);
    }
    cnc::mpi::use_nccl(*sys, c->nccl_comm.get());
    c->nccl_used = c->nccl_comm != nullptr;
  }
  c->backend_used = be ? be->api_id() : 0;
  c->format_used = be ? cnc::pipeline_detail::api_format(fmt) : 0;
  cnc::krylov_params kp;
  kp.base.max_iterations =
      c->max_iterations > 0 ? c->max_iterations : std::max<std::int64_t>(100, 5 * std::int64_t(n));
  kp.base.threshold = c->threshold;
  kp.base.device_residual = true;  // the system's residual is b - A x in double, global
  kp.restart = c->restart;
  kp.rows = rows;  // the byte and flop counts are this rank's
  kp.nnz = m.local.nnz() + m.halo.nnz();
  kp.matrix_bytes = 12.0 * double(kp.nnz) + 8.0 * double(rows);
  kp.vector_bytes = 8;
  cnc::csr_view shape;
  shape.n = std::int32_t(rows);  // the methods read only its n (the residual is the system's)
  const double ts = cnc::now_seconds();
  const int method = c->solver == CNC_SOLVER_DEFAULT ? CNC_CG : c->solver;
  const double* bs = scaled->b();
  double* xs = scaled->x();
  // CG: the fused PCG steps of one process (pcg_solve), their sums made global between steps;
  // on one rank exactly libcnc's solve. Between two state reads: the backend's own interval on
  // one rank; every step reads it on several.
  kp.base.check_interval = c->size == 1 && be ? be->default_check_interval() : 1;
  const cnc::pcg_result r = method == CNC_BICGSTAB ? cnc::bicgstab_solve(*sys, shape, k, bs, xs, kp)
                            : method == CNC_GMRES  ? cnc::gmres_solve(*sys, shape, k, bs, xs, kp)
                                                  : cnc::pcg_solve(*sys, shape, k, bs, xs, kp.base);
  scaled->finish();
  c->solve_time = cnc::now_seconds() - ts;

  // 5. As cnc's pipeline: a converged residual says nothing of x where A does not see it. One
  // more collective, so that every rank reports the same reason.
  double bad = 0.0;
  for (int j = 0; j < k; ++j)
    if (r.reasons[std::size_t(j)] == CNC_REASON_CONVERGED &&
        first_not_finite(x + std::size_t(j) * std::size_t(rows), rows) >= 0)
      bad = 1.0;
  sys->sum_over_ranks(&bad, 1);
  c->reason = bad > 0 ? CNC_REASON_NOT_FINITE : r.reason;
  c->iterations = r.iterations;
  c->error = r.residual.empty() ? 0 : *std::max_element(r.residual.begin(), r.residual.end());
  c->true_error = r.true_residual.empty()
                      ? 0
                      : *std::max_element(r.true_residual.begin(), r.true_residual.end());
  c->reductions = reductions;
  c->halo_values = m.halo_size;
  c->neighbours = int(std::max(m.recv_rank.size(), m.send_rank.size()));
  c->solver_used = method;
  c->elapsed = cnc::now_seconds() - t0;
}

}  // namespace cnc::mpi

extern "C" {

CNC_MPI_API CNCMPIcontext cncMPINewContext(MPI_Comm comm) {
  int initialized = 0, finalized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return nullptr;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return nullptr;
  auto* c = new (std::nothrow) CNCMPIContextStruct;
  int ok = c ? 1 : 0, all_ok = 0;
  // Every rank learns whether every rank could allocate: all get a context or none does.
  const int reduced = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
  if (!c) return nullptr;
  if (reduced != MPI_SUCCESS || !all_ok) {
    delete c;
    return nullptr;
  }
  if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
    delete c;
    return nullptr;
  }
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node) ==
          MPI_SUCCESS &&
      node != MPI_COMM_NULL) {
    MPI_Comm_rank(node, &c->local_rank);
    MPI_Comm_size(node, &c->local_size);
    MPI_Comm_free(&node);
  }
  return c;
}

CNC_MPI_API void cncMPIDeleteContext(CNCMPIcontext context) {
  if (!context) return;
  if (context->comm != MPI_COMM_NULL) MPI_Comm_free(&context->comm);
  delete context;
}

CNC_MPI_API CNCstatus cncMPISolverParameteri(CNCMPIcontext context, CNCenum pname, CNCint value) {
  return guarded(context, [&] {
    auto bad_value = [&] {
      throw error(CNC_ERR_INVALID_VALUE, "cncMPISolverParameteri(" + std::to_string(pname) + ", " +
                                             std::to_string(value) + "): out of range");
    };
    auto bad_enum = [&] {
      throw error(CNC_ERR_INVALID_ENUM, "cncMPISolverParameteri(" + std::to_string(pname) + ", " +
                                            std::to_string(value) + "): not accepted");
    };
    switch (pname) {
      case CNC_SOLVER:
        if (value != CNC_SOLVER_DEFAULT && value != CNC_CG && value != CNC_BICGSTAB &&
            value != CNC_GMRES)
          bad_enum();
        context->solver = value == CNC_SOLVER_DEFAULT ? CNC_CG : value;
        break;
      case CNC_PRECONDITIONER:
        if (value != CNC_PRECOND_NONE && value != CNC_PRECOND_JACOBI) bad_enum();
        context->precond = value;
        break;
      case CNC_MAX_ITERATIONS:
        if (value < 0) bad_value();
        context->max_iterations = value;
        break;
      case CNC_GMRES_RESTART:
        if (value < 1) bad_value();
        context->restart = value;
        break;
      case CNC_NB_THREADS:
        if (value < 0) bad_value();
        context->threads = value;
        break;
      case CNC_BACKEND:
        if (value != CNC_BACKEND_AUTO && value != CNC_BACKEND_CPU && value != CNC_BACKEND_OPENCL &&
            value != CNC_BACKEND_CUDA)
          bad_enum();
        context->backend = value;
        break;
      case CNC_DEVICE_INDEX:
        if (value < -1) bad_value();
        context->device_index = value;
        break;
      case CNC_MPI_NCCL:
        if (value != CNC_TRUE && value != CNC_FALSE) bad_value();
        context->nccl = value;
        break;
      case CNC_NB_SYSTEMS:  // structural, as in cnc.h: the state machine's INITIAL state only
        if (context->as.state != CNC_STATE_INITIAL)
          throw error(
              CNC_ERR_STATE,
              "cncMPISolverParameteri(CNC_NB_SYSTEMS): only before cncMPIBegin(CNC_SYSTEM)");
        if (value < 1 || value > 4096) bad_value();
        context->as.k = value;
        break;
      default:
        bad_enum();
    }
  });
}

CNC_MPI_API CNCstatus cncMPISolverParameterd(CNCMPIcontext context, CNCenum pname, double value) {
  if (context && pname == CNC_THRESHOLD) {
    return guarded(context, [&] {
      if (!(std::isfinite(value) && value > 0))
        throw error(CNC_ERR_INVALID_VALUE, "cncMPISolverParameterd(CNC_THRESHOLD, " +
                                               std::to_string(value) + "): must be finite and > 0");
      context->threshold = value;
    });
  }
  if (context && !(std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 2e9)) {
    context->message = "cncMPISolverParameterd: " + std::to_string(value) + " is not an integer";
    return CNC_ERR_INVALID_VALUE;
  }
  return cncMPISolverParameteri(context, pname, CNCint(value));
}

CNC_MPI_API CNCstatus cncMPIGetDoublev(CNCMPIcontext context, CNCenum pname, double* value) {
  return guarded(context, [&] {
    if (!value) throw error(CNC_ERR_NULL_POINTER, "cncMPIGetDoublev: value is NULL");
    switch (pname) {
      case CNC_ERROR:
        *value = context->error;
        return;
      case CNC_TRUE_ERROR:
        *value = context->true_error;
        return;
      case CNC_SOLVE_TIME:
        *value = context->solve_time;
        return;
      case CNC_ELAPSED_TIME:
        *value = context->elapsed;
        return;
      case CNC_THRESHOLD:
        *value = context->threshold;
        return;
      case CNC_USED_ITERATIONS:
        *value = double(context->iterations);
        return;
      case CNC_REASON:
        *value = context->reason;
        return;
      case CNC_SOLVER_USED:
        *value = context->solver_used;
        return;
      case CNC_SOLVER:
        *value = context->solver;
        return;
      case CNC_PRECONDITIONER:
        *value = context->precond;
        return;
      case CNC_MAX_ITERATIONS:
        *value = double(context->max_iterations);
        return;
      case CNC_GMRES_RESTART:
        *value = context->restart;
        return;
      case CNC_NB_THREADS:
        *value = context->threads;
        return;
      case CNC_BACKEND:
        *value = context->backend;
        return;
      case CNC_DEVICE_INDEX:
        *value = context->device_index;
        return;
      case CNC_BACKEND_USED:
        *value = context->backend_used;
        return;
      case CNC_MPI_NCCL:
        *value = context->nccl;
        return;
      case CNC_MPI_NCCL_USED:
        *value = context->nccl_used ? 1 : 0;
        return;
      case CNC_FORMAT_USED:
        *value = context->format_used;
        return;
      case CNC_MPI_REDUCTIONS:
        *value = double(context->reductions);
        return;
      case CNC_MPI_HALO_VALUES:
        *value = double(context->halo_values);
        return;
      case CNC_MPI_NEIGHBOURS:
        *value = context->neighbours;
        return;
      case CNC_MPI_RANKS:
        *value = context->size;
        return;
      case CNC_NB_SYSTEMS:
        *value = context->as.k;
        return;
      case CNC_NB_VARIABLES:
        *value = double(context->as.n);
        return;
      case CNC_STATE:
        *value = context->as.state;
        return;
      default:
        throw error(CNC_ERR_INVALID_ENUM,
                    "cncMPIGet: " + std::to_string(pname) + " is not a parameter or statistic");
    }
  });
}

CNC_MPI_API CNCstatus cncMPIGetInteger64v(CNCMPIcontext context, CNCenum pname, CNCint64* value) {
  if (context && !value) {
    context->message = "cncMPIGetInteger64v: value is NULL";
    return CNC_ERR_NULL_POINTER;
  }
  if (context && pname == CNC_USED_ITERATIONS) return *value = context->iterations, CNC_OK;
  if (context && pname == CNC_MPI_REDUCTIONS) return *value = context->reductions, CNC_OK;
  if (context && pname == CNC_MPI_HALO_VALUES) return *value = context->halo_values, CNC_OK;
  if (context && pname == CNC_MAX_ITERATIONS) return *value = context->max_iterations, CNC_OK;
  if (context && (pname == CNC_ERROR || pname == CNC_TRUE_ERROR || pname == CNC_SOLVE_TIME ||
                  pname == CNC_ELAPSED_TIME || pname == CNC_THRESHOLD)) {
    context->message = "cncMPIGetInteger64v: " + std::to_string(pname) + " is a double";
    return CNC_ERR_INVALID_ENUM;
  }
  double d = 0;
  const CNCstatus s = cncMPIGetDoublev(context, pname, &d);
  if (s == CNC_OK) *value = CNCint64(d);
  return s;
}

CNC_MPI_API CNCstatus cncMPIGetIntegerv(CNCMPIcontext context, CNCenum pname, CNCint* value) {
  if (context && !value) {
    context->message = "cncMPIGetIntegerv: value is NULL";
    return CNC_ERR_NULL_POINTER;
  }
  CNCint64 v = 0;
  const CNCstatus s = cncMPIGetInteger64v(context, pname, &v);
  if (s == CNC_OK)
    *value = CNCint(std::clamp<CNCint64>(v, std::numeric_limits<CNCint>::min(),
                                         std::numeric_limits<CNCint>::max()));
  return s;
}

CNC_MPI_API CNCstatus cncMPISolveCSR(CNCMPIcontext context, CNCuint n, CNCuint row_begin,
                                     CNCuint row_end, const CNCint64* row_ptr,
                                     const CNCuint* col_idx, const double* values, CNCint base,
                                     CNCuint nrhs, const double* b, double* x) {
  if (!context) return CNC_ERR_NULL_POINTER;  // no communicator: nothing to agree over
  context->message.clear();
  return guarded(context, [&] {
    cnc::mpi::solve_rows(context, "cncMPISolveCSR", n, row_begin, row_end, row_ptr, col_idx, values,
                         base, nrhs, b, x);
  });
}

CNC_MPI_API const char* cncMPIGetErrorMessage(CNCMPIcontext context) {
  return context ? context->message.c_str() : "";
}

}  // extern "C"
