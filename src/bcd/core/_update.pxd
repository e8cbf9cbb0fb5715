from bcd.core._linalg cimport BlockWork
from bcd.core._problem cimport Problem
from bcd.core._select cimport Selector


cdef class Update:
    """Moves the selected block: computes a direction and takes the step.

    ``step`` returns 0 when it moved (or found nothing to do on a zero
    gradient) and 1 when the block cannot make progress.
    """
    cdef double[::1] d
    cdef double[::1] H
    cdef BlockWork bw
    cdef Py_ssize_t reserved
    # optional record of accepted steps: alpha, f change, alpha * g.d
    cdef bint tracing
    cdef Py_ssize_t n_trace
    cdef double[::1] tr_alpha
    cdef double[::1] tr_delta
    cdef double[::1] tr_slope

    cdef int step(self, Problem prob, Selector sel, const int* blk, Py_ssize_t nb,
                  const double* gb) noexcept nogil
    cdef void record(self, double alpha, double delta, double slope) noexcept nogil
    cdef int armijo(self, Problem prob, double gd, double alpha) noexcept nogil
    cdef double steepest(self, const double* gb, Py_ssize_t nb) noexcept nogil
