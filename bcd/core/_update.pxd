from bcd.core._problem cimport Problem
from bcd.core._select cimport Selector


cdef class Update:
    """Computes the step d for the selected block from its gradient."""
    cdef int step(self, Problem prob, Selector sel, const int* blk, Py_ssize_t nb,
                  const double* gb, double* d) noexcept nogil
