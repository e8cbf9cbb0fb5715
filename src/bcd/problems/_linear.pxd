from bcd.core._problem cimport CyProblem
from bcd.core._matrix cimport CyMatrix


cdef class CyLinearModel(CyProblem):
    """f(x) = sum_i s_i phi(z_i; t_i) + 1/2 sum_j r_j x_j^2 with z = A x,
    sample weights s (all 1 unless ``weighted``) and ridge weights r.

    State kept up to date by every step: z = A x and w = s phi'(z), so
    grad f = A.T w + r x.  A step on block b changes z on the rows of the
    columns in b only; with gradient tracking the change of w on those rows
    is pushed to the gradient through the rows of A (its CSR view when
    built, otherwise by reading every column).
    """
    cdef CyMatrix A
    cdef const double[::1] sw                  # sample weights s, when weighted
    cdef readonly bint weighted
    cdef readonly double curvature            # sup phi''
    cdef const double[::1] target
    cdef double[::1] z                         # A x (least squares keeps only w)
    cdef double[::1] w                         # phi'(z)
    # the prepared direction
    cdef Py_ssize_t dir_nt
    cdef double[::1] dzc                       # A_b d on the touched rows
    cdef int[::1] touched
    # scratch
    cdef double[::1] acc
    cdef double[::1] dw
    cdef unsigned char[::1] row_mark
    cdef double[::1] colbuf
    cdef double[::1] rowbuf

    cdef void update_rows(self, const int* rows, const double* vals, Py_ssize_t nr,
                          double scale, double* dw_out) noexcept nogil
    cdef double dloss(self, double z, double t) noexcept nogil
    cdef void w_from_z(self) noexcept nogil
    cdef double data_loss(self) noexcept nogil
    cdef double rows_delta(self, double alpha) noexcept nogil
    cdef double curvature_at(self, Py_ssize_t i) noexcept nogil
    cdef void push_gradient(self, const int* rows, const double* dw, Py_ssize_t nr) noexcept nogil
