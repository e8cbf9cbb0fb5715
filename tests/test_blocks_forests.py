"""Block strategies: fixed partitions of the coordinates and the
forest-structured blocks of Section 5 of Nutini, Laradji and Schmidt (the
message-passing solve, the forest test, the block builders, the
forest-structured strategies of ``bcd.solve`` and Figure 6 of the paper)."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

import bcd
from bcd.core.blocks import partition
from bcd.forest import forest_partition, greedy_coloring, greedy_forest, is_forest

from _data import assemble_parts, random_problem, relative_error

PARTITION_RULES = ["cyclic", "gs", "gsd", "gsl", "random", "lipschitz"]
ORDERS = ["natural", "random", "lipschitz"]


# ------------------------------------------------------------- fixed partitions

@pytest.mark.parametrize("kind", ["order", "random", "sort", "avg"])
@pytest.mark.parametrize("n,tau", [(20, 5), (23, 5), (7, 7), (9, 1)])
def test_partitions_cover_active_coordinates(kind, n, tau):
    rs = np.random.RandomState(0)
    L = rs.uniform(0.1, 10.0, n)
    L[2] = 0.0                      # an empty column is never placed in a block
    blocks = partition(L, tau, kind, rs)
    allc = np.concatenate(blocks)
    np.testing.assert_array_equal(np.sort(allc), np.flatnonzero(L > 0))
    assert len(blocks) == -(-(n - 1) // tau)
    assert all(1 <= len(blk) <= tau and np.all(np.diff(blk) > 0) for blk in blocks)


def test_sort_and_avg_partitions():
    L = np.arange(1.0, 13.0)
    blocks = partition(L, 3, "sort", np.random.RandomState(0))
    np.testing.assert_array_equal(blocks[0], [9, 10, 11])        # largest together
    avg = partition(L, 3, "avg", np.random.RandomState(0))
    means = [L[blk].mean() for blk in avg]
    sort_means = [L[blk].mean() for blk in blocks]
    assert max(means) - min(means) <= 1.0                         # balanced
    assert max(sort_means) - min(sort_means) == 9.0
    assert any(set(blk) >= {11, 0} for blk in partition(L, 2, "avg", None))


# -------------------------------------- helpers of the forest-structured blocks

def spd_from_edges(n, rows, cols, rs, dtype=np.float64):
    """A symmetric, strictly diagonally dominant matrix whose graph has the
    given edges; off-diagonal weights of both signs and varied sizes."""
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    w = rs.uniform(0.1, 3.0, rows.size) * rs.choice([-1.0, 1.0], rows.size)
    U = sp.coo_matrix((w, (rows, cols)), shape=(n, n))
    A = (U + U.T).tocsr()
    diag = np.asarray(abs(A).sum(axis=1)).ravel() + rs.uniform(0.1, 1.0, n)
    return sp.csr_matrix(A + sp.diags(diag), dtype=dtype)


def random_tree_edges(n, rs):
    """Edges of a random tree: every node but the first gets a random earlier
    parent, then node labels are shuffled."""
    child = np.arange(1, n)
    parent = np.array([rs.randint(0, i) for i in child], dtype=np.int64)
    perm = rs.permutation(n)
    return perm[child], perm[parent]


def random_graph(n, density, rs):
    """Symmetric adjacency (no diagonal, no explicit zeros) of a random graph."""
    U = sp.triu(sp.random(n, n, density=density, random_state=rs, format="csr"), k=1)
    U.data = rs.uniform(0.5, 2.0, U.nnz)
    A = (U + U.T).tocsr()
    A.eliminate_zeros()
    return A


def induced_is_forest(adjacency, nodes):
    """Brute force: an induced subgraph is a forest iff #edges = #nodes - #components."""
    nodes = np.asarray(nodes, dtype=np.int64)
    if nodes.size == 0:
        return True
    sub = sp.csr_matrix(adjacency[nodes][:, nodes])
    sub.setdiag(0)
    sub.eliminate_zeros()
    n_comp = connected_components(sub, directed=False)[0]
    return sub.nnz // 2 == nodes.size - n_comp


def neighbours(adjacency):
    A = sp.csr_matrix(adjacency)
    return [set(A.indices[A.indptr[i]:A.indptr[i + 1]]) - {i} for i in range(A.shape[0])]


def lattice_problem(size=10, n_labelled=8, weight=1.0, seed=0):
    W, labels = bcd.datasets.make_lattice_dataset(size, n_labelled, weight, random_state=seed)
    return bcd.LabelPropagation(W, labels)


def knn_problem(n_samples=120, n_labelled=10, seed=3):
    W, labels = bcd.datasets.make_two_moons_dataset(n_samples, n_labelled, random_state=seed)
    return bcd.LabelPropagation(W, labels)


SMALL_PROBLEMS = {"lattice": lattice_problem, "knn": knn_problem}


def direct_solution(problem):
    return spla.spsolve(sp.csc_matrix(problem.Q), problem.c)


# ------------------------------------------------------------------- tree_solve

@pytest.mark.parametrize("seed", range(4))
def test_tree_solve_random_tree_matches_spsolve(seed):
    rs = np.random.RandomState(seed)
    n = 300
    Q = spd_from_edges(n, *random_tree_edges(n, rs), rs)
    c = rs.randn(n)
    x = bcd.tree_solve(Q, c)
    assert x.shape == (n,)
    assert relative_error(x, spla.spsolve(Q.tocsc(), c)) <= 1e-10
    # a block given in shuffled order: x and c follow that order
    nodes = rs.permutation(n)
    x = bcd.tree_solve(Q, c[nodes], nodes)
    assert relative_error(x[np.argsort(nodes)], spla.spsolve(Q.tocsc(), c)) <= 1e-10


@pytest.mark.parametrize("seed", range(4))
def test_tree_solve_random_forest_matches_spsolve(seed):
    rs = np.random.RandomState(10 + seed)
    n = 400
    rows, cols = random_tree_edges(n, rs)
    keep = rs.rand(rows.size) > 0.3            # cut about 30% of the edges
    Q = spd_from_edges(n, rows[keep], cols[keep], rs)
    assert connected_components(Q, directed=False)[0] > 50
    c = rs.randn(n)
    assert relative_error(bcd.tree_solve(Q, c), spla.spsolve(Q.tocsc(), c)) <= 1e-10


@pytest.mark.parametrize("seed", range(3))
def test_tree_solve_on_a_forest_inside_a_graph_with_cycles(seed):
    rs = np.random.RandomState(20 + seed)
    W = bcd.datasets.make_lattice_graph(15, 17)
    coo = sp.triu(W, k=1).tocoo()
    Q = spd_from_edges(W.shape[0], coo.row, coo.col, rs)
    assert not is_forest(Q)
    nodes = greedy_forest(Q, rs.permutation(W.shape[0]))
    nodes = nodes[rs.permutation(nodes.size)]
    assert nodes.size > W.shape[0] // 2
    c = rs.randn(nodes.size)
    block = sp.csc_matrix(Q[nodes][:, nodes])
    assert relative_error(bcd.tree_solve(Q, c, nodes), spla.spsolve(block, c)) <= 1e-10
    # any sub-block of a forest is a forest too
    sub = nodes[rs.rand(nodes.size) < 0.5]
    c_sub = rs.randn(sub.size)
    ref = spla.spsolve(sp.csc_matrix(Q[sub][:, sub]), c_sub)
    assert relative_error(bcd.tree_solve(Q, c_sub, sub.tolist()), ref) <= 1e-10


@pytest.mark.parametrize("shuffle", [False, True])
def test_tree_solve_long_path(shuffle):
    # depth worst case: one tree of depth n - 1
    rs = np.random.RandomState(5)
    n = 5000
    rows, cols = np.arange(n - 1), np.arange(1, n)
    if shuffle:
        perm = rs.permutation(n)
        rows, cols = perm[rows], perm[cols]
    Q = spd_from_edges(n, rows, cols, rs)
    c = rs.randn(n)
    assert relative_error(bcd.tree_solve(Q, c), spla.spsolve(Q.tocsc(), c)) <= 1e-10


@pytest.mark.parametrize("centre", [0, 2500, 5000])
def test_tree_solve_star(centre):
    # degree worst case: one node joined to all the others
    rs = np.random.RandomState(6)
    n = 5001
    leaves = np.delete(np.arange(n), centre)
    Q = spd_from_edges(n, np.full(n - 1, centre), leaves, rs)
    c = rs.randn(n)
    assert relative_error(bcd.tree_solve(Q, c), spla.spsolve(Q.tocsc(), c)) <= 1e-10


def test_tree_solve_laplacian_of_a_tree_plus_a_small_shift():
    # not diagonally dominant by a wide margin: ill-conditioned but positive definite
    rs = np.random.RandomState(7)
    n = 200
    rows, cols = random_tree_edges(n, rs)
    W = sp.coo_matrix((rs.uniform(0.5, 2.0, rows.size), (rows, cols)), shape=(n, n))
    W = (W + W.T).tocsr()
    Q = sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel() + 1e-2) - W)
    c = rs.randn(n)
    x_ref = spla.spsolve(Q.tocsc(), c)
    x = bcd.tree_solve(Q, c)
    assert relative_error(x, x_ref) <= 1e-9
    assert np.max(np.abs(Q @ x - c)) <= 1e-10 * np.max(np.abs(c)) * np.max(Q.diagonal())


def test_tree_solve_dense_and_float32_input():
    rs = np.random.RandomState(8)
    n = 60
    Q = spd_from_edges(n, *random_tree_edges(n, rs), rs)
    c = rs.randn(n)
    x_ref = spla.spsolve(Q.tocsc(), c)
    assert relative_error(bcd.tree_solve(Q.toarray(), c), x_ref) <= 1e-10
    assert relative_error(bcd.tree_solve(np.asfortranarray(Q.toarray()), list(c)), x_ref) <= 1e-10
    # other sparse formats
    for fmt in ("csc", "coo", "lil"):
        assert relative_error(bcd.tree_solve(Q.asformat(fmt), c), x_ref) <= 1e-10
    # float32 input is solved exactly for the float32 values
    Q32, c32 = Q.astype(np.float32), c.astype(np.float32)
    x_ref32 = spla.spsolve(sp.csc_matrix(Q32, dtype=np.float64), c32.astype(np.float64))
    for M in (Q32, Q32.toarray()):
        x32 = bcd.tree_solve(M, c32)
        assert x32.dtype.kind == "f" and np.all(np.isfinite(x32))
        # solved in double precision when the result is returned in double precision
        tol = 1e-10 if x32.dtype == np.float64 else 1e-6
        assert relative_error(np.asarray(x32, dtype=np.float64), x_ref32) <= tol


def test_tree_solve_ignores_explicit_zeros_and_keeps_inputs():
    # a triangle whose two edges are stored zeros: the graph is a single edge
    Q = sp.csr_matrix(np.array([[3.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 1.0, 3.0]]))
    Q.data[[2, 5]] = 0.0                # Q[0, 2] and Q[1, 2]
    Q.data[[6, 7]] = 0.0                # Q[2, 0] and Q[2, 1]
    assert Q.nnz == 9
    assert is_forest(Q)
    before = (Q.data.copy(), Q.indices.copy(), Q.indptr.copy())
    c = np.array([1.0, 2.0, 3.0])
    c_before = c.copy()
    x = bcd.tree_solve(Q, c)
    np.testing.assert_allclose(x, np.linalg.solve(Q.toarray(), c), rtol=1e-12)
    assert Q.nnz == 9
    for a, b in zip(before, (Q.data, Q.indices, Q.indptr)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c, c_before)


def test_tree_solve_empty_and_single_node_blocks():
    rs = np.random.RandomState(9)
    Q = spd_from_edges(10, *random_tree_edges(10, rs), rs)
    assert bcd.tree_solve(Q, [], nodes=np.array([], dtype=np.int64)).shape == (0,)
    x = bcd.tree_solve(Q, [2.0], nodes=[4])
    np.testing.assert_allclose(x, [2.0 / Q[4, 4]], rtol=1e-15)


# ------------------------------------------------------------------ forest test

@pytest.mark.parametrize("density", [0.05, 0.12, 0.25, 0.5])
def test_is_forest_matches_brute_force(density):
    rs = np.random.RandomState(int(density * 100))
    n_forests = n_cycles = 0
    for trial in range(12):
        n = rs.randint(6, 20)
        A = random_graph(n, density, rs)
        G = A + sp.diags(rs.uniform(1.0, 2.0, n))       # the diagonal is not an edge
        assert is_forest(G) == induced_is_forest(A, np.arange(n))
        for _ in range(40):
            size = rs.randint(0, n + 1)
            nodes = rs.choice(n, size, replace=False)
            expected = induced_is_forest(A, nodes)
            assert is_forest(G, nodes) == expected, (trial, nodes)
            assert is_forest(G.toarray(), nodes) == expected
            n_forests += expected
            n_cycles += not expected
    # both answers were exercised
    assert n_forests > 20
    if density >= 0.12:
        assert n_cycles > 20


def test_is_forest_small_cases():
    assert is_forest(bcd.datasets.make_lattice_graph(1, 30))           # a path
    assert not is_forest(bcd.datasets.make_lattice_graph(2, 2))        # a 4-cycle
    assert is_forest(bcd.datasets.make_lattice_graph(2, 2), [0, 1, 3])
    assert not is_forest(bcd.datasets.make_lattice_graph(30, 30))
    assert is_forest(sp.identity(5, format="csr"))                     # no edges
    triangle = np.ones((3, 3))
    assert not is_forest(triangle)
    assert is_forest(triangle, [0, 2])
    assert is_forest(triangle, [])


# --------------------------------------------------------------- block builders

GRAPHS = {
    "lattice": lambda rs: bcd.datasets.make_lattice_graph(9, 11),
    "random": lambda rs: random_graph(90, 0.06, rs),
    "knn": lambda rs: bcd.datasets.make_knn_graph(rs.randn(100, 2), 4),
}


def reference_greedy_forest(A, order):
    forest = []
    for v in order:
        if induced_is_forest(A, forest + [v]):
            forest.append(v)
    return forest


def reference_forest_partition(A, order, n):
    labels = np.full(n, -1)
    blocks = []
    for v in order:
        for k, blk in enumerate(blocks):
            if induced_is_forest(A, blk + [v]):
                blk.append(v)
                labels[v] = k
                break
        else:
            blocks.append([v])
            labels[v] = len(blocks) - 1
    return labels


def reference_coloring(A, order, n):
    nbrs = neighbours(A)
    colors = np.full(n, -1)
    for v in order:
        used = {colors[j] for j in nbrs[v]}
        c = 0
        while c in used:
            c += 1
        colors[v] = c
    return colors


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("seed", range(2))
def test_greedy_forest_is_a_maximal_forest(graph, seed):
    rs = np.random.RandomState(seed)
    A = GRAPHS[graph](rs)
    n = A.shape[0]
    for order in (rs.permutation(n), rs.choice(n, n // 2, replace=False)):
        forest = greedy_forest(A, order)
        assert forest.dtype.kind == "i"
        assert forest[0] == order[0]
        assert is_forest(A, forest)
        assert induced_is_forest(A, forest)
        assert len(np.unique(forest)) == forest.size
        assert set(forest) <= set(order)
        # nodes are added in the order they are tried
        position = {v: k for k, v in enumerate(order)}
        assert all(position[a] < position[b] for a, b in zip(forest[:-1], forest[1:]))
        # maximal: no other node of order can join
        members = set(forest.tolist())
        for v in order:
            if v not in members:
                assert not is_forest(A, np.append(forest, v))
        np.testing.assert_array_equal(forest, reference_greedy_forest(A, list(order)))


def test_greedy_forest_of_a_forest_keeps_every_node():
    rs = np.random.RandomState(3)
    Q = spd_from_edges(50, *random_tree_edges(50, rs), rs)
    order = rs.permutation(50)
    np.testing.assert_array_equal(greedy_forest(Q, order), order)


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("seed", range(2))
def test_forest_partition_blocks_are_forests(graph, seed):
    rs = np.random.RandomState(seed)
    A = GRAPHS[graph](rs)
    n = A.shape[0]
    for order in (None, rs.permutation(n)):
        labels = forest_partition(A, order)
        assert labels.shape == (n,)
        assert labels.min() == 0
        n_blocks = labels.max() + 1
        assert set(np.unique(labels)) == set(range(n_blocks))
        for k in range(n_blocks):
            block = np.flatnonzero(labels == k)
            assert is_forest(A, block) and induced_is_forest(A, block)
        visit = np.arange(n) if order is None else order
        np.testing.assert_array_equal(labels, reference_forest_partition(A, list(visit), n))
    # nodes outside a partial order are left out
    part = rs.choice(n, n // 3, replace=False)
    labels = forest_partition(A, part)
    assert np.all(labels[np.setdiff1d(np.arange(n), part)] == -1)
    assert np.all(labels[part] >= 0)


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (4, 7), (7, 4), (20, 20), (50, 50), (2, 40)])
def test_forest_partition_of_a_lattice_has_two_blocks(shape):
    W = bcd.datasets.make_lattice_graph(*shape)
    labels = forest_partition(W)
    assert labels.max() + 1 == 2
    for k in range(2):
        assert is_forest(W, np.flatnonzero(labels == k))
    # two large blocks (Figure 3b of the paper), unlike a tree plus leftovers
    assert min(np.bincount(labels)) >= W.shape[0] // 4
    # a path needs a single block
    assert forest_partition(bcd.datasets.make_lattice_graph(1, shape[0] * shape[1])).max() == 0


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("seed", range(2))
def test_greedy_coloring_is_proper(graph, seed):
    rs = np.random.RandomState(seed)
    A = GRAPHS[graph](rs)
    n = A.shape[0]
    max_degree = max(len(s) for s in neighbours(A))
    coo = sp.triu(A, k=1).tocoo()
    for order in (None, rs.permutation(n)):
        colors = greedy_coloring(A, order)
        assert colors.shape == (n,) and colors.min() == 0
        assert np.all(colors[coo.row] != colors[coo.col])
        assert colors.max() + 1 <= max_degree + 1
        visit = np.arange(n) if order is None else order
        np.testing.assert_array_equal(colors, reference_coloring(A, list(visit), n))
        # colour classes have no internal edges, so they are forests too
        for k in range(colors.max() + 1):
            assert is_forest(A, np.flatnonzero(colors == k))
    part = rs.choice(n, n // 3, replace=False)
    colors = greedy_coloring(A, part)
    assert np.all(colors[np.setdiff1d(np.arange(n), part)] == -1)


@pytest.mark.parametrize("shape", [(2, 2), (3, 5), (8, 8), (30, 30), (1, 10)])
def test_greedy_coloring_of_a_lattice_is_red_black(shape):
    n_rows, n_cols = shape
    W = bcd.datasets.make_lattice_graph(n_rows, n_cols)
    colors = greedy_coloring(W)
    i = np.arange(n_rows * n_cols)
    np.testing.assert_array_equal(colors, (i % n_rows + i // n_rows) % 2)
    # row-major order gives the same two colours
    row_major = np.arange(n_rows * n_cols).reshape(n_cols, n_rows).T.ravel()
    assert greedy_coloring(W, row_major).max() == 1


# ------------------------------------------------------ strategies of bcd.solve

def _check_blocks_partition_active(problem, units):
    blocks = units.blocks()
    allc = np.concatenate(blocks)
    np.testing.assert_array_equal(np.sort(allc), np.arange(problem.n_coordinates))
    for blk in blocks:
        assert blk.size > 0
        assert is_forest(problem.Q, blk)
        assert induced_is_forest(problem.Q, blk)
    return blocks


@pytest.mark.parametrize("name", sorted(SMALL_PROBLEMS))
@pytest.mark.parametrize("blocks", ["forest_partition", "coloring"])
@pytest.mark.parametrize("order", ORDERS)
def test_fixed_forest_strategies_select_forests_and_converge(name, blocks, order):
    problem = SMALL_PROBLEMS[name]()
    x_ref = direct_solution(problem)
    for rule in PARTITION_RULES:
        kernel, units, selector, _ = assemble_parts(problem, rule, blocks, 5, "exact", order,
                                               np.random.RandomState(0))
        all_blocks = _check_blocks_partition_active(problem, units)
        if blocks == "coloring":
            Q = sp.csr_matrix(problem.Q)
            for blk in all_blocks:        # colour classes: Q_bb is diagonal
                sub = Q[blk][:, blk]
                assert sub.nnz == blk.size
        known = {tuple(b) for b in all_blocks}
        for blk in selector.draw(kernel, 2 * units.n_units):
            assert tuple(np.sort(blk)) in known
        r = bcd.solve(problem, rule=rule, blocks=blocks, vertex_order=order, update="exact",
                      tol=1e-10, max_iter=200000, random_state=1)
        assert r.converged, (rule, r.status)
        assert r.optimality <= 1e-10
        assert relative_error(r.x, x_ref) <= 1e-6, rule
        assert r.options["vertex_order"] == order


def _traced_solve(problem, **options):
    xs = [np.zeros(problem.n_coordinates)]

    def record(info):
        xs.append(info.x.copy())

    r = bcd.solve(problem, update="exact", callback=record, **options)
    return r, xs


@pytest.mark.parametrize("name", sorted(SMALL_PROBLEMS))
@pytest.mark.parametrize("rule", ["gs", "gsd", "random"])
def test_tree_strategies_update_forests_and_converge(name, rule):
    problem = SMALL_PROBLEMS[name]()
    Q = sp.csr_matrix(problem.Q)
    x_ref = direct_solution(problem)
    r, xs = _traced_solve(problem, rule=rule, blocks="tree", tol=1e-10, max_iter=20000,
                          random_state=2)
    assert r.converged and r.optimality <= 1e-10
    assert relative_error(r.x, x_ref) <= 1e-6
    assert "partition" not in r.options and "vertex_order" not in r.options
    sizes = []
    for k in range(min(len(xs) - 1, 60)):
        g = Q @ xs[k] - problem.c
        moved = np.flatnonzero(xs[k + 1] != xs[k])
        sizes.append(moved.size)
        assert is_forest(Q, moved), k
        if rule == "gs":
            # the coordinate with the largest |grad_i f| is always in the block
            assert np.argmax(np.abs(g)) in moved
    # the blocks are large: forests cover a good part of the graph
    assert max(sizes) > problem.n_coordinates // 3


@pytest.mark.parametrize("name", sorted(SMALL_PROBLEMS))
@pytest.mark.parametrize("rule", ["gs", "gsd"])
def test_greedy_tree_first_step_is_the_exact_solve_on_the_greedy_forest(name, rule):
    # from x0 = 0 the gradient is exactly -c: the first block is the greedy
    # forest of the nodes sorted by decreasing g_i^2 w_i (ties: smaller index)
    problem = SMALL_PROBLEMS[name]()
    n = problem.n_coordinates
    weight = np.ones(n) if rule == "gs" else 1.0 / problem.Q.diagonal()
    key = problem.c ** 2 * weight
    order = np.lexsort((np.arange(n), -key))
    block = greedy_forest(problem.Q, order)
    expected = np.zeros(n)
    expected[block] = bcd.tree_solve(problem.Q, problem.c[block], block)
    r = bcd.solve(problem, rule=rule, blocks="tree", update="exact", max_iter=1, tol=0.0)
    assert r.n_iter == 1
    np.testing.assert_allclose(r.x, expected, rtol=1e-12, atol=1e-14 * np.abs(expected).max())
    assert np.count_nonzero(r.x) > n // 4


@pytest.mark.parametrize("rule", ["gs", "gsd", "random"])
def test_tree_selector_draw_returns_whole_forests(rule):
    W, labels = bcd.datasets.make_lattice_dataset(10, 8, 1.0, random_state=0)
    problem = bcd.LabelPropagation(W, labels)
    kernel, units, selector, _ = assemble_parts(problem, rule, "tree", 5, "exact", "natural",
                                           np.random.RandomState(0))
    blocks = selector.draw(kernel, 3)
    n = problem.n_coordinates
    w = np.ones(n) if rule == "gs" else 1.0 / problem.Q.diagonal()
    order = np.lexsort((np.arange(n), -(problem.c ** 2 * w)))
    greedy = bcd.forest.greedy_forest(problem.Q, order)
    for b in blocks:
        assert b.size > 40
        assert bcd.forest.is_forest(problem.Q, b)
        assert all(not bcd.forest.is_forest(problem.Q, np.append(b, v))
                   for v in np.setdiff1d(np.arange(n), b))
        if rule != "random":
            np.testing.assert_array_equal(b, np.sort(greedy))   # handed over in index order


def test_forest_updates_are_the_same_solve():
    problem = lattice_problem(12, 10)
    runs = [bcd.solve(problem, rule="gs", blocks="forest_partition", update=u, max_iter=40,
                      tol=0.0) for u in ("exact", "matrix", "newton")]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.x, runs[0].x)
    runs = [bcd.solve(problem, rule="gs", blocks="tree", update=u, max_iter=15, tol=0.0)
            for u in ("exact", "matrix", "newton")]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.x, runs[0].x)


def test_forest_strategies_are_reproducible():
    problem = knn_problem()
    for options in (dict(blocks="tree", rule="random"),
                    dict(blocks="forest_partition", vertex_order="random", rule="random"),
                    dict(blocks="coloring", vertex_order="random", rule="lipschitz")):
        a = bcd.solve(problem, update="exact", max_iter=30, tol=0.0, random_state=5, **options)
        b = bcd.solve(problem, update="exact", max_iter=30, tol=0.0, random_state=5, **options)
        np.testing.assert_array_equal(a.x, b.x)


def test_forest_partition_cyclic_on_a_forest_is_one_exact_solve():
    # a Quadratic whose graph is a forest is solved by the first block
    rs = np.random.RandomState(4)
    Q = spd_from_edges(200, *random_tree_edges(200, rs), rs)
    c = rs.randn(200)
    problem = bcd.Quadratic(Q, c)
    for options in (dict(blocks="forest_partition", rule="cyclic"), dict(blocks="tree", rule="gs")):
        r = bcd.solve(problem, update="exact", tol=1e-10, max_iter=5, check_every=1, **options)
        assert r.converged and r.n_iter == 1
        assert relative_error(r.x, spla.spsolve(Q.tocsc(), c)) <= 1e-10


@pytest.mark.parametrize("blocks, rule", [("tree", "gs"), ("forest_partition", "cyclic"),
                                          ("coloring", "cyclic")])
def test_forest_blocks_on_a_problem_with_fewer_coordinates_than_the_default_block_size(blocks,
                                                                                        rule):
    Q = sp.diags([[-1.0, -1.0], [3.0, 3.0, 3.0], [-1.0, -1.0]], [-1, 0, 1])
    c = np.array([1.0, 2.0, 3.0])
    r = bcd.solve(bcd.Quadratic(Q, c), rule=rule, blocks=blocks, update="exact", tol=1e-12,
                  max_iter=100)
    assert r.converged
    np.testing.assert_allclose(r.x, np.linalg.solve(Q.toarray(), c), rtol=1e-12)


def test_one_sided_tiny_entry_is_handled_consistently():
    # a triangle whose closing edge Q[2, 0] = 1e-13 has no stored mirror entry Q[0, 2];
    # the difference is within the symmetry tolerance.  Rejecting such a matrix as not
    # symmetric is fine; accepting it and then answering inconsistently is not.
    Q = np.array([[3.0, 1.0, 0.0], [1.0, 3.0, 1.0], [1e-13, 1.0, 3.0]])

    def partition_is_forests():
        labels = forest_partition(Q, [1, 2, 0])
        return all(is_forest(Q, np.flatnonzero(labels == k)) for k in range(labels.max() + 1))

    def greedy_tree_converges():
        r = bcd.solve(bcd.Quadratic(Q, np.ones(3)), rule="gs", blocks="tree", update="exact",
                      tol=1e-12, max_iter=100, block_size=1)
        return r.converged

    checks = {
        "the answer for a node set does not depend on its order":
            lambda: is_forest(Q, [0, 2]) == is_forest(Q, [2, 0]),
        "greedy_forest builds a forest": lambda: is_forest(Q, greedy_forest(Q, [1, 2, 0])),
        "forest_partition builds forests": partition_is_forests,
        "the greedy tree solve converges": greedy_tree_converges,
    }
    for what, check in checks.items():
        try:
            ok = check()
        except ValueError as exc:
            assert "symmetric" in str(exc), what
        else:
            assert ok, what


# --------------------------------------------------------------------- Figure 6

def _gap(problem, f_star, max_iter, **options):
    r = bcd.solve(problem, update="exact", max_iter=max_iter, tol=0.0, **options)
    assert r.n_iter == max_iter
    return (r.objective - f_star) / abs(f_star)


def _figure6_gaps(problem, order, max_iter=100):
    f_star = problem.objective(direct_solution(problem))
    general = int(math.floor(problem.n_coordinates ** (1.0 / 3.0)))
    random_tree = [_gap(problem, f_star, max_iter, blocks="tree", rule="random", random_state=s)
                   for s in range(3)]
    return dict(
        tree_partition=_gap(problem, f_star, max_iter, blocks="forest_partition",
                            vertex_order=order, rule="cyclic"),
        greedy_tree=_gap(problem, f_star, max_iter, blocks="tree", rule="gs"),
        random_tree=float(np.exp(np.mean(np.log(random_tree)))),
        red_black=_gap(problem, f_star, max_iter, blocks="coloring", vertex_order=order,
                       rule="cyclic"),
        general=_gap(problem, f_star, max_iter, blocks="variable", rule="gs",
                     block_size=general),
    )


def _assert_figure6_orderings(gaps):
    assert all(g > 0 for g in gaps.values()), gaps
    # tree-structured blocks are ahead of red-black ...
    assert gaps["tree_partition"] < 0.5 * gaps["red_black"], gaps
    assert gaps["greedy_tree"] < 0.5 * gaps["red_black"], gaps
    assert gaps["random_tree"] < gaps["red_black"], gaps
    # ... which is ahead of small unstructured blocks
    assert gaps["red_black"] < 0.5 * gaps["general"], gaps


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_figure6_ordering_on_a_lattice(seed):
    # dataset D at 20 x 20 (4% of the nodes labelled, weight 1e5), natural order
    W, labels = bcd.datasets.make_lattice_dataset(20, 16, 1e5, random_state=seed)
    _assert_figure6_orderings(_figure6_gaps(bcd.LabelPropagation(W, labels), "natural"))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_figure6_ordering_on_two_moons(seed):
    # dataset E at 400 points (5% labelled), partitions in Lipschitz order
    W, labels = bcd.datasets.make_two_moons_dataset(400, 20, random_state=seed)
    gaps = _figure6_gaps(bcd.LabelPropagation(W, labels), "lipschitz")
    _assert_figure6_orderings(gaps)
    # on unstructured data the greedy tree is the fastest of all
    others = [v for k, v in gaps.items() if k != "greedy_tree"]
    assert gaps["greedy_tree"] < min(others), gaps


def test_figure6_lipschitz_order_beats_random_order_for_tree_partitions():
    # dataset E (400 points, 20 labels) over several draws of the data and of
    # the random order: the geometric means of f(x_k) - f* after 100 cyclic
    # iterations over the tree partition
    log_lipschitz, log_random, wins = [], [], 0
    for seed in range(1, 7):
        W, labels = bcd.datasets.make_two_moons_dataset(400, 20, random_state=seed)
        problem = bcd.LabelPropagation(W, labels)
        f_star = problem.objective(direct_solution(problem))
        lip = _gap(problem, f_star, 100, blocks="forest_partition", vertex_order="lipschitz",
                   rule="cyclic")
        rnd = [_gap(problem, f_star, 100, blocks="forest_partition", vertex_order="random",
                    rule="cyclic", random_state=s) for s in range(5)]
        log_lipschitz.append(np.log(lip))
        log_random.append(np.mean(np.log(rnd)))
        wins += log_lipschitz[-1] < log_random[-1]
    ratio = np.exp(np.mean(log_lipschitz) - np.mean(log_random))
    assert ratio < 0.9, ratio
    assert wins >= 5


# -------------------------------------------------------------------- bad input

def _path_matrix(n=6):
    return sp.diags([[-1.0] * (n - 1), [3.0] * n, [-1.0] * (n - 1)], [-1, 0, 1], format="csr")


def test_tree_solve_rejects_a_block_with_a_cycle():
    W = bcd.datasets.make_lattice_graph(3, 3)
    Q = sp.csr_matrix(sp.diags(np.full(9, 5.0)) - W)
    with pytest.raises(ValueError, match="nodes induce a subgraph of Q with a cycle"):
        bcd.tree_solve(Q, np.ones(9))
    with pytest.raises(ValueError, match="cycle"):
        bcd.tree_solve(Q, np.ones(4), nodes=[0, 1, 3, 4])
    # a forest inside the same graph is fine
    assert bcd.tree_solve(Q, np.ones(3), nodes=[0, 1, 3]).shape == (3,)


@pytest.mark.parametrize("nodes, match", [
    ([0, 1, 1], "nodes must not repeat a node"),
    ([0, 6], r"nodes must lie in \[0, 6\)"),
    ([-1, 2], r"nodes must lie in \[0, 6\)"),
    ([0.0, 1.0], "nodes must be a 1-d array of integer"),
    ([[0, 1]], "nodes must be a 1-d array of integer"),
    ([True, False], "nodes must be a 1-d array of integer"),
])
def test_tree_solve_rejects_bad_nodes(nodes, match):
    c = np.ones(np.asarray(nodes).size)
    with pytest.raises(ValueError, match=match):
        bcd.tree_solve(_path_matrix(), c, nodes)


def test_tree_solve_rejects_bad_c_and_q():
    Q = _path_matrix()
    with pytest.raises(ValueError, match="c has length 5, expected 6"):
        bcd.tree_solve(Q, np.ones(5))
    with pytest.raises(ValueError, match="c has length 3, expected 2"):
        bcd.tree_solve(Q, np.ones(3), nodes=[0, 1])
    c = np.ones(6)
    c[2] = np.nan
    with pytest.raises(ValueError, match="c contains NaN"):
        bcd.tree_solve(Q, c)
    Qn = Q.toarray()
    Qn[1, 2] = Qn[2, 1] = np.nan
    with pytest.raises(ValueError, match="Q contains NaN"):
        bcd.tree_solve(Qn, np.ones(6))
    with pytest.raises(ValueError, match="Q contains NaN"):
        bcd.tree_solve(sp.csr_matrix(Qn), np.ones(6))
    Qa = Q.toarray()
    Qa[0, 1] = -2.0
    with pytest.raises(ValueError, match="Q must be symmetric"):
        bcd.tree_solve(Qa, np.ones(6))
    with pytest.raises(ValueError, match="Q must be symmetric"):
        bcd.tree_solve(sp.csr_matrix(Qa), np.ones(6))
    with pytest.raises(ValueError, match="Q must be square"):
        bcd.tree_solve(np.ones((3, 4)), np.ones(3))


def test_tree_solve_rejects_a_block_that_is_not_positive_definite():
    Q = _path_matrix().toarray()
    Q[2, 3] = Q[3, 2] = -4.0          # [[3, -4], [-4, 3]] is indefinite
    with pytest.raises(ValueError, match=r"Q\[nodes\]\[:, nodes\] is not positive definite"):
        bcd.tree_solve(Q, np.ones(6))
    with pytest.raises(ValueError, match="not positive definite"):
        bcd.tree_solve(Q, np.ones(2), nodes=[2, 3])
    Q[4, 4] = -1.0
    with pytest.raises(ValueError, match="not positive definite"):
        bcd.tree_solve(Q, np.ones(1), nodes=[4])
    Q[4, 4] = 0.0
    with pytest.raises(ValueError, match="not positive definite"):
        bcd.tree_solve(Q, np.ones(1), nodes=[4])
    # the positive definite part is still solved
    np.testing.assert_allclose(bcd.tree_solve(Q, [3.0], nodes=[0]), [1.0])


def test_builders_reject_bad_orders():
    W = bcd.datasets.make_lattice_graph(3, 3)
    for fn in (greedy_coloring, forest_partition, greedy_forest):
        with pytest.raises(ValueError, match="order must not repeat a node"):
            fn(W, [0, 1, 0])
        with pytest.raises(ValueError, match=r"order must lie in \[0, 9\)"):
            fn(W, [0, 9])
    with pytest.raises(ValueError, match="G must be symmetric"):
        is_forest(sp.csr_matrix(np.triu(np.ones((4, 4)))))


@pytest.mark.parametrize("rule", ["cyclic", "gsq", "gsl", "lipschitz"])
def test_solve_rejects_rules_that_trees_do_not_support(rule):
    problem = lattice_problem()
    with pytest.raises(ValueError, match=r"rule '\w+' works with blocks .*not "
                                         r"blocks='tree'.*'random', 'gs', 'gsd'"):
        bcd.solve(problem, rule=rule, blocks="tree", update="exact")


@pytest.mark.parametrize("blocks", ["forest_partition", "coloring"])
def test_solve_rejects_gsq_on_forest_partitions(blocks):
    with pytest.raises(ValueError, match=f"rule 'gsq' works with blocks 'fixed', 'variable', "
                                         f"not blocks='{blocks}'"):
        bcd.solve(lattice_problem(), rule="gsq", blocks=blocks, update="exact")


@pytest.mark.parametrize("blocks", ["tree", "forest_partition", "coloring"])
@pytest.mark.parametrize("update", ["gradient", "linesearch"])
def test_solve_rejects_non_exact_updates_on_forest_blocks(blocks, update):
    with pytest.raises(ValueError, match=r"update '\w+' works with blocks 'fixed', "
                                         r"'variable', not .*'matrix', 'newton', 'exact'"):
        bcd.solve(lattice_problem(), rule="gs", blocks=blocks, update=update)


@pytest.mark.parametrize("blocks", ["tree", "forest_partition", "coloring"])
def test_solve_rejects_forest_blocks_on_least_squares(blocks):
    A, b = random_problem(20, 10, seed=1)
    with pytest.raises(ValueError, match=f"blocks='{blocks}' needs the sparse graph of the "
                                         f"Hessian.*LeastSquares"):
        bcd.solve(bcd.LeastSquares(A, b), rule="gs", blocks=blocks, update="exact")


@pytest.mark.parametrize("blocks", ["coloring", "forest_partition", "tree"])
@pytest.mark.parametrize("partition", ["sort", "order", "avg"])
def test_solve_rejects_fixed_block_partitions_on_forest_blocks(blocks, partition):
    with pytest.raises(ValueError, match=r"partition='\w+' does not apply .*an option of "
                                         r"blocks 'fixed'"):
        bcd.solve(lattice_problem(), rule="gs", blocks=blocks, partition=partition,
                  update="exact")


# ---------------------------------------------------------- tree_solve errors

def test_tree_solve_tells_asymmetry_from_a_cycle():
    one_sided = sp.csr_matrix(np.array([[2.0, 1, 0], [0, 2, 0], [0, 0, 2]]))
    with pytest.raises(ValueError, match="symmetric"):
        bcd.tree_solve(one_sided, np.ones(3))
    triangle = np.array([[3.0, 1, 1], [1, 3, 1], [1, 1, 3]])
    with pytest.raises(ValueError, match="cycle"):
        bcd.tree_solve(triangle, np.ones(3))
