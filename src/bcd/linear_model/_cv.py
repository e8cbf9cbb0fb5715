"""Cross-validated estimators: :class:`LassoCV` and :class:`LogisticRegressionCV`.

Each fold is fitted along the whole grid of penalties with warm starts, from
the strongest penalty to the weakest: by :func:`bcd.path` where it applies
(an L1 penalty alone on a problem without unpenalized coordinates), else by
one warm-started :func:`bcd.solve` per grid value.
"""
import numbers

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import (BCDEstimator, LinearPredictorMixin, SolveRecord,
                    check_sample_weight, validate_data)
from ._coordinate_descent import LeastSquaresDesign
from ._logistic import (PENALTIES, LogisticClassifierMixin, LogisticDesign, LogisticRegression,
                        logistic_strengths, validate_classification)

#: sparse formats of the cross-validated estimators (COO input becomes CSR,
#: whose rows the folds select)
CV_SPARSE_FORMATS = ["csr", "csc"]


def _rows(X, index):
    return _safe_indexing(X, index, axis=0)


def lasso_path_fit(design, alphas, tol, max_iter, record):
    """``(coefs, intercepts, n_done)`` of the Lasso along the decreasing
    ``alphas`` (shapes (n_alphas, n_features) and (n_alphas,)): ``n_done``
    values solved, fewer than all when the fit's ``max_time`` ran out (the
    others are left at zero)."""
    n = design.n_samples
    lambdas = n * np.asarray(alphas, dtype=np.float64)
    d = design.n_features
    coefs = np.zeros((lambdas.size, d))
    intercepts = np.full(lambdas.size, design.y_mean)
    if design.scale == 0.0:
        return coefs, intercepts, lambdas.size   # w = 0 is optimal at every alpha
    if np.all(lambdas > 0) and design.has_solver_gap(1.0, 0.0):
        problem = design.problem(1.0, 0.0)  # the L1 weights are scaled by each lambda
        extra = {"gap_tol": tol * design.y_energy} if record.working_sets else {}
        result = record.path(problem, lambdas, max_iter, tol * design.scale, **extra)
        for k, x in enumerate(result.coefs):
            coefs[k], intercepts[k] = design.model(x, 1.0)
        return coefs, intercepts, len(result.coefs)
    x0 = None
    for k, lam in enumerate(lambdas):
        if k and record.expired:
            return coefs, intercepts, k
        coef, intercept, _, _ = design.fit(record, lam, 0.0, tol, max_iter, x0)
        coefs[k], intercepts[k] = coef, intercept
        x0 = design.start(coef, intercept, lam)
    return coefs, intercepts, lambdas.size


def best_of_partial(values, larger_is_better):
    """The index of the best mean over folds of ``values`` (grid values x
    folds, NaN where not computed: a fit stopped by ``max_time``), among the
    grid values computed on the most folds; the first best one on ties."""
    counts = np.sum(~np.isnan(values), axis=1)
    keep = counts == counts.max()
    means = np.where(keep, np.nansum(values, axis=1) / np.maximum(counts, 1),
                     -np.inf if larger_is_better else np.inf)
    return int(np.argmax(means) if larger_is_better else np.argmin(means))


class LassoCV(RegressorMixin, LinearPredictorMixin, BCDEstimator):
    r"""Lasso with the penalty strength chosen by cross-validation.

    Each training fold is fitted along the grid of ``alphas`` (from the
    largest, with warm starts; :func:`bcd.path` when the problem has no
    unpenalized coordinate), the alpha with the smallest mean squared error
    on the held-out folds (weighted by the sample weights) is kept and the
    :class:`Lasso` is refitted with it on all the data.  The objective and
    scaling are those of scikit-learn's ``LassoCV``.

    Parameters
    ----------
    eps : float, default=1e-3
        Length of the automatic grid: ``alpha_min = eps * alpha_max``
        (between 0 and 1).
    alphas : int or array-like, default=100
        Number of alphas of the automatic grid (geometric, from
        ``alpha_max``, the smallest alpha whose solution is 0), or the grid
        itself.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept (see :class:`Lasso`).
    positive : bool, default=False
        Constrain the coefficients to be non-negative.
    max_iter : int, default=1000
        Maximum number of passes over the coordinates per solve.
    tol : float, default=1e-4
        Tolerance of every solve, as in :class:`Lasso`.
    cv : int, cross-validation generator or iterable, default=None
        Folds, as in scikit-learn (None: 5-fold ``KFold``).
    warm_start : bool, default=False
        Start the final fit from the previous solution.
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve`.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs: every fold along the grid, then the final fit), or None
        for no limit.  When it runs out, the folds not yet evaluated are
        left out of the choice (NaN in the scores) and the fit keeps the
        best state reached, with a ``ConvergenceWarning`` saying so.
        Ctrl-C raises ``KeyboardInterrupt`` within a second (unless it
        comes in the final fit, which then keeps its iterate with a
        warning saying it was interrupted), and the estimator is left as
        it was.

    Attributes
    ----------
    alpha_ : float
        The chosen alpha.
    alphas_ : ndarray of shape (n_alphas,)
        The grid, decreasing.
    mse_path_ : ndarray of shape (n_alphas, n_folds)
        Mean squared error on each held-out fold.
    coef_ : ndarray of shape (n_features,)
        Coefficients of the final fit.
    intercept_ : float
        Intercept of the final fit.
    dual_gap_ : float or None
        Duality gap of the final fit (per-sample objective).
    n_iter_ : int
        Block updates of the final fit.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    Lasso : The Lasso at a given alpha.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import LassoCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 8))
    >>> y = X[:, 0] - 2 * X[:, 1] + 0.1 * rng.standard_normal(60)
    >>> model = LassoCV(alphas=20, cv=3).fit(X, y)
    >>> model.alphas_.shape, model.mse_path_.shape
    ((20,), (20, 3))
    >>> np.flatnonzero(np.abs(model.coef_) > 0.1)
    array([0, 1])
    """

    _parameter_constraints = {
        "eps": [Interval(numbers.Real, 0, None, closed="neither")],
        "alphas": [Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
        "fit_intercept": ["boolean"],
        "positive": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "cv": ["cv_object"],
        "warm_start": ["boolean"],
        "solver_options": [dict, None],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, *, eps=1e-3, alphas=100, fit_intercept=True, positive=False,
                 max_iter=1000, tol=1e-4, cv=None, warm_start=False, solver_options=None,
                 max_time=None):
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.positive = positive
        self.max_iter = max_iter
        self.tol = tol
        self.cv = cv
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.max_time = max_time

    def _grid(self, design):
        if not isinstance(self.alphas, numbers.Integral):
            alphas = np.asarray(self.alphas, dtype=np.float64).ravel()
            if alphas.size == 0 or not np.all(np.isfinite(alphas)) or np.any(alphas < 0):
                raise ValueError("alphas must be a non-empty array of finite non-negative "
                                 "numbers.")
            return np.sort(alphas)[::-1]
        if not self.eps < 1:
            raise ValueError(f"eps must be below 1: the automatic grid runs from alpha_max "
                             f"down to eps * alpha_max; got eps={self.eps!r}.")
        corr = design.correlations
        drive = np.max(corr) if self.positive else np.max(np.abs(corr))
        alpha_max = max(float(drive), 0.0) / design.n_samples
        resolution = np.finfo(np.float64).resolution
        if alpha_max <= resolution:
            return np.full(int(self.alphas), resolution)
        return np.geomspace(alpha_max, alpha_max * self.eps, int(self.alphas))

    def fit(self, X, y, sample_weight=None):
        """Choose alpha by cross-validation and refit on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights (rescaled to sum to the number of samples
            of each training set; they also weight the held-out errors).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        record = SolveRecord(self, self.solver_options)     # max_time starts here
        X, y = validate_data(self, X, y, accept_sparse=CV_SPARSE_FORMATS,
                             dtype=[np.float64, np.float32], y_numeric=True,
                             multi_output=False)
        y = np.asarray(y, dtype=np.float64)
        sw = check_sample_weight(sample_weight, X)
        n = X.shape[0]
        sw_full = None if sw is None else sw * (n / np.sum(sw))
        full = LeastSquaresDesign(X, y, sw_full, self.fit_intercept, self.positive)
        alphas = self._grid(full)
        folds = list(check_cv(self.cv).split(X, y))
        mse = np.full((alphas.size, len(folds)), np.nan)
        for f, (train, test) in enumerate(folds):
            if f and record.expired:
                break                       # max_time: choose among what was evaluated
            sw_train = None
            if sw is not None:
                sw_train = sw[train] * (len(train) / np.sum(sw[train]))
            design = LeastSquaresDesign(_rows(X, train), y[train], sw_train,
                                        self.fit_intercept, self.positive)
            coefs, intercepts, done = lasso_path_fit(design, alphas, self.tol, self.max_iter,
                                                     record)
            pred = np.asarray(_rows(X, test) @ coefs[:done].T) + intercepts[:done]
            errors = (pred - y[test][:, None]) ** 2
            weights = None if sw is None else sw[test]
            mse[:done, f] = np.average(errors, axis=0, weights=weights)
        best = best_of_partial(mse, larger_is_better=False)
        alpha = float(alphas[best])
        l1 = n * alpha
        x0 = None
        if self.warm_start and getattr(self, "coef_", None) is not None \
                and np.shape(self.coef_) == (X.shape[1],):
            x0 = full.start(self.coef_, self.intercept_, l1)
        before = record.n_iter
        coef, intercept, gap, _ = full.fit(record, l1, 0.0, self.tol, self.max_iter, x0)
        record.warn()
        self.alpha_ = alpha
        self.alphas_ = alphas
        self.mse_path_ = mse
        self.coef_ = coef.astype(X.dtype)
        self.intercept_ = X.dtype.type(intercept) if self.fit_intercept else X.dtype.type(0.0)
        self.dual_gap_ = None if gap is None else gap / n
        self.n_iter_ = max(1, record.n_iter - before)
        return self

    def predict(self, X):
        """Predict with the final linear model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            ``X @ coef_ + intercept_``.
        """
        return self._decision(X)


def logistic_path_fit(design, Cs, penalty, l1_ratio, tol, max_iter, record):
    """``[(coef, intercept), ...]`` along the increasing ``Cs`` (decreasing
    penalties), warm-started; shorter than ``Cs`` when the fit's
    ``max_time`` ran out."""
    strengths = [logistic_strengths(penalty, C, l1_ratio) for C in Cs]
    l1s = np.array([s[0] for s in strengths])
    l2s = np.array([s[1] for s in strengths])
    if not design.fit_intercept and np.all(l2s == 0) and np.all(l1s > 0):
        problem = design.problem(1.0, 0.0)   # the L1 weights are scaled by each 1/C
        result = record.path(problem, l1s, max_iter, design.kkt_tol(tol))
        return [design.model(x) for x in result.coefs]
    models, x0 = [], None
    for l1, l2 in strengths:
        if models and record.expired:
            break
        coef, intercept, result = design.fit(record, l1, l2, tol, max_iter, x0)
        models.append((coef, intercept))
        x0 = result.x
    return models


class LogisticRegressionCV(LogisticClassifierMixin, BCDEstimator):
    r"""Logistic regression with ``C`` chosen by cross-validation.

    Each training fold is fitted along the grid ``Cs`` (from the smallest C,
    the strongest penalty, with warm starts; :func:`bcd.path` for an L1
    penalty without intercept), the C with the best mean score on the
    held-out folds is kept and :class:`LogisticRegression` is refitted with
    it on all the data.  The objective and its scaling are those of
    :class:`LogisticRegression`.

    Parameters
    ----------
    Cs : int or array-like, default=10
        The grid of C, or its size: ``Cs`` values geometrically spaced from
        1e-4 to 1e4.
    penalty : {"l2", "l1", "elasticnet"} or None, default="l2"
        The penalty (see :class:`LogisticRegression`).
    l1_ratio : float, default=None
        The L1 share of ``"elasticnet"``.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.
    cv : int, cross-validation generator or iterable, default=None
        Folds, as in scikit-learn (None: 5-fold ``StratifiedKFold``).  Every
        training set must contain every class.
    scoring : str or callable, default=None
        Score of the held-out folds, as in scikit-learn (None: accuracy);
        the held-out samples' weights are passed to it.
    max_iter : int, default=1000
        Maximum number of passes over the coordinates per solve.
    tol : float, default=1e-4
        Tolerance of every solve, as in :class:`LogisticRegression`.
    warm_start : bool, default=False
        Start the final fit from the previous solution.
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve`.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs: every fold along the grid, then the final fit), or None
        for no limit.  When it runs out, the folds not yet evaluated are
        left out of the choice (NaN in the scores) and the fit keeps the
        best state reached, with a ``ConvergenceWarning`` saying so.
        Ctrl-C raises ``KeyboardInterrupt`` within a second (unless it
        comes in the final fit, which then keeps its iterate with a
        warning saying it was interrupted), and the estimator is left as
        it was.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    Cs_ : ndarray of shape (n_Cs,)
        The grid, increasing.
    scores_ : ndarray of shape (n_folds, n_Cs)
        Score of every held-out fold at every C.
    C_ : float
        The chosen C (the first best mean score).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients of the final fit.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts of the final fit.
    n_iter_ : ndarray of shape (1,)
        Block updates of the final fit.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    LogisticRegression : The model at a given C.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import LogisticRegressionCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 3))
    >>> y = (X[:, 0] + 0.5 * rng.standard_normal(80) > 0).astype(int)
    >>> model = LogisticRegressionCV(Cs=5, cv=4).fit(X, y)
    >>> model.Cs_
    array([1.e-04, 1.e-02, 1.e+00, 1.e+02, 1.e+04])
    >>> model.scores_.shape, bool(model.score(X, y) > 0.8)
    ((4, 5), True)
    """

    _parameter_constraints = {
        "Cs": [Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
        "penalty": [StrOptions(set(PENALTIES)), None],
        "l1_ratio": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "fit_intercept": ["boolean"],
        "cv": ["cv_object"],
        "scoring": [str, callable, None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "warm_start": ["boolean"],
        "solver_options": [dict, None],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, Cs=10, *, penalty="l2", l1_ratio=None, fit_intercept=True, cv=None,
                 scoring=None, max_iter=1000, tol=1e-4, warm_start=False,
                 solver_options=None, max_time=None):
        self.Cs = Cs
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.scoring = scoring
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.max_time = max_time

    def _grid(self):
        if isinstance(self.Cs, numbers.Integral):
            return np.logspace(-4, 4, int(self.Cs))
        Cs = np.asarray(self.Cs, dtype=np.float64).ravel()
        if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
            raise ValueError("Cs must be a positive integer or a non-empty array of positive "
                             "finite numbers.")
        return np.sort(Cs)

    def _fold_model(self, classes, n_features, coef, intercept, dtype):
        model = LogisticRegression(penalty=self.penalty, C=1.0, l1_ratio=self.l1_ratio,
                                   fit_intercept=self.fit_intercept)
        model.classes_ = classes
        model.coef_ = coef.astype(dtype)
        model.intercept_ = intercept.astype(dtype)
        model.n_features_in_ = n_features
        model.n_iter_ = np.array([1])
        return model

    def fit(self, X, y, sample_weight=None):
        """Choose C by cross-validation and refit on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples' losses, also passed to the
            scoring of the held-out folds.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        record = SolveRecord(self, self.solver_options)     # max_time starts here
        logistic_strengths(self.penalty, 1.0, self.l1_ratio)   # checks l1_ratio
        X, y, classes, y_idx, sw = validate_classification(self, X, y, sample_weight,
                                                           CV_SPARSE_FORMATS)
        Cs = self._grid()
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y))
        scorer = check_scoring(self, scoring=self.scoring)
        scores = np.full((len(folds), Cs.size), np.nan)
        for f, (train, test) in enumerate(folds):
            if f and record.expired:
                break                       # max_time: choose among what was evaluated
            if np.unique(y_idx[train]).size != classes.size:
                raise ValueError(f"The training set of fold {f} does not contain every class; "
                                 f"use a stratified cv with fewer splits.")
            design = LogisticDesign(_rows(X, train), y_idx[train], classes.size,
                                    None if sw is None else sw[train], self.fit_intercept)
            models = logistic_path_fit(design, Cs, self.penalty, self.l1_ratio, self.tol,
                                       self.max_iter, record)
            X_test, y_test = _rows(X, test), y[test]
            kwargs = {} if sw is None else {"sample_weight": sw[test]}
            for j, (coef, intercept) in enumerate(models):
                model = self._fold_model(classes, X.shape[1], coef, intercept, X.dtype)
                scores[f, j] = scorer(model, X_test, y_test, **kwargs)
        best = best_of_partial(scores.T, larger_is_better=True)
        C = float(Cs[best])
        design = LogisticDesign(X, y_idx, classes.size, sw, self.fit_intercept)
        x0 = None
        previous = getattr(self, "coef_", None)
        if self.warm_start and previous is not None \
                and np.shape(previous) == (design.width, X.shape[1]) \
                and np.array_equal(getattr(self, "classes_", None), classes):
            x0 = design.start(previous, self.intercept_)
        l1, l2 = logistic_strengths(self.penalty, C, self.l1_ratio)
        before = record.n_iter
        coef, intercept, _ = design.fit(record, l1, l2, self.tol, self.max_iter, x0)
        record.warn()
        self.classes_ = classes
        self.Cs_ = Cs
        self.scores_ = scores
        self.C_ = C
        self.coef_ = coef.astype(X.dtype)
        self.intercept_ = intercept.astype(X.dtype)
        self.n_iter_ = np.array([max(1, record.n_iter - before)])
        return self
