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

cdef double lambda_max(CyBlockWork w, const double* H, Py_ssize_t n) noexcept nogil
cdef int spd_solve(CyBlockWork w, const double* H, double* b, Py_ssize_t n) noexcept nogil
