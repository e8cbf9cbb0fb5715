"""Column access to dense and sparse matrices, shared by every compiled problem."""
import numpy as np
import scipy.sparse as sp
from libc.math cimport fabs, sqrt, NAN
from libc.stdlib cimport calloc, malloc, free
from scipy.linalg.cython_blas cimport ddot, daxpy, dgemv, dsyrk

#: the smallest block whose dense Gram matrix is formed by one BLAS call
cdef Py_ssize_t GRAM_BLAS = 8
#: doubles in one row panel of the dense weighted Gram matrix (2 MiB)
cdef Py_ssize_t GRAM_PANEL = 262144


cdef bint _dense_gram(const double* values, Py_ssize_t m, const int* cols, Py_ssize_t nb,
                      const double* row_weight, double* G) noexcept nogil:
    """G = A[:, cols].T diag(w) A[:, cols] for a dense column-major A with
    non-negative weights w, by one BLAS rank-k update of the gathered,
    sqrt(w)-scaled columns; False (G untouched) when a weight is negative or
    the scratch cannot be allocated."""
    cdef Py_ssize_t a, b, i, j
    cdef double* B
    cdef double* col
    cdef double one = 1.0, zero = 0.0
    cdef int n_ = <int>nb, k_ = <int>m
    cdef char uplo = b'U', trans = b'T'
    cdef int lo = cols[0], hi = cols[0]
    if row_weight == NULL:
        for a in range(nb):
            lo = cols[a] if cols[a] < lo else lo
            hi = cols[a] if cols[a] > hi else hi
        if hi - lo + 1 == nb:
            # the columns are a range (in any order): no copy of them, the
            # Gram matrix of the range reordered into the block's order
            B = <double*>malloc(nb * nb * sizeof(double))
            if B == NULL:
                return False
            # B = A[:, lo:hi+1].T @ A[:, lo:hi+1] (upper triangle, column-major)
            dsyrk(&uplo, &trans, &n_, &k_, &one, <double*>values + <Py_ssize_t>lo * m, &k_,
                  &zero, B, &n_)
            for a in range(nb):
                i = cols[a] - lo
                for b in range(nb):
                    j = cols[b] - lo
                    G[a * nb + b] = B[i + j * nb] if i <= j else B[j + i * nb]
            free(B)
            return True
    else:
        for i in range(m):
            if not (row_weight[i] >= 0.0):
                return False
    # panels of rows small enough to stay in cache between the gather and
    # the rank-k update: A is read once, and the scratch is O(nb) panels
    # rather than an m x nb copy (whose fresh pages cost more than the update)
    cdef Py_ssize_t rows = GRAM_PANEL // nb
    if rows < 64:
        rows = 64
    if rows > m:
        rows = m
    B = <double*>malloc((rows * nb + rows) * sizeof(double))
    if B == NULL:
        return False
    cdef double* root = B + rows * nb
    cdef double* dst
    cdef Py_ssize_t top = 0, h
    cdef double beta = 0.0
    cdef int h_
    while top < m:
        h = rows if top + rows <= m else m - top
        h_ = <int>h
        if row_weight != NULL:
            for i in range(h):
                root[i] = sqrt(row_weight[top + i])
        for a in range(nb):
            col = <double*>values + <Py_ssize_t>cols[a] * m + top
            dst = B + a * h
            if row_weight == NULL:
                for i in range(h):
                    dst[i] = col[i]
            else:
                for i in range(h):
                    dst[i] = col[i] * root[i]
        # G (+)= B.T @ B (upper triangle, column-major)
        dsyrk(&uplo, &trans, &n_, &h_, &one, B, &h_, &beta, G, &n_)
        beta = 1.0
        top += h
    free(B)
    if m == 0:
        for a in range(nb * nb):
            G[a] = 0.0
    for b in range(nb):
        for a in range(b):
            G[b + a * nb] = G[a + b * nb]
    return True


cdef class CyMatrix:

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

    def gram_abs_row_sums(self):
        """sum_j |A[:, i] . A[:, j]| for every column i, without forming A.T A.

        Sparse matrices need the row view; the cost is sum over rows of
        nnz(row)^2.  Dense matrices are processed in column chunks.
        """
        cdef double[::1] o, acc
        cdef unsigned char[::1] mark
        cdef int[::1] lst
        cdef Py_ssize_t i, p, q, r, c, nt, k
        cdef double v, s
        if self.dense:
            A = np.asarray(self.values).reshape(self.n_cols, self.n_rows).T
            out = np.empty(self.n_cols)
            chunk = max(1, 2**22 // max(1, self.n_cols))
            for start in range(0, self.n_cols, chunk):
                out[start:start + chunk] = np.abs(A[:, start:start + chunk].T @ A).sum(axis=1)
            return out
        if not self.has_rows:
            raise ValueError("the row view of A is needed")
        out = np.zeros(self.n_cols)
        acc_arr = np.zeros(self.n_cols)
        mark_arr = np.zeros(self.n_cols, dtype=np.uint8)
        list_arr = np.zeros(self.n_cols, dtype=np.int32)
        o = out
        acc = acc_arr
        mark = mark_arr
        lst = list_arr
        with nogil:
            for i in range(self.n_cols):
                nt = 0
                for p in range(self.indptr[i], self.indptr[i + 1]):
                    r = self.indices[p]
                    v = self.values[p]
                    for q in range(self.r_indptr[r], self.r_indptr[r + 1]):
                        c = self.r_indices[q]
                        if not mark[c]:
                            mark[c] = 1
                            lst[nt] = <int>c
                            nt += 1
                        acc[c] += v * self.r_values[q]
                s = 0.0
                for k in range(nt):
                    c = lst[k]
                    s += fabs(acc[c])
                    acc[c] = 0.0
                    mark[c] = 0
                o[i] = s
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
        cdef const int* ind = &self.indices[0]
        cdef const double* val = &self.values[0]
        # four partial sums break the chain of dependent additions
        cdef double s1 = 0.0, s2 = 0.0, s3 = 0.0
        p = start
        while p + 4 <= end:
            s += val[p] * v[ind[p]]
            s1 += val[p + 1] * v[ind[p + 1]]
            s2 += val[p + 2] * v[ind[p + 2]]
            s3 += val[p + 3] * v[ind[p + 3]]
            p += 4
        while p < end:
            s += val[p] * v[ind[p]]
            p += 1
        return (s + s1) + (s2 + s3)

    cdef void col_axpy(self, Py_ssize_t j, double alpha, double* v) noexcept nogil:
        """v += alpha * A[:, j]."""
        cdef Py_ssize_t p, start, end
        cdef int m, inc = 1
        cdef const int* ind
        cdef const double* val
        if self.dense:
            m = <int>self.n_rows
            # v += alpha * A[:, j]
            daxpy(&m, &alpha, <double*>&self.values[j * self.n_rows], &inc, v, &inc)
            return
        start = self.indptr[j]
        end = self.indptr[j + 1]
        ind = &self.indices[0]
        val = &self.values[0]
        for p in range(start, end):
            v[ind[p]] += alpha * val[p]

    cdef double col_sqnorm(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t p, start, end
        cdef double s = 0.0
        self.col_range(j, &start, &end)
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

    cdef void gram(self, const int* cols, Py_ssize_t nb, const double* row_weight, double* G,
                   double* work) noexcept nogil:
        """G (nb x nb, row-major) = A[:, cols].T @ diag(row_weight) @ A[:, cols].

        ``row_weight`` may be NULL (unweighted).  ``work`` is a zeroed buffer
        of length n_rows and is zero again on return.  Cost O(nb^2 * nnz per
        column).
        """
        cdef Py_ssize_t a, b, p, i, start, end
        cdef double s
        if self.dense and nb >= GRAM_BLAS and _dense_gram(
                &self.values[0], self.n_rows, cols, nb, row_weight, G):
            return
        for a in range(nb):
            self.col_range(cols[a], &start, &end)
            # scatter the (weighted) column a into work
            for p in range(start, end):
                i = self.row(p, start)
                work[i] = self.values[p] * (row_weight[i] if row_weight != NULL else 1.0)
            for b in range(a, nb):
                s = self.col_dot(cols[b], work)
                G[a * nb + b] = s
                G[b * nb + a] = s
            for p in range(start, end):
                work[self.row(p, start)] = 0.0

    cdef Py_ssize_t combine_columns(self, const int* cols, Py_ssize_t nb, const double* d,
                                    int* rows, unsigned char* mark, double* acc,
                                    double* out) noexcept nogil:
        """Compute A[:, cols] @ d on the rows it touches.

        Sparse: the touched rows go to ``rows`` and the values, in the same
        order, to ``out``; returns their count.  ``mark`` and ``acc`` are
        zeroed buffers of length n_rows and are zero again on return.
        Dense: every row is touched; ``out`` (length n_rows) receives the
        product and ``rows`` is unused.
        """
        cdef Py_ssize_t a, p, i, k, nt = 0
        if self.dense:
            for i in range(self.n_rows):
                out[i] = 0.0
            for a in range(nb):
                if d[a] != 0.0:
                    self.col_axpy(cols[a], d[a], out)
            return self.n_rows
        cdef const int* ind = &self.indices[0]
        cdef const double* val = &self.values[0]
        for a in range(nb):
            if d[a] == 0.0:
                continue
            for p in range(self.indptr[cols[a]], self.indptr[cols[a] + 1]):
                i = ind[p]
                if not mark[i]:
                    mark[i] = 1
                    rows[nt] = <int>i
                    nt += 1
                acc[i] += d[a] * val[p]
        for k in range(nt):
            i = rows[k]
            out[k] = acc[i]
            acc[i] = 0.0
            mark[i] = 0
        return nt

    cdef void rows_rmatvec_add(self, const int* rows, const double* vals, Py_ssize_t nr,
                               double* out) noexcept nogil:
        """out += A[rows].T @ vals (rows NULL: every row, vals of length n_rows).

        Sparse matrices without the row view read every column (O(nnz)),
        which is what the row view costs too when the rows cover most of A."""
        cdef Py_ssize_t k, p, i, j
        cdef int m, n, inc = 1
        cdef double one = 1.0, v
        cdef char trans = b'T'
        cdef const double* src
        cdef double* buf = NULL
        if self.dense:
            m = <int>self.n_rows
            n = <int>self.n_cols
            # out += A.T @ vals
            dgemv(&trans, &m, &n, &one, <double*>&self.values[0], &m, <double*>vals, &inc,
                  &one, out, &inc)
            return
        if not self.has_rows:
            src = vals
            if rows != NULL:
                # the listed rows' values as a dense vector (zero elsewhere);
                # allocated per call (the O(nnz) pass dwarfs it) so that
                # solves sharing this matrix in several threads never share it
                buf = <double*>calloc(self.n_rows, sizeof(double))
                if buf == NULL:
                    # out of memory: poison the result, so that the solve
                    # stops as diverged instead of going on with a wrong one
                    for j in range(self.n_cols):
                        out[j] = NAN
                    return
                for k in range(nr):
                    buf[rows[k]] = vals[k]
                src = buf
            for j in range(self.n_cols):
                out[j] += self.col_dot(j, src)
            free(buf)
            return
        cdef const int* rptr = &self.r_indptr[0]
        cdef const int* rind = &self.r_indices[0]
        cdef const double* rval = &self.r_values[0]
        for k in range(nr):
            v = vals[k]
            if v == 0.0:
                continue
            i = rows[k]
            for p in range(rptr[i], rptr[i + 1]):
                out[rind[p]] += rval[p] * v
