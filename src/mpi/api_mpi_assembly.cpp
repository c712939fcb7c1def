// The state machine of libcnc_mpi (include/cnc_mpi.h): cnc.h's life cycle through a distributed
// context. Each rank assembles its own rows [row_begin, row_end) with global column indices into
// libcnc's hash table (assembly/hash_coo.hpp: rows local, columns global), and three calls are
// collective: Begin(SYSTEM) agrees on the row blocks, End(MATRIX) eliminates the locked
// variables (a locked column owned by another rank: its value comes from that rank) and numbers
// the free unknowns rank after rank, and Solve hands the free rows to the distributed solve of
// cncMPISolveCSR (solve_rows). The other calls are local: a refused one returns its status on
// its rank at once, and the next collective call reports it on every rank.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "cnc_mpi.h"
#include "mpi/api_mpi_internal.hpp"
#include "mpi/distributed_system.hpp"
#include "util/memory.hpp"
#include "util/memory_model.hpp"
#include "util/parallel.hpp"

using cnc::error;
using cnc::mpi::assembly_state;

namespace {

// printf-style message, thrown as cnc::error.
[[noreturn]] __attribute__((format(printf, 2, 3))) void fail(int status, const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  throw error(status, text);
}

const char* state_name(int s) {
  switch (s) {
    case CNC_STATE_INITIAL:
      return "INITIAL";
    case CNC_STATE_SYSTEM:
      return "SYSTEM";
    case CNC_STATE_MATRIX:
      return "MATRIX";
    case CNC_STATE_ROW:
      return "ROW";
    case CNC_STATE_MATRIX_CONSTRUCTED:
      return "MATRIX_CONSTRUCTED";
    case CNC_STATE_SYSTEM_CONSTRUCTED:
      return "SYSTEM_CONSTRUCTED";
    default:
      return "SOLVED";
  }
}

void need_state(const assembly_state& as, const char* call, const char* args,
                std::initializer_list<int> allowed) {
  if (std::find(allowed.begin(), allowed.end(), as.state) != allowed.end()) return;
  std::string names;
  for (const int s : allowed) names += std::string(names.empty() ? "" : ", ") + state_name(s);
  fail(CNC_ERR_STATE, "%s(%s): not allowed in state %s (allowed: %s)", call, args,
       state_name(as.state), names.c_str());
}

// The local row of global row (or variable) i, which must be this rank's.
std::int64_t own_row(const assembly_state& as, CNCuint i, const char* call, const char* args) {
  if (std::int64_t(i) >= as.row_begin && std::int64_t(i) < as.row_end)
    return std::int64_t(i) - as.row_begin;
  if (std::int64_t(i) >= as.n)
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "%s(%s): index %u >= n=%lld", call, args, i, (long long)as.n);
  fail(CNC_ERR_INDEX_OUT_OF_RANGE,
       "%s(%s): row %u belongs to another rank: this rank owns rows [%lld, %lld) and assembles, "
       "sets and reads only those",
       call, args, i, (long long)as.row_begin, (long long)as.row_end);
}
void need_column(const assembly_state& as, CNCuint j, const char* call, const char* args) {
  if (std::int64_t(j) >= as.n)
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "%s(%s): column %u >= n=%lld", call, args, j, (long long)as.n);
}
void need_system(const assembly_state& as, CNCuint k, const char* call, const char* args) {
  if (k >= CNCuint(as.k))
    fail(CNC_ERR_INDEX_OUT_OF_RANGE, "%s(%s): system %u >= CNC_NB_SYSTEMS=%d", call, args, k, as.k);
}
void need_finite(double v, const char* call, const char* args) {
  if (!std::isfinite(v)) fail(CNC_ERR_NOT_FINITE, "%s(%s): the value is not finite", call, args);
}

// A local call of the state machine: its failure is also kept for the next collective call.
template <class F>
CNCstatus local_call(CNCMPIcontext c, F&& f) {
  if (!c) return CNC_ERR_NULL_POINTER;
  std::string message;
  const int s = cnc::mpi::local_status(message, f);
  if (s != CNC_OK) {
    c->message = message;
    if (c->as.pending == CNC_OK) c->as.pending = s, c->as.pending_message = message;
  }
  return s;
}
// A getter: its failure is this rank's only.
template <class F>
CNCstatus read_call(CNCMPIcontext c, F&& f) {
  if (!c) return CNC_ERR_NULL_POINTER;
  std::string message;
  const int s = cnc::mpi::local_status(message, f);
  if (s != CNC_OK) c->message = message;
  return s;
}

// The first step of each collective call: every rank's record (its verdict, a failure of a
// local call since the last collective call first; the call; what the call agrees on) in one
// all-gather of the same size for the three calls, so that ranks in different collective calls
// meet and fail instead of waiting. Throws (on every rank) the first failing rank's status, or
// CNC_ERR_STATE when the ranks are not in the same call; the local failures are then reported.
enum call_id : std::int64_t { call_begin_system = 1, call_end_matrix, call_solve };
enum record_field : int { r_status, r_call, r_n, r_row_begin, r_row_end, r_k, r_locks, r_count };
const char* call_name(std::int64_t id) {
  return id == call_begin_system ? "cncMPIBegin(CNC_SYSTEM)"
         : id == call_end_matrix ? "cncMPIEnd(CNC_MATRIX)"
                                 : "cncMPISolve";
}
std::vector<std::int64_t> agree_call(CNCMPIcontext c, std::int64_t call, int status,
                                     std::string message, std::int64_t* mine) {
  assembly_state& as = c->as;
  if (as.pending != CNC_OK) status = as.pending, message = as.pending_message;
  as.pending = CNC_OK, as.pending_message.clear();
  mine[r_status] = status, mine[r_call] = call;
  std::vector<std::int64_t> all(std::size_t(r_count) * std::size_t(c->size));
  cnc::mpi::check_mpi(
      MPI_Allgather(mine, r_count, MPI_INT64_T, all.data(), r_count, MPI_INT64_T, c->comm),
      "MPI_Allgather");
  std::vector<std::int64_t> statuses(std::size_t(c->size));
  for (std::size_t r = 0; r < statuses.size(); ++r) statuses[r] = all[r * r_count + r_status];
  cnc::mpi::throw_first_failure(c->comm, statuses, c->rank, message, call_name(call));
  for (int r = 1; r < c->size; ++r)
    if (all[std::size_t(r) * r_count + r_call] != call)
      fail(CNC_ERR_STATE, "%s: rank %d called %s: collective calls must come in the same order",
           call_name(call), r, call_name(all[std::size_t(r) * r_count + r_call]));
  return all;
}

// Begin(SYSTEM): the row blocks, n and CNC_NB_SYSTEMS agreed; the variables made (kept, with
// their locks, from an earlier system).
void begin_system(CNCMPIcontext c) {
  assembly_state& as = c->as;
  const char* call = "cncMPIBegin";
  std::string message;
  const int status = cnc::mpi::local_status(message, [&] {
    need_state(as, call, "CNC_SYSTEM",
               {CNC_STATE_INITIAL, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
    if (as.n == 0)
      fail(CNC_ERR_STATE, "%s(CNC_SYSTEM): set this rank's rows first (cncMPISetRows)", call);
    const std::size_t size = std::size_t(as.rows()) * std::size_t(as.k);
    // Both sized for these rows and systems: a Begin that failed after making them (the ranks
    // disagreeing) may be followed by other rows and CNC_NB_SYSTEMS of the same product.
    if (as.values.size() != size || as.locked.size() != std::size_t(as.rows())) {
      cnc::mpi::reserve_host(cnc::memory::variables(double(as.rows()), as.k),
                             "the variables (" + std::to_string(as.rows()) + " rows, " +
                                 std::to_string(as.k) + " system(s))");
      as.values.assign(size, 0.0);
      as.locked.assign(std::size_t(as.rows()), 0);
    }
  });
  std::int64_t mine[r_count] = {};
  mine[r_n] = as.n, mine[r_row_begin] = as.row_begin, mine[r_row_end] = as.row_end;
  mine[r_k] = as.k;
  const std::vector<std::int64_t> all = agree_call(c, call_begin_system, status, message, mine);
  auto at = [&](int r, int f) { return all[std::size_t(r) * r_count + std::size_t(f)]; };
  std::vector<std::int64_t> starts(std::size_t(c->size) + 1);
  for (int r = 0; r < c->size; ++r) {
    if (at(r, r_n) != at(0, r_n) || at(r, r_k) != at(0, r_k))
      fail(CNC_ERR_INVALID_VALUE,
           "cncMPIBegin(CNC_SYSTEM): rank %d has n=%lld, CNC_NB_SYSTEMS=%lld; rank 0 n=%lld, "
           "CNC_NB_SYSTEMS=%lld",
           r, (long long)at(r, r_n), (long long)at(r, r_k), (long long)at(0, r_n),
           (long long)at(0, r_k));
    const std::int64_t expected = r == 0 ? 0 : at(r - 1, r_row_end);
    if (at(r, r_row_begin) != expected)
      fail(CNC_ERR_INVALID_VALUE,
           "cncMPIBegin(CNC_SYSTEM): the row blocks do not tile [0, n) in rank order: rank %d "
           "starts at row %lld, expected %lld",
           r, (long long)at(r, r_row_begin), (long long)expected);
    starts[std::size_t(r)] = expected;
  }
  starts.back() = at(c->size - 1, r_row_end);
  if (starts.back() != as.n)
    fail(CNC_ERR_INVALID_VALUE,
         "cncMPIBegin(CNC_SYSTEM): the row blocks do not tile [0, n): they end at row %lld, not at "
         "n=%lld",
         (long long)starts.back(), (long long)as.n);
  as.starts = std::move(starts);
  as.state = CNC_STATE_SYSTEM;
}

// Begin(MATRIX): an empty table over this rank's rows; the locks and locked values as they are.
void begin_matrix(CNCMPIcontext c) {
  assembly_state& as = c->as;
  need_state(as, "cncMPIBegin", "CNC_MATRIX",
             {CNC_STATE_SYSTEM, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
  const std::int64_t rows = as.rows();
  as.coo.reset(std::int32_t(std::max<std::int64_t>(rows, 1)), 0, c->threads);
  as.b.assign(std::size_t(rows) * std::size_t(as.k), 0.0);
  as.locked_at = as.locked;
  as.values_at = as.values;
  as.a = cnc::csr_matrix{};
  as.rows_done = 0;
  as.state = CNC_STATE_MATRIX;
}

// This rank's rows as a CSR (local rows, global columns, sorted, duplicates summed).
cnc::csr_matrix own_rows(assembly_state& as) {
  if (as.rows() > 0) return as.coo.to_csr({}, std::int32_t(as.rows()));
  cnc::csr_matrix m;
  m.row_ptr.assign(1, 0);
  return m;
}

// The free rows over the free unknowns when some rank has locked variables (collective): the
// free unknowns numbered rank after rank, and for every column another rank owns, its free
// number or, locked, its values, asked of its owner (exchange_requests, as the halo plan asks).
// Every buffer is made in a local step that the ranks agree on before the next collective, so
// that a rank failing to make one (memory, MPI's int counts) fails the call on every rank.
void eliminate_locks(CNCMPIcontext c, cnc::csr_matrix& rows_csr) {
  assembly_state& as = c->as;
  const char* call = "cncMPIEnd(CNC_MATRIX)";
  const std::int64_t lo = as.row_begin, hi = as.row_end, rows = as.rows();
  const std::size_t k = std::size_t(as.k);
  std::vector<std::int32_t> free_index, free_rows, halo;
  std::vector<std::int64_t> free_counts;
  cnc::mpi::requests q;
  std::string message;
  int status = cnc::mpi::local_status(message, [&] {
    cnc::mpi::reserve_host(8.0 * double(rows) + 4.0 * double(rows_csr.nnz()),
                           "the free variables' numbering (" + std::to_string(rows) + " rows)");
    free_index.assign(std::size_t(rows), -1);
    free_rows.reserve(std::size_t(rows));
    for (std::int64_t r = 0; r < rows; ++r)
      if (!as.locked_at[std::size_t(r)]) {
        free_index[std::size_t(r)] = std::int32_t(free_rows.size());
        free_rows.push_back(std::int32_t(r));
      }
    for (std::int64_t e = 0; e < rows_csr.nnz(); ++e) {
      const std::int32_t col = rows_csr.col[std::size_t(e)];
      if (col < lo || col >= hi) halo.push_back(col);
    }
    std::sort(halo.begin(), halo.end());
    halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
    free_counts.resize(std::size_t(c->size));
    q = cnc::mpi::count_requests(halo, as.starts);
  });
  cnc::mpi::agree(c->comm, c->size, c->rank, status, message, call);

  // Free unknowns before this rank's.
  const std::int64_t nf = std::int64_t(free_rows.size());
  cnc::mpi::check_mpi(
      MPI_Allgather(&nf, 1, MPI_INT64_T, free_counts.data(), 1, MPI_INT64_T, c->comm),
      "MPI_Allgather");
  std::int64_t free_begin = 0, n_free = 0;
  for (int r = 0; r < c->size; ++r) {
    if (r < c->rank) free_begin += free_counts[std::size_t(r)];
    n_free += free_counts[std::size_t(r)];
  }
  // Who owns each halo column; the owners answer with (free number or -1, k values), one
  // datatype of k + 1 doubles an answer (the counts are answers, as the requests' rows).
  const std::size_t w = k + 1;
  std::vector<double> answer, got;
  std::unique_ptr<cnc::mpi::mpi_doubles> answer_type;
  cnc::mpi::exchange_requests(c->comm, q, halo, call, [&](std::size_t asked) {
    const double bytes = 8.0 * double(w) * double(asked + halo.size());
    cnc::mpi::reserve_host(bytes, "the locked variables' answers (" + std::to_string(asked) +
                                      " asked, " + std::to_string(halo.size()) + " to ask, " +
                                      std::to_string(k) + " system(s))");
    answer.resize(asked * w), got.resize(halo.size() * w);
    answer_type = std::make_unique<cnc::mpi::mpi_doubles>(int(w));
  });
  const std::vector<std::int32_t>& asked = q.asked;
  for (std::size_t t = 0; t < asked.size(); ++t) {
    const std::size_t l = std::size_t(std::int64_t(asked[t]) - lo);  // plan_exchange's check
    answer[t * w] =
        as.locked_at[l] ? -1.0 : double(free_begin + free_index[l]);  // exact below 2^53
    for (std::size_t s = 0; s < k; ++s)
      answer[t * w + 1 + s] = as.values_at[l + s * std::size_t(rows)];
  }
  cnc::mpi::check_mpi(
      MPI_Alltoallv(answer.data(), q.give.data(), q.give_at.data(), answer_type->type(), got.data(),
                    q.need.data(), q.need_at.data(), answer_type->type(), c->comm),
      "MPI_Alltoallv");

  // The free rows: free columns renumbered, locked ones moved to lock_rhs (Σ a_ij x_j).
  cnc::csr_matrix a;
  std::vector<double> lock_rhs;
  status = cnc::mpi::local_status(message, [&] {
    a.n = std::int32_t(nf);
    a.row_ptr.assign(std::size_t(nf) + 1, 0);
    lock_rhs.assign(std::size_t(nf) * k, 0.0);
    std::vector<std::int32_t> col;
    std::vector<double> val;
    for (std::int64_t f = 0; f < nf; ++f) {
      const std::size_t r = std::size_t(free_rows[std::size_t(f)]);
      for (std::int64_t e = rows_csr.row_ptr[r]; e < rows_csr.row_ptr[r + 1]; ++e) {
        const std::int32_t g = rows_csr.col[std::size_t(e)];
        const double v = rows_csr.val[std::size_t(e)];
        const double* x = nullptr;  // the locked column's values (stride xs), if locked
        std::size_t xs = 1;
        std::int64_t to = -1;
        if (g >= lo && g < hi) {
          const std::size_t l = std::size_t(g - lo);
          if (as.locked_at[l])
            x = as.values_at.data() + l, xs = std::size_t(rows);
          else
            to = free_begin + free_index[l];
        } else {
          const std::size_t p =
              std::size_t(std::lower_bound(halo.begin(), halo.end(), g) - halo.begin());
          if (got[p * w] < 0)
            x = got.data() + p * w + 1;
          else
            to = std::int64_t(got[p * w]);
        }
        if (x) {
          for (std::size_t s = 0; s < k; ++s)
            lock_rhs[std::size_t(f) + s * std::size_t(nf)] += v * x[s * xs];
        } else {
          col.push_back(std::int32_t(to)), val.push_back(v);
        }
      }
      a.row_ptr[std::size_t(f) + 1] = std::int64_t(col.size());
    }
    a.col.assign(col.begin(), col.end());
    a.val.assign(val.begin(), val.end());
  });
  cnc::mpi::agree(c->comm, c->size, c->rank, status, message, call);
  as.a = std::move(a);
  as.lock_rhs = std::move(lock_rhs);
  as.free_rows = std::move(free_rows);
  as.free_begin = free_begin, as.n_free = n_free;
}

// End(MATRIX): this rank's rows made a CSR; with locks anywhere, the free system. What the
// no-lock case keeps is made before the agreement too (nothing is allocated after it).
void end_matrix(CNCMPIcontext c) {
  assembly_state& as = c->as;
  std::string message;
  cnc::csr_matrix rows_csr;
  std::vector<double> lock_rhs;
  std::vector<std::int32_t> free_rows;
  const int status = cnc::mpi::local_status(message, [&] {
    if (as.state == CNC_STATE_ROW)
      fail(CNC_ERR_STATE, "cncMPIEnd(CNC_MATRIX): inside a row (cncMPIEnd(CNC_ROW) first)");
    need_state(as, "cncMPIEnd", "CNC_MATRIX", {CNC_STATE_MATRIX});
    rows_csr = own_rows(as);
    lock_rhs.assign(std::size_t(as.rows()) * std::size_t(as.k), 0.0);
    free_rows.resize(std::size_t(as.rows()));
    for (std::size_t r = 0; r < free_rows.size(); ++r) free_rows[r] = std::int32_t(r);
  });
  std::int64_t mine[r_count] = {};
  mine[r_locks] =
      std::any_of(as.locked_at.begin(), as.locked_at.end(), [](std::uint8_t l) { return l != 0; })
          ? 1
          : 0;
  const std::vector<std::int64_t> all = agree_call(c, call_end_matrix, status, message, mine);
  bool locks = false;
  for (int r = 0; r < c->size; ++r) locks = locks || all[std::size_t(r) * r_count + r_locks] != 0;
  if (locks) {
    std::vector<double>().swap(lock_rhs);  // eliminate_locks makes its own, for the free rows
    std::vector<std::int32_t>().swap(free_rows);
    eliminate_locks(c, rows_csr);
  } else {  // every variable free: the rows as they are
    as.a = std::move(rows_csr);
    as.lock_rhs = std::move(lock_rhs);
    as.free_rows = std::move(free_rows);
    as.free_begin = as.row_begin, as.n_free = as.n;
  }
  as.coo.reset(1, 0, c->threads);  // the table's memory released
  as.state = CNC_STATE_MATRIX_CONSTRUCTED;
}

// Solve: the free rows' b (minus the locked columns' part) and x, solved by cncMPISolveCSR's
// path, x scattered back over the free variables.
void solve(CNCMPIcontext c) {
  assembly_state& as = c->as;
  std::string message;
  std::vector<double> bf, xf;
  const std::size_t nf = as.free_rows.size(), k = std::size_t(as.k), rows = std::size_t(as.rows());
  const int status = cnc::mpi::local_status(message, [&] {
    need_state(as, "cncMPISolve", "", {CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
    bf.resize(nf * k), xf.resize(nf * k);
    for (std::size_t s = 0; s < k; ++s)
      for (std::size_t f = 0; f < nf; ++f) {
        const std::size_t r = std::size_t(as.free_rows[f]);
        bf[f + s * nf] = as.b[r + s * rows] - as.lock_rhs[f + s * nf];
        xf[f + s * nf] = as.values[r + s * rows];
      }
  });
  std::int64_t mine[r_count] = {};
  agree_call(c, call_solve, status, message, mine);
  if (as.n_free == 0) {  // every variable locked: nothing to solve (as cncSolve)
    c->iterations = c->reductions = c->halo_values = 0;
    c->neighbours = 0, c->reason = CNC_REASON_CONVERGED, c->solver_used = 0;
    c->error = c->true_error = c->solve_time = c->elapsed = 0;
    as.state = CNC_STATE_SOLVED;
    return;
  }
  static_assert(sizeof(std::int32_t) == sizeof(CNCuint), "columns are read as CNCuint");
  cnc::mpi::solve_rows(c, "cncMPISolve", CNCuint(as.n_free), CNCuint(as.free_begin),
                       CNCuint(as.free_begin + std::int64_t(nf)), as.a.row_ptr.data(),
                       reinterpret_cast<const CNCuint*>(as.a.col.data()), as.a.val.data(), 0,
                       CNCuint(k), bf.data(), xf.data());
  for (std::size_t s = 0; s < k; ++s)
    for (std::size_t f = 0; f < nf; ++f)
      as.values[std::size_t(as.free_rows[f]) + s * rows] = xf[f + s * nf];
  as.state = CNC_STATE_SOLVED;
}

const std::initializer_list<int> settable_states = {CNC_STATE_SYSTEM, CNC_STATE_MATRIX_CONSTRUCTED,
                                                    CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED};
const std::initializer_list<int> readable_states = {CNC_STATE_SYSTEM,
                                                    CNC_STATE_MATRIX,
                                                    CNC_STATE_ROW,
                                                    CNC_STATE_MATRIX_CONSTRUCTED,
                                                    CNC_STATE_SYSTEM_CONSTRUCTED,
                                                    CNC_STATE_SOLVED};

CNCstatus set_variable(CNCMPIcontext c, const char* call, CNCuint i, CNCuint k, double v) {
  return local_call(c, [&] {
    assembly_state& as = c->as;
    char args[96];
    std::snprintf(args, sizeof args, "i=%u, k=%u, value=%g", i, k, v);
    need_state(as, call, args, settable_states);
    const std::int64_t r = own_row(as, i, call, args);
    need_system(as, k, call, args);
    need_finite(v, call, args);
    as.values[std::size_t(r) + std::size_t(k) * std::size_t(as.rows())] = v;
  });
}
CNCstatus get_variable(CNCMPIcontext c, const char* call, CNCuint i, CNCuint k, double* v) {
  return read_call(c, [&] {
    assembly_state& as = c->as;
    char args[96];
    std::snprintf(args, sizeof args, "i=%u, k=%u", i, k);
    if (!v) fail(CNC_ERR_NULL_POINTER, "%s(%s): value is NULL", call, args);
    need_state(as, call, args, readable_states);
    const std::int64_t r = own_row(as, i, call, args);
    need_system(as, k, call, args);
    *v = as.values[std::size_t(r) + std::size_t(k) * std::size_t(as.rows())];
  });
}
CNCstatus set_lock(CNCMPIcontext c, const char* call, CNCuint i, bool lock) {
  return local_call(c, [&] {
    assembly_state& as = c->as;
    char args[32];
    std::snprintf(args, sizeof args, "i=%u", i);
    need_state(as, call, args, {CNC_STATE_SYSTEM});
    as.locked[std::size_t(own_row(as, i, call, args))] = lock ? 1 : 0;
  });
}

// Why an entry was refused (cold: the call tests everything in one expression first).
[[noreturn]] __attribute__((noinline, cold)) void refuse_entry(const assembly_state& as,
                                                               const char* call, CNCuint i,
                                                               CNCuint j, double v) {
  char args[96];
  std::snprintf(args, sizeof args, "i=%u, j=%u, value=%g", i, j, v);
  need_state(as, call, args, {CNC_STATE_MATRIX});
  own_row(as, i, call, args);
  need_column(as, j, call, args);
  need_finite(v, call, args);
  fail(CNC_ERR_INTERNAL, "%s(%s): entry refused for no reason", call, args);
}

CNCstatus row_rhs(CNCMPIcontext c, const char* call, CNCuint k, double v) {
  return local_call(c, [&] {
    assembly_state& as = c->as;
    char args[64];
    std::snprintf(args, sizeof args, "k=%u, value=%g", k, v);
    need_state(as, call, args, {CNC_STATE_ROW});
    need_system(as, k, call, args);
    need_finite(v, call, args);
    as.row_b[k] = v;
  });
}
CNCstatus add_rhs(CNCMPIcontext c, const char* call, CNCuint i, CNCuint k, double v) {
  return local_call(c, [&] {
    assembly_state& as = c->as;
    char args[96];
    std::snprintf(args, sizeof args, "i=%u, k=%u, value=%g", i, k, v);
    need_state(as, call, args, {CNC_STATE_MATRIX});
    const std::int64_t r = own_row(as, i, call, args);
    need_system(as, k, call, args);
    need_finite(v, call, args);
    as.b[std::size_t(r) + std::size_t(k) * std::size_t(as.rows())] += v;
  });
}

}  // namespace

extern "C" {

CNC_MPI_API CNCstatus cncMPISetRows(CNCMPIcontext context, CNCuint n, CNCuint row_begin,
                                    CNCuint row_end) {
  return local_call(context, [&] {
    char args[96];
    std::snprintf(args, sizeof args, "n=%u, row_begin=%u, row_end=%u", n, row_begin, row_end);
    need_state(context->as, "cncMPISetRows", args, {CNC_STATE_INITIAL});
    if (n == 0 || n > CNCuint(INT32_MAX - 8))
      fail(CNC_ERR_INVALID_VALUE, "cncMPISetRows(%s): n is out of range", args);
    if (row_begin > row_end || row_end > n)
      fail(CNC_ERR_INVALID_VALUE, "cncMPISetRows(%s): the rows are not inside [0, n)", args);
    context->as.n = n, context->as.row_begin = row_begin, context->as.row_end = row_end;
  });
}

CNC_MPI_API CNCstatus cncMPIBegin(CNCMPIcontext context, CNCenum primitive) {
  if (!context) return CNC_ERR_NULL_POINTER;
  if (primitive == CNC_SYSTEM) {  // collective
    context->message.clear();
    std::string message;
    const int s = cnc::mpi::local_status(message, [&] { begin_system(context); });
    if (s != CNC_OK) context->message = message;
    return s;
  }
  return local_call(context, [&] {
    assembly_state& as = context->as;
    switch (primitive) {
      case CNC_MATRIX:
        begin_matrix(context);
        return;
      case CNC_ROW:
        need_state(as, "cncMPIBegin", "CNC_ROW", {CNC_STATE_MATRIX});
        as.row.clear();
        as.row_b.assign(std::size_t(as.k), 0.0);
        as.row_w = 1.0;
        as.state = CNC_STATE_ROW;
        return;
      default:
        fail(CNC_ERR_INVALID_ENUM,
             "cncMPIBegin(primitive=0x%x): not CNC_SYSTEM, CNC_MATRIX or CNC_ROW (pattern-first "
             "assembly is not offered by distributed contexts)",
             primitive);
    }
  });
}

CNC_MPI_API CNCstatus cncMPIEnd(CNCMPIcontext context, CNCenum primitive) {
  if (!context) return CNC_ERR_NULL_POINTER;
  if (primitive == CNC_MATRIX) {  // collective
    context->message.clear();
    std::string message;
    const int s = cnc::mpi::local_status(message, [&] { end_matrix(context); });
    if (s != CNC_OK) context->message = message;
    return s;
  }
  return local_call(context, [&] {
    assembly_state& as = context->as;
    switch (primitive) {
      case CNC_ROW: {
        need_state(as, "cncMPIEnd", "CNC_ROW", {CNC_STATE_ROW});
        as.state = CNC_STATE_MATRIX;
        const std::int64_t r = as.rows_done;
        if (r >= as.rows())
          fail(CNC_ERR_INDEX_OUT_OF_RANGE,
               "cncMPIEnd(CNC_ROW): this rank's row %lld (global row %lld) is past its rows "
               "[%lld, %lld) (row dropped)",
               (long long)r, (long long)as.row_begin + (long long)r, (long long)as.row_begin,
               (long long)as.row_end);
        for (const auto& [j, v] : as.row) as.coo.add(std::int32_t(r), j, as.row_w * v);
        for (std::size_t s = 0; s < std::size_t(as.k); ++s)
          as.b[std::size_t(r) + s * std::size_t(as.rows())] += as.row_w * as.row_b[s];
        ++as.rows_done;
        return;
      }
      case CNC_SYSTEM:
        need_state(as, "cncMPIEnd", "CNC_SYSTEM", {CNC_STATE_MATRIX_CONSTRUCTED});
        as.state = CNC_STATE_SYSTEM_CONSTRUCTED;
        return;
      default:
        fail(CNC_ERR_INVALID_ENUM,
             "cncMPIEnd(primitive=0x%x): not CNC_SYSTEM, CNC_MATRIX or CNC_ROW", primitive);
    }
  });
}

CNC_MPI_API CNCstatus cncMPISolve(CNCMPIcontext context) {
  if (!context) return CNC_ERR_NULL_POINTER;
  context->message.clear();
  std::string message;
  const int s = cnc::mpi::local_status(message, [&] { solve(context); });
  if (s != CNC_OK) context->message = message;
  return s;
}

CNC_MPI_API CNCstatus cncMPIAddIJCoefficient(CNCMPIcontext context, CNCuint i, CNCuint j,
                                             double value) {
  return local_call(context, [&] {
    assembly_state& as = context->as;
    if (as.state == CNC_STATE_MATRIX && std::int64_t(i) >= as.row_begin &&
        std::int64_t(i) < as.row_end && std::int64_t(j) < as.n && std::isfinite(value)) [[likely]] {
      as.coo.add(std::int32_t(std::int64_t(i) - as.row_begin), std::int32_t(j), value);
      return;
    }
    refuse_entry(as, "cncMPIAddIJCoefficient", i, j, value);
  });
}

CNC_MPI_API CNCstatus cncMPIAddIJCoefficients(CNCMPIcontext context, CNCint64 count,
                                              const CNCuint* i, const CNCuint* j,
                                              const double* values) {
  return local_call(context, [&] {
    assembly_state& as = context->as;
    const char* call = "cncMPIAddIJCoefficients";
    char args[128];
    std::snprintf(args, sizeof args, "count=%lld", (long long)count);
    need_state(as, call, args, {CNC_STATE_MATRIX});
    if (count < 0) fail(CNC_ERR_INVALID_VALUE, "%s(%s): count must be >= 0", call, args);
    if (count == 0) return;
    if (!i || !j || !values)
      fail(CNC_ERR_NULL_POINTER, "%s(%s): i, j and values must not be NULL", call, args);
    // Every entry is checked before any is added, so a refused call adds nothing.
    const std::int64_t lo = as.row_begin, hi = as.row_end, n = as.n;
    const std::int64_t bad =
        cnc::first_index(count, 1 << 16, cnc::host_threads(context->threads), [&](std::int64_t e) {
          return std::int64_t(i[e]) < lo || std::int64_t(i[e]) >= hi || std::int64_t(j[e]) >= n ||
                 !std::isfinite(values[e]);
        });
    if (bad >= 0) {
      std::snprintf(args, sizeof args, "count=%lld, entry %lld: i=%u, j=%u, value=%g",
                    (long long)count, (long long)bad, i[bad], j[bad], values[bad]);
      own_row(as, i[bad], call, args);
      need_column(as, j[bad], call, args);
      need_finite(values[bad], call, args);
    }
    for (std::int64_t e = 0; e < count; ++e)
      as.coo.add(std::int32_t(std::int64_t(i[e]) - lo), std::int32_t(j[e]), values[e]);
  });
}

CNC_MPI_API CNCstatus cncMPIAddIRightHandSide(CNCMPIcontext context, CNCuint i, double value) {
  return add_rhs(context, "cncMPIAddIRightHandSide", i, 0, value);
}
CNC_MPI_API CNCstatus cncMPIMultiAddIRightHandSide(CNCMPIcontext context, CNCuint i, CNCuint k,
                                                   double value) {
  return add_rhs(context, "cncMPIMultiAddIRightHandSide", i, k, value);
}

CNC_MPI_API CNCstatus cncMPICoefficient(CNCMPIcontext context, CNCuint j, double value) {
  return local_call(context, [&] {
    assembly_state& as = context->as;
    char args[64];
    std::snprintf(args, sizeof args, "j=%u, value=%g", j, value);
    need_state(as, "cncMPICoefficient", args, {CNC_STATE_ROW});
    need_column(as, j, "cncMPICoefficient", args);
    need_finite(value, "cncMPICoefficient", args);
    as.row.emplace_back(std::int32_t(j), value);
  });
}
CNC_MPI_API CNCstatus cncMPIRightHandSide(CNCMPIcontext context, double value) {
  return row_rhs(context, "cncMPIRightHandSide", 0, value);
}
CNC_MPI_API CNCstatus cncMPIMultiRightHandSide(CNCMPIcontext context, CNCuint k, double value) {
  return row_rhs(context, "cncMPIMultiRightHandSide", k, value);
}
CNC_MPI_API CNCstatus cncMPIRowScaling(CNCMPIcontext context, double value) {
  return local_call(context, [&] {
    char args[48];
    std::snprintf(args, sizeof args, "value=%g", value);
    need_state(context->as, "cncMPIRowScaling", args, {CNC_STATE_ROW});
    need_finite(value, "cncMPIRowScaling", args);
    context->as.row_w = value;
  });
}

CNC_MPI_API CNCstatus cncMPISetRightHandSide(CNCMPIcontext context, CNCuint k, const double* b) {
  return local_call(context, [&] {
    assembly_state& as = context->as;
    const char* call = "cncMPISetRightHandSide";
    char args[48];
    std::snprintf(args, sizeof args, "k=%u", k);
    need_state(as, call, args,
               {CNC_STATE_MATRIX_CONSTRUCTED, CNC_STATE_SYSTEM_CONSTRUCTED, CNC_STATE_SOLVED});
    need_system(as, k, call, args);
    const std::int64_t rows = as.rows();
    if (rows > 0 && !b) fail(CNC_ERR_NULL_POINTER, "%s(%s): b is NULL", call, args);
    for (std::int64_t r = 0; r < rows; ++r)
      if (!std::isfinite(b[r]))
        fail(CNC_ERR_NOT_FINITE, "%s(%s): b[%lld] is not finite", call, args, (long long)r);
    std::copy(b, b + rows, as.b.begin() + std::ptrdiff_t(k) * rows);
    if (as.state == CNC_STATE_SOLVED) as.state = CNC_STATE_SYSTEM_CONSTRUCTED;
  });
}

CNC_MPI_API CNCstatus cncMPISetVariable(CNCMPIcontext context, CNCuint i, double value) {
  return set_variable(context, "cncMPISetVariable", i, 0, value);
}
CNC_MPI_API CNCstatus cncMPIMultiSetVariable(CNCMPIcontext context, CNCuint i, CNCuint k,
                                             double value) {
  return set_variable(context, "cncMPIMultiSetVariable", i, k, value);
}
CNC_MPI_API CNCstatus cncMPIGetVariable(CNCMPIcontext context, CNCuint i, double* value) {
  return get_variable(context, "cncMPIGetVariable", i, 0, value);
}
CNC_MPI_API CNCstatus cncMPIMultiGetVariable(CNCMPIcontext context, CNCuint i, CNCuint k,
                                             double* value) {
  return get_variable(context, "cncMPIMultiGetVariable", i, k, value);
}

CNC_MPI_API CNCstatus cncMPISetVariables(CNCMPIcontext context, CNCuint k, const double* x) {
  return local_call(context, [&] {
    assembly_state& as = context->as;
    const char* call = "cncMPISetVariables";
    char args[48];
    std::snprintf(args, sizeof args, "k=%u", k);
    need_state(as, call, args, settable_states);
    need_system(as, k, call, args);
    const std::int64_t rows = as.rows();
    if (rows > 0 && !x) fail(CNC_ERR_NULL_POINTER, "%s(%s): x is NULL", call, args);
    for (std::int64_t r = 0; r < rows; ++r)
      if (!std::isfinite(x[r]))
        fail(CNC_ERR_NOT_FINITE, "%s(%s): x[%lld] is not finite", call, args, (long long)r);
    std::copy(x, x + rows, as.values.begin() + std::ptrdiff_t(k) * rows);
  });
}
CNC_MPI_API CNCstatus cncMPIGetVariables(CNCMPIcontext context, CNCuint k, double* x) {
  return read_call(context, [&] {
    assembly_state& as = context->as;
    const char* call = "cncMPIGetVariables";
    char args[48];
    std::snprintf(args, sizeof args, "k=%u", k);
    need_state(as, call, args, readable_states);
    need_system(as, k, call, args);
    const std::int64_t rows = as.rows();
    if (rows > 0 && !x) fail(CNC_ERR_NULL_POINTER, "%s(%s): x is NULL", call, args);
    std::copy(as.values.begin() + std::ptrdiff_t(k) * rows,
              as.values.begin() + std::ptrdiff_t(k + 1) * rows, x);
  });
}

CNC_MPI_API CNCstatus cncMPILockVariable(CNCMPIcontext context, CNCuint i) {
  return set_lock(context, "cncMPILockVariable", i, true);
}
CNC_MPI_API CNCstatus cncMPIUnlockVariable(CNCMPIcontext context, CNCuint i) {
  return set_lock(context, "cncMPIUnlockVariable", i, false);
}
CNC_MPI_API CNCstatus cncMPIVariableIsLocked(CNCMPIcontext context, CNCuint i, CNCboolean* locked) {
  return read_call(context, [&] {
    assembly_state& as = context->as;
    char args[32];
    std::snprintf(args, sizeof args, "i=%u", i);
    if (!locked) fail(CNC_ERR_NULL_POINTER, "cncMPIVariableIsLocked(%s): locked is NULL", args);
    need_state(as, "cncMPIVariableIsLocked", args, readable_states);
    *locked = as.locked[std::size_t(own_row(as, i, "cncMPIVariableIsLocked", args))] ? CNC_TRUE
                                                                                     : CNC_FALSE;
  });
}

}  // extern "C"
