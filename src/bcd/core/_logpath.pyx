"""Binary logistic regression along a path of penalties, one compiled call
per value (see :mod:`bcd.core.enetpath`, which prepares its data).

The problem at the weights ``l1, l2 >= 0`` is

    min_w  sum_i s_i (log(1 + exp(z_i)) - y_i z_i)
           + sum_j p_j (l1 |w_j| + l2/2 w_j^2),          z = A w,

with ``y`` in {0, 1}, sample weights ``s`` and penalty factors ``p`` (0 for
an unpenalized intercept column).  Each outer iteration is a proximal Newton
step: cyclic coordinate descent on the quadratic model of the loss at ``w``
(the weights ``s_i sigma_i (1 - sigma_i)``) plus the exact penalty, inexact
(until the model's coordinate violations are at most ``INNER_FRACTION``
times the current optimality measure), then a backtracking search on the
objective along the step.  The solve stops when the optimality measure, the
distance of ``-grad f(w)`` to the subdifferential of the penalty (the
gradient's largest entry without L1), is at most ``tol``: the test of
:func:`bcd.solve` for the same problem.  ``A`` is dense (Fortran order) or
sparse (CSC); an update costs O(n) or O(nnz of the column).
"""
import numpy as np
from bcd.core._clock cimport interrupted as _interrupted
from bcd.core._prox cimport soft as _soft
from libc.math cimport exp, fabs, log1p
from scipy.linalg.cython_blas cimport daxpy, ddot, dgemv

#: the inner coordinate descent stops at this fraction of the outer measure
cdef double INNER_FRACTION = 0.3
#: after a full pass, the passes that follow cover the coordinates whose
#: violation is above this fraction of the inner target
cdef double ACTIVE_FRACTION = 0.1
#: at most this many passes of coordinate descent per Newton step
cdef Py_ssize_t MAX_INNER = 100
#: relative rounding of the objective (a multiple of the machine epsilon)
cdef double ROUNDING = 1e2 * 2.220446049250313e-16
#: halvings of the step before the search gives up
cdef Py_ssize_t MAX_HALVINGS = 40

#: status codes of ``solve``
STATUS = {0: "converged", 1: "max_iter", 2: "stalled"}


cdef inline double _log1pexp(double z) noexcept nogil:
    if z > 0.0:
        return z + log1p(exp(-z))
    return log1p(exp(z))


cdef inline double _sigmoid(double z) noexcept nogil:
    cdef double e
    if z >= 0.0:
        return 1.0 / (1.0 + exp(-z))
    e = exp(z)
    return e / (1.0 + e)


cdef class CyLogisticPath:
    """The data and iterate of a binary logistic path (see the module notes)."""

    cdef bint sparse
    cdef Py_ssize_t n, d
    cdef double[::1, :] A
    cdef const double[::1] data
    cdef const Py_ssize_t[::1] indices
    cdef const Py_ssize_t[::1] indptr
    cdef double[::1] y, s, pen
    cdef double[::1] w, z
    cdef double[::1] g, h, u, q, zt, dw, wt, a, grad, viol
    cdef Py_ssize_t[::1] active
    # h * A: the columns scaled by the curvature weights, per Newton step
    cdef double[::1, :] B
    cdef double[::1] bdata
    #: passes of the inner coordinate descent since the object was built
    cdef public Py_ssize_t inner_passes

    def __init__(self, A, y, s, pen):
        import scipy.sparse as sp
        self.n, self.d = A.shape
        self.sparse = sp.issparse(A)
        if self.sparse:
            As = sp.csc_matrix(A, dtype=np.float64)
            As.sort_indices()
            self.data = np.ascontiguousarray(As.data, dtype=np.float64)
            self.indices = np.ascontiguousarray(As.indices, dtype=np.intp)
            self.indptr = np.ascontiguousarray(As.indptr, dtype=np.intp)
            self.bdata = np.zeros(len(As.data))
        else:
            self.A = np.asfortranarray(A, dtype=np.float64)
            self.B = np.zeros_like(self.A, order="F")
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.s = np.ascontiguousarray(s, dtype=np.float64)
        self.pen = np.ascontiguousarray(pen, dtype=np.float64)
        n, d = self.n, self.d
        self.w = np.zeros(d)
        self.z = np.zeros(n)
        self.g, self.h, self.u, self.q, self.zt = (np.zeros(n), np.zeros(n), np.zeros(n),
                                                   np.zeros(n), np.zeros(n))
        self.dw, self.wt, self.a, self.grad = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)
        self.viol = np.zeros(d)
        self.active = np.zeros(d, dtype=np.intp)

    @property
    def coef(self):
        """A copy of the iterate."""
        return np.array(self.w)

    def set_w(self, w):
        """Start the next solve from ``w``."""
        cdef double[::1] x = np.ascontiguousarray(w, dtype=np.float64).ravel()
        if x.shape[0] != self.d:
            raise ValueError(f"w must have {self.d} entries, got {x.shape[0]}.")
        self.w[:] = x

    cdef double _dot(self, Py_ssize_t j, const double* v) noexcept nogil:
        """``A_j^T v``."""
        cdef int n_ = <int>self.n, one = 1
        cdef Py_ssize_t k
        cdef double acc = 0.0
        if not self.sparse:
            # A[:, j] @ v
            return ddot(&n_, &self.A[0, j], &one, v, &one)
        for k in range(self.indptr[j], self.indptr[j + 1]):
            acc += self.data[k] * v[self.indices[k]]
        return acc

    cdef double _scale_columns(self, Py_ssize_t j) noexcept nogil:
        """``B_j = h * A_j``; returns ``sum_i h_i A_ij^2``."""
        cdef Py_ssize_t i, k
        cdef double acc = 0.0, v
        if not self.sparse:
            for i in range(self.n):
                v = self.h[i] * self.A[i, j]
                self.B[i, j] = v
                acc += v * self.A[i, j]
            return acc
        for k in range(self.indptr[j], self.indptr[j + 1]):
            v = self.h[self.indices[k]] * self.data[k]
            self.bdata[k] = v
            acc += v * self.data[k]
        return acc

    cdef void _step(self, Py_ssize_t j, double delta) noexcept nogil:
        """``u += delta h * A_j`` (the model's gradient after ``dw_j += delta``)."""
        cdef int n_ = <int>self.n, one = 1
        cdef Py_ssize_t k
        if not self.sparse:
            # u += delta * B[:, j]
            daxpy(&n_, &delta, &self.B[0, j], &one, &self.u[0], &one)
            return
        for k in range(self.indptr[j], self.indptr[j + 1]):
            self.u[self.indices[k]] += delta * self.bdata[k]

    cdef void _product(self, double* x, double* out) noexcept nogil:
        """``out = A x`` (the margins z = A w, or their change q = A dw)."""
        cdef int n_ = <int>self.n, d_ = <int>self.d, one = 1
        cdef char trans = b'N'
        cdef double alpha = 1.0, zero = 0.0, v
        cdef Py_ssize_t i, j, k
        if not self.sparse:
            dgemv(&trans, &n_, &d_, &alpha, &self.A[0, 0], &n_, x, &one, &zero, out, &one)
            return
        for i in range(self.n):
            out[i] = 0.0
        for j in range(self.d):
            v = x[j]
            if v != 0.0:
                for k in range(self.indptr[j], self.indptr[j + 1]):
                    out[self.indices[k]] += v * self.data[k]

    cdef double _objective(self, const double* z, const double* w, double l1,
                           double l2) noexcept nogil:
        cdef Py_ssize_t i, j
        cdef double f = 0.0, r = 0.0
        for i in range(self.n):
            if self.s[i] != 0.0:
                f += self.s[i] * (_log1pexp(z[i]) - self.y[i] * z[i])
        for j in range(self.d):
            r += self.pen[j] * (l1 * fabs(w[j]) + 0.5 * l2 * w[j] * w[j])
        return f + r

    cdef double _optimality(self, double l1, double l2) noexcept nogil:
        """The optimality measure at ``w`` (``g`` and ``grad`` filled)."""
        cdef Py_ssize_t i, j
        cdef double worst = 0.0, gj, t, v
        for i in range(self.n):
            self.g[i] = self.s[i] * (_sigmoid(self.z[i]) - self.y[i])
        for j in range(self.d):
            gj = self._dot(j, &self.g[0]) + l2 * self.pen[j] * self.w[j]
            self.grad[j] = gj
            t = l1 * self.pen[j]
            v = self.w[j]
            if t == 0.0:
                v = fabs(gj)
            elif v > 0.0:
                v = fabs(gj + t)
            elif v < 0.0:
                v = fabs(gj - t)
            else:
                v = fabs(gj) - t
                v = v if v > 0.0 else 0.0
            if v > worst:
                worst = v
        return worst

    def solve(self, double l1, double l2, double tol, Py_ssize_t max_iter):
        """Minimize at ``l1``, ``l2`` from the current iterate; returns
        ``(optimality, newton_steps, status)`` with ``status`` a key of
        :data:`STATUS`.  Raises KeyboardInterrupt on Ctrl-C (checked after
        every Newton step)."""
        cdef Py_ssize_t i, j, a, it = 0, inner, halving, n_active
        cdef bint full
        cdef double opt, hj, v, b, t, delta, worst, f0, f1, slope, step, p, wj, wn
        cdef int status = 1
        cdef bint accepted, floor, interrupted = False
        with nogil:
            self._product(&self.w[0], &self.z[0])
            opt = self._optimality(l1, l2)
            while True:
                if opt <= tol:
                    status = 0
                    break
                if it >= max_iter:
                    status = 1
                    break
                # the quadratic model at w
                for i in range(self.n):
                    p = _sigmoid(self.z[i])
                    self.h[i] = self.s[i] * p * (1.0 - p)
                    self.u[i] = self.g[i]
                for j in range(self.d):
                    self.a[j] = self._scale_columns(j) + l2 * self.pen[j]
                    self.dw[j] = 0.0
                # passes over every coordinate, each followed by passes over
                # those it found far from their minimizers (glmnet's active
                # set) until they settle; the model counts as solved only
                # after a full pass finds every violation small
                full = True
                n_active = self.d
                for inner in range(MAX_INNER):
                    worst = 0.0
                    for a in range(self.d if full else n_active):
                        j = a if full else self.active[a]
                        hj = self.a[j]
                        if hj <= 0.0:
                            continue
                        v = self.w[j] + self.dw[j]
                        b = self._dot(j, &self.u[0]) + l2 * self.pen[j] * v
                        t = l1 * self.pen[j]
                        if t > 0.0:
                            delta = _soft(hj * v - b, t) / hj - v
                        else:
                            delta = -b / hj
                        self.viol[j] = fabs(delta) * hj
                        if delta != 0.0:
                            self.dw[j] += delta
                            self._step(j, delta)
                            if self.viol[j] > worst:
                                worst = self.viol[j]
                    self.inner_passes += 1
                    if worst <= INNER_FRACTION * opt:
                        if full:
                            break
                        full = True             # settled: verify on every coordinate
                    elif full:
                        # the coordinates that moved by more than a fraction of
                        # the target, for the passes that follow
                        n_active = 0
                        for j in range(self.d):
                            if self.viol[j] > ACTIVE_FRACTION * INNER_FRACTION * opt:
                                self.active[n_active] = j
                                n_active += 1
                        full = n_active == 0
                # a backtracking search on the objective along dw
                self._product(&self.dw[0], &self.q[0])
                f0 = self._objective(&self.z[0], &self.w[0], l1, l2)
                slope = 0.0
                for i in range(self.n):
                    slope += self.g[i] * self.q[i]
                for j in range(self.d):
                    wj = self.w[j]
                    wn = wj + self.dw[j]
                    slope += self.pen[j] * (l2 * wj * self.dw[j] + l1 * (fabs(wn) - fabs(wj)))
                if not slope < 0.0:
                    status = 2
                    break
                step = 1.0
                accepted = False
                # a predicted decrease below the rounding of f cannot be
                # tested on f: the full (Newton) step is taken
                floor = -slope <= ROUNDING * fabs(f0)
                for halving in range(MAX_HALVINGS):
                    for i in range(self.n):
                        self.zt[i] = self.z[i] + step * self.q[i]
                    for j in range(self.d):
                        self.wt[j] = self.w[j] + step * self.dw[j]
                    f1 = self._objective(&self.zt[0], &self.wt[0], l1, l2)
                    if f1 <= f0 + 1e-4 * step * slope or floor:
                        accepted = True
                        break
                    step *= 0.5
                if not accepted:
                    status = 2
                    break
                for j in range(self.d):
                    self.w[j] = self.wt[j]
                for i in range(self.n):
                    self.z[i] = self.zt[i]
                it += 1
                # (the margins are recomputed from w at every solve's start)
                opt = self._optimality(l1, l2)
                if _interrupted():
                    interrupted = True
                    break
        if interrupted:
            raise KeyboardInterrupt
        return opt, it, STATUS[status]
