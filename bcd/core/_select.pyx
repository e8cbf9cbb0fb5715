"""Block selection rules: cyclic, random, Lipschitz sampling and greedy."""
import numpy as np
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

    def draw(self, Problem prob, Py_ssize_t count):
        """Return the next ``count`` blocks this rule picks at the current
        iterate of ``prob``, without stepping (for inspection and tests)."""
        cdef Py_ssize_t c, nb, size = 0
        for c in range(self.n_units):
            size = max(size, self.unit_ptr[c + 1] - self.unit_ptr[c])
        buf = np.zeros(max(1, size * self.k), dtype=np.int32)
        cdef int[::1] b = buf
        out = []
        for c in range(count):
            with nogil:
                nb = self.select(prob, &b[0])
            out.append(buf[:nb].copy())
        return out

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
            t = self.perm[r]
            self.perm[r] = self.perm[a]
            self.perm[a] = t
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
    give the GSL and GSD rules.  Ties go to the smaller unit index, so the
    choice is a function of the scores alone.

    Exact top-k selection at a cost proportional to the gradient entries a
    step changes.  Instead of a max-heap (whose every changed key costs a
    log N sift) the selector keeps a *candidate set* C and a threshold
    theta, the K-th best score at the last full scan, with the invariant
    that every unit outside C scores below theta.  A changed score costs
    O(1): compare with theta and append to C if it is at or above it.  The
    top k are read from C, dropping members that fell below theta; only
    when fewer than k members remain at or above theta is a full O(N) scan
    made to rebuild C.  K ~ sqrt(N k) balances scanning C every iteration
    against the occasional full scan.  When a step changes more entries
    than a scan costs (dense rows), scores are recomputed and scanned
    directly.
    """
    cdef const double[::1] coord_weight
    cdef const double[::1] unit_scale
    cdef const int[::1] unit_of
    cdef double[::1] key
    cdef int[::1] cand
    cdef unsigned char[::1] in_cand
    cdef Py_ssize_t n_cand
    cdef Py_ssize_t cap                 # K
    cdef int[::1] scan_heap             # min-heap of the K best during a scan
    cdef double theta_key
    cdef int theta_unit
    cdef bint keys_stale                # keys must be recomputed from g
    cdef bint cand_valid                # the candidate-set invariant holds

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed,
                 unit_of, coord_weight, unit_scale):
        Selector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        self.needs_gradient = True
        self.unit_of = unit_of
        self.coord_weight = coord_weight
        self.unit_scale = unit_scale
        N = self.n_units
        self.key = np.zeros(N)
        self.cap = int(min(N, max(4 * self.k, 32, int(np.sqrt(N * self.k)))))
        self.cand = np.zeros(N, dtype=np.int32)
        self.in_cand = np.zeros(N, dtype=np.uint8)
        self.scan_heap = np.zeros(self.cap, dtype=np.int32)
        self.n_cand = 0
        self.keys_stale = True
        self.cand_valid = False

    cdef inline bint _better(self, int a, int b) noexcept nogil:
        return self.key[a] > self.key[b] or (self.key[a] == self.key[b] and a < b)

    cdef inline bint _at_least_theta(self, int u) noexcept nogil:
        return self.key[u] > self.theta_key or (self.key[u] == self.theta_key and u <= self.theta_unit)

    cdef double _score(self, Problem prob, int u) noexcept nogil:
        cdef Py_ssize_t p
        cdef int i
        cdef double s = 0.0, gi
        for p in range(self.unit_ptr[u], self.unit_ptr[u + 1]):
            i = self.unit_coords[p]
            gi = prob.g[i]
            s += self.coord_weight[i] * gi * gi
        return s * self.unit_scale[u]

    cdef void _rescore_all(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t u
        for u in range(self.n_units):
            self.key[u] = self._score(prob, <int>u)
        self.keys_stale = False

    cdef void notify(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t a
        cdef int u
        if prob.all_dirty or prob.n_dirty > self.n_units // 4:
            self.keys_stale = True
            self.cand_valid = False
            return
        if self.keys_stale:
            return
        for a in range(prob.n_dirty):
            u = self.unit_of[prob.dirty[a]]
            if u < 0:
                continue
            # a unit listed twice is simply re-scored twice
            self.key[u] = self._score(prob, u)
            if self.cand_valid and not self.in_cand[u] and self._at_least_theta(u):
                self.in_cand[u] = 1
                self.cand[self.n_cand] = u
                self.n_cand += 1

    cdef Py_ssize_t pick(self, Problem prob) noexcept nogil:
        cdef Py_ssize_t a, nc = 0, kept = 0, k = self.k
        cdef int u
        cdef int* c = &self.chosen[0]
        if self.keys_stale:
            # every score changed: a k-best scan is cheaper than rebuilding C
            self._rescore_all(prob)
            return self._scan_top()
        if not self.cand_valid:
            self._rebuild_candidates()
        # top k of the members still at or above theta; drop the others
        for a in range(self.n_cand):
            u = self.cand[a]
            if not self._at_least_theta(u):
                self.in_cand[u] = 0
                continue
            self.cand[kept] = u
            kept += 1
            nc = self._insert_best(c, nc, u)
        self.n_cand = kept
        if kept < k:
            self._rebuild_candidates()
            nc = 0
            for a in range(self.n_cand):
                nc = self._insert_best(c, nc, self.cand[a])
        return nc

    cdef inline Py_ssize_t _insert_best(self, int* c, Py_ssize_t nc, int u) noexcept nogil:
        """Insert u into the best-first list c of length nc (at most k)."""
        cdef Py_ssize_t a, k = self.k
        if nc == k and not self._better(u, c[k - 1]):
            return nc
        a = nc if nc < k else k - 1
        while a > 0 and self._better(u, c[a - 1]):
            c[a] = c[a - 1]
            a -= 1
        c[a] = u
        return nc + 1 if nc < k else nc

    cdef Py_ssize_t _scan_top(self) noexcept nogil:
        """Top k units by one pass over all keys."""
        cdef Py_ssize_t u, nc = 0
        for u in range(self.n_units):
            nc = self._insert_best(&self.chosen[0], nc, <int>u)
        return nc

    cdef void _rebuild_candidates(self) noexcept nogil:
        """C = the K best units; theta = the worst of them."""
        cdef Py_ssize_t u, a, K = self.cap, nh = 0
        cdef int* h = &self.scan_heap[0]
        for a in range(self.n_cand):
            self.in_cand[self.cand[a]] = 0
        # bounded min-heap (worst on top) of the K best seen so far
        for u in range(self.n_units):
            if nh < K:
                h[nh] = <int>u
                self._heap_up(h, nh)
                nh += 1
            elif self._better(<int>u, h[0]):
                h[0] = <int>u
                self._heap_down(h, nh)
        self.theta_unit = h[0]
        self.theta_key = self.key[h[0]]
        for a in range(nh):
            self.cand[a] = h[a]
            self.in_cand[h[a]] = 1
        self.n_cand = nh
        self.cand_valid = True

    cdef void _heap_up(self, int* h, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t parent
        cdef int t
        while i > 0:
            parent = (i - 1) >> 1
            if self._better(h[parent], h[i]):
                t = h[i]
                h[i] = h[parent]
                h[parent] = t
                i = parent
            else:
                break

    cdef void _heap_down(self, int* h, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t i = 0, c, worst
        cdef int t
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            worst = c
            if c + 1 < n and self._better(h[c], h[c + 1]):
                worst = c + 1
            if self._better(h[i], h[worst]):
                t = h[i]
                h[i] = h[worst]
                h[worst] = t
                i = worst
            else:
                break
