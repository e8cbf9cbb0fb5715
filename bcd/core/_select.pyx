"""Block selection rules: cyclic, random, Lipschitz sampling and greedy."""
import numpy as np
from libc.math cimport log2
from libc.stdint cimport uint64_t

from bcd.core._problem cimport Problem
from bcd.core._random cimport RNG, rng_seed, rng_below, rng_uniform


cdef inline void _sort_ints(int* a, Py_ssize_t n) noexcept nogil:
    """Insertion sort for the short coordinate lists of a block."""
    cdef Py_ssize_t i, j
    cdef int v
    for i in range(1, n):
        v = a[i]
        j = i - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


cdef class Selector:

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed):
        self.unit_ptr = unit_ptr
        self.unit_coords = unit_coords
        self.unit_L = unit_L
        self.n_units = unit_ptr.shape[0] - 1
        self.k = max(1, min(k, self.n_units))
        self.chosen = np.zeros(self.k, dtype=np.int32)
        rng_seed(&self.rng, <uint64_t>seed[0], <uint64_t>seed[1])

    cdef Py_ssize_t pick(self, Problem prob) noexcept nogil:
        return 0

    cdef void notify(self, Problem prob) noexcept nogil:
        pass

    cdef Py_ssize_t select(self, Problem prob, int* block) noexcept nogil:
        """Fill ``block`` with the coordinates to update; return their count."""
        cdef Py_ssize_t nc = self.pick(prob)
        cdef Py_ssize_t a, p, nb = 0
        cdef int u
        for a in range(nc):
            u = self.chosen[a]
            for p in range(self.unit_ptr[u], self.unit_ptr[u + 1]):
                block[nb] = self.unit_coords[p]
                nb += 1
        if nc == 1:
            self.last_L = self.unit_L[self.chosen[0]]
        else:
            self.last_L = 0.0
            _sort_ints(block, nb)
        return nb


cdef class CyclicSelector(Selector):
    """Units in a cycle; with ``reshuffle`` a fresh random order every pass."""
    cdef int[::1] order
    cdef Py_ssize_t pos
    cdef bint reshuffle

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed, bint reshuffle):
        Selector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        self.order = np.arange(self.n_units, dtype=np.int32)
        self.reshuffle = reshuffle
        self.pos = 0
        if reshuffle:
            self._shuffle()

    cdef void _shuffle(self) noexcept nogil:
        cdef Py_ssize_t i, r
        cdef int t
        for i in range(self.n_units - 1, 0, -1):
            r = rng_below(&self.rng, i + 1)
            t = self.order[i]
            self.order[i] = self.order[r]
            self.order[r] = t

    cdef Py_ssize_t pick(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t a, nc
        if self.pos >= self.n_units:
            self.pos = 0
            if self.reshuffle:
                self._shuffle()
        nc = min(self.k, self.n_units - self.pos)
        for a in range(nc):
            self.chosen[a] = self.order[self.pos + a]
        self.pos += nc
        return nc


cdef class RandomSelector(Selector):
    """k distinct units uniformly at random (tau-nice sampling)."""
    cdef int[::1] perm

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed):
        Selector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        self.perm = np.arange(self.n_units, dtype=np.int32)

    cdef Py_ssize_t pick(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t a, r
        cdef int t
        # partial Fisher-Yates: the first k entries of perm are a uniform sample
        for a in range(self.k):
            r = a + rng_below(&self.rng, self.n_units - a)
            t = self.perm[a]
            self.perm[a] = self.perm[r]
            self.perm[r] = t
            self.chosen[a] = t
        return self.k


cdef class LipschitzSelector(Selector):
    """k distinct units drawn successively with probability proportional to L.

    A Fenwick tree over the weights gives O(log N) draws; drawn units are
    removed for the rest of the draw and the touched tree nodes restored
    exactly afterwards.
    """
    cdef double[::1] tree
    cdef double total
    cdef int[::1] saved_idx
    cdef double[::1] saved_val
    cdef Py_ssize_t top_bit

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed):
        Selector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        cdef Py_ssize_t N = self.n_units, i, j
        self.tree = np.zeros(N + 1)
        for i in range(N):
            j = i + 1
            self.tree[j] += self.unit_L[i]
            if j + (j & -j) <= N:
                self.tree[j + (j & -j)] += self.tree[j]
        self.total = float(np.sum(unit_L))
        self.top_bit = 1
        while self.top_bit * 2 <= N:
            self.top_bit *= 2
        depth = 2
        while (1 << (depth - 2)) <= N:
            depth += 1
        self.saved_idx = np.zeros(self.k * depth, dtype=np.int32)
        self.saved_val = np.zeros(self.k * depth)

    cdef Py_ssize_t pick(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t a, pos, step, j, ns = 0, N = self.n_units
        cdef double u, remaining = self.total, wgt
        for a in range(self.k):
            u = rng_uniform(&self.rng) * remaining
            pos = 0
            step = self.top_bit
            while step > 0:
                if pos + step <= N and self.tree[pos + step] <= u:
                    pos += step
                    u -= self.tree[pos]
                step >>= 1
            if pos >= N:        # rounding at the top end
                pos = N - 1
            # pos is the 0-based unit; remove its weight from the tree
            wgt = self._weight(pos)
            if wgt <= 0.0:
                # only possible through rounding; take the last positive unit
                pos = N - 1
                while pos > 0 and self._weight(pos) <= 0.0:
                    pos -= 1
                wgt = self._weight(pos)
            self.chosen[a] = <int>pos
            remaining -= wgt
            j = pos + 1
            while j <= N:
                self.saved_idx[ns] = <int>j
                self.saved_val[ns] = self.tree[j]
                ns += 1
                self.tree[j] -= wgt
                j += j & -j
        while ns > 0:
            ns -= 1
            self.tree[self.saved_idx[ns]] = self.saved_val[ns]
        return self.k

    cdef double _weight(self, Py_ssize_t pos) noexcept nogil:
        """Current weight of unit ``pos`` recovered from the tree."""
        cdef Py_ssize_t j = pos + 1
        cdef Py_ssize_t stop = j - (j & -j)
        cdef double w = self.tree[j]
        j -= 1
        while j > stop:
            w -= self.tree[j]
            j -= j & -j
        return w


cdef class GreedySelector(Selector):
    """The k units with the largest scores.

    score(u) = unit_scale[u] * sum_{i in u} coord_weight[i] * g_i^2.  With
    unit weights and scales this is the Gauss-Southwell rule; other weights
    give the GSL and GSD rules.

    Scores live in an indexed max-heap.  After a step only the units of the
    gradient entries that changed are re-scored and sifted, unless that
    would cost more than re-scoring everything and re-heapifying in O(N);
    the cheaper of the two is chosen every iteration.  Ties are broken by
    the smaller unit index, so the choice does not depend on the path.
    """
    cdef const double[::1] coord_weight
    cdef const double[::1] unit_scale
    cdef const int[::1] unit_of
    cdef double[::1] key
    cdef int[::1] heap
    cdef int[::1] where
    cdef int[::1] frontier
    cdef unsigned char[::1] unit_mark
    cdef int[::1] dirty_units
    cdef bint stale
    cdef double log_n

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed,
                 unit_of, coord_weight, unit_scale):
        Selector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        self.needs_gradient = True
        self.unit_of = unit_of
        self.coord_weight = coord_weight
        self.unit_scale = unit_scale
        N = self.n_units
        self.key = np.zeros(N)
        self.heap = np.arange(N, dtype=np.int32)
        self.where = np.arange(N, dtype=np.int32)
        self.frontier = np.zeros(2 * self.k + 2, dtype=np.int32)
        self.unit_mark = np.zeros(N, dtype=np.uint8)
        self.dirty_units = np.zeros(N, dtype=np.int32)
        self.stale = True
        self.log_n = log2(<double>N + 2.0)

    cdef inline bint _better(self, int a, int b) noexcept nogil:
        return self.key[a] > self.key[b] or (self.key[a] == self.key[b] and a < b)

    cdef double _score(self, Problem prob, int u) noexcept nogil:
        cdef Py_ssize_t p
        cdef int i
        cdef double s = 0.0, gi
        for p in range(self.unit_ptr[u], self.unit_ptr[u + 1]):
            i = self.unit_coords[p]
            gi = prob.g[i]
            s += self.coord_weight[i] * gi * gi
        return s * self.unit_scale[u]

    cdef void _swap(self, Py_ssize_t p, Py_ssize_t q) noexcept nogil:
        cdef int a = self.heap[p], b = self.heap[q]
        self.heap[p] = b
        self.heap[q] = a
        self.where[b] = <int>p
        self.where[a] = <int>q

    cdef void _sift_up(self, Py_ssize_t p) noexcept nogil:
        cdef Py_ssize_t parent
        while p > 0:
            parent = (p - 1) >> 1
            if self._better(self.heap[p], self.heap[parent]):
                self._swap(p, parent)
                p = parent
            else:
                break

    cdef void _sift_down(self, Py_ssize_t p) noexcept nogil:
        cdef Py_ssize_t c, best, N = self.n_units
        while True:
            c = 2 * p + 1
            if c >= N:
                break
            best = c
            if c + 1 < N and self._better(self.heap[c + 1], self.heap[c]):
                best = c + 1
            if self._better(self.heap[best], self.heap[p]):
                self._swap(p, best)
                p = best
            else:
                break

    cdef void _rebuild(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t u, p
        for u in range(self.n_units):
            self.key[u] = self._score(prob, <int>u)
        for p in range(self.n_units // 2 - 1, -1, -1):
            self._sift_down(p)
        self.stale = False

    cdef void notify(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t a, nd = 0, p
        cdef int u
        cdef double old
        if self.stale:
            return
        # re-scoring d units and sifting costs about d log N; a rebuild
        # costs about 3 N.  Do whichever is cheaper.
        if prob.all_dirty or prob.n_dirty * self.log_n > 3.0 * self.n_units:
            self.stale = True
            return
        for a in range(prob.n_dirty):
            u = self.unit_of[prob.dirty[a]]
            if u < 0 or self.unit_mark[u]:
                continue
            self.unit_mark[u] = 1
            self.dirty_units[nd] = u
            nd += 1
        for a in range(nd):
            u = self.dirty_units[a]
            self.unit_mark[u] = 0
            old = self.key[u]
            self.key[u] = self._score(prob, u)
            p = self.where[u]
            if self.key[u] > old:
                self._sift_up(p)
            else:
                self._sift_down(p)
            # equal keys keep their place: the index tie-break is unchanged

    cdef Py_ssize_t pick(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t nf, a, i, c, best, child, parent
        cdef int pos_
        if self.stale:
            self._rebuild(prob)
        if self.k == 1:
            self.chosen[0] = self.heap[0]
            return 1
        # best-first walk of the heap: the frontier is itself a small heap of
        # heap positions; each pop yields the next best unit
        self.frontier[0] = 0
        nf = 1
        for a in range(self.k):
            pos_ = self.frontier[0]
            self.chosen[a] = self.heap[pos_]
            nf -= 1
            self.frontier[0] = self.frontier[nf]
            self._frontier_down(nf)
            for c in range(2 * pos_ + 1, 2 * pos_ + 3):
                if c < self.n_units:
                    self.frontier[nf] = <int>c
                    nf += 1
                    self._frontier_up(nf - 1)
        return self.k

    cdef inline bint _fbetter(self, int p, int q) noexcept nogil:
        return self._better(self.heap[p], self.heap[q])

    cdef void _frontier_up(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t parent
        cdef int t
        while i > 0:
            parent = (i - 1) >> 1
            if self._fbetter(self.frontier[i], self.frontier[parent]):
                t = self.frontier[i]
                self.frontier[i] = self.frontier[parent]
                self.frontier[parent] = t
                i = parent
            else:
                break

    cdef void _frontier_down(self, Py_ssize_t nf) noexcept nogil:
        cdef Py_ssize_t i = 0, c, best
        cdef int t
        while True:
            c = 2 * i + 1
            if c >= nf:
                break
            best = c
            if c + 1 < nf and self._fbetter(self.frontier[c + 1], self.frontier[c]):
                best = c + 1
            if self._fbetter(self.frontier[best], self.frontier[i]):
                t = self.frontier[i]
                self.frontier[i] = self.frontier[best]
                self.frontier[best] = t
                i = best
            else:
                break
