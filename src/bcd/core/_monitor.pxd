from bcd.core._problem cimport CyProblem


cdef class CyMonitor:
    """Watches a solve: the engine calls ``start`` once and ``after_step``
    after every accepted block step, without the GIL."""
    cdef void start(self, CyProblem prob) except *
    cdef void after_step(self, CyProblem prob, const int* blk, Py_ssize_t nb,
                         Py_ssize_t it) noexcept nogil


cdef class CyFaceMonitor(CyMonitor):
    cdef signed char[::1] face
    cdef const signed char[::1] target
    cdef bint has_target
    cdef bint unsigned
    cdef Py_ssize_t mismatched
    cdef readonly Py_ssize_t changed_at
    cdef readonly Py_ssize_t target_reached_at
