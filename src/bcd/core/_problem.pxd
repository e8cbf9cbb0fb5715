cimport cython
from bcd.core._linalg cimport CyBlockWork
from bcd.penalties._penalty cimport CyPenalty

cdef class CyProblem:
    """Compiled state and oracles of a smooth objective f.

    Subclasses hold the data and whatever incremental state makes a block
    step cheap (residuals, margins, scores).  The engine and the updates
    talk to a problem only through the methods below, so adding a problem
    never touches them.

    When ``tracking`` is on, the full gradient ``g`` is kept up to date by
    every step, and the coordinates whose gradient entry changed are listed
    in ``dirty`` (greedy rules read them); ``all_dirty`` says that nearly
    all changed.  Without tracking, gradient entries are computed on demand
    by :meth:`grad_coord`.

    A step along a direction d on block b is taken in three parts so that
    line searches are cheap (Section 4.4 of the paper): ``direction_prepare``
    computes what one unit of d changes in the state, ``direction_delta``
    returns f(x + alpha U_b d) - f(x) from it, and ``direction_commit``
    moves x by alpha d.  ``apply`` is prepare + commit with alpha = 1.
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
    cdef double[::1] _gbuf                      # scratch for full gradients
    cdef CyBlockWork _bw                          # scratch for block_lipschitz
    cdef double[::1] _hbuf
    cdef int[::1] dir_blk                       # the prepared direction's block
    cdef double[::1] dir_d                      # and its values
    cdef Py_ssize_t dir_nb
    cdef double dir_xd, dir_dd                  # sum r_j x_j d_j and sum r_j d_j^2 over b
    cdef const double[::1] ridge                # per-coordinate l2 weights r_j (has_ridge)
    cdef readonly bint has_ridge
    cdef readonly Py_ssize_t reserved           # largest block the scratch fits
    cdef readonly Py_ssize_t reserved_dense     # largest block with dense scratch
    cdef CyPenalty penalty                  # the non-smooth part g, if any
    cdef readonly bint has_penalty

    # -- to implement in subclasses -------------------------------------
    cdef void reset(self) noexcept nogil
    # True when reset() would change nothing: the tracked state was computed
    # from x exactly, and x has not changed since (default False)
    cdef bint state_exact(self) noexcept nogil
    cdef double grad_coord(self, Py_ssize_t j) noexcept nogil
    cdef void full_gradient(self, double* out) noexcept nogil
    cdef double objective(self) noexcept nogil
    cdef void direction_prepare(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil
    cdef double direction_delta(self, double alpha) noexcept nogil
    cdef void direction_commit(self, double alpha) noexcept nogil
    # optional curvature oracles (return False when unavailable)
    cdef bint block_hessian_bound(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil
    # the entries (r, c), c <= r, of H_b (row-major): what the Cholesky and
    # eigendecomposition solves read; the others may be left unset
    cdef bint block_hessian_bound_lower(self, const int* blk, Py_ssize_t nb,
                                        double* H) noexcept nogil
    cdef bint block_hessian(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil
    cdef bint bound_matvec(self, const int* support, const double* v, Py_ssize_t ns,
                           double* out) noexcept nogil
    cdef bint hessian_entries(self, const int* rows, Py_ssize_t nr, const int* cols,
                              Py_ssize_t nc, double* out) noexcept nogil
    # rows of Hessian entries evaluated by a team of threads, one row each
    cdef int row_threads(self, Py_ssize_t nc, Py_ssize_t work) noexcept nogil
    cdef Py_ssize_t row_scratch(self, Py_ssize_t nc) noexcept nogil
    cdef void rows_prepare(self, const int* cols, Py_ssize_t nc) noexcept nogil
    cdef void hessian_row(self, int row, const int* cols, Py_ssize_t c0, Py_ssize_t c1,
                          double* scratch, double* out) noexcept nogil

    # -- provided -------------------------------------------------------
    @cython.final
    cdef void record_direction(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil
    cdef void apply(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil
    cdef double block_lipschitz(self, const int* blk, Py_ssize_t nb) noexcept nogil
    @cython.final
    cdef void grad_block(self, const int* blk, Py_ssize_t nb, double* out) noexcept nogil
    @cython.final
    cdef double full_objective(self) noexcept nogil
    @cython.final
    cdef double optimality(self, bint exact) noexcept nogil
    @cython.final
    cdef double optimality_on(self, const int* coords, Py_ssize_t nc) noexcept nogil
    @cython.final
    cdef void project_block(self, const int* blk, Py_ssize_t nb) noexcept nogil
    @cython.final
    cdef void clear_dirty(self) noexcept nogil
    cdef inline double ridge_at(self, Py_ssize_t j) noexcept nogil:
        """r_j, the l2 weight of coordinate j (0 without a ridge term)."""
        return self.ridge[j] if self.has_ridge else 0.0
    cdef inline double ridge_delta(self, double alpha) noexcept nogil:
        """Change of the ridge term along the prepared direction; grouped
        so that a huge alpha on tiny data does not overflow."""
        if not self.has_ridge:
            return 0.0
        return alpha * (self.dir_xd + 0.5 * alpha * self.dir_dd)
    @cython.final
    cdef double ridge_value(self) noexcept nogil
    cdef inline void mark_dirty(self, Py_ssize_t j) noexcept nogil:
        if not self.dirty_mark[j]:
            self.dirty_mark[j] = 1
            self.dirty[self.n_dirty] = <int>j
            self.n_dirty += 1
