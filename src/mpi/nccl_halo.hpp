// The halo exchange of GPU ranks through NCCL (libcnc_mpi): device to device, queued on the
// backend system's stream, instead of through host memory and MPI. NCCL is opened at run time
// (libnccl.so.2: PyPI's nvidia-nccl-cu13 wheel, CNC_NCCL_LIBRARY names it), its header needed
// only to build; without the header this is a stub that is never available.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "mpi/distributed_system.hpp"

namespace cnc::mpi {

class nccl_halo {
 public:
  virtual ~nccl_halo() = default;
  // Queues on `stream` (a cudaStream_t) one grouped exchange of a product's halo: to
  // m.send_rank[i] the values send[m.send_at[i] * k ..], from m.recv_rank[i] into
  // recv[m.recv_at[i] * k ..] (device memory, k columns interleaved as backend.hpp's halo
  // buffers). Throws cnc::error (CNC_ERR_DEVICE) naming NCCL's error.
  virtual void exchange(const distributed_matrix& m, int k, const double* send, double* recv,
                        void* stream) = 0;
  virtual int device() const = 0;  // the CUDA device its communicator was made on
};

// Collective over comm: every process calls it, `want` saying whether it can use NCCL (a CUDA
// system with device halo buffers, on CUDA device `device`). Returns a communicator on every
// process when every one wants it and NCCL opens and initializes on every one; otherwise
// nullptr on every process, with `why` (the same on every process but for the reason's detail).
std::unique_ptr<nccl_halo> make_nccl_halo(MPI_Comm comm, bool want, int device, std::string& why);

}  // namespace cnc::mpi
