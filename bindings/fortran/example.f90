! example.f90 -- cnc from Fortran: a 1D Poisson problem solved twice and checked.
!
! -u'' = 2 on (0, 1), u(0) = u(1) = 0, on n interior points: the centred difference is exact for
! the quadratic u(t) = t (1 - t), so the discrete solution is known exactly. The system
! tridiag(-1, 2, -1) x = 2 h^2 is
!   1. assembled entry by entry with cncAddIJCoefficient (0-based indices, as in C), solved with
!      cncSolve and read back with cncGetVariable;
!   2. written as 1-based CSR arrays and solved with cncSolveCSR (base 1), then through the
!      cnc_solve_csr wrapper with two right-hand sides at once.
! It also checks that a misuse is reported with its status and message. Exits non-zero (error
! stop) on any wrong answer, so it doubles as a CTest test.
program cnc_fortran_example
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_double, c_ptr, &
                                         c_associated
  use cnc
  implicit none

  integer(c_int32_t), parameter :: n = 200
  real(c_double), parameter :: tol = 1.0e-12_c_double
  real(c_double), parameter :: accept = 1.0e-8_c_double
  type(c_ptr) :: ctx
  integer(c_int32_t) :: i, iterations, reason
  integer(c_int) :: status
  real(c_double) :: h, value, err
  real(c_double) :: exact(n), x(n), b(n), b2(n, 2), x2(n, 2)
  integer(c_int64_t) :: row_ptr(n + 1)
  integer(c_int32_t) :: row_ptr32(n + 1), col_idx(3*n - 2)
  real(c_double) :: values(3*n - 2)
  character(len=:), allocatable :: text

  h = 1.0_c_double/real(n + 1, c_double)
  do i = 1, n
    exact(i) = real(i, c_double)*h*(1.0_c_double - real(i, c_double)*h)
  end do

  ctx = cncNewContext()
  if (.not. c_associated(ctx)) error stop "cncNewContext returned NULL"
  call check(cncMakeCurrent(ctx), "cncMakeCurrent")
  print '(a, a)', "cnc version ", cncVersionString()

  ! ---- 1. Entry-wise assembly, 0-based indices -------------------------------------------------
  call check(cncSolverParameteri(CNC_NB_VARIABLES, n), "CNC_NB_VARIABLES")
  call check(cncSolverParameterd(CNC_THRESHOLD, tol), "CNC_THRESHOLD")
  call check(cncBegin(CNC_SYSTEM), "cncBegin(CNC_SYSTEM)")
  call check(cncBegin(CNC_MATRIX), "cncBegin(CNC_MATRIX)")
  do i = 0, n - 1
    call check(cncAddIJCoefficient(i, i, 2.0_c_double), "cncAddIJCoefficient")
    if (i > 0) call check(cncAddIJCoefficient(i, i - 1, -1.0_c_double), "cncAddIJCoefficient")
    if (i < n - 1) call check(cncAddIJCoefficient(i, i + 1, -1.0_c_double), "cncAddIJCoefficient")
    call check(cncAddIRightHandSide(i, 2.0_c_double*h*h), "cncAddIRightHandSide")
  end do
  call check(cncEnd(CNC_MATRIX), "cncEnd(CNC_MATRIX)")
  call check(cncEnd(CNC_SYSTEM), "cncEnd(CNC_SYSTEM)")
  call check(cncSolve(), "cncSolve")
  call check(cncGetIntegerv(CNC_REASON, reason), "CNC_REASON")
  call check(cncGetIntegerv(CNC_USED_ITERATIONS, iterations), "CNC_USED_ITERATIONS")
  call check(cncGetString(CNC_REASON_NAME, text), "CNC_REASON_NAME")
  if (reason /= CNC_REASON_CONVERGED) error stop "cncSolve did not converge"
  do i = 1, n
    call check(cncGetVariable(i - 1, value), "cncGetVariable")
    x(i) = value
  end do
  err = maxval(abs(x - exact))/maxval(abs(exact))
  print '(a, i0, a, a, a, es10.3)', "cncSolve:      ", iterations, " iterations, ", text, &
    ", max relative error ", err
  if (err > accept) error stop "cncSolve: wrong solution"

  ! ---- 2. The same matrix as 1-based CSR arrays ------------------------------------------------
  call poisson_csr(n, row_ptr, col_idx, values)
  b = 2.0_c_double*h*h
  x = 0.0_c_double
  status = cncSolveCSR(n, row_ptr, col_idx, values, 1_c_int32_t, 1_c_int32_t, b, x)
  call check(status, "cncSolveCSR")
  call check(cncGetIntegerv(CNC_REASON, reason), "CNC_REASON")
  call check(cncGetIntegerv(CNC_USED_ITERATIONS, iterations), "CNC_USED_ITERATIONS")
  if (reason /= CNC_REASON_CONVERGED) error stop "cncSolveCSR did not converge"
  err = maxval(abs(x - exact))/maxval(abs(exact))
  print '(a, i0, a, es10.3)', "cncSolveCSR:   ", iterations, &
    " iterations, max relative error ", err
  if (err > accept) error stop "cncSolveCSR: wrong solution"

  ! Two right-hand sides through the wrapper (32-bit row_ptr): b and 3 b, so x and 3 x.
  row_ptr32 = int(row_ptr, c_int32_t)
  b2(:, 1) = 2.0_c_double*h*h
  b2(:, 2) = 6.0_c_double*h*h
  x2 = 0.0_c_double
  call check(cnc_solve_csr(row_ptr32, col_idx, values, b2, x2), "cnc_solve_csr")
  err = max(maxval(abs(x2(:, 1) - exact)), maxval(abs(x2(:, 2) - 3.0_c_double*exact))) &
        /maxval(abs(3.0_c_double*exact))
  print '(a, es10.3)', "cnc_solve_csr: 2 right-hand sides, max relative error ", err
  if (err > accept) error stop "cnc_solve_csr: wrong solution"
  if (cnc_solve_csr(row_ptr, col_idx, values, b2(1:n - 1, :), x2(1:n - 1, :)) &
      /= CNC_ERR_SIZE_MISMATCH) error stop "cnc_solve_csr accepted a wrong b size"

  ! ---- 3. Errors carry a status and a message naming the call ---------------------------------
  status = cncAddIJCoefficient(0_c_int32_t, 0_c_int32_t, 1.0_c_double)  ! not inside MATRIX
  if (status /= CNC_ERR_STATE) error stop "misplaced cncAddIJCoefficient not CNC_ERR_STATE"
  text = cncGetErrorMessage()
  print '(a, a)', "expected error: ", text
  if (index(text, "cncAddIJCoefficient") == 0) error stop "error message does not name the call"
  if (index(cncStatusString(CNC_ERR_STATE), "CNC_ERR_STATE") == 0) error stop "cncStatusString"
  call check(cncClearError(), "cncClearError")
  if (cncGetError() /= CNC_OK) error stop "cncClearError did not clear"

  call cncDeleteContext(ctx)
  print '(a)', "Fortran example: all checks passed"
  deallocate(text)  ! main-program allocatables are never freed implicitly

contains

  ! Stops with cnc's message when a call fails.
  subroutine check(code, what)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= CNC_OK) then
      print '(a, a, a, a)', what, " failed: ", cncStatusString(code), ""
      print '(a, a)', "  ", cncGetErrorMessage()
      error stop 1
    end if
  end subroutine check

  ! tridiag(-1, 2, -1) of order m as 1-based CSR.
  subroutine poisson_csr(m, ptr, cols, vals)
    integer(c_int32_t), intent(in) :: m
    integer(c_int64_t), intent(out) :: ptr(m + 1)
    integer(c_int32_t), intent(out) :: cols(:)
    real(c_double), intent(out) :: vals(:)
    integer(c_int32_t) :: r
    integer(c_int64_t) :: k
    k = 1
    ptr(1) = 1
    do r = 1, m
      if (r > 1) then
        cols(k) = r - 1
        vals(k) = -1.0_c_double
        k = k + 1
      end if
      cols(k) = r
      vals(k) = 2.0_c_double
      k = k + 1
      if (r < m) then
        cols(k) = r + 1
        vals(k) = -1.0_c_double
        k = k + 1
      end if
      ptr(r + 1) = k
    end do
  end subroutine poisson_csr

end program cnc_fortran_example
