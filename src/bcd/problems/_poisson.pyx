"""Compiled Poisson regression: phi(z; y) = exp(z) - y z."""
from libc.math cimport exp, expm1

from bcd.core._matrix cimport CyMatrix
from bcd.problems._linear cimport CyLinearModel


cdef class CyPoisson(CyLinearModel):
    """f(x) = sum_i s_i (exp(z_i) - y_i z_i) + l2/2 ||x||^2 with z = A x and
    sample weights s (1 without them).

    State: z and w = s phi'(z) = s (exp(z) - y).  phi'' = exp(z) is unbounded, so
    there is no curvature bound: ``block_hessian_bound`` and
    ``bound_matvec`` report that they are unavailable, and blocks are
    moved by line searches and Newton steps on the exact block Hessian.
    """

    def __init__(self, CyMatrix A, y, l2, scale, bint tracking, Py_ssize_t max_block=1,
                 sample_weight=None):
        CyLinearModel.__init__(self, A, y, l2, 0.0, scale, tracking, max_block, sample_weight)

    cdef double dloss(self, double z, double y) noexcept nogil:
        return exp(z) - y

    cdef double data_loss(self) noexcept nogil:
        cdef Py_ssize_t i
        cdef double s = 0.0
        if self.weighted:
            for i in range(self.z.shape[0]):
                s += self.sw[i] * (exp(self.z[i]) - self.target[i] * self.z[i])
        else:
            for i in range(self.z.shape[0]):
                s += exp(self.z[i]) - self.target[i] * self.z[i]
        return s

    cdef double rows_delta(self, double alpha) noexcept nogil:
        # s (exp(z + h) - exp(z) - y h) = s exp(z) expm1(h) - s y h, with
        # s exp(z) = w + s y
        cdef Py_ssize_t k, i
        cdef double s = 0.0, h, sy
        cdef bint dense = self.A.dense
        for k in range(self.dir_nt):
            i = k if dense else self.touched[k]
            h = alpha * self.dzc[k]
            sy = self.sw[i] * self.target[i] if self.weighted else self.target[i]
            s += (self.w[i] + sy) * expm1(h) - sy * h
        return s

    cdef double curvature_at(self, Py_ssize_t i) noexcept nogil:
        if self.weighted:
            return self.sw[i] * exp(self.z[i])
        return exp(self.z[i])

    cdef bint block_hessian_bound(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        return False

    cdef bint bound_matvec(self, const int* support, const double* v, Py_ssize_t ns,
                           double* out) noexcept nogil:
        return False
