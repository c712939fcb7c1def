// Helpers shared by the cuda_kernels_* suites (CUDA backend kernels against simple host
// references): the backend under test, test matrices (random SPD, Matrix Market files, CSR ->
// BCRS with identity padding) handed over the way a backend receives them with their reference
// rows, the host SpMV and error measures, the formats and precisions every check runs over, and
// the folder of the real matrices (CNC_MATRIX_DIR, default /work/shared/data/matrices).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "host_reference.hpp"
#include "matrix/matrix.hpp"

// The CUDA backend every test drives (set by open_cuda_backend).
extern std::unique_ptr<cnc::backend> g_backend;
// Opens the CUDA backend into g_backend. Returns -1 when the tests can run; otherwise the exit
// code, after printing why: 77 (no usable CUDA device: skipped) or 1.
int open_cuda_backend();

// ---- matrices
// ------------------------------------------------------------------------------------

// Random symmetric, strictly diagonally dominant (hence SPD) matrix with irregular rows.
cnc::csr_matrix random_spd(int n, int max_off, unsigned seed);
// Matrix Market coordinate real/integer (general or symmetric); empty matrix on failure.
cnc::csr_matrix read_mtx(const std::string& path);

// A matrix in one format, the way a backend receives it, with its dense-row view for references.
struct test_matrix {
  cnc::csr_matrix csr;
  cnc::bcrs_matrix bcrs;
  cnc::sell_matrix sell;
  cnc::host_matrix hm;
  std::vector<double> d;  // inverse diagonal, n_padded
  int np = 0;
  // Reference rows of the padded matrix (CSR of the matrix actually stored).
  cnc::csr_matrix ref;
};

std::unique_ptr<test_matrix> make_test_matrix(const cnc::csr_matrix& a, cnc::format f);

// ---- precision helpers
// ---------------------------------------------------------------------------

using cnc_test::mat_round;
using cnc_test::vec_round;
double vec_tol(cnc::precision p);

// y = A x over the padded rows, column-major with `ld` rows per system, in double.
void ref_spmv(const cnc::csr_matrix& a, cnc::precision p, int k, const std::vector<double>& x,
              int ld, std::vector<double>& y);
// ‖a - b‖ / max(‖b‖, tiny) over rows [0, rows) of system j (column-major, ld rows).
double rel_err(const std::vector<double>& a, const std::vector<double>& b, int ld, int rows, int j);
double rel(double a, double b);
std::vector<double> random_vec(std::size_t n, unsigned seed);

extern const cnc::format all_formats[4];
extern const cnc::precision all_precisions[3];
const char* pname(cnc::precision p);

// The folder of the real matrices: CNC_MATRIX_DIR, else the build's CNC_TEST_MATRIX_DIR.
std::string matrix_dir();
