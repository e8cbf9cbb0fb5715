cdef class Problem:
    """Compiled state and oracles of a smooth objective f.

    Subclasses hold the data and whatever incremental state makes a block
    step cheap (residuals, margins, scores).  The engine talks to a problem
    only through the methods below, so adding a problem never touches the
    loop.

    When ``tracking`` is on, the full gradient ``g`` is kept up to date by
    :meth:`apply` and the coordinates whose gradient entry changed are listed
    in ``dirty`` (greedy rules read them).  When it is off, gradient entries
    are computed on demand by :meth:`grad_coord`.
    """
    cdef readonly Py_ssize_t n
    cdef double[::1] x
    cdef double[::1] g
    cdef readonly const double[::1] lipschitz   # L_i, coordinate-wise bounds
    cdef readonly bint tracking
    cdef int[::1] dirty
    cdef unsigned char[::1] dirty_mark
    cdef Py_ssize_t n_dirty
    cdef bint all_dirty
    cdef double[::1] _gbuf                   # scratch for full gradients

    # -- to implement in subclasses -------------------------------------
    cdef void reset(self) noexcept nogil
    cdef double grad_coord(self, Py_ssize_t j) noexcept nogil
    cdef void full_gradient(self, double* out) noexcept nogil
    cdef double objective(self) noexcept nogil
    cdef void apply(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil
    cdef double block_lipschitz(self, const int* blk, Py_ssize_t nb) noexcept nogil

    # -- provided -------------------------------------------------------
    cdef void grad_block(self, const int* blk, Py_ssize_t nb, double* out) noexcept nogil
    cdef double optimality(self, bint exact) noexcept nogil
    cdef void clear_dirty(self) noexcept nogil
    cdef inline void mark_dirty(self, Py_ssize_t j) noexcept nogil:
        if not self.dirty_mark[j]:
            self.dirty_mark[j] = 1
            self.dirty[self.n_dirty] = <int>j
            self.n_dirty += 1
