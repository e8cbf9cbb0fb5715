"""Compiled kernel of the Gaussian process linear system."""
import numpy as np
from cython.parallel cimport prange

from bcd.core._problem cimport CyProblem
from bcd.gp._kernel cimport CyKernelEvaluator

cdef enum:
    TILE = 256
    # non-zero entries of a from which its product goes through the symmetry
    # of K (when they are also three quarters of the points): at 1,000
    # points the two products took about the same time (0.93), at 2,000
    # the symmetric one 0.59-0.79 of the whole one's
    SYMMETRIC_MIN = 1024


cdef class CyGaussianProcess(CyProblem):
    """f(a) = a'(K + s I)a / 2 - y'a with K evaluated on the fly.

    The gradient g = (K + s I)a - y is always tracked: updating it after a
    step on block b costs the columns K[:, b], exactly what computing
    grad_b f would cost without tracking, and it makes stopping tests O(n).
    With a column cache, recently used columns of K are kept (up to
    ``cache_columns`` of them) and reused instead of recomputed.
    """
    cdef CyKernelEvaluator K
    cdef const double[::1] y
    cdef readonly double noise
    cdef double[::1] u              # (K + s I)_b d for a prepared direction
    cdef int[::1] nz                # scratch: indices of non-zero a
    cdef int[::1] zr                # and of its zeros (one entry more)
    cdef double[::1] wz             # and their values
    cdef bint fresh                 # g was just recomputed from a
    cdef Py_ssize_t n_nonzero       # non-zero entries of a
    cdef double dir_gd, dir_dhd
    # column cache (clock replacement)
    cdef readonly Py_ssize_t cache_columns
    cdef double[::1] cache
    cdef int[::1] slot_of           # coordinate -> slot or -1
    cdef int[::1] owner             # slot -> coordinate or -1
    cdef unsigned char[::1] ref
    cdef Py_ssize_t hand
    cdef int[::1] blk_slot
    cdef int[::1] miss
    cdef int[::1] miss_slot
    cdef readonly Py_ssize_t cache_hits, cache_misses
    # inputs of the columns last asked for by hessian_entries, gathered: a
    # greedy rule asks again with one more column (its growing block)
    cdef int[::1] g_cols
    cdef double[::1] g_inputs
    cdef Py_ssize_t n_gathered
    cdef int[::1] g_pos             # coordinate -> 1 + its position among g_cols, or 0
    cdef int[::1] col_pos           # coordinate -> 1 + its position among cols, or 0

    def __init__(self, CyKernelEvaluator K, y, double noise, lipschitz, Py_ssize_t max_block=1,
                 Py_ssize_t cache_columns=0):
        n = K.n1
        CyProblem.__init__(self, n, lipschitz, True)
        self.K = K
        self.y = y
        self.noise = noise
        self.u = np.zeros(n)
        self.nz = np.zeros(n, dtype=np.int32)
        self.wz = np.zeros(n)
        self.zr = np.zeros(n + 1, dtype=np.int32)
        self.col_pos = np.zeros(n, dtype=np.int32)
        self.g_pos = np.zeros(n, dtype=np.int32)
        self.cache_columns = max(0, min(cache_columns, n))
        if self.cache_columns:
            self.cache = np.zeros(self.cache_columns * n)
            self.slot_of = np.full(n, -1, dtype=np.int32)
            self.owner = np.full(self.cache_columns, -1, dtype=np.int32)
            self.ref = np.zeros(self.cache_columns, dtype=np.uint8)
        self.reserve(max_block)
        with nogil:
            self.reset()

    def reserve(self, Py_ssize_t max_block, Py_ssize_t max_dense=-1):
        grew = CyProblem.reserve(self, max_block, max_dense)
        cdef Py_ssize_t size = self.reserved
        # sized by what is reserved, whether or not this call grew it: the
        # base constructor reserves before these buffers exist
        if self.g_cols is None or self.g_cols.shape[0] < size:
            self.g_cols = np.zeros(size, dtype=np.int32)
            self.g_inputs = np.zeros(self.K.n_metrics * self.K.dim * size)
            self.n_gathered = 0
        if self.cache_columns and (self.blk_slot is None or self.blk_slot.shape[0] < size):
            self.blk_slot = np.zeros(size, dtype=np.int32)
            self.miss = np.zeros(size, dtype=np.int32)
            self.miss_slot = np.zeros(size, dtype=np.int32)
        return grew

    cdef Py_ssize_t _gradient_into(self, double* out) noexcept nogil:
        """out = (K + s I) a - y, over the non-zero entries of a; where they
        are most entries, through the symmetry of K (about half the kernel
        entries: CyKernelEvaluator.gemv_symmetric).  Returns the count of
        non-zero entries."""
        cdef Py_ssize_t j, m = 0, z = 0
        for j in range(self.n):
            out[j] = self.noise * self.x[j] - self.y[j]
            if self.x[j] != 0.0:
                self.nz[m] = <int>j
                self.wz[m] = self.x[j]
                m += 1
            else:
                self.zr[z] = <int>j
                z += 1
        if m:
            if not (m >= SYMMETRIC_MIN and 4 * m >= 3 * self.n and self.K.symmetric and
                    self.K.gemv_symmetric(&self.nz[0], &self.wz[0], m, &self.zr[0], z, out)):
                self.K.gemv_cols(&self.nz[0], &self.wz[0], m, out)
        return m

    cdef void reset(self) noexcept nogil:
        self.n_nonzero = self._gradient_into(&self.g[0])
        self.all_dirty = True
        self.fresh = True

    cdef bint state_exact(self) noexcept nogil:
        return self.fresh

    cdef double grad_coord(self, Py_ssize_t j) noexcept nogil:
        return self.g[j]

    cdef void full_gradient(self, double* out) noexcept nogil:
        cdef Py_ssize_t j
        if self.fresh:
            for j in range(self.n):
                out[j] = self.g[j]
        else:
            self._gradient_into(out)

    cdef double objective(self) noexcept nogil:
        # (K + s I) a = g + y, so f = a'(g + y)/2 - y'a = a'(g - y)/2
        cdef Py_ssize_t j
        cdef double s = 0.0
        for j in range(self.n):
            s += self.x[j] * (self.g[j] - self.y[j])
        return 0.5 * s

    cdef bint hessian_entries(self, const int* rows, Py_ssize_t nr, const int* cols,
                              Py_ssize_t nc, double* out) noexcept nogil:
        # rows against gathered columns, whatever the size: the entries are
        # then bitwise those of hessian_row, whichever path asks for them
        if self._gather(cols, nc):
            self.K.entries_gathered(rows, nr, &self.g_inputs[0], self.g_cols.shape[0], nc, out)
        else:
            self.K.entries(rows, nr, cols, nc, out)
        self._add_noise(rows, nr, cols, nc, out)
        return True

    cdef int row_threads(self, Py_ssize_t nc, Py_ssize_t work) noexcept nogil:
        return self.K.threads_for(work) if nc <= self.g_cols.shape[0] else 0

    cdef Py_ssize_t row_scratch(self, Py_ssize_t nc) noexcept nogil:
        return (self.K.n_metrics + 1) * nc

    cdef void rows_prepare(self, const int* cols, Py_ssize_t nc) noexcept nogil:
        self._gather(cols, nc)

    cdef void hessian_row(self, int row, const int* cols, Py_ssize_t c0, Py_ssize_t c1,
                          double* scratch, double* out) noexcept nogil:
        cdef int p = self.g_pos[row] - 1
        # the inputs are gathered (metric, dim, cap): those of columns c0 on
        # start at offset c0, with the same leading dimension
        self.K.rows_gathered(&row, 1, &self.g_inputs[c0], self.g_cols.shape[0], c1 - c0,
                             scratch, out)
        if c0 <= p < c1:
            out[p - c0] += self.noise

    cdef bint _gather(self, const int* cols, Py_ssize_t nc) noexcept nogil:
        """Gather the inputs of ``cols`` for :meth:`CyKernelEvaluator.entries_gathered`
        (False when there are more than the reserved block size), and keep
        ``g_pos`` the positions of these columns (the last of a repeated
        one).  A greedy rule asks again with one more column: only the new
        ones are copied."""
        cdef Py_ssize_t c, keep = 0, cap = self.g_cols.shape[0], first
        if nc > cap:
            return False
        while keep < self.n_gathered and keep < nc and self.g_cols[keep] == cols[keep]:
            keep += 1
        # positions of the kept columns stay, unless a dropped column
        # clears one of them (a repeated column)
        first = keep if keep == self.n_gathered else 0
        for c in range(keep, self.n_gathered):
            self.g_pos[self.g_cols[c]] = 0
        if keep < nc:
            self.K.gather(cols + keep, nc - keep, &self.g_inputs[keep], cap)
            for c in range(keep, nc):
                self.g_cols[c] = cols[c]
        for c in range(first, nc):
            self.g_pos[cols[c]] = <int>c + 1
        self.n_gathered = nc
        return True

    cdef void _add_noise(self, const int* rows, Py_ssize_t nr, const int* cols,
                         Py_ssize_t nc, double* out) noexcept nogil:
        """out[r * nc + c] += noise where rows[r] == cols[c], in O(nr + nc)
        (O(nr nc) when ``cols`` repeats a coordinate)."""
        cdef Py_ssize_t r, c
        cdef int p
        cdef bint repeated = False
        for c in range(nc):
            if self.col_pos[cols[c]]:
                repeated = True
            self.col_pos[cols[c]] = <int>c + 1
        if not repeated:
            for r in range(nr):
                p = self.col_pos[rows[r]]
                if p:
                    out[r * nc + p - 1] += self.noise
        for c in range(nc):
            self.col_pos[cols[c]] = 0
        if repeated:
            for r in range(nr):
                for c in range(nc):
                    if rows[r] == cols[c]:
                        out[r * nc + c] += self.noise

    cdef bint block_hessian_bound(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        return self.hessian_entries(blk, nb, blk, nb, H)

    cdef bint block_hessian(self, const int* blk, Py_ssize_t nb, double* H) noexcept nogil:
        return self.hessian_entries(blk, nb, blk, nb, H)

    cdef bint block_hessian_bound_lower(self, const int* blk, Py_ssize_t nb,
                                        double* H) noexcept nogil:
        # K is symmetric: half the entries (those of a block of every point
        # are most of a dense solve's kernel evaluations)
        if not self._gather(blk, nb):
            return self.hessian_entries(blk, nb, blk, nb, H)
        self.K.entries_gathered_lower(blk, nb, &self.g_inputs[0], self.g_cols.shape[0], H)
        self._add_noise(blk, nb, blk, nb, H)
        return True

    cdef bint bound_matvec(self, const int* support, const double* v, Py_ssize_t ns,
                           double* out) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.n):
            out[j] = 0.0
        self._block_product(support, v, ns, out)
        return True

    cdef void _block_product(self, const int* blk, const double* d, Py_ssize_t nb,
                             double* out) noexcept nogil:
        """out += (K + s I)[:, b] d, through the column cache when there is one."""
        cdef Py_ssize_t a
        for a in range(nb):
            out[blk[a]] += self.noise * d[a]
        if self.cache_columns == 0 or nb > self.cache_columns:
            self.K.gemv_cols(blk, d, nb, out)
            return
        self._cached_product(blk, d, nb, out)

    cdef void _cached_product(self, const int* blk, const double* d, Py_ssize_t nb,
                              double* out) noexcept nogil:
        cdef Py_ssize_t a, nm = 0, t, i, i0, i1, n = self.n
        cdef Py_ssize_t n_tiles = (n + TILE - 1) // TILE
        cdef int sl
        cdef double* col
        # pin the block's cached columns, then give the others a slot each
        for a in range(nb):
            sl = self.slot_of[blk[a]]
            self.blk_slot[a] = sl
            if sl >= 0:
                self.ref[sl] = 2
                self.cache_hits += 1
        for a in range(nb):
            if self.blk_slot[a] >= 0:
                continue
            self.cache_misses += 1
            while True:
                sl = <int>self.hand
                self.hand = (self.hand + 1) % self.cache_columns
                if self.ref[sl] == 0:
                    break
                if self.ref[sl] == 1:
                    self.ref[sl] = 0
            if self.owner[sl] >= 0:
                self.slot_of[self.owner[sl]] = -1
            self.owner[sl] = blk[a]
            self.slot_of[blk[a]] = sl
            self.ref[sl] = 2
            self.blk_slot[a] = sl
            self.miss[nm] = blk[a]
            self.miss_slot[nm] = sl
            nm += 1
        if nm:
            self.K.columns_to(&self.miss[0], nm, &self.cache[0], &self.miss_slot[0])
        for a in range(nb):
            self.ref[self.blk_slot[a]] = 1
        for t in prange(n_tiles, schedule="static", num_threads=self.K.threads_for(n * nb)):
            i0 = t * TILE
            i1 = min(i0 + TILE, n)
            for a in range(nb):
                col = &self.cache[self.blk_slot[a] * n]
                for i in range(i0, i1):
                    out[i] += col[i] * d[a]

    cdef inline void _add_to_x(self, Py_ssize_t j, double v) noexcept nogil:
        """x_j += v, keeping the count of non-zero entries."""
        self.n_nonzero -= self.x[j] != 0.0
        self.x[j] += v
        self.n_nonzero += self.x[j] != 0.0

    cdef void apply(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        cdef Py_ssize_t a
        for a in range(nb):
            self._add_to_x(blk[a], d[a])
        self.all_dirty = True
        if not self.has_penalty and (self.cache_columns == 0 or nb > self.cache_columns):
            if self.n_nonzero <= nb:
                # the gradient from x costs no more kernel entries than the
                # update (the first step, or one block of every point), and
                # is exact: the engine's check of convergence then takes it
                # as it is, where it would evaluate the kernel again
                self.n_nonzero = self._gradient_into(&self.g[0])
                self.fresh = True
                return
        self._block_product(blk, d, nb, &self.g[0])
        self.fresh = False

    cdef void direction_prepare(self, const int* blk, Py_ssize_t nb, const double* d) noexcept nogil:
        cdef Py_ssize_t a, j
        self.record_direction(blk, nb, d)
        for j in range(self.n):
            self.u[j] = 0.0
        self._block_product(blk, d, nb, &self.u[0])
        self.dir_gd = 0.0
        self.dir_dhd = 0.0
        for a in range(nb):
            self.dir_gd += self.g[blk[a]] * d[a]
            self.dir_dhd += d[a] * self.u[blk[a]]

    cdef double direction_delta(self, double alpha) noexcept nogil:
        return alpha * (self.dir_gd + 0.5 * alpha * self.dir_dhd)

    cdef void direction_commit(self, double alpha) noexcept nogil:
        cdef Py_ssize_t a, j
        for a in range(self.dir_nb):
            self._add_to_x(self.dir_blk[a], alpha * self.dir_d[a])
        for j in range(self.n):
            self.g[j] += alpha * self.u[j]
        self.all_dirty = True
        self.fresh = False

    def cache_stats(self):
        """``(hits, misses)`` of the column cache."""
        return self.cache_hits, self.cache_misses
