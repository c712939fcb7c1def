// bench_api's problems: the generators, the Matrix Market reader and the host checks (see
// api_problems.hpp).
#include "api_problems.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <utility>

#include "matrix_market.h"

namespace api_bench {

namespace {

// splitmix64: small, fast, well mixed; the one generator of every random problem here.
struct rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }  // [0, 1)
  // Uniform in [0, m), m < 2^32 (32 random bits times m: bias below m / 2^32).
  std::uint32_t below(std::uint32_t m) {
    return std::uint32_t(((next() >> 32) * std::uint64_t(m)) >> 32);
  }
};

// Sorts each row's (column, value) pairs of a CSR whose rows are filled but unsorted.
void sort_rows(problem& p) {
  std::vector<std::pair<std::uint32_t, double>> row;
  for (std::int32_t i = 0; i < p.n; ++i) {
    const std::int64_t b = p.rp[i], e = p.rp[i + 1];
    row.clear();
    for (std::int64_t k = b; k < e; ++k) row.emplace_back(p.col[k], p.val[k]);
    std::sort(row.begin(), row.end());
    for (std::int64_t k = b; k < e; ++k) p.col[k] = row[k - b].first, p.val[k] = row[k - b].second;
  }
}

}  // namespace

std::int64_t problem::longest_row() const {
  std::int64_t m = 0;
  for (std::int32_t i = 0; i < n; ++i) m = std::max(m, rp[i + 1] - rp[i]);
  return m;
}

problem stencil(int m, int points, int dof) {
  problem p;
  p.name = std::to_string(points) + "-pt " + std::to_string(m) + "^3" +
           (dof > 1 ? " x" + std::to_string(dof) : "");
  const std::int64_t cells = std::int64_t(m) * m * m;
  p.n = std::int32_t(cells * dof);
  p.rp.reserve(std::size_t(p.n) + 1);
  p.rp.push_back(0);
  const int r = points == 125 ? 2 : 1;
  for (std::int64_t c = 0; c < cells; ++c) {
    const auto [x, y, z] = lattice(c, m);
    for (int a = 0; a < dof; ++a) {
      for (int dz = -r; dz <= r; ++dz)
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            const int nz = (dx != 0) + (dy != 0) + (dz != 0);
            if (points == 7 && nz > 1) continue;
            const int X = x + dx, Y = y + dy, Z = z + dz;
            if (X < 0 || Y < 0 || Z < 0 || X >= m || Y >= m || Z >= m) continue;
            const std::int64_t nc = X + std::int64_t(m) * (Y + std::int64_t(m) * Z);
            for (int b = 0; b < dof; ++b) {
              double v;
              if (nz == 0)
                v = a == b ? (points - 1.0) * 1.01 + (dof > 1 ? 1.0 * dof : 0.0)
                           : 0.5 / (1 + a + b);
              else
                v = a == b ? -1.0 : -0.05;
              p.col.push_back(std::uint32_t(nc * dof + b));
              p.val.push_back(v);
            }
          }
      p.rp.push_back(std::int64_t(p.col.size()));
    }
  }
  return p;
}

problem mesh(int m) {
  problem p;
  p.name = "mesh " + std::to_string(m) + "^3";
  const std::int64_t cells = std::int64_t(m) * m * m;
  p.n = std::int32_t(cells);
  std::vector<float> pos(std::size_t(cells) * 3);
  std::uint64_t s = 12345;
  auto rnd = [&s] {
    return s = s * 6364136223846793005ull + 1442695040888963407ull, double(s >> 11) * 0x1p-53;
  };
  for (std::int64_t c = 0; c < cells; ++c) {
    const auto [x, y, z] = lattice(c, m);
    const int k[3] = {x, y, z};
    for (int d = 0; d < 3; ++d) pos[std::size_t(c) * 3 + d] = float(k[d] + 0.45 * (rnd() - 0.5));
  }
  // The pattern (each point and the neighbours it reaches), then graph_laplacian's values.
  problem g;
  g.n = p.n;
  g.rp.push_back(0);
  std::vector<std::uint32_t> row;
  for (std::int64_t c = 0; c < cells; ++c) {
    const auto [x, y, z] = lattice(c, m);
    const double rad2 = 1.3 + 0.9 * double((c * 2654435761u) % 100) / 100.0;  // varying degree
    row.clear();
    for (int dz = -2; dz <= 2; ++dz)
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) {
          const int X = x + dx, Y = y + dy, Z = z + dz;
          if ((dx | dy | dz) == 0 || X < 0 || Y < 0 || Z < 0 || X >= m || Y >= m || Z >= m)
            continue;
          const std::int64_t o = X + std::int64_t(m) * (Y + std::int64_t(m) * Z);
          double d2 = 0;
          for (int d = 0; d < 3; ++d) {
            const double t = pos[std::size_t(c) * 3 + d] - pos[std::size_t(o) * 3 + d];
            d2 += t * t;
          }
          const double rad_o = 1.3 + 0.9 * double((o * 2654435761u) % 100) / 100.0;
          if (d2 > std::min(rad2, rad_o)) continue;  // symmetric: both must reach
          row.push_back(std::uint32_t(o));
        }
    std::sort(row.begin(), row.end());
    g.col.insert(g.col.end(), row.begin(), row.end());
    g.rp.push_back(std::int64_t(g.col.size()));
  }
  graph_laplacian(
      g, 1, [](std::uint32_t, std::uint32_t, double*) {}, p.rp, p.col, p.val);
  return p;
}

problem power_law(std::int32_t n, double gamma, double drawn_degree, double offset,
                  std::uint64_t seed, const std::string& name_size) {
  problem p;
  p.name = "power-law " + name_size;
  p.n = n;
  const std::size_t un = std::size_t(n);
  // Vose's alias table for P(i) = w_i / sum(w): one uniform slot, one uniform coin per draw.
  std::vector<double> prob(un);
  std::vector<std::uint32_t> alias(un);
  {
    const double expo = -1.0 / (gamma - 1.0);
    double sum = 0;
    for (std::size_t i = 0; i < un; ++i) sum += prob[i] = std::pow(double(i) + offset, expo);
    std::vector<std::uint32_t> small, large;
    for (std::size_t i = 0; i < un; ++i) {
      prob[i] *= double(n) / sum;  // mean 1
      (prob[i] < 1.0 ? small : large).push_back(std::uint32_t(i));
    }
    for (std::uint32_t i = 0; i < un; ++i) alias[i] = i;
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back(), l = large.back();
      small.pop_back();
      alias[s] = l;  // slot s: s with probability prob[s], else l
      prob[l] -= 1.0 - prob[s];
      if (prob[l] < 1.0) large.pop_back(), small.push_back(l);
    }
    for (std::uint32_t i : small) prob[i] = 1.0;  // rounding leftovers: exactly full
    for (std::uint32_t i : large) prob[i] = 1.0;
  }
  rng r{seed};
  auto draw = [&] {
    const std::uint32_t i = r.below(std::uint32_t(n));
    return r.uniform() < prob[i] ? i : alias[i];
  };
  // The edges, self loops dropped; then both directions bucketed by row (counting sort).
  const std::int64_t edges = std::llround(double(n) * drawn_degree / 2.0);
  std::vector<std::uint32_t> ends;
  ends.reserve(std::size_t(2 * edges));
  std::vector<std::int64_t> start(un + 1, 0);
  for (std::int64_t e = 0; e < edges; ++e) {
    const std::uint32_t u = draw(), v = draw();
    if (u == v) continue;
    ends.push_back(u), ends.push_back(v);
    ++start[u + 1], ++start[v + 1];
  }
  for (std::size_t i = 0; i < un; ++i) start[i + 1] += start[i];
  std::vector<std::uint32_t> adj(ends.size());
  {
    std::vector<std::int64_t> fill(start.begin(), start.end() - 1);
    for (std::size_t k = 0; k < ends.size(); k += 2) {
      adj[std::size_t(fill[ends[k]]++)] = ends[k + 1];
      adj[std::size_t(fill[ends[k + 1]]++)] = ends[k];
    }
  }
  std::vector<std::uint32_t>().swap(ends);
  // Each row sorted, repeated edges dropped: the pattern, then graph_laplacian's values.
  problem g;
  g.n = n;
  g.rp.assign(un + 1, 0);
  g.col.reserve(adj.size());
  for (std::size_t i = 0; i < un; ++i) {
    const auto b = adj.begin() + start[i], e = adj.begin() + start[i + 1];
    std::sort(b, e);
    g.col.insert(g.col.end(), b, std::unique(b, e));
    g.rp[i + 1] = std::int64_t(g.col.size());
  }
  std::vector<std::uint32_t>().swap(adj);
  graph_laplacian(
      g, 1, [](std::uint32_t, std::uint32_t, double*) {}, p.rp, p.col, p.val);
  return p;
}

problem real_laplacian(const problem& graph) {
  problem p;
  p.name = graph.name;
  p.n = graph.n;
  graph_laplacian(
      graph, 1, [](std::uint32_t, std::uint32_t, double*) {}, p.rp, p.col, p.val);
  return p;
}

problem permuted(const problem& p, std::uint64_t seed) {
  const std::size_t un = std::size_t(p.n);
  std::vector<std::uint32_t> perm(un), inv(un);  // perm[old] = new
  for (std::size_t i = 0; i < un; ++i) perm[i] = std::uint32_t(i);
  rng r{seed};
  for (std::size_t i = un; i > 1; --i) std::swap(perm[i - 1], perm[r.below(std::uint32_t(i))]);
  for (std::size_t i = 0; i < un; ++i) inv[perm[i]] = std::uint32_t(i);
  problem q;
  q.name = p.name + " random";
  q.n = p.n;
  q.rp.assign(un + 1, 0);
  for (std::size_t i = 0; i < un; ++i) q.rp[i + 1] = q.rp[i] + (p.rp[inv[i] + 1] - p.rp[inv[i]]);
  q.col.resize(p.col.size());
  q.val.resize(p.val.size());
  for (std::size_t i = 0; i < un; ++i) {
    std::int64_t k = q.rp[i];
    for (std::int64_t o = p.rp[inv[i]]; o < p.rp[inv[i] + 1]; ++o, ++k)
      q.col[k] = perm[p.col[o]], q.val[k] = p.val[o];
  }
  sort_rows(q);
  return q;
}

namespace {

bool fail(std::string* why, std::string msg) {
  *why = std::move(msg);
  return false;
}

}  // namespace

bool read_matrix_market(const std::string& path, problem* p, std::string* why) {
  // The shared reader (examples/common/matrix_market.c) checks the file; freed on every path.
  mm_matrix m;
  char err[512];
  if (mm_read(path.c_str(), &m, err, sizeof err) != 0) return fail(why, err);
  const std::unique_ptr<mm_matrix, void (*)(mm_matrix*)> owner(&m, mm_free);
  if (m.symmetry != MM_SYMMETRIC || (m.field != MM_REAL && m.field != MM_INTEGER))
    return fail(why, "not real or integer symmetric");
  // n fits cnc's and the textbook's 32-bit indices; the expanded nnz the textbook's 32-bit row
  // offsets.
  const std::int64_t int_max = std::numeric_limits<std::int32_t>::max();
  if (m.rows >= int_max || m.nnz > int_max)
    return fail(why, "unsupported sizes " + std::to_string(m.rows) + " x " +
                         std::to_string(m.cols) + ", " + std::to_string(m.nnz) + " entries");
  struct entry {
    std::uint32_t i, j;
    double v;
  };
  std::vector<entry> t(std::size_t(m.nnz));
  for (std::size_t k = 0; k < t.size(); ++k)
    t[k] = {std::uint32_t(m.row[k]), std::uint32_t(m.col[k]), m.val[k]};
  // Stable: each key's duplicates are summed in file order, the same order for (i, j) and its
  // mirror (j, i) (the reader puts each mirror right after its entry), so the sums are bitwise
  // symmetric.
  std::stable_sort(t.begin(), t.end(), [](const entry& a, const entry& b) {
    return a.i != b.i ? a.i < b.i : a.j < b.j;
  });
  problem& q = *p;
  q = problem();
  std::string file = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".mtx"})
    if (file.size() > std::strlen(ext) && file.ends_with(ext))
      file.resize(file.size() - std::strlen(ext));
  q.name = "mtx " + file;
  q.n = m.rows;
  q.rp.assign(std::size_t(m.rows) + 1, 0);
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (k > 0 && t[k].i == t[k - 1].i && t[k].j == t[k - 1].j) {
      q.val.back() += t[k].v;  // duplicates summed
      continue;
    }
    q.col.push_back(t[k].j);
    q.val.push_back(t[k].v);
    ++q.rp[t[k].i + 1];
  }
  for (std::size_t i = 0; i < std::size_t(m.rows); ++i) q.rp[i + 1] += q.rp[i];
  return true;
}

std::vector<std::string> mtx_files(const std::string& dir, std::string* why) {
  std::vector<std::string> files;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) {
    *why = ec.message();
    return files;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if ((name.ends_with(".mtx") || name.ends_with(".mtx.gz")) && it->is_regular_file(ec))
      files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool positive_diagonal(const problem& p) {
  for (std::int32_t i = 0; i < p.n; ++i) {
    const auto b = p.col.begin() + p.rp[i], e = p.col.begin() + p.rp[i + 1];
    const auto d = std::lower_bound(b, e, std::uint32_t(i));
    if (d == e || *d != std::uint32_t(i) || !(p.val[std::size_t(d - p.col.begin())] > 0))
      return false;
  }
  return true;
}

bool check_problem(const problem& p, std::string* why) {
  const std::size_t un = std::size_t(p.n);
  if (p.n < 1 || p.rp.size() != un + 1 || p.rp[0] != 0 || p.rp[un] != p.nnz() ||
      p.val.size() != p.col.size())
    return fail(why, "array sizes");
  for (std::size_t i = 0; i < un; ++i) {
    if (p.rp[i + 1] < p.rp[i]) return fail(why, "row offsets decrease at " + std::to_string(i));
    for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k) {
      if (p.col[k] >= un) return fail(why, "column out of range in row " + std::to_string(i));
      if (k > p.rp[i] && p.col[k] <= p.col[k - 1])
        return fail(why, "row " + std::to_string(i) + " not strictly increasing");
    }
  }
  for (std::size_t i = 0; i < un; ++i)
    for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k) {  // a_ji must be there and equal
      const std::uint32_t j = p.col[k];
      const auto b = p.col.begin() + p.rp[j], e = p.col.begin() + p.rp[j + 1];
      const auto f = std::lower_bound(b, e, std::uint32_t(i));
      if (f == e || *f != i || p.val[std::size_t(f - p.col.begin())] != p.val[k])
        return fail(why, "not symmetric at (" + std::to_string(i) + ", " + std::to_string(j) + ")");
    }
  if (!positive_diagonal(p)) return fail(why, "a diagonal entry absent or not positive");
  return true;
}

std::vector<double> rhs(std::int32_t n) {
  std::vector<double> b(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) b[i] = 1.0 + 0.5 * std::sin(0.001 * i);
  return b;
}

double true_residual(const problem& p, const std::vector<double>& b, const std::vector<double>& x) {
  double rr = 0, bb = 0;
  for (std::int32_t i = 0; i < p.n; ++i) {
    double ax = 0;
    for (std::int64_t k = p.rp[i]; k < p.rp[i + 1]; ++k) ax += p.val[k] * x[p.col[k]];
    rr += (b[i] - ax) * (b[i] - ax);
    bb += b[i] * b[i];
  }
  return std::sqrt(rr / bb);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double pcg_floor_bytes(std::int64_t n, std::int64_t nnz, int value_bytes) {
  const double dn = double(n), matrix = double(nnz) * (value_bytes + 4) + (dn + 1) * 8;
  return matrix + 8 * dn * value_bytes + dn * 8;
}

}  // namespace api_bench
