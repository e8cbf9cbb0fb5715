cimport cython


@cython.final
cdef class CyMatrix:
    """Column access to a dense Fortran-ordered or CSC sparse matrix.

    A dense matrix is handled as a CSC matrix whose row index is implicit, so
    every compiled problem reads columns through one set of primitives.
    The row-wise (CSR) view is built only when a caller asks for it: it makes
    incremental gradient updates cost the rows they touch.  Without it,
    A[rows].T @ v reads every column.
    """
    cdef readonly Py_ssize_t n_rows, n_cols
    cdef readonly bint dense
    cdef readonly bint has_rows
    # CSC arrays (dense: values is the Fortran buffer, indices is empty)
    cdef const int[::1] indptr
    cdef const int[::1] indices
    cdef const double[::1] values
    # CSR arrays, present when has_rows (dense: unused, A itself is used)
    cdef const int[::1] r_indptr
    cdef const int[::1] r_indices
    cdef const double[::1] r_values
    # sparse without the row view: a dense row-length scratch for A.T products
    cdef object _keep   # Python references that own the buffers

    cdef inline void col_range(self, Py_ssize_t j, Py_ssize_t* start, Py_ssize_t* end) noexcept nogil:
        """Positions of column j in ``values``; its rows are ``row(p, start)``."""
        if self.dense:
            start[0] = j * self.n_rows
            end[0] = start[0] + self.n_rows
        else:
            start[0] = self.indptr[j]
            end[0] = self.indptr[j + 1]

    cdef inline Py_ssize_t row(self, Py_ssize_t p, Py_ssize_t start) noexcept nogil:
        return p - start if self.dense else self.indices[p]

    cdef Py_ssize_t col_nnz(self, Py_ssize_t j) noexcept nogil
    cdef double col_dot(self, Py_ssize_t j, const double* v) noexcept nogil
    cdef void col_axpy(self, Py_ssize_t j, double alpha, double* v) noexcept nogil
    cdef double col_sqnorm(self, Py_ssize_t j) noexcept nogil
    cdef void matvec(self, const double* x, double* out) noexcept nogil
    cdef void rmatvec(self, const double* w, double* out) noexcept nogil
    cdef void gram(self, const int* cols, Py_ssize_t nb, const double* row_weight, double* G,
                   double* work) noexcept nogil
    cdef Py_ssize_t combine_columns(self, const int* cols, Py_ssize_t nb, const double* d,
                                    int* rows, unsigned char* mark, double* acc,
                                    double* out) noexcept nogil
    cdef void rows_rmatvec_add(self, const int* rows, const double* vals, Py_ssize_t nr,
                               double* out) noexcept nogil
