"""Column access to dense and sparse matrices, shared by every kernel."""
import numpy as np
import scipy.sparse as sp
from scipy.linalg.cython_blas cimport ddot, daxpy, dgemv


cdef class Matrix:

    def __cinit__(self, A, bint need_rows=False):
        keep = [A]
        if sp.issparse(A):
            # A is a canonical float64 CSC matrix with int32 indices (the
            # Python layer guarantees it; nothing here modifies it).
            self.dense = False
            self.n_rows, self.n_cols = A.shape
            self.indptr = A.indptr
            self.indices = A.indices
            self.values = A.data
            if need_rows:
                R = A.tocsr()
                R.sort_indices()
                r_indptr = R.indptr.astype(np.int32, copy=False)
                r_indices = R.indices.astype(np.int32, copy=False)
                keep += [R, r_indptr, r_indices]
                self.r_indptr = r_indptr
                self.r_indices = r_indices
                self.r_values = R.data
                self.has_rows = True
        else:
            self.dense = True
            self.n_rows, self.n_cols = A.shape
            flat = A.ravel(order="F")      # a view: A is Fortran-contiguous
            keep.append(flat)
            self.values = flat
            self.has_rows = need_rows      # dense rows come from the same buffer
        self._keep = keep

    def col_sqnorms(self):
        """Squared Euclidean norm of every column."""
        out = np.empty(self.n_cols)
        cdef double[::1] o = out
        cdef Py_ssize_t j
        with nogil:
            for j in range(self.n_cols):
                o[j] = self.col_sqnorm(j)
        return out

    cdef Py_ssize_t col_nnz(self, Py_ssize_t j) noexcept nogil:
        if self.dense:
            return self.n_rows
        return self.indptr[j + 1] - self.indptr[j]

    cdef double col_dot(self, Py_ssize_t j, const double* v) noexcept nogil:
        """Return A[:, j] @ v."""
        cdef Py_ssize_t p, start, end
        cdef double s = 0.0
        cdef int m, inc = 1
        if self.dense:
            m = <int>self.n_rows
            # np.dot(A[:, j], v)
            return ddot(&m, <double*>&self.values[j * self.n_rows], &inc, <double*>v, &inc)
        start = self.indptr[j]
        end = self.indptr[j + 1]
        for p in range(start, end):
            s += self.values[p] * v[self.indices[p]]
        return s

    cdef void col_axpy(self, Py_ssize_t j, double alpha, double* v) noexcept nogil:
        """v += alpha * A[:, j]."""
        cdef Py_ssize_t p, start, end
        cdef int m, inc = 1
        if self.dense:
            m = <int>self.n_rows
            # v += alpha * A[:, j]
            daxpy(&m, &alpha, <double*>&self.values[j * self.n_rows], &inc, v, &inc)
            return
        start = self.indptr[j]
        end = self.indptr[j + 1]
        for p in range(start, end):
            v[self.indices[p]] += alpha * self.values[p]

    cdef double col_sqnorm(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t p, start, end
        cdef double s = 0.0
        if self.dense:
            start = j * self.n_rows
            end = start + self.n_rows
        else:
            start = self.indptr[j]
            end = self.indptr[j + 1]
        for p in range(start, end):
            s += self.values[p] * self.values[p]
        return s

    cdef void matvec(self, const double* x, double* out) noexcept nogil:
        """out = A @ x."""
        cdef Py_ssize_t i, j
        cdef int m, n, inc = 1
        cdef double one = 1.0, zero = 0.0
        cdef char trans = b'N'
        if self.dense:
            m = <int>self.n_rows
            n = <int>self.n_cols
            # out = A @ x
            dgemv(&trans, &m, &n, &one, <double*>&self.values[0], &m, <double*>x, &inc,
                  &zero, out, &inc)
            return
        for i in range(self.n_rows):
            out[i] = 0.0
        for j in range(self.n_cols):
            if x[j] != 0.0:
                self.col_axpy(j, x[j], out)

    cdef void rmatvec(self, const double* w, double* out) noexcept nogil:
        """out = A.T @ w."""
        cdef Py_ssize_t j
        cdef int m, n, inc = 1
        cdef double one = 1.0, zero = 0.0
        cdef char trans = b'T'
        if self.dense:
            m = <int>self.n_rows
            n = <int>self.n_cols
            # out = A.T @ w
            dgemv(&trans, &m, &n, &one, <double*>&self.values[0], &m, <double*>w, &inc,
                  &zero, out, &inc)
            return
        for j in range(self.n_cols):
            out[j] = self.col_dot(j, w)

    cdef void gram(self, const int* cols, Py_ssize_t nb, double* G, double* work) noexcept nogil:
        """G (nb x nb, row-major) = A[:, cols].T @ A[:, cols].

        ``work`` is a zeroed buffer of length n_rows; it is zero again on
        return.  Cost O(nb^2 * nnz per column).
        """
        cdef Py_ssize_t a, b, p, start, end
        cdef double s
        for a in range(nb):
            G[a * nb + a] = self.col_sqnorm(cols[a])
            if a + 1 == nb:
                break
            if self.dense:
                for b in range(a + 1, nb):
                    s = self.col_dot(cols[b], &self.values[cols[a] * self.n_rows])
                    G[a * nb + b] = s
                    G[b * nb + a] = s
                continue
            start = self.indptr[cols[a]]
            end = self.indptr[cols[a] + 1]
            for p in range(start, end):
                work[self.indices[p]] = self.values[p]
            for b in range(a + 1, nb):
                s = self.col_dot(cols[b], work)
                G[a * nb + b] = s
                G[b * nb + a] = s
            for p in range(start, end):
                work[self.indices[p]] = 0.0
