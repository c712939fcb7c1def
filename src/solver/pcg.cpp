// The PCG driver. Per check: read the k rhs_state structs (the only device->host traffic),
// report progress, decide. Between checks the backend runs `check_interval` fused iterations;
// systems that finished are frozen by the step contract, so over-running a check is harmless.
// When a system's recursive residual converges, its true residual b - A x is computed in double
// on the host; if it disagrees by more than `true_residual_slack`, CG restarts from x (residual
// replacement), at most max_restarts times, after which the reason is "stagnated".
#include "solver/pcg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "cnc.h"
#include "util/error.hpp"
#include "util/parallel.hpp"

namespace cnc {

namespace {

int reason_of(std::int32_t status) {
  switch (status) {
    case converged:
      return CNC_REASON_CONVERGED;
    case indefinite_matrix:
      return CNC_REASON_INDEFINITE_MATRIX;
    case indefinite_precond:
      return CNC_REASON_INDEFINITE_PRECOND;
    case not_finite:
      return CNC_REASON_NOT_FINITE;
    default:
      return CNC_REASON_MAX_ITERATIONS;
  }
}

}  // namespace

bool host_norms(const double* b, const double* x, std::size_t n, int k, double* bnorm2) {
  constexpr std::int64_t grain = std::int64_t(1) << 16;
  const std::int64_t len = std::int64_t(n), pieces = piece_count(len, grain);
  std::vector<double> part(std::size_t(pieces) * std::size_t(k), 0.0);
  std::vector<unsigned char> nonzero(std::size_t(pieces), 0);
  parallel_pieces(
      len, grain, host_threads(), [&](std::int64_t p, std::int64_t i0, std::int64_t i1) {
        bool nz = false;
        for (int j = 0; j < k; ++j) {
          const double* bj = b + std::size_t(j) * n;
          double s[4] = {0, 0, 0, 0};
          std::int64_t i = i0;
          for (; i + 4 <= i1; i += 4)
            for (int u = 0; u < 4; ++u) s[u] += bj[i + u] * bj[i + u];
          for (; i < i1; ++i) s[0] += bj[i] * bj[i];
          part[std::size_t(p) * std::size_t(k) + std::size_t(j)] = (s[0] + s[1]) + (s[2] + s[3]);
          const double* xj = x + std::size_t(j) * n;
          for (i = i0; i < i1 && !nz; ++i) nz = xj[i] != 0.0;
        }
        nonzero[std::size_t(p)] = nz;
      });
  bool x_zero = true;
  for (int j = 0; j < k; ++j) bnorm2[j] = 0.0;
  for (std::int64_t p = 0; p < pieces; ++p) {
    for (int j = 0; j < k; ++j) bnorm2[j] += part[std::size_t(p) * std::size_t(k) + std::size_t(j)];
    x_zero = x_zero && !nonzero[std::size_t(p)];
  }
  return x_zero;
}

int reason_severity(int reason) {
  switch (reason) {
    case CNC_REASON_CONVERGED:
      return 0;
    case CNC_REASON_STOPPED:
      return 1;
    case CNC_REASON_MAX_ITERATIONS:
      return 2;
    case CNC_REASON_STAGNATED:
      return 3;
    case CNC_REASON_BREAKDOWN:
      return 4;
    case CNC_REASON_INDEFINITE_PRECOND:
      return 5;
    case CNC_REASON_INDEFINITE_MATRIX:
      return 6;
    case CNC_REASON_NOT_FINITE:
      return 7;
  }
  return 8;
}

void residual_norms(const csr_view& a, int k, const double* b, const double* x, double* norms2) {
  // Fixed row chunks summed in chunk order: the same bits for any number of threads.
  constexpr std::int32_t chunk = 16384;
  const std::size_t n = std::size_t(a.n);
  const std::int32_t n_chunks = (a.n + chunk - 1) / chunk;
  std::vector<double> part(std::size_t(n_chunks) * k, 0.0);
  auto work = [&](std::int32_t c0, std::int32_t c1) {
    for (std::int32_t c = c0; c < c1; ++c)
      for (int j = 0; j < k; ++j) {
        const double* xj = x + j * n;
        const double* bj = b + j * n;
        double s = 0.0;
        for (std::int32_t i = c * chunk; i < std::min(a.n, (c + 1) * chunk); ++i) {
          double ax = 0.0;
          for (std::int64_t t = a.row_ptr[i]; t < a.row_ptr[i + 1]; ++t)
            ax += a.val[t] * xj[a.col[t]];
          const double r = bj[i] - ax;
          s += r * r;
        }
        part[std::size_t(c) * k + j] = s;
      }
  };
  const int threads = int(std::min<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()),
                                                 std::max<std::int64_t>(1, a.nnz() / 1000000)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(work, std::int32_t(std::int64_t(n_chunks) * t / threads),
                      std::int32_t(std::int64_t(n_chunks) * (t + 1) / threads));
  work(0, std::int32_t(n_chunks / threads));
  for (auto& th : pool) th.join();
  for (int j = 0; j < k; ++j) {
    double s = 0.0;
    for (std::int32_t c = 0; c < n_chunks; ++c) s += part[std::size_t(c) * k + j];
    norms2[j] = s;
  }
}

pcg_result pcg_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                     const pcg_params& prm) {
  const std::size_t n = std::size_t(a.n);
  pcg_result res;
  res.iters.assign(std::size_t(k), 0);
  res.reasons.assign(std::size_t(k), CNC_REASON_MAX_ITERATIONS);
  res.residual.assign(std::size_t(k), 0.0);
  res.true_residual.assign(std::size_t(k), 0.0);
  std::vector<double> bnorm2(static_cast<std::size_t>(k)), thr2(static_cast<std::size_t>(k));
  std::vector<std::int64_t> done_before(std::size_t(k), 0);  // iterations before a restart
  std::vector<rhs_state> st(static_cast<std::size_t>(k)), fresh(st.size());
  bool x_zero = false;  // host x all zeros: not uploaded
  if (prm.vectors_on_device) {
    if (!prm.device_residual)
      throw error(CNC_ERR_INTERNAL, ": device vectors need the device's true residual");
    // init() with x = 0 leaves rr = Σ b² (r = b): no host copy of b.
    sys.set_vectors(b, nullptr);
    sys.init(thr2.data());  // all zero here: only rr is read
    sys.read_state(st.data());
    for (int j = 0; j < k; ++j) bnorm2[j] = st[j].rr;
  } else {
    x_zero = host_norms(b, x, n, k, bnorm2.data());
    sys.sum_over_ranks(bnorm2.data(), k);  // a system split over processes: ‖b‖² of all of b
  }
  bool all_zero = true, any_zero = false;
  for (int j = 0; j < k; ++j) {
    thr2[j] = prm.threshold * prm.threshold * bnorm2[j];
    all_zero = all_zero && bnorm2[j] == 0.0;
    any_zero = any_zero || bnorm2[j] == 0.0;
  }
  // b = 0: x = 0 at once, for that system.
  if (prm.vectors_on_device && any_zero) {
    std::vector<double> hx(n * std::size_t(k));
    if (all_zero) {
      sys.get_x(x);  // the device's x is 0 since set_vectors(b, nullptr)
    } else {
      sys.set_vectors(b, x);
      sys.get_x(hx.data());
      for (int j = 0; j < k; ++j)
        if (bnorm2[j] == 0.0) std::fill(hx.begin() + j * n, hx.begin() + (j + 1) * n, 0.0);
      sys.set_vectors(b, hx.data());
    }
  }
  auto zero_where_b_is = [&](double* v) {
    for (int j = 0; j < k; ++j)
      if (bnorm2[j] == 0.0) std::fill(v + j * n, v + (j + 1) * n, 0.0);
  };
  if (all_zero) {
    if (!prm.vectors_on_device) zero_where_b_is(x);
    std::fill(res.reasons.begin(), res.reasons.end(), CNC_REASON_CONVERGED);
    res.reason = CNC_REASON_CONVERGED;
    return res;
  }
  if (!prm.vectors_on_device) {
    if (any_zero && !x_zero) {  // those systems start (and stay) at x = 0; x itself waits
      std::vector<double> x0(x, x + n * std::size_t(k));
      zero_where_b_is(x0.data());
      sys.set_vectors(b, x0.data());
    } else {
      sys.set_vectors(b, x_zero ? nullptr : x);
    }
  }
  sys.init(thr2.data());
  std::vector<double> tr2(static_cast<std::size_t>(k));
  // ||b - A x||² of every system. On the device, init() computes exactly that (r = b - A x,
  // rr = Σ r²); `st` keeps the finished states.
  auto true_norms = [&] {
    if (prm.device_residual) {
      sys.init(thr2.data());
      sys.read_state(fresh.data());
      for (int j = 0; j < k; ++j) tr2[j] = fresh[j].rr;
    } else {
      sys.get_x(x);
      residual_norms(a, k, b, x, tr2.data());
    }
  };
  std::vector<int> restarts(std::size_t(k), 0);
  std::int64_t it = 0;
  bool stopped = false, have_true = false;
  const int interval = std::max(1, prm.check_interval);
  const double slack2 = true_residual_slack * true_residual_slack;
  if (prm.loop_started) prm.loop_started();
  for (;;) {
    sys.read_state(st.data());
    bool any_running = false;
    double worst = 0.0;
    for (int j = 0; j < k; ++j) {
      any_running = any_running || st[j].status == running;
      if (bnorm2[j] > 0) worst = std::max(worst, std::sqrt(std::max(st[j].rr, 0.0) / bnorm2[j]));
    }
    // With b and x on the device (vectors_on_device) get_x takes device pointers: no reader.
    const iterate_reader read_x = [&](double* out) { sys.get_x(out); };
    if (any_running && prm.progress &&
        prm.progress(it, worst, prm.vectors_on_device ? nullptr : &read_x)) {
      stopped = true;
      break;
    }
    if (!any_running) {
      // Verify converged systems against the true residual; restart those that disagree.
      true_norms();
      have_true = true;
      bool restart = false;
      for (int j = 0; j < k; ++j)
        if (bnorm2[j] > 0 && st[j].status == converged && tr2[j] > slack2 * thr2[j] &&
            restarts[j] < prm.max_restarts)
          restart = true;
      if (!restart || it >= prm.max_iterations) break;
      for (int j = 0; j < k; ++j) {
        done_before[j] += st[j].iters;
        if (st[j].status == converged && tr2[j] > slack2 * thr2[j]) ++restarts[j];
      }
      if (prm.log) prm.log(CNC_LOG_INFO, "true residual above threshold: restarting CG from x");
      sys.init(thr2.data());
      have_true = false;
      continue;
    }
    if (it >= prm.max_iterations) break;
    const int batch = int(std::min<std::int64_t>(interval, prm.max_iterations - it));
    sys.iterate(batch);
    it += batch;
    res.iteration_steps += batch;
  }
  if (!have_true) true_norms();
  sys.get_x(x);
  if (!prm.vectors_on_device) zero_where_b_is(x);  // already 0 on the device, up to -0
  int worst_reason = CNC_REASON_CONVERGED;
  for (int j = 0; j < k; ++j) {
    if (bnorm2[j] == 0.0) {
      res.reasons[j] = CNC_REASON_CONVERGED;
      continue;
    }
    res.iters[j] = done_before[j] + st[j].iters;
    res.residual[j] = std::sqrt(std::max(st[j].rr, 0.0) / bnorm2[j]);
    res.true_residual[j] = std::sqrt(tr2[j] / bnorm2[j]);
    int r = stopped && st[j].status == running ? CNC_REASON_STOPPED : reason_of(st[j].status);
    if (r == CNC_REASON_CONVERGED && tr2[j] > true_residual_slack * true_residual_slack * thr2[j])
      r = CNC_REASON_STAGNATED;
    res.reasons[j] = r;
    res.iterations = std::max(res.iterations, res.iters[j]);
    if (reason_severity(r) > reason_severity(worst_reason)) worst_reason = r;
  }
  res.reason = worst_reason;
  return res;
}

}  // namespace cnc
