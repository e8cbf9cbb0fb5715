r"""Poisson regression: :class:`PoissonRegressor`.

The estimator minimizes scikit-learn's objective

.. math::
    \frac{1}{2 \sum_i s_i} \sum_i s_i\, d(y_i, e^{x_i^T w + w_0})
    + \frac{\alpha}{2} \|w\|_2^2

with the Poisson deviance :math:`d(y, \mu) = 2 (y \log(y / \mu) - y + \mu)`.
With the weights rescaled to sum to ``n``, ``n`` times this objective is,
up to the constant :math:`\sum_i s_i (y_i \log y_i - y_i)`, the objective of
:class:`bcd.Poisson`, :math:`\sum_i s_i (e^{z_i} - y_i z_i) + \frac{l_2}{2}
\|w\|^2` with :math:`z_i = x_i^T w + w_0` and ``l2 = n * alpha`` (0 for
the intercept).
"""
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import RegressorMixin
from sklearn.metrics import d2_tweedie_score
from sklearn.utils._param_validation import Interval, StrOptions

from ..problems import Poisson
from ._base import (SPARSE_FORMATS, BCDEstimator, LinearPredictorMixin, SolveRecord,
                    check_sample_weight, design_matrix, validate_data)

#: the ``solver`` names of :class:`PoissonRegressor` and the options of
#: :func:`bcd.solve` they stand for ("auto": its automatic configuration)
POISSON_SOLVERS = {
    "auto": {},
    "cd": dict(rule="cyclic", blocks="fixed", block_size=1, update="newton"),
    "gs": dict(rule="gs", blocks="variable", block_size=1, update="newton"),
    # scikit-learn's solvers: one block of every coordinate ("all", the
    # problem's size at the fit) with quasi-Newton or Newton (Cholesky) steps
    "lbfgs": dict(rule="cyclic", blocks="variable", block_size="all", update="lbfgs"),
    "newton-cholesky": dict(rule="cyclic", blocks="variable", block_size="all",
                            update="newton"),
}


class PoissonDesign:
    """The data of a Poisson fit: the design with its intercept column (an
    unpenalized column of ones; sparse ``X`` stays sparse), the targets and
    the sample weights rescaled to sum to ``n``.

    Dense columns are centered in the problem's copy of ``X``: with an
    unpenalized intercept, ``w.(x - m) + c`` is the model ``w.x + b`` with
    ``b = c - w.m``, so the optimum is the same, and the solver meets
    columns far less correlated with the intercept column."""

    def __init__(self, X, y, sample_weight, fit_intercept):
        self.n_samples, self.n_features = X.shape
        self.fit_intercept = bool(fit_intercept)
        self.sample_weight = sample_weight
        self.y = np.asarray(y, dtype=np.float64)
        self.A = design_matrix(X, 1, fit_intercept)
        self.offset = None
        sw = np.ones(self.n_samples) if sample_weight is None else sample_weight
        if self.fit_intercept and not sp.issparse(X):
            self.offset = np.average(self.A[:, :-1], axis=0, weights=sw)
            self.A[:, :-1] -= self.offset
        self.y_mean = float(np.average(self.y, weights=sw))

    def problem(self, l2):
        """The :class:`bcd.Poisson` problem with the ridge weight ``l2`` on the coefficients."""
        ridge = float(l2)
        if self.fit_intercept:
            ridge = l2 * np.r_[np.ones(self.n_features), 0.0]
        return Poisson(self.A, self.y, l2=ridge, sample_weight=self.sample_weight)

    def initial(self):
        """The zero model with the best intercept, log of the weighted mean of
        ``y``, as scikit-learn starts (the zero model without an intercept,
        or when every target is 0)."""
        x = np.zeros(self.n_features + int(self.fit_intercept))
        if self.fit_intercept and self.y_mean > 0:
            x[-1] = np.log(self.y_mean)
        return x

    def start(self, coef, intercept):
        """The problem's variable for a model (warm start)."""
        coef = np.asarray(coef, dtype=np.float64).ravel()
        if not self.fit_intercept:
            return coef.copy()
        b = float(intercept)
        if self.offset is not None:
            b += float(self.offset @ coef)
        return np.r_[coef, b]

    def model(self, x):
        """``(coef, intercept)`` of the problem's solution ``x``."""
        x = np.asarray(x, dtype=np.float64)
        coef = x[:self.n_features].copy()
        if not self.fit_intercept:
            return coef, 0.0
        intercept = float(x[self.n_features])
        if self.offset is not None:
            intercept -= float(self.offset @ coef)
        return coef, intercept


class PoissonRegressor(RegressorMixin, LinearPredictorMixin, BCDEstimator):
    r"""Poisson regression (a generalized linear model with the log link),
    fitted by block coordinate descent.

    Minimizes, as scikit-learn's ``PoissonRegressor`` does,

    .. math::
        \frac{1}{2 \sum_i s_i} \sum_i s_i\, d(y_i, e^{x_i^T w + w_0})
        + \frac{\alpha}{2} \|w\|_2^2

    with the Poisson deviance :math:`d(y, \mu) = 2 (y \log(y / \mu) - y +
    \mu)`, the intercept :math:`w_0` unpenalized and the sample weights
    ``s`` (1 by default).  With the weights rescaled to sum to ``n``, ``n``
    times this objective is the :class:`bcd.Poisson` problem with the ridge
    weight ``l2 = n * alpha`` (0 for the intercept, a column of ones), up to
    a constant, solved by :func:`bcd.solve`.

    Parameters
    ----------
    alpha : float, default=1.0
        Penalty strength (>= 0).
    fit_intercept : bool, default=True
        Fit an unpenalized intercept (an extra column of ones; dense data
        are centered in a copy, sparse data are never densified).
    solver : {"auto", "cd", "gs", "lbfgs", "newton-cholesky"}, default="auto"
        The configuration of :func:`bcd.solve`.  ``"auto"``: its automatic
        configuration, chosen from the size and structure of the problem.
        ``"cd"``: cyclic coordinate descent with one-dimensional Newton
        steps and a line search (``rule="cyclic", blocks="fixed",
        block_size=1, update="newton"``).  ``"gs"``: the same steps on the
        coordinate with the largest partial derivative (``rule="gs",
        blocks="variable", block_size=1``).  scikit-learn's names: one
        block of every coordinate with quasi-Newton steps (``"lbfgs"``,
        ``update="lbfgs"``) or Newton steps solved by Cholesky
        (``"newton-cholesky"``, ``update="newton"``).
    max_iter : int, default=100
        Maximum number of passes over the coordinates: :func:`bcd.solve` runs
        at most ``max_iter * n_coordinates`` block updates.
    tol : float, default=1e-4
        The solver stops when the largest partial derivative of the
        objective above (with respect to the coefficients and the intercept)
        is at most ``tol``, scikit-learn's test; the summed problem's
        tolerance is ``n * tol``.
    warm_start : bool, default=False
        Start from the previous solution when refitting (otherwise from
        ``w = 0`` with the intercept ``log`` of the weighted mean of ``y``,
        as scikit-learn does).
    verbose : int, default=0
        Progress output of :func:`bcd.solve` (``verbose=1`` or ``2``).
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs), or None for no limit.  When it runs out the fit stops
        and keeps the best state reached, with a ``ConvergenceWarning``
        saying so; Ctrl-C ends a fit of several solves with
        ``KeyboardInterrupt`` at once, and the estimator is left as it was.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients.
    intercept_ : float
        Intercept (0 without ``fit_intercept``).
    n_iter_ : int
        Block updates performed by the solver.
    solver_ : str
        The solver used: ``solver``, or for ``"auto"`` the name of the
        automatic configuration chosen (``result_.options["auto"]``).
    result_ : bcd.Result
        The result of :func:`bcd.solve`.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import PoissonRegressor
    >>> X = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 4.0], [4.0, 3.0]])
    >>> y = np.array([12.0, 17.0, 22.0, 21.0])
    >>> model = PoissonRegressor().fit(X, y)
    >>> round(model.score(X, y), 3)
    0.99
    >>> model.coef_.round(3)
    array([0.121, 0.158])
    >>> round(float(model.intercept_), 3)
    2.089
    >>> model.predict([[1.0, 1.0], [3.0, 4.0]]).round(1)
    array([10.7, 21.9])
    """

    _parameter_constraints = {
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions(set(POISSON_SOLVERS))],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, *, alpha=1.0, fit_intercept=True, solver="auto", max_iter=100,
                 tol=1e-4, warm_start=False, verbose=0, max_time=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.verbose = verbose
        self.max_time = max_time

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

    def fit(self, X, y, sample_weight=None):
        """Fit the model by block coordinate descent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,)
            Non-negative targets (counts, or any non-negative values).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, rescaled internally to sum to
            ``n_samples`` (the objective does not depend on their scale).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse=SPARSE_FORMATS,
                             dtype=[np.float64, np.float32], y_numeric=True,
                             multi_output=False)
        y = np.asarray(y, dtype=np.float64)
        if np.any(y < 0):
            raise ValueError(f"PoissonRegressor needs non-negative targets y (counts); the "
                             f"smallest value of y is {y.min()!r}.")
        sw = check_sample_weight(sample_weight, X)
        n = X.shape[0]
        if sw is not None:
            sw = sw * (n / np.sum(sw))
        design = PoissonDesign(X, y, sw, self.fit_intercept)
        x0 = design.initial()
        if self.warm_start and getattr(self, "coef_", None) is not None \
                and np.shape(self.coef_) == (X.shape[1],):
            x0 = design.start(self.coef_, self.intercept_)
        problem = design.problem(n * float(self.alpha))
        options = dict(POISSON_SOLVERS[self.solver])
        if options.get("block_size") == "all":
            options["block_size"] = problem.n_coordinates
        if self.verbose:
            options["verbose"] = min(int(self.verbose), 2)
        record = SolveRecord(self, None)
        result = record.solve(problem, x0, self.max_iter, n * float(self.tol), **options)
        record.warn()
        coef, intercept = design.model(result.x)
        dtype = X.dtype
        self.coef_ = coef.astype(dtype)
        self.intercept_ = dtype.type(intercept) if self.fit_intercept else dtype.type(0.0)
        self.n_iter_ = int(result.n_iter)
        self.solver_ = result.options.get("auto", self.solver) if self.solver == "auto" \
            else self.solver
        self.result_ = result
        return self

    def predict(self, X):
        """Predict the expected counts.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``exp(X @ coef_ + intercept_)``.
        """
        return np.exp(self._decision(X))

    def score(self, X, y, sample_weight=None):
        """D^2, the share of the Poisson deviance explained.

        ``1 - D(y, predict(X)) / D(y, ybar)`` with the (weighted) Poisson
        deviance ``D`` and the weighted mean ``ybar`` of ``y``: scikit-learn's
        :func:`sklearn.metrics.d2_tweedie_score` with ``power=1``, the score
        of its ``PoissonRegressor``.  1 is a perfect fit, 0 the mean alone.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.
        y : array-like of shape (n_samples,)
            Non-negative targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        float
            D^2 of the predictions.
        """
        return float(d2_tweedie_score(y, self.predict(X), sample_weight=sample_weight,
                                      power=1))
