"""Label propagation: the harmonic solution of Zhu, Ghahramani and Lafferty
on a k-nearest-neighbour or Gaussian graph, solved by block coordinate descent."""
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._solve import solve
from .._sklearn import validate_data
from .._validation import check_scalar, check_solver_options
from ..problems.quadratic import LabelPropagation as HarmonicProblem


__all__ = ["LabelPropagation"]

KERNELS = ("knn", "rbf")
#: options of bcd.solve that the estimator's own parameters set
RESERVED_OPTIONS = ("tol", "max_iter", "x0", "warn")
#: rows of test points whose Gaussian weights are formed at once in predict_proba
_PREDICT_BATCH = 1024


class LabelPropagation(ClassifierMixin, BaseEstimator):
    r"""Label propagation by the harmonic solution of Zhu, Ghahramani and
    Lafferty (2003), computed by block coordinate descent.

    Points are the nodes of a weighted graph.  For every class, the
    indicator of that class is fixed at the labelled points and extended to
    the unlabelled points U as the harmonic function of the graph: the
    minimizer of :math:`\tfrac12 \sum_{i<j} w_{ij} (f_i - f_j)^2`, i.e. the
    solution of the Laplacian system :math:`L_{UU} f_U = W_{UL} y_L`.  That
    is the problem :class:`bcd.LabelPropagation`, solved once per class by
    :func:`bcd.solve` with its automatic configuration (forest-structured
    blocks solved exactly by message passing).  A point's label distribution
    collects its values for all classes.

    Parameters
    ----------
    kernel : {"rbf", "knn"} or callable, default="rbf"
        The graph.  A callable ``kernel(X, Y)`` returns the affinities of
        the rows of ``X`` and ``Y`` (dense or sparse), as in scikit-learn:
        ``kernel(X, X)`` symmetrized (its mean with its transpose), without
        its diagonal, is the graph, and :meth:`predict_proba` weighs the
        training distributions by ``kernel(X_train, X_new).T``.
        ``"knn"``: the k-nearest-neighbour connectivity graph G, where, as
        in scikit-learn, a point counts among its own ``n_neighbors``
        nearest points (``G_ij = 1`` when j is one of the ``n_neighbors -
        1`` nearest other points of i), symmetrized as :math:`W = (G +
        G^T) / 2`: weight 1 between mutual neighbours and 1/2 where only one
        is a neighbour of the other; at most ``n (n_neighbors - 1)`` edges.  ``"rbf"``: the Gaussian weights
        :math:`w_{ij} = \exp(-\gamma \|x_i - x_j\|^2)` between all pairs, a
        dense n x n matrix (as in scikit-learn: only for a few thousand
        points; weights that underflow to 0 are not edges).
    gamma : float, default=20
        Parameter of the ``"rbf"`` kernel (> 0).
    n_neighbors : int, default=7
        Neighbours of each point in the ``"knn"`` graph, the point itself
        included as in scikit-learn (>= 1, and at most the number of
        samples; 1 gives no edge).
    max_iter : int, default=1000
        Largest number of passes over the unlabelled nodes of each class's
        solve (:func:`bcd.solve` runs at most ``max_iter`` times their number
        of block updates); None: the default of :func:`bcd.solve`, also 1000
        passes.
    tol : float, default=1e-3
        Each class's solve stops when the residual
        :math:`\|L_{UU} f_U - W_{UL} y_L\|_\infty` is at most ``tol``, the
        weights being scaled so that the largest is 1 (the scaling does not
        change the harmonic solution).
    solver_options : dict, optional
        Further options of :func:`bcd.solve` (for example ``verbose`` or an
        explicit configuration such as ``{"rule": "cyclic", "blocks":
        "tree"}``); by default none, so that :func:`bcd.solve` chooses its
        configuration.  ``tol``, ``max_iter`` and ``x0`` are set by the
        estimator.
    n_jobs : int, optional
        Parallel jobs of the nearest-neighbour search (``"knn"``).

    max_time : float, optional
        Wall-clock limit in seconds for the whole ``fit`` (one solve per
        class but the last): each solve gets the time that remains, and a
        solve stopped by it warns.  Ctrl-C during a solve with more classes
        to go raises ``KeyboardInterrupt`` at once and leaves the estimator
        as it was.

    Attributes
    ----------
    X_ : ndarray or sparse matrix of shape (n_samples, n_features)
        The training inputs (float64), which predictions weigh.
    classes_ : ndarray of shape (n_classes,)
        The labels of the labelled points, sorted.
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Each training point's distribution over ``classes_`` (rows sum to
        1): one-hot at the labelled points, the harmonic values elsewhere.
        A connected component of the graph without any labelled point has no
        harmonic solution; its points get the class prior, the fraction of
        the labelled points in each class.
    transduction_ : ndarray of shape (n_samples,)
        The label of every training point: the class of largest
        probability (the given label at labelled points).
    n_iter_ : int
        Passes over the unlabelled nodes of the longest solve (its block
        updates divided by the number of those nodes, rounded up; 0 when no
        point needed one: all were labelled or in unlabelled components).
    results_ : list of bcd.Result
        The solve of each class but the last, in the order of ``classes_``
        (empty when there was nothing to solve).  The harmonic functions of
        the classes sum to 1, so the last class needs no solve.
    n_features_in_ : int
        Number of features seen by ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the features seen by ``fit``, when they are all strings.

    See Also
    --------
    bcd.LabelPropagation : the harmonic problem on a given graph.
    sklearn.semi_supervised.LabelPropagation : label propagation by
        fixed-point iteration, on graphs normalized otherwise.

    Notes
    -----
    The harmonic values of a class lie in [0, 1] and those of all classes
    sum to 1 at every point, so the rows of ``label_distributions_`` are the
    solutions up to the solver's tolerance; they are clipped at 0 and
    renormalized to remove its rounding.  A solve that stops before ``tol``
    is reached raises a :class:`sklearn.exceptions.ConvergenceWarning`.

    The graphs differ from those of scikit-learn's ``LabelPropagation``
    where the kernel matrix ``K`` is not symmetric: scikit-learn propagates
    along ``K`` with its rows scaled to sum 1 (for ``"knn"``: the directed
    nearest-neighbour graph, each point counted among its own
    ``n_neighbors``), bcd along the symmetrized graph; on well separated
    data both give the same labels.  For a symmetric ``K`` (``"rbf"``) the
    harmonic solutions are the same.

    :meth:`predict_proba` weighs the training points' distributions as
    scikit-learn does: the mean over the ``n_neighbors`` nearest training
    points (``"knn"``), or the Gaussian weights to all of them (``"rbf"``),
    normalized.

    References
    ----------
    X. Zhu, Z. Ghahramani and J. Lafferty, "Semi-supervised learning using
    Gaussian fields and harmonic functions", ICML 2003.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from bcd.semi_supervised import LabelPropagation
    >>> X, y_true = make_moons(300, noise=0.05, random_state=0)
    >>> y = np.full(300, -1)
    >>> labelled = np.r_[np.flatnonzero(y_true == 0)[:5], np.flatnonzero(y_true == 1)[:5]]
    >>> y[labelled] = y_true[labelled]
    >>> model = LabelPropagation(kernel="knn", n_neighbors=10).fit(X, y)
    >>> model.classes_
    array([0, 1])
    >>> bool(np.mean(model.transduction_ == y_true) > 0.99)
    True
    >>> model.results_[0].options["auto"]
    'sparse quadratic'
    >>> model.predict([[0.0, 1.0], [1.0, -0.5]])
    array([0, 1])
    """

    def __init__(self, kernel="rbf", *, gamma=20, n_neighbors=7, max_iter=1000, tol=1e-3,
                 solver_options=None, n_jobs=None, max_time=None):
        self.kernel = kernel
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.tol = tol
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.max_time = max_time

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ parameters

    def _check_params(self):
        if not callable(self.kernel) and (not isinstance(self.kernel, str)
                                          or self.kernel not in KERNELS):
            raise ValueError(f"kernel must be 'knn', 'rbf' or a callable, got "
                             f"{self.kernel!r}.")
        gamma = check_scalar(self.gamma, "gamma", low=0.0, low_inclusive=False)
        n_neighbors = check_scalar(self.n_neighbors, "n_neighbors", low=1, integer=True)
        max_iter = check_scalar(self.max_iter, "max_iter", low=1, integer=True, allow_none=True)
        tol = check_scalar(self.tol, "tol", low=0.0)
        options = check_solver_options(self.solver_options, RESERVED_OPTIONS,
                                       "the estimator's tol and max_iter parameters set them")
        options["tol"] = tol
        max_time = self.max_time
        if isinstance(max_time, (int, float, np.floating)) and max_time == np.inf:
            max_time = None                 # no limit
        max_time = check_scalar(max_time, "max_time", low=0.0, low_inclusive=False,
                                allow_none=True)
        if max_time is not None:
            options["_deadline"] = time.perf_counter() + max_time
        self._max_passes = max_iter
        return gamma, n_neighbors, options

    # ------------------------------------------------------------------ fit

    def fit(self, X, y):
        """Build the graph of ``X`` and propagate the labels of ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs.
        y : array-like of shape (n_samples,)
            Labels, with -1 marking the unlabelled points.  At least two
            classes must have a labelled point.

        Returns
        -------
        self : LabelPropagation
            The fitted estimator.
        """
        gamma, n_neighbors, options = self._check_params()
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc", "coo"],
                              dtype=np.float64)
        check_classification_targets(y)
        if y.dtype.kind in "US":
            labelled = np.ones(y.shape[0], dtype=bool)
        else:
            labelled = np.asarray(y != -1, dtype=bool)
        if not labelled.any():
            raise ValueError("y has no labelled point (every entry is -1); label points of "
                             "at least two classes.")
        classes, codes = np.unique(y[labelled], return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"The labelled points of y have only one class ({classes[0]!r}); "
                             f"label points of at least two classes.")
        if self.kernel == "knn" and n_neighbors > X.shape[0]:
            raise ValueError(f"n_neighbors={n_neighbors} must be at most the number of "
                             f"samples, {X.shape[0]}.")
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        largest = float(np.max(np.abs(X.data if sp.issparse(X) else X), initial=0.0))
        # 4 d max|X|^2 bounds every squared distance between two samples
        if largest > np.sqrt(np.finfo(np.float64).max / (4.0 * max(X.shape[1], 1))):
            raise ValueError(f"X is too large: the squared distances between samples overflow "
                             f"float64 (largest |X| = {largest:.3e}); rescale X, for example "
                             f"to unit standard deviation.")
        self._fit_kernel, self._fit_gamma, self._fit_n_neighbors = self.kernel, gamma, n_neighbors
        W = self._graph(X)
        before = {name: self.__dict__[name] for name in ("X_", "classes_")
                  if name in self.__dict__}
        self.X_ = X
        self.classes_ = classes
        try:
            distributions, results = self._propagate(W, labelled, codes.ravel(), options)
        except KeyboardInterrupt:
            # left as it was before the fit
            for name in ("X_", "classes_"):
                self.__dict__.pop(name, None)
            self.__dict__.update(before)
            raise
        self.label_distributions_ = distributions
        self.transduction_ = classes[np.argmax(distributions, axis=1)]
        self.results_ = results
        self.n_iter_ = int(max((-(-r.n_iter // self._n_unknown) for r in results), default=0))
        return self

    def _build_graph(self):
        """scikit-learn's transition matrix of the fitted kernel: the kernel
        matrix ``K`` of the training points with its rows scaled to sum to 1,
        ``T = D^{-1} K`` (rows summing to 0 stay 0).

        ``K`` is ``kernel(X_, X_)`` for a callable kernel (dense or sparse
        as it returns it), the Gaussian affinities ``exp(-gamma |x_i -
        x_j|^2)`` with their unit diagonal for ``"rbf"`` (dense), and the
        directed ``n_neighbors``-nearest-neighbour connectivity graph (each
        point among its own neighbours) for ``"knn"`` (CSR), as in
        scikit-learn, whose tests use it.  When ``K`` is symmetric (``"rbf"``, symmetric
        callables) the harmonic solution computed by :meth:`fit` satisfies
        the closed form of Zhu et al., ``f_U = T_UU f_U + T_UL y_L``, with
        this ``T`` (the diagonal of ``K`` cancels from both sides).  For a
        non-symmetric ``K`` (``"knn"``, some callables) :meth:`fit`
        propagates on the symmetrized graph ``(K + K^T) / 2`` instead, whose
        transition matrix differs from this one.

        Returns
        -------
        ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        """
        check_is_fitted(self)
        X = self.X_
        if callable(self._fit_kernel):
            K = self._fit_kernel(X, X)
            K = sp.csr_matrix(K, dtype=np.float64) if sp.issparse(K) \
                else np.array(K, dtype=np.float64)
        elif self._fit_kernel == "knn":
            # the points are queried among themselves: each is one of its own
            # n_neighbors, as in scikit-learn
            K = NearestNeighbors(n_neighbors=self._fit_n_neighbors, n_jobs=self.n_jobs).fit(X)
            K = sp.csr_matrix(K.kneighbors_graph(X, mode="connectivity"), dtype=np.float64)
        else:
            K = euclidean_distances(X, squared=True)
            np.exp(-self._fit_gamma * K, out=K)
        degree = np.asarray(K.sum(axis=1), dtype=np.float64).ravel()
        scale = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree != 0)
        if sp.issparse(K):
            return sp.csr_matrix(sp.diags(scale) @ K)
        return K * scale[:, None]

    def _graph(self, X):
        """The symmetric weights W (CSR, float64, zero diagonal, largest weight 1)."""
        if callable(self._fit_kernel):
            self._neighbors = None
            K = self._fit_kernel(X, X)
            K = sp.csr_matrix(K, dtype=np.float64)
            if K.shape != (X.shape[0], X.shape[0]):
                raise ValueError(f"The kernel callable must return a matrix of shape "
                                 f"(n_samples, n_samples) = {(X.shape[0],) * 2}; got {K.shape}.")
            W = sp.csr_matrix((K + K.T) * 0.5)
            W.setdiag(0.0)
            W.eliminate_zeros()
        elif self._fit_kernel == "knn":
            self._neighbors = NearestNeighbors(n_neighbors=self._fit_n_neighbors,
                                               n_jobs=self.n_jobs).fit(X)
            # each point is one of its own n_neighbors (scikit-learn's count):
            # the others are the n_neighbors - 1 nearest, a search that
            # excludes the point itself, so that G has no diagonal
            others = self._fit_n_neighbors - 1
            if others == 0:
                W = sp.csr_matrix((X.shape[0], X.shape[0]))
            else:
                G = self._neighbors.kneighbors_graph(n_neighbors=others, mode="connectivity")
                W = sp.csr_matrix((G + G.T) * 0.5)
        else:
            self._neighbors = None
            D2 = euclidean_distances(X, squared=True)
            K = np.exp(-self._fit_gamma * D2, out=D2)
            K += K.T             # rounding may leave the distances slightly asymmetric
            K *= 0.5
            np.fill_diagonal(K, 0.0)
            W = sp.csr_matrix(K)
            del K, D2
        if W.nnz:
            W.data /= W.data.max()
        return W

    def _propagate(self, W, labelled, codes, options):
        """Label distributions of all points and the solves' results."""
        n, n_classes = W.shape[0], self.classes_.size
        prior = np.bincount(codes, minlength=n_classes) / codes.size
        F = np.zeros((n, n_classes))
        n_comp, comp = connected_components(W, directed=False)
        has_label = np.zeros(n_comp, dtype=bool)
        has_label[comp[labelled]] = True
        active = has_label[comp]
        F[~active] = prior
        F[np.flatnonzero(labelled), codes] = 1.0
        results = []
        if not np.any(active & ~labelled):
            return F, results
        nodes = np.flatnonzero(active)
        W_active = W if nodes.size == n else W[nodes][:, nodes]
        mask = labelled[nodes]
        active_codes = np.full(n, -1)
        active_codes[labelled] = codes
        active_codes = active_codes[nodes]
        # the indicators of the classes sum to 1 on the labelled points, so the
        # harmonic functions sum to 1 everywhere: the last one is 1 minus the others
        options = dict(options)
        deadline = options.pop("_deadline", None)
        for k in range(n_classes - 1):
            if results and results[-1].status == "interrupted":
                raise KeyboardInterrupt("LabelPropagation.fit was interrupted during a solve; "
                                        "the estimator is left as it was before the fit.")
            problem = HarmonicProblem(W_active, (active_codes == k).astype(np.float64),
                                      mask=mask)
            if deadline is not None:
                remaining = max(deadline - time.perf_counter(), 1e-9)
                options["max_time"] = min(options.get("max_time") or np.inf, remaining)
            # the solver's own warning is replaced by the one below; silenced
            # by warn=False, not warnings.catch_warnings (not thread-safe)
            kwargs = dict(options)
            if self._max_passes is not None:
                kwargs["max_iter"] = int(self._max_passes) * max(1, problem.n_coordinates)
            result = solve(problem, warn=False, **kwargs)
            self._n_unknown = max(1, problem.n_coordinates)
            if result.status == "max_iter" and self._max_passes is not None:
                warnings.warn(f"max_iter={self._max_passes} was reached without convergence "
                              f"(the harmonic solve of class {self.classes_[k]!r}).",
                              ConvergenceWarning, stacklevel=3)
            elif not result.converged:
                warnings.warn(f"The harmonic solve of class {self.classes_[k]!r} stopped "
                              f"before reaching tol={options['tol']:g}: {result.message} "
                              f"Increase max_iter or tol.", ConvergenceWarning, stacklevel=3)
            F[nodes[problem.unknown], k] = result.x
            results.append(result)
        unknown = nodes[problem.unknown]
        F[unknown, -1] = 1.0 - F[unknown, :-1].sum(axis=1)
        np.clip(F, 0.0, None, out=F)
        _normalize_rows(F, prior)
        return F, results

    # ------------------------------------------------------------------ prediction

    def predict_proba(self, X):
        r"""Class probabilities of new points, from the training points'
        label distributions.

        ``"knn"``: the mean distribution of the ``n_neighbors`` nearest
        training points; ``"rbf"``: the distributions weighted by
        :math:`\exp(-\gamma \|x - x_j\|^2)`, normalized (the weights are
        scaled by that of the nearest training point first, so that they
        never all underflow).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
            Probabilities of ``classes_``; rows sum to 1.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64,
                           reset=False)
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        F = self.label_distributions_
        if callable(self._fit_kernel):
            K = self._fit_kernel(self.X_, X).T      # scikit-learn's argument order
            P = np.asarray(K @ F) if sp.issparse(K) else np.asarray(K, dtype=np.float64) @ F
        elif self._fit_kernel == "knn":
            k = min(self._fit_n_neighbors, F.shape[0])
            neighbors = self._neighbors.kneighbors(X, n_neighbors=k, return_distance=False)
            P = F[neighbors].mean(axis=1)
        else:
            P = np.empty((X.shape[0], F.shape[1]))
            for start in range(0, X.shape[0], _PREDICT_BATCH):
                D2 = euclidean_distances(X[start:start + _PREDICT_BATCH], self.X_,
                                         squared=True)
                D2 -= D2.min(axis=1, keepdims=True)
                P[start:start + _PREDICT_BATCH] = np.exp(-self._fit_gamma * D2, out=D2) @ F
        _normalize_rows(P, None)
        return P

    def predict(self, X):
        """Labels of new points: the class of largest :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        labels : ndarray of shape (n_queries,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def _normalize_rows(P, prior):
    """Scale the rows of P in place to sum 1; rows summing to 0 become ``prior``."""
    sums = P.sum(axis=1)
    empty = ~(sums > 0)
    if np.any(empty):
        P[empty] = prior if prior is not None else 1.0 / P.shape[1]
        sums[empty] = P[empty].sum(axis=1)
    P /= sums[:, None]
