// bench_write: host -> device write bandwidth of an OpenCL device, by the ways a library can move
// a large pageable array (the matrix) there, each timed on its own (median of 3):
//   pageable     clEnqueueWriteBuffer straight from the pageable array (the driver stages it);
//   dma          clEnqueueWriteBuffer from a mapped CL_MEM_ALLOC_HOST_PTR buffer (pinned), no
//                host copy: the transfer alone;
//   memcpy       the host copy alone, every thread, pageable -> mapped pinned buffer;
//   dma async    the same write non-blocking: time spent in the call, then until it is done
//                (a driver that copies inside the call gives no overlap to a stager);
//   staged C     cnc's stager: two (xR: R) pinned buffers of C MiB, the host copy of one chunk
//                overlapped with the device's write of the other;
//   map-device   the device buffer mapped for writing (CL_MAP_WRITE_INVALIDATE_REGION), the host
//                copy into the mapping, unmapped.
//
//   bench_write [--mib M] [--device I] [--threads T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "backends/opencl/cl_api.hpp"
#include "backends/opencl/cl_runtime.hpp"
#include "util/parallel.hpp"

namespace {

using cnc::ocl::api;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void ck(cl_int e, const char* what) {
  if (e != CL_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, e);
    std::exit(1);
  }
}

// On cnc's persistent host pool, in the stager's pieces (what the backend's upload does).
void copy_threads(char* dst, const char* src, std::size_t bytes, int threads) {
  cnc::parallel_pieces(std::int64_t(bytes), std::int64_t(1) << 18, threads,
                       [&](std::int64_t, std::int64_t a, std::int64_t e) {
                         std::memcpy(dst + a, src + a, std::size_t(e - a));
                       });
}

double median3(double a, double b, double c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 1024;
  int dev_index = -1, threads = int(std::thread::hardware_concurrency());
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mib") mib = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--device") dev_index = std::atoi(argv[i + 1]);
    if (a == "--threads") threads = std::atoi(argv[i + 1]);
  }
  std::string why;
  const api* cl = cnc::ocl::load_api(why);
  if (!cl) {
    std::printf("no OpenCL: %s\n", why.c_str());
    return 77;
  }
  const auto devs = cnc::ocl::list_devices(*cl, why);
  if (devs.empty()) {
    std::printf("no OpenCL device: %s\n", why.c_str());
    return 77;
  }
  const cnc::ocl::device_info* d = &devs[0];
  for (const auto& x : devs)
    if ((dev_index < 0 && x.gpu) || x.global_index == dev_index) {
      d = &x;
      break;
    }
  const std::size_t bytes = mib << 20;
  std::printf("# bench_write: %s (%s), %zu MiB, %d host threads; GB/s = 1e9 bytes/s\n",
              d->name.c_str(), d->platform_name.c_str(), mib, threads);
  cl_context ctx = cnc::ocl::shared_context(*cl, *d);
  cl_int err = CL_SUCCESS;
  cl_command_queue q = cl->CreateCommandQueue(ctx, d->id, 0, &err);
  ck(err, "clCreateCommandQueue");
  cl_mem dst = cl->CreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  ck(err, "clCreateBuffer");
  std::vector<char> src(bytes);
  for (std::size_t i = 0; i < bytes; i += 4096) src[i] = char(i);
  ck(cl->EnqueueWriteBuffer(q, dst, CL_TRUE, 0, bytes, src.data(), 0, nullptr, nullptr), "warm");

  auto report = [&](const char* name, double s) {
    std::printf("%-22s %8.3f ms  %7.2f GB/s\n", name, 1e3 * s, double(bytes) / s * 1e-9);
  };
  auto time3 = [&](auto f) {
    double t[3];
    for (double& x : t) {
      ck(cl->Finish(q), "clFinish");
      const double t0 = now();
      f();
      ck(cl->Finish(q), "clFinish");
      x = now() - t0;
    }
    return median3(t[0], t[1], t[2]);
  };
  report("pageable", time3([&] {
           ck(cl->EnqueueWriteBuffer(q, dst, CL_TRUE, 0, bytes, src.data(), 0, nullptr, nullptr),
              "write");
         }));
  // One pinned buffer of the whole size.
  cl_mem pin =
      cl->CreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
  ck(err, "clCreateBuffer (pinned)");
  char* hp = static_cast<char*>(
      cl->EnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &err));
  ck(err, "clEnqueueMapBuffer");
  report("memcpy", time3([&] { copy_threads(hp, src.data(), bytes, threads); }));
  report("dma", time3([&] {
           ck(cl->EnqueueWriteBuffer(q, dst, CL_TRUE, 0, bytes, hp, 0, nullptr, nullptr), "write");
         }));
  {  // Does a non-blocking write from pinned memory return before the transfer is done?
    ck(cl->Finish(q), "clFinish");
    const double t0 = now();
    ck(cl->EnqueueWriteBuffer(q, dst, CL_FALSE, 0, bytes, hp, 0, nullptr, nullptr), "write");
    ck(cl->Flush(q), "clFlush");
    const double t1 = now();
    ck(cl->Finish(q), "clFinish");
    const double t2 = now();
    std::printf("%-22s %8.3f ms in the enqueue call, %8.3f ms after it\n", "dma async",
                1e3 * (t1 - t0), 1e3 * (t2 - t1));
  }
  for (const auto& [chunk_mib, ring] :
       {std::pair{4, 2}, std::pair{32, 2}, std::pair{32, 4}, std::pair{128, 2}}) {
    const std::size_t chunk = std::size_t(chunk_mib) << 20;
    char* stage[4];
    for (int b = 0; b < 4; ++b) stage[b] = hp + std::min(bytes / 4, chunk) * std::size_t(b % ring);
    const std::string name =
        "staged " + std::to_string(chunk_mib) + (ring > 2 ? " x" + std::to_string(ring) : "");
    report(name.c_str(), time3([&] {
             cl_event ev[4] = {nullptr, nullptr, nullptr, nullptr};
             for (std::size_t off = 0, i = 0; off < bytes; off += chunk, ++i) {
               const int b = int(i % std::size_t(ring));
               if (ev[b]) ck(cl->WaitForEvents(1, &ev[b]), "wait"), cl->ReleaseEvent(ev[b]);
               ev[b] = nullptr;
               const std::size_t len = std::min(chunk, bytes - off);
               copy_threads(stage[b], src.data() + off, len, threads);
               ck(cl->EnqueueWriteBuffer(q, dst, CL_FALSE, off, len, stage[b], 0, nullptr, &ev[b]),
                  "write");
               ck(cl->Flush(q), "flush");
             }
             for (cl_event e : ev)
               if (e) cl->WaitForEvents(1, &e), cl->ReleaseEvent(e);
           }));
  }
  report("map-device", time3([&] {
           void* m = cl->EnqueueMapBuffer(q, dst, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes,
                                          0, nullptr, nullptr, &err);
           ck(err, "map device buffer");
           copy_threads(static_cast<char*>(m), src.data(), bytes, threads);
           ck(cl->EnqueueUnmapMemObject(q, dst, m, 0, nullptr, nullptr), "unmap");
         }));
  cl->EnqueueUnmapMemObject(q, pin, hp, 0, nullptr, nullptr);
  cl->Finish(q);
  cl->ReleaseMemObject(pin);
  cl->ReleaseMemObject(dst);
  cl->ReleaseCommandQueue(q);
  return 0;
}
