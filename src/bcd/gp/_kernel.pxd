# Compiled evaluation of covariance functions.

cdef class CyKernelEvaluator:
    """k(x1_i, x2_j) between the rows of two input matrices.

    The kernel is a sum of terms, each a product of factors of one of the
    base kinds; every factor depends on one "metric" of a pair of inputs: a
    (possibly length-scaled) squared distance, a weighted Hamming distance or
    a histogram intersection.  Inputs are stored once per distinct scaling, transposed
    (dimension-major) so that a tile of rows is read contiguously.
    """
    cdef readonly Py_ssize_t n1, n2, dim, n_metrics
    cdef readonly int n_threads
    cdef readonly double diag_value          # sum of the terms' variances: k(x, x) if stationary
    cdef bint single_se                      # one squared-exponential factor: fused loop
    cdef readonly bint symmetric             # X2 is X1 (the kernel of one set of inputs)
    cdef const double[:, :, ::1] X1          # (metric, dim, n1)
    cdef const double[:, :, ::1] X2          # (metric, dim, n2)
    cdef const double[:, :, ::1] R1          # (metric, n1, dim): single entries
    cdef const double[:, :, ::1] R2          # (metric, n2, dim)
    cdef const int[::1] term_ptr             # factors of term t: term_ptr[t]:term_ptr[t+1]
    cdef const double[::1] term_coef         # product of the factors' variances
    cdef const int[::1] f_code
    cdef const int[::1] f_metric
    # the factor's own parameters a, b, c (see kernels/kinds.h: for the
    # periodic kinds 1 / lengthscale^2, 1 / period and pi / period)
    cdef const double[::1] f_a
    cdef const double[::1] f_b
    cdef const double[::1] f_c
    cdef const int[::1] f_grad               # the form of its length-scale derivative (GRAD_*)
    cdef const int[::1] m_kind               # per metric: its kind (METRIC_*)
    cdef const double[:, ::1] m_weight       # per metric and dimension: Hamming weights
    # log-parameter derivatives (set_gradient_map): parameter index of each
    # factor's variance, length-scales (or Hamming weights) per dimension,
    # shape parameter (period, alpha)
    cdef const int[::1] g_var
    cdef const int[:, ::1] g_len
    cdef const int[::1] g_len1               # the index shared by every dimension, else -1
    cdef const int[::1] g_shape
    cdef readonly Py_ssize_t n_params
    cdef object _keep

    cdef void tile(self, Py_ssize_t j, Py_ssize_t i0, Py_ssize_t i1, double* sq,
                   double* out) noexcept nogil
    cdef void values(self, const double* G, Py_ssize_t gstride, Py_ssize_t ldg,
                     const double* z, Py_ssize_t zstride, Py_ssize_t w, double* sq,
                     double* out) noexcept nogil
    cdef void gather(self, const int* cols, Py_ssize_t nc, double* G, Py_ssize_t ldg) noexcept nogil
    cdef void entries_gathered(self, const int* rows, Py_ssize_t nr, const double* G,
                               Py_ssize_t ldg, Py_ssize_t nc, double* out) noexcept nogil
    cdef void entries_gathered_lower(self, const int* rows, Py_ssize_t nr, const double* G,
                                     Py_ssize_t ldg, double* out) noexcept nogil
    cdef void rows_gathered(self, const int* rows, Py_ssize_t nr, const double* G,
                            Py_ssize_t ldg, Py_ssize_t nc, double* sq,
                            double* out) noexcept nogil
    cdef int threads_for(self, Py_ssize_t work) noexcept nogil
    cdef double pair(self, Py_ssize_t i, Py_ssize_t j) noexcept nogil
    cdef double self_pair(self, Py_ssize_t i) noexcept nogil
    cdef double metric(self, Py_ssize_t m, const double* a, const double* b) noexcept nogil
    cdef double value(self, const double* sp) noexcept nogil
    cdef object _grad_run(self, const double* G, Py_ssize_t ldg, Py_ssize_t row0,
                          Py_ssize_t nr, const int* cols, Py_ssize_t nc, const double* Ut,
                          const double* V, Py_ssize_t rank, bint symmetric)
    cdef void grad_dims(self, Py_ssize_t f, Py_ssize_t i0, Py_ssize_t w, Py_ssize_t j,
                        const double* hv, double* g) noexcept nogil
    cdef void grad_tile(self, Py_ssize_t i0, Py_ssize_t i1, Py_ssize_t j, const double* gw,
                        double* scratch, double* g) noexcept nogil
    cdef void grad_pair(self, const double* a, Py_ssize_t sa, const double* b, Py_ssize_t sb,
                        double weight, double* sp, double* g) noexcept nogil
    cdef void gemv_cols(self, const int* cols, const double* w, Py_ssize_t m,
                        double* out) noexcept nogil
    cdef bint gemv_symmetric(self, const int* cols, const double* w, Py_ssize_t m,
                             const int* others, Py_ssize_t n_others,
                             double* out) noexcept nogil
    cdef bint _se_gemv(self, const int* cols, const double* w, Py_ssize_t m, double* out,
                       int nt) noexcept nogil
    cdef void columns(self, const int* cols, Py_ssize_t m, double* out) noexcept nogil
    cdef void columns_to(self, const int* cols, Py_ssize_t m, double* base,
                         const int* slot) noexcept nogil
    cdef void entries(self, const int* rows, Py_ssize_t nr, const int* cols, Py_ssize_t nc,
                      double* out) noexcept nogil
