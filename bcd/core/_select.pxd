from bcd.core._problem cimport Problem
from bcd.core._random cimport RNG


cdef class Selector:
    """Chooses which coordinates to update.

    The coordinates are grouped into *units*: the blocks of a fixed
    partition, or single coordinates for variable blocks.  Each iteration a
    selector picks ``k`` units (1 for a fixed partition, tau for variable
    blocks) and returns the union of their coordinates, sorted.
    """
    cdef readonly Py_ssize_t n_units
    cdef readonly Py_ssize_t k
    cdef readonly bint needs_gradient
    cdef const int[::1] unit_ptr
    cdef const int[::1] unit_coords
    cdef const double[::1] unit_L
    cdef int[::1] chosen
    cdef RNG rng
    cdef public double last_L       # L_b of the last block when known, else 0

    cdef Py_ssize_t pick(self, Problem prob) noexcept nogil
    cdef Py_ssize_t select(self, Problem prob, int* block) noexcept nogil
    cdef void notify(self, Problem prob) noexcept nogil
