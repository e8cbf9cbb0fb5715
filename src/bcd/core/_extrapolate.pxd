from bcd.core._problem cimport CyProblem


cdef class CyAnderson:
    cdef readonly Py_ssize_t depth         # K: iterates combined per extrapolation
    cdef int[::1] scope
    cdef Py_ssize_t ns
    cdef Py_ssize_t count
    cdef double[::1] xs                     # (K + 1) x ns stored iterates, row-major
    cdef double[::1] gram                   # K x K
    cdef double[::1] coef                   # K
    cdef double[::1] d                      # ns: the extrapolation step
    cdef readonly Py_ssize_t attempts
    cdef readonly Py_ssize_t accepted

    cdef bint after_pass(self, CyProblem prob) noexcept nogil
