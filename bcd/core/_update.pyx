"""Block updates."""
from bcd.core._problem cimport Problem
from bcd.core._select cimport Selector


cdef class Update:

    cdef int step(self, Problem prob, Selector sel, const int* blk, Py_ssize_t nb,
                  const double* gb, double* d) noexcept nogil:
        return 1


cdef class GradientUpdate(Update):
    """d = -grad_b f / L_b with L_b = lambda_max of the block bound (eq. 10).

    L_b comes precomputed with a fixed partition and is computed from the
    small block matrix for variable blocks.
    """

    cdef int step(self, Problem prob, Selector sel, const int* blk, Py_ssize_t nb,
                  const double* gb, double* d) noexcept nogil:
        cdef Py_ssize_t a
        cdef double L = sel.last_L
        if L <= 0.0:
            L = prob.block_lipschitz(blk, nb)
        if not L > 0.0:
            return 1
        for a in range(nb):
            d[a] = -gb[a] / L
        return 0
