// Reverse Cuthill–McKee on the device (cuda_kernels.hpp): the host's rcm_order
// (conversion/reorder_rcm.cpp) bit for bit, in one cooperative launch. A search has as many
// levels as the graph's diameter (hundreds for a 3D mesh), and a level's work is a few
// microseconds: a launch or a host round trip per level would cost more than the work, so the
// levels are separated by grid-wide barriers instead.
//
// Positions p are those before the final reversal (perm[n - 1 - p] = the vertex at p). A vertex's
// claim is kFree until a search reaches it, then the position of its parent (the neighbour of the
// previous level placed first), or kRoot for a search's root and a lone vertex. Claims of earlier
// levels are always below those of later ones, so an atomic minimum by the vertices of level k
// over their neighbours changes only vertices of level k + 1, and its result does not depend on
// the order the threads ran in. Level k + 1 is then the children of level k's vertices in the
// order of their parents, each parent's children by (degree, index): what the host's keys give.
// Two barriers a level:
//   X: per parent of level k, its children (neighbours whose claim is its position); per block
//      (a block takes a contiguous chunk of the level), their sum;       -- barrier --
//   Y: every block adds the chunks' sums before its own, scans its parents' counts into their
//      children's first positions, and places the children ranked by (degree, index); each child
//      claims its own neighbours at once (level k + 2's claims: nothing of level k + 1 is read
//      that they change).                                               -- barrier --
// The George–Liu search for a peripheral start and the components follow the host's run() step
// for step (the counting search, at most kMaxSweeps searches a component, the next component
// from the lowest vertex not placed). Small scalars between barriers go through a ring of three
// reduction slots: written in phase ph into slot ph % 3, read after the barrier, and reset by
// thread 0 in phase ph + 2, after every thread has read it.
#include <cooperative_groups.h>

#include <algorithm>
#include <climits>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "backends/cuda/cuda_kernels.hpp"

namespace cnc::cuda {
namespace {

namespace cg = cooperative_groups;
using u64 = unsigned long long;
using i64 = long long;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kFree = INT_MAX;
constexpr int kRoot = -1;
constexpr int kMaxSweeps = 4;  // searches a component: the counting one + ordering ones (host's)
constexpr u64 kNone = ~0ull;

// (degree, index) as one integer: the order of siblings and George–Liu's choice (host's deg_key).
__device__ __forceinline__ u64 deg_key(int d, int v) {
  return (u64(unsigned(d)) << 32) | unsigned(v);
}

struct slot {
  u64 least;  // atomic minimum of deg_key
  int count;  // atomic sum
  int found;  // atomic minimum of a vertex
  int max_row;
};

struct rcm_args {
  int n;
  const i64* ptr;
  const int* col;
  int* perm;
  int* deg;
  int* claim;
  unsigned* stamp;  // zero at the launch
  int* list[2];     // the counting search's levels; list[0] also the ordering's per-parent counts
  int* chunk;       // per block
  slot* red;        // 3, set to their identities at the launch
  rcm_result* out;
  int max_components;
  int max_row;
};

// Loads of what the launch itself writes: from L2, never an SM's L1 (not coherent across SMs).
__device__ __forceinline__ int ld(const int* p) { return __ldcg(p); }

__device__ __forceinline__ u64 warp_min(u64 v) {
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(~0u, v, o));
  return v;
}

class device_rcm {
 public:
  __device__ device_rcm(const rcm_args& a)
      : a_(a),
        grid_(cg::this_grid()),
        gt_(i64(blockIdx.x) * kThreads + threadIdx.x),
        threads_(i64(gridDim.x) * kThreads),
        lane_(int(threadIdx.x) & 31),
        warp_(int(threadIdx.x) >> 5) {}

  __device__ void run() {
    const int n = a_.n;
    const int start0 = degrees();
    if (start0 == -2) return;  // a row too long: the host orders it
    int start = start0, pos = 0, cursor = 0, comps = 0;
    while (pos < n && comps < a_.max_components) {
      ++comps;
      if (start < 0) cursor = start = next_free(cursor);
      if (a_.deg[start] == 0) {
        if (gt_ == 0) {
          a_.claim[start] = kRoot;
          a_.perm[n - 1 - pos] = start;
        }
        ++pos;
        start = -1;
        sync();
        continue;
      }
      int ecc, x;
      count_levels(start, &ecc, &x);
      for (int s = 2;; ++s) {
        int oecc, olast, reached;
        order_from(x, pos, &oecc, &olast, &reached);
        if (oecc > ecc && s < kMaxSweeps) {
          undo(pos, reached);
          ecc = oecc;
          x = olast;
          continue;
        }
        pos += reached;
        break;
      }
      start = -1;
    }
    if (gt_ == 0) *a_.out = rcm_result{pos, cursor, comps, 0};
  }

 private:
  __device__ slot& mine() { return a_.red[ph_ % 3]; }
  __device__ slot last() {  // what the phase before the last barrier reduced
    const slot* r = &a_.red[(ph_ + 2) % 3];
    return slot{__ldcg(&r->least), __ldcg(&r->count), __ldcg(&r->found), __ldcg(&r->max_row)};
  }
  __device__ void sync() {
    grid_.sync();
    ++ph_;
    if (gt_ == 0) a_.red[(ph_ + 1) % 3] = slot{kNone, 0, kFree, 0};
  }
  __device__ void add_count(bool take, int* base, int* rank) {
    const unsigned b = __ballot_sync(~0u, take);
    int first = 0;
    if (lane_ == 0 && b) first = atomicAdd(&mine().count, __popc(b));
    *base = __shfl_sync(~0u, first, 0);
    *rank = __popc(b & ((1u << lane_) - 1));
  }
  __device__ void reduce_least(u64 key) {
    key = warp_min(key);
    if (lane_ == 0 && key != kNone) atomicMin(&mine().least, key);
  }

  // Degrees (neighbours other than the vertex itself), claims free; returns the vertex of least
  // (degree, index) with a neighbour, -1 if none, -2 when a row is longer than max_row.
  __device__ int degrees() {
    int longest = 0;
    u64 least = kNone;
    for (i64 i = gt_; i < a_.n; i += threads_) {
      const i64 r0 = a_.ptr[i], r1 = a_.ptr[i + 1];
      i64 lo = r0, hi = r1;  // binary search for the diagonal
      while (lo < hi) {
        const i64 mid = (lo + hi) / 2;
        if (a_.col[mid] < i)
          lo = mid + 1;
        else
          hi = mid;
      }
      const int d = int(r1 - r0) - (lo < r1 && a_.col[lo] == i ? 1 : 0);
      a_.deg[i] = d;
      a_.claim[i] = kFree;
      longest = max(longest, int(r1 - r0));
      if (d > 0) least = min(least, deg_key(d, int(i)));
    }
    reduce_least(least);
    for (int o = 16; o > 0; o >>= 1) longest = max(longest, __shfl_xor_sync(~0u, longest, o));
    if (lane_ == 0) atomicMax(&mine().max_row, longest);
    sync();
    if (last().max_row > a_.max_row) {
      if (gt_ == 0) *a_.out = rcm_result{0, 0, 0, last().max_row};
      return -2;
    }
    const u64 m = last().least;
    return m == kNone ? -1 : int(m & 0xffffffffu);
  }

  // The lowest vertex >= from not placed (one exists), in windows doubling from one vertex a
  // thread.
  __device__ int next_free(int from) {
    for (i64 b = from, len = threads_;; b += len, len *= 2) {
      const i64 e = min(i64(a_.n), b + len);
      int f = kFree;
      for (i64 v = b + gt_; v < e && f == kFree; v += threads_)
        if (ld(&a_.claim[v]) == kFree) f = int(v);
      for (int o = 16; o > 0; o >>= 1) f = min(f, __shfl_xor_sync(~0u, f, o));
      if (lane_ == 0 && f != kFree) atomicMin(&mine().found, f);
      sync();
      const int found = last().found;
      if (found != kFree) return found;
    }
  }

  // Breadth-first search from root over vertices not placed, counting levels: *ecc (levels - 1)
  // and *least, the last level's vertex of least (degree, index). A warp a vertex.
  __device__ void count_levels(int root, int* ecc, int* least) {
    const unsigned s = ++stamp_;
    if (gt_ == 0) {
      a_.stamp[root] = s;
      a_.list[0][0] = root;
    }
    sync();
    int f = 1, c = 0, levels = 0;
    for (;;) {
      const int* cur = a_.list[c];
      int* nxt = a_.list[1 - c];
      for (i64 t = i64(blockIdx.x) * kWarps + warp_; t < f; t += threads_ / 32) {
        const int u = ld(&cur[t]);
        const i64 r1 = a_.ptr[u + 1];
        for (i64 k0 = a_.ptr[u]; k0 < r1; k0 += 32) {
          const i64 k = k0 + lane_;
          int w = 0;
          bool take = false;
          if (k < r1) {
            w = a_.col[k];
            take = ld(&a_.claim[w]) == kFree && __ldcg(&a_.stamp[w]) != s &&
                   atomicExch(&a_.stamp[w], s) != s;
          }
          int base, rank;
          add_count(take, &base, &rank);
          if (take) nxt[base + rank] = w;
        }
      }
      sync();
      const int g = last().count;
      if (g == 0) break;
      ++levels;
      f = g;
      c = 1 - c;
    }
    u64 key = kNone;
    for (i64 t = gt_; t < f; t += threads_) {
      const int v = ld(&a_.list[c][t]);
      key = min(key, deg_key(a_.deg[v], v));
    }
    reduce_least(key);
    sync();
    *ecc = levels;
    *least = int(last().least & 0xffffffffu);
  }

  // The Cuthill–McKee search from root, placed from position pos on: *ecc, *least as above,
  // *reached the vertices placed.
  __device__ void order_from(int root, int pos, int* ecc, int* least, int* reached) {
    const int n = a_.n;
    const i64 r0 = a_.ptr[root], r1 = a_.ptr[root + 1];
    if (gt_ == 0) {
      a_.claim[root] = kRoot;
      a_.perm[n - 1 - pos] = root;
    }
    for (i64 k = r0 + gt_; k < r1; k += threads_) {
      const int w = a_.col[k];
      if (w != root) atomicMin(&a_.claim[w], pos);
    }
    sync();
    int lo = pos, f = 1, levels = 0;
    int* const cnt = a_.list[0];
    __shared__ int block_sum;
    for (;;) {
      // X: each parent's children, and the block's sum.
      const int chunk = (f + int(gridDim.x) - 1) / int(gridDim.x);
      const int c0 = min(f, int(blockIdx.x) * chunk), c1 = min(f, c0 + chunk);
      if (threadIdx.x == 0) block_sum = 0;
      __syncthreads();
      for (int t = c0 + warp_; t < c1; t += kWarps) {
        const int p = lo + t, u = ld(&a_.perm[n - 1 - p]);
        const i64 e = a_.ptr[u + 1];
        int c = 0;
        for (i64 k = a_.ptr[u] + lane_; k - lane_ < e; k += 32)
          c += __popc(__ballot_sync(~0u, k < e && ld(&a_.claim[a_.col[k]]) == p));
        if (lane_ == 0) {
          cnt[t] = c;
          atomicAdd(&block_sum, c);
        }
      }
      __syncthreads();
      if (threadIdx.x == 0) a_.chunk[blockIdx.x] = block_sum;
      sync();
      // Y: the chunks before this block's, the level's total, the children's first positions.
      int before = 0, total = 0;
      for (int b = int(threadIdx.x); b < int(gridDim.x); b += kThreads) {
        const int v = ld(&a_.chunk[b]);
        total += v;
        if (b < int(blockIdx.x)) before += v;
      }
      using reduce = cub::BlockReduce<int, kThreads>;
      using scan = cub::BlockScan<int, kThreads>;
      __shared__ typename reduce::TempStorage rtmp;
      __shared__ typename scan::TempStorage stmp;
      __shared__ int shared_before, shared_total, carry;
      const int bsum = reduce(rtmp).Sum(before);
      __syncthreads();
      const int tsum = reduce(rtmp).Sum(total);
      if (threadIdx.x == 0) shared_before = bsum, shared_total = tsum;
      __syncthreads();
      total = shared_total;
      if (total == 0) break;  // the same for every block
      if (threadIdx.x == 0) carry = lo + f + shared_before;
      __syncthreads();
      for (int t0 = c0; t0 < c1; t0 += kThreads) {
        const int t = t0 + int(threadIdx.x);
        const int v = t < c1 ? cnt[t] : 0;
        int excl, tile;
        scan(stmp).ExclusiveSum(v, excl, tile);
        if (t < c1) cnt[t] = carry + excl;
        __syncthreads();
        if (threadIdx.x == 0) carry += tile;
        __syncthreads();
      }
      for (int t = c0 + warp_; t < c1; t += kWarps) place_children(lo + t, cnt[t]);
      sync();
      lo += f;
      f = total;
      ++levels;
    }
    u64 key = kNone;
    for (i64 t = gt_; t < f; t += threads_) {
      const int v = ld(&a_.perm[n - 1 - (lo + int(t))]);
      key = min(key, deg_key(a_.deg[v], v));
    }
    reduce_least(key);
    sync();
    *ecc = levels;
    *least = int(last().least & 0xffffffffu);
    *reached = lo + f - pos;
  }

  // The warp's parent at position p: its children (neighbours claimed by p), ranked by (degree,
  // index), placed from `first` on; each claims its neighbours with its position.
  __device__ void place_children(int p, int first) {
    const int n = a_.n, u = ld(&a_.perm[n - 1 - p]);
    const i64 r0 = a_.ptr[u], r1 = a_.ptr[u + 1];
    auto child = [&](i64 k, int* w, u64* key) {
      if (k >= r1) return false;
      *w = a_.col[k];
      if (ld(&a_.claim[*w]) != p) return false;
      *key = deg_key(a_.deg[*w], *w);
      return true;
    };
    for (i64 a0 = r0; a0 < r1; a0 += 32) {
      int wa = 0;
      u64 ka = 0;
      const bool ca = child(a0 + lane_, &wa, &ka);
      const unsigned ba = __ballot_sync(~0u, ca);
      if (ba == 0) continue;
      int rank = 0;
      for (i64 b0 = r0; b0 < r1; b0 += 32) {
        int wb = 0;
        u64 kb = ka;
        unsigned bb = ba;
        if (b0 != a0) bb = __ballot_sync(~0u, child(b0 + lane_, &wb, &kb));
        while (bb) {
          const int j = __ffs(int(bb)) - 1;
          bb &= bb - 1;
          rank += __shfl_sync(~0u, kb, j) < ka ? 1 : 0;
        }
      }
      const int q = first + rank;
      if (ca) a_.perm[n - 1 - q] = wa;
      // Each child of this tile claims its neighbours, the warp along its row (one trip of
      // dependent loads a child, where a lane a child would walk its row entry by entry).
      for (unsigned bits = ba; bits; bits &= bits - 1) {
        const int j = __ffs(int(bits)) - 1;
        const int w = __shfl_sync(~0u, wa, j), qw = __shfl_sync(~0u, q, j);
        const i64 e = a_.ptr[w + 1];
        for (i64 k = a_.ptr[w] + lane_; k < e; k += 32) {
          int* c = &a_.claim[a_.col[k]];
          if (ld(c) > qw) atomicMin(c, qw);
        }
      }
    }
  }

  // Takes back an ordering search's placements (positions [pos, pos + count)).
  __device__ void undo(int pos, int count) {
    for (i64 t = gt_; t < count; t += threads_)
      a_.claim[ld(&a_.perm[a_.n - 1 - pos - int(t)])] = kFree;
    sync();
  }

  rcm_args a_;
  cg::grid_group grid_;
  i64 gt_, threads_;
  int lane_, warp_;
  int ph_ = 0;
  unsigned stamp_ = 0;
};

__global__ void __launch_bounds__(kThreads) k_rcm(rcm_args a) { device_rcm(a).run(); }

std::size_t align(std::size_t b) { return (b + 255) / 256 * 256; }

}  // namespace

int rcm_grid(int sm_count) {
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_rcm, kThreads, 0) != cudaSuccess ||
      per_sm <= 0)
    return 0;
  // Four blocks an SM: a level's time is its warps' chains of dependent loads, and more warps in
  // flight hide them (run 137, H200: the mesh 128³'s ordering 17.2-18.1 ms with two, 14.8-15.5
  // with four, the same with eight or the most that fit; the 7-point 192³'s 28.3-29.0
  // -> 23.5-24.2).
  constexpr int blocks_per_sm = 4;
  return std::min(per_sm, blocks_per_sm) * sm_count;
}

std::size_t rcm_work_bytes(std::int32_t n, int grid) {
  return 5 * align(std::size_t(n) * sizeof(int)) + align(std::size_t(grid) * sizeof(int)) +
         align(3 * sizeof(slot)) + align(sizeof(rcm_result));
}

cudaError_t rcm_order(std::int32_t n, const std::int64_t* row_ptr, const std::int32_t* col,
                      std::int32_t* perm, void* work, int grid, int max_components, int max_row,
                      rcm_result* result, cudaStream_t s) {
  *result = rcm_result{};
  if (n == 0) return cudaSuccess;
  char* w = static_cast<char*>(work);
  auto take = [&](std::size_t bytes) {
    char* p = w;
    w += align(bytes);
    return p;
  };
  rcm_args a{};
  a.n = n;
  a.ptr = reinterpret_cast<const i64*>(row_ptr);
  a.col = col;
  a.perm = perm;
  const std::size_t nb = std::size_t(n) * sizeof(int);
  a.deg = reinterpret_cast<int*>(take(nb));
  a.claim = reinterpret_cast<int*>(take(nb));
  a.stamp = reinterpret_cast<unsigned*>(take(nb));
  a.list[0] = reinterpret_cast<int*>(take(nb));
  a.list[1] = reinterpret_cast<int*>(take(nb));
  a.chunk = reinterpret_cast<int*>(take(std::size_t(grid) * sizeof(int)));
  a.red = reinterpret_cast<slot*>(take(3 * sizeof(slot)));
  a.out = reinterpret_cast<rcm_result*>(take(sizeof(rcm_result)));
  a.max_components = max_components;
  a.max_row = max_row;
  const slot identity[3] = {{kNone, 0, kFree, 0}, {kNone, 0, kFree, 0}, {kNone, 0, kFree, 0}};
  cudaError_t e = cudaMemsetAsync(a.stamp, 0, nb, s);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(a.red, identity, sizeof identity, cudaMemcpyHostToDevice, s);
  if (e != cudaSuccess) return e;
  void* args[] = {&a};
  e = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(k_rcm), dim3(grid), dim3(kThreads),
                                  args, 0, s);
  if (e != cudaSuccess) return e;
  e = cudaMemcpyAsync(result, a.out, sizeof *result, cudaMemcpyDeviceToHost, s);
  if (e != cudaSuccess) return e;
  return cudaStreamSynchronize(s);
}

}  // namespace cnc::cuda
