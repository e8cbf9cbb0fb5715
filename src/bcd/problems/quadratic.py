"""Sparse quadratic problems and graph-based label propagation."""
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .._validation import (_check_dtype, _reject_masked, check_matrix, check_symmetric,
                           check_vector)
from ..core.graph import symmetric_graph
from ._base import Problem
from ._quadratic import CyQuadratic


class Quadratic(Problem):
    r"""Quadratic :math:`f(x) = \tfrac12 x^T Q x - c^T x`.

    Parameters
    ----------
    Q : sparse matrix or array of shape (n, n)
        Symmetric positive-definite matrix.  Its off-diagonal non-zeros
        define the graph that forest-structured blocks follow.  Symmetry
        and a positive diagonal are checked; positive definiteness is
        assumed (a solve on an indefinite Q does not converge).
    c : array-like of shape (n,)
        Linear term.
    penalty : bcd.penalties.Penalty, optional
        Separable non-smooth term g; the problem becomes f + g
        (``bcd.L1``, ``bcd.NonNegative``, ``bcd.Box``).

    Notes
    -----
    grad f = Qx - c, so ``optimality`` is the residual ``||Qx - c||_inf``
    of the linear system Qx = c, and L_i = Q_ii.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, bcd
    >>> Q = sp.diags([[-1.0] * 4, [4.0] * 5, [-1.0] * 4], [-1, 0, 1])
    >>> problem = bcd.Quadratic(Q, np.ones(5))
    >>> result = bcd.solve(problem, rule="gs", block_size=2, update="exact", tol=1e-10)
    >>> np.allclose(Q @ result.x, 1.0)
    True
    """

    structure = "sparse_quadratic"
    capabilities = frozenset({"lipschitz", "hessian_bound", "bound_products", "sirt_diagonal",
                              "block_hessian", "hessian_entries", "quadratic", "graph"})

    def __init__(self, Q, c, penalty=None):
        Q, dtype = check_matrix(Q, "Q")
        if Q.shape[0] != Q.shape[1]:
            raise ValueError(f"Q must be square, got shape {Q.shape}.")
        self._init_quadratic(Q, dtype, check_vector(c, "c", Q.shape[0]), "Q")
        self._set_penalty(penalty)

    def _init_quadratic(self, Q, dtype, c, name):
        check_symmetric(Q, name, dtype)
        diag = Q.diagonal() if sp.issparse(Q) else np.diag(Q).copy()
        if not np.all(diag > 0):
            i = int(np.flatnonzero(~(diag > 0))[0])
            raise ValueError(f"The diagonal of {name} must be positive (Q must be positive "
                             f"definite); entry {i} is {diag[i]:g}.")
        self.Q = self.A = Q
        self.c = c
        self.dtype = np.dtype(dtype)
        self.n_coordinates = Q.shape[0]
        self._set_lipschitz(diag)

    def compile(self, tracking, max_block):
        return CyQuadratic(self._columns(), self.c, self.lipschitz, bool(tracking),
                               int(max_block))

    def smooth_objective(self, x):
        """Value of the smooth objective f at ``x`` (``objective`` adds the penalty)."""
        x = check_vector(x, "x", self.n_coordinates)
        return 0.5 * float(x @ (self.Q @ x)) - float(self.c @ x)

    def gradient(self, x):
        """Gradient Qx - c at ``x``."""
        x = check_vector(x, "x", self.n_coordinates)
        return np.asarray(self.Q @ x).ravel() - self.c

    def hessian_graph(self):
        cache = self.__dict__
        if "_graph_cache" not in cache:
            cache["_graph_cache"] = symmetric_graph(self.Q)
        return cache["_graph_cache"]

    def sirt_diagonal(self):
        return np.asarray(abs(self.Q).sum(axis=1)).ravel()

    def iteration_costs(self, block_size, tracking, dense=True):
        nnz = self.Q.nnz if sp.issparse(self.Q) else self.Q.size
        n = self.n_coordinates
        col = nnz / n
        # a dense block matrix costs tau columns of Q_bb; message passing is linear
        solve = block_size ** 2 * col if dense else 4.0 * block_size
        return block_size * col + solve, float(nnz + n)


class LabelPropagation(Quadratic):
    r"""Label propagation on a weighted graph (Zhu et al.; the paper's datasets D, E).

    Unknown labels x minimize :math:`\tfrac12 \sum_{i<j} w_{ij}(x_i - x_j)^2`
    with the known labels fixed.  Up to a constant this is the quadratic
    :math:`\tfrac12 x^T Q x - c^T x` over the unknown nodes U, with Q the
    graph Laplacian restricted to U and :math:`c_i = \sum_{j \in L} w_{ij} y_j`
    (the form in which the paper's optimal values are stated).

    Parameters
    ----------
    W : sparse matrix or array of shape (n, n)
        Symmetric non-negative weights (the diagonal is ignored).
    labels : array-like of shape (n,)
        Known values; NaN marks an unknown node unless ``mask`` is given.
    mask : array-like of bool, optional
        True for the nodes whose label is known (then ``labels`` is only
        read there).
    penalty : bcd.penalties.Penalty, optional
        Separable non-smooth term g; the problem becomes f + g
        (``bcd.L1``, ``bcd.NonNegative``, ``bcd.Box``).

    Attributes
    ----------
    unknown, known : int arrays
        Node indices; ``result.x[k]`` is the value of node ``unknown[k]``.

    Raises
    ------
    ValueError
        If a connected component of the graph has no labelled node: its
        values would not be determined (the Laplacian is singular there).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, bcd
    >>> W = sp.diags([[1.0] * 4, [1.0] * 4], [-1, 1])          # a path of 5 nodes
    >>> problem = bcd.LabelPropagation(W, [0.0, np.nan, np.nan, np.nan, 4.0])
    >>> result = bcd.solve(problem, rule="cyclic", block_size=1, tol=1e-10, max_iter=10000)
    >>> np.round(problem.full_labels(result.x), 6)
    array([0., 1., 2., 3., 4.])
    """

    def __init__(self, W, labels, mask=None, penalty=None):
        W, dtype = check_matrix(W, "W")
        n = W.shape[0]
        if W.shape[0] != W.shape[1]:
            raise ValueError(f"W must be square, got shape {W.shape}.")
        W = sp.csr_matrix(W)
        W.setdiag(0.0)
        W.eliminate_zeros()
        if W.nnz and W.data.min() < 0:
            raise ValueError("W must be non-negative (edge weights).")
        check_symmetric(W, "W", dtype)
        _reject_masked(labels, "labels")
        labels = np.asarray(labels)
        _check_dtype(labels.dtype, "labels")
        labels = labels.astype(np.float64)
        if labels.ndim != 1 or labels.shape[0] != n:
            raise ValueError(f"labels must have length {n} (one per node), got shape "
                             f"{labels.shape}.")
        if mask is None:
            known_mask = ~np.isnan(labels)
        else:
            known_mask = np.asarray(mask, dtype=bool)
            if known_mask.shape != (n,):
                raise ValueError(f"mask must have shape ({n},), got {known_mask.shape}.")
        if not np.all(np.isfinite(labels[known_mask])):
            raise ValueError("labels of known nodes must be finite.")
        if not known_mask.any():
            raise ValueError("At least one node must be labelled (labels are all NaN).")
        if known_mask.all():
            raise ValueError("Every node is labelled: there is nothing to propagate.")
        n_comp, comp = connected_components(W, directed=False)
        labelled = np.zeros(n_comp, dtype=bool)
        labelled[comp[known_mask]] = True
        if not labelled.all():
            bad = np.flatnonzero(~labelled)
            raise ValueError(f"{bad.size} connected component(s) of the graph have no labelled "
                             f"node (e.g. the one containing node "
                             f"{int(np.flatnonzero(comp == bad[0])[0])}); their labels are not "
                             f"determined. Label a node in each component.")
        self.W = W
        self.known = np.flatnonzero(known_mask)
        self.unknown = np.flatnonzero(~known_mask)
        self.y_known = labels[self.known].copy()
        degree = np.asarray(W.sum(axis=1)).ravel()
        W_uu = W[self.unknown][:, self.unknown]
        Q = sp.csc_matrix(sp.diags(degree[self.unknown]) - W_uu)
        Q.sort_indices()
        Q.indices = Q.indices.astype(np.int32)
        Q.indptr = Q.indptr.astype(np.int32)
        c = np.asarray(W[self.unknown][:, self.known] @ self.y_known).ravel()
        self._init_quadratic(Q, dtype, c, "Q")
        self._set_penalty(penalty)

    def full_labels(self, x):
        """All node values: the known labels and the solution ``x`` of the unknown ones."""
        x = check_vector(x, "x", self.unknown.size)
        out = np.empty(self.known.size + self.unknown.size)
        out[self.known] = self.y_known
        out[self.unknown] = x
        return out
