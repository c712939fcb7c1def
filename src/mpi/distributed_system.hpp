// A device_system split over the processes of an MPI communicator (libcnc_mpi): each process owns
// a contiguous block of rows of every vector, held by a backend's system over the block of columns
// it owns (or, for a process without rows, an empty operator system), so CG, BiCGSTAB and GMRES
// of solver/krylov.hpp run on it unchanged. What differs from one process is in three places:
// - spmv (and residual): the rows other processes read are gathered (the backend's gather_halo),
//   the halo values travel by non-blocking messages while the backend multiplies the local block,
//   then the backend adds the off-process block's product (add_halo);
// - dots: the local sums, then one collective for all the values of the call;
// - sum_over_ranks (backend.hpp): the methods' other host-side sums, through the same collective.
// Both reductions gather every process's partial sums and add them in rank order, so every
// process gets the same bits (and so takes the same decisions) whatever MPI's reduction order.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "matrix/matrix.hpp"

namespace cnc::mpi {

// One process's rows of the matrix, split for the halo exchange.
struct distributed_matrix {
  std::int32_t n = 0;          // this process's rows
  csr_matrix local;            // columns this process owns, renumbered from 0 (n x n)
  csr_matrix halo;             // n rows; columns index the halo buffer (values other processes own)
  std::int32_t halo_size = 0;  // values received per product, per right-hand side
  std::vector<std::int32_t> halo_global;  // the global row of each halo value, increasing
  // Messages of one product: halo values [recv_at[i], recv_at[i+1]) come from rank recv_rank[i];
  // to send_rank[i] go this process's rows send_row[send_at[i] .. send_at[i+1]).
  std::vector<int> recv_rank, send_rank;
  std::vector<std::int32_t> recv_at, send_at, send_row;
  std::vector<double> inv_diag;  // Jacobi: 1 / a_ii, 1 where a_ii is zero, absent or subnormal
  std::int64_t zero_diagonals = 0;
};

// MPI's counts and offsets are int: 2^31 - 1 at most, in units of the datatype. So values that
// travel as groups (a halo row's k values, a lock answer's k + 1) go as one contiguous datatype a
// group, and the counts of groups are checked (requests below) before any process enters the
// exchange: past int, every process refuses alike (CNC_ERR_INVALID_VALUE), none waits.
class mpi_doubles {
 public:
  explicit mpi_doubles(int count);  // `count` doubles a group
  ~mpi_doubles();
  mpi_doubles(const mpi_doubles&) = delete;
  mpi_doubles& operator=(const mpi_doubles&) = delete;
  MPI_Datatype type() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// Who asks whom for which rows (the halo plan's and the lock elimination's first step): per rank,
// how many of this process's columns it owns (need) and how many of this process's rows it asks
// for (give), with their offsets (size + 1), as MPI's int counts.
struct requests {
  std::vector<int> need, need_at, give, give_at;
  std::vector<std::int32_t> asked;  // the global rows asked of this process, rank by rank
};
// Local (in the caller's step before its agreement): `cols` (sorted global columns that other
// processes own) counted per owner; starts: size + 1 row offsets.
requests count_requests(const std::vector<std::int32_t>& cols,
                        const std::vector<std::int64_t>& starts);
// Collective over comm: the counts exchanged, then the rows asked. Between the two, one agreed
// step (errors named after `call`): the totals checked against int, `asked` made, and
// `prepare(asked)`, the caller's buffers for that many rows asked of it (it reserves their
// memory with reserve_host), so that no process fails alone once the rows travel.
void exchange_requests(MPI_Comm comm, requests& q, const std::vector<std::int32_t>& cols,
                       const char* call, const std::function<void(std::size_t)>& prepare);

// Splits this process's canonical rows [starts[me], starts[me+1]) (`rows`: 0-based, global
// columns, sorted) into the local and halo blocks (local work: whatever it throws, the processes
// agree on before any of them enters the collective plan_exchange). starts: size + 1 offsets.
distributed_matrix split_rows(const csr_view& rows, const std::vector<std::int64_t>& starts, int me,
                              int threads);
// Agrees with the other processes on who sends what to whom (collective over comm:
// exchange_requests of q, made by count_requests(m.halo_global, starts) in the caller's step
// before its agreement) and fills m's message lists.
void plan_exchange(MPI_Comm comm, distributed_matrix& m, requests& q,
                   const std::vector<std::int64_t>& starts, const char* call);

// Throws cnc::error(CNC_ERR_DEVICE) naming the call when an MPI call did not succeed (the
// communicator's error handler is MPI_ERRORS_RETURN).
void check_mpi(int code, const char* call);

// The system over `m` (kept by the caller while the system lives) for k right-hand sides, on
// backend `be` (its system over m.local, in the format choose_format picks, double precision; be
// may be null only where m.n is 0); jacobi: z = d∘r, else z = r. `reductions` (may be null)
// counts the collective reductions issued; *fmt (may be null): the local block's format.
// Local work, no collective: throws cnc::error (CNC_ERR_UNSUPPORTED where the backend has no halo
// operations).
std::unique_ptr<device_system> make_distributed_system(MPI_Comm comm, const distributed_matrix& m,
                                                       int k, bool jacobi, backend* be, int threads,
                                                       std::int64_t* reductions, format* fmt);

// Whether this process's system (made by make_distributed_system) can move its halo on the device.
bool halo_on_device(device_system& d);
// From now on, the halo of `d` travels through `h` (NCCL, device to device; kept by the caller
// while d lives), or, with nullptr, through host memory and MPI (the default).
class nccl_halo;
void use_nccl(device_system& d, nccl_halo* h);

}  // namespace cnc::mpi
