! A Fortran program built against an installed cnc: the module source installed under
! share/cnc/fortran/cnc.f90, compiled with the program, and -lcnc. It solves
! tridiag(-1, 4, -1) x = b, b = A x* with x*(i) = sin(i), once assembled entry by entry
! (cncAddIJCoefficient, 0-based) and once as 1-based CSR arrays (cnc_solve_csr), and checks x
! against x*, and once matrix-free (cncSetOperator + cncSolveOperator with the bind(C) operator
! below); then a complex Hermitian tridiag(-conj(w), 4, -w), |w| = 1, as complex(c_double_complex)
! CSR arrays (cnc_solve_csr over cncSolveCSRComplex). Exits with error stop (non-zero) on a wrong
! answer.
module consumer_operator
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_double, c_ptr, c_f_pointer
  implicit none
contains
  ! y = tridiag(-1, d, -1) x as a cnc_operator, d read through user_data (4: the same matrix).
  function tridiag(x, y, n, user_data) result(status) bind(C)
    integer(c_int32_t), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double), intent(out) :: y(n)
    type(c_ptr), value :: user_data
    integer(c_int) :: status
    real(c_double), pointer :: d
    call c_f_pointer(user_data, d)
    y = d*x
    y(2:n) = y(2:n) - x(1:n - 1)
    y(1:n - 1) = y(1:n - 1) - x(2:n)
    status = 0
  end function tridiag
end module consumer_operator

program cnc_consumer_fortran
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_double, c_ptr, c_associated, &
                                         c_funloc, c_loc, c_double_complex, c_null_funptr, c_null_ptr
  use cnc
  use consumer_operator
  implicit none

  integer(c_int32_t), parameter :: n = 60
  real(c_double), parameter :: accept = 1.0e-9_c_double
  type(c_ptr) :: ctx
  integer(c_int32_t) :: i, k, reason
  real(c_double) :: exact(n), b(n), x(n), bb(n, 1), xx(n, 1), value, err
  integer(c_int32_t) :: row_ptr(n + 1), col_idx(3*n - 2)
  real(c_double) :: values(3*n - 2)
  real(c_double), target :: diagonal = 4.0_c_double
  complex(c_double_complex) :: w, zvalues(3*n - 2), zexact(n), zb(n), zx(n)

  do i = 1, n
    exact(i) = sin(real(i, c_double))
  end do
  b = 4.0_c_double*exact
  b(2:n) = b(2:n) - exact(1:n - 1)
  b(1:n - 1) = b(1:n - 1) - exact(2:n)

  ctx = cncNewContext()
  if (.not. c_associated(ctx)) error stop "cncNewContext returned NULL"
  call check(cncMakeCurrent(ctx), "cncMakeCurrent")
  call check(cncSolverParameteri(CNC_NB_VARIABLES, n), "CNC_NB_VARIABLES")
  call check(cncSolverParameterd(CNC_THRESHOLD, 1.0e-13_c_double), "CNC_THRESHOLD")
  call check(cncBegin(CNC_SYSTEM), "cncBegin(CNC_SYSTEM)")
  call check(cncBegin(CNC_MATRIX), "cncBegin(CNC_MATRIX)")
  do i = 0, n - 1
    call check(cncAddIJCoefficient(i, i, 4.0_c_double), "cncAddIJCoefficient")
    if (i > 0) call check(cncAddIJCoefficient(i, i - 1, -1.0_c_double), "cncAddIJCoefficient")
    if (i < n - 1) call check(cncAddIJCoefficient(i, i + 1, -1.0_c_double), "cncAddIJCoefficient")
    call check(cncAddIRightHandSide(i, b(i + 1)), "cncAddIRightHandSide")
  end do
  call check(cncEnd(CNC_MATRIX), "cncEnd(CNC_MATRIX)")
  call check(cncEnd(CNC_SYSTEM), "cncEnd(CNC_SYSTEM)")
  call check(cncSolve(), "cncSolve")
  call check(cncGetIntegerv(CNC_REASON, reason), "CNC_REASON")
  if (reason /= CNC_REASON_CONVERGED) error stop "consumer.f90: cncSolve did not converge"
  do i = 1, n
    call check(cncGetVariable(i - 1, value), "cncGetVariable")
    x(i) = value
  end do
  err = maxval(abs(x - exact))
  print '(a, es10.3)', "consumer.f90: cncSolve, max error ", err
  if (err > accept) error stop "consumer.f90: cncSolve gave a wrong solution"

  ! The same matrix as 1-based CSR arrays.
  k = 1
  row_ptr(1) = 1
  do i = 1, n
    if (i > 1) call put(i - 1, -1.0_c_double)
    call put(i, 4.0_c_double)
    if (i < n) call put(i + 1, -1.0_c_double)
    row_ptr(i + 1) = k
  end do
  bb(:, 1) = b
  xx = 0.0_c_double
  call check(cnc_solve_csr(row_ptr, col_idx, values, bb, xx), "cnc_solve_csr")
  err = maxval(abs(xx(:, 1) - exact))
  print '(a, es10.3)', "consumer.f90: cnc_solve_csr, max error ", err
  if (err > accept) error stop "consumer.f90: cnc_solve_csr gave a wrong solution"

  ! Matrix-free: the operator applies A, cnc runs CG on the host.
  call check(cncSetOperator(CNC_OPERATOR_MATRIX, c_funloc(tridiag), c_loc(diagonal)), &
             "cncSetOperator")
  x = 0.0_c_double
  call check(cncSolveOperator(n, 1, b, x), "cncSolveOperator")
  err = maxval(abs(x - exact))
  print '(a, es10.3)', "consumer.f90: cncSolveOperator, max error ", err
  if (err > accept) error stop "consumer.f90: cncSolveOperator gave a wrong solution"

  ! Complex Hermitian: a(i, i+1) = -w, a(i+1, i) = -conj(w), a(i, i) = 4.
  call check(cncSetOperator(CNC_OPERATOR_MATRIX, c_null_funptr, c_null_ptr), "cncSetOperator")
  w = cmplx(cos(0.3_c_double), sin(0.3_c_double), c_double_complex)
  do i = 1, n
    zexact(i) = cmplx(cos(real(i, c_double)), sin(real(2*i, c_double)), c_double_complex)
  end do
  zb = 4.0_c_double*zexact
  zb(2:n) = zb(2:n) - conjg(w)*zexact(1:n - 1)
  zb(1:n - 1) = zb(1:n - 1) - w*zexact(2:n)
  k = 1
  do i = 1, n
    if (i > 1) zvalues(k) = -conjg(w)
    if (i > 1) k = k + 1
    zvalues(k) = 4.0_c_double
    k = k + 1
    if (i < n) zvalues(k) = -w
    if (i < n) k = k + 1
  end do
  zx = (0.0_c_double, 0.0_c_double)
  call check(cnc_solve_csr(row_ptr, col_idx, zvalues, zb, zx), "cnc_solve_csr (complex)")
  err = maxval(abs(zx - zexact))
  print '(a, es10.3)', "consumer.f90: cnc_solve_csr complex, max error ", err
  if (err > accept) error stop "consumer.f90: cnc_solve_csr (complex) gave a wrong solution"

  call cncDeleteContext(ctx)
  print '(a)', "consumer.f90: OK"

contains

  subroutine put(col, v)
    integer(c_int32_t), intent(in) :: col
    real(c_double), intent(in) :: v
    col_idx(k) = col
    values(k) = v
    k = k + 1
  end subroutine put

  subroutine check(code, what)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= CNC_OK) then
      print '(a, a, a)', what, " failed: ", cncGetErrorMessage()
      error stop 1
    end if
  end subroutine check

end program cnc_consumer_fortran
