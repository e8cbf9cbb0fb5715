"""Compiled separable penalties: L1 (optionally with x >= 0) and box constraints."""
import numpy as np
from libc.math cimport fabs, fmax, fmin, INFINITY


cdef class PenaltyKernel:

    def __init__(self, Py_ssize_t n):
        self.n = n

    cdef double value_i(self, Py_ssize_t i, double xi) noexcept nogil:
        return 0.0

    cdef double prox(self, Py_ssize_t i, double z, double step) noexcept nogil:
        """argmin_y (y - z)^2 / (2 step) + g_i(y)."""
        return z

    cdef double dist(self, Py_ssize_t i, double xi, double gi) noexcept nogil:
        """Distance of -gi to the subdifferential of g_i at xi."""
        return fabs(gi)

    cdef double project(self, Py_ssize_t i, double xi) noexcept nogil:
        """The point of the domain of g_i nearest to xi."""
        return xi

    cdef int face(self, Py_ssize_t i, double xi) noexcept nogil:
        """Which smooth piece of g_i holds xi (the manifold of Section 6):
        the sign of xi for L1, -1 / +1 at a lower / upper bound and 0
        strictly inside a box."""
        return 0

    cdef double value(self, const double* x) noexcept nogil:
        cdef Py_ssize_t i
        cdef double s = 0.0
        for i in range(self.n):
            s += self.value_i(i, x[i])
        return s

    cdef double progress2(self, Py_ssize_t i, double xi, double gi, double w) noexcept nogil:
        """Twice the decrease guaranteed by a proximal step with L = 1 / w:

            -2 min_d { gi d + d^2 / (2 w) + g_i(xi + d) - g_i(xi) }

        (the summand of the GS-q, GSL-q and GSD-q rules, eqs. 32-33).  It is
        gi^2 w without a penalty; 0 when w = 0.
        """
        cdef double y, d
        if not w > 0.0:
            return 0.0
        y = self.prox(i, xi - w * gi, w)
        d = y - xi
        # indicator penalties (boxes) add nothing on their domain
        return -(2.0 * gi * d + d * d / w + 2.0 * (self.value_i(i, y) - self.value_i(i, xi)))

    # -- Python access, for checks and tests ---------------------------------
    def values(self, x):
        """g_i(x_i) for every coordinate."""
        cdef const double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(self.n)
        cdef double[::1] o = out
        cdef Py_ssize_t i
        for i in range(self.n):
            o[i] = self.value_i(i, xv[i])
        return out

    def prox_vector(self, z, double step):
        cdef const double[::1] zv = np.ascontiguousarray(z, dtype=np.float64)
        out = np.empty(self.n)
        cdef double[::1] o = out
        cdef Py_ssize_t i
        for i in range(self.n):
            o[i] = self.prox(i, zv[i], step)
        return out

    def faces(self, x):
        """The face (see ``face``) of every coordinate."""
        cdef const double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(self.n, dtype=np.int8)
        cdef signed char[::1] o = out
        cdef Py_ssize_t i
        for i in range(self.n):
            o[i] = <signed char>self.face(i, xv[i])
        return out

    def distances(self, x, g):
        """dist(-g_i, subdifferential of g_i at x_i) for every coordinate."""
        cdef const double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        cdef const double[::1] gv = np.ascontiguousarray(g, dtype=np.float64)
        out = np.empty(self.n)
        cdef double[::1] o = out
        cdef Py_ssize_t i
        for i in range(self.n):
            o[i] = self.dist(i, xv[i], gv[i])
        return out


cdef class L1Kernel(PenaltyKernel):
    """g_i(x) = lam_i |x|, or lam_i x + indicator(x >= 0) with ``positive``."""
    cdef const double[::1] lam
    cdef bint positive

    def __init__(self, lam, bint positive):
        PenaltyKernel.__init__(self, lam.shape[0])
        self.lam = lam
        self.positive = positive

    cdef double value_i(self, Py_ssize_t i, double xi) noexcept nogil:
        if self.positive and xi < 0.0:
            return INFINITY
        return self.lam[i] * fabs(xi)

    cdef double prox(self, Py_ssize_t i, double z, double step) noexcept nogil:
        cdef double t = step * self.lam[i]
        if self.positive:
            return fmax(z - t, 0.0)
        if z > t:
            return z - t
        if z < -t:
            return z + t
        return 0.0

    cdef double dist(self, Py_ssize_t i, double xi, double gi) noexcept nogil:
        cdef double lam = self.lam[i]
        if xi > 0.0:
            return fabs(gi + lam)
        if xi < 0.0:
            return fabs(gi - lam)
        if self.positive:
            # the subdifferential at 0 is (-inf, lam]
            return fmax(-gi - lam, 0.0)
        return fmax(fabs(gi) - lam, 0.0)

    cdef double project(self, Py_ssize_t i, double xi) noexcept nogil:
        return fmax(xi, 0.0) if self.positive else xi

    cdef int face(self, Py_ssize_t i, double xi) noexcept nogil:
        return (xi > 0.0) - (xi < 0.0)

    cdef double progress2(self, Py_ssize_t i, double xi, double gi, double w) noexcept nogil:
        # Near a solution the decrease is tiny while lam |y| and lam |x| are
        # not: when y = x + d keeps the sign of x (or x = 0), use
        # lam (|y| - |x|) = lam s d exactly, so the score is
        # -(2 (g + lam s) d + d^2 / w) without cancellation.
        cdef double y, d, s
        if not w > 0.0:
            return 0.0
        y = self.prox(i, xi - w * gi, w)
        d = y - xi
        if y != 0.0 and (xi == 0.0 or (xi > 0.0) == (y > 0.0)):
            s = 1.0 if y > 0.0 else -1.0
            return -(2.0 * (gi + self.lam[i] * s) * d + d * d / w)
        return -(2.0 * gi * d + d * d / w
                 + 2.0 * self.lam[i] * (fabs(y) - fabs(xi)))


cdef class BoxKernel(PenaltyKernel):
    """Indicator of lower_i <= x <= upper_i (infinite bounds allowed)."""
    cdef const double[::1] lower
    cdef const double[::1] upper

    def __init__(self, lower, upper):
        PenaltyKernel.__init__(self, lower.shape[0])
        self.lower = lower
        self.upper = upper

    cdef double value_i(self, Py_ssize_t i, double xi) noexcept nogil:
        if xi < self.lower[i] or xi > self.upper[i]:
            return INFINITY
        return 0.0

    cdef double prox(self, Py_ssize_t i, double z, double step) noexcept nogil:
        return fmin(fmax(z, self.lower[i]), self.upper[i])

    cdef double dist(self, Py_ssize_t i, double xi, double gi) noexcept nogil:
        cdef bint at_low = xi <= self.lower[i], at_up = xi >= self.upper[i]
        if at_low and at_up:
            return 0.0                   # a fixed coordinate
        if at_low:
            return fmax(-gi, 0.0)        # the subdifferential is (-inf, 0]
        if at_up:
            return fmax(gi, 0.0)         # [0, inf)
        return fabs(gi)

    cdef double project(self, Py_ssize_t i, double xi) noexcept nogil:
        return fmin(fmax(xi, self.lower[i]), self.upper[i])

    cdef int face(self, Py_ssize_t i, double xi) noexcept nogil:
        if xi <= self.lower[i]:
            return -1
        if xi >= self.upper[i]:
            return 1
        return 0
