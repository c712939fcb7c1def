! cnc.f90 -- Fortran 2008 bindings of cnc (include/cnc.h) over ISO_C_BINDING.
!
! Shipped as source: compile it with your own compiler next to your program, e.g.
!     gfortran -c cnc.f90 && gfortran my_prog.f90 cnc.o -lcnc
!
! - Every function of cnc.h is declared with its C name (Fortran is case-insensitive:
!   cncBegin, CNCBEGIN, cncbegin are the same). Arguments passed by value in C are VALUE here.
! - Handles (CNCcontext) are type(c_ptr). Integer kinds are explicit: CNCint and CNCuint are
!   integer(c_int32_t) (Fortran has no unsigned type: indices must stay below 2**31), CNCint64 is
!   integer(c_int64_t), enums, booleans and statuses are integer(c_int).
! - Every CNC_* constant of cnc.h is a named parameter with the same name and value.
! - Indices given to cnc are 0-based, as in C (cncAddIJCoefficient(i, j, v) with 0 <= i, j < n);
!   only cncSolveCSR / cnc_solve_csr take 1-based arrays (base = 1).
! - Functions returning C strings (cncGetErrorMessage, cncGetLastErrorMessage, cncStatusString,
!   cncVersionString) return allocatable Fortran strings here; cncGetString(pname, value) gives
!   value as an allocatable string. The raw pointers remain available as c_cncGetErrorMessage...
! - cnc_solve_csr(row_ptr, col_idx, values, b, x) solves with 1-based Fortran CSR arrays, n taken
!   from size(row_ptr) - 1, b and x of shape (n) or (n, nrhs); row_ptr may be 32- or 64-bit.
!   With complex(c_double_complex) values, b and x it calls cncSolveCSRComplex (CG needs A
!   Hermitian positive definite; cnc checks it).
module cnc
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_double, c_char, c_ptr, &
                                         c_funptr, c_null_char, c_associated, c_f_pointer, &
                                         c_size_t, c_double_complex
  implicit none
  private :: c_int, c_int32_t, c_int64_t, c_double, c_char, c_ptr, c_funptr, c_null_char
  private :: c_associated, c_f_pointer, c_size_t, c_double_complex
  private :: c_strlen, to_fortran_string
  private :: solve_csr_i64_1, solve_csr_i64_2, solve_csr_i32_1, solve_csr_i32_2
  private :: solve_csr_z64_1, solve_csr_z64_2, solve_csr_z32_1, solve_csr_z32_2

  ! ---- Version ---------------------------------------------------------------------------------
  integer(c_int), parameter :: CNC_VERSION_MAJOR = 0
  integer(c_int), parameter :: CNC_VERSION_MINOR = 1
  integer(c_int), parameter :: CNC_VERSION_PATCH = 0
  integer(c_int), parameter :: CNC_VERSION_NUMBER = &
                               CNC_VERSION_MAJOR*10000 + CNC_VERSION_MINOR*100 + CNC_VERSION_PATCH

  ! ---- Booleans --------------------------------------------------------------------------------
  integer(c_int), parameter :: CNC_FALSE = 0
  integer(c_int), parameter :: CNC_TRUE = 1

  ! ---- Status codes ----------------------------------------------------------------------------
  integer(c_int), parameter :: CNC_OK = 0
  integer(c_int), parameter :: CNC_ERR_STATE = -1
  integer(c_int), parameter :: CNC_ERR_INVALID_ENUM = -2
  integer(c_int), parameter :: CNC_ERR_INVALID_VALUE = -3
  integer(c_int), parameter :: CNC_ERR_INDEX_OUT_OF_RANGE = -4
  integer(c_int), parameter :: CNC_ERR_NOT_FINITE = -5
  integer(c_int), parameter :: CNC_ERR_SIZE_MISMATCH = -6
  integer(c_int), parameter :: CNC_ERR_OUT_OF_MEMORY = -7
  integer(c_int), parameter :: CNC_ERR_NO_CONTEXT = -8
  integer(c_int), parameter :: CNC_ERR_BACKEND_UNAVAILABLE = -9
  integer(c_int), parameter :: CNC_ERR_DEVICE = -10
  integer(c_int), parameter :: CNC_ERR_UNSUPPORTED = -11
  integer(c_int), parameter :: CNC_ERR_OVERFLOW = -12
  integer(c_int), parameter :: CNC_ERR_NULL_POINTER = -13
  integer(c_int), parameter :: CNC_ERR_INTERNAL = -14
  integer(c_int), parameter :: CNC_ERR_NO_FP64 = -15
  integer(c_int), parameter :: CNC_ERR_CALLBACK = -16

  ! ---- Primitives for cncBegin / cncEnd --------------------------------------------------------
  integer(c_int), parameter :: CNC_SYSTEM = int(z'000', c_int)
  integer(c_int), parameter :: CNC_MATRIX = int(z'001', c_int)
  integer(c_int), parameter :: CNC_ROW = int(z'002', c_int)
  integer(c_int), parameter :: CNC_MATRIX_PATTERN = int(z'003', c_int)

  ! ---- Solver parameters -----------------------------------------------------------------------
  integer(c_int), parameter :: CNC_NB_VARIABLES = int(z'101', c_int)
  integer(c_int), parameter :: CNC_NB_SYSTEMS = int(z'102', c_int)
  integer(c_int), parameter :: CNC_LEAST_SQUARES = int(z'103', c_int)
  integer(c_int), parameter :: CNC_SYMMETRIC = int(z'104', c_int)
  integer(c_int), parameter :: CNC_SOLVER = int(z'105', c_int)
  integer(c_int), parameter :: CNC_PRECONDITIONER = int(z'106', c_int)
  integer(c_int), parameter :: CNC_MAX_ITERATIONS = int(z'107', c_int)
  integer(c_int), parameter :: CNC_THRESHOLD = int(z'108', c_int)
  integer(c_int), parameter :: CNC_PRECISION = int(z'109', c_int)
  integer(c_int), parameter :: CNC_MATRIX_FORMAT = int(z'10A', c_int)
  integer(c_int), parameter :: CNC_BACKEND = int(z'10B', c_int)
  integer(c_int), parameter :: CNC_NB_THREADS = int(z'10C', c_int)
  integer(c_int), parameter :: CNC_NNZ_HINT = int(z'10D', c_int)
  integer(c_int), parameter :: CNC_DEVICE_INDEX = int(z'10E', c_int)
  integer(c_int), parameter :: CNC_CHECK_INTERVAL = int(z'10F', c_int)
  integer(c_int), parameter :: CNC_GMRES_RESTART = int(z'110', c_int)
  integer(c_int), parameter :: CNC_SSOR_OMEGA = int(z'111', c_int)
  integer(c_int), parameter :: CNC_REORDER = int(z'112', c_int)
  integer(c_int), parameter :: CNC_EIGEN_THRESHOLD = int(z'113', c_int)

  integer(c_int), parameter :: CNC_SOLVER_DEFAULT = int(z'200', c_int)
  integer(c_int), parameter :: CNC_CG = int(z'201', c_int)
  integer(c_int), parameter :: CNC_BICGSTAB = int(z'202', c_int)
  integer(c_int), parameter :: CNC_GMRES = int(z'203', c_int)
  integer(c_int), parameter :: CNC_CHOLMOD = int(z'204', c_int)
  integer(c_int), parameter :: CNC_SUPERLU = int(z'205', c_int)
  integer(c_int), parameter :: CNC_BLOCK_CG = int(z'206', c_int)
  integer(c_int), parameter :: CNC_CUDSS = int(z'207', c_int)

  integer(c_int), parameter :: CNC_PRECOND_NONE = int(z'300', c_int)
  integer(c_int), parameter :: CNC_PRECOND_JACOBI = int(z'301', c_int)
  integer(c_int), parameter :: CNC_PRECOND_SSOR = int(z'302', c_int)
  integer(c_int), parameter :: CNC_PRECOND_USER = int(z'303', c_int)

  integer(c_int), parameter :: CNC_DOUBLE = int(z'400', c_int)
  integer(c_int), parameter :: CNC_SINGLE = int(z'401', c_int)
  integer(c_int), parameter :: CNC_MIXED = int(z'402', c_int)

  integer(c_int), parameter :: CNC_FORMAT_AUTO = int(z'500', c_int)
  integer(c_int), parameter :: CNC_FORMAT_CSR = int(z'501', c_int)
  integer(c_int), parameter :: CNC_FORMAT_BCRS2 = int(z'502', c_int)
  integer(c_int), parameter :: CNC_FORMAT_BCRS4 = int(z'503', c_int)
  integer(c_int), parameter :: CNC_FORMAT_SELL = int(z'504', c_int)
  integer(c_int), parameter :: CNC_FORMAT_ZCSR = int(z'505', c_int)
  integer(c_int), parameter :: CNC_FORMAT_ZSELL = int(z'506', c_int)

  integer(c_int), parameter :: CNC_BACKEND_AUTO = int(z'600', c_int)
  integer(c_int), parameter :: CNC_BACKEND_CPU = int(z'601', c_int)
  integer(c_int), parameter :: CNC_BACKEND_OPENCL = int(z'602', c_int)
  integer(c_int), parameter :: CNC_BACKEND_CUDA = int(z'603', c_int)
  integer(c_int), parameter :: CNC_REORDER_AUTO = int(z'C00', c_int)
  integer(c_int), parameter :: CNC_REORDER_NONE = int(z'C01', c_int)
  integer(c_int), parameter :: CNC_REORDER_RCM = int(z'C02', c_int)

  integer(c_int), parameter :: CNC_OPERATOR_MATRIX = int(z'D00', c_int)
  integer(c_int), parameter :: CNC_OPERATOR_PRECONDITIONER = int(z'D01', c_int)

  integer(c_int), parameter :: CNC_EIGEN_SMALLEST = int(z'E00', c_int)
  integer(c_int), parameter :: CNC_EIGEN_LARGEST = int(z'E01', c_int)
  integer(c_int), parameter :: CNC_EIGEN_NEAREST = int(z'E02', c_int)

  ! ---- Flags for cncEnable / cncDisable / cncIsEnabled -----------------------------------------
  integer(c_int), parameter :: CNC_VERBOSE = int(z'701', c_int)
  integer(c_int), parameter :: CNC_NORMALIZE_ROWS = int(z'702', c_int)
  integer(c_int), parameter :: CNC_KEEP_MATRIX = int(z'703', c_int)

  ! ---- Read-only statistics --------------------------------------------------------------------
  integer(c_int), parameter :: CNC_USED_ITERATIONS = int(z'801', c_int)
  integer(c_int), parameter :: CNC_ERROR = int(z'802', c_int)
  integer(c_int), parameter :: CNC_TRUE_ERROR = int(z'803', c_int)
  integer(c_int), parameter :: CNC_REASON = int(z'804', c_int)
  integer(c_int), parameter :: CNC_ELAPSED_TIME = int(z'805', c_int)
  integer(c_int), parameter :: CNC_ASSEMBLY_TIME = int(z'806', c_int)
  integer(c_int), parameter :: CNC_CONVERSION_TIME = int(z'807', c_int)
  integer(c_int), parameter :: CNC_UPLOAD_TIME = int(z'808', c_int)
  integer(c_int), parameter :: CNC_SOLVE_TIME = int(z'809', c_int)
  integer(c_int), parameter :: CNC_GFLOPS = int(z'80A', c_int)
  integer(c_int), parameter :: CNC_BYTES_PER_ITERATION = int(z'80B', c_int)
  integer(c_int), parameter :: CNC_NNZ = int(z'80C', c_int)
  integer(c_int), parameter :: CNC_BACKEND_USED = int(z'80D', c_int)
  integer(c_int), parameter :: CNC_SOLVER_USED = int(z'814', c_int)
  integer(c_int), parameter :: CNC_REORDER_USED = int(z'815', c_int)
  integer(c_int), parameter :: CNC_REORDER_TIME = int(z'816', c_int)
  integer(c_int), parameter :: CNC_LONG_ROWS = int(z'817', c_int)
  integer(c_int), parameter :: CNC_FORMAT_USED = int(z'80E', c_int)
  integer(c_int), parameter :: CNC_ZERO_DIAGONALS = int(z'80F', c_int)
  integer(c_int), parameter :: CNC_STATE = int(z'810', c_int)
  integer(c_int), parameter :: CNC_GBYTES_PER_SECOND = int(z'811', c_int)
  integer(c_int), parameter :: CNC_BLOCK_FILL_RATIO = int(z'812', c_int)
  integer(c_int), parameter :: CNC_TRUE_ERROR_MIN = int(z'813', c_int)

  integer(c_int), parameter :: CNC_REASON_NONE = int(z'900', c_int)
  integer(c_int), parameter :: CNC_REASON_CONVERGED = int(z'901', c_int)
  integer(c_int), parameter :: CNC_REASON_MAX_ITERATIONS = int(z'902', c_int)
  integer(c_int), parameter :: CNC_REASON_INDEFINITE_MATRIX = int(z'903', c_int)
  integer(c_int), parameter :: CNC_REASON_INDEFINITE_PRECOND = int(z'904', c_int)
  integer(c_int), parameter :: CNC_REASON_NOT_FINITE = int(z'905', c_int)
  integer(c_int), parameter :: CNC_REASON_STOPPED = int(z'906', c_int)
  integer(c_int), parameter :: CNC_REASON_STAGNATED = int(z'907', c_int)
  integer(c_int), parameter :: CNC_REASON_BREAKDOWN = int(z'908', c_int)

  integer(c_int), parameter :: CNC_STATE_INITIAL = int(z'A00', c_int)
  integer(c_int), parameter :: CNC_STATE_SYSTEM = int(z'A01', c_int)
  integer(c_int), parameter :: CNC_STATE_MATRIX = int(z'A02', c_int)
  integer(c_int), parameter :: CNC_STATE_ROW = int(z'A03', c_int)
  integer(c_int), parameter :: CNC_STATE_MATRIX_CONSTRUCTED = int(z'A04', c_int)
  integer(c_int), parameter :: CNC_STATE_SYSTEM_CONSTRUCTED = int(z'A05', c_int)
  integer(c_int), parameter :: CNC_STATE_SOLVED = int(z'A06', c_int)
  integer(c_int), parameter :: CNC_STATE_MATRIX_PATTERN = int(z'A07', c_int)

  ! ---- Strings for cncGetString ----------------------------------------------------------------
  integer(c_int), parameter :: CNC_BACKEND_NAME = int(z'B01', c_int)
  integer(c_int), parameter :: CNC_DEVICE_NAME = int(z'B02', c_int)
  integer(c_int), parameter :: CNC_FORMAT_NAME = int(z'B03', c_int)
  integer(c_int), parameter :: CNC_REASON_NAME = int(z'B04', c_int)
  integer(c_int), parameter :: CNC_VERSION_STRING = int(z'B05', c_int)
  integer(c_int), parameter :: CNC_CPU_SIMD = int(z'B06', c_int)
  integer(c_int), parameter :: CNC_ORDERING_NAME = int(z'B07', c_int)
  integer(c_int), parameter :: CNC_CHOICE_REASON = int(z'B08', c_int)

  ! ---- Log levels ------------------------------------------------------------------------------
  integer(c_int), parameter :: CNC_LOG_ERROR = 0
  integer(c_int), parameter :: CNC_LOG_WARNING = 1
  integer(c_int), parameter :: CNC_LOG_INFO = 2

  ! ---- Callback signatures (write bind(C) procedures with these interfaces; pass c_funloc) -----
  abstract interface
    subroutine cnc_log_callback(level, message, user_data) bind(C)
      import :: c_int, c_ptr
      integer(c_int), value :: level
      type(c_ptr), value :: message  ! NUL-terminated C string, valid during the call only
      type(c_ptr), value :: user_data
    end subroutine cnc_log_callback
    function cnc_progress_callback(iteration, relative_residual, user_data) result(stop) bind(C)
      import :: c_int, c_int32_t, c_double, c_ptr
      integer(c_int32_t), value :: iteration
      real(c_double), value :: relative_residual
      type(c_ptr), value :: user_data
      integer(c_int) :: stop  ! 0 to continue, non-zero to stop
    end function cnc_progress_callback
    ! y = Op x for one vector of n values (cncSetOperator); 0 on success.
    function cnc_operator(x, y, n, user_data) result(status) bind(C)
      import :: c_int, c_int32_t, c_double, c_ptr
      integer(c_int32_t), value :: n
      real(c_double), intent(in) :: x(n)
      real(c_double), intent(out) :: y(n)
      type(c_ptr), value :: user_data
      integer(c_int) :: status
    end function cnc_operator
  end interface

  ! ---- The C functions -------------------------------------------------------------------------
  interface
    ! Contexts
    function cncNewContext() result(ctx) bind(C, name="cncNewContext")
      import :: c_ptr
      type(c_ptr) :: ctx
    end function cncNewContext
    subroutine cncDeleteContext(ctx) bind(C, name="cncDeleteContext")
      import :: c_ptr
      type(c_ptr), value :: ctx
    end subroutine cncDeleteContext
    function cncMakeCurrent(ctx) result(status) bind(C, name="cncMakeCurrent")
      import :: c_ptr, c_int
      type(c_ptr), value :: ctx
      integer(c_int) :: status
    end function cncMakeCurrent
    function cncGetCurrent() result(ctx) bind(C, name="cncGetCurrent")
      import :: c_ptr
      type(c_ptr) :: ctx
    end function cncGetCurrent

    ! Parameters and flags
    function cncSolverParameteri(pname, value) result(status) bind(C, name="cncSolverParameteri")
      import :: c_int, c_int32_t
      integer(c_int), value :: pname
      integer(c_int32_t), value :: value
      integer(c_int) :: status
    end function cncSolverParameteri
    function cncSolverParameterd(pname, value) result(status) bind(C, name="cncSolverParameterd")
      import :: c_int, c_double
      integer(c_int), value :: pname
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncSolverParameterd
    function cncSolverParameteri64(pname, value) result(status) &
        bind(C, name="cncSolverParameteri64")
      import :: c_int, c_int64_t
      integer(c_int), value :: pname
      integer(c_int64_t), value :: value
      integer(c_int) :: status
    end function cncSolverParameteri64
    function cncGetIntegerv(pname, value) result(status) bind(C, name="cncGetIntegerv")
      import :: c_int, c_int32_t
      integer(c_int), value :: pname
      integer(c_int32_t), intent(out) :: value
      integer(c_int) :: status
    end function cncGetIntegerv
    function cncGetInteger64v(pname, value) result(status) bind(C, name="cncGetInteger64v")
      import :: c_int, c_int64_t
      integer(c_int), value :: pname
      integer(c_int64_t), intent(out) :: value
      integer(c_int) :: status
    end function cncGetInteger64v
    function cncGetDoublev(pname, value) result(status) bind(C, name="cncGetDoublev")
      import :: c_int, c_double
      integer(c_int), value :: pname
      real(c_double), intent(out) :: value
      integer(c_int) :: status
    end function cncGetDoublev
    function cncGetSystemIntegerv(k, pname, value) result(status) &
        bind(C, name="cncGetSystemIntegerv")
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: k
      integer(c_int), value :: pname
      integer(c_int32_t), intent(out) :: value
      integer(c_int) :: status
    end function cncGetSystemIntegerv
    function cncGetSystemDoublev(k, pname, value) result(status) &
        bind(C, name="cncGetSystemDoublev")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: k
      integer(c_int), value :: pname
      real(c_double), intent(out) :: value
      integer(c_int) :: status
    end function cncGetSystemDoublev
    function c_cncGetString(pname, value) result(status) bind(C, name="cncGetString")
      import :: c_int, c_ptr
      integer(c_int), value :: pname
      type(c_ptr), intent(out) :: value
      integer(c_int) :: status
    end function c_cncGetString
    function cncEnable(flag) result(status) bind(C, name="cncEnable")
      import :: c_int
      integer(c_int), value :: flag
      integer(c_int) :: status
    end function cncEnable
    function cncDisable(flag) result(status) bind(C, name="cncDisable")
      import :: c_int
      integer(c_int), value :: flag
      integer(c_int) :: status
    end function cncDisable
    function cncIsEnabled(flag, value) result(status) bind(C, name="cncIsEnabled")
      import :: c_int
      integer(c_int), value :: flag
      integer(c_int), intent(out) :: value
      integer(c_int) :: status
    end function cncIsEnabled

    ! Life cycle
    function cncBegin(primitive) result(status) bind(C, name="cncBegin")
      import :: c_int
      integer(c_int), value :: primitive
      integer(c_int) :: status
    end function cncBegin
    function cncEnd(primitive) result(status) bind(C, name="cncEnd")
      import :: c_int
      integer(c_int), value :: primitive
      integer(c_int) :: status
    end function cncEnd

    ! Variables (0-based indices)
    function cncSetVariable(i, value) result(status) bind(C, name="cncSetVariable")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncSetVariable
    function cncGetVariable(i, value) result(status) bind(C, name="cncGetVariable")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i
      real(c_double), intent(out) :: value
      integer(c_int) :: status
    end function cncGetVariable
    function cncMultiSetVariable(i, k, value) result(status) bind(C, name="cncMultiSetVariable")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i, k
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncMultiSetVariable
    function cncMultiGetVariable(i, k, value) result(status) bind(C, name="cncMultiGetVariable")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i, k
      real(c_double), intent(out) :: value
      integer(c_int) :: status
    end function cncMultiGetVariable
    function cncLockVariable(i) result(status) bind(C, name="cncLockVariable")
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: i
      integer(c_int) :: status
    end function cncLockVariable
    function cncUnlockVariable(i) result(status) bind(C, name="cncUnlockVariable")
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: i
      integer(c_int) :: status
    end function cncUnlockVariable
    function cncVariableIsLocked(i, locked) result(status) bind(C, name="cncVariableIsLocked")
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: i
      integer(c_int), intent(out) :: locked
      integer(c_int) :: status
    end function cncVariableIsLocked

    ! Row-wise assembly
    function cncCoefficient(j, value) result(status) bind(C, name="cncCoefficient")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: j
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncCoefficient
    function cncRightHandSide(value) result(status) bind(C, name="cncRightHandSide")
      import :: c_int, c_double
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncRightHandSide
    function cncMultiRightHandSide(k, value) result(status) bind(C, name="cncMultiRightHandSide")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: k
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncMultiRightHandSide
    function cncRowScaling(value) result(status) bind(C, name="cncRowScaling")
      import :: c_int, c_double
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncRowScaling

    ! Entry-wise assembly (0-based indices)
    function cncAddIJCoefficient(i, j, value) result(status) bind(C, name="cncAddIJCoefficient")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i, j
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncAddIJCoefficient
    function cncAddIRightHandSide(i, value) result(status) bind(C, name="cncAddIRightHandSide")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncAddIRightHandSide
    function cncMultiAddIRightHandSide(i, k, value) result(status) &
        bind(C, name="cncMultiAddIRightHandSide")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i, k
      real(c_double), value :: value
      integer(c_int) :: status
    end function cncMultiAddIRightHandSide

    ! Pattern-first assembly (0-based rows, offsets and slot indices)
    function cncSetRowLength(i, length) result(status) bind(C, name="cncSetRowLength")
      import :: c_int, c_int32_t
      integer(c_int32_t), value :: i, length
      integer(c_int) :: status
    end function cncSetRowLength
    function cncSetRowLengths(lengths) result(status) bind(C, name="cncSetRowLengths")
      import :: c_int, c_int32_t
      integer(c_int32_t), intent(in) :: lengths(*)
      integer(c_int) :: status
    end function cncSetRowLengths
    function cncSetIJCoefficientAtRowOffset(i, j, value, offset) result(status) &
        bind(C, name="cncSetIJCoefficientAtRowOffset")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: i, j
      real(c_double), value :: value
      integer(c_int32_t), value :: offset
      integer(c_int) :: status
    end function cncSetIJCoefficientAtRowOffset
    function cncAddIJCoefficientAt(i, j, value, index) result(status) &
        bind(C, name="cncAddIJCoefficientAt")
      import :: c_int, c_int32_t, c_int64_t, c_double
      integer(c_int32_t), value :: i, j
      real(c_double), value :: value
      integer(c_int64_t), value :: index
      integer(c_int) :: status
    end function cncAddIJCoefficientAt

    ! Solving
    function cncSolve() result(status) bind(C, name="cncSolve")
      import :: c_int
      integer(c_int) :: status
    end function cncSolve
    ! row_ptr(n+1), col_idx(nnz), values(nnz), b(n*nrhs), x(n*nrhs); base 1 for Fortran arrays.
    function cncSolveCSR(n, row_ptr, col_idx, values, base, nrhs, b, x) result(status) &
        bind(C, name="cncSolveCSR")
      import :: c_int, c_int32_t, c_int64_t, c_double
      integer(c_int32_t), value :: n
      integer(c_int64_t), intent(in) :: row_ptr(*)
      integer(c_int32_t), intent(in) :: col_idx(*)
      real(c_double), intent(in) :: values(*)
      integer(c_int32_t), value :: base
      integer(c_int32_t), value :: nrhs
      real(c_double), intent(in) :: b(*)
      real(c_double), intent(inout) :: x(*)
      integer(c_int) :: status
    end function cncSolveCSR
    ! Complex A, b and x: complex(c_double_complex) is the (re, im) pair cnc.h reads.
    function cncSolveCSRComplex(n, row_ptr, col_idx, values, base, nrhs, b, x) result(status) &
        bind(C, name="cncSolveCSRComplex")
      import :: c_int, c_int32_t, c_int64_t, c_double_complex
      integer(c_int32_t), value :: n
      integer(c_int64_t), intent(in) :: row_ptr(*)
      integer(c_int32_t), intent(in) :: col_idx(*)
      complex(c_double_complex), intent(in) :: values(*)
      integer(c_int32_t), value :: base
      integer(c_int32_t), value :: nrhs
      complex(c_double_complex), intent(in) :: b(*)
      complex(c_double_complex), intent(inout) :: x(*)
      integer(c_int) :: status
    end function cncSolveCSRComplex
    ! The eigen solver (ARPACK): K's CSR as cncSolveCSR's; M's three arrays as c_loc(...) or
    ! c_null_ptr (M = I); eigenvalues(nev), eigenvectors(n*nev).
    function cncEigenSolveCSR(n, k_row_ptr, k_col_idx, k_values, m_row_ptr, m_col_idx, m_values, &
                              base, nev, which, sigma, eigenvalues, eigenvectors) result(status) &
        bind(C, name="cncEigenSolveCSR")
      import :: c_int, c_int32_t, c_int64_t, c_double, c_ptr
      integer(c_int32_t), value :: n
      integer(c_int64_t), intent(in) :: k_row_ptr(*)
      integer(c_int32_t), intent(in) :: k_col_idx(*)
      real(c_double), intent(in) :: k_values(*)
      type(c_ptr), value :: m_row_ptr, m_col_idx, m_values
      integer(c_int32_t), value :: base, nev
      integer(c_int), value :: which
      real(c_double), value :: sigma
      real(c_double), intent(out) :: eigenvalues(*), eigenvectors(*)
      integer(c_int) :: status
    end function cncEigenSolveCSR
    function cncEigenSolverAvailable() result(available) bind(C, name="cncEigenSolverAvailable")
      import :: c_int
      integer(c_int) :: available
    end function cncEigenSolverAvailable
    ! The same with every array in CUDA device memory (CUDA Fortran, OpenACC/OpenMP device
    ! pointers): addresses passed as c_ptr.
    function cncSolveCSRDevice(n, row_ptr, col_idx, values, base, nrhs, b, x) result(status) &
        bind(C, name="cncSolveCSRDevice")
      import :: c_int, c_int32_t, c_ptr
      integer(c_int32_t), value :: n
      type(c_ptr), value :: row_ptr, col_idx, values
      integer(c_int32_t), value :: base
      integer(c_int32_t), value :: nrhs
      type(c_ptr), value :: b, x
      integer(c_int) :: status
    end function cncSolveCSRDevice
    ! Matrix-free solves: the caller's y = A x (CNC_OPERATOR_MATRIX) or y = M^-1 x
    ! (CNC_OPERATOR_PRECONDITIONER), c_funloc(a cnc_operator) or c_null_funptr to clear.
    function cncSetOperator(which, op, user_data) result(status) bind(C, name="cncSetOperator")
      import :: c_int, c_funptr, c_ptr
      integer(c_int), value :: which
      type(c_funptr), value :: op
      type(c_ptr), value :: user_data
      integer(c_int) :: status
    end function cncSetOperator
    function cncSolveOperator(n, nrhs, b, x) result(status) bind(C, name="cncSolveOperator")
      import :: c_int, c_int32_t, c_double
      integer(c_int32_t), value :: n, nrhs
      real(c_double), intent(in) :: b(*)
      real(c_double), intent(inout) :: x(*)
      integer(c_int) :: status
    end function cncSolveOperator
    ! Memory: the host and device bytes a solve of n rows and nnz entries will need.
    function cncEstimateMemory(n, nnz, host_bytes, device_bytes) result(status) &
        bind(C, name="cncEstimateMemory")
      import :: c_int, c_int32_t, c_int64_t
      integer(c_int32_t), value :: n
      integer(c_int64_t), value :: nnz
      integer(c_int64_t), intent(out) :: host_bytes, device_bytes
      integer(c_int) :: status
    end function cncEstimateMemory

    ! Errors, callbacks, version
    function cncGetError() result(status) bind(C, name="cncGetError")
      import :: c_int
      integer(c_int) :: status
    end function cncGetError
    function c_cncGetErrorMessage() result(message) bind(C, name="cncGetErrorMessage")
      import :: c_ptr
      type(c_ptr) :: message
    end function c_cncGetErrorMessage
    function c_cncGetLastErrorMessage() result(message) bind(C, name="cncGetLastErrorMessage")
      import :: c_ptr
      type(c_ptr) :: message
    end function c_cncGetLastErrorMessage
    function cncClearError() result(status) bind(C, name="cncClearError")
      import :: c_int
      integer(c_int) :: status
    end function cncClearError
    function c_cncStatusString(status) result(text) bind(C, name="cncStatusString")
      import :: c_int, c_ptr
      integer(c_int), value :: status
      type(c_ptr) :: text
    end function c_cncStatusString
    function cncSetLogCallback(callback, user_data) result(status) &
        bind(C, name="cncSetLogCallback")
      import :: c_int, c_funptr, c_ptr
      type(c_funptr), value :: callback  ! c_funloc(a cnc_log_callback), or c_null_funptr
      type(c_ptr), value :: user_data
      integer(c_int) :: status
    end function cncSetLogCallback
    function cncSetProgressCallback(callback, user_data) result(status) &
        bind(C, name="cncSetProgressCallback")
      import :: c_int, c_funptr, c_ptr
      type(c_funptr), value :: callback  ! c_funloc(a cnc_progress_callback), or c_null_funptr
      type(c_ptr), value :: user_data
      integer(c_int) :: status
    end function cncSetProgressCallback
    ! Inside the progress callback only: the current iterate (n x nb_systems values, cnc.h).
    function cncGetCurrentIterate(x) result(status) bind(C, name="cncGetCurrentIterate")
      import :: c_int, c_double
      real(c_double), intent(out) :: x(*)
      integer(c_int) :: status
    end function cncGetCurrentIterate
    subroutine cncGetVersion(major, minor, patch) bind(C, name="cncGetVersion")
      import :: c_int
      integer(c_int), intent(out) :: major, minor, patch
    end subroutine cncGetVersion
    function c_cncVersionString() result(text) bind(C, name="cncVersionString")
      import :: c_ptr
      type(c_ptr) :: text
    end function c_cncVersionString
    function cncBackendAvailable(backend) result(available) bind(C, name="cncBackendAvailable")
      import :: c_int
      integer(c_int), value :: backend
      integer(c_int) :: available
    end function cncBackendAvailable

    ! libc, to measure C strings
    function c_strlen(s) result(length) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: length
    end function c_strlen
  end interface

  !> cnc_solve_csr(row_ptr, col_idx, values, b, x): 1-based CSR, n = size(row_ptr) - 1, b and x
  !> of shape (n) or (n, nrhs), row_ptr 32- or 64-bit; x is the initial guess on input.
  interface cnc_solve_csr
    module procedure solve_csr_i64_1, solve_csr_i64_2, solve_csr_i32_1, solve_csr_i32_2
    module procedure solve_csr_z64_1, solve_csr_z64_2, solve_csr_z32_1, solve_csr_z32_2
  end interface cnc_solve_csr

contains

  ! A C string (NULL gives "") copied into an allocatable Fortran string.
  function to_fortran_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, length
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    length = int(c_strlen(p))
    call c_f_pointer(p, chars, [length])
    allocate (character(len=length) :: s)
    do i = 1, length
      s(i:i) = chars(i)
    end do
  end function to_fortran_string

  !> Message of the first error of the current context ("" if none).
  function cncGetErrorMessage() result(message)
    character(len=:), allocatable :: message
    message = to_fortran_string(c_cncGetErrorMessage())
  end function cncGetErrorMessage

  !> Message of the most recent failed call on the current context ("" if none).
  function cncGetLastErrorMessage() result(message)
    character(len=:), allocatable :: message
    message = to_fortran_string(c_cncGetLastErrorMessage())
  end function cncGetLastErrorMessage

  !> Short English text of a status code.
  function cncStatusString(status) result(text)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: text
    text = to_fortran_string(c_cncStatusString(status))
  end function cncStatusString

  !> Version string of the library actually loaded, e.g. "0.1.0".
  function cncVersionString() result(text)
    character(len=:), allocatable :: text
    text = to_fortran_string(c_cncVersionString())
  end function cncVersionString

  !> Reads a string parameter (CNC_BACKEND_NAME, CNC_REASON_NAME, ...).
  function cncGetString(pname, value) result(status)
    integer(c_int), intent(in) :: pname
    character(len=:), allocatable, intent(out) :: value
    integer(c_int) :: status
    type(c_ptr) :: p
    status = c_cncGetString(pname, p)
    if (status == CNC_OK) then
      value = to_fortran_string(p)
    else
      value = ''
    end if
  end function cncGetString

  function solve_csr_i64_1(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int64_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    real(c_double), intent(in) :: values(:), b(:)
    real(c_double), intent(inout) :: x(:)
    integer(c_int) :: status
    integer(c_int32_t) :: n
    n = int(size(row_ptr) - 1, c_int32_t)
    if (n < 0 .or. size(b) /= n .or. size(x) /= n .or. size(values) < size(col_idx)) then
      status = CNC_ERR_SIZE_MISMATCH
      return
    end if
    status = cncSolveCSR(n, row_ptr, col_idx, values, 1_c_int32_t, 1_c_int32_t, b, x)
  end function solve_csr_i64_1

  function solve_csr_i64_2(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int64_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    real(c_double), intent(in) :: values(:), b(:, :)
    real(c_double), intent(inout) :: x(:, :)
    integer(c_int) :: status
    integer(c_int32_t) :: n
    n = int(size(row_ptr) - 1, c_int32_t)
    if (n < 0 .or. size(b, 1) /= n .or. any(shape(x) /= shape(b)) .or. &
        size(values) < size(col_idx)) then
      status = CNC_ERR_SIZE_MISMATCH
      return
    end if
    ! Column-major b(n, nrhs) is cnc's layout: system k at offset k*n.
    status = cncSolveCSR(n, row_ptr, col_idx, values, 1_c_int32_t, &
                         int(size(b, 2), c_int32_t), b, x)
  end function solve_csr_i64_2

  function solve_csr_i32_1(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int32_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    real(c_double), intent(in) :: values(:), b(:)
    real(c_double), intent(inout) :: x(:)
    integer(c_int) :: status
    status = solve_csr_i64_1(int(row_ptr, c_int64_t), col_idx, values, b, x)
  end function solve_csr_i32_1

  function solve_csr_i32_2(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int32_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    real(c_double), intent(in) :: values(:), b(:, :)
    real(c_double), intent(inout) :: x(:, :)
    integer(c_int) :: status
    status = solve_csr_i64_2(int(row_ptr, c_int64_t), col_idx, values, b, x)
  end function solve_csr_i32_2

  ! The same for complex systems (cncSolveCSRComplex).
  function solve_csr_z64_1(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int64_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    complex(c_double_complex), intent(in) :: values(:), b(:)
    complex(c_double_complex), intent(inout) :: x(:)
    integer(c_int) :: status
    integer(c_int32_t) :: n
    n = int(size(row_ptr) - 1, c_int32_t)
    if (n < 0 .or. size(b) /= n .or. size(x) /= n .or. size(values) < size(col_idx)) then
      status = CNC_ERR_SIZE_MISMATCH
      return
    end if
    status = cncSolveCSRComplex(n, row_ptr, col_idx, values, 1_c_int32_t, 1_c_int32_t, b, x)
  end function solve_csr_z64_1

  function solve_csr_z64_2(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int64_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    complex(c_double_complex), intent(in) :: values(:), b(:, :)
    complex(c_double_complex), intent(inout) :: x(:, :)
    integer(c_int) :: status
    integer(c_int32_t) :: n
    n = int(size(row_ptr) - 1, c_int32_t)
    if (n < 0 .or. size(b, 1) /= n .or. any(shape(x) /= shape(b)) .or. &
        size(values) < size(col_idx)) then
      status = CNC_ERR_SIZE_MISMATCH
      return
    end if
    status = cncSolveCSRComplex(n, row_ptr, col_idx, values, 1_c_int32_t, &
                                int(size(b, 2), c_int32_t), b, x)
  end function solve_csr_z64_2

  function solve_csr_z32_1(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int32_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    complex(c_double_complex), intent(in) :: values(:), b(:)
    complex(c_double_complex), intent(inout) :: x(:)
    integer(c_int) :: status
    status = solve_csr_z64_1(int(row_ptr, c_int64_t), col_idx, values, b, x)
  end function solve_csr_z32_1

  function solve_csr_z32_2(row_ptr, col_idx, values, b, x) result(status)
    integer(c_int32_t), intent(in) :: row_ptr(:)
    integer(c_int32_t), intent(in) :: col_idx(:)
    complex(c_double_complex), intent(in) :: values(:), b(:, :)
    complex(c_double_complex), intent(inout) :: x(:, :)
    integer(c_int) :: status
    status = solve_csr_z64_2(int(row_ptr, c_int64_t), col_idx, values, b, x)
  end function solve_csr_z32_2

end module cnc
