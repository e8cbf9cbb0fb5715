"""Forest-structured blocks: linear-time solves, forest tests and block builders.

A symmetric sparse matrix Q defines an undirected graph whose edges are its
off-diagonal non-zeros.  A set of nodes b is *forest-structured* when the
subgraph induced by b has no cycle; then Q_bb x = r is solved in O(|b|)
by Gaussian elimination from the leaves towards the roots followed by
back-substitution (message passing; Algorithm 1 of Nutini, Laradji and
Schmidt).  The level sets of that algorithm are a breadth-first order of each
tree, which is what :meth:`CyGraph.structure` computes.

Growing a forest one node at a time needs a test of the forest property in
O(degree) (Appendix D of the paper): a node can join when its neighbours in
the forest lie in pairwise different trees.  The paper labels trees and
keeps, per label, the smallest node of its tree; a one-level map can go
stale after chains of merges (two labels merged earlier keep their old
minimum when one of them is merged again), so the trees are kept here in a
disjoint-set forest over the nodes with path halving, which answers the
same question in amortized near-constant time per neighbour.
"""
import numpy as np
from libc.math cimport fabs, fmax
from libc.stdint cimport int64_t, uint64_t

from bcd.core._problem cimport CyProblem
from bcd.core._random cimport rng_below
from bcd.core._select cimport CySelector
from bcd.core._update cimport Block, CyUpdate, STEP_TAKEN, STEP_REJECTED, STEP_INDEFINITE


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BCD_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define BCD_PREFETCH(p) ((void)0)
    #endif
    """
    void prefetch "BCD_PREFETCH"(const void* p) noexcept nogil

cdef enum:
    # how many visits ahead the breadth-first walk prefetches rows of Q
    _AHEAD = 8


# ------------------------------------------------------------------ sorting
cdef union _Bits:
    double d
    uint64_t u


cdef void sort_by_key(int* items, Py_ssize_t n, const double* key, uint64_t* kbuf,
                      uint64_t* kbuf2, int* ibuf, Py_ssize_t* count) noexcept nogil:
    """Sort ``items`` by decreasing ``key[item]`` >= 0, ties keeping their order.

    LSD radix sort on the IEEE bits of the keys (order-preserving for
    non-negative doubles), four stable passes of 16 bits, skipping a pass
    whose digit is the same for every item: O(n) time.  ``kbuf``, ``kbuf2``
    and ``ibuf`` hold n entries, ``count`` 65536.
    """
    cdef Py_ssize_t i, d, total, c
    cdef int shift
    cdef _Bits b
    cdef uint64_t* ks = kbuf
    cdef uint64_t* kd = kbuf2
    cdef uint64_t* kt
    cdef int* its = items
    cdef int* itd = ibuf
    cdef int* tmp
    for i in range(n):
        b.d = key[items[i]]
        ks[i] = ~b.u                  # decreasing key
    for shift in range(0, 64, 16):
        for d in range(65536):
            count[d] = 0
        for i in range(n):
            count[(ks[i] >> shift) & 0xFFFF] += 1
        if count[(ks[0] >> shift) & 0xFFFF] == n:
            continue                   # one digit value: the pass would not move anything
        total = 0
        for d in range(65536):
            c = count[d]
            count[d] = total
            total += c
        for i in range(n):
            d = (ks[i] >> shift) & 0xFFFF
            kd[count[d]] = ks[i]
            itd[count[d]] = its[i]
            count[d] += 1
        kt = ks
        ks = kd
        kd = kt
        tmp = its
        its = itd
        itd = tmp
    if its != items:
        for i in range(n):
            items[i] = its[i]


# ------------------------------------------------------------------ graph
cdef class CyGraph:
    """A symmetric sparse matrix in CSR form (canonical: sorted, no duplicates).

    Holds the scratch that structure computations and forest growth need, so
    that nothing of size n is allocated per call.  The scratch is written
    by every call: one graph must serve one solve at a time.  A problem
    caches one graph and every solve works on its own :meth:`fork`, so
    solves of one problem can run in several threads at once.
    """
    cdef readonly Py_ssize_t n
    cdef const int[::1] indptr
    cdef const int[::1] indices
    cdef const double[::1] data
    cdef const double[::1] diag
    cdef int[::1] pos              # node -> 1 + position in the block, negated once reached
    cdef double rtol               # agreement of Q_ij and Q_ji along tree edges
    cdef int[::1] via              # parent node of each queued node
    cdef int[::1] uf               # disjoint-set parent of forest nodes, -1 outside
    cdef int64_t[::1] stamp        # per-root marks of the current forest test
    cdef int64_t cur

    def __init__(self, indptr, indices, data, diag, double rtol=1e-12):
        self.n = indptr.shape[0] - 1
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.diag = diag
        self.rtol = rtol
        self.via = np.zeros(self.n, dtype=np.int32)
        self.pos = np.zeros(self.n, dtype=np.int32)
        self.uf = np.full(self.n, -1, dtype=np.int32)
        self.stamp = np.zeros(self.n, dtype=np.int64)
        self.cur = 0

    def fork(self):
        """A graph over the same (read-only, shared) matrix with scratch of its
        own: O(n) memory, no copy of the matrix."""
        return CyGraph(self.indptr, self.indices, self.data, self.diag, self.rtol)

    cdef Py_ssize_t structure(self, const int* nodes, Py_ssize_t nb, int* order, int* parent,
                              double* dg, double* off) noexcept nogil:
        """Breadth-first order of the forest induced by ``nodes``.

        Writes, for k = 0 .. nb-1 in breadth-first order (roots first, so
        every parent precedes its children): ``order[k]``, the position in
        ``nodes`` of the k-th node; ``parent[k]``, the order index (< k) of
        its parent or -1 at a root; ``dg[k]`` = Q_ii and ``off[k]`` =
        Q_{i,parent}.  These are the level sets of Algorithm 1.

        The nodes of the queue are known well before they are visited, so
        their rows of Q are prefetched a few visits ahead: on a tree
        numbered at random nearly every access would otherwise miss the
        cache and wait for the previous one.

        Every tree edge is read from both ends; the two values must agree to
        ``rtol`` (the matrix need not be checked for symmetry beforehand).

        Returns the number of trees, -1 if the induced subgraph has a cycle,
        -2 if a node is repeated and -3 if Q_bb is not symmetric.
        O(nb + sum of the nodes' degrees).
        """
        cdef Py_ssize_t a, k, p, p2, head = 0, tail = 0, tree_start = 0, status = 0
        cdef int i, j, pnode
        cdef bint seen_parent
        cdef double v
        for a in range(nb):
            i = nodes[a]
            if self.pos[i] != 0:
                status = -2
                nb = a              # only these were marked
                break
            self.pos[i] = <int>(a + 1)
        if status == 0:
            for a in range(nb):
                i = nodes[a]
                if self.pos[i] < 0:              # already reached
                    continue
                # a new tree rooted at i; a node is marked when queued, so a
                # second path to it, i.e. a cycle, shows when it is reached again
                self.pos[i] = -self.pos[i]
                tree_start = tail
                order[tail] = <int>a
                parent[tail] = -1
                off[tail] = 0.0
                self.via[tail] = -1
                tail += 1
                status += 1
                while head < tail:
                    k = head
                    head += 1
                    if k + 2 * _AHEAD < tail:
                        prefetch(&self.indptr[nodes[order[k + 2 * _AHEAD]]])
                    if k + _AHEAD < tail:
                        j = nodes[order[k + _AHEAD]]
                        prefetch(&self.indices[self.indptr[j]])
                        prefetch(&self.data[self.indptr[j]])
                        prefetch(&self.diag[j])
                    if k + _AHEAD // 2 < tail:
                        j = nodes[order[k + _AHEAD // 2]]
                        for p in range(self.indptr[j], self.indptr[j + 1]):
                            prefetch(&self.pos[self.indices[p]])
                    i = nodes[order[k]]
                    dg[k] = self.diag[i]
                    pnode = self.via[k]
                    seen_parent = pnode < 0
                    for p in range(self.indptr[i], self.indptr[i + 1]):
                        j = self.indices[p]
                        if j == i or self.pos[j] == 0:
                            continue
                        if j == pnode:
                            v = self.data[p]
                            if not fabs(v - off[k]) <= self.rtol * fmax(fabs(v), fabs(off[k])):
                                status = -3
                                break
                            seen_parent = True
                            continue
                        if self.pos[j] < 0:
                            # reached again: a cycle if j is in this tree; in
                            # an earlier one, that tree did not see the edge
                            status = -3
                            for p2 in range(tree_start, tail):
                                if order[p2] == -self.pos[j] - 1:
                                    status = -1
                                    break
                            break
                        order[tail] = self.pos[j] - 1
                        self.pos[j] = -self.pos[j]
                        parent[tail] = <int>k
                        off[tail] = self.data[p]
                        self.via[tail] = i
                        tail += 1
                    if status >= 0 and not seen_parent:
                        status = -3             # the edge is stored on one side only
                    if status < 0:
                        break
                if status < 0:
                    break
        for a in range(nb):
            self.pos[nodes[a]] = 0
        return status

    # ---------------------------------------------------- forest growth
    cdef inline int _find(self, int x) noexcept nogil:
        while self.uf[x] != x:
            self.uf[x] = self.uf[self.uf[x]]
            x = self.uf[x]
        return x

    cdef bint try_add(self, int i) noexcept nogil:
        """Add node i to the current forest if it stays a forest (O(degree)).

        The forest is the set of nodes added since the last :meth:`clear`.
        """
        cdef Py_ssize_t p
        cdef int j, r
        self.cur += 1
        for p in range(self.indptr[i], self.indptr[i + 1]):
            j = self.indices[p]
            if j == i or self.uf[j] < 0:
                continue
            r = self._find(j)
            if self.stamp[r] == self.cur:
                return False        # two neighbours in one tree: a cycle
            self.stamp[r] = self.cur
        self.uf[i] = i
        for p in range(self.indptr[i], self.indptr[i + 1]):
            j = self.indices[p]
            if j == i or self.uf[j] < 0:
                continue
            r = self._find(j)
            if r != i:
                self.uf[r] = i
        return True

    cdef void clear(self, const int* nodes, Py_ssize_t nb) noexcept nogil:
        """Empty the forest made of ``nodes``."""
        cdef Py_ssize_t a
        for a in range(nb):
            self.uf[nodes[a]] = -1

    cdef Py_ssize_t grow(self, const int* candidates, Py_ssize_t nc, int* out) noexcept nogil:
        """Greedy maximal forest: try the candidates in order, keep those that fit.

        Returns the number of nodes written to ``out`` (in order of addition).
        """
        cdef Py_ssize_t a, nb = 0
        for a in range(nc):
            if self.try_add(candidates[a]):
                out[nb] = candidates[a]
                nb += 1
        self.clear(out, nb)
        return nb


cdef int forest_factor(Py_ssize_t nb, const int* parent, double* dg, double* off) noexcept nogil:
    """Eliminate a forest given by :meth:`CyGraph.structure`, in place.

    On return ``dg[k]`` holds 1 / pivot_k and ``off[k]`` the multiplier
    Q_{k,parent} / pivot_k: the LDL' factor of Q_bb in the elimination
    order.  Elimination runs from the last node of the order (a leaf)
    towards the roots.  Returns 0, or -1 when a pivot is not positive
    (Q_bb is not positive definite).
    """
    cdef Py_ssize_t k
    cdef int p
    cdef double t
    for k in range(nb - 1, -1, -1):
        if k >= _AHEAD and parent[k - _AHEAD] >= 0:
            prefetch(&dg[parent[k - _AHEAD]])
        if not dg[k] > 0.0:
            return -1
        p = parent[k]
        t = off[k] / dg[k]
        if p >= 0:
            dg[p] -= off[k] * t
        off[k] = t
        dg[k] = 1.0 / dg[k]
    return 0


cdef void forest_substitute(Py_ssize_t nb, const int* order, const int* parent,
                            const double* inv, const double* mult, const double* r,
                            double scale, double* x, double* work) noexcept nogil:
    """Solve Q_bb x = scale * r with the factor of :func:`forest_factor`.

    ``r`` and ``x`` are indexed by position in the block; ``work`` holds
    2 nb doubles.  A forward pass from the leaves to the roots and a
    backward pass from the roots: no division, O(nb).
    """
    cdef double* cc = work
    cdef double* y = work + nb
    cdef Py_ssize_t k
    cdef int p
    for k in range(nb):
        if k + _AHEAD < nb:
            prefetch(&r[order[k + _AHEAD]])
        cc[k] = scale * r[order[k]]
    for k in range(nb - 1, 0, -1):
        if k >= _AHEAD and parent[k - _AHEAD] >= 0:
            prefetch(&cc[parent[k - _AHEAD]])
        p = parent[k]
        if p >= 0:
            cc[p] -= mult[k] * cc[k]
    for k in range(nb):
        if k + _AHEAD < nb:
            prefetch(&x[order[k + _AHEAD]])
            if parent[k + _AHEAD] >= 0:
                prefetch(&y[parent[k + _AHEAD]])
        p = parent[k]
        y[k] = cc[k] * inv[k]
        if p >= 0:
            y[k] -= mult[k] * y[p]
        x[order[k]] = y[k]


# ------------------------------------------------------------------ Python-level tools
def structure(CyGraph graph, const int[::1] nodes):
    """``(status, order, parent, diag, off)`` of the subgraph induced by ``nodes``
    (see :meth:`CyGraph.structure`: status is the number of trees, or -1 for a
    cycle, -2 for a repeated node, -3 for an asymmetric block)."""
    cdef Py_ssize_t nb = nodes.shape[0], status
    order = np.empty(nb, dtype=np.int32)
    parent = np.empty(nb, dtype=np.int32)
    dg = np.empty(nb)
    off = np.empty(nb)
    cdef int[::1] o = order, pa = parent
    cdef double[::1] d = dg, f = off
    with nogil:
        status = graph.structure(&nodes[0] if nb else NULL, nb, &o[0] if nb else NULL,
                                 &pa[0] if nb else NULL, &d[0] if nb else NULL,
                                 &f[0] if nb else NULL)
    return status, order, parent, dg, off


def solve_structure(order, parent, dg, off, const double[::1] r, bint overwrite=False):
    """Solve on a structure from :func:`structure`; returns x (block order)
    and a status (0, or -1 for a non-positive pivot).  ``dg`` and ``off``
    are overwritten by the factor with ``overwrite``, else left as they are."""
    cdef Py_ssize_t nb = r.shape[0]
    cdef const int[::1] o = order, pa = parent
    inv = dg if overwrite else np.array(dg, dtype=np.float64)
    mult = off if overwrite else np.array(off, dtype=np.float64)
    cdef double[::1] iv = inv, mu = mult
    x = np.empty(nb)
    work = np.empty(2 * max(nb, 1))
    cdef double[::1] xv = x, wv = work
    cdef int status = 0
    if nb:
        with nogil:
            status = forest_factor(nb, &pa[0], &iv[0], &mu[0])
            if status == 0:
                forest_substitute(nb, &o[0], &pa[0], &iv[0], &mu[0], &r[0], 1.0, &xv[0],
                                  &wv[0])
    return x, status


def grow_forest(CyGraph graph, const int[::1] candidates):
    """The greedy forest of ``candidates`` tried in order (node indices)."""
    cdef Py_ssize_t nc = candidates.shape[0], nb = 0
    out = np.zeros(max(nc, 1), dtype=np.int32)
    cdef int[::1] o = out
    if nc:
        with nogil:
            nb = graph.grow(&candidates[0], nc, &o[0])
    return out[:nb]


def greedy_coloring(CyGraph graph, const int[::1] order):
    """Welsh-Powell greedy colouring: each node in ``order`` gets the smallest
    colour not used by its already-coloured neighbours.  Returns colours
    (0-based; -1 for nodes not in ``order``)."""
    cdef Py_ssize_t n = graph.n, a, p
    cdef int i, j, c
    colors = np.full(n, -1, dtype=np.int32)
    used = np.full(n + 1, -1, dtype=np.int64)
    cdef int[::1] col = colors
    cdef int64_t[::1] u = used
    with nogil:
        for a in range(order.shape[0]):
            i = order[a]
            for p in range(graph.indptr[i], graph.indptr[i + 1]):
                j = graph.indices[p]
                if j != i and col[j] >= 0:
                    u[col[j]] = a
            c = 0
            while u[c] == a:
                c += 1
            col[i] = c
    return colors


def forest_partition(CyGraph graph, const int[::1] order):
    """Greedy forest partition (Section 5.5): each node in ``order`` joins the
    first block in which the nodes assigned so far stay a forest.  Returns
    block labels (0-based; -1 for nodes not in ``order``)."""
    cdef Py_ssize_t n = graph.n, a, p
    cdef int i, j, r, blk, nblk = 0
    cdef bint ok
    labels = np.full(n, -1, dtype=np.int32)
    cdef int[::1] lab = labels
    with nogil:
        for a in range(order.shape[0]):
            i = order[a]
            blk = 0
            while True:
                # the roots of i's neighbours in block blk must be distinct
                ok = True
                graph.cur += 1
                for p in range(graph.indptr[i], graph.indptr[i + 1]):
                    j = graph.indices[p]
                    if j == i or lab[j] != blk:
                        continue
                    r = graph._find(j)
                    if graph.stamp[r] == graph.cur:
                        ok = False
                        break
                    graph.stamp[r] = graph.cur
                if ok:
                    break
                blk += 1
            lab[i] = blk
            if blk == nblk:
                nblk += 1
            graph.uf[i] = i
            for p in range(graph.indptr[i], graph.indptr[i + 1]):
                j = graph.indices[p]
                if j != i and lab[j] == blk:
                    r = graph._find(j)
                    if r != i:
                        graph.uf[r] = i
        for a in range(order.shape[0]):
            graph.uf[order[a]] = -1
    return labels


# ------------------------------------------------------------------ selection
cdef class CyTreeSelector(CySelector):
    """Grow a maximal forest every iteration (Section 5.6).

    Nodes are tried in decreasing order of ``g_i^2 w_i`` (``w_i = 1``: the
    greedy GS tree; ``w_i = 1/D_i``: the GSD tree), or in a fresh random
    order (``randomize``).  Each iteration costs one sort of the active
    nodes (a radix sort, O(n)) and one pass over their adjacency lists:
    O(n + |E|).
    """
    cdef CyGraph graph
    cdef const double[::1] weight
    cdef bint randomize
    cdef double[::1] key
    cdef int[::1] cand
    cdef uint64_t[::1] kbuf, kbuf2
    cdef int[::1] ibuf, natural
    cdef Py_ssize_t[::1] count
    cdef unsigned char[::1] chosen_mark

    def __init__(self, CyGraph graph, active, weight, bint randomize, seed):
        ptr = np.arange(active.shape[0] + 1, dtype=np.int32)
        CySelector.__init__(self, ptr, active, np.zeros(active.shape[0]), 1, seed)
        self.graph = graph
        self.weight = weight
        self.randomize = randomize
        self.key = np.zeros(graph.n)
        self.cand = np.array(active, dtype=np.int32)
        self.natural = np.sort(np.asarray(active, dtype=np.int32))
        self.chosen_mark = np.zeros(graph.n, dtype=np.uint8)
        if not randomize:
            self.kbuf = np.zeros(active.shape[0], dtype=np.uint64)
            self.kbuf2 = np.zeros(active.shape[0], dtype=np.uint64)
            self.ibuf = np.zeros(active.shape[0], dtype=np.int32)
            self.count = np.zeros(65536, dtype=np.intp)

    def capacity(self):
        return self.cand.shape[0]       # a forest may hold every node

    cdef Py_ssize_t select(self, CyProblem prob, int* block) noexcept nogil:
        cdef Py_ssize_t a, r, nb, nc = self.cand.shape[0]
        cdef int i, t
        cdef double gi
        if self.randomize:
            for a in range(nc - 1, 0, -1):
                r = rng_below(&self.rng, a + 1)
                t = self.cand[a]
                self.cand[a] = self.cand[r]
                self.cand[r] = t
        elif nc > 0:
            # ties in the scores go to the smaller index
            for a in range(nc):
                i = self.natural[a]
                self.cand[a] = i
                gi = prob.grad_coord(i)
                self.key[i] = gi * gi * self.weight[i]
            sort_by_key(&self.cand[0], nc, &self.key[0], &self.kbuf[0], &self.kbuf2[0],
                        &self.ibuf[0], &self.count[0])
        self.last_unit = -1
        self.last_L = 0.0
        nb = self.graph.grow(&self.cand[0], nc, block)
        # hand the block over in index order: the solve and the update then
        # walk Q, x and the gradient in memory order
        for a in range(nb):
            self.chosen_mark[block[a]] = 1
        nb = 0
        for a in range(nc):
            i = self.natural[a]
            if self.chosen_mark[i]:
                self.chosen_mark[i] = 0
                block[nb] = i
                nb += 1
        return nb


# ------------------------------------------------------------------ update
cdef class CyForestUpdate(CyUpdate):
    """The block Newton step -Q_bb^{-1} grad_b f by message passing, O(|b|).

    For the quadratic problems that expose their graph, Q_bb is the block
    Hessian, so this is at once the exact, the matrix and the Newton update.
    The elimination order and the factor of each block of a fixed partition
    are built the first time the block is chosen and reused afterwards (Q is
    constant); blocks grown per iteration get theirs each time.
    """
    cdef CyGraph graph
    cdef const int[::1] unit_ptr
    cdef unsigned char[::1] built
    cdef int[::1] c_order, c_parent
    cdef double[::1] c_dg, c_off
    cdef int[::1] order, parent
    cdef double[::1] dg, off, work

    def __init__(self, CyGraph graph, unit_ptr):
        CyUpdate.__init__(self)
        self.graph = graph
        self.unit_ptr = unit_ptr
        n_units = unit_ptr.shape[0] - 1
        total = int(unit_ptr[n_units]) if n_units > 0 else 0
        self.built = np.zeros(max(n_units, 1), dtype=np.uint8)
        self.c_order = np.zeros(total, dtype=np.int32)
        self.c_parent = np.zeros(total, dtype=np.int32)
        self.c_dg = np.zeros(total)
        self.c_off = np.zeros(total)

    def reserve(self, Py_ssize_t max_block):
        """Vectors for blocks of up to ``max_block`` nodes; nothing quadratic."""
        if max_block <= self.reserved:
            return
        self.reserved = max_block
        self.d = np.zeros(max_block)
        self.work = np.zeros(2 * max_block)
        self.order = np.zeros(max_block, dtype=np.int32)
        self.parent = np.zeros(max_block, dtype=np.int32)
        self.dg = np.zeros(max_block)
        self.off = np.zeros(max_block)

    cdef int step(self, CyProblem prob, const Block* block) noexcept nogil:
        cdef const int* blk = block.coords
        cdef Py_ssize_t nb = block.size
        cdef const double* gb = block.grad
        cdef Py_ssize_t a, u = block.unit, s
        cdef int *o
        cdef int *pa
        cdef double *dg
        cdef double *off
        if nb == 0:
            return STEP_REJECTED
        if u >= 0 and u < self.unit_ptr.shape[0] - 1:
            s = self.unit_ptr[u]
            o = &self.c_order[s]
            pa = &self.c_parent[s]
            dg = &self.c_dg[s]
            off = &self.c_off[s]
            if not self.built[u]:
                if self.graph.structure(blk, nb, o, pa, dg, off) < 0:
                    return STEP_REJECTED
                if forest_factor(nb, pa, dg, off) != 0:
                    return STEP_INDEFINITE
                self.built[u] = 1
        else:
            o = &self.order[0]
            pa = &self.parent[0]
            dg = &self.dg[0]
            off = &self.off[0]
            if self.graph.structure(blk, nb, o, pa, dg, off) < 0:
                return STEP_REJECTED
            if forest_factor(nb, pa, dg, off) != 0:
                return STEP_INDEFINITE
        forest_substitute(nb, o, pa, dg, off, gb, -1.0, &self.d[0], &self.work[0])
        prob.apply(blk, nb, &self.d[0])
        return STEP_TAKEN
