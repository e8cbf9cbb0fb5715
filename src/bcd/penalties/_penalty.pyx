"""Compiled separable penalties: L1 (optionally with x >= 0) and box constraints."""
import numpy as np
from libc.math cimport fabs, fmax, fmin, INFINITY

# relative slack for points that leave the domain by rounding only
cdef double _ROUNDING = 4e-16


# the methods of CyPenalty, as bits of CyPenalty.missing: the base
# implementations set their bit, so that a subclass that does not override a
# method it must provide is caught by ``verify``
cdef enum:
    M_VALUE = 1
    M_PROX = 2
    M_DIST = 4
    M_PROJECT = 8
    M_FACE = 16
    M_ORTHANT = 32
    M_CLIP = 64
    M_SLOPE = 128
    M_L1 = 256
    M_BOX = 512

# capability -> (methods, whether one of them suffices)
_REQUIRED = {"value_i": M_VALUE, "prox": M_PROX, "dist": M_DIST, "project": M_PROJECT,
             "face": M_FACE}
_OPTIONAL = {"orthant": ({"orthant": M_ORTHANT, "clip": M_CLIP}, False),
             "slope": ({"slope": M_SLOPE}, False),
             "path": ({"l1_weight": M_L1, "box_bounds": M_BOX}, True)}


cdef class CyPenalty:

    def __init__(self, Py_ssize_t n):
        self.n = n

    def verify(self, capabilities):
        """Raise TypeError unless this penalty implements every required
        method (value_i, prox, dist, project, face) and the optional methods
        of the declared ``capabilities`` ("orthant": orthant and clip;
        "slope"; "path": l1_weight or box_bounds)."""
        cdef double s = 0.0, lo = 0.0, up = 0.0
        cdef bint pos = False
        if self.n == 0:
            return
        self.missing = 0
        with nogil:
            self.value_i(0, 0.0)
            self.prox(0, 0.0, 1.0)
            self.dist(0, 0.0, 0.0)
            self.project(0, 0.0)
            self.face(0, 0.0)
            self.orthant(0, 0.0, 0.0, 1e-4, &s)
            self.clip(0, 0.0, 1)
            self.slope(0, 0.0, &s)
            self.l1_weight(0, &s, &pos)
            self.box_bounds(0, &lo, &up)
        self.has_slope = not (self.missing & M_SLOPE)
        absent = [name for name, bit in _REQUIRED.items() if self.missing & bit]
        for cap in capabilities:
            if cap not in _OPTIONAL:
                continue
            methods, any_one = _OPTIONAL[cap]
            lacking = [name for name, bit in methods.items() if self.missing & bit]
            if lacking and (not any_one or len(lacking) == len(methods)):
                absent += [f"{' or '.join(lacking) if any_one else ', '.join(lacking)} "
                           f"(declared capability {cap!r})"]
        if absent:
            raise TypeError(f"{type(self).__name__} does not implement {', '.join(absent)}; "
                            f"every penalty implements value_i, prox, dist, project and face, "
                            f"and the methods of the capabilities it declares.")

    cdef double value_i(self, Py_ssize_t i, double xi) noexcept nogil:
        """g_i(xi) (inf outside the domain)."""
        self.missing |= M_VALUE
        return 0.0

    cdef double prox(self, Py_ssize_t i, double z, double step) noexcept nogil:
        """argmin_y (y - z)^2 / (2 step) + g_i(y)."""
        self.missing |= M_PROX
        return z

    cdef double dist(self, Py_ssize_t i, double xi, double gi) noexcept nogil:
        """Distance of -gi to the subdifferential of g_i at xi."""
        self.missing |= M_DIST
        return 0.0

    cdef double project(self, Py_ssize_t i, double xi) noexcept nogil:
        """The point of the domain of g_i nearest to xi."""
        self.missing |= M_PROJECT
        return xi

    cdef int face(self, Py_ssize_t i, double xi) noexcept nogil:
        """Which smooth piece of g_i holds xi (the manifold of Section 6):
        the sign of xi for L1, -1 / +1 at a lower / upper bound and 0
        strictly inside a box."""
        self.missing |= M_FACE
        return 0

    cdef double delta_value(self, Py_ssize_t i, double xi, double d) noexcept nogil:
        """g_i(xi + d) - g_i(xi), computed without cancellation where possible."""
        return self.value_i(i, xi + d) - self.value_i(i, xi)

    cdef int orthant(self, Py_ssize_t i, double xi, double gi, double eps,
                     double* pseudo) noexcept nogil:
        """Two-metric projection (capability "orthant"): 0 if coordinate i is
        *active* (within eps of a kink or bound that grad_i f pushes it
        against: it takes a proximal gradient step), else the orthant sigma
        in which it moves (+1, -1; 2 when unconstrained), with ``pseudo`` the
        gradient of f + g_i on it."""
        self.missing |= M_ORTHANT
        pseudo[0] = gi
        return 0

    cdef double clip(self, Py_ssize_t i, double y, int sigma) noexcept nogil:
        """Project y onto the piece ``sigma`` of :meth:`orthant` (capability "orthant")."""
        self.missing |= M_CLIP
        return y

    cdef bint slope(self, Py_ssize_t i, double xi, double* s) noexcept nogil:
        """Whether g_i is differentiable at xi (inside one smooth piece), and
        its derivative there in ``s`` (capability "slope")."""
        self.missing |= M_SLOPE
        s[0] = 0.0
        return False

    cdef bint l1_weight(self, Py_ssize_t i, double* lam, bint* positive) noexcept nogil:
        """Whether g_i = lam |x| (+ indicator of x >= 0 with ``positive``)
        (capability "path", with :meth:`box_bounds`)."""
        self.missing |= M_L1
        return False

    cdef bint box_bounds(self, Py_ssize_t i, double* lower, double* upper) noexcept nogil:
        """Whether g_i is the indicator of [lower, upper] (capability "path")."""
        self.missing |= M_BOX
        return False

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
        return -(2.0 * gi * d + d * d / w + 2.0 * self.delta_value(i, xi, d))

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

    def smooth_at(self, x):
        """Whether g_i is differentiable at x_i, for every coordinate (the
        generalized support: non-zero for L1, strictly inside for a box);
        needs the "slope" capability."""
        cdef const double[::1] xv = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(self.n, dtype=bool)
        cdef unsigned char[::1] o = out.view(np.uint8)
        cdef Py_ssize_t i
        cdef double s
        for i in range(self.n):
            o[i] = self.slope(i, xv[i], &s)
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


cdef class CyL1(CyPenalty):
    """g_i(x) = lam_i |x|, or lam_i x + indicator(x >= 0) with ``positive``."""
    cdef const double[::1] lam
    cdef bint positive

    def __init__(self, lam, bint positive):
        CyPenalty.__init__(self, lam.shape[0])
        self.lam = lam
        self.positive = positive

    cdef double value_i(self, Py_ssize_t i, double xi) noexcept nogil:
        if self.positive and xi < 0.0:
            return INFINITY
        return self.lam[i] * fabs(xi)

    cdef double prox(self, Py_ssize_t i, double z, double step) noexcept nogil:
        # NaN comes out as NaN (every comparison fails): a diverging solve
        # must not be turned into zeros
        cdef double t = step * self.lam[i]
        if z > t:
            return z - t
        if z < -t and not self.positive:
            return z + t
        return 0.0 if z == z else z

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
        return 0.0 if self.positive and xi < 0.0 else xi

    cdef int face(self, Py_ssize_t i, double xi) noexcept nogil:
        return (xi > 0.0) - (xi < 0.0)

    cdef double delta_value(self, Py_ssize_t i, double xi, double d) noexcept nogil:
        # Near a solution the change is tiny while lam |xi + d| and lam |xi|
        # are not: when xi + d keeps the sign of xi (or xi = 0),
        # lam (|xi + d| - |xi|) = lam s d exactly.
        cdef double y = xi + d
        if y != 0.0 and (xi == 0.0 or (xi > 0.0) == (y > 0.0)):
            return self.lam[i] * d if y > 0.0 else -self.lam[i] * d
        if self.positive and y < -_ROUNDING * (fabs(xi) + fabs(d)):
            return INFINITY
        return self.lam[i] * (fabs(y) - fabs(xi))

    cdef int orthant(self, Py_ssize_t i, double xi, double gi, double eps,
                     double* pseudo) noexcept nogil:
        # the sign split of Schmidt (2010): away from 0 the orthant of xi; near
        # 0 the one the minimum-norm subgradient points into, if any
        cdef double lam = self.lam[i]
        if xi > eps:
            pseudo[0] = gi + lam
            return 1
        if xi < -eps and not self.positive:
            pseudo[0] = gi - lam
            return -1
        if gi + lam < 0.0:
            pseudo[0] = gi + lam
            return 1
        if gi - lam > 0.0 and not self.positive:
            pseudo[0] = gi - lam
            return -1
        pseudo[0] = 0.0
        return 0

    cdef double clip(self, Py_ssize_t i, double y, int sigma) noexcept nogil:
        if (sigma > 0 and y < 0.0) or (sigma < 0 and y > 0.0):
            return 0.0
        return y

    cdef bint slope(self, Py_ssize_t i, double xi, double* s) noexcept nogil:
        s[0] = self.lam[i] if xi > 0.0 else -self.lam[i]
        return xi != 0.0

    cdef bint l1_weight(self, Py_ssize_t i, double* lam, bint* positive) noexcept nogil:
        lam[0] = self.lam[i]
        positive[0] = self.positive
        return True


cdef inline double _clamp(double z, double lo, double hi) noexcept nogil:
    """z clipped to [lo, hi]; NaN stays NaN (unlike fmin/fmax)."""
    if z < lo:
        return lo
    if z > hi:
        return hi
    return z


cdef class CyBox(CyPenalty):
    """Indicator of lower_i <= x <= upper_i (infinite bounds allowed)."""
    cdef const double[::1] lower
    cdef const double[::1] upper

    def __init__(self, lower, upper):
        CyPenalty.__init__(self, lower.shape[0])
        self.lower = lower
        self.upper = upper

    cdef double value_i(self, Py_ssize_t i, double xi) noexcept nogil:
        if xi < self.lower[i] or xi > self.upper[i]:
            return INFINITY
        return 0.0

    cdef double prox(self, Py_ssize_t i, double z, double step) noexcept nogil:
        return _clamp(z, self.lower[i], self.upper[i])

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
        return _clamp(xi, self.lower[i], self.upper[i])

    cdef double delta_value(self, Py_ssize_t i, double xi, double d) noexcept nogil:
        # xi + d may miss a bound by rounding when d was computed as y - xi
        cdef double y = xi + d, slack = _ROUNDING * (fabs(xi) + fabs(d))
        return 0.0 if self.lower[i] - slack <= y <= self.upper[i] + slack else INFINITY

    cdef int orthant(self, Py_ssize_t i, double xi, double gi, double eps,
                     double* pseudo) noexcept nogil:
        # active: near a bound with the gradient pushing against it
        pseudo[0] = gi
        if (xi < self.lower[i] + eps and gi > 0.0) or (xi > self.upper[i] - eps and gi < 0.0):
            return 0
        return 2

    cdef double clip(self, Py_ssize_t i, double y, int sigma) noexcept nogil:
        return _clamp(y, self.lower[i], self.upper[i])

    cdef bint slope(self, Py_ssize_t i, double xi, double* s) noexcept nogil:
        s[0] = 0.0
        return self.lower[i] < xi < self.upper[i]

    cdef bint box_bounds(self, Py_ssize_t i, double* lower, double* upper) noexcept nogil:
        lower[0] = self.lower[i]
        upper[0] = self.upper[i]
        return True

    cdef int face(self, Py_ssize_t i, double xi) noexcept nogil:
        if xi <= self.lower[i]:
            return -1
        if xi >= self.upper[i]:
            return 1
        return 0
