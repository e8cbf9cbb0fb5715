# Small dense symmetric linear algebra on block matrices (LAPACK).

cdef class CyBlockWork:
    """Scratch for |b| x |b| problems, sized once for the largest block."""
    cdef readonly Py_ssize_t size
    cdef double[::1] mat        # size^2: a copy of the matrix
    cdef double[::1] vecs       # size^2: eigenvectors
    cdef double[::1] vals       # size: eigenvalues
    cdef double[::1] tmp        # size
    cdef double[::1] work
    cdef int[::1] iwork

cdef inline double negative_pivot() noexcept nogil:
    """A pivot or eigenvalue below -negative_pivot() times the matrix's scale
    proves the matrix indefinite (it is not rounding of a PSD one)."""
    return 1e-8

cdef double lambda_max(CyBlockWork w, const double* H, Py_ssize_t n) noexcept nogil
cdef int spd_solve(CyBlockWork w, const double* H, double* b, Py_ssize_t n) noexcept nogil
cdef int cholesky_solve_in_place(double* H, double* b, Py_ssize_t n, double deadline,
                                 bint checks) noexcept nogil
cdef bint chol_append(double* R, Py_ssize_t ld, Py_ssize_t n, double* h, double d,
                      double tiny) noexcept nogil
cdef void chol_remove(double* R, Py_ssize_t ld, Py_ssize_t n, Py_ssize_t k) noexcept nogil
cdef void chol_solve(const double* R, Py_ssize_t ld, Py_ssize_t n, double* b) noexcept nogil
