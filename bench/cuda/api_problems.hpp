// The problems bench_api solves through cnc.h (plain C++, no CUDA): CSR matrices on the host in
// the caller's natural form (64-bit row offsets, 32-bit columns sorted within each row, no
// duplicates), every one symmetric with a positive diagonal. Generators are deterministic (fixed
// seeds): the same call gives the same matrix on every machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace api_bench {

struct problem {
  std::string name;
  std::int32_t n = 0;
  std::vector<std::int64_t> rp;
  std::vector<std::uint32_t> col;
  std::vector<double> val;
  std::int64_t nnz() const { return std::int64_t(col.size()); }
  std::int64_t longest_row() const;
};

// The m^3 lattice of stencil, mesh and the magnetic Laplacians (complex_problems.hpp): point
// (x, y, z) is index x + m (y + m z).
struct lattice_point {
  int x, y, z;
};
inline lattice_point lattice(std::int64_t index, int m) {
  const std::int64_t mm = m;
  return {int(index % mm), int((index / mm) % mm), int(index / (mm * mm))};
}

// The generators' graph Laplacian, made once here for every graph: on the off-diagonal pattern of
// `graph` (rows sorted; its values and diagonal ignored), `width` doubles an entry (1: real, 2:
// complex (re, im)); edge(i, j, v) writes edge (i, j)'s (v holds -1, 0 on entry: the real
// Laplacian), the diagonal is 1.01 deg(i) + 0.01 (strictly diagonally dominant). Rows sorted.
template <class Edge>
void graph_laplacian(const problem& graph, int width, Edge edge, std::vector<std::int64_t>& rp,
                     std::vector<std::uint32_t>& col, std::vector<double>& val);

// Stencil Laplacian on m^3 (7, 27 or 125 points: the 5 x 5 x 5 box, as Q2 hexahedra couple
// their nodes), Dirichlet, SPD. `dof` > 1: each grid point carries
// dof coupled unknowns (dense dof x dof blocks: 4 for elasticity-like systems).
problem stencil(int m, int points, int dof);

// An irregular mesh: points on a jittered m x m x m lattice, each joined to every point within
// a radius that varies per point (the 6 face neighbours and some of the 12 edge ones: 1-17
// entries a row, 8.4 on average), numbered along the lattice. Graph Laplacian + 1% shift.
problem mesh(int m);

// A power-law graph's Laplacian, Chung-Lu style: vertex i has weight w_i = (i + offset)^(-1 /
// (gamma - 1)); n * drawn_degree / 2 edges are drawn, each endpoint with probability proportional
// to w (Vose's alias method, splitmix64 seeded with `seed`), then self loops and repeated edges
// are dropped (drawn_degree 12-13 leaves ~10 distinct neighbours a row). Off-diagonal -1,
// diagonal = degree * 1.01 + 0.01 (diagonally dominant, SPD). `offset` >= 1 lowers the heaviest
// weights, so the longest row. Single-threaded, O(nnz log nnz): 2 M rows in about 2 s.
// Named "power-law <name_size>".
problem power_law(std::int32_t n, double gamma, double drawn_degree, double offset,
                  std::uint64_t seed, const std::string& name_size);

// graph_laplacian's real one (-1 an edge): symmetric positive definite. Named "<graph.name>".
problem real_laplacian(const problem& graph);

// P A P^T for a random permutation P (Fisher-Yates, seeded): the same matrix with its unknowns
// numbered at random, each row's columns sorted. Named "<p.name> random".
problem permuted(const problem& p, std::uint64_t seed);

// A Matrix Market file (plain or gzip), read by the shared reader (examples/common/
// matrix_market.h, which checks it): kept when `real` or `integer` and `symmetric` (coordinate or
// array; both triangles here, duplicates summed). False with *why set when the file is not of
// that kind or is malformed. Named "mtx <file name without .mtx or .mtx.gz>".
bool read_matrix_market(const std::string& path, problem* p, std::string* why);
// The .mtx and .mtx.gz files of a directory, sorted by name; empty (and *why set) when it cannot
// be read.
std::vector<std::string> mtx_files(const std::string& dir, std::string* why);
// Whether every diagonal entry is present and positive.
bool positive_diagonal(const problem& p);

// Checks the invariants the generators promise: row offsets from 0 to nnz and nondecreasing,
// columns < n, strictly increasing within each row, the pattern and values symmetric, the
// diagonal positive. False with *why set otherwise. O(nnz log) time, O(nnz) memory.
bool check_problem(const problem& p, std::string* why);

std::vector<double> rhs(std::int32_t n);
// ||b - A x|| / ||b|| in double on the host.
double true_residual(const problem& p, const std::vector<double>& b, const std::vector<double>& x);
double median(std::vector<double> v);

// The bandwidth floor of one Jacobi-PCG iteration, in bytes (the model is explained at
// api_patterns.cu's use): the matrix in CSR read once, nnz x (value_bytes + 4) + (n + 1) x 8
// (32-bit columns, 64-bit row offsets), and 9 passes over vectors of n entries: x, r, p and
// q = A p each read and written (8 passes of value_bytes) and the Jacobi diagonal read once (8
// bytes: real for a symmetric or Hermitian matrix). value_bytes 8: a real double CSR PCG
// (bench_api, bench_cpu_patterns); 16: a native complex double one (bench_complex).
double pcg_floor_bytes(std::int64_t n, std::int64_t nnz, int value_bytes);

template <class Edge>
void graph_laplacian(const problem& graph, int width, Edge edge, std::vector<std::int64_t>& rp,
                     std::vector<std::uint32_t>& col, std::vector<double>& val) {
  rp.assign(std::size_t(graph.n) + 1, 0);
  col.clear();
  val.clear();
  col.reserve(graph.col.size() + std::size_t(graph.n));
  val.reserve((graph.col.size() + std::size_t(graph.n)) * std::size_t(width));
  for (std::int32_t i = 0; i < graph.n; ++i) {
    const std::uint32_t ui = std::uint32_t(i);
    std::int64_t deg = 0;
    for (std::int64_t k = graph.rp[i]; k < graph.rp[i + 1]; ++k) deg += graph.col[k] != ui;
    bool diagonal_done = false;
    auto put_diagonal = [&] {
      col.push_back(ui);
      val.push_back(1.01 * double(deg) + 0.01);
      if (width == 2) val.push_back(0.0);
      diagonal_done = true;
    };
    for (std::int64_t k = graph.rp[i]; k < graph.rp[i + 1]; ++k) {
      const std::uint32_t j = graph.col[k];
      if (j == ui) continue;
      if (j > ui && !diagonal_done) put_diagonal();
      col.push_back(j);
      double v[2] = {-1, 0};
      edge(ui, j, v);
      val.insert(val.end(), v, v + width);
    }
    if (!diagonal_done) put_diagonal();
    rp[std::size_t(i) + 1] = std::int64_t(col.size());
  }
}

}  // namespace api_bench
