"""Block selection rules: cyclic, random, Lipschitz sampling and greedy."""
import numpy as np
from libc.stdint cimport uint64_t

from libc.math cimport fabs, sqrt
from cython.parallel cimport parallel, threadid
from libc.stdlib cimport calloc, malloc, free

from bcd.core._linalg cimport CyBlockWork, negative_pivot, spd_solve
from bcd.core._problem cimport CyProblem
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


cdef inline bint _gt(const double* key, int a, int b) noexcept nogil:
    """a ranks above b: larger key, ties to the smaller index."""
    return key[a] > key[b] or (key[a] == key[b] and a < b)


cdef inline bint _ge_thr(const double* key, int u, double tk, int tu) noexcept nogil:
    """u ranks at or above the threshold (tk, tu)."""
    return key[u] > tk or (key[u] == tk and u <= tu)


cdef class CySelector:

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed):
        self.unit_ptr = unit_ptr
        self.unit_coords = unit_coords
        self.unit_L = unit_L
        self.n_units = unit_ptr.shape[0] - 1
        self.k = max(1, min(k, self.n_units))
        self.chosen = np.zeros(self.k, dtype=np.int32)
        rng_seed(&self.rng, <uint64_t>seed[0], <uint64_t>seed[1])

    cdef Py_ssize_t pick(self, CyProblem prob) noexcept nogil:
        return 0

    cdef void notify(self, CyProblem prob) noexcept nogil:
        pass

    cdef bint solved_block(self, const int* blk, Py_ssize_t nb, double* d) noexcept nogil:
        """Fill d with the block minimizer of a quadratic f over the block just
        selected when the rule computed it while choosing (False otherwise)."""
        return False

    def capacity(self):
        """The largest number of coordinates one block can have."""
        cdef Py_ssize_t c, size = 0
        for c in range(self.n_units):
            size = max(size, self.unit_ptr[c + 1] - self.unit_ptr[c])
        return size * self.k

    def draw(self, CyProblem prob, Py_ssize_t count):
        """Return the next ``count`` blocks this rule picks at the current
        iterate of ``prob``, without stepping (for inspection and tests)."""
        cdef Py_ssize_t c, nb
        buf = np.zeros(max(1, self.capacity()), dtype=np.int32)
        cdef int[::1] b = buf
        out = []
        for c in range(count):
            with nogil:
                nb = self.select(prob, &b[0])
            out.append(buf[:nb].copy())
        return out

    cdef Py_ssize_t select(self, CyProblem prob, int* block) noexcept nogil:
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
            self.last_unit = self.chosen[0]
            self.last_L = self.unit_L[self.chosen[0]]
        else:
            self.last_unit = -1
            self.last_L = 0.0
            _sort_ints(block, nb)
        return nb


cdef class CyCyclicSelector(CySelector):
    """Units in a cycle; with ``reshuffle`` a fresh random order every pass."""
    cdef int[::1] order
    cdef Py_ssize_t pos
    cdef bint reshuffle

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed, bint reshuffle):
        CySelector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
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

    cdef Py_ssize_t pick(self, CyProblem prob) noexcept nogil:
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


cdef class CyRandomSelector(CySelector):
    """k distinct units uniformly at random (tau-nice sampling)."""
    cdef int[::1] perm

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed):
        CySelector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        self.perm = np.arange(self.n_units, dtype=np.int32)

    cdef Py_ssize_t pick(self, CyProblem prob) noexcept nogil:
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


cdef class CyLipschitzSelector(CySelector):
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
        CySelector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
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

    cdef Py_ssize_t pick(self, CyProblem prob) noexcept nogil:
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


cdef class CyGreedySelector(CySelector):
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
    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed,
                 unit_of, coord_weight, unit_scale):
        CySelector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
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
        self.simple_score = (type(self) is CyGreedySelector
                             and self.unit_coords.shape[0] == self.n_units)

    cdef double _score(self, CyProblem prob, int u) noexcept nogil:
        cdef Py_ssize_t p
        cdef int i
        cdef double s = 0.0, gi
        if prob.has_penalty:
            # the -q form: twice the decrease of a proximal step with
            # L = 1 / (coord_weight * unit_scale); g_i^2 w without a penalty
            for p in range(self.unit_ptr[u], self.unit_ptr[u + 1]):
                i = self.unit_coords[p]
                s += prob.penalty.progress2(i, prob.x[i], prob.g[i],
                                            self.coord_weight[i] * self.unit_scale[u])
            if s <= 0.0 and self.unit_ptr[u + 1] - self.unit_ptr[u] == 1 and \
                    not prob.penalty.slope(i, prob.x[i], &gi):
                # ties at zero go to coordinates where g is differentiable
                # (footnote 23): a block then holds the current support
                # before coordinates held at a kink or bound
                s = -1.0
            return s
        for p in range(self.unit_ptr[u], self.unit_ptr[u + 1]):
            i = self.unit_coords[p]
            gi = prob.g[i]
            s += self.coord_weight[i] * gi * gi
        return s * self.unit_scale[u]

    cdef void _rescore_all(self, CyProblem prob) noexcept nogil:
        cdef Py_ssize_t u
        cdef int i
        cdef double gi
        cdef double* key = &self.key[0]
        cdef const double* g = &prob.g[0]
        cdef const int* coords = &self.unit_coords[0]
        cdef const double* w = &self.coord_weight[0]
        cdef const double* sc = &self.unit_scale[0]
        if self.simple_score and not prob.has_penalty:
            for u in range(self.n_units):
                i = coords[u]
                gi = g[i]
                key[u] = w[i] * gi * gi * sc[u]
        else:
            for u in range(self.n_units):
                self.key[u] = self._score(prob, <int>u)
        self.keys_stale = False

    cdef void notify(self, CyProblem prob) noexcept nogil:
        cdef Py_ssize_t a
        cdef int u
        if prob.all_dirty or prob.n_dirty > self.n_units // 4:
            self.keys_stale = True
            self.cand_valid = False
            return
        if self.keys_stale:
            return
        cdef int i
        cdef double gi
        for a in range(prob.n_dirty):
            i = prob.dirty[a]
            u = self.unit_of[i]
            if u < 0:
                continue
            # a unit listed twice is simply re-scored twice
            if self.simple_score and not prob.has_penalty:
                gi = prob.g[i]
                self.key[u] = self.coord_weight[i] * gi * gi * self.unit_scale[u]
            else:
                self.key[u] = self._score(prob, u)
            if self.cand_valid and not self.in_cand[u] and \
                    _ge_thr(&self.key[0], u, self.theta_key, self.theta_unit):
                self.in_cand[u] = 1
                self.cand[self.n_cand] = u
                self.n_cand += 1

    cdef Py_ssize_t pick(self, CyProblem prob) noexcept nogil:
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
        cdef const double* key = &self.key[0]
        cdef int* cand = &self.cand[0]
        cdef double tk = self.theta_key
        cdef int tu = self.theta_unit
        for a in range(self.n_cand):
            u = cand[a]
            if not _ge_thr(key, u, tk, tu):
                self.in_cand[u] = 0
                continue
            cand[kept] = u
            kept += 1
            if nc < k or _gt(key, u, c[k - 1]):
                nc = self._insert_best(c, nc, u)
        self.n_cand = kept
        if kept < k:
            self._rebuild_candidates()
            nc = 0
            for a in range(self.n_cand):
                nc = self._insert_best(c, nc, self.cand[a])
        return nc

    cdef Py_ssize_t _insert_best(self, int* c, Py_ssize_t nc, int u) noexcept nogil:
        """Insert u into the best-first list c of length nc (at most k)."""
        cdef Py_ssize_t a, k = self.k
        cdef const double* key = &self.key[0]
        if nc == k and not _gt(key, u, c[k - 1]):
            return nc
        a = nc if nc < k else k - 1
        while a > 0 and _gt(key, u, c[a - 1]):
            c[a] = c[a - 1]
            a -= 1
        c[a] = u
        return nc + 1 if nc < k else nc

    cdef Py_ssize_t _scan_top(self) noexcept nogil:
        """Top k units by one pass over all keys."""
        cdef Py_ssize_t u, nc = 0, k = self.k
        cdef int* c = &self.chosen[0]
        cdef const double* key = &self.key[0]
        for u in range(self.n_units):
            if nc < k or _gt(key, <int>u, c[k - 1]):
                nc = self._insert_best(c, nc, <int>u)
        return nc

    cdef void _rebuild_candidates(self) noexcept nogil:
        """C = the K best units; theta = the worst of them."""
        cdef Py_ssize_t u, a, K = self.cap, nh = 0
        cdef int* h = &self.scan_heap[0]
        self.n_rebuilds += 1
        for a in range(self.n_cand):
            self.in_cand[self.cand[a]] = 0
        # bounded min-heap (worst on top) of the K best seen so far
        cdef const double* key = &self.key[0]
        for u in range(self.n_units):
            if nh < K:
                h[nh] = <int>u
                self._heap_up(h, nh)
                nh += 1
            elif _gt(key, <int>u, h[0]):
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
        cdef const double* key = &self.key[0]
        while i > 0:
            parent = (i - 1) >> 1
            if _gt(key, h[parent], h[i]):
                t = h[i]
                h[i] = h[parent]
                h[parent] = t
                i = parent
            else:
                break

    cdef void _heap_down(self, int* h, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t i = 0, c, worst
        cdef int t
        cdef const double* key = &self.key[0]
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            worst = c
            if c + 1 < n and _gt(key, h[c], h[c + 1]):
                worst = c + 1
            if _gt(key, h[i], h[worst]):
                t = h[i]
                h[i] = h[worst]
                h[worst] = t
                i = worst
            else:
                break


cdef class CyQuadraticGreedySelector(CyGreedySelector):
    """Exact GSQ over a fixed partition (eq. 16): score(b) = g_b.T H_b^+ g_b.

    H_b^+ is computed once per block and stored; a changed gradient entry
    re-scores its block in O(|b|^2) through the same candidate-set
    machinery as the Gauss-Southwell rule.
    """
    cdef const double[::1] hinv
    cdef const long[::1] hinv_ptr

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed, unit_of,
                 hinv, hinv_ptr):
        n = unit_of.shape[0]
        CyGreedySelector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed, unit_of,
                                np.ones(n), np.ones(unit_ptr.shape[0] - 1))
        self.hinv = hinv
        self.hinv_ptr = hinv_ptr

    cdef double _score(self, CyProblem prob, int u) noexcept nogil:
        cdef Py_ssize_t a, b, start = self.unit_ptr[u], nb = self.unit_ptr[u + 1] - start
        cdef const double* Hi = &self.hinv[self.hinv_ptr[u]]
        cdef double s = 0.0, row, ga
        for a in range(nb):
            ga = prob.g[self.unit_coords[start + a]]
            row = 0.0
            for b in range(nb):
                row += Hi[a * nb + b] * prob.g[self.unit_coords[start + b]]
            s += ga * row
        return s


cdef class CySparseQuadraticSelector(CySelector):
    """Approximate GSQ for variable blocks (Section 4.2).

    The block is the support of an approximate solution of the L0-constrained
    quadratic  min_{||d||_0 <= tau} g.d + d.M d / 2  (eq. 24), with M the
    problem's Hessian bound.  Every support S met is rated by the exact
    progress bound of a matrix step on it, g_S.T M_SS^+ g_S / 2, and the
    best is returned.  The candidates always include the Gauss-Southwell
    block and the GSD block (D_i = L_i), so the rule never guarantees less
    progress than either.  ``method="iht"`` then runs iterative hard
    thresholding from the better of the two in the metric of D:
    u = d - D^{-1}(g + M d), keeping the tau entries with the largest
    D_i u_i^2.  ``method="omp"`` runs orthogonal matching pursuit (forward
    selection by |(g + M d)_i| / sqrt(D_i)) from the empty set.
    """
    cdef CyGreedySelector gs
    cdef CyGreedySelector gsd
    cdef bint omp
    cdef Py_ssize_t n_iter
    cdef double[::1] mv          # M d
    cdef double[::1] u
    cdef int[::1] support
    cdef int[::1] best
    cdef int[::1] trial
    cdef double[::1] dsup
    cdef double[::1] H
    cdef double[::1] sol
    cdef CyBlockWork bw
    cdef unsigned char[::1] in_set
    cdef const double[::1] diag

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed, unit_of,
                 str method, Py_ssize_t n_iter, diag):
        CySelector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        n = unit_of.shape[0]
        n_units = unit_ptr.shape[0] - 1
        diag = np.ascontiguousarray(diag, dtype=np.float64)
        inv = np.zeros(n)
        inv[diag > 0] = 1.0 / diag[diag > 0]
        self.gs = CyGreedySelector(unit_ptr, unit_coords, unit_L, k, seed, unit_of, np.ones(n),
                                 np.ones(n_units))
        self.gsd = CyGreedySelector(unit_ptr, unit_coords, unit_L, k, seed, unit_of, inv,
                                  np.ones(n_units))
        self.omp = method == "omp"
        self.n_iter = n_iter
        self.diag = diag
        self.mv = np.zeros(n)
        self.u = np.zeros(n)
        self.in_set = np.zeros(n, dtype=np.uint8)
        self.support = np.zeros(self.k, dtype=np.int32)
        self.best = np.zeros(self.k, dtype=np.int32)
        self.trial = np.zeros(self.k, dtype=np.int32)
        self.dsup = np.zeros(self.k)
        self.sol = np.zeros(self.k)
        self.H = np.zeros(self.k * self.k)
        self.bw = CyBlockWork(self.k)

    cdef void notify(self, CyProblem prob) noexcept nogil:
        self.gs.notify(prob)
        self.gsd.notify(prob)

    cdef double _model(self, CyProblem prob, const int* S, Py_ssize_t ns) noexcept nogil:
        """-g_S.T M_SS^+ g_S / 2 (the decrease bound of a matrix step on S);
        leaves -M_SS^+ g_S in self.sol."""
        cdef Py_ssize_t a
        cdef double q = 0.0
        prob.block_hessian_bound(S, ns, &self.H[0])
        for a in range(ns):
            self.sol[a] = -prob.g[S[a]]
        if spd_solve(self.bw, &self.H[0], &self.sol[0], ns) < 0:
            return 0.0
        for a in range(ns):
            q += 0.5 * prob.g[S[a]] * self.sol[a]
        return q

    cdef Py_ssize_t _greedy_block(self, CyGreedySelector sel, CyProblem prob, int* out) noexcept nogil:
        cdef Py_ssize_t a, nb = sel.pick(prob)
        for a in range(nb):
            out[a] = self.unit_coords[sel.chosen[a]]    # units are coordinates
        _sort_ints(out, nb)
        return nb

    cdef double _consider(self, CyProblem prob, Py_ssize_t ns, Py_ssize_t nb,
                          double q_best) noexcept nogil:
        """Rate self.support; adopt it as best if it is better."""
        cdef Py_ssize_t a
        cdef double q
        if ns != nb:
            return q_best
        q = self._model(prob, &self.support[0], ns)
        if q < q_best:
            for a in range(ns):
                self.best[a] = self.support[a]
            return q
        return q_best

    cdef Py_ssize_t _top_scaled(self, int* out) noexcept nogil:
        """The k coordinates with the largest D_i u_i^2 (ties: smaller index)."""
        cdef Py_ssize_t p, a, nc = 0, k = self.k
        cdef int i
        cdef double x
        for p in range(self.unit_coords.shape[0]):
            i = self.unit_coords[p]
            x = self.diag[i] * self.u[i] * self.u[i]
            if nc == k and not (x > self.diag[out[k - 1]] * self.u[out[k - 1]] * self.u[out[k - 1]]):
                continue
            a = nc if nc < k else k - 1
            while a > 0 and x > self.diag[out[a - 1]] * self.u[out[a - 1]] * self.u[out[a - 1]]:
                out[a] = out[a - 1]
                a -= 1
            out[a] = i
            if nc < k:
                nc += 1
        return nc

    cdef Py_ssize_t pick(self, CyProblem prob) noexcept nogil:
        cdef Py_ssize_t a, it, nb, ns, n = prob.n
        cdef double q_best, q
        cdef int i
        nb = self._greedy_block(self.gs, prob, &self.best[0])
        q_best = self._model(prob, &self.best[0], nb)
        ns = self._greedy_block(self.gsd, prob, &self.support[0])
        q_best = self._consider(prob, ns, nb, q_best)
        if self.omp:
            ns = 0
            for it in range(nb):
                # residual gradient of the model at the current d
                if ns > 0:
                    prob.bound_matvec(&self.support[0], &self.dsup[0], ns, &self.mv[0])
                i = -1
                q = -1.0
                for a in range(self.unit_coords.shape[0]):
                    if self.in_set[self.unit_coords[a]]:
                        continue
                    self.u[0] = prob.g[self.unit_coords[a]] + (self.mv[self.unit_coords[a]]
                                                               if ns > 0 else 0.0)
                    if fabs(self.u[0]) / sqrt(self.diag[self.unit_coords[a]]) > q:
                        q = fabs(self.u[0]) / sqrt(self.diag[self.unit_coords[a]])
                        i = self.unit_coords[a]
                if i < 0:
                    break
                self.support[ns] = i
                self.in_set[i] = 1
                ns += 1
                _sort_ints(&self.support[0], ns)
                self._model(prob, &self.support[0], ns)
                for a in range(ns):
                    self.dsup[a] = self.sol[a]
            for a in range(ns):
                self.in_set[self.support[a]] = 0
            q_best = self._consider(prob, ns, nb, q_best)
        else:
            # IHT from the matrix step on the best block so far
            for a in range(nb):
                self.support[a] = self.best[a]
            self._model(prob, &self.support[0], nb)
            for a in range(nb):
                self.dsup[a] = self.sol[a]
            ns = nb
            for it in range(self.n_iter):
                prob.bound_matvec(&self.support[0], &self.dsup[0], ns, &self.mv[0])
                for a in range(n):
                    self.u[a] = -(prob.g[a] + self.mv[a]) / self.diag[a] if self.diag[a] > 0 else 0.0
                for a in range(ns):
                    self.u[self.support[a]] += self.dsup[a]
                ns = self._top_scaled(&self.trial[0])
                for a in range(ns):
                    self.support[a] = self.trial[a]
                _sort_ints(&self.support[0], ns)
                for a in range(ns):
                    self.dsup[a] = self.u[self.support[a]]
                q_best = self._consider(prob, ns, nb, q_best)
        for a in range(nb):
            self.chosen[a] = self.best[a]
        return nb

    cdef Py_ssize_t select(self, CyProblem prob, int* block) noexcept nogil:
        # units are single coordinates: the chosen entries are the block
        cdef Py_ssize_t a, nb = self.pick(prob)
        for a in range(nb):
            block[a] = self.chosen[a]
        self.last_unit = -1
        self.last_L = 0.0
        return nb


cdef extern from "_mi.h" nogil:
    const Py_ssize_t CHUNK "BCD_MI_CHUNK"
    Py_ssize_t bcd_mi_size(Py_ssize_t k)
    double* bcd_mi_at(double* W, Py_ssize_t k, Py_ssize_t a, Py_ssize_t q)
    double bcd_mi_dot(const double* a, const double* b, Py_ssize_t n)
    double bcd_mi_piece(const double* a, const double* b)
    void bcd_mi_lower_mv(const double* W, Py_ssize_t k, const double* h, Py_ssize_t a0,
                         Py_ssize_t a1, double* out)
    void bcd_mi_lower_tmv(const double* W, Py_ssize_t k, const double* x, Py_ssize_t s,
                          Py_ssize_t q, double* u)


cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static long bcd_team_size(void) { return omp_get_num_threads(); }
    #else
    static long bcd_team_size(void) { return 1; }
    #endif
    /* most entries of a candidate row per evaluated segment */
    #define BCD_MI_SEGMENT 256
    /* the largest team whose leader updates the factor alone */
    #define BCD_MI_SMALL_TEAM 2
    /* a multiply-add of the factor's products, in kernel entries */
    #define BCD_MI_FACTOR_COST 0.1
    /* a team whose leader stalled (_team.h) at more than one barrier in
       this many (and at more than BCD_MI_MIN_STALLS in all) did not run at
       once: the next blocks grow on one thread, BCD_MI_SOLO_BLOCKS of them,
       twice as many after each team that stalls again (at most
       BCD_MI_SOLO_MAX), as few again after a team that does not */
    #define BCD_MI_STALL_RATIO 16
    #define BCD_MI_MIN_STALLS 8
    #define BCD_MI_SOLO_BLOCKS 16
    #define BCD_MI_SOLO_MAX 1024
    """
    const Py_ssize_t SEGMENT "BCD_MI_SEGMENT"
    const long SMALL_TEAM "BCD_MI_SMALL_TEAM"
    const double FACTOR_COST "BCD_MI_FACTOR_COST"
    const long STALL_RATIO "BCD_MI_STALL_RATIO"
    const long MIN_STALLS "BCD_MI_MIN_STALLS"
    const Py_ssize_t SOLO_BLOCKS "BCD_MI_SOLO_BLOCKS"
    const Py_ssize_t SOLO_MAX "BCD_MI_SOLO_MAX"
    long bcd_team_size() nogil


cdef inline Py_ssize_t _zigzag(Py_ssize_t it, Py_ssize_t nt, Py_ssize_t n) noexcept nogil:
    """The item that thread ``it % nt`` takes in its turn ``it // nt`` among
    ``n`` items of decreasing cost: forwards in even rounds of ``nt``,
    backwards in odd ones, so that each thread's share is about even."""
    cdef Py_ssize_t r = it // nt
    if r % 2 == 1 and (r + 1) * nt <= n:
        return r * nt + (nt - 1 - (it - r * nt))
    return it


cdef inline Py_ssize_t _leader_rows(Py_ssize_t n_rows, Py_ssize_t ncols, Py_ssize_t s,
                                    long nt) noexcept nogil:
    """Candidate rows for the leader of a small team, which also updates a
    factor of ``s`` rows (s^2 multiply-adds, costing about
    ``FACTOR_COST`` of a kernel entry each): as many as make its share of
    the step's work even."""
    cdef double rows = ((n_rows * <double>ncols - (nt - 1) * FACTOR_COST * <double>s * s)
                        / (nt * <double>max(ncols, 1)))
    return max(0, min(n_rows, <Py_ssize_t>(rows + 0.5)))


cdef inline Py_ssize_t _rows_split(Py_ssize_t s, Py_ssize_t i, Py_ssize_t m) noexcept nogil:
    """The first row of range i of m over rows 0 .. s - 1 whose costs grow
    as the row number: s sqrt(i / m)."""
    if i >= m:
        return s
    return <Py_ssize_t>(s * sqrt(<double>i / m))


cdef class CyMaxImprovementSelector(CySelector):
    """Greedy approximation of the maximum-improvement rule for quadratics
    (Bo and Sminchisescu's GBCD; the MI rule of Section 4.2).

    The block is grown one coordinate at a time.  With ``delta`` the
    minimizer of f over the coordinates B chosen so far (x_B + delta), a
    coordinate i outside B would decrease f further by ``e_i^2 / (2 H_ii)``
    with ``e_i = g_i + H_iB delta`` (eq. 10 of Bo and Sminchisescu).  The
    first coordinate is the best of all; each later one the best of
    ``kappa`` candidates outside B.  The units must be single coordinates
    (variable blocks) and L_i must equal H_ii.

    The factor is kept as W = L^{-1}, the inverse of the Cholesky factor
    of H_BB.  Joining j with row h = H_Bj costs two triangular products,
    l = W h (the new row of L, with pivot d = sqrt(H_jj - l.l)) and
    u = W^T l, which gives W's new row w = (-u / d, 1 / d); with z = W g_B
    and its new entry z_j = (g_j - l.z) / d, delta = -W^T z gains
    -w z_j.  Unlike triangular solves, these products split into
    independent rows and columns.

    The candidates are a pool of ``kappa`` slots.  After each step the
    chosen one and the ``refresh - 1`` lowest-scoring others leave it, and
    as many are drawn at random outside B and the pool: ``refresh = kappa``
    (or 0, the default) draws them all afresh every step, Bo and
    Sminchisescu's rule.  A kept candidate's row H_cB needs only its entry
    for the coordinate that joined B, so a smaller ``refresh`` evaluates
    fewer Hessian entries.

    Parallel design.  One parallel region spans the block (``_team.h``).
    For each added coordinate, thread 0 scores the candidates, picks the
    best, draws the next ones and posts the step; then every thread takes
    its share of two phases separated by a barrier: (1) the candidates'
    rows of H, in equal segments of at most ``SEGMENT`` columns, and one
    range of rows of W h per thread, the ranges of equal work; (2) W^T l
    and delta over chunks of ``CHUNK`` columns, with each chunk's part of
    every candidate's H_cB delta.  The items go to the threads by a fixed
    rule (item i to thread i mod n, the costlier first and alternating
    direction per round of n): no counter is shared, as handing items out
    one at a time from a cache line that every thread writes cost more
    than the imbalance it saves, even for two threads.  In a team of
    ``SMALL_TEAM`` threads, the leader instead updates W and delta alone
    while the others evaluate rows, and each thread dots its own rows.
    Whoever computes an entry, it is computed by the same operations in the
    same order: the iterates are bitwise the same on 1 thread or 16.
    """

    def __init__(self, unit_ptr, unit_coords, unit_L, Py_ssize_t k, seed,
                 Py_ssize_t kappa, Py_ssize_t refresh=0):
        CySelector.__init__(self, unit_ptr, unit_coords, unit_L, k, seed)
        self.kappa = max(1, min(kappa, self.n_units))
        self.refresh = self.kappa if refresh <= 0 else max(1, min(refresh, self.kappa))
        k = self.k
        # vectors and rows padded to whole chunks
        self.ld = (k + CHUNK - 1) // CHUNK * CHUNK
        self.winv = np.zeros(bcd_mi_size(k))
        self.z = np.zeros(k)
        self.delta = np.zeros(self.ld)
        self.h = np.zeros(self.ld)
        self.lrow = np.zeros(k)
        self.sol = np.zeros(k)
        self.order = np.zeros(k, dtype=np.int32)
        self.cand = np.zeros(self.kappa, dtype=np.int32)
        self.cand_unit = np.zeros(self.kappa, dtype=np.int32)
        self.kind = np.zeros(self.kappa, dtype=np.uint8)
        self.active = np.zeros(self.kappa, dtype=np.int32)
        self.seg_ptr = np.zeros(self.kappa + 1, dtype=np.int32)
        self.drawn_units = np.zeros(self.kappa, dtype=np.int32)
        self.score = np.zeros(self.kappa)
        self.rows = np.zeros(self.kappa * self.ld)
        self.part = np.zeros(self.kappa * (self.ld // CHUNK))
        self.e = np.zeros(self.kappa)
        self.taken = np.zeros(self.n_units, dtype=np.uint8)
        self.tmp = np.zeros(self.kappa * k)
        self.tmp_rows = np.zeros(self.kappa, dtype=np.int32)

    def capacity(self):
        return self.k

    cdef Py_ssize_t _draw(self, Py_ssize_t remaining, Py_ssize_t want,
                          int* out) noexcept nogil:
        """Put min(want, remaining) distinct units neither taken nor in the
        pool into ``out`` (``remaining``: how many such units there are)."""
        cdef Py_ssize_t nc = 0, u, a, r, tries = 0
        if remaining <= want:
            for u in range(self.n_units):
                if not self.taken[u]:
                    out[nc] = <int>u
                    nc += 1
            return nc
        if remaining >= 4 * want:
            # rejection sampling: at least 3/4 of the draws succeed while
            # fewer than a quarter of the free units are drawn
            while nc < want and tries < 64 * want:
                tries += 1
                u = rng_below(&self.rng, self.n_units)
                if self.taken[u]:
                    continue
                self.taken[u] = 3
                out[nc] = <int>u
                nc += 1
            for a in range(nc):
                self.taken[out[a]] = 0
            if nc == want:
                return nc
        # few free units, or the draws kept missing them (most units taken):
        # a uniform subset of the free units by reservoir sampling, O(n_units)
        nc = 0
        for u in range(self.n_units):
            if not self.taken[u]:
                if nc < want:
                    out[nc] = <int>u
                else:
                    r = rng_below(&self.rng, nc + 1)
                    if r < want:
                        out[r] = <int>u
                nc += 1
        return min(nc, want)

    cdef Py_ssize_t _fill(self, Py_ssize_t n_taken, Py_ssize_t n_pool) noexcept nogil:
        """Draw candidates into the empty slots, mark the pool's slots fresh
        (1) or kept (2) and list the occupied ones in ``active``; returns
        how many there are."""
        cdef Py_ssize_t sl, a = 0, nd, n_active = 0
        cdef Py_ssize_t free = self.kappa - n_pool
        nd = self._draw(self.n_units - n_taken - n_pool, free, &self.drawn_units[0]) \
            if free else 0
        for sl in range(self.kappa):
            if self.kind[sl] != 0:
                self.kind[sl] = 2
            elif a < nd:
                self.cand_unit[sl] = self.drawn_units[a]
                self.cand[sl] = self.unit_coords[self.drawn_units[a]]
                self.taken[self.drawn_units[a]] = 2
                self.kind[sl] = 1
                a += 1
            if self.kind[sl] != 0:
                self.active[n_active] = <int>sl
                n_active += 1
        return n_active

    cdef Py_ssize_t select(self, CyProblem prob, int* block) noexcept nogil:
        cdef int rt = prob.row_threads(self.k, self.kappa * self.k)
        cdef long nt = max(1, rt), me, step, epoch = 0, barriers
        cdef Py_ssize_t stride
        cdef double* scratch
        cdef long* flags = NULL
        cdef bcd_team team
        # rows one at a time from any thread, or only all together
        self.together = rt == 0
        if nt > 1 and self.solo_left > 0:
            # the last team could not run at once (busy cores): alone for a
            # while (the iterates are the same for any team size)
            self.solo_left -= 1
            self.n_solo_blocks += 1
            nt = 1
        # per-thread scratch on cache lines of its own: for hessian_row, then
        # a chunk of u and v
        self.n_scratch = prob.row_scratch(self.k)
        stride = (self.n_scratch + 2 * CHUNK + 15) // 16 * 16
        scratch = <double*>malloc(nt * stride * sizeof(double))
        if nt > 1:
            flags = <long*>calloc(bcd_team_flag_words(nt), sizeof(long))
        if scratch == NULL or flags == NULL:
            nt = 1
            if scratch == NULL:
                scratch = <double*>malloc(stride * sizeof(double))
        if scratch == NULL:
            free(flags)
            return 0
        self.small = False
        if nt < 2:
            self.grown = self._grow(prob, block, NULL, 1, scratch, &epoch)
        else:
            # one parallel region for the whole block, thread 0 leading
            self.small = nt <= SMALL_TEAM
            bcd_team_init(&team, nt, flags)
            with parallel(num_threads=nt):
                me = threadid()
                epoch = 0
                if bcd_team_size() != nt:
                    # fewer threads than asked for (an OpenMP limit): alone
                    if me == 0:
                        self.small = False
                        self.grown = self._grow(prob, block, NULL, 1, scratch, &epoch)
                elif me == 0:
                    self.grown = self._grow(prob, block, &team, nt, scratch, &epoch)
                    bcd_team_stop(&team)
                else:
                    step = 0
                    while True:
                        step = bcd_team_wait(&team, step)
                        if step < 0:
                            break
                        self._step(prob, &team, me, nt, scratch + me * stride, &epoch)
            # the leader's barriers: two per step of a large team, one of a small
            barriers = (1 if self.small else 2) * max(1, self.grown)
            if team.stalls > MIN_STALLS and team.stalls * STALL_RATIO > barriers:
                self.solo_period = min(2 * self.solo_period, SOLO_MAX) \
                    if self.solo_period else SOLO_BLOCKS
                self.solo_left = self.solo_period
            else:
                self.solo_period = 0
        free(flags)
        free(scratch)
        return self.grown

    cdef void _step(self, CyProblem prob, bcd_team* team, long me, long nt,
                    double* scratch, long* epoch) noexcept nogil:
        """Thread ``me``'s share of the posted step: its candidate rows and
        rows of W h, then (after all of them) its columns of W^T l with
        the chunks of the candidates' H_cB delta."""
        if self.small:
            self._step_small(prob, team, me, nt, scratch, epoch)
            return
        self._evaluate(prob, me, nt, scratch)
        if team != NULL:
            bcd_team_barrier(team, me, epoch)
        self._extend(me, nt, scratch)
        if team != NULL:
            bcd_team_barrier(team, me, epoch)

    cdef void _step_small(self, CyProblem prob, bcd_team* team, long me, long nt,
                          double* scratch, long* epoch) noexcept nogil:
        """The step in a small team: the leader updates the factor and
        delta alone while the others evaluate candidate rows, then takes
        the last ``n_lead`` rows; each thread then dots its own rows with
        delta, once the leader has published it.  Nothing moves between
        the threads' caches but the rows' results: W stays with the leader,
        each row with the thread that evaluated it.  The arithmetic is
        that of the large team's phases, entry by entry."""
        cdef MIFactor* f = &self.fac
        cdef Py_ssize_t i, q, nb, n = self.n_active, n_work = self.n_active - self.n_lead
        cdef Py_ssize_t first, last, stride
        cdef double d = 0.0, zs = 0.0, v
        cdef int outcome
        if me == 0:
            if f.pending >= 0:
                bcd_mi_lower_mv(f.winv, f.k, f.h, 0, f.size, f.lrow)
            outcome = self._decide(&d, &zs)
            self.outcome = outcome
            self.z_new = zs
            if outcome != 3:
                nb = f.size + (outcome == 1)
                for q in range((nb + CHUNK - 1) // CHUNK):
                    self._factor_chunk(q, nb, outcome, d, zs, scratch + self.n_scratch)
            bcd_team_publish(team, self.step)
        # the leader's rows n_work .. n - 1, worker t's rows t - 1, t - 1 + (nt - 1), ...
        first = n_work if me == 0 else me - 1
        last = n if me == 0 else n_work
        stride = 1 if me == 0 else nt - 1
        i = first
        while i < last:
            self._row(prob, i, scratch)
            i += stride
        if me != 0:
            bcd_team_await(team, self.step)
        if self.outcome != 3:
            nb = f.size + (self.outcome == 1)
            i = first
            while i < last:
                v = prob.g[self.cand[self.active[i]]]
                for q in range((nb + CHUNK - 1) // CHUNK):
                    v += bcd_mi_piece(&self.rows[self.active[i] * self.ld + q * CHUNK],
                                      &f.delta[q * CHUNK])
                self.e[i] = v
                i += stride
        bcd_team_barrier(team, me, epoch)

    cdef void _row(self, CyProblem prob, Py_ssize_t i, double* scratch) noexcept nogil:
        """All the segments of the row of active slot i."""
        cdef Py_ssize_t j
        for j in range(self.seg_ptr[i + 1] - self.seg_ptr[i]):
            self._segment(prob, i, j, scratch)

    cdef void _segment(self, CyProblem prob, Py_ssize_t i, Py_ssize_t j,
                       double* scratch) noexcept nogil:
        """Segment j of the row of active slot i: of m segments, the j-th
        even part of the columns c0 .. ncols - 1 (all of a fresh
        candidate's columns, those from ``col0`` of a kept one's)."""
        cdef int sl = self.active[i]
        cdef Py_ssize_t c0 = 0 if self.kind[sl] == 1 else self.col0, ncols = self.ncols
        cdef Py_ssize_t m = self.seg_ptr[i + 1] - self.seg_ptr[i]
        cdef Py_ssize_t lo = c0 + (ncols - c0) * j // m, hi = c0 + (ncols - c0) * (j + 1) // m
        prob.hessian_row(self.cand[sl], &self.order[0], lo, hi, scratch,
                         &self.rows[sl * self.ld + lo])

    cdef void _evaluate(self, CyProblem prob, long me, long nt, double* scratch) noexcept nogil:
        """Phase 1: items me, me + nt, ... of the step: first the ranges of
        rows of l = W h (row a costs a + 1: range i of m ends at row
        s sqrt((i + 1) / m), so that each costs the same), then the
        segments of the candidates' rows H_cB."""
        cdef MIFactor* f = &self.fac
        cdef Py_ssize_t it, n_items, seg, pos = 0, k = f.k
        cdef Py_ssize_t nw = self.n_wchunks
        if self.together:
            # rows only all at once, on one thread
            if nw:
                bcd_mi_lower_mv(f.winv, k, f.h, 0, f.size, f.lrow)
            self._rows_of_kind(prob, self.n_active, 1, 0)
            self._rows_of_kind(prob, self.n_active, 2, self.col0)
            return
        n_items = nw + self.seg_ptr[self.n_active]
        it = me
        while it < n_items:
            if it < nw:
                bcd_mi_lower_mv(f.winv, k, f.h, _rows_split(f.size, it, nw),
                                _rows_split(f.size, it + 1, nw), f.lrow)
            else:
                seg = it - nw
                while self.seg_ptr[pos + 1] <= seg:
                    pos += 1
                self._segment(prob, pos, seg - self.seg_ptr[pos], scratch)
            it += nt

    cdef int _decide(self, double* d, double* zs) noexcept nogil:
        """Whether the pending coordinate j joins B, from l = W h: 0 nothing
        pending, 1 joined (with the pivot ``d`` and z_j in ``zs``), 2 left
        out (numerically dependent on B), 3 H_BB + j indefinite.  Reads
        only; any thread gets the same answer."""
        cdef MIFactor* f = &self.fac
        cdef double d2
        if f.pending < 0:
            return 0
        d2 = f.h_pending - bcd_mi_dot(f.lrow, f.lrow, f.size)
        if d2 < -negative_pivot() * f.h_pending:
            return 3
        if d2 > 1e-12 * f.h_pending:
            d[0] = sqrt(d2)
            zs[0] = (f.g_pending - bcd_mi_dot(f.lrow, f.z, f.size)) / d[0]
            return 1
        return 2

    cdef void _factor_chunk(self, Py_ssize_t q, Py_ssize_t nb, int outcome, double d, double zs,
                            double* u) noexcept nogil:
        """Column chunk q of the new B (of ``nb`` coordinates): with j
        joined, u = W^T l over the old rows, W's new row w = -u / d, and
        delta = -W^T z gains -w z_j; and delta zero past B, so that rows
        are dotted by whole chunks.  ``u``: room for ``CHUNK`` doubles."""
        cdef MIFactor* f = &self.fac
        cdef Py_ssize_t s = f.size, b, b0 = q * CHUNK, b1 = min(b0 + CHUNK, nb), bs
        cdef double* wrow
        if outcome == 1:
            wrow = bcd_mi_at(f.winv, f.k, s, q)
            bs = min(b1, s)
            if bs > b0:
                bcd_mi_lower_tmv(f.winv, f.k, f.lrow, s, q, u)
            for b in range(b0, bs):
                wrow[b - b0] = -u[b - b0] / d
                f.delta[b] -= wrow[b - b0] * zs
            if b1 == nb:
                # the diagonal, and zeros above it
                wrow[s - b0] = 1.0 / d
                f.delta[s] = -(zs / d)
                for b in range(s + 1, b0 + CHUNK):
                    wrow[b - b0] = 0.0
        for b in range(b1, b0 + CHUNK):
            f.delta[b] = 0.0

    cdef void _extend(self, long me, long nt, double* scratch) noexcept nogil:
        """Phase 2: join the pending coordinate j to B when H_BB stays
        positive definite and j is not dependent on B, and, over chunks
        me, me + nt, ... of ``CHUNK`` columns of the new B: W's new row,
        delta and the chunk's part of each candidate's H_cB delta.  Every
        thread decides alike; thread 0 records the outcome."""
        cdef MIFactor* f = &self.fac
        cdef Py_ssize_t nb, q, nq, i, it, ld = self.ld
        cdef double d = 0.0, zs = 0.0
        cdef int outcome = self._decide(&d, &zs)
        if me == 0:
            self.outcome = outcome
            self.z_new = zs
        if outcome == 3:
            return
        nb = f.size + (outcome == 1)
        nq = (nb + CHUNK - 1) // CHUNK
        it = me
        while it < nq:
            # the first chunks of columns are the longest: first
            q = _zigzag(it, nt, nq)
            self._factor_chunk(q, nb, outcome, d, zs, scratch + self.n_scratch)
            for i in range(self.n_active):
                self.part[q * self.kappa + i] = bcd_mi_piece(
                    &self.rows[self.active[i] * ld + q * CHUNK], &f.delta[q * CHUNK])
            it += nt

    cdef void _rows_of_kind(self, CyProblem prob, Py_ssize_t n_active, unsigned char kind,
                            Py_ssize_t c0) noexcept nogil:
        """Columns c0 .. ncols - 1 of the rows of the slots of this kind, in
        one call, then copied to their slots."""
        cdef Py_ssize_t i, a, nr = 0, w = self.ncols - c0, ld = self.ld
        cdef int sl
        cdef int* rows_of = &self.tmp_rows[0]
        cdef double* buf = &self.tmp[0]
        if w <= 0:
            return
        for i in range(n_active):
            if self.kind[self.active[i]] == kind:
                rows_of[nr] = self.cand[self.active[i]]
                nr += 1
        if nr == 0:
            return
        prob.hessian_entries(rows_of, nr, &self.order[c0], w, buf)
        nr = 0
        for i in range(n_active):
            sl = self.active[i]
            if self.kind[sl] == kind:
                for a in range(w):
                    self.rows[sl * ld + c0 + a] = buf[nr * w + a]
                nr += 1

    cdef Py_ssize_t _grow(self, CyProblem prob, int* block, bcd_team* team, long nt,
                          double* scratch, long* epoch) noexcept nogil:
        """Grow the block on thread 0; with a ``team`` of ``nt`` threads,
        each step is shared with it."""
        cdef Py_ssize_t u, a, b, i, q, nq, ncols, size, best, n_taken, n_pool = 0, n_active
        cdef Py_ssize_t k = self.k, n_out, c0, n_seg
        cdef double v, best_v, d
        cdef const double* g = &prob.g[0]
        cdef int j, t, sl
        cdef long step = 0
        cdef bint drawn
        cdef MIFactor* f = &self.fac
        self.has_sol = False
        self.last_unit = -1
        self.last_L = 0.0
        f.winv = &self.winv[0]
        f.z = &self.z[0]
        f.delta = &self.delta[0]
        f.h = &self.h[0]
        f.lrow = &self.lrow[0]
        f.order = &self.order[0]
        f.k = k
        for sl in range(self.kappa):
            self.kind[sl] = 0
        # the first coordinate: the best of all (one-dimensional decrease)
        best = 0
        best_v = -1.0
        for u in range(self.n_units):
            j = self.unit_coords[u]
            v = g[j] * g[j] / self.unit_L[u]
            if v > best_v:
                best_v = v
                best = u
        j = self.unit_coords[best]
        self.order[0] = j
        self.taken[best] = 1
        d = sqrt(self.unit_L[best])
        self.winv[0] = 1.0 / d
        for a in range(1, CHUNK):
            self.winv[a] = 0.0
        self.z[0] = g[j] / d
        self.delta[0] = -(self.z[0] / d)
        f.size = 1
        f.pending = -1
        n_taken = 1         # the block and the units found dependent on it
        while True:
            # The chosen coordinate j joins B (f.pending, with its row H_Bj
            # in f.h) while the candidates' rows are evaluated against B + j:
            # they are drawn before j is known to be independent of B, as
            # the draw does not depend on it.
            ncols = f.size + (f.pending >= 0)
            drawn = ncols < k and n_taken < self.n_units
            n_active = 0
            if drawn:
                n_active = self._fill(n_taken, n_pool)
                n_pool = n_active
                self.ncols = ncols
                # kept rows hold B as it was before j: the entries from the
                # pending coordinate's position on are missing
                self.col0 = f.size
                if not self.together:
                    prob.rows_prepare(&self.order[0], ncols)
            self.n_active = n_active
            n_seg = 0
            for i in range(n_active):
                self.seg_ptr[i] = <int>n_seg
                c0 = 0 if self.kind[self.active[i]] == 1 else self.col0
                if c0 < ncols:
                    n_seg += (ncols - c0 + SEGMENT - 1) // SEGMENT
            self.seg_ptr[n_active] = <int>n_seg
            # one range of rows of W h per thread
            self.n_wchunks = nt if f.pending >= 0 else 0
            if self.small:
                self.n_lead = _leader_rows(n_active, ncols, f.size if f.pending >= 0 else 0, nt)
            if team != NULL:
                step += 1
                self.step = step
                bcd_team_post(team, step)
            self._step(prob, team, 0, nt, scratch, epoch)
            if self.outcome == 3:
                # H_BB + j is indefinite: f is not convex on these coordinates
                for a in range(f.size):
                    block[a] = self.order[a]
                block[f.size] = f.pending
                for u in range(self.n_units):
                    self.taken[u] = 0
                return -(f.size + 1)
            if self.outcome == 1:
                self.z[f.size] = self.z_new
                f.size += 1
            f.pending = -1
            if not drawn:
                if f.size < k and n_taken < self.n_units:
                    continue            # j was left out: B can still grow
                break
            # e_c = g_c + H_cB delta from the chunks, in order
            if not self.small:
                nq = (f.size + CHUNK - 1) // CHUNK
                for i in range(n_active):
                    self.e[i] = g[self.cand[self.active[i]]]
                for q in range(nq):
                    for i in range(n_active):
                        self.e[i] += self.part[q * self.kappa + i]
            best = -1
            best_v = 0.0
            for i in range(n_active):
                sl = self.active[i]
                v = self.e[i] * self.e[i] / prob.lipschitz[self.cand[sl]]
                self.score[sl] = v
                if v > best_v:
                    best_v = v
                    best = sl
            if best < 0:
                break                   # no candidate improves f
            j = self.cand[best]
            for a in range(f.size):
                self.h[a] = self.rows[best * self.ld + a]
            for a in range(f.size, (f.size + CHUNK - 1) // CHUNK * CHUNK):
                self.h[a] = 0.0
            self.order[f.size] = j
            f.pending = j
            f.g_pending = g[j]
            f.h_pending = prob.lipschitz[j]
            self.taken[self.cand_unit[best]] = 1
            self.kind[best] = 0
            n_taken += 1
            n_pool -= 1
            # the refresh - 1 lowest-scoring others leave the pool too
            n_out = min(self.refresh - 1, n_pool)
            if n_out == n_pool:
                for i in range(n_active):
                    sl = self.active[i]
                    if self.kind[sl] != 0:
                        self.kind[sl] = 0
                        self.taken[self.cand_unit[sl]] = 0
                n_pool = 0
                n_out = 0
            for i in range(n_out):
                b = -1
                for a in range(n_active):
                    sl = self.active[a]
                    if self.kind[sl] != 0 and (b < 0 or self.score[sl] < self.score[b]):
                        b = sl
                self.kind[b] = 0
                self.taken[self.cand_unit[b]] = 0
                n_pool -= 1
        size = f.size
        for u in range(self.n_units):
            self.taken[u] = 0
        # hand the block over sorted, with its solution in the same order
        for a in range(size):
            block[a] = self.order[a]
            self.sol[a] = self.delta[a]
        for a in range(1, size):
            t = block[a]
            v = self.sol[a]
            b = a - 1
            while b >= 0 and block[b] > t:
                block[b + 1] = block[b]
                self.sol[b + 1] = self.sol[b]
                b -= 1
            block[b + 1] = t
            self.sol[b + 1] = v
        self.sol_nb = size
        self.has_sol = True
        return size

    cdef bint solved_block(self, const int* blk, Py_ssize_t nb, double* d) noexcept nogil:
        cdef Py_ssize_t a
        if not self.has_sol or nb != self.sol_nb:
            return False
        for a in range(nb):
            d[a] = self.sol[a]
        self.has_sol = False
        return True
