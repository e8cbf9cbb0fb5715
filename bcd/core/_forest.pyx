"""Forest-structured blocks: linear-time solves, forest tests and block builders.

A symmetric sparse matrix Q defines an undirected graph whose edges are its
off-diagonal non-zeros.  A set of nodes b is *forest-structured* when the
subgraph induced by b has no cycle; then Q_bb x = r is solved in O(|b|)
by Gaussian elimination from the leaves towards the roots followed by
back-substitution (message passing; Algorithm 1 of Nutini, Laradji and
Schmidt).  The level sets of that algorithm are a breadth-first order of
each tree, which is what :meth:`Graph.structure` computes.

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
from libc.math cimport fabs, sqrt
from libc.stdint cimport int64_t, uint64_t

from bcd.core._problem cimport Problem
from bcd.core._random cimport RNG, rng_below, rng_seed, rng_uniform
from bcd.core._select cimport Selector
from bcd.core._update cimport Update


# ------------------------------------------------------------------ sorting
cdef inline bint _before(const double* key, int a, int b) noexcept nogil:
    """a comes first: larger key, ties to the smaller index."""
    return key[a] > key[b] or (key[a] == key[b] and a < b)


cdef void _sift_down(int* h, Py_ssize_t start, Py_ssize_t n, const double* key) noexcept nogil:
    # a heap whose root is the item that comes *last* in the order
    cdef Py_ssize_t i = start, c
    cdef int v = h[start]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _before(key, h[c], h[c + 1]):
            c += 1
        if not _before(key, v, h[c]):
            break
        h[i] = h[c]
        i = c
    h[i] = v


cdef void sort_by_key(int* items, Py_ssize_t n, const double* key) noexcept nogil:
    """Sort ``items`` by decreasing ``key[item]`` (ties: smaller item first).

    Heapsort: O(n log n), in place, no recursion.
    """
    cdef Py_ssize_t i
    cdef int t
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(items, i, n, key)
    for i in range(n - 1, 0, -1):
        t = items[0]
        items[0] = items[i]
        items[i] = t
        _sift_down(items, 0, i, key)


# ------------------------------------------------------------------ graph
cdef class Graph:
    """A symmetric sparse matrix in CSR form (canonical: sorted, no duplicates).

    Holds the scratch that structure computations and forest growth need, so
    that nothing of size n is allocated per call.
    """
    cdef readonly Py_ssize_t n
    cdef const int[::1] indptr
    cdef const int[::1] indices
    cdef const double[::1] data
    cdef const double[::1] diag
    cdef int[::1] pos              # node -> 1 + position in the block, negated once visited
    cdef int[::1] uf               # disjoint-set parent of forest nodes, -1 outside
    cdef int64_t[::1] stamp        # per-root marks of the current forest test
    cdef int64_t cur

    def __init__(self, indptr, indices, data, diag):
        self.n = indptr.shape[0] - 1
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.diag = diag
        self.pos = np.zeros(self.n, dtype=np.int32)
        self.uf = np.full(self.n, -1, dtype=np.int32)
        self.stamp = np.zeros(self.n, dtype=np.int64)
        self.cur = 0

    cdef Py_ssize_t structure(self, const int* nodes, Py_ssize_t nb, int* order, int* parent,
                              double* dg, double* off) noexcept nogil:
        """Breadth-first order of the forest induced by ``nodes``.

        Writes, for k = 0 .. nb-1 in breadth-first order (roots first):
        ``order[k]``, the position in ``nodes`` of the k-th node;
        ``parent[k]``, the order index (< k) of its parent or -1 at a root;
        ``dg[k]`` = Q_ii and ``off[k]`` = Q_{i,parent}.

        Returns the number of trees, -1 if the induced subgraph has a cycle
        and -2 if a node is repeated.  O(nb + sum of the nodes' degrees).
        """
        cdef Py_ssize_t a, k, p, head = 0, tail = 0, status = 0
        cdef int i, j, pnode
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
                if self.pos[i] < 0:              # visited
                    continue
                self.pos[i] = -self.pos[i]
                order[tail] = <int>a
                parent[tail] = -1
                dg[tail] = self.diag[i]
                off[tail] = 0.0
                tail += 1
                status += 1
                while head < tail:
                    k = head
                    head += 1
                    i = nodes[order[k]]
                    pnode = nodes[order[parent[k]]] if parent[k] >= 0 else -1
                    for p in range(self.indptr[i], self.indptr[i + 1]):
                        j = self.indices[p]
                        if j == i or j == pnode or self.pos[j] == 0:
                            continue
                        if self.pos[j] < 0:
                            # reached again by another path: a cycle
                            status = -1
                            break
                        order[tail] = self.pos[j] - 1
                        self.pos[j] = -self.pos[j]
                        parent[tail] = <int>k
                        dg[tail] = self.diag[j]
                        off[tail] = self.data[p]
                        tail += 1
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


cdef int forest_solve(Py_ssize_t nb, const int* order, const int* parent, const double* dg,
                      const double* off, const double* r, double* x, double* work) noexcept nogil:
    """Solve Q_bb x = r on a forest given by :meth:`Graph.structure`.

    ``r`` and ``x`` are indexed by position in the block; ``work`` holds
    3 nb doubles.  Eliminates from the last node in breadth-first order (a
    leaf) towards the roots, then back-substitutes from the roots.  Returns
    0, or -1 when a pivot is not positive (Q_bb is not positive definite).
    """
    cdef double* piv = work
    cdef double* cc = work + nb
    cdef double* y = work + 2 * nb
    cdef Py_ssize_t k
    cdef int p
    cdef double t
    for k in range(nb):
        piv[k] = dg[k]
        cc[k] = r[order[k]]
    for k in range(nb - 1, -1, -1):
        if not piv[k] > 0.0:
            return -1
        p = parent[k]
        if p >= 0:
            t = off[k] / piv[k]
            piv[p] -= off[k] * t
            cc[p] -= t * cc[k]
    for k in range(nb):
        p = parent[k]
        t = cc[k]
        if p >= 0:
            t -= off[k] * y[p]
        y[k] = t / piv[k]
        x[order[k]] = y[k]
    return 0


# ------------------------------------------------------------------ Python-level tools
def structure(Graph graph, const int[::1] nodes):
    """``(n_trees, order, parent, diag, off)`` of the subgraph induced by ``nodes``."""
    cdef Py_ssize_t nb = nodes.shape[0], status
    order = np.zeros(nb, dtype=np.int32)
    parent = np.zeros(nb, dtype=np.int32)
    dg = np.zeros(nb)
    off = np.zeros(nb)
    cdef int[::1] o = order, pa = parent
    cdef double[::1] d = dg, f = off
    with nogil:
        status = graph.structure(&nodes[0] if nb else NULL, nb, &o[0] if nb else NULL,
                                 &pa[0] if nb else NULL, &d[0] if nb else NULL,
                                 &f[0] if nb else NULL)
    return status, order, parent, dg, off


def solve_structure(order, parent, dg, off, const double[::1] r):
    """Solve on a structure from :func:`structure`; returns x (block order)
    and a status (0, or -1 for a non-positive pivot)."""
    cdef Py_ssize_t nb = r.shape[0]
    cdef const int[::1] o = order, pa = parent
    cdef const double[::1] d = dg, f = off
    x = np.zeros(nb)
    work = np.zeros(3 * max(nb, 1))
    cdef double[::1] xv = x, wv = work
    cdef int status = 0
    if nb:
        with nogil:
            status = forest_solve(nb, &o[0], &pa[0], &d[0], &f[0], &r[0], &xv[0], &wv[0])
    return x, status


def grow_forest(Graph graph, const int[::1] candidates):
    """The greedy forest of ``candidates`` tried in order (node indices)."""
    cdef Py_ssize_t nc = candidates.shape[0], nb = 0
    out = np.zeros(max(nc, 1), dtype=np.int32)
    cdef int[::1] o = out
    if nc:
        with nogil:
            nb = graph.grow(&candidates[0], nc, &o[0])
    return out[:nb]


def greedy_coloring(Graph graph, const int[::1] order):
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


def forest_partition(Graph graph, const int[::1] order):
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
cdef class TreeSelector(Selector):
    """Grow a maximal forest every iteration (Section 5.6).

    Nodes are tried in decreasing order of ``g_i^2 w_i`` (``w_i = 1``: the
    greedy GS tree; ``w_i = 1/D_i``: the GSD tree), or in a fresh random
    order (``randomize``).  Each iteration costs one sort of the active
    nodes and one pass over their adjacency lists: O(n log n + |E|).
    """
    cdef Graph graph
    cdef const double[::1] weight
    cdef bint randomize
    cdef double[::1] key
    cdef int[::1] cand

    def __init__(self, Graph graph, active, weight, bint randomize, seed):
        ptr = np.arange(active.shape[0] + 1, dtype=np.int32)
        Selector.__init__(self, ptr, active, np.zeros(active.shape[0]), 1, seed)
        self.graph = graph
        self.weight = weight
        self.randomize = randomize
        self.needs_gradient = not randomize
        self.key = np.zeros(graph.n)
        self.cand = np.array(active, dtype=np.int32)

    cdef Py_ssize_t select(self, Problem prob, int* block) noexcept nogil:
        cdef Py_ssize_t a, r, nc = self.cand.shape[0]
        cdef int i, t
        cdef double gi
        if self.randomize:
            for a in range(nc - 1, 0, -1):
                r = rng_below(&self.rng, a + 1)
                t = self.cand[a]
                self.cand[a] = self.cand[r]
                self.cand[r] = t
        else:
            for a in range(nc):
                i = self.cand[a]
                gi = prob.grad_coord(i)
                self.key[i] = gi * gi * self.weight[i]
            sort_by_key(&self.cand[0], nc, &self.key[0])
        self.last_unit = -1
        self.last_L = 0.0
        return self.graph.grow(&self.cand[0], nc, block)


# ------------------------------------------------------------------ update
cdef class ForestUpdate(Update):
    """The block Newton step -Q_bb^{-1} grad_b f by message passing, O(|b|).

    For the quadratic problems that expose their graph, Q_bb is the block
    Hessian, so this is at once the exact, the matrix and the Newton update.
    The breadth-first structure of each block of a fixed partition is built
    the first time the block is chosen and reused afterwards; blocks grown
    per iteration get theirs each time.
    """
    cdef Graph graph
    cdef const int[::1] unit_ptr
    cdef unsigned char[::1] built
    cdef int[::1] c_order, c_parent
    cdef double[::1] c_dg, c_off
    cdef int[::1] order, parent
    cdef double[::1] dg, off, r, work

    def __init__(self, Graph graph, unit_ptr):
        Update.__init__(self)
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
        self.r = np.zeros(max_block)
        self.work = np.zeros(3 * max_block)
        self.order = np.zeros(max_block, dtype=np.int32)
        self.parent = np.zeros(max_block, dtype=np.int32)
        self.dg = np.zeros(max_block)
        self.off = np.zeros(max_block)

    cdef int step(self, Problem prob, Selector sel, const int* blk, Py_ssize_t nb,
                  const double* gb) noexcept nogil:
        cdef Py_ssize_t a, u = sel.last_unit, s
        cdef int *o
        cdef int *pa
        cdef double *dg
        cdef double *off
        if nb == 0:
            return 1
        if u >= 0 and u < self.unit_ptr.shape[0] - 1:
            s = self.unit_ptr[u]
            o = &self.c_order[s]
            pa = &self.c_parent[s]
            dg = &self.c_dg[s]
            off = &self.c_off[s]
            if not self.built[u]:
                if self.graph.structure(blk, nb, o, pa, dg, off) < 0:
                    return 1
                self.built[u] = 1
        else:
            o = &self.order[0]
            pa = &self.parent[0]
            dg = &self.dg[0]
            off = &self.off[0]
            if self.graph.structure(blk, nb, o, pa, dg, off) < 0:
                return 1
        for a in range(nb):
            self.r[a] = -gb[a]
        if forest_solve(nb, o, pa, dg, off, &self.r[0], &self.d[0], &self.work[0]) != 0:
            return 1
        prob.apply(blk, nb, &self.d[0])
        return 0
