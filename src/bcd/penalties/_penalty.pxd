cdef class CyPenalty:
    """Compiled separable penalty g(x) = sum_i g_i(x_i).

    Subclasses implement the per-coordinate pieces; everything is called
    without the GIL from the engine, the selectors and the updates.
    """
    cdef readonly Py_ssize_t n
    cdef unsigned int missing      # base methods reached (see verify)
    cdef readonly bint has_slope   # implements slope (set by verify)

    cdef double value_i(self, Py_ssize_t i, double xi) noexcept nogil
    cdef double prox(self, Py_ssize_t i, double z, double step) noexcept nogil
    cdef double dist(self, Py_ssize_t i, double xi, double gi) noexcept nogil
    cdef double project(self, Py_ssize_t i, double xi) noexcept nogil
    cdef int face(self, Py_ssize_t i, double xi) noexcept nogil
    cdef double delta_value(self, Py_ssize_t i, double xi, double d) noexcept nogil
    cdef int orthant(self, Py_ssize_t i, double xi, double gi, double eps,
                     double* pseudo) noexcept nogil
    cdef double clip(self, Py_ssize_t i, double y, int sigma) noexcept nogil
    cdef bint slope(self, Py_ssize_t i, double xi, double* s) noexcept nogil
    cdef bint l1_weight(self, Py_ssize_t i, double* lam, bint* positive) noexcept nogil
    cdef bint box_bounds(self, Py_ssize_t i, double* lower, double* upper) noexcept nogil

    # provided
    cdef double value(self, const double* x) noexcept nogil
    cdef double progress2(self, Py_ssize_t i, double xi, double gi, double w) noexcept nogil
