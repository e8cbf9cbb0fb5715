"""Base class of compiled problems."""
import numpy as np
from libc.math cimport fabs, isfinite, NAN

from bcd.core._linalg cimport CyBlockWork, lambda_max


cdef class CyProblem:

    def __init__(self, Py_ssize_t n, lipschitz, bint tracking):
        self.n = n
        self.x = np.zeros(n)
        self.lipschitz = np.ascontiguousarray(lipschitz, dtype=np.float64)
        self.tracking = tracking
        self._gbuf = np.zeros(n)
        if tracking:
            self.g = np.zeros(n)
            self.dirty = np.zeros(n, dtype=np.int32)
            self.dirty_mark = np.zeros(n, dtype=np.uint8)
        CyProblem.reserve(self, 1)

    def reserve(self, Py_ssize_t max_block, Py_ssize_t max_dense=-1):
        """Make the scratch fit blocks of up to ``max_block`` coordinates.

        ``max_dense`` (default ``max_block``) is the largest block whose
        dense curvature matrix is formed; forest-structured blocks, solved
        by message passing, form none.  Scratch only grows; subclasses
        extend this and call it first.  Returns True when the vectors grew.
        """
        if max_dense < 0:
            max_dense = max_block
        if max_dense > self.reserved_dense:
            self.reserved_dense = max_dense
            self._bw = CyBlockWork(max_dense)
            self._hbuf = np.zeros(max_dense * max_dense)
        if max_block <= self.reserved:
            return False
        self.reserved = max_block
        self.dir_blk = np.zeros(max_block, dtype=np.int32)
        self.dir_d = np.zeros(max_block)
        return True

    def set_ridge(self, l2):
        """Add the ridge term 1/2 sum_j r_j x_j^2 with r = ``l2`` (a scalar
        or one weight per coordinate, all >= 0; 0 removes the term).  Only
        problems whose oracles include it call this."""
        r = np.broadcast_to(np.asarray(l2, dtype=np.float64), (self.n,))
        self.has_ridge = bool(np.any(r != 0.0))
        self.ridge = np.ascontiguousarray(r) if self.has_ridge else None

    cdef double ridge_value(self) noexcept nogil:
        cdef Py_ssize_t j
        cdef double s = 0.0
        if not self.has_ridge:
            return 0.0
        for j in range(self.n):
            s += self.ridge[j] * self.x[j] * self.x[j]
        return 0.5 * s

    def set_penalty(self, CyPenalty penalty):
        """Minimize f + g with the separable penalty g (None: f alone).

        The iterate is projected onto the domain of g, so every iterate
        is feasible.
        """
        cdef Py_ssize_t i
        self.penalty = penalty
        self.has_penalty = penalty is not None
        if self.has_penalty:
            for i in range(self.n):
                self.x[i] = penalty.project(i, self.x[i])
            with nogil:
                self.reset()

    def set_x(self, x0):
        """Set the iterate (copied) and recompute all state exactly."""
        np.asarray(self.x)[:] = x0
        with nogil:
            self.reset()

    def get_x(self):
        return np.array(self.x)

    def get_objective(self):
        cdef double v
        with nogil:
            v = self.full_objective()
        return v

    def get_gradient(self):
        out = np.empty(self.n)
        cdef double[::1] o = out
        with nogil:
            self.full_gradient(&o[0])
        return out

    def get_block_matrix(self, block, bint exact=False, bint lower=False):
        """H_b (the bound of Appendix B, or the Hessian with ``exact``) or
        None; with ``lower``, the lower triangle of the bound as the matrix
        update forms it (zeros above the diagonal)."""
        cdef int[::1] b = np.ascontiguousarray(block, dtype=np.int32)
        cdef Py_ssize_t nb = b.shape[0]
        H = np.zeros((nb, nb))
        cdef double[:, ::1] Hv = H
        cdef bint ok
        self.reserve(nb)          # grows only
        with nogil:
            if exact:
                ok = self.block_hessian(&b[0], nb, &Hv[0, 0])
            elif lower:
                ok = self.block_hessian_bound_lower(&b[0], nb, &Hv[0, 0])
            else:
                ok = self.block_hessian_bound(&b[0], nb, &Hv[0, 0])
        return (np.tril(H) if lower else H) if ok else None

    def get_hessian_entries(self, rows, cols):
        """The Hessian entries H[rows][:, cols] of a quadratic f, or None."""
        cdef int[::1] r = np.ascontiguousarray(rows, dtype=np.int32)
        cdef int[::1] c = np.ascontiguousarray(cols, dtype=np.int32)
        out = np.zeros((r.shape[0], c.shape[0]))
        cdef double[:, ::1] o = out
        cdef bint ok = True
        if r.shape[0] and c.shape[0]:
            with nogil:
                ok = self.hessian_entries(&r[0], r.shape[0], &c[0], c.shape[0], &o[0, 0])
        return out if ok else None

    def blocks_lipschitz(self, const int[::1] unit_ptr, const int[::1] unit_coords):
        """L_b for every block of a partition given in CSR-like form."""
        cdef Py_ssize_t u, nu = unit_ptr.shape[0] - 1
        out = np.empty(nu)
        cdef double[::1] o = out
        with nogil:
            for u in range(nu):
                o[u] = self.block_lipschitz(&unit_coords[unit_ptr[u]],
                                            unit_ptr[u + 1] - unit_ptr[u])
        return out

    # ------------------------------------------------ subclass interface
    cdef void reset(self) noexcept nogil:
        pass

    cdef bint state_exact(self) noexcept nogil:
        return False

    cdef double grad_coord(self, Py_ssize_t j) noexcept nogil:
        return 0.0

    cdef void full_gradient(self, double* out) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.n):
            out[j] = self.grad_coord(j)

    cdef double objective(self) noexcept nogil:
        return 0.0

    cdef void direction_prepare(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        pass

    cdef double direction_delta(self, double alpha) noexcept nogil:
        return 0.0

    cdef void direction_commit(self, double alpha) noexcept nogil:
        pass

    cdef bint block_hessian_bound(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        return False

    cdef bint block_hessian_bound_lower(self, const int* blk, Py_ssize_t nb,
                                        double* H) noexcept nogil:
        return self.block_hessian_bound(blk, nb, H)

    cdef bint block_hessian(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        return False

    cdef bint bound_matvec(self, const int* support, const double* v, Py_ssize_t ns,
                           double* out) noexcept nogil:
        return False

    cdef bint hessian_entries(self, const int* rows, Py_ssize_t nr, const int* cols,
                              Py_ssize_t nc, double* out) noexcept nogil:
        """out[r * nc + c] = (Hessian of f)[rows[r], cols[c]] for a quadratic f
        (the greedy maximum-improvement rule reads them); False when unavailable."""
        return False

    cdef int row_threads(self, Py_ssize_t nc, Py_ssize_t work) noexcept nogil:
        """Threads worth evaluating ``work`` Hessian entries in rows against
        ``nc`` columns by :meth:`hessian_row`, one piece of a row per call
        from any thread; 0 (this default) when rows are only available
        together, by :meth:`hessian_entries`.

        The greedy maximum-improvement rule evaluates a few rows per added
        coordinate, hundreds of times per block: problems whose entries are
        costly (kernels) let a team of threads share them, so that each
        step costs no thread wake-up.  The entries must not depend on how a
        row is cut into pieces."""
        return 0

    cdef Py_ssize_t row_scratch(self, Py_ssize_t nc) noexcept nogil:
        """Doubles of scratch a thread passes to :meth:`hessian_row`."""
        return 0

    cdef void rows_prepare(self, const int* cols, Py_ssize_t nc) noexcept nogil:
        """Get ready for :meth:`hessian_row` calls against ``cols``, distinct
        coordinates (on one thread, before them)."""
        pass

    cdef void hessian_row(self, int row, const int* cols, Py_ssize_t c0, Py_ssize_t c1,
                          double* scratch, double* out) noexcept nogil:
        """out[c - c0] = (Hessian of f)[row, cols[c]] for c0 <= c < c1, with
        the ``cols`` of the last :meth:`rows_prepare`; safe to call from
        several threads at once when :meth:`row_threads` allows more than
        one."""
        self.hessian_entries(&row, 1, cols + c0, c1 - c0, out)

    # ------------------------------------------------------------ provided
    cdef void record_direction(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        """Keep a copy of a direction being prepared, with the sums
        r_b x_b . d and r_b d . d of the ridge term's change (``ridge_delta``)."""
        cdef Py_ssize_t a
        cdef double r
        self.dir_nb = nb
        self.dir_xd = 0.0
        self.dir_dd = 0.0
        for a in range(nb):
            self.dir_blk[a] = blk[a]
            self.dir_d[a] = d[a]
            if self.has_ridge:
                r = self.ridge[blk[a]]
                self.dir_xd += r * self.x[blk[a]] * d[a]
                self.dir_dd += r * d[a] * d[a]

    cdef void apply(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        self.direction_prepare(blk, nb, d)
        self.direction_commit(1.0)

    cdef double block_lipschitz(self, const int* blk, Py_ssize_t nb) noexcept nogil:
        """lambda_max of the block bound H_b; the sum of L_i without one."""
        cdef Py_ssize_t a
        cdef double s = 0.0
        if nb == 1:
            return self.lipschitz[blk[0]]
        if self.block_hessian_bound(blk, nb, &self._hbuf[0]):
            s = lambda_max(self._bw, &self._hbuf[0], nb)
            if s > 0.0:
                return s
            s = 0.0
        # the sum of coordinate constants is always a valid (loose) bound
        for a in range(nb):
            s += self.lipschitz[blk[a]]
        return s

    cdef void grad_block(self, const int* blk, Py_ssize_t nb, double* out) noexcept nogil:
        cdef Py_ssize_t a
        if self.tracking:
            for a in range(nb):
                out[a] = self.g[blk[a]]
        else:
            for a in range(nb):
                out[a] = self.grad_coord(blk[a])

    cdef double full_objective(self) noexcept nogil:
        """F(x) = f(x) + g(x)."""
        if self.has_penalty:
            return self.objective() + self.penalty.value(&self.x[0])
        return self.objective()

    cdef double optimality(self, bint exact) noexcept nogil:
        """Return ||grad f(x)||_inf, or with a penalty g the largest distance
        of -grad_i f(x) to the subdifferential of g_i at x_i; NaN if a
        gradient entry or a coordinate of x is not finite.

        With ``exact`` (or without tracking) the gradient is recomputed from
        the current state; otherwise the tracked gradient is read.
        """
        cdef Py_ssize_t j
        cdef double m = 0.0, v
        cdef double* gp
        if self.tracking and not exact:
            gp = &self.g[0]
        else:
            gp = &self._gbuf[0]
            self.full_gradient(gp)
            if self.tracking:
                # the tracked gradient is refreshed; greedy rules rescore
                for j in range(self.n):
                    self.g[j] = gp[j]
                self.all_dirty = True
        if self.has_penalty:
            for j in range(self.n):
                v = self.penalty.dist(j, self.x[j], gp[j])
                if v > m:
                    m = v
                elif not (isfinite(gp[j]) and isfinite(self.x[j])):
                    return NAN
            return m
        for j in range(self.n):
            v = fabs(gp[j])
            if v > m:
                m = v
            elif not (isfinite(gp[j]) and isfinite(self.x[j])):
                return NAN
        return m

    cdef double optimality_on(self, const int* coords, Py_ssize_t nc) noexcept nogil:
        """The optimality measure of :meth:`optimality` over ``coords`` only
        (a working set), from the tracked gradient or from gradient entries
        computed on demand: cost proportional to those coordinates."""
        cdef Py_ssize_t k, j
        cdef double m = 0.0, v, gj
        for k in range(nc):
            j = coords[k]
            gj = self.g[j] if self.tracking else self.grad_coord(j)
            v = self.penalty.dist(j, self.x[j], gj) if self.has_penalty else fabs(gj)
            if v > m:
                m = v
            elif not (isfinite(gj) and isfinite(self.x[j])):
                return NAN
        return m

    def kkt_scores(self):
        """``(scores, smooth, gradient)`` at the current iterate, with the
        state recomputed from x first: the optimality measure of every coordinate
        (``|grad_i f|``, or the distance of ``-grad_i f`` to the
        subdifferential of g_i) and whether g_i is differentiable at x_i
        (without a penalty: whether x_i is non-zero), i.e. the generalized
        support, and grad f(x)."""
        scores = np.empty(self.n)
        smooth = np.empty(self.n, dtype=bool)
        cdef double[::1] sv = scores
        cdef double[::1] gp = self._gbuf
        cdef Py_ssize_t j
        cdef double s
        cdef bint has_slope = self.has_penalty and self.penalty.has_slope
        with nogil:
            self.reset()
            self.full_gradient(&gp[0])
            for j in range(self.n):
                if self.has_penalty:
                    sv[j] = self.penalty.dist(j, self.x[j], gp[j])
                else:
                    sv[j] = fabs(gp[j])
        xs = np.asarray(self.x)
        if has_slope:
            smooth[:] = self.penalty.smooth_at(xs)
        else:
            smooth[:] = xs != 0.0
        return scores, smooth, np.array(gp)

    cdef void project_block(self, const int* blk, Py_ssize_t nb) noexcept nogil:
        """Put x_b back into the domain of the penalty (a step x + (y - x)
        can miss a bound by rounding)."""
        cdef Py_ssize_t k
        for k in range(nb):
            self.x[blk[k]] = self.penalty.project(blk[k], self.x[blk[k]])

    cdef void clear_dirty(self) noexcept nogil:
        cdef Py_ssize_t a
        if not self.tracking:
            return
        for a in range(self.n_dirty):
            self.dirty_mark[self.dirty[a]] = 0
        self.n_dirty = 0
        self.all_dirty = False
