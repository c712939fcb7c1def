// OpenNL 4's nl_64.h in a C++ program built with GARGANTUA (64-bit counts): the NLulong overloads
// of the variable calls, and nl_matrix.h's 64-bit CRS entry points, on a 3 x 3 diagonal system
// whose answer is closed-form, and nlGetCurrentMatrix's matrix in the 64-bit layout. Exits 0 on
// success.
#include <NL/nl.h>
#include <NL/nl_64.h>
#include <NL/nl_matrix.h>

#include <cmath>
#include <cstdio>
#include <type_traits>

static_assert(sizeof(NLuint_big) == 8, "GARGANTUA: 64-bit counts");
static_assert(std::is_same_v<decltype(nlAddIJCoefficient(NLulong(0), NLulong(0), 0.0)), NLulong>,
              "the NLulong overload");

static int failures = 0;
static void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

int main() {
  NLContext ctx = nlNewContext();
  nlSolverParameteri(NL_NB_VARIABLES, 3);
  nlSolverParameteri(NL_SYMMETRIC, NL_TRUE);
  nlSolverParameterd(NL_THRESHOLD, 1e-12);
  nlBegin(NL_SYSTEM);
  nlSetVariable(NLulong(2), 7.0);
  nlLockVariable(NLulong(2));
  check(nlVariableIsLocked(NLulong(2)) == NL_TRUE, "nlVariableIsLocked(NLulong)");
  nlBegin(NL_MATRIX);
  for (NLulong i = 0; i < 2; ++i) {
    nlAddIJCoefficient(i, i, 2.0);  // the NLulong overload
    nlAddIRightHandSide(NLuint(i), 1.0 + double(i));
  }
  nlEnd(NL_MATRIX);
  nlEnd(NL_SYSTEM);
  check(nlSolve() == NL_TRUE, "nlSolve");
  check(std::fabs(nlGetVariable(NLulong(0)) - 0.5) < 1e-12, "x0 = 1/2");
  check(std::fabs(nlMultiGetVariable(NLulong(1), NLulong(0)) - 1.0) < 1e-12, "x1 = 1");
  check(nlGetVariable(NLulong(2)) == 7.0, "x2 locked at 7");
  // nlGetCurrentMatrix in the 64-bit layout: diag(2, 2) over the two free variables.
  auto* C = reinterpret_cast<NLCRSMatrix*>(nlGetCurrentMatrix());
  check(C != nullptr && C->type == NL_MATRIX_CRS && C->m == 2 && C->rowptr[2] == 2 &&
            C->val[1] == 2.0,
        "nlGetCurrentMatrix (64)");
  check(C != nullptr && nlMatrixNNZ(reinterpret_cast<NLMatrix>(C)) == 2,
        "nlMatrixNNZ of the current matrix (64)");
  nlDeleteContext(ctx);  // deletes the current matrix

  // A 64-bit CRS matrix: 2 x 2, [1 2; 0 3] (1, 1) = (3, 3).
  NLCRSMatrix M;
  nlCRSMatrixConstructPattern(&M, 2, 2);
  nlCRSMatrixPatternSetRowLength(&M, 0, 2);
  nlCRSMatrixPatternSetRowLength(&M, 1, 1);
  nlCRSMatrixPatternCompile(&M);
  check(nlCRSMatrixNNZ(&M) == 3, "nlCRSMatrixNNZ (64)");
  check(nlCRSMatrixAdd(&M, 0, 0, 1.0) == 0 && nlCRSMatrixAdd(&M, 0, 1, 2.0) == 1 &&
            nlCRSMatrixAdd(&M, 1, 1, 3.0) == 2,
        "nlCRSMatrixAdd positions (64)");
  const double x[2] = {1.0, 1.0};
  double y[2] = {0.0, 0.0};
  nlMultMatrixVector(reinterpret_cast<NLMatrix>(&M), x, y);
  check(y[0] == 3.0 && y[1] == 3.0, "product (64)");
  check(nlMatrixNNZ(reinterpret_cast<NLMatrix>(&M)) == 3, "nlMatrixNNZ (64)");
  M.destroy_func(reinterpret_cast<NLMatrix>(&M));  // on the stack: destroyed, not freed
  return failures == 0 ? 0 : 1;
}
