// What libcnc_mpi's two API files share (api_mpi.cpp: contexts, parameters, cncMPISolveCSR;
// api_mpi_assembly.cpp: the state machine): the context, the agreement of the ranks on a
// collective call's verdict, and the distributed solve both paths end in.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "assembly/hash_coo.hpp"
#include "backends/backend.hpp"
#include "cnc_mpi.h"
#include "matrix/matrix.hpp"
#include "mpi/nccl_halo.hpp"
#include "util/error.hpp"

namespace cnc::mpi {

// The state machine of one rank (api_mpi_assembly.cpp): its rows [row_begin, row_end) of the
// global system, its variables, and what Begin(MATRIX) .. End(MATRIX) build.
struct assembly_state {
  int state = CNC_STATE_INITIAL;
  int k = 1;  // CNC_NB_SYSTEMS
  // cncMPISetRows (INITIAL state); every rank's first row, agreed at Begin(SYSTEM) (size + 1).
  std::int64_t n = 0, row_begin = 0, row_end = 0;
  std::vector<std::int64_t> starts;
  std::int64_t rows() const { return row_end - row_begin; }
  std::vector<double> values;        // rows * k, column-major: initial guess, locked values, x
  std::vector<std::uint8_t> locked;  // rows
  // Begin(MATRIX) .. End(MATRIX): the coefficients of this rank's rows (row local, column
  // global), the right-hand sides, the locks and locked values as Begin(MATRIX) found them.
  hash_coo coo;
  std::vector<double> b;  // rows * k
  std::vector<std::uint8_t> locked_at;
  std::vector<double> values_at;
  std::int64_t rows_done = 0;  // row-wise assembly: rows ended since Begin(MATRIX)
  std::vector<std::pair<std::int32_t, double>> row;
  std::vector<double> row_b;
  double row_w = 1.0;
  // End(MATRIX): this rank's free rows over the free unknowns (numbered globally, rank after
  // rank), what the locked columns move to the right-hand side (Σ a_ij x_j, nf * k), and which
  // of this rank's rows are free.
  csr_matrix a;
  std::vector<double> lock_rhs;
  std::vector<std::int32_t> free_rows;
  std::int64_t n_free = 0, free_begin = 0;
  // The first failure of a local call since the last collective one: the next collective call
  // reports it on every rank.
  int pending = CNC_OK;
  std::string pending_message;
};

}  // namespace cnc::mpi

struct CNCMPIContextStruct {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  // Parameters (cnc.h's names and defaults).
  int solver = CNC_CG, precond = CNC_PRECOND_JACOBI, restart = 30, threads = 0;
  int backend = CNC_BACKEND_AUTO, device_index = -1, nccl = 1;
  // This process's place on its node (MPI_COMM_TYPE_SHARED): the GPU a rank takes and the
  // default thread count are drawn from it.
  int local_rank = 0, local_size = 1;
  // The backend of the last solve, kept for the next (making one costs a device context).
  std::unique_ptr<cnc::backend> be;
  int be_kind = 0, be_device = -2, be_threads = 0;
  // The NCCL communicator of the last solve that used it (made collectively, kept for the next).
  std::unique_ptr<cnc::mpi::nccl_halo> nccl_comm;
  bool nccl_used = false;
  std::int64_t max_iterations = 0;  // 0: 5 n, at least 100
  double threshold = 1e-6;
  // Statistics of the last solve.
  std::int64_t iterations = 0, reductions = 0, halo_values = 0;
  int neighbours = 0, reason = CNC_REASON_NONE, solver_used = 0, backend_used = 0, format_used = 0;
  double error = 0, true_error = 0, solve_time = 0, elapsed = 0;
  std::string message;
  cnc::mpi::assembly_state as;  // the state machine (api_mpi_assembly.cpp)
};

namespace cnc::mpi {

// Runs f, turning what it throws into (status, message).
template <class F>
int local_status(std::string& message, F&& f) {
  try {
    f();
    return CNC_OK;
  } catch (const error& e) {
    message = e.what();
    if (message.rfind(": ", 0) == 0) message.erase(0, 2);  // memory::reserve's, told without a call
    return e.status();
  } catch (const std::bad_alloc&) {
    message = "out of host memory";
    return CNC_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    message = e.what();
    return CNC_ERR_INTERNAL;
  }
}

// Every rank's (status, message): when some rank failed, every rank throws the first failing
// rank's status and message, "call: rank r: message" (one broadcast from it); otherwise returns.
// `statuses`: one a rank.
void throw_first_failure(MPI_Comm comm, const std::vector<std::int64_t>& statuses, int me,
                         const std::string& mine, const char* call);
// One all-gather of each rank's status; throws (on every rank) as throw_first_failure.
void agree(MPI_Comm comm, int size, int me, int status, const std::string& message,
           const char* call);

// Inside the local step before a collective stage's agreement (never after it, where a rank that
// throws alone leaves the others waiting): refuses with CNC_ERR_OUT_OF_MEMORY when the host lacks
// `bytes` (memory::reserve), or when CNC_FAULT_INJECT=host-alloc:N (util/fault.hpp) says so.
void reserve_host(double bytes, const std::string& what);

// The distributed solve of cncMPISolveCSR (collective; throws cnc::error, the same on every
// rank for what the ranks agree on): this rank's rows [row_begin, row_end) of an n x n system
// as a CSR with global columns. `call` names the API call in the messages.
void solve_rows(CNCMPIcontext c, const char* call, CNCuint n, CNCuint row_begin, CNCuint row_end,
                const CNCint64* row_ptr, const CNCuint* col_idx, const double* values, CNCint base,
                CNCuint nrhs, const double* b, double* x);

}  // namespace cnc::mpi
