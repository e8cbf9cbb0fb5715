r"""Ridge regression: :class:`Ridge`.

The estimator minimizes scikit-learn's objective

.. math::
    \sum_i s_i (y_i - x_i^T w - w_0)^2 + \alpha \|w\|_2^2

for each target (the sample weights ``s`` are used as given, not
rescaled), which is twice the objective of :class:`bcd.LeastSquares` with
the ridge weight ``l2 = alpha``.
"""
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import MultiOutputMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ..penalties import Box, NonNegative
from ..problems import LeastSquares
from ._dask import DaskClientMixin, fit_distributed, is_dask_array, map_rows
from ._base import (SPARSE_FORMATS, BCDEstimator, LinearPredictorMixin, SolveRecord,
                    check_sample_weight, design_matrix, validate_data)

#: the ``solver`` names of :class:`Ridge` and the options of :func:`bcd.solve`
#: they stand for ("auto": its automatic configuration).  On a quadratic, a
#: gradient step with the coordinate's Lipschitz constant is the exact
#: minimization along the coordinate (projected onto w_j >= 0 with
#: ``positive=True``).
RIDGE_SOLVERS = {
    "auto": {},
    "cd": dict(rule="cyclic", blocks="fixed", block_size=1, update="gradient",
               lipschitz="bound"),
    "gs": dict(rule="gs", blocks="variable", block_size=1, update="gradient",
               lipschitz="bound"),
}

#: passes over the coordinates allowed to an explicit ``solver`` when
#: ``max_iter`` is None (the automatic configuration has its own default)
DEFAULT_PASSES = 1000
#: at most this many solves per target (the later ones warm-started, each
#: with a smaller KKT tolerance) until the duality gap meets ``tol``
GAP_ROUNDS = 8


def check_alpha(alpha, n_targets):
    """``alpha`` as a float64 array of shape (n_targets,): a number or a 1-d
    array of one value or one per target, each finite and >= 0."""
    try:
        a = np.asarray(alpha, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a non-negative number or a 1-d array of them, "
                         f"got {alpha!r}.") from None
    if a.ndim > 1:
        raise ValueError(f"alpha must be a number or a 1-d array, got an array of shape "
                         f"{a.shape}.")
    a = a.ravel()
    if a.size not in (1, n_targets):
        raise ValueError(f"alpha has {a.size} values but y has {n_targets} targets: give "
                         f"one value, or one per target.")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"alpha must be finite and >= 0, got {alpha!r}.")
    return np.broadcast_to(a, (n_targets,)).copy()


class RidgeDesign:
    """The data of a ridge fit, prepared once for all targets.

    With an intercept, dense ``X`` is centered with the weighted means (a
    copy), so that the intercept drops out of the problem; sparse ``X`` gets
    an unpenalized column of ones instead and is never densified.  Sample
    weights are folded into the rows (``sqrt(s_i) x_i``, ``sqrt(s_i) y_i``),
    which leaves the objective unchanged and lets all targets share one
    matrix.
    """

    def __init__(self, X, Y, sample_weight, fit_intercept, positive):
        self.n_samples, self.n_features = X.shape
        self.fit_intercept = bool(fit_intercept)
        self.positive = bool(positive)
        sw = np.ones(self.n_samples) if sample_weight is None else sample_weight
        Y = np.asarray(Y, dtype=np.float64)
        if fit_intercept:
            self.y_mean = np.average(Y, axis=0, weights=sw)
        else:
            self.y_mean = np.zeros(Y.shape[1])
        Yc = Y - self.y_mean
        # X^T S (y - ybar): the gradient at w = 0 with the best intercept
        corr = np.asarray(X.T @ (sw[:, None] * Yc), dtype=np.float64)
        self.scale = np.max(np.abs(corr), axis=0, initial=0.0)
        self.centered = fit_intercept and not sp.issparse(X)
        self.extra = int(fit_intercept and not self.centered)   # the intercept column
        if self.centered:
            # the weighted column means, a matrix-vector product
            self.x_mean = np.asarray(sw @ X, dtype=np.float64).ravel() / sw.sum()
            A = np.array(X, dtype=np.float64, order="F")
            A -= self.x_mean
            B = Yc
        else:
            self.x_mean = None
            A = design_matrix(X, 1, fit_intercept)
            B = Y
        if sample_weight is not None:
            root = np.sqrt(sample_weight)
            if sp.issparse(A):
                A = sp.csc_matrix(sp.diags(root) @ A)
                A.sort_indices()
            elif self.centered:
                A *= root[:, None]                  # the centered copy
            else:
                A = np.asfortranarray(root[:, None] * A)
            B = root[:, None] * B
        if sp.issparse(A) and A.dtype != np.float64:
            A = A.astype(np.float64)
        self.A = A
        self.B = np.asfortranarray(B)
        if self.extra:
            column = A[:, -1].toarray().ravel()     # sqrt(s), or ones
            self._intercept_column = column
            self._intercept_norm2 = float(column @ column)
            Bc = B - np.outer(column, column @ B / self._intercept_norm2)
        else:
            Bc = B
        #: half the objective of w = 0 (with its best intercept), per target
        self.null_objective = 0.5 * np.sum(Bc * Bc, axis=0)

    def problem(self, k, alpha):
        """The :class:`bcd.LeastSquares` problem of target ``k`` (its objective
        is half the estimator's)."""
        d = self.n_features
        if self.extra:
            penalized = np.r_[np.ones(d), np.zeros(self.extra)]
            l2 = alpha * penalized
            penalty = Box(np.where(penalized > 0, 0.0, -np.inf), np.inf) if self.positive \
                else None
        else:
            l2 = float(alpha)
            penalty = NonNegative() if self.positive else None
        return LeastSquares(self.A, self.B[:, k], l2=l2, penalty=penalty)

    def certify(self, k, x, alpha):
        r"""``(x, gap, primal)`` for the problem's variable ``x`` of target
        ``k``: ``x`` with the best intercept for its coefficients (with an
        intercept column), the duality gap of the problem at it and its
        objective ``primal``.

        With ``c = A^T r`` for the residual ``r = b - A x`` (orthogonal to
        the intercept column), the dual point ``r`` gives the gap
        :math:`\sum_j \alpha w_j^2 / 2 - c_j w_j + h(c_j)^2 / (2 \alpha)`
        with ``h(c) = c``, and ``h(c) = max(c, 0)`` for ``w >= 0``: that is
        :math:`\|c - \alpha w\|^2 / (2 \alpha)`, the squared gradient over
        ``2 alpha``, without the constraint.  It bounds the objective's
        distance to the optimum.  None for ``alpha = 0``.
        """
        x = np.array(x, dtype=np.float64)
        d = self.n_features
        b = self.B[:, k]
        if self.extra:
            x[d] = 0.0
            u = np.asarray(self.A @ x).ravel()
            x[d] = float(self._intercept_column @ (b - u)) / self._intercept_norm2
            r = b - u - x[d] * self._intercept_column
        else:
            r = b - np.asarray(self.A @ x).ravel()
        w = x[:d]
        primal = 0.5 * float(r @ r) + 0.5 * alpha * float(w @ w)
        if not alpha > 0:
            return x, None, primal
        c = np.asarray(self.A.T @ r).ravel()[:d]
        # each term written without cancellation: (c - alpha w)^2 / (2 alpha),
        # and for c <= 0 with w >= 0, w (alpha w / 2 - c)
        g = c - alpha * w
        terms = g * g / (2.0 * alpha)
        if self.positive:
            terms = np.where(c > 0, terms, w * (0.5 * alpha * w - c))
        return x, float(np.sum(terms)), primal

    def fit(self, record, k, alpha, tol, max_iter, options):
        """Solve target ``k``: ``(coef, intercept, results)``.

        With ``alpha > 0`` the fit ends when the duality gap is at most
        ``tol`` times the objective.  Through the dual (the automatic choice
        on wide data), whose stopping test is the gap, the solves stop at a
        gap of ``tol`` times their objective (``tol_mode="relative"``),
        halved on a repeat.  Otherwise the first solve's KKT tolerance ``t``
        makes that hold for the objective of ``w = 0`` (``n t^2 / (2 alpha)
        <= tol F(0)`` over the ``n`` coordinates); each further solve starts
        from the last and lowers ``t`` by the square root of the gap's excess
        (the gap scales with the squared gradient).  With ``alpha = 0``, one
        solve to the KKT tolerance ``tol ||X_c^T S y_c||_inf``."""
        problem = self.problem(k, alpha)
        n = problem.n_coordinates
        # through the dual, bcd.solve's tolerance is the duality gap itself
        dual = alpha > 0 and record.dual(problem)
        if dual:
            # the gap relative to the objective at the solve's point
            kkt = tol
            options = dict(options, tol_mode="relative")
        elif alpha > 0:
            kkt = np.sqrt(2.0 * alpha * tol * self.null_objective[k] / n)
        else:
            kkt = tol * self.scale[k]
        x = None
        results = []
        for _ in range(GAP_ROUNDS):
            result = record.solve(problem, x, max_iter, kkt, **options)
            results.append(result)
            x, gap, primal = self.certify(k, result.x, alpha)
            if gap is not None and result.duality_gap is not None:
                # the dual's own variables are a far better dual point than
                # the residual: their gap, at the certified x
                gap = min(gap, primal - (result.objective - result.duality_gap))
            target = tol * primal
            if gap is None or gap <= target or not result.converged:
                break
            if dual:
                kkt *= 0.5 * min(1.0, target / gap)
            else:
                kkt *= min(0.5, max(1e-3, 0.5 * np.sqrt(target / gap)))
        coef, intercept = self.model(k, x)
        return coef, intercept, results

    def model(self, k, x):
        """``(coef, intercept)`` of target ``k`` for the problem's variable ``x``."""
        x = np.asarray(x, dtype=np.float64)
        coef = x[:self.n_features].copy()
        if self.centered:
            intercept = float(self.y_mean[k] - self.x_mean @ coef)
        elif self.extra:
            intercept = float(x[self.n_features])
        else:
            intercept = 0.0
        return coef, intercept


class Ridge(DaskClientMixin, MultiOutputMixin, RegressorMixin, LinearPredictorMixin,
            BCDEstimator):
    r"""Linear least squares with an L2 penalty, fitted by block coordinate
    descent.

    Minimizes, as scikit-learn's ``Ridge`` does, for each target,

    .. math::
        \sum_i s_i (y_i - x_i^T w - w_0)^2 + \alpha \|w\|_2^2

    with the intercept :math:`w_0` unpenalized and the sample weights ``s``
    used as given (1 by default; not rescaled).  Half this objective is the
    :class:`bcd.LeastSquares` problem with the ridge weight ``l2 = alpha``
    (with ``positive=True`` also the penalty :class:`bcd.NonNegative`),
    solved by :func:`bcd.solve`.

    Parameters
    ----------
    alpha : float or ndarray of shape (n_targets,), default=1.0
        Penalty strength (finite, >= 0), or one per target.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.  Dense data are centered (a copy);
        sparse data get an unpenalized column of ones and are never
        densified.
    copy_X : bool, default=True
        Accepted for compatibility with scikit-learn: ``X`` is never
        modified, whatever its value.
    max_iter : int, default=None
        Maximum number of passes over the coordinates: :func:`bcd.solve` runs
        at most ``max_iter * n_coordinates`` block updates per target.  None:
        the default of :func:`bcd.solve` for ``solver="auto"`` (1000 passes,
        at least 10000 updates), 1000 passes for the other solvers.
    tol : float, default=1e-4
        Relative accuracy of the objective: the fit of each target ends when
        the duality gap, which bounds the objective's distance to the
        optimum, is at most ``tol`` times the objective, so that the
        objective is within a factor ``1 + tol`` of the optimum's.  The
        gap is :math:`\|\nabla_w F\|^2 / (2 \alpha)` for half the objective
        ``F`` (with ``positive=True``, a sum of non-negative terms of the
        same kind); the solver, whose test is the largest partial
        derivative, is run again warm-started with a smaller tolerance
        until the gap passes (at most eight solves).  With ``alpha = 0``
        there is no gap, and the solve stops when the largest partial
        derivative is at most ``tol`` times its value at ``w = 0``,
        :math:`\|X_c^T S y_c\|_\infty` (``X_c``, ``y_c``: centered when
        fitting an intercept; ``S``: the sample weights).
    solver : {"auto", "cd", "gs"}, default="auto"
        The configuration of :func:`bcd.solve`.  ``"auto"``: its automatic
        configuration, chosen from the size and structure of the problem
        (recorded in ``result_.options``).  ``"cd"``: cyclic coordinate
        descent, each step the exact minimization along one coordinate
        (``rule="cyclic", blocks="fixed", block_size=1,
        update="gradient", lipschitz="bound"``).  ``"gs"``: greedy
        (Gauss-Southwell) coordinate descent, the same steps on the
        coordinate with the largest partial derivative (``rule="gs",
        blocks="variable", block_size=1``).
    positive : bool, default=False
        Constrain the coefficients (not the intercept) to be non-negative.
    random_state : int, RandomState instance or None, default=None
        Seed of the random choices of the solver (the automatic
        configuration may visit the coordinates in random order).  None
        uses a fixed seed, so fits are reproducible; the minimizer does not
        depend on it.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs: one per target), or None for no limit.  When it runs out
        the fit stops and keeps the best state reached, with a ``ConvergenceWarning``
        saying so; Ctrl-C ends a fit of several solves with
        ``KeyboardInterrupt`` at once, and the estimator is left as it was.

    client : distributed.Client, default=None
        The Dask client that fits a dask array ``X`` (through
        :func:`bcd.distributed.solve`); None: the current client (a ValueError
        when there is none).  Unused for in-memory data.  A clone shares the
        client; a pickled estimator leaves it out (None after unpickling).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        Coefficients (one row per target when ``y`` has several columns).
    intercept_ : float or ndarray of shape (n_targets,)
        Intercepts (0 without ``fit_intercept``).
    n_iter_ : ndarray of shape (n_targets,)
        Block updates performed by the solver for each target, over all its
        solves (0 for a target whose solution ``w = 0`` is known without
        solving).
    solver_ : str
        The solver used: ``solver``, or for ``"auto"`` the name of the
        automatic configuration chosen (``result_.options["auto"]``).
    result_ : bcd.Result or list
        The :class:`bcd.Result` of the last solve (with several targets, a
        list with one per target; None for a target not solved, as for
        ``n_iter_``).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    ElasticNet : The L1 and L2 penalties (scaled by ``1 / (2 n)``).

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import Ridge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 4))
    >>> y = X @ np.array([1.0, -2.0, 0.0, 3.0]) + 0.5
    >>> model = Ridge(alpha=10.0).fit(X, y)
    >>> model.coef_.round(3)
    array([ 0.687, -1.464,  0.147,  2.402])
    >>> round(float(model.intercept_), 3)
    0.533
    >>> model.predict(X[:2]).round(3)
    array([1.159, 2.103])
    """

    _parameter_constraints = {
        "alpha": [Interval(numbers.Real, 0, None, closed="left"), "array-like"],
        "fit_intercept": ["boolean"],
        "copy_X": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver": [StrOptions(set(RIDGE_SOLVERS))],
        "positive": ["boolean"],
        "random_state": ["random_state"],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "client": "no_validation",
    }

    def __init__(self, alpha=1.0, *, fit_intercept=True, copy_X=True, max_iter=None, tol=1e-4,
                 solver="auto", positive=False, random_state=None, max_time=None,
                 client=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.positive = positive
        self.random_state = random_state
        self.max_time = max_time
        self.client = client

    def _solver_options(self):
        """The options of :func:`bcd.solve` for ``solver`` and ``random_state``."""
        options = dict(RIDGE_SOLVERS[self.solver])
        if self.random_state is not None:
            options["random_state"] = self.random_state
        return options

    def fit(self, X, y, sample_weight=None):
        """Fit the model by block coordinate descent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets; each column is fitted separately.
        sample_weight : float or array-like of shape (n_samples,), default=None
            Non-negative weights of the samples' squared errors (not
            rescaled, as in scikit-learn's ``Ridge``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if is_dask_array(X):
            self._validate_params()
            coef, intercept, result = fit_distributed(
                self, X, y, sample_weight, "squared", 0.0, float(self.alpha), self.tol,
                self.max_iter)
            self.coef_ = coef
            self.intercept_ = np.float64(intercept)
            self.n_iter_ = np.array([result.n_rounds])
            return self
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse=SPARSE_FORMATS,
                             dtype=[np.float64, np.float32], y_numeric=True,
                             multi_output=True)
        sw = check_sample_weight(sample_weight, X)
        Y = np.asarray(y, dtype=np.float64)
        one_d = Y.ndim == 1
        Y = Y.reshape(Y.shape[0], -1)
        n_targets = Y.shape[1]
        alphas = check_alpha(self.alpha, n_targets)
        design = RidgeDesign(X, Y, sw, self.fit_intercept, self.positive)
        record = SolveRecord(self, None)
        options = self._solver_options()
        max_iter = self.max_iter
        if max_iter is None and self.solver != "auto":
            max_iter = DEFAULT_PASSES
        coefs = np.zeros((n_targets, X.shape[1]))
        intercepts = design.y_mean.copy()
        n_iter = np.zeros(n_targets, dtype=np.int64)
        results = [None] * n_targets
        for k in range(n_targets):
            if design.scale[k] == 0.0:
                # X_c^T S y_c = 0: w = 0 with the mean as intercept is optimal
                continue
            coefs[k], intercepts[k], solves = design.fit(record, k, alphas[k], self.tol,
                                                         max_iter, options)
            n_iter[k] = sum(r.n_iter for r in solves)
            results[k] = solves[-1]
        record.warn()
        dtype = X.dtype
        if n_targets == 1:
            self.coef_ = coefs[0].astype(dtype)
            self.intercept_ = (dtype.type(intercepts[0]) if one_d else intercepts.astype(dtype))
        else:
            self.coef_ = coefs.astype(dtype)
            self.intercept_ = intercepts.astype(dtype)
        if not self.fit_intercept:
            self.intercept_ = dtype.type(0.0) if one_d else np.zeros(n_targets, dtype=dtype)
        self.n_iter_ = n_iter
        solved = [r for r in results if r is not None]
        self.solver_ = (solved[-1].options.get("auto", self.solver) if solved
                        and self.solver == "auto" else self.solver)
        self.result_ = results[0] if n_targets == 1 else results
        return self

    def predict(self, X):
        """Predict with the linear model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
            ``X @ coef_.T + intercept_``.
        """
        if is_dask_array(X):
            return map_rows(self.predict, X)
        return self._decision(X)
