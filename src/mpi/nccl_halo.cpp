#include "mpi/nccl_halo.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cnc.h"
#include "util/error.hpp"

#ifdef CNC_HAVE_NCCL_H
#include <cuda_runtime.h>
#include <nccl.h>

#include "direct/direct.hpp"  // open_library, resolve: the dlopen helpers
#endif

namespace cnc::mpi {

namespace {

// Every process's flag, AND-ed (a collective).
bool all_agree(MPI_Comm comm, bool mine) {
  int in = mine ? 1 : 0, out = 0;
  check_mpi(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return out != 0;
}

}  // namespace

#ifndef CNC_HAVE_NCCL_H

std::unique_ptr<nccl_halo> make_nccl_halo(MPI_Comm comm, bool, int, std::string& why) {
  all_agree(comm, false);  // collective like the real one
  why = "libcnc_mpi was built without NCCL's header (nccl.h)";
  return nullptr;
}

#else

namespace {

struct nccl_api {
  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*send)(const void*, size_t, ncclDataType_t, int, ncclComm_t,
                       cudaStream_t) = nullptr;
  ncclResult_t (*recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
  const char* (*error_string)(ncclResult_t) = nullptr;
};

// NCCL's functions, opened once for the process; false with `why` when it does not load.
bool load(nccl_api& api, std::string& why) {
  static nccl_api loaded;
  static std::string failure;
  static bool done = false, ok = false;
  if (!done) {
    done = true;
    void* lib = direct::open_library(env::var::nccl_library, {"libnccl.so.2", "libnccl.so"},
                                     "PyPI's nvidia-nccl-cu13; CNC_NCCL_LIBRARY names it", failure);
    const char* name = "libnccl";
    ok = lib && direct::resolve(lib, name, "ncclGetUniqueId", loaded.get_unique_id, failure) &&
         direct::resolve(lib, name, "ncclCommInitRank", loaded.comm_init_rank, failure) &&
         direct::resolve(lib, name, "ncclCommDestroy", loaded.comm_destroy, failure) &&
         direct::resolve(lib, name, "ncclSend", loaded.send, failure) &&
         direct::resolve(lib, name, "ncclRecv", loaded.recv, failure) &&
         direct::resolve(lib, name, "ncclGroupStart", loaded.group_start, failure) &&
         direct::resolve(lib, name, "ncclGroupEnd", loaded.group_end, failure) &&
         direct::resolve(lib, name, "ncclGetErrorString", loaded.error_string, failure);
  }
  api = loaded;
  why = failure;
  return ok;
}

class nccl_comm final : public nccl_halo {
 public:
  nccl_comm(const nccl_api& api, ncclComm_t comm, int device)
      : api_(api), comm_(comm), device_(device) {}
  ~nccl_comm() override { api_.comm_destroy(comm_); }
  nccl_comm(const nccl_comm&) = delete;
  nccl_comm& operator=(const nccl_comm&) = delete;

  void exchange(const distributed_matrix& m, int k, const double* send, double* recv,
                void* stream) override {
    auto s = static_cast<cudaStream_t>(stream);
    check(api_.group_start(), "ncclGroupStart");
    for (std::size_t i = 0; i < m.recv_rank.size(); ++i)
      check(api_.recv(recv + std::size_t(m.recv_at[i]) * std::size_t(k),
                      std::size_t(m.recv_at[i + 1] - m.recv_at[i]) * std::size_t(k), ncclDouble,
                      m.recv_rank[i], comm_, s),
            "ncclRecv");
    for (std::size_t i = 0; i < m.send_rank.size(); ++i)
      check(api_.send(send + std::size_t(m.send_at[i]) * std::size_t(k),
                      std::size_t(m.send_at[i + 1] - m.send_at[i]) * std::size_t(k), ncclDouble,
                      m.send_rank[i], comm_, s),
            "ncclSend");
    check(api_.group_end(), "ncclGroupEnd");
  }
  int device() const override { return device_; }

 private:
  void check(ncclResult_t r, const char* call) const {
    if (r != ncclSuccess)
      throw error(CNC_ERR_DEVICE, std::string(call) + " failed: " + api_.error_string(r));
  }
  nccl_api api_;
  ncclComm_t comm_;
  int device_;
};

}  // namespace

namespace {

// Collective: "" when every rank's GPU is its own, else which two ranks share one (the same
// answer on every rank: each compares the same gathered list).
std::string shared_gpu(MPI_Comm comm, int device, int size) {
  constexpr int name_bytes = 64 + MPI_MAX_PROCESSOR_NAME;
  std::vector<char> mine(name_bytes, 0), all(std::size_t(name_bytes) * std::size_t(size), 0);
  int len = 0;
  check_mpi(MPI_Get_processor_name(mine.data(), &len), "MPI_Get_processor_name");
  const std::size_t at = std::strlen(mine.data());
  mine[at] = '/';
  if (cudaDeviceGetPCIBusId(mine.data() + at + 1, 63, device) != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(mine.data() + at + 1, 63, "device %d", device);
  }
  check_mpi(
      MPI_Allgather(mine.data(), name_bytes, MPI_CHAR, all.data(), name_bytes, MPI_CHAR, comm),
      "MPI_Allgather");
  for (int a = 0; a < size; ++a)
    for (int b = a + 1; b < size; ++b)
      if (std::strncmp(&all[std::size_t(a) * name_bytes], &all[std::size_t(b) * name_bytes],
                       name_bytes) == 0)
        return "ranks " + std::to_string(a) + " and " + std::to_string(b) + " share GPU " +
               std::string(&all[std::size_t(a) * name_bytes]) + " (NCCL needs a GPU a rank)";
  return "";
}

}  // namespace

std::unique_ptr<nccl_halo> make_nccl_halo(MPI_Comm comm, bool want, int device, std::string& why) {
  nccl_api api;
  std::string mine;
  const bool loads = want && load(api, mine);
  if (!all_agree(comm, loads)) {
    why = want ? (loads ? "another rank cannot use NCCL" : mine) : "this rank cannot use NCCL";
    return nullptr;
  }
  if (!api.get_unique_id || !api.comm_init_rank || !api.comm_destroy || !api.error_string)
    throw error(CNC_ERR_INTERNAL, "NCCL agreed on but not loaded");  // every rank loaded it
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  // NCCL needs a GPU a rank. With 3 ranks on 2 GPUs the solve hung (run 66), most likely in
  // ncclCommInitRank, whose duplicate-GPU check fails only on the ranks that share one. So the
  // ranks compare their GPUs first (host name and PCI bus id) and all decline NCCL alike.
  if (const std::string shared = shared_gpu(comm, device, size); !shared.empty()) {
    why = shared;
    return nullptr;
  }
  // Rank 0's identifier, with whether it could make one, to every rank.
  struct {
    ncclUniqueId id;
    int ok;
  } head{};
  if (rank == 0) head.ok = api.get_unique_id(&head.id) == ncclSuccess ? 1 : 0;
  check_mpi(MPI_Bcast(&head, int(sizeof head), MPI_BYTE, 0, comm), "MPI_Bcast");
  if (!head.ok) {
    why = "ncclGetUniqueId failed on rank 0";
    return nullptr;
  }
  // Every rank on its device before any enters ncclCommInitRank (a rank that stayed out would
  // leave the others waiting there).
  const bool on_device = cudaSetDevice(device) == cudaSuccess;
  cudaGetLastError();
  if (!all_agree(comm, on_device)) {
    why = on_device ? "cudaSetDevice failed on another rank" : "cudaSetDevice failed";
    return nullptr;
  }
  ncclComm_t c = nullptr;
  const ncclResult_t r = api.comm_init_rank(&c, size, head.id, rank);
  if (!all_agree(comm, r == ncclSuccess)) {
    if (r == ncclSuccess) api.comm_destroy(c);
    why = r == ncclSuccess ? "ncclCommInitRank failed on another rank"
                           : std::string("ncclCommInitRank: ") + api.error_string(r);
    return nullptr;
  }
  return std::make_unique<nccl_comm>(api, c, device);
}

#endif

}  // namespace cnc::mpi
