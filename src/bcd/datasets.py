"""Datasets of the paper's experiments (Appendix F.1) and generators."""
import numpy as np
import scipy.sparse as sp

from ._validation import check_scalar


def _legacy_rng(random_state):
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if random_state is None or (isinstance(random_state, (int, np.integer))
                                and not isinstance(random_state, bool)):
        return np.random.RandomState(random_state)
    raise TypeError(f"random_state must be None, an int or a numpy RandomState; got {random_state!r}.")


def _paper_matrix(rs, m, n):
    """The sparse matrix recipe shared by datasets A, B and C."""
    A = rs.randn(m, n) + 1.0
    A *= 10.0 * rs.randn(n)                    # column scales
    A *= rs.rand(m, n) < 10.0 * np.log(m) / m  # keep each entry w.p. 10 log(m)/m
    return A


def make_paper_dataset(name, random_state=1, n_samples=None, n_features=None, sparse=True,
                       n_classes=50):
    """Generate one of the paper's datasets.

    The recipes follow Appendix F.1 of Nutini, Laradji and Schmidt with
    NumPy's legacy generator, in the call order of the authors' code, so
    ``random_state=1`` (the default) gives the paper's construction.

    Parameters
    ----------
    name : {"A", "B", "C", "D", "E"}
        ``"D"`` and ``"E"`` are label propagation problems returning
        ``(W, labels)`` for :class:`bcd.LabelPropagation` (NaN for unknown
        nodes): D a 50 x 50 lattice with 100 labels, E 2000 two-moons points
        with 100 labels (see :func:`make_lattice_dataset` and
        :func:`make_two_moons_dataset`).
        ``"A"``: least squares, returns ``(A, b)``.  ``"B"``: binary
        logistic regression on the same kind of matrix, returns ``(A, y)``
        with ``y`` in {-1, +1}.  ``"C"``: 50-class logistic regression,
        1000 x 1000, returns ``(A, y)`` with ``y`` in 0..49 (labels
        ``argmax(A W + E)`` for standard normal W and E).
    random_state : int or numpy.random.RandomState, default=1
        Seed of the legacy generator.
    n_samples, n_features : int, optional
        Size of the matrix (default 1000 x 10000 for A and B, 1000 x 1000
        for C, as in the paper).  Smaller sizes give quick versions with the
        same structure.  For D and E, ``n_samples`` is the number of nodes
        (a perfect square for the lattice D), with 4% (D) or 5% (E) of
        them labelled as in the paper's instances; ``n_features`` is not
        used.
    n_classes : int, default=50
        Number of classes of dataset C.
    sparse : bool, default=True
        Return the matrix as a CSC sparse matrix (about 7% of its entries are
        non-zero at the default size) or as a dense array.

    Examples
    --------
    >>> import bcd
    >>> A, b = bcd.datasets.make_paper_dataset("A", n_samples=100, n_features=400)
    >>> A.shape, b.shape
    ((100, 400), (100,))
    """
    if name in ("D", "E"):
        return _graph_dataset(name, random_state, n_samples)
    if name not in ("A", "B", "C"):
        raise ValueError(f"Unknown dataset {name!r}; valid names are 'A', 'B', 'C', 'D', 'E'.")
    m = check_scalar(1000 if n_samples is None else n_samples, "n_samples", low=2, integer=True)
    default_n = 1000 if name == "C" else 10000
    n = check_scalar(default_n if n_features is None else n_features, "n_features", low=1,
                     integer=True)
    rs = _legacy_rng(random_state)
    A = _paper_matrix(rs, m, n)
    if name == "C":
        k = check_scalar(n_classes, "n_classes", low=2, integer=True)
        W = rs.randn(n, k)
        target = np.argmax(A @ W + rs.randn(m, k), axis=1)
        return (sp.csc_matrix(A) if sparse else np.asfortranarray(A)), target
    x_true = rs.randn(n) * (rs.rand(n) < 0.1)
    if name == "A":
        target = A @ x_true + rs.randn(m)
    else:
        target = np.sign(A @ x_true)
        target[target == 0] = 1.0
        target *= np.sign(rs.rand(m) - 0.1)
    A = sp.csc_matrix(A) if sparse else np.asfortranarray(A)
    return A, target


def make_lattice_graph(n_rows, n_cols, weight=1.0):
    """Weights of a ``n_rows x n_cols`` lattice (4-neighbour grid), CSR.

    Node ``i`` sits at row ``i % n_rows`` and column ``i // n_rows`` and is
    joined to the next node down its column and to the node in the next
    column.

    Parameters
    ----------
    n_rows, n_cols : int
        Size of the grid (at least 1 each); the graph has
        ``n_rows * n_cols`` nodes.
    weight : float, default=1.0
        Positive weight of every edge.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_rows * n_cols, n_rows * n_cols)
        Symmetric weights with a zero diagonal.

    Examples
    --------
    >>> import bcd
    >>> W = bcd.datasets.make_lattice_graph(2, 3)
    >>> W.shape, W.nnz // 2                  # 6 nodes, 7 edges
    ((6, 6), 7)
    """
    n_rows = check_scalar(n_rows, "n_rows", low=1, integer=True)
    n_cols = check_scalar(n_cols, "n_cols", low=1, integer=True)
    weight = check_scalar(weight, "weight", low=0.0, low_inclusive=False)
    n = n_rows * n_cols
    i = np.arange(n)
    down = i[(i % n_rows) < n_rows - 1]
    right = i[i // n_rows < n_cols - 1]
    rows = np.concatenate([down, right])
    cols = np.concatenate([down + 1, right + n_rows])
    W = sp.coo_matrix((np.full(rows.size, weight), (rows, cols)), shape=(n, n))
    return (W + W.T).tocsr()


def make_knn_graph(X, n_neighbors=5, weight=1.0):
    """Symmetric k-nearest-neighbour graph of the rows of ``X`` (CSR).

    Each point is joined to its ``n_neighbors`` nearest other points; the
    graph is symmetrized by ``W = max(W, W.T)`` with unit (``weight``) edges.

    Parameters
    ----------
    X : array-like of shape (n_points, n_dims)
        The points, at least 2 (Euclidean distances).
    n_neighbors : int, default=5
        Neighbours of each point, from 1 to ``n_points - 1``.
    weight : float, default=1.0
        Weight of every edge.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_points, n_points)
        Symmetric weights; a node has at least ``n_neighbors`` edges.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> X = np.array([[0.0], [1.0], [3.0], [7.0]])
    >>> bcd.datasets.make_knn_graph(X, n_neighbors=1).toarray()
    array([[0., 1., 0., 0.],
           [1., 0., 1., 0.],
           [0., 1., 0., 1.],
           [0., 0., 1., 0.]])
    """
    from scipy.spatial import cKDTree

    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be a 2-D array with at least 2 rows, got shape {X.shape}.")
    k = check_scalar(n_neighbors, "n_neighbors", low=1, high=X.shape[0] - 1, integer=True)
    _, idx = cKDTree(X).query(X, k=k + 1)
    rows = np.repeat(np.arange(X.shape[0]), k)
    W = sp.coo_matrix((np.full(rows.size, float(weight)), (rows, idx[:, 1:].ravel())),
                      shape=(X.shape[0], X.shape[0])).tocsr()
    return W.maximum(W.T).tocsr()


def make_lattice_dataset(size=50, n_labelled=100, weight=1e5, random_state=1):
    """Dataset D: label propagation on a ``size x size`` lattice.

    ``n_labelled`` nodes drawn by ``choice(size**2, n_labelled,
    replace=False)`` get labels ``randn(n_labelled) * 10`` from NumPy's legacy
    generator.  The weight 1e5 follows the authors' code (the paper's text
    says 1e4).  With the defaults the optimal value of the resulting
    :class:`bcd.LabelPropagation` problem is -1045999575.2270697.

    Parameters
    ----------
    size : int, default=50
        Side of the lattice; the graph has ``size**2`` nodes.
    n_labelled : int, default=100
        Number of labelled nodes, from 1 to ``size**2 - 1``.
    weight : float, default=1e5
        Positive weight of every lattice edge.
    random_state : int or numpy.random.RandomState, default=1
        Seed of the legacy generator (1 gives the paper's instance).

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (size**2, size**2)
        The lattice's weights (see :func:`make_lattice_graph`).
    labels : ndarray of shape (size**2,)
        The known labels, NaN for the unknown nodes.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> W, labels = bcd.datasets.make_lattice_dataset(size=10, n_labelled=5)
    >>> W.shape, int(np.count_nonzero(~np.isnan(labels)))
    ((100, 100), 5)
    """
    rs = _legacy_rng(random_state)
    W = make_lattice_graph(size, size, weight)
    n = size * size
    n_labelled = check_scalar(n_labelled, "n_labelled", low=1, high=n - 1, integer=True)
    labels = np.full(n, np.nan)
    idx = rs.choice(n, n_labelled, replace=False)
    labels[idx] = rs.randn(n_labelled) * 10.0
    return W, labels


def make_two_moons_dataset(n_samples=2000, n_labelled=100, n_neighbors=5, noise=0.2,
                           random_state=1, return_points=False):
    """Dataset E: label propagation on two moons.

    Two half circles of radius 1 with angles uniform on [0, pi], the second
    flipped and shifted by (+1, +0.5), Gaussian noise of standard deviation
    ``noise`` (variance 0.04 by default), half of the points in each;
    a symmetric ``n_neighbors``-nearest-neighbour graph with unit weights;
    ``n_labelled`` points chosen at random keep their class (1 or 2).

    Parameters
    ----------
    n_samples : int, default=2000
        Number of points (at least 4), half on each moon.
    n_labelled : int, default=100
        Number of labelled points, from 1 to ``n_samples - 1``.
    n_neighbors : int, default=5
        Neighbours of each point in the graph (see :func:`make_knn_graph`).
    noise : float, default=0.2
        Standard deviation of the Gaussian noise added to the points.
    random_state : int or numpy.random.RandomState, default=1
        Seed of the legacy generator (1 gives the paper's instance).
    return_points : bool, default=False
        Also return the points.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        The k-nearest-neighbour graph.
    labels : ndarray of shape (n_samples,)
        The class (1.0 or 2.0) of the labelled points, NaN for the others.
    X : ndarray of shape (n_samples, 2)
        The points, only with ``return_points=True``.

    Examples
    --------
    >>> import numpy as np, bcd
    >>> W, labels, X = bcd.datasets.make_two_moons_dataset(200, n_labelled=10,
    ...                                                    return_points=True)
    >>> W.shape, X.shape, np.unique(labels[~np.isnan(labels)]).tolist()
    ((200, 200), (200, 2), [1.0, 2.0])
    """
    rs = _legacy_rng(random_state)
    n = check_scalar(n_samples, "n_samples", low=4, integer=True)
    n1 = n // 2
    n2 = n - n1
    t1 = rs.rand(n1) * np.pi
    t2 = rs.rand(n2) * np.pi
    X = np.vstack([np.column_stack([np.cos(t1), np.sin(t1)]),
                   np.column_stack([1.0 - np.cos(t2), 0.5 - np.sin(t2)])])
    X += noise * rs.randn(n, 2)
    classes = np.concatenate([np.ones(n1), 2.0 * np.ones(n2)])
    W = make_knn_graph(X, n_neighbors)
    n_labelled = check_scalar(n_labelled, "n_labelled", low=1, high=n - 1, integer=True)
    labels = np.full(n, np.nan)
    idx = rs.choice(n, n_labelled, replace=False)
    labels[idx] = classes[idx]
    return (W, labels, X) if return_points else (W, labels)


def _graph_dataset(name, random_state, n_nodes=None):
    if name == "D":
        if n_nodes is None:
            return make_lattice_dataset(random_state=random_state)
        n_nodes = check_scalar(n_nodes, "n_samples", low=4, integer=True)
        side = int(round(np.sqrt(n_nodes)))
        if side * side != n_nodes:
            raise ValueError(f"n_samples of dataset D is the number of lattice nodes and must "
                             f"be a perfect square, got {n_nodes}.")
        return make_lattice_dataset(side, max(1, round(0.04 * n_nodes)),
                                    random_state=random_state)
    if n_nodes is None:
        return make_two_moons_dataset(random_state=random_state)
    n_nodes = check_scalar(n_nodes, "n_samples", low=4, integer=True)
    return make_two_moons_dataset(n_nodes, max(1, round(0.05 * n_nodes)),
                                  random_state=random_state)


def make_friedman1(n_samples=10000, n_test=5000, noise=1.0, random_state=0):
    """Friedman's first regression problem as used by Bo and Sminchisescu.

    Ten inputs uniform on [0, 1]; the target
    ``10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4`` depends on the
    first five.  Gaussian noise of standard deviation ``noise`` is added to
    the training targets only; then every input and the output are scaled
    to zero mean and unit variance with the training statistics (the same
    transformation is applied to the test set).

    Parameters
    ----------
    n_samples : int, default=10000
        Number of training points (at least 2).
    n_test : int, default=5000
        Number of test points (may be 0).
    noise : float, default=1.0
        Standard deviation of the noise added to the training targets,
        before scaling.
    random_state : int, numpy.random.Generator or None, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    X_train : ndarray of shape (n_samples, 10)
    y_train : ndarray of shape (n_samples,)
    X_test : ndarray of shape (n_test, 10)
    y_test : ndarray of shape (n_test,)
        The noise-free test targets, scaled as the training targets.

    Examples
    --------
    >>> import bcd
    >>> X, y, Xt, yt = bcd.datasets.make_friedman1(1000, 200, random_state=0)
    >>> X.shape, Xt.shape, round(float(y.std()), 6)
    ((1000, 10), (200, 10), 1.0)
    """
    n_samples = check_scalar(n_samples, "n_samples", low=2, integer=True)
    n_test = check_scalar(n_test, "n_test", low=0, integer=True)
    noise = check_scalar(noise, "noise", low=0.0)
    rng = np.random.default_rng(random_state)
    X = rng.uniform(size=(n_samples + n_test, 10))
    y = (10.0 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20.0 * (X[:, 2] - 0.5) ** 2
         + 10.0 * X[:, 3] + 5.0 * X[:, 4])
    y[:n_samples] += noise * rng.standard_normal(n_samples)
    mu, sd = X[:n_samples].mean(axis=0), X[:n_samples].std(axis=0)
    X = (X - mu) / sd
    y = (y - y[:n_samples].mean()) / y[:n_samples].std()
    return X[:n_samples], y[:n_samples], X[n_samples:], y[n_samples:]
