// Jacobi-preconditioned conjugate gradient, written once against backends/backend.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "backends/backend.hpp"
#include "matrix/matrix.hpp"

namespace cnc {

// Writes the current iterate (n rows x k systems, column-major, host memory) in the numbering and
// scale of the layer that receives it; each layer above wraps it (reordering, scaling of b).
using iterate_reader = std::function<void(double* x)>;
// (iteration, max relative residual, the iterate's reader, or null where the method does not form
// the iterate between checks) -> stop?
using progress_fn = std::function<bool(std::int64_t, double, const iterate_reader*)>;

struct pcg_params {
  std::int64_t max_iterations = 1000;
  double threshold = 1e-6;  // ||r|| <= threshold ||b||
  int check_interval = 1;   // iterations between two reads of the device scalars
  int max_restarts = 3;     // restarts from the true residual when it disagrees
  // True when the device holds A and the vectors in double: the true residual b - A x is then
  // computed there by init() (one state read, no vector traffic). Otherwise (single, mixed) it
  // is computed on the host against the double CSR, since the device's A is rounded to float.
  bool device_residual = false;
  // True when b and x are in device memory (the backend takes device arrays): ‖b‖ is then also
  // computed by init() (with x = 0), and x is written once, by get_x at the end. Needs
  // device_residual; `a` is then only read for its n.
  bool vectors_on_device = false;
  progress_fn progress;  // may be empty
  std::function<void(int, const std::string&)> log;
  // Called once, after b and x are on the device and before the first iteration (may be empty).
  std::function<void()> loop_started;
};

struct pcg_result {
  int reason = 0;                     // CNC_REASON_*, worst over the systems
  std::int64_t iterations = 0;        // max over systems
  std::vector<std::int64_t> iters;    // per system
  std::vector<int> reasons;           // per system
  std::vector<double> residual;       // recursive ||r||/||b|| per system
  std::vector<double> true_residual;  // ||b - A x||/||b|| in double per system
  std::int64_t iteration_steps = 0;   // iterations actually executed (for flop/byte rates)
  // Device traffic and arithmetic of the whole solve when the method counts them (BiCGSTAB,
  // GMRES); 0 for PCG, whose per-iteration cost is fixed (pipeline's bytes_per_iteration).
  double bytes = 0, flops = 0;
};

// A converged system whose true residual is more than this factor above the threshold is
// restarted from x (at most max_restarts times), then reported as stagnated. Every method.
constexpr double true_residual_slack = 2.0;

// Solves a x = b for k systems (column-major b and x, n real rows). `a` is the double CSR used
// for the true-residual check when it runs on the host; `sys` already holds the matrix.
// x: initial guess in, solution out. With device_residual, x is read at the start and written
// once, at the end (a solve that throws leaves it as it was); otherwise the host true residual
// reads x back into it while CG runs.
pcg_result pcg_solve(device_system& sys, const csr_view& a, int k, const double* b, double* x,
                     const pcg_params& prm);

// Order of CNC_REASON_* values from best to worst: the combined reason of several systems is
// the worst one (every Krylov method uses this one table).
int reason_severity(int reason);

// ||b_j||² of every system (host, column-major), in fixed pieces summed in order (the same bits
// for any thread count); returns whether x is all zeros (then it need not be uploaded).
bool host_norms(const double* b, const double* x, std::size_t n, int k, double* bnorm2);

// Host reference y = b - A x (double), used for the true residual.
void residual_norms(const csr_view& a, int k, const double* b, const double* x, double* norms2);

}  // namespace cnc
