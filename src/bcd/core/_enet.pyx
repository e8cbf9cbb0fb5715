"""Cyclic coordinate descent for an elastic-net path, one compiled call per
penalty value (see :mod:`bcd.core.enetpath`, which prepares its data).

The problem at the summed weights ``l1 > 0`` and ``l2 >= 0`` is

    min_w  1/2 ||b - A w||^2 + l1 ||w||_1 + l2/2 ||w||^2      (w >= 0 if positive)

with ``A`` held in one of three forms:

* ``MODE_GRAM``: ``G = A^T A`` and ``q = A^T b`` (dense, C order): an
  update costs O(d), the residual is never formed;
* ``MODE_DENSE``: ``A`` itself (dense, Fortran order) and the residual
  ``r = b - A w``: an update costs O(n);
* ``MODE_SPARSE``: ``A = X - u m^T`` with ``X`` sparse (CSC) and a dense
  rank-one shift (the weighted centering of the columns, ``u`` the square
  roots of the sample weights and ``m`` the column means); the residual is
  kept as ``rho + tau u`` with ``rho`` updated sparsely, ``tau`` a scalar
  and ``u^T rho`` tracked, so that an update costs O(nnz of the column).

The stopping test is the duality gap of the elastic net (the Lasso of ``A``
stacked over ``sqrt(l2) I``), computed from scratch at the iterate: the
solve converges when ``gap <= gap_tol``.  The gap is evaluated at the start
and after every pass whose largest coordinate change is at most ``dw_tol``
times the largest coefficient (and after the last allowed pass); every
evaluation also screens out the coordinates that the gap safe sphere proves
zero at the solution (Fercoq, Gramfort and Salmon, 2015).
"""
import numpy as np
from bcd.core._clock cimport interrupted as _interrupted
from bcd.core._prox cimport soft as _soft
from libc.math cimport fabs, sqrt
from scipy.linalg.cython_blas cimport ddot, daxpy, dgemv

cdef enum:
    MODE_GRAM = 0
    MODE_DENSE = 1
    MODE_SPARSE = 2

#: the values of ``mode`` by name
MODES = {"gram": MODE_GRAM, "dense": MODE_DENSE, "sparse": MODE_SPARSE}

#: passes between two checks for Ctrl-C
cdef Py_ssize_t SIGNAL_PASSES = 8


cdef class CyEnetPath:
    """The data and iterate of an elastic-net path (see the module notes).

    Built by :class:`bcd.core.enetpath.EnetPath`; ``solve`` runs one value
    of the path from the current iterate.
    """

    cdef int mode
    cdef Py_ssize_t n, d
    cdef bint positive
    # MODE_GRAM
    cdef double[:, ::1] G
    cdef double[::1] q
    cdef double[::1] Gw
    # MODE_DENSE
    cdef double[::1, :] A
    # MODE_SPARSE
    cdef const double[::1] data
    cdef const Py_ssize_t[::1] indices
    cdef const Py_ssize_t[::1] indptr
    cdef double[::1] u
    cdef double[::1] m
    cdef double[::1] c            # u^T X_j
    cdef double uu, tau, ur
    # all modes
    cdef double[::1] b
    cdef double b_norm2
    cdef double[::1] norm         # ||A_j||^2
    cdef double[::1] w
    cdef double[::1] r
    cdef double[::1] xta
    cdef double[::1] scratch
    cdef Py_ssize_t[::1] active
    cdef Py_ssize_t n_active

    def __init__(self, str mode, Py_ssize_t n, Py_ssize_t d, b, norm, bint positive, *,
                 G=None, q=None, A=None, data=None, indices=None, indptr=None, u=None,
                 m=None, c=None):
        self.mode = MODES[mode]
        self.n, self.d = n, d
        self.positive = positive
        self.b = np.ascontiguousarray(b, dtype=np.float64)
        self.b_norm2 = float(np.dot(self.b, self.b))
        self.norm = np.ascontiguousarray(norm, dtype=np.float64)
        self.w = np.zeros(d)
        self.xta = np.zeros(d)
        self.active = np.arange(d, dtype=np.intp)
        self.n_active = d
        if self.mode == MODE_GRAM:
            self.G = np.ascontiguousarray(G, dtype=np.float64)
            self.q = np.ascontiguousarray(q, dtype=np.float64)
            self.Gw = np.zeros(d)
        else:
            self.r = np.array(self.b, dtype=np.float64)
            self.scratch = np.zeros(n)
        if self.mode == MODE_DENSE:
            self.A = np.asfortranarray(A, dtype=np.float64)
        elif self.mode == MODE_SPARSE:
            self.data = np.ascontiguousarray(data, dtype=np.float64)
            self.indices = np.ascontiguousarray(indices, dtype=np.intp)
            self.indptr = np.ascontiguousarray(indptr, dtype=np.intp)
            self.u = np.ascontiguousarray(u, dtype=np.float64)
            self.m = np.ascontiguousarray(m, dtype=np.float64)
            self.c = np.ascontiguousarray(c, dtype=np.float64)
            self.uu = float(np.dot(self.u, self.u))
            self.tau = 0.0
            self.ur = float(np.dot(self.u, self.r))

    @property
    def coef(self):
        """A copy of the iterate."""
        return np.array(self.w)

    def set_w(self, w):
        """Start from ``w`` (the residual recomputed from it)."""
        cdef Py_ssize_t j
        cdef double[::1] x = np.ascontiguousarray(w, dtype=np.float64)
        with nogil:
            for j in range(self.d):
                if self.w[j] != x[j]:
                    self._move(j, x[j] - self.w[j])
                    self.w[j] = x[j]

    cdef inline double _dot(self, Py_ssize_t j) noexcept nogil:
        """``A_j^T r``."""
        cdef int n_ = <int>self.n, one = 1
        cdef Py_ssize_t k
        cdef double s
        if self.mode == MODE_GRAM:
            return self.q[j] - self.Gw[j]
        if self.mode == MODE_DENSE:
            # A[:, j] @ r
            return ddot(&n_, &self.A[0, j], &one, &self.r[0], &one)
        s = 0.0
        for k in range(self.indptr[j], self.indptr[j + 1]):
            s += self.data[k] * self.r[self.indices[k]]
        # (X_j - m_j u)^T (rho + tau u)
        return s + self.tau * self.c[j] - self.m[j] * (self.ur + self.tau * self.uu)

    cdef inline void _move(self, Py_ssize_t j, double delta) noexcept nogil:
        """The residual after ``w_j += delta``."""
        cdef int n_ = <int>self.n, d_ = <int>self.d, one = 1
        cdef double step = -delta
        cdef Py_ssize_t k
        if self.mode == MODE_GRAM:
            # Gw += delta * G[:, j]  (G symmetric: its row j)
            daxpy(&d_, &delta, &self.G[j, 0], &one, &self.Gw[0], &one)
        elif self.mode == MODE_DENSE:
            # r -= delta * A[:, j]
            daxpy(&n_, &step, &self.A[0, j], &one, &self.r[0], &one)
        else:
            for k in range(self.indptr[j], self.indptr[j + 1]):
                self.r[self.indices[k]] -= delta * self.data[k]
            self.ur -= delta * self.c[j]
            self.tau += delta * self.m[j]

    cdef double _gap(self, double l1, double l2, double* scale) noexcept nogil:
        """The duality gap at ``w`` (``xta`` holds ``A^T r - l2 w``; ``scale``
        receives the factor that makes the residual dual feasible)."""
        cdef int n_ = <int>self.n, d_ = <int>self.d, one = 1
        cdef char trans = b'T'
        cdef double alpha = 1.0, zero = 0.0
        cdef double r2, ry, w1 = 0.0, w2 = 0.0, qw, dual_norm = 0.0, const, v, s, ru
        cdef Py_ssize_t i, j, k
        if self.mode == MODE_GRAM:
            qw = 0.0
            v = 0.0
            for j in range(self.d):
                qw += self.q[j] * self.w[j]
                v += self.w[j] * self.Gw[j]
                self.xta[j] = self.q[j] - self.Gw[j]
            r2 = self.b_norm2 - 2.0 * qw + v
            if r2 < 0.0:
                r2 = 0.0
            ry = self.b_norm2 - qw
        elif self.mode == MODE_DENSE:
            # xta = A.T @ r
            dgemv(&trans, &n_, &d_, &alpha, &self.A[0, 0], &n_, &self.r[0], &one, &zero,
                  &self.xta[0], &one)
            # r @ r, r @ b
            r2 = ddot(&n_, &self.r[0], &one, &self.r[0], &one)
            ry = ddot(&n_, &self.r[0], &one, &self.b[0], &one)
        else:
            # the residual rho + tau u, and u^T rho afresh (no drift)
            s = 0.0
            for i in range(self.n):
                s += self.u[i] * self.r[i]
                self.scratch[i] = self.r[i] + self.tau * self.u[i]
            self.ur = s
            ru = ddot(&n_, &self.scratch[0], &one, &self.u[0], &one)
            for j in range(self.d):
                s = 0.0
                for k in range(self.indptr[j], self.indptr[j + 1]):
                    s += self.data[k] * self.scratch[self.indices[k]]
                self.xta[j] = s - self.m[j] * ru
            r2 = ddot(&n_, &self.scratch[0], &one, &self.scratch[0], &one)
            ry = ddot(&n_, &self.scratch[0], &one, &self.b[0], &one)
        for j in range(self.d):
            v = self.w[j]
            w1 += fabs(v)
            w2 += v * v
            self.xta[j] -= l2 * v
            v = self.xta[j] if self.positive else fabs(self.xta[j])
            if v > dual_norm:
                dual_norm = v
        const = l1 / dual_norm if dual_norm > l1 else 1.0
        scale[0] = const
        return (0.5 * (r2 + l2 * w2) * (1.0 + const * const) + l1 * w1 - const * ry)

    cdef void _screen(self, double l1, double l2, double gap, double const) noexcept nogil:
        """Drop from the active set the coordinates the gap safe sphere
        proves zero (setting them to zero)."""
        cdef double radius = sqrt(2.0 * gap) if gap > 0.0 else 0.0
        cdef double v
        cdef Py_ssize_t a, j, kept = 0
        for a in range(self.n_active):
            j = self.active[a]
            v = self.xta[j] if self.positive else fabs(self.xta[j])
            if const * v + radius * sqrt(self.norm[j] + l2) < l1:
                if self.w[j] != 0.0:
                    self._move(j, -self.w[j])
                    self.w[j] = 0.0
            else:
                self.active[kept] = j
                kept += 1
        self.n_active = kept

    def solve(self, double l1, double l2, double gap_tol, double dw_tol, Py_ssize_t max_passes,
              bint screening=True):
        """Minimize at the summed weights ``l1 > 0``, ``l2 >= 0`` from the
        current iterate; returns ``(gap, passes, converged)``.

        Raises KeyboardInterrupt on Ctrl-C (checked every few passes)."""
        cdef Py_ssize_t a, j, epoch = 0, passes = 0
        cdef double gap, const = 1.0, old, new, z, h, delta, w_max, dw_max
        cdef bint converged = False, interrupted = False
        for j in range(self.d):
            self.active[j] = j
        self.n_active = self.d
        with nogil:
            gap = self._gap(l1, l2, &const)
            if gap <= gap_tol:
                converged = True
            elif screening:
                self._screen(l1, l2, gap, const)
            while not converged and epoch < max_passes:
                w_max = 0.0
                dw_max = 0.0
                for a in range(self.n_active):
                    j = self.active[a]
                    h = self.norm[j]
                    if h == 0.0:
                        continue
                    old = self.w[j]
                    z = self._dot(j) + h * old
                    if self.positive and z < 0.0:
                        new = 0.0
                    else:
                        new = _soft(z, l1) / (h + l2)
                    if new != old:
                        delta = new - old
                        self._move(j, delta)
                        self.w[j] = new
                        if fabs(delta) > dw_max:
                            dw_max = fabs(delta)
                    if fabs(new) > w_max:
                        w_max = fabs(new)
                epoch += 1
                if w_max == 0.0 or dw_max <= dw_tol * w_max or epoch == max_passes:
                    gap = self._gap(l1, l2, &const)
                    if gap <= gap_tol:
                        converged = True
                    elif screening:
                        self._screen(l1, l2, gap, const)
                if epoch % SIGNAL_PASSES == 0 and _interrupted():
                    interrupted = True
                    break
        if interrupted:
            raise KeyboardInterrupt
        return gap, epoch, converged
