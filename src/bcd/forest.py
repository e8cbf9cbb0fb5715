"""Forest-structured blocks (Section 5 of Nutini, Laradji and Schmidt).

A symmetric matrix Q defines an undirected graph whose edges are its
off-diagonal non-zeros.  When a set of nodes induces a forest of that graph,
the system ``Q[b][:, b] x = r`` is solved in O(|b|) by message passing:
Gaussian elimination from the leaves towards the roots, then
back-substitution (Algorithm 1 of the paper).  This module exposes that
solve and the builders of forest-structured blocks that
``bcd.solve(blocks="tree" | "forest_partition" | "coloring")`` uses.

>>> import numpy as np, scipy.sparse as sp, bcd
>>> Q = sp.diags([[-1.0] * 4, [3.0] * 5, [-1.0] * 4], [-1, 0, 1])   # a path: a tree
>>> x = bcd.tree_solve(Q, np.ones(5))
>>> np.allclose(Q @ x, 1.0)
True
>>> bcd.forest.is_forest(bcd.datasets.make_lattice_graph(2, 2))       # a 4-cycle
False
"""
import numpy as np
import scipy.sparse as sp

from ._validation import check_matrix, check_symmetric, check_vector
from .core import _forest
from .core.graph import symmetric_graph

__all__ = ["tree_solve", "is_forest", "greedy_coloring", "forest_partition", "greedy_forest"]


def _rtol(dtype):
    """Relative agreement asked of Q_ij and Q_ji for data of this precision."""
    return 1e-12 if np.dtype(dtype) == np.float64 else 1e-5


def _solve_graph(Q):
    """The compiled graph of Q for one solve, without a global symmetry check.

    The solve reads every tree edge from both ends and rejects a block
    whose two values differ, so only the block is checked: O(its size).
    A canonical CSC matrix is used as it is (the columns of a symmetric
    matrix are its rows).
    """
    M, dtype = check_matrix(Q, "Q")
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"Q must be square, got shape {M.shape}.")
    if not sp.issparse(M):
        M = sp.csc_matrix(M)
    elif M.nnz and not np.all(M.data):
        M = M.copy()
        M.eliminate_zeros()
    return _forest.CyGraph(M.indptr, M.indices, M.data, M.diagonal(), _rtol(dtype))


def _checked_graph(Q, name):
    M, dtype = check_matrix(Q, name)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be square, got shape {M.shape}.")
    check_symmetric(M, name, dtype)
    return symmetric_graph(M)[0]


def _checked_nodes(nodes, n, name="nodes"):
    """Distinct node indices in [0, n) as int32 (all nodes when None)."""
    if nodes is None:
        return np.arange(n, dtype=np.int32)
    arr = np.asarray(nodes)
    if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{name} must be a 1-d array of integer node indices, got "
                         f"{arr.dtype} of shape {arr.shape}.")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{name} must lie in [0, {n}); got values in "
                         f"[{arr.min()}, {arr.max()}].")
    arr = arr.astype(np.int32)
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not repeat a node.")
    return arr


def tree_solve(Q, c, nodes=None):
    """Solve ``Q[nodes][:, nodes] x = c`` in linear time when ``nodes`` induce a forest.

    Parameters
    ----------
    Q : sparse matrix or array of shape (n, n)
        Symmetric; its off-diagonal non-zeros are the edges of a graph.
        ``Q[nodes][:, nodes]`` must be positive definite.  Only that block
        is checked for symmetry (while it is solved), so the cost does not
        depend on the rest of Q.
    c : array-like of shape (len(nodes),)
        Right-hand side, in the order of ``nodes``.
    nodes : array-like of int, optional
        Distinct node indices (default: all nodes).  The subgraph they
        induce must have no cycle.

    Returns
    -------
    x : ndarray of shape (len(nodes),)

    Raises
    ------
    ValueError
        If the induced subgraph has a cycle, or a pivot is not positive
        (the block is not positive definite), or the input is malformed.

    Notes
    -----
    Each tree is walked breadth first from a root, which orders parents
    before children; elimination runs from the last node (a leaf) towards
    the roots and back-substitution from the roots.  Cost:
    ``O(|nodes| + the sum of their degrees)`` time and O(n) memory.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, bcd
    >>> Q = sp.csr_matrix(np.array([[4.0, 1, 1, 1], [1, 2, 0, 0], [1, 0, 2, 0], [1, 0, 0, 2]]))
    >>> np.round(bcd.tree_solve(Q, [7.0, 3, 3, 3]), 12)     # a star
    array([1., 1., 1., 1.])
    """
    graph = _solve_graph(Q)
    nodes = _checked_nodes(nodes, graph.n)
    r = check_vector(c, "c", nodes.size)
    status, order, parent, dg, off = _forest.structure(graph, nodes)
    if status == -1:
        raise ValueError("nodes induce a subgraph of Q with a cycle; tree_solve needs a forest "
                         "(see bcd.forest.is_forest).")
    if status == -3:
        raise ValueError("Q must be symmetric: Q[nodes][:, nodes] has an entry Q_ij that differs "
                         "from Q_ji or is stored on one side only.")
    x, status = _forest.solve_structure(order, parent, dg, off, np.ascontiguousarray(r),
                                        overwrite=True)
    if status != 0:
        raise ValueError("Q[nodes][:, nodes] is not positive definite (a non-positive pivot "
                         "arose in the elimination).")
    return x


def is_forest(G, nodes=None):
    """Whether ``nodes`` (default: all) induce a forest of the graph of ``G``.

    ``G`` is a symmetric matrix whose off-diagonal non-zeros are the edges.
    Cost ``O(|nodes| + the sum of their degrees)``.

    Parameters
    ----------
    G : sparse matrix or array of shape (n, n)
        Symmetric; its off-diagonal non-zeros are the edges (explicit zeros
        are not).
    nodes : array-like of int, optional
        Distinct node indices (default: all nodes).

    Returns
    -------
    bool
        True when the subgraph induced by ``nodes`` has no cycle.

    Examples
    --------
    >>> import bcd
    >>> W = bcd.datasets.make_lattice_graph(2, 2)      # a 4-cycle
    >>> bcd.forest.is_forest(W), bcd.forest.is_forest(W, [0, 1, 2])
    (False, True)
    """
    graph = _checked_graph(G, "G")
    return bool(_forest.structure(graph, _checked_nodes(nodes, graph.n))[0] >= 0)


def greedy_coloring(G, order=None):
    """Greedy (Welsh-Powell) colouring of the graph of ``G`` (Section 5.4).

    Nodes are visited in ``order`` (default 0, 1, ..., n-1); each gets the
    smallest colour not used by a neighbour visited before it.  On a lattice
    in row- or column-major order this is the red-black colouring.

    Parameters
    ----------
    G : sparse matrix or array of shape (n, n)
        Symmetric; its off-diagonal non-zeros are the edges.
    order : array-like of int, optional
        Distinct nodes in the order they are coloured (default: all nodes,
        0 to n-1).  Nodes left out are not coloured.

    Returns
    -------
    colors : int32 array of shape (n,)
        Colour of each node (0-based), -1 for nodes not in ``order``.

    Examples
    --------
    >>> import bcd
    >>> W = bcd.datasets.make_lattice_graph(3, 3)
    >>> bcd.forest.greedy_coloring(W).reshape(3, 3)
    array([[0, 1, 0],
           [1, 0, 1],
           [0, 1, 0]], dtype=int32)
    """
    graph = _checked_graph(G, "G")
    return _forest.greedy_coloring(graph, _checked_nodes(order, graph.n, "order"))


def forest_partition(G, order=None):
    """Greedy partition of the nodes of the graph of ``G`` into forests (Section 5.5).

    Nodes are visited in ``order`` (default 0, 1, ..., n-1); each joins the
    first block in which the nodes assigned so far still induce a forest.

    Parameters
    ----------
    G : sparse matrix or array of shape (n, n)
        Symmetric; its off-diagonal non-zeros are the edges.
    order : array-like of int, optional
        Distinct nodes in the order they are assigned (default: all nodes,
        0 to n-1).  Nodes left out get no block.

    Returns
    -------
    labels : int32 array of shape (n,)
        Block of each node (0-based), -1 for nodes not in ``order``.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> W = bcd.datasets.make_lattice_graph(4, 4)
    >>> labels = bcd.forest.forest_partition(W)
    >>> int(labels.max()) + 1, all(bcd.forest.is_forest(W, np.flatnonzero(labels == k)) for k in (0, 1))
    (2, True)
    """
    graph = _checked_graph(G, "G")
    return _forest.forest_partition(graph, _checked_nodes(order, graph.n, "order"))


def greedy_forest(G, order):
    """Grow a maximal forest by trying the nodes in ``order`` (Section 5.6).

    A node is added when the forest stays a forest, tested in O(degree).
    With ``order`` sorted by decreasing ``|grad_i f|`` this is the greedy
    tree of ``bcd.solve(blocks="tree", rule="gs")``.

    Parameters
    ----------
    G : sparse matrix or array of shape (n, n)
        Symmetric; its off-diagonal non-zeros are the edges.
    order : array-like of int
        Distinct nodes, in the order they are tried.

    Returns
    -------
    nodes : int32 array
        The forest's nodes, in the order they were added.

    Examples
    --------
    >>> import bcd
    >>> W = bcd.datasets.make_lattice_graph(2, 2)      # a 4-cycle: 0-1-3-2-0
    >>> bcd.forest.greedy_forest(W, [0, 1, 2, 3])      # node 3 would close it
    array([0, 1, 2], dtype=int32)
    """
    graph = _checked_graph(G, "G")
    return _forest.grow_forest(graph, _checked_nodes(order, graph.n, "order"))
