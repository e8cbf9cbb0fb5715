# Compiled evaluation of stationary covariance functions.

cdef class CyKernelEvaluator:
    """k(x1_i, x2_j) between the rows of two input matrices.

    The kernel is a sum of terms, each a product of factors of one of the
    base kinds; every factor depends on a (possibly length-scaled) squared
    distance.  Inputs are stored once per distinct scaling, transposed
    (dimension-major) so that a tile of rows is read contiguously.
    """
    cdef readonly Py_ssize_t n1, n2, dim, n_metrics
    cdef readonly int n_threads
    cdef readonly double diag_value          # k(x, x), the same for every x
    cdef const double[:, :, ::1] X1          # (metric, dim, n1)
    cdef const double[:, :, ::1] X2          # (metric, dim, n2)
    cdef const double[:, :, ::1] R1          # (metric, n1, dim): single entries
    cdef const double[:, :, ::1] R2          # (metric, n2, dim)
    cdef const int[::1] term_ptr             # factors of term t: term_ptr[t]:term_ptr[t+1]
    cdef const double[::1] term_coef         # product of the factors' variances
    cdef const int[::1] f_code
    cdef const int[::1] f_metric
    cdef const double[::1] f_inv_l2          # 1 / lengthscale^2 (periodic kinds)
    cdef const double[::1] f_freq            # pi / period (periodic kinds)
    cdef object _keep

    cdef void tile(self, Py_ssize_t j, Py_ssize_t i0, Py_ssize_t i1, double* sq,
                   double* out) noexcept nogil
    cdef void combine(self, double* sq, Py_ssize_t w, double* out) noexcept nogil
    cdef void gather(self, const int* cols, Py_ssize_t nc, double* G, Py_ssize_t ldg) noexcept nogil
    cdef void entries_gathered(self, const int* rows, Py_ssize_t nr, const double* G,
                               Py_ssize_t ldg, Py_ssize_t nc, double* out) noexcept nogil
    cdef int threads_for(self, Py_ssize_t work) noexcept nogil
    cdef double pair(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef void gemv_cols(self, const int* cols, const double* w, Py_ssize_t m,
                        double* out) noexcept nogil
    cdef void columns(self, const int* cols, Py_ssize_t m, double* out) noexcept nogil
    cdef void columns_to(self, const int* cols, Py_ssize_t m, double* base,
                         const int* slot) noexcept nogil
    cdef void entries(self, const int* rows, Py_ssize_t nr, const int* cols, Py_ssize_t nc,
                      double* out) noexcept nogil
