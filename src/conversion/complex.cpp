// Complex CSR: canonical form, the Hermitian check, the real-equivalent expansion (complex.hpp).
#include "conversion/complex.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "cnc.h"
#include "conversion/convert.hpp"
#include "hermitian.h"
#include "util/error.hpp"
#include "util/memory.hpp"
#include "util/parallel.hpp"

namespace cnc {

namespace {

constexpr std::int64_t row_grain = 2048;  // rows per piece of the parallel loops

// Whether a row's columns (already shifted to 0-based) are strictly increasing.
bool sorted_row(const std::uint32_t* col, std::int64_t b, std::int64_t e) {
  for (std::int64_t t = b + 1; t < e; ++t)
    if (col[t] <= col[t - 1]) return false;
  return true;
}

// The Hermitian check of a CSR with sorted rows (`base`-based columns of type Col: the caller's
// or the canonical ones), one row at a time.
template <class Col>
struct hermitian_rows {
  const std::int64_t* row_ptr;
  const Col* col;
  const double* val;
  int base;
  // The transposed entry a_ji of entry (i, j), or 0 when row j has no column i.
  bool transposed(std::int32_t i, std::int32_t j, double& re, double& im) const {
    const Col* b = col + (row_ptr[j] - base);
    const Col* e = col + (row_ptr[j + 1] - base);
    const Col* it = std::lower_bound(b, e, Col(i + base));
    re = im = 0;
    if (it == e || *it != Col(i + base)) return false;
    const std::size_t u = std::size_t(it - col);
    re = val[2 * u], im = val[2 * u + 1];
    return true;
  }
  // Entry t of row i against its mirror (a missing mirror counting as 0).
  bool bad_entry(std::int32_t i, std::int64_t t) const {
    bool mirror_found = false;
    return bad_against_mirror(i, std::int64_t(col[t]) - base, t, mirror_found);
  }
  // Row i's diagonal and its entries right of it, each against its mirror (a missing mirror
  // counting as 0); `mirrored` counts the mirrors found, `left` the entries left of the
  // diagonal. Over all rows, mirrored == left means every left entry was some right entry's
  // mirror, so the whole matrix was checked with half the searches of bad_row.
  bool bad_right(std::int64_t i, std::int64_t& mirrored, std::int64_t& left) const {
    bool diagonal = false;
    for (std::int64_t t = row_ptr[i] - base; t < row_ptr[i + 1] - base; ++t) {
      const std::int64_t j = std::int64_t(col[t]) - base;
      if (j < i) {
        ++left;
        continue;
      }
      diagonal = diagonal || j == i;
      bool mirror_found = false;
      const bool bad = bad_against_mirror(std::int32_t(i), j, t, mirror_found);
      if (mirror_found) ++mirrored;
      if (bad) return true;
    }
    return !diagonal;
  }
  // Row i's entries, each against its mirror, and its diagonal present.
  bool bad_row(std::int64_t i) const {
    bool diagonal = false;
    for (std::int64_t t = row_ptr[i] - base; t < row_ptr[i + 1] - base; ++t) {
      diagonal = diagonal || std::int64_t(col[t]) - base == i;
      if (bad_entry(std::int32_t(i), t)) return true;
    }
    return !diagonal;
  }

 private:
  // Entry t, (i, j), against its mirror by kernels/hermitian.h's rule: a diagonal entry real
  // and > 0, any other the conjugate of a_ji (0 when row j has no column i; `mirror_found` says
  // whether it has, and is false for a diagonal entry).
  bool bad_against_mirror(std::int32_t i, std::int64_t j, std::int64_t t,
                          bool& mirror_found) const {
    const double re = val[2 * t], im = val[2 * t + 1];
    mirror_found = false;
    if (i == j) return !real_positive(re, im);
    double tre, tim;
    mirror_found = transposed(i, std::int32_t(j), tre, tim);
    return !near_conjugate(re, im, tre, tim);
  }
};

}  // namespace

user_zcsr zcsr_from_user(std::int32_t n, const std::int64_t* row_ptr, const std::uint32_t* col,
                         const double* val, int base, bool hermitian) {
  const int threads = host_threads();
  const std::uint32_t ubase = std::uint32_t(base), un = std::uint32_t(n);
  auto entries_bad = [&](std::int64_t i) {  // a column out of range or a part not finite
    for (std::int64_t t = row_ptr[i] - base; t < row_ptr[i + 1] - base; ++t)
      if (col[t] < ubase || col[t] - ubase >= un || !std::isfinite(val[2 * t]) ||
          !std::isfinite(val[2 * t + 1]))
        return true;
    return false;
  };
  // One pass: the entries (in range, finite), whether every row is sorted already (then nothing
  // is copied) and, asked for, the Hermitian check on the caller's arrays, which holds only if
  // every row is sorted (else it is done again on the canonical copy).
  const hermitian_rows<std::uint32_t> h{row_ptr, col, val, base};
  std::atomic<bool> unsorted{false};
  auto entries_and_order = [&](std::int64_t i) {
    if (entries_bad(i)) return true;
    if (!sorted_row(col, row_ptr[i] - base, row_ptr[i + 1] - base))
      unsorted.store(true, std::memory_order_relaxed);
    return false;
  };
  const std::size_t pieces = std::size_t(piece_count(n, row_grain));
  std::vector<std::int64_t> found(pieces, -1), mirrored(pieces, 0), left(pieces, 0);
  parallel_pieces(n, row_grain, threads, [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      if (entries_and_order(i) ||
          (hermitian && !unsorted.load(std::memory_order_relaxed) &&
           h.bad_right(i, mirrored[std::size_t(p)], left[std::size_t(p)]))) {
        found[std::size_t(p)] = i;
        return;
      }
  });
  std::int64_t bad_row = -1;
  for (const std::int64_t i : found)
    if (i >= 0) {
      bad_row = i;
      break;
    }
  // The Hermitian check still to be done, on the canonical matrix: when that pass could not
  // decide it (rows unsorted, or a left entry whose mirror it did not see) or found a fault,
  // which the full check names.
  bool hermitian_left = hermitian && exclusive_scan(mirrored) != exclusive_scan(left);
  if (bad_row >= 0 && hermitian) {
    // That pass stopped early: the entries' faults (named first, in row order) and the rows'
    // order are seen again in full.
    unsorted.store(false);
    bad_row = first_index(n, row_grain, threads, entries_and_order);
    hermitian_left = true;
  }
  hermitian_left = hermitian && (hermitian_left || unsorted.load());
  if (bad_row >= 0) {
    char msg[256];
    for (std::int64_t t = row_ptr[bad_row] - base; t < row_ptr[bad_row + 1] - base; ++t) {
      if (col[t] < ubase || col[t] - ubase >= un) {
        std::snprintf(msg, sizeof msg, "col_idx[%lld]=%u (row %lld) is outside [%d, %lld]",
                      (long long)t, col[t], (long long)bad_row, base, (long long)n - 1 + base);
        throw error(CNC_ERR_INDEX_OUT_OF_RANGE, msg);
      }
      const int part = !std::isfinite(val[2 * t]) ? 0 : !std::isfinite(val[2 * t + 1]) ? 1 : -1;
      if (part >= 0) {
        std::snprintf(msg, sizeof msg,
                      "values[%lld]=%g, the %s part of entry %lld (row %lld, column %u), is not "
                      "finite",
                      (long long)(2 * t) + part, val[2 * t + part], part ? "imaginary" : "real",
                      (long long)t, (long long)bad_row, col[t] - ubase);
        throw error(CNC_ERR_NOT_FINITE, msg);
      }
    }
  }
  const std::int64_t nnz_in = row_ptr[n] - base;
  user_zcsr u;
  if (base == 0 && !unsorted.load()) {  // canonical: the caller's arrays as they are
    // Columns in [0, n) with n < 2^31: the same bits as int32.
    u.view = zcsr_view{n, std::span(row_ptr, std::size_t(n) + 1),
                       std::span(reinterpret_cast<const std::int32_t*>(col), std::size_t(nnz_in)),
                       std::span(val, 2 * std::size_t(nnz_in))};
    if (hermitian_left) check_hermitian_positive_diagonal(u.view);
    return u;
  }
  memory::reserve(double(n + 1) * 8 + double(nnz_in) * 20, [&] {
    return "the canonical complex CSR (" + std::to_string(nnz_in) +
           " entries of 20 bytes: a column and an (re, im) pair)";
  });
  complex_csr& a = u.owned;
  a.n = n;
  a.row_ptr.assign(std::size_t(n) + 1, 0);
  // Row lengths after duplicates are summed.
  parallel_pieces(n, row_grain, threads, [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    std::vector<std::uint32_t> cols;
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int64_t b = row_ptr[i] - base, e = row_ptr[i + 1] - base;
      if (sorted_row(col, b, e)) {
        a.row_ptr[std::size_t(i) + 1] = e - b;
        continue;
      }
      cols.assign(col + b, col + e);
      std::sort(cols.begin(), cols.end());
      a.row_ptr[std::size_t(i) + 1] = std::unique(cols.begin(), cols.end()) - cols.begin();
    }
  });
  for (std::int32_t i = 0; i < n; ++i) a.row_ptr[std::size_t(i) + 1] += a.row_ptr[std::size_t(i)];
  a.col.resize(std::size_t(a.row_ptr[std::size_t(n)]));
  a.val.resize(2 * a.col.size());
  parallel_pieces(n, row_grain, threads, [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
    std::vector<std::int64_t> order;
    for (std::int64_t i = i0; i < i1; ++i) {
      const std::int64_t b = row_ptr[i] - base, e = row_ptr[i + 1] - base;
      std::int64_t o = a.row_ptr[std::size_t(i)];
      if (sorted_row(col, b, e)) {
        for (std::int64_t t = b; t < e; ++t, ++o) {
          a.col[std::size_t(o)] = std::int32_t(col[t] - ubase);
          a.val[2 * std::size_t(o)] = val[2 * t];
          a.val[2 * std::size_t(o) + 1] = val[2 * t + 1];
        }
        continue;
      }
      // Duplicates summed in the caller's order (a stable sort keeps it).
      order.resize(std::size_t(e - b));
      std::iota(order.begin(), order.end(), b);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::int64_t p, std::int64_t q) { return col[p] < col[q]; });
      --o;
      std::uint32_t last = 0;
      bool first = true;
      for (const std::int64_t t : order) {
        if (first || col[t] != last) {
          ++o, first = false, last = col[t];
          a.col[std::size_t(o)] = std::int32_t(col[t] - ubase);
          a.val[2 * std::size_t(o)] = 0, a.val[2 * std::size_t(o) + 1] = 0;
        }
        a.val[2 * std::size_t(o)] += val[2 * t];
        a.val[2 * std::size_t(o) + 1] += val[2 * t + 1];
      }
    }
  });
  // Sums of finite values can overflow.
  const std::int64_t inf = first_index(std::int64_t(a.val.size()), 1 << 16, threads,
                                       [&](std::int64_t t) { return !std::isfinite(a.val[t]); });
  if (inf >= 0) {
    const std::int64_t e = inf / 2;
    const auto row =
        std::upper_bound(a.row_ptr.begin(), a.row_ptr.end(), e) - a.row_ptr.begin() - 1;
    char msg[200];
    std::snprintf(msg, sizeof msg,
                  "the duplicates of entry (%lld, %d) sum to a non-finite %s part (%g)",
                  (long long)row, a.col[std::size_t(e)], inf % 2 ? "imaginary" : "real",
                  a.val[std::size_t(inf)]);
    throw error(CNC_ERR_NOT_FINITE, msg);
  }
  u.view = u.owned;
  if (hermitian_left) check_hermitian_positive_diagonal(u.view);
  return u;
}

void check_hermitian_positive_diagonal(const zcsr_view& a) {
  const hermitian_rows<std::int32_t> h{a.row_ptr.data(), a.col.data(), a.val.data(), 0};
  const std::int64_t r =
      first_index(a.n, row_grain, host_threads(), [&h](std::int64_t i) { return h.bad_row(i); });
  if (r < 0) return;
  const std::int32_t i = std::int32_t(r);
  char msg[400];
  const char* hint =
      "CG, block CG and CHOLMOD need a Hermitian positive definite A; CNC_BICGSTAB or CNC_GMRES "
      "solve general complex systems";
  for (std::int64_t t = a.row_ptr[std::size_t(i)]; t < a.row_ptr[std::size_t(i) + 1]; ++t) {
    if (!h.bad_entry(i, t)) continue;
    const std::int32_t j = a.col[std::size_t(t)];
    const double re = a.val[2 * std::size_t(t)], im = a.val[2 * std::size_t(t) + 1];
    if (i == j) {
      std::snprintf(msg, sizeof msg,
                    "A is not Hermitian positive definite: diagonal entry a_%d,%d = (%g, %g) is "
                    "%s (%s)",
                    i, i, re, im, re > 0 ? "not real" : "not > 0", hint);
    } else {
      double tre, tim;
      h.transposed(i, j, tre, tim);
      std::snprintf(msg, sizeof msg,
                    "A is not Hermitian: a_%d,%d = (%g, %g) but a_%d,%d = (%g, %g) is not its "
                    "conjugate (%s)",
                    i, j, re, im, j, i, tre, tim, hint);
    }
    throw error(CNC_ERR_INVALID_VALUE, msg);
  }
  std::snprintf(msg, sizeof msg,
                "A is not Hermitian positive definite: row %d has no diagonal entry (%s)", i, hint);
  throw error(CNC_ERR_INVALID_VALUE, msg);
}

real_equivalent_csr real_equivalent(const zcsr_view& a) {
  const std::int64_t nnz = a.nnz();
  memory::reserve(double(2 * std::int64_t(a.n) + 1) * 8 + double(nnz) * 48, [&] {
    return "the real-equivalent CSR of the complex matrix (" + std::to_string(nnz) +
           " complex entries, 4 real entries of 12 bytes each)";
  });
  real_equivalent_csr r;
  r.n = 2 * a.n;
  r.row_ptr.resize(std::size_t(r.n) + 1);
  r.col.resize(std::size_t(4 * nnz));
  r.val.resize(std::size_t(4 * nnz));
  r.row_ptr[0] = 0;
  for (std::int32_t i = 0; i < a.n; ++i) {
    const std::int64_t len = a.row_ptr[std::size_t(i) + 1] - a.row_ptr[std::size_t(i)];
    r.row_ptr[2 * std::size_t(i) + 1] = 4 * a.row_ptr[std::size_t(i)] + 2 * len;
    r.row_ptr[2 * std::size_t(i) + 2] = 4 * a.row_ptr[std::size_t(i)] + 4 * len;
  }
  // Row 2i (real parts of equation i): (2j, re), (2j+1, -im); row 2i+1: (2j, im), (2j+1, re).
  parallel_pieces(
      a.n, row_grain, host_threads(), [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
        for (std::int64_t i = i0; i < i1; ++i) {
          const std::int64_t b = a.row_ptr[std::size_t(i)], e = a.row_ptr[std::size_t(i) + 1];
          std::int64_t o0 = r.row_ptr[2 * std::size_t(i)], o1 = r.row_ptr[2 * std::size_t(i) + 1];
          for (std::int64_t t = b; t < e; ++t, o0 += 2, o1 += 2) {
            const std::uint32_t c = 2 * std::uint32_t(a.col[std::size_t(t)]);
            const double re = a.val[2 * std::size_t(t)], im = a.val[2 * std::size_t(t) + 1];
            r.col[std::size_t(o0)] = c, r.val[std::size_t(o0)] = re;
            r.col[std::size_t(o0) + 1] = c + 1, r.val[std::size_t(o0) + 1] = -im;
            r.col[std::size_t(o1)] = c, r.val[std::size_t(o1)] = im;
            r.col[std::size_t(o1) + 1] = c + 1, r.val[std::size_t(o1) + 1] = re;
          }
        }
      });
  return r;
}

zcsr_matrix zcsr_from_real_equivalent(const csr_view& r) {
  if (r.n % 2)
    throw error(CNC_ERR_INTERNAL, "zcsr: the real-equivalent matrix has an odd row count");
  const std::int32_t n = r.n / 2;
  memory::reserve(double(n + 1) * 8 + double(r.nnz()) / 4 * 20, [&] {
    return "the complex CSR (zcsr) of the complex matrix (" + std::to_string(r.nnz() / 4) +
           " complex entries of 20 bytes)";
  });
  zcsr_matrix z;
  z.n = n;
  z.row_ptr.resize(std::size_t(n) + 1);
  z.row_ptr[0] = 0;
  for (std::int32_t i = 0; i < n; ++i)
    z.row_ptr[std::size_t(i) + 1] =
        z.row_ptr[std::size_t(i)] +
        (r.row_ptr[2 * std::size_t(i) + 1] - r.row_ptr[2 * std::size_t(i)]) / 2;
  z.col.resize(std::size_t(z.row_ptr[std::size_t(n)]));
  z.val.resize(2 * z.col.size());
  // Row 2i holds (2j, re), (2j+1, -im); row 2i+1 holds (2j, im), (2j+1, re).
  const std::int64_t bad = first_index(n, row_grain, host_threads(), [&](std::int64_t i) {
    const std::int64_t b0 = r.row_ptr[2 * std::size_t(i)], b1 = r.row_ptr[2 * std::size_t(i) + 1],
                       e1 = r.row_ptr[2 * std::size_t(i) + 2];
    if (e1 - b1 != b1 - b0 || (b1 - b0) % 2) return true;
    std::int64_t o = z.row_ptr[std::size_t(i)];
    for (std::int64_t t = b0, u = b1; t < b1; t += 2, u += 2, ++o) {
      const std::int32_t c = r.col[std::size_t(t)];
      const double re = r.val[std::size_t(t)], im = r.val[std::size_t(u)];
      if (c % 2 || r.col[std::size_t(t) + 1] != c + 1 || r.col[std::size_t(u)] != c ||
          r.col[std::size_t(u) + 1] != c + 1 || r.val[std::size_t(t) + 1] != -im ||
          r.val[std::size_t(u) + 1] != re)
        return true;
      z.col[std::size_t(o)] = c / 2;
      z.val[2 * std::size_t(o)] = re, z.val[2 * std::size_t(o) + 1] = im;
    }
    return false;
  });
  if (bad >= 0)
    throw error(CNC_ERR_INTERNAL, "zcsr: rows " + std::to_string(2 * bad) + " and " +
                                      std::to_string(2 * bad + 1) +
                                      " are not the real-equivalent of a complex row");
  return z;
}

host_vector<double> inverse_diagonal(const zcsr_view& a, std::int32_t n_padded, bool jacobi,
                                     std::int64_t* zero_diagonals) {
  return inverse_diagonal(2 * a.n, n_padded, jacobi, zero_diagonals, [&](std::int32_t r) {
    const std::int32_t i = r / 2;  // rows 2i and 2i + 1 both hold Re a_ii
    const auto first = a.col.begin() + a.row_ptr[std::size_t(i)];
    const auto last = a.col.begin() + a.row_ptr[std::size_t(i) + 1];
    const auto at = std::lower_bound(first, last, i);
    return at != last && *at == i ? a.val[2 * std::size_t(at - a.col.begin())] : 0.0;
  });
}

csr_matrix complex_pattern(const csr_view& r) {
  csr_matrix c;
  c.n = r.n / 2;
  c.row_ptr.resize(std::size_t(c.n) + 1);
  c.row_ptr[0] = 0;
  for (std::int32_t i = 0; i < c.n; ++i)
    c.row_ptr[std::size_t(i) + 1] =
        c.row_ptr[std::size_t(i)] +
        (r.row_ptr[2 * std::size_t(i) + 1] - r.row_ptr[2 * std::size_t(i)]) / 2;
  c.col.resize(std::size_t(c.row_ptr[std::size_t(c.n)]));
  c.val.resize(c.col.size());
  parallel_pieces(c.n, row_grain, host_threads(),
                  [&](std::int64_t, std::int64_t i0, std::int64_t i1) {
                    for (std::int64_t i = i0; i < i1; ++i) {
                      std::int64_t t = r.row_ptr[2 * std::size_t(i)];
                      for (std::int64_t o = c.row_ptr[std::size_t(i)];
                           o < c.row_ptr[std::size_t(i) + 1]; ++o, t += 2) {
                        c.col[std::size_t(o)] = r.col[std::size_t(t)] / 2;
                        c.val[std::size_t(o)] = 0;
                      }
                    }
                  });
  return c;
}

std::vector<std::int32_t> pair_permutation(const std::vector<std::int32_t>& perm) {
  std::vector<std::int32_t> p(2 * perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    p[2 * i] = 2 * perm[i], p[2 * i + 1] = 2 * perm[i] + 1;
  return p;
}

}  // namespace cnc
