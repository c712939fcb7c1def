// The cnc side of bench_complex (CUDA) and bench_complex_cpu (plain C++), and what the two print
// alike: the options, the problems, cncSolveCSRComplex and its real-valued counterpart
// (cncSolveCSR on the same graph's real Laplacian) timed as first solves, the table of each one's
// fraction of its bandwidth floor, and the general (non-Hermitian) complex files solved by
// BiCGSTAB and GMRES. Public API only (cnc.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cnc.h"
#include "complex_problems.hpp"

namespace api_bench {

struct complex_options {
  std::string backend;  // cuda, opencl, cpu or auto: CNC_BACKEND of the cnc side
  int reps = 3, iters = 200, max_it = 20000;
  double tol = 1e-8;
  int grid7 = 128, grid27 = 128, grid125 = 0, mesh = 0;  // m of the m^3 graphs; 0: left out
  double flux = 1.0 / 64;                                // magnetic_laplacian's field
  std::string only;                                      // the problems whose name contains it
  std::string matrices = "../shared/data/matrices";      // complex .mtx files; "none": left out
  double bandwidth_gbs = 0;     // the floors' bandwidth in GB/s; 0: measured (copy or triad)
  bool verbose = false;         // cnc's log (CNC_VERBOSE) and CNC_CHOICE_REASON per problem
  std::string format = "auto";  // CNC_MATRIX_FORMAT of the complex solves: auto, zcsr or bcrs2
};

// Reads the options above from argv (--backend, --reps, --iters, --tol, --max-it, --grid7,
// --grid27, --grid125, --mesh, --flux, --only, --matrices, --bandwidth, --format, --verbose;
// --quick: grids of 32^3 and 3 reps for a smoke test). False, with a message on stderr, on an
// unknown or malformed option.
bool parse_complex_options(int argc, char** argv, complex_options* o);
extern const char* const complex_usage;

// A problem: the complex matrix and, for a generated one, the same graph's real Laplacian (n 0
// for a file).
struct complex_case {
  cproblem a;
  problem real;
};
struct case_source {
  std::string name;
  std::function<complex_case()> make;
};
// The magnetic Laplacians of the 7-point and 27-point stencils and of the irregular mesh (sizes
// from the options), then every complex .mtx file of o.matrices (a line is printed on each file
// and on why one is not solved by CG). Made only when called.
std::vector<case_source> complex_sources(const complex_options& o);

// The current context on o.backend with CG (and Jacobi, cnc's default). Exits on an error.
void setup_complex_context(const complex_options& o);

struct cnc_run {
  CNCstatus status = CNC_OK;
  double total = 0, solve = 0, bytes_per_it = 0;  // bytes_per_it: cnc's CNC_BYTES_PER_ITERATION
  int iterations = 0;
  std::string backend, format, reason, choice;
  double ms_per_it() const { return iterations > 0 ? 1e3 * solve / iterations : 0; }
};
// One cncSolveCSRComplex (a first solve: the matrix the context keeps is dropped before it,
// untimed) from x = 0 to ||r|| <= tol ||b|| or max_it iterations, timed from the call to its
// return; exits on a failed call.
cnc_run run_cnc_complex(const cproblem& a, const std::vector<double>& b, std::vector<double>& x,
                        double tol, int max_it);
// The same through cncSolveCSR for a real problem.
cnc_run run_cnc_real(const problem& p, const std::vector<double>& b, std::vector<double>& x,
                     double tol, int max_it);

// cnc on a Hermitian case, medians of o.reps after a warm-up each: o.iters iterations (threshold
// 1e-300) of the complex system and of its real counterpart, and the whole complex call to o.tol.
struct cnc_measure {
  cnc_run fixed, solved, real_fixed;  // the last repetition of each
  double ms_per_it = 0, total = 0, real_ms_per_it = 0;
  double true_res = 0;  // of the last answer to o.tol, recomputed on the host
};
cnc_measure measure_cnc(const complex_case& c, const complex_options& o);

// The floors in seconds per iteration over `bw` bytes/s: a native complex CSR PCG on c.a, and the
// real PCG on c.real.
double complex_floor_s(const cproblem& a, double bw);
double real_floor_s(const problem& p, double bw);

// The table of complex against real fractions of the floor (issue 13: CPU and OpenCL complex
// within 1.3x of their real-valued fraction): its header and one row.
void print_fraction_header(const complex_options& o, double bw);
std::string fraction_row(const complex_case& c, const cnc_measure& m, double bw);

// A general complex matrix (not Hermitian with a positive real diagonal): cnc's BiCGSTAB and
// GMRES to o.tol (whole calls, medians of o.reps after a warm-up), one row each; the context is
// left on CG. There is no textbook peer for these (it is a PCG).
void print_general_header(const complex_options& o);
std::vector<std::string> general_rows(const cproblem& a, const complex_options& o);

void check_call(CNCstatus s, const char* what);  // exits with cnc's message when s != CNC_OK
std::string cnc_text(CNCenum what);              // cncGetString, "?" when absent

}  // namespace api_bench
