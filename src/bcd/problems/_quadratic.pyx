"""Compiled state of sparse quadratic problems f(x) = x'Qx/2 - c'x."""
import numpy as np

from bcd.core._problem cimport CyProblem
from bcd.core._matrix cimport CyMatrix


cdef class CyQuadratic(CyProblem):
    """f(x) = x'Qx/2 - c'x for a symmetric positive-definite Q.

    grad f = Qx - c.  Without gradient tracking a partial derivative costs
    one column of Q; with it, a step on block b updates the gradient on the
    rows of Q's columns in b (Q is symmetric, so its columns are its rows).
    """
    cdef CyMatrix Q
    cdef const double[::1] c
    cdef double[::1] qx              # scratch for Q x
    cdef double[::1] acc             # zeroed scratch of length n
    cdef double[::1] uc              # Q_b d on the touched rows
    cdef int[::1] touched
    cdef unsigned char[::1] mark
    cdef Py_ssize_t dir_nt
    cdef double dir_gd, dir_dqd

    def __init__(self, CyMatrix Q, c, lipschitz, bint tracking, Py_ssize_t max_block=1):
        n = Q.n_cols
        CyProblem.__init__(self, n, lipschitz, tracking)
        self.Q = Q
        self.c = c
        self.qx = np.zeros(n)
        self.acc = np.zeros(n)
        self.uc = np.zeros(n)
        self.touched = np.zeros(n, dtype=np.int32)
        self.mark = np.zeros(n, dtype=np.uint8)
        self.reserve(max_block)
        with nogil:
            self.reset()

    cdef void reset(self) noexcept nogil:
        cdef Py_ssize_t j
        if self.tracking:
            self.Q.matvec(&self.x[0], &self.g[0])
            for j in range(self.n):
                self.g[j] -= self.c[j]
            self.all_dirty = True

    cdef double grad_coord(self, Py_ssize_t j) noexcept nogil:
        if self.tracking:
            return self.g[j]
        return self.Q.col_dot(j, &self.x[0]) - self.c[j]

    cdef void full_gradient(self, double* out) noexcept nogil:
        cdef Py_ssize_t j
        self.Q.matvec(&self.x[0], out)
        for j in range(self.n):
            out[j] -= self.c[j]

    cdef double objective(self) noexcept nogil:
        # f = x'(Qx)/2 - c'x
        cdef Py_ssize_t j
        cdef double s = 0.0
        self.Q.matvec(&self.x[0], &self.qx[0])
        for j in range(self.n):
            s += self.x[j] * (0.5 * self.qx[j] - self.c[j])
        return s

    cdef bint block_hessian_bound(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        """Q_bb (dense, row-major)."""
        return self.hessian_entries(blk, nb, blk, nb, H)

    cdef bint block_hessian(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        return self.block_hessian_bound(blk, nb, H)

    cdef bint hessian_entries(self, const int* rows, Py_ssize_t nr, const int* cols,
                              Py_ssize_t nc, double* out) noexcept nogil:
        """Q[rows, cols], one scattered column of Q at a time."""
        cdef Py_ssize_t c, r, p, start, end
        cdef double* work = &self.acc[0]
        for c in range(nc):
            self.Q.col_range(cols[c], &start, &end)
            for p in range(start, end):
                work[self.Q.row(p, start)] = self.Q.values[p]
            for r in range(nr):
                out[r * nc + c] = work[rows[r]]
            for p in range(start, end):
                work[self.Q.row(p, start)] = 0.0
        return True

    cdef bint bound_matvec(self, const int* support, const double* v, Py_ssize_t ns,
                           double* out) noexcept nogil:
        cdef Py_ssize_t j, k, nt
        nt = self.Q.combine_columns(support, ns, v, &self.touched[0], &self.mark[0],
                                    &self.acc[0], &self.uc[0])
        for j in range(self.n):
            out[j] = 0.0
        if self.Q.dense:
            for k in range(nt):
                out[k] = self.uc[k]
        else:
            for k in range(nt):
                out[self.touched[k]] = self.uc[k]
        return True

    cdef void apply(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        """x_b += d and, with tracking, g += Q_b d: one pass over the block's
        columns, without the line-search quantities of direction_prepare."""
        cdef Py_ssize_t a, p, start, end, r
        cdef double da
        for a in range(nb):
            self.x[blk[a]] += d[a]
        if not self.tracking:
            return
        for a in range(nb):
            da = d[a]
            if da == 0.0:
                continue
            self.Q.col_range(blk[a], &start, &end)
            for p in range(start, end):
                r = self.Q.row(p, start)
                self.g[r] += self.Q.values[p] * da
                if not self.Q.dense:
                    self.mark_dirty(r)
        if self.Q.dense:
            self.all_dirty = True

    cdef void direction_prepare(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        cdef Py_ssize_t a, k, r
        cdef double* work = &self.acc[0]
        self.record_direction(blk, nb, d)
        self.dir_nt = self.Q.combine_columns(blk, nb, d, &self.touched[0], &self.mark[0],
                                             &self.acc[0], &self.uc[0])
        # g.d and d'Q_bb d, reading (Q_b d) at the block's own rows
        self.dir_gd = 0.0
        self.dir_dqd = 0.0
        for k in range(self.dir_nt):
            r = k if self.Q.dense else self.touched[k]
            work[r] = self.uc[k]
        for a in range(nb):
            self.dir_gd += self.grad_coord(blk[a]) * d[a]
            self.dir_dqd += d[a] * work[blk[a]]
        for k in range(self.dir_nt):
            work[k if self.Q.dense else self.touched[k]] = 0.0

    cdef double direction_delta(self, double alpha) noexcept nogil:
        return alpha * (self.dir_gd + 0.5 * alpha * self.dir_dqd)

    cdef void direction_commit(self, double alpha) noexcept nogil:
        cdef Py_ssize_t a, k, r
        for a in range(self.dir_nb):
            self.x[self.dir_blk[a]] += alpha * self.dir_d[a]
        if not self.tracking:
            return
        if self.Q.dense:
            for k in range(self.dir_nt):
                self.g[k] += alpha * self.uc[k]
            self.all_dirty = True
            return
        for k in range(self.dir_nt):
            r = self.touched[k]
            self.g[r] += alpha * self.uc[k]
            self.mark_dirty(r)
