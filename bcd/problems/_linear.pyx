"""Compiled kernels of the linear-model problems (least squares, logistic)."""
import numpy as np
from libc.math cimport exp, log1p, fabs
from scipy.linalg.cython_blas cimport dgemv
from scipy.linalg.cython_lapack cimport dsyevr

from bcd.core._problem cimport Problem
from bcd.core._matrix cimport Matrix


cdef class LinearModelKernel(Problem):

    def __init__(self, Matrix A, target, double l2, double curvature, lipschitz,
                 bint tracking, Py_ssize_t max_block=1):
        cdef Py_ssize_t m, n
        if tracking and not A.has_rows:
            raise ValueError("gradient tracking needs the row view of A")
        self.A = A
        m = self.A.n_rows
        n = self.A.n_cols
        Problem.__init__(self, n, lipschitz, tracking)
        self.l2 = l2
        self.curvature = curvature
        self.target = target
        self.z = np.zeros(m)
        self.w = np.zeros(m)
        self.dz = np.zeros(m)
        self.dw = np.zeros(m)
        self.touched = np.zeros(m, dtype=np.int32)
        self.row_mark = np.zeros(m, dtype=np.uint8)
        self.colbuf = np.zeros(m)
        self.reserve(max_block)
        with nogil:
            self.reset()

    def reserve(self, Py_ssize_t max_block):
        """Allocate the scratch needed for blocks of up to ``max_block``."""
        max_block = max(1, max_block)
        self.gram_buf = np.zeros(max_block * max_block + max_block * max_block + max_block)
        self.eig_work = np.zeros(26 * max_block + 1)
        self.eig_iwork = np.zeros(10 * max_block + 2 * max_block + 1, dtype=np.int32)

    # ---------------------------------------------------------------- state
    cdef void reset(self) noexcept nogil:
        self.A.matvec(&self.x[0], &self.z[0])
        self.w_from_z()
        if self.tracking:
            self.full_gradient(&self.g[0])
            self.all_dirty = True

    cdef void w_from_z(self) noexcept nogil:
        pass

    cdef double data_loss(self) noexcept nogil:
        return 0.0

    cdef void update_rows(self, const int* rows, const double* vals, Py_ssize_t nr,
                          double scale, double* dw_out) noexcept nogil:
        pass

    # -------------------------------------------------------------- oracles
    cdef double grad_coord(self, Py_ssize_t j) noexcept nogil:
        return self.A.col_dot(j, &self.w[0]) + self.l2 * self.x[j]

    cdef void full_gradient(self, double* out) noexcept nogil:
        cdef Py_ssize_t j
        self.A.rmatvec(&self.w[0], out)
        if self.l2 != 0.0:
            for j in range(self.n):
                out[j] += self.l2 * self.x[j]

    cdef double objective(self) noexcept nogil:
        cdef Py_ssize_t j
        cdef double s = 0.0
        if self.l2 != 0.0:
            for j in range(self.n):
                s += self.x[j] * self.x[j]
        return self.data_loss() + 0.5 * self.l2 * s

    cdef double block_lipschitz(self, const int* blk, Py_ssize_t nb) noexcept nogil:
        """lambda_max(curvature * A_b.T A_b + l2 I) (Appendix B)."""
        cdef Py_ssize_t a
        cdef double* G = &self.gram_buf[0]
        cdef double* Z = G + nb * nb
        cdef double* ev = Z + nb * nb
        cdef int n_, m_found = 0, il, iu, info = 0, lwork, liwork, ldz = 1
        cdef double vl = 0.0, vu = 0.0, abstol = 0.0
        cdef char jobz = b'N', rng = b'I', uplo = b'U'
        if nb == 1:
            return self.lipschitz[blk[0]]
        self.A.gram(blk, nb, G, &self.colbuf[0])
        for a in range(nb * nb):
            G[a] *= self.curvature
        for a in range(nb):
            G[a * nb + a] += self.l2
        n_ = <int>nb
        il = n_
        iu = n_
        lwork = <int>(26 * nb)
        liwork = <int>(10 * nb)
        # np.linalg.eigvalsh(G)[-1]
        dsyevr(&jobz, &rng, &uplo, &n_, G, &n_, &vl, &vu, &il, &iu, &abstol, &m_found,
               ev, Z, &ldz, &self.eig_iwork[10 * nb], &self.eig_work[0], &lwork,
               &self.eig_iwork[0], &liwork, &info)
        if info != 0 or m_found < 1:
            # fall back to the always-valid sum of coordinate constants
            return Problem.block_lipschitz(self, blk, nb)
        return ev[0]

    # ----------------------------------------------------------------- step
    cdef void apply(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        cdef Py_ssize_t a, j, p, i, k, nt, start, end
        cdef const int* rows
        cdef const double* vals
        cdef double* dwp = &self.dw[0] if self.tracking else NULL
        cdef double v
        if nb == 1:
            j = blk[0]
            if d[0] == 0.0:
                return
            self.x[j] += d[0]
            if self.A.dense:
                rows = NULL
                vals = &self.A.values[j * self.A.n_rows]
                nt = self.A.n_rows
            else:
                start = self.A.indptr[j]
                rows = &self.A.indices[start]
                vals = &self.A.values[start]
                nt = self.A.indptr[j + 1] - start
            self.update_rows(rows, vals, nt, d[0], dwp)
            if self.tracking:
                self.push_gradient(rows, dwp, nt)
                self.g[j] += self.l2 * d[0]
                self.mark_dirty(j)
            return

        for a in range(nb):
            self.x[blk[a]] += d[a]
        if self.A.dense:
            nt = self.A.n_rows
            for i in range(nt):
                self.dw[i] = 0.0
            for a in range(nb):
                if d[a] != 0.0:
                    self.A.col_axpy(blk[a], d[a], &self.dw[0])
            self.update_rows(NULL, &self.dw[0], nt, 1.0, &self.dw[0])
            rows = NULL
        else:
            nt = 0
            for a in range(nb):
                if d[a] == 0.0:
                    continue
                j = blk[a]
                for p in range(self.A.indptr[j], self.A.indptr[j + 1]):
                    i = self.A.indices[p]
                    if not self.row_mark[i]:
                        self.row_mark[i] = 1
                        self.touched[nt] = <int>i
                        nt += 1
                    self.dz[i] += d[a] * self.A.values[p]
            for k in range(nt):
                i = self.touched[k]
                self.dw[k] = self.dz[i]
                self.dz[i] = 0.0
                self.row_mark[i] = 0
            rows = &self.touched[0]
            self.update_rows(rows, &self.dw[0], nt, 1.0, &self.dw[0])
        if self.tracking:
            self.push_gradient(rows, &self.dw[0], nt)
            for a in range(nb):
                self.g[blk[a]] += self.l2 * d[a]
                self.mark_dirty(blk[a])

    cdef void push_gradient(self, const int* rows, const double* dw, Py_ssize_t nr) noexcept nogil:
        """g += A[rows].T @ dw, marking every changed gradient entry."""
        cdef Py_ssize_t k, p, c, i
        cdef int m, n, inc = 1
        cdef double one = 1.0, dwk
        cdef char trans = b'T'
        if self.A.dense:
            m = <int>self.A.n_rows
            n = <int>self.A.n_cols
            # g += A.T @ dw   (every row of a dense column is touched)
            dgemv(&trans, &m, &n, &one, <double*>&self.A.values[0], &m, <double*>dw, &inc,
                  &one, &self.g[0], &inc)
            self.all_dirty = True
            return
        # When the update reaches more gradient entries than there are
        # coordinates, nearly all of them change: report "all dirty" and
        # skip the per-entry bookkeeping.
        cdef Py_ssize_t reach = 0
        for k in range(nr):
            i = rows[k]
            reach += self.A.r_indptr[i + 1] - self.A.r_indptr[i]
        cdef bint mark = reach <= self.n
        if not mark:
            self.all_dirty = True
        cdef double* g = &self.g[0]
        cdef const int* rind = &self.A.r_indices[0]
        cdef const double* rval = &self.A.r_values[0]
        for k in range(nr):
            dwk = dw[k]
            if dwk == 0.0:
                continue
            i = rows[k]
            if mark:
                for p in range(self.A.r_indptr[i], self.A.r_indptr[i + 1]):
                    c = rind[p]
                    g[c] += rval[p] * dwk
                    self.mark_dirty(c)
            else:
                for p in range(self.A.r_indptr[i], self.A.r_indptr[i + 1]):
                    g[rind[p]] += rval[p] * dwk


cdef class LeastSquaresKernel(LinearModelKernel):
    """phi(z; b) = (z - b)^2 / 2, so w is the residual A x - b."""

    def __init__(self, Matrix A, b, double l2, lipschitz, bint tracking, Py_ssize_t max_block=1):
        LinearModelKernel.__init__(self, A, b, l2, 1.0, lipschitz, tracking, max_block)

    cdef void w_from_z(self) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.z.shape[0]):
            self.w[i] = self.z[i] - self.target[i]

    cdef double data_loss(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double s = 0.0
        for i in range(self.w.shape[0]):
            s += self.w[i] * self.w[i]
        return 0.5 * s

    cdef void update_rows(self, const int* rows, const double* vals, Py_ssize_t nr,
                          double scale, double* dw_out) noexcept nogil:
        # only the residual w is kept up to date; z is scratch for reset()
        cdef Py_ssize_t k
        cdef double* w = &self.w[0]
        if rows == NULL:
            for k in range(nr):
                w[k] += scale * vals[k]
        else:
            for k in range(nr):
                w[rows[k]] += scale * vals[k]
        if dw_out != NULL:
            for k in range(nr):
                dw_out[k] = scale * vals[k]


cdef inline double _logistic_loss(double u) noexcept nogil:
    """log(1 + exp(u)), overflow-free."""
    if u > 0.0:
        return u + log1p(exp(-u))
    return log1p(exp(u))


cdef inline double _logistic_dloss(double z, double t) noexcept nogil:
    """d/dz log(1 + exp(-t z)) = -t / (1 + exp(t z)), overflow-free."""
    cdef double u = t * z
    cdef double e
    if u >= 0.0:
        e = exp(-u)
        return -t * e / (1.0 + e)
    return -t / (1.0 + exp(u))


cdef class LogisticKernel(LinearModelKernel):
    """phi(z; t) = log(1 + exp(-t z)) with t in {-1, +1}."""

    def __init__(self, Matrix A, t, double l2, lipschitz, bint tracking, Py_ssize_t max_block=1):
        LinearModelKernel.__init__(self, A, t, l2, 0.25, lipschitz, tracking, max_block)

    cdef void w_from_z(self) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.z.shape[0]):
            self.w[i] = _logistic_dloss(self.z[i], self.target[i])

    cdef double data_loss(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double s = 0.0
        for i in range(self.z.shape[0]):
            s += _logistic_loss(-self.target[i] * self.z[i])
        return s

    cdef void update_rows(self, const int* rows, const double* vals, Py_ssize_t nr,
                          double scale, double* dw_out) noexcept nogil:
        cdef Py_ssize_t k, i
        cdef double wn
        cdef double* z = &self.z[0]
        cdef double* w = &self.w[0]
        for k in range(nr):
            i = rows[k] if rows != NULL else k
            z[i] += scale * vals[k]
            wn = _logistic_dloss(z[i], self.target[i])
            if dw_out != NULL:
                dw_out[k] = wn - w[i]
            w[i] = wn
