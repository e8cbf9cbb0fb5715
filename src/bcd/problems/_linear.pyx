"""Compiled states of the linear-model problems (least squares, logistic)."""
import numpy as np
from libc.math cimport exp, expm1, fabs, log1p

from bcd.core._problem cimport CyProblem
from bcd.core._matrix cimport CyMatrix


cdef class CyLinearModel(CyProblem):

    def __init__(self, CyMatrix A, target, l2, double curvature, lipschitz,
                 bint tracking, Py_ssize_t max_block=1, sample_weight=None):
        cdef Py_ssize_t m, n
        self.A = A
        m = self.A.n_rows
        n = self.A.n_cols
        CyProblem.__init__(self, n, lipschitz, tracking)
        self.set_ridge(l2)
        self.weighted = sample_weight is not None
        if self.weighted:
            self.sw = np.ascontiguousarray(sample_weight, dtype=np.float64)
        self.curvature = curvature
        self.target = target
        self.z = np.zeros(m)
        self.w = np.zeros(m)
        self.dzc = np.zeros(m)
        self.acc = np.zeros(m)
        self.dw = np.zeros(m)
        self.touched = np.zeros(m, dtype=np.int32)
        self.row_mark = np.zeros(m, dtype=np.uint8)
        self.colbuf = np.zeros(m)
        self.rowbuf = np.zeros(m)
        self.reserve(max_block)
        with nogil:
            self.reset()

    # ---------------------------------------------------------------- state
    def exact_state(self):
        """``(w, g)``: phi'(Ax) (the residual Ax - b for least squares) and
        the gradient, copied from the compiled state, which is exact right
        after a reset (as when the engine certifies convergence); ``g`` is
        None without gradient tracking."""
        return (np.array(self.w, copy=True),
                np.array(self.g, copy=True) if self.tracking else None)

    cdef void reset(self) noexcept nogil:
        self.A.matvec(&self.x[0], &self.z[0])
        self.w_from_z()
        if self.tracking:
            self.full_gradient(&self.g[0])
            self.all_dirty = True

    cdef double dloss(self, double z, double t) noexcept nogil:
        """phi'(z; t), the derivative of the loss of one row."""
        return 0.0

    cdef void w_from_z(self) noexcept nogil:
        cdef Py_ssize_t i
        for i in range(self.z.shape[0]):
            self.w[i] = self.dloss(self.z[i], self.target[i])
            if self.weighted:
                self.w[i] *= self.sw[i]

    cdef double data_loss(self) noexcept nogil:
        return 0.0

    cdef double rows_delta(self, double alpha) noexcept nogil:
        return 0.0

    cdef double curvature_at(self, Py_ssize_t i) noexcept nogil:
        """phi''(z_i); negative when it is constant (= ``curvature``)."""
        return -1.0

    cdef void update_rows(self, const int* rows, const double* vals, Py_ssize_t nr,
                          double scale, double* dw_out) noexcept nogil:
        """z[rows] += scale * vals, w = phi'(z) there, and the change of w in
        ``dw_out`` when given."""
        cdef Py_ssize_t k, i
        cdef double wn
        cdef double* z = &self.z[0]
        cdef double* w = &self.w[0]
        for k in range(nr):
            i = rows[k] if rows != NULL else k
            z[i] += scale * vals[k]
            wn = self.dloss(z[i], self.target[i])
            if self.weighted:
                wn *= self.sw[i]
            if dw_out != NULL:
                dw_out[k] = wn - w[i]
            w[i] = wn

    # -------------------------------------------------------------- oracles
    cdef double grad_coord(self, Py_ssize_t j) noexcept nogil:
        return self.A.col_dot(j, &self.w[0]) + self.ridge_at(j) * self.x[j]

    cdef void full_gradient(self, double* out) noexcept nogil:
        cdef Py_ssize_t j
        self.A.rmatvec(&self.w[0], out)
        if self.has_ridge:
            for j in range(self.n):
                out[j] += self.ridge[j] * self.x[j]

    cdef double objective(self) noexcept nogil:
        return self.data_loss() + self.ridge_value()

    cdef bint block_hessian_bound(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        """H_b = curvature * A_b.T S A_b + diag(r_b) (Appendix B)."""
        cdef Py_ssize_t a
        self.A.gram(blk, nb, &self.sw[0] if self.weighted else NULL, H, &self.colbuf[0])
        for a in range(nb * nb):
            H[a] *= self.curvature
        for a in range(nb):
            H[a * nb + a] += self.ridge_at(blk[a])
        return True

    cdef bint block_hessian(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        """The block of the Hessian at x: A_b.T diag(s phi''(z)) A_b + diag(r_b)."""
        cdef Py_ssize_t a, p, i, start, end
        if self.curvature_at(0) < 0.0:
            return self.block_hessian_bound(blk, nb, H)
        # phi'' on the rows the block's columns touch (all rows when dense)
        if self.A.dense:
            for i in range(self.A.n_rows):
                self.rowbuf[i] = self.curvature_at(i)
        else:
            for a in range(nb):
                self.A.col_range(blk[a], &start, &end)
                for p in range(start, end):
                    i = self.A.row(p, start)
                    self.rowbuf[i] = self.curvature_at(i)
        self.A.gram(blk, nb, &self.rowbuf[0], H, &self.colbuf[0])
        for a in range(nb):
            H[a * nb + a] += self.ridge_at(blk[a])
        return True

    cdef bint bound_matvec(self, const int* support, const double* v, Py_ssize_t ns,
                           double* out) noexcept nogil:
        """out = (curvature A.T S A + diag(r)) v for v supported on ``support``."""
        cdef Py_ssize_t j, k, nt
        nt = self.A.combine_columns(support, ns, v, &self.touched[0], &self.row_mark[0],
                                    &self.acc[0], &self.rowbuf[0])
        for k in range(nt):
            self.rowbuf[k] *= self.curvature
            if self.weighted:
                self.rowbuf[k] *= self.sw[k if self.A.dense else self.touched[k]]
        for j in range(self.n):
            out[j] = 0.0
        self.A.rows_rmatvec_add(NULL if self.A.dense else &self.touched[0], &self.rowbuf[0],
                                nt, out)
        for k in range(ns):
            out[support[k]] += self.ridge_at(support[k]) * v[k]
        return True

    # ----------------------------------------------------------------- steps
    cdef void direction_prepare(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        self.record_direction(blk, nb, d)
        self.dir_nt = self.A.combine_columns(blk, nb, d, &self.touched[0], &self.row_mark[0],
                                             &self.acc[0], &self.dzc[0])

    cdef double direction_delta(self, double alpha) noexcept nogil:
        return self.rows_delta(alpha) + self.ridge_delta(alpha)

    cdef void direction_commit(self, double alpha) noexcept nogil:
        cdef Py_ssize_t a
        cdef const int* rows = NULL if self.A.dense else &self.touched[0]
        cdef double* dwp = &self.dw[0] if self.tracking else NULL
        for a in range(self.dir_nb):
            self.x[self.dir_blk[a]] += alpha * self.dir_d[a]
        self.update_rows(rows, &self.dzc[0], self.dir_nt, alpha, dwp)
        if self.tracking:
            self.push_gradient(rows, dwp, self.dir_nt)
            for a in range(self.dir_nb):
                self.g[self.dir_blk[a]] += self.ridge_at(self.dir_blk[a]) * alpha * self.dir_d[a]
                self.mark_dirty(self.dir_blk[a])

    cdef void apply(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        cdef Py_ssize_t j, start, nt
        cdef const int* rows
        cdef const double* vals
        cdef double* dwp
        if nb != 1:
            CyProblem.apply(self, blk, nb, d)
            return
        # one coordinate: its column's rows are distinct, update them in place
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
        dwp = &self.dw[0] if self.tracking else NULL
        self.update_rows(rows, vals, nt, d[0], dwp)
        if self.tracking:
            self.push_gradient(rows, dwp, nt)
            self.g[j] += self.ridge_at(j) * d[0]
            self.mark_dirty(j)

    cdef void push_gradient(self, const int* rows, const double* dw, Py_ssize_t nr) noexcept nogil:
        """g += A[rows].T @ dw, recording which gradient entries changed."""
        cdef Py_ssize_t k, p, c, i, reach = 0
        cdef double dwk
        cdef double* g = &self.g[0]
        if self.A.dense or not self.A.has_rows:
            self.A.rows_rmatvec_add(NULL if self.A.dense else rows, dw, nr, g)
            self.all_dirty = True
            return
        # When the update reaches more gradient entries than there are
        # coordinates, nearly all of them change: report "all dirty" and
        # skip the per-entry bookkeeping.
        for k in range(nr):
            i = rows[k]
            reach += self.A.r_indptr[i + 1] - self.A.r_indptr[i]
        if reach > self.n:
            self.all_dirty = True
            self.A.rows_rmatvec_add(rows, dw, nr, g)
            return
        cdef const int* rptr = &self.A.r_indptr[0]
        cdef const int* rind = &self.A.r_indices[0]
        cdef const double* rval = &self.A.r_values[0]
        cdef int* dirty = &self.dirty[0]
        cdef unsigned char* mark = &self.dirty_mark[0]
        cdef Py_ssize_t nd = self.n_dirty
        for k in range(nr):
            dwk = dw[k]
            if dwk == 0.0:
                continue
            i = rows[k]
            for p in range(rptr[i], rptr[i + 1]):
                c = rind[p]
                g[c] += rval[p] * dwk
                if not mark[c]:
                    mark[c] = 1
                    dirty[nd] = <int>c
                    nd += 1
        self.n_dirty = nd


cdef class CyLeastSquares(CyLinearModel):
    """phi(z; b) = (z - b)^2 / 2, so w is the residual A x - b."""

    def __init__(self, CyMatrix A, b, l2, lipschitz, bint tracking, Py_ssize_t max_block=1):
        # sample weights are applied to the rows of A and b by the caller
        CyLinearModel.__init__(self, A, b, l2, 1.0, lipschitz, tracking, max_block)

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

    cdef double rows_delta(self, double alpha) noexcept nogil:
        # exact for a quadratic: w.(alpha dz) + ||alpha dz||^2 / 2 (alpha is
        # applied first: dz alone can overflow where alpha dz does not)
        cdef Py_ssize_t k
        cdef double s1 = 0.0, s2 = 0.0, v
        cdef bint dense = self.A.dense
        for k in range(self.dir_nt):
            v = alpha * self.dzc[k]
            s1 += self.w[k if dense else self.touched[k]] * v
            s2 += v * v
        return s1 + 0.5 * s2

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


cdef class CyLogistic(CyLinearModel):
    """phi(z; t) = log(1 + exp(-t z)) with t in {-1, +1}."""

    def __init__(self, CyMatrix A, t, l2, lipschitz, bint tracking, Py_ssize_t max_block=1,
                 sample_weight=None):
        CyLinearModel.__init__(self, A, t, l2, 0.25, lipschitz, tracking, max_block,
                               sample_weight)

    cdef double dloss(self, double z, double t) noexcept nogil:
        return _logistic_dloss(z, t)

    cdef double data_loss(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double s = 0.0
        if self.weighted:
            for i in range(self.z.shape[0]):
                s += self.sw[i] * _logistic_loss(-self.target[i] * self.z[i])
        else:
            for i in range(self.z.shape[0]):
                s += _logistic_loss(-self.target[i] * self.z[i])
        return s

    cdef double rows_delta(self, double alpha) noexcept nogil:
        # log(1 + e^(u+h)) - log(1 + e^u) = log1p(sigmoid(u) expm1(h)): accurate
        # relative to the change itself, so line searches work near the optimum
        cdef Py_ssize_t k, i
        cdef double s = 0.0, t, si
        cdef bint dense = self.A.dense
        for k in range(self.dir_nt):
            i = k if dense else self.touched[k]
            t = self.target[i]
            # sigmoid(-t z_i) = -t w_i / s_i, kept up to date by update_rows
            if not self.weighted:
                s += log1p(-t * self.w[i] * expm1(-t * alpha * self.dzc[k]))
            else:
                si = self.sw[i]
                if si != 0.0:
                    s += si * log1p(-t * self.w[i] / si * expm1(-t * alpha * self.dzc[k]))
        return s

    cdef double curvature_at(self, Py_ssize_t i) noexcept nogil:
        # w_i = -s_i t sigmoid(-t z_i), and sigmoid(u) (1 - sigmoid(u)) is even in u
        cdef double p = fabs(self.w[i]), si
        if not self.weighted:
            return p * (1.0 - p)
        si = self.sw[i]
        return p * (1.0 - p / si) if si != 0.0 else 0.0



cdef class CySquaredHinge(CyLinearModel):
    """phi(z; t) = max(0, 1 - t z)^2 with t in {-1, +1} (the L2-loss SVM).

    phi is differentiable with a piecewise-constant second derivative: 2 on
    the rows inside the margin (t z < 1), 0 outside, which ``block_hessian``
    uses as a generalized Hessian; 2 bounds it everywhere."""

    def __init__(self, CyMatrix A, t, l2, lipschitz, bint tracking, Py_ssize_t max_block=1,
                 sample_weight=None):
        CyLinearModel.__init__(self, A, t, l2, 2.0, lipschitz, tracking, max_block,
                               sample_weight)

    cdef double dloss(self, double z, double t) noexcept nogil:
        cdef double u = 1.0 - t * z
        return -2.0 * t * u if u > 0.0 else 0.0

    cdef double data_loss(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double s = 0.0, u
        for i in range(self.z.shape[0]):
            u = 1.0 - self.target[i] * self.z[i]
            if u > 0.0:
                s += (self.sw[i] if self.weighted else 1.0) * u * u
        return s

    cdef double rows_delta(self, double alpha) noexcept nogil:
        cdef Py_ssize_t k, i
        cdef double s = 0.0, u0, u1, d
        cdef bint dense = self.A.dense
        for k in range(self.dir_nt):
            i = k if dense else self.touched[k]
            u0 = 1.0 - self.target[i] * self.z[i]
            u1 = u0 - self.target[i] * alpha * self.dzc[k]
            d = (u1 * u1 if u1 > 0.0 else 0.0) - (u0 * u0 if u0 > 0.0 else 0.0)
            s += (self.sw[i] if self.weighted else 1.0) * d
        return s

    cdef double curvature_at(self, Py_ssize_t i) noexcept nogil:
        if 1.0 - self.target[i] * self.z[i] <= 0.0:
            return 0.0
        return 2.0 * (self.sw[i] if self.weighted else 1.0)
