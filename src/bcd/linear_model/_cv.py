"""Cross-validated estimators: :class:`LassoCV`, :class:`ElasticNetCV` and
:class:`LogisticRegressionCV`.

Each fold is fitted along the whole grid of penalties with warm starts, from
the strongest penalty to the weakest.  With the default methods (the elastic
net's cyclic selection; the automatic and Newton-type solvers of a binary
logistic regression), no ``solver_options``, ``verbose`` or ``max_time``,
each grid value is one compiled call (``bcd.core.enetpath``: cyclic
coordinate descent stopped by scikit-learn's duality-gap test for the
elastic net; proximal Newton steps with inner coordinate descent stopped by
the KKT test of :func:`bcd.solve` for the logistic model), so that a grid
value costs its iterations and not the set-up of a general solve; the refit
uses the same solver.  Otherwise each grid value is solved by :func:`bcd.path`
where it applies (an L1 penalty alone on a problem without unpenalized
coordinates), else by one warm-started :func:`bcd.solve`.
"""
import numbers
import time

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, get_scorer
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils import metadata_routing
from sklearn.utils._param_validation import Interval, StrOptions

from .. import _interrupt
from .._result import warn_user
from ..core.enetpath import EnetPath, LogisticPath
from ._base import (BCDEstimator, LinearPredictorMixin, SolveRecord, SparseCoefMixin,
                    check_fit_params, check_random_state_seed, check_sample_weight,
                    fit_deadline, routing_enabled,
                    class_sample_weight, solve_passes,
                    validate_data, verbose_options)
from ._coordinate_descent import LeastSquaresDesign, least_squares_strengths
from ._logistic import (PENALTIES, SOLVERS, LogisticClassifierMixin, LogisticDesign,
                        liblinear_bias,
                        LogisticRegression, check_solver, logistic_method,
                        logistic_strengths, validate_classification)

#: sparse formats of the cross-validated estimators (COO input becomes CSR,
#: whose rows the folds select)
CV_SPARSE_FORMATS = ["csr", "csc"]


def run_folds(estimator, jobs):
    """The outcomes of the fold ``jobs`` (joblib's delayed calls), in this
    process or through joblib as ``n_jobs`` asks.

    ``max_time`` is one deadline for the fit (``estimator._fit_deadline``,
    set when the fit starts): the folds share it (each of their solves gets
    what remains) and, in this process, no fold starts after it; at least
    one fold always runs.  Ctrl-C during a fold's solve raises
    ``KeyboardInterrupt`` at once, instead of going on with the next fold.
    Each outcome's last item is the fold's list of solves that did not
    converge."""
    if estimator.n_jobs is not None and estimator.n_jobs != 1:
        return Parallel(n_jobs=estimator.n_jobs)(jobs)
    out = []
    jobs = list(jobs)
    for job in jobs:
        if out and estimator._fit_deadline is not None \
                and time.perf_counter() >= estimator._fit_deadline:
            # max_time: choose among the folds evaluated
            warn_user(f"{type(estimator).__name__}: the fit reached max_time = "
                      f"{estimator.max_time:g} s after {len(out)} of {len(jobs)} folds; the "
                      f"penalty is chosen on those.", ConvergenceWarning)
            break
        out.append(job[0](*job[1], **job[2]))
        if any(r.status == "interrupted" for r in out[-1][-1]):
            raise KeyboardInterrupt(f"{type(estimator).__name__}.fit was interrupted during a "
                                    f"solve; the estimator is left as it was before the fit.")
    return out


def pad_folds(values, n_folds, axis=0, fill=np.nan):
    """``values`` of the folds evaluated, followed along ``axis`` by
    ``fill`` for the folds that ``max_time`` left out."""
    missing = n_folds - values.shape[axis]
    if missing <= 0:
        return values
    shape = list(values.shape)
    shape[axis] = missing
    return np.concatenate([values, np.full(shape, fill, dtype=np.result_type(values, fill))],
                          axis=axis)


def _rows(X, index):
    return _safe_indexing(X, index, axis=0)


def enet_path_fit(design, alphas, l1_ratio, tol, max_iter, record):
    """``(coefs, intercepts)`` of the elastic net along the decreasing
    ``alphas`` (shapes (n_alphas, n_features) and (n_alphas,)),
    warm-started: in compiled calls where :func:`compiled_path_applies`, else
    by :func:`bcd.path` for the Lasso (``l1_ratio = 1``) where the solver has
    the duality gap, else by one warm-started solve per alpha."""
    n = design.n_samples
    alphas = np.asarray(alphas, dtype=np.float64)
    d = design.n_features
    coefs = np.zeros((alphas.size, d))
    intercepts = np.full(alphas.size, design.y_mean)
    if design.scale == 0.0:
        return coefs, intercepts            # w = 0 is optimal at every alpha
    l1s, l2s = least_squares_strengths(alphas, l1_ratio, n)
    if np.all(l1s > 0) and compiled_path_applies(record):
        return compiled_enet_path(design, l1s, l2s, tol, max_iter, record)[:2]
    if l1_ratio == 1.0 and np.all(l1s > 0) and design.has_solver_gap(1.0, 0.0):
        problem = design.problem(1.0, 0.0)  # the L1 weights are scaled by each lambda
        extra = {"gap_tol": tol * design.y_energy} if record.working_sets else {}
        result = record.path(problem, l1s, max_iter, tol * design.scale, **extra)
        for k, x in enumerate(result.coefs):
            coefs[k], intercepts[k] = design.model(x, 1.0)
        return coefs, intercepts
    x0 = None
    for k, (l1, l2) in enumerate(zip(l1s, l2s)):
        coef, intercept, _, _ = design.fit(record, float(l1), float(l2), tol, max_iter, x0)
        coefs[k], intercepts[k] = coef, intercept
        x0 = design.start(coef, intercept, l1)
    return coefs, intercepts


class CompiledPathFailure:
    """A value of a compiled elastic-net path that did not converge, as
    :class:`SolveRecord` reports failures (``status``, ``message``,
    ``converged``, ``options``)."""

    __slots__ = ("status", "message", "converged", "options", "n_iter")

    def __init__(self, gap, gap_tol, passes, status="max_iter", what="duality gap"):
        self.status = status
        if status == "max_iter":
            self.message = (f"Reached max_iter = {passes} iterations with a {what} of "
                            f"{gap:.3e} above tol = {gap_tol:.3e}.")
        else:
            self.message = (f"Stopped: no step decreased the objective (the {what} "
                            f"{gap:.3e} is at its rounding floor, above tol = {gap_tol:.3e}).")
        self.converged = False
        self.options = {"formulation": "primal"}
        self.n_iter = passes


def compiled_path_applies(record):
    """Whether a fold's elastic-net path may run in compiled calls
    (:class:`bcd.core.enetpath.EnetPath`): for the default cyclic
    coordinate descent, without ``solver_options``, ``verbose`` (which
    are options of :func:`bcd.solve`) or a ``max_time`` deadline."""
    return record.method == "cyclic" and not record.options and record.deadline is None


def _compiled_enet(design):
    """``(EnetPath, x_mean or None)`` of a :class:`LeastSquaresDesign`:
    dense data as the design centred it, sparse data centred implicitly
    (never densified)."""
    X = design.X
    if sp.issparse(X):
        x_mean = None
        if design.fit_intercept:
            sw = design._sw
            x_mean = np.asarray(X.T @ sw, dtype=np.float64).ravel() / float(np.sum(sw))
        return EnetPath(X, design.b, sample_weight=design.sample_weight, x_mean=x_mean,
                        positive=design.positive), x_mean
    return EnetPath(design.A, design.b, sample_weight=design.sample_weight,
                    positive=design.positive), design.x_mean


def compiled_enet_path(design, l1s, l2s, tol, max_iter, record, x0=None):
    """``(coefs, intercepts, gaps)`` of the elastic net at the summed
    weights ``l1s > 0`` and ``l2s`` (decreasing), warm-started (from the
    coefficients ``x0``, default 0), in one compiled call per value, each
    stopped by scikit-learn's test: a duality gap of at most ``tol * sum_i
    s_i (y_i - ybar)^2``, evaluated when a pass moves no coefficient by
    more than ``tol`` times the largest.  The Gram matrix is formed when
    there are more samples than features (dense data)."""
    d = design.n_features
    # one per design: the paths of a fold's l1_ratios share its Gram matrix
    compiled = getattr(design, "_compiled_enet", None)
    if compiled is None:
        compiled = design._compiled_enet = _compiled_enet(design)
    enet, x_mean = compiled
    start = np.zeros(d) if x0 is None else np.asarray(x0, dtype=np.float64)
    enet.set_coef(np.maximum(start, 0.0) if design.positive else start)
    coefs = np.zeros((l1s.size, d))
    intercepts = np.full(l1s.size, design.y_mean)
    gaps = np.zeros(l1s.size)
    gap_tol = tol * design.y_energy
    max_passes = int(max_iter)
    for k in range(l1s.size):
        gaps[k], passes, converged = enet.solve(l1s[k], l2s[k], gap_tol, tol, max_passes)
        record.n_passes += int(passes)
        record.n_iter += int(passes) * d
        if not converged:
            record.failures.append(CompiledPathFailure(gaps[k], gap_tol, passes))
        coef = coefs[k] = enet.coef
        if x_mean is not None:
            intercepts[k] = design.y_mean - float(x_mean @ coef)
    return coefs, intercepts, gaps


def lasso_path_fit(design, alphas, tol, max_iter, record):
    """:func:`enet_path_fit` of the Lasso."""
    return enet_path_fit(design, alphas, 1.0, tol, max_iter, record)


def _enet_fold(estimator, X, y, sw, train, test, grids, l1_ratios):
    """One fold of the elastic-net CV: the held-out mean squared errors of
    shape (n_l1_ratios, n_alphas), and the solves that did not converge."""
    sw_train = None
    if sw is not None:
        sw_train = sw[train] * (len(train) / np.sum(sw[train]))
    design = LeastSquaresDesign(_rows(X, train), y[train], sw_train, estimator.fit_intercept,
                                estimator.positive)
    X_test = _rows(X, test)
    weights = None if sw is None else sw[test]
    mse = np.empty((len(l1_ratios), grids.shape[1]))
    failures = []
    for k, l1_ratio in enumerate(l1_ratios):
        record = estimator._record()
        coefs, intercepts = enet_path_fit(design, grids[k], l1_ratio, estimator.tol,
                                          estimator.max_iter, record)
        failures += record.failures
        pred = np.asarray(X_test @ coefs.T) + intercepts
        errors = (pred - y[test][:, None]) ** 2
        mse[k] = np.average(errors, axis=0, weights=weights)
    return mse, failures


def check_alphas(alphas):
    """A given grid of penalty strengths, sorted decreasing: TypeError for an
    entry that is not a real number, ValueError for a negative, non-finite or
    empty one, naming the entry as scikit-learn does (``alphas[i]``)."""
    values = list(np.asarray(alphas, dtype=object).ravel())
    if not values:
        raise ValueError("alphas must be a non-empty array of non-negative numbers.")
    for i, a in enumerate(values):
        if not isinstance(a, numbers.Real) or isinstance(a, bool):
            raise TypeError(f"alphas[{i}] must be an instance of float, not "
                            f"{type(a).__name__}.")
        if not a >= 0:
            raise ValueError(f"alphas[{i}] == {a}, must be >= 0.0.")
        if not np.isfinite(a):
            raise ValueError(f"alphas[{i}] == {a}, must be finite.")
    return np.sort(np.asarray(values, dtype=np.float64))[::-1]


class _LinearModelCV(RegressorMixin, LinearPredictorMixin, BCDEstimator):
    """Common fit of :class:`LassoCV` and :class:`ElasticNetCV`."""

    _parameter_constraints = {
        "eps": [Interval(numbers.Real, 0, None, closed="neither")],
        "alphas": [Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
        "fit_intercept": ["boolean"],
        "precompute": [StrOptions({"auto"}), "array-like", "boolean"],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "copy_X": ["boolean"],
        "cv": ["cv_object"],
        "verbose": ["verbose"],
        "n_jobs": [None, numbers.Integral],
        "positive": ["boolean"],
        "random_state": ["random_state"],
        "selection": [StrOptions({"cyclic", "random"})],
        "warm_start": ["boolean"],
        "solver_options": [dict, None],
    }

    def _l1_ratios(self):
        raise NotImplementedError

    def _record(self):
        return SolveRecord(self, verbose_options(self.solver_options, self.verbose),
                           method=self.selection, random_state=self._seed,
                           deadline=self._fit_deadline)

    def _grid(self, design, l1_ratio):
        if not isinstance(self.alphas, numbers.Integral):
            return check_alphas(self.alphas)
        if not self.eps <= 1:
            # eps = 1 is a grid of alpha_max alone (scikit-learn's tests use it);
            # above, every alpha would be above alpha_max, with all-zero models
            raise ValueError(f"eps must be below 1 (or 1): the automatic grid runs from "
                             f"alpha_max down to eps * alpha_max; got eps={self.eps!r}.")
        if l1_ratio == 0:
            raise ValueError("Automatic alpha grid generation is not supported for "
                             "l1_ratio=0. Please supply a grid by providing your estimator "
                             "with the appropriate `alphas=` argument.")
        corr = design.correlations
        drive = np.max(corr) if self.positive else np.max(np.abs(corr))
        alpha_max = max(float(drive), 0.0) / (design.n_samples * l1_ratio)
        resolution = np.finfo(np.float64).resolution
        if alpha_max <= resolution:
            return np.full(int(self.alphas), resolution)
        return np.geomspace(alpha_max, alpha_max * self.eps, int(self.alphas))

    @_interrupt.records
    def fit(self, X, y, sample_weight=None, **params):
        """Choose the penalty by cross-validation and refit on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights (rescaled to sum to the number of samples
            of each training set; they also weight the held-out errors).
        **params : dict
            ``groups`` for a group-aware ``cv`` splitter; as in scikit-learn,
            only with metadata routing enabled
            (``sklearn.set_config(enable_metadata_routing=True)``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        groups = check_fit_params(self, params)
        X, y = validate_data(self, X, y, accept_sparse=CV_SPARSE_FORMATS,
                             dtype=[np.float64, np.float32], y_numeric=True,
                             multi_output=False)
        y = np.asarray(y, dtype=np.float64)
        sw = check_sample_weight(sample_weight, X)
        self._seed = check_random_state_seed(self.random_state)
        self._fit_deadline = fit_deadline(self.max_time)
        n = X.shape[0]
        sw_full = None if sw is None else sw * (n / np.sum(sw))
        full = LeastSquaresDesign(X, y, sw_full, self.fit_intercept, self.positive)
        l1_ratios = self._l1_ratios()
        grids = np.array([self._grid(full, r) for r in l1_ratios])
        folds = list(check_cv(self.cv).split(X, y, groups))
        jobs = (delayed(_enet_fold)(self, X, y, sw, train, test, grids, l1_ratios)
                for train, test in folds)
        out = run_folds(self, jobs)
        mse = np.stack([o[0] for o in out], axis=-1)    # (n_l1_ratios, n_alphas, n_folds)
        record = self._record()
        for o in out:
            record.failures += o[1]
        k, j = np.unravel_index(np.argmin(mse.mean(axis=2)), mse.shape[:2])
        mse = pad_folds(mse, len(folds), axis=2)          # NaN: folds max_time skipped
        l1_ratio, alpha = float(l1_ratios[k]), float(grids[k, j])
        l1, l2 = least_squares_strengths(alpha, l1_ratio, n)
        x0 = None
        if self.warm_start and getattr(self, "coef_", None) is not None \
                and np.shape(self.coef_) == (X.shape[1],):
            x0 = full.start(self.coef_, self.intercept_, l1)
        before = record.n_passes
        if l1 > 0 and full.scale > 0 and compiled_path_applies(record):
            # the refit as the folds' solves: the same method and stopping test
            start = None
            if self.warm_start and getattr(self, "coef_", None) is not None \
                    and np.shape(self.coef_) == (X.shape[1],):
                start = np.asarray(self.coef_, dtype=np.float64)
            coefs, intercepts, gaps = compiled_enet_path(
                full, np.array([l1]), np.array([l2]), self.tol, self.max_iter, record, start)
            coef, intercept, gap = coefs[0], float(intercepts[0]), float(gaps[0])
        else:
            coef, intercept, gap, _ = full.fit(record, l1, l2, self.tol, self.max_iter, x0)
        record.warn()
        self.alpha_ = alpha
        self.l1_ratio_ = l1_ratio
        # scikit-learn's layouts: the grids of every l1_ratio (one grid when
        # there is one l1_ratio or the grid is given), the errors squeezed
        given = not isinstance(self.alphas, numbers.Integral)
        self.alphas_ = grids[0] if (len(l1_ratios) == 1 or given) else grids
        self.mse_path_ = np.squeeze(mse)
        self.coef_ = coef.astype(X.dtype)
        self.intercept_ = X.dtype.type(intercept) if self.fit_intercept else X.dtype.type(0.0)
        self.dual_gap_ = None if gap is None else gap / n
        self.n_iter_ = record.n_passes - before
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


_CV_DOC = """    eps : float, default=1e-3
        Length of the automatic grid: ``alpha_min = eps * alpha_max``, in
        (0, 1] (1: every alpha of the grid is ``alpha_max``).
    alphas : int or array-like, default=100
        Number of alphas of the automatic grid (geometric, from
        ``alpha_max``, the smallest alpha whose solution is 0), or the grid
        itself.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept (see :class:`Lasso`).
    precompute : "auto", bool or array-like, default="auto"
        Accepted for compatibility; bcd forms Gram blocks where its automatic
        configuration does (a Gram matrix given here is not used).
    max_iter : int, default=1000
        Maximum number of passes over the coordinates per solve.
    tol : float, default=1e-4
        Tolerance of every solve, as in :class:`Lasso`.
    copy_X : bool, default=True
        Accepted for compatibility: ``X`` is never modified.
    cv : int, cross-validation generator or iterable, default=None
        Folds, as in scikit-learn (None: 5-fold ``KFold``).
    verbose : bool or int, default=False
        Print the solver's progress when positive.
    n_jobs : int, default=None
        Number of folds fitted in parallel by joblib (None: one, in this
        process).
    positive : bool, default=False
        Constrain the coefficients to be non-negative.
    random_state : int, RandomState instance or None, default=None
        Seed of the random order with ``selection="random"``.
    selection : {"cyclic", "random"}, default="cyclic"
        As in :class:`Lasso`: bcd's automatic configuration, or coordinate
        descent in random order.
    warm_start : bool, default=False
        Start the final fit from the previous solution.
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve`.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit``: the folds share
        it (each solve gets what remains), no fold starts after it (the
        penalty is then chosen on the folds evaluated, with a
        ``ConvergenceWarning``), and the final fit gets what is left.
        Ctrl-C raises ``KeyboardInterrupt`` within a second, and the
        estimator is left as it was.
"""


class LassoCV(_LinearModelCV):
    __doc__ = r"""Lasso with the penalty strength chosen by cross-validation.

    Each training fold is fitted along the grid of ``alphas`` (from the
    largest, with warm starts: cyclic coordinate descent in one compiled call
    per alpha, stopped by scikit-learn's duality-gap test), the folds in
    parallel through joblib when ``n_jobs`` asks for it; the alpha with the smallest mean squared error on
    the held-out folds (weighted by the sample weights) is kept and the
    :class:`Lasso` is refitted with it on all the data.  The objective and
    scaling are those of scikit-learn's ``LassoCV``.

    Parameters
    ----------
%s
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
        Passes over the coordinates of the final fit.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    Lasso : The Lasso at a given alpha.
    ElasticNetCV : The elastic net with alpha and l1_ratio chosen by
        cross-validation.

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
    """ % _CV_DOC

    def __init__(self, *, eps=1e-3, alphas=100, fit_intercept=True, precompute="auto",
                 max_iter=1000, tol=1e-4, copy_X=True, cv=None, verbose=False, n_jobs=None,
                 positive=False, random_state=None, selection="cyclic", warm_start=False,
                 solver_options=None, max_time=None):
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.tol = tol
        self.copy_X = copy_X
        self.cv = cv
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.max_time = max_time

    def _l1_ratios(self):
        return [1.0]


class ElasticNetCV(_LinearModelCV):
    __doc__ = r"""Elastic net with ``alpha`` and ``l1_ratio`` chosen by cross-validation.

    The objective and scaling are those of :class:`ElasticNet`.  For every
    ``l1_ratio`` each training fold is fitted along its grid of ``alphas``
    (from the largest, warm-started: cyclic coordinate descent in one
    compiled call per alpha, stopped by scikit-learn's duality-gap test), the
    folds in parallel through joblib when ``n_jobs`` asks
    for it; the pair with the smallest mean squared error on the held-out
    folds is kept and the :class:`ElasticNet` refitted with it on all the
    data.

    Parameters
    ----------
    l1_ratio : float or list of float, default=0.5
        The L1 share(s) in [0, 1] (0 needs a given ``alphas`` grid).
%s
    Attributes
    ----------
    alpha_ : float
        The chosen alpha.
    l1_ratio_ : float
        The chosen l1_ratio.
    alphas_ : ndarray of shape (n_alphas,) or (n_l1_ratio, n_alphas)
        The grid(s), decreasing (2-D for several l1_ratios and an automatic
        grid, as in scikit-learn).
    mse_path_ : ndarray of shape (n_l1_ratio, n_alphas, n_folds)
        Mean squared error on each held-out fold (squeezed, as in
        scikit-learn: (n_alphas, n_folds) for one l1_ratio).
    coef_ : ndarray of shape (n_features,)
        Coefficients of the final fit.
    intercept_ : float
        Intercept of the final fit.
    dual_gap_ : float or None
        Duality gap of the final fit (per-sample objective).
    n_iter_ : int
        Passes over the coordinates of the final fit.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    ElasticNet : The elastic net at a given alpha and l1_ratio.
    LassoCV : ``l1_ratio = 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import ElasticNetCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 8))
    >>> y = X[:, 0] - 2 * X[:, 1] + 0.1 * rng.standard_normal(60)
    >>> model = ElasticNetCV(l1_ratio=[0.5, 1.0], alphas=20, cv=3).fit(X, y)
    >>> model.alphas_.shape, model.mse_path_.shape
    ((2, 20), (2, 20, 3))
    >>> np.flatnonzero(np.abs(model.coef_) > 0.1)
    array([0, 1])
    """ % _CV_DOC

    _parameter_constraints = {
        **_LinearModelCV._parameter_constraints,
        "l1_ratio": [Interval(numbers.Real, 0, 1, closed="both"), "array-like"],
    }

    def __init__(self, *, l1_ratio=0.5, eps=1e-3, alphas=100, fit_intercept=True,
                 precompute="auto", max_iter=1000, tol=1e-4, cv=None, copy_X=True, verbose=0,
                 n_jobs=None, positive=False, random_state=None, selection="cyclic",
                 warm_start=False, solver_options=None, max_time=None):
        self.l1_ratio = l1_ratio
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.tol = tol
        self.cv = cv
        self.copy_X = copy_X
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.max_time = max_time

    def _l1_ratios(self):
        ratios = np.atleast_1d(np.asarray(self.l1_ratio, dtype=np.float64)).ravel()
        if ratios.size == 0 or np.any(~(ratios >= 0)) or np.any(ratios > 1):
            raise ValueError(f"l1_ratio must be a number or a list of numbers in [0, 1]; got "
                             f"{self.l1_ratio!r}.")
        return [float(r) for r in ratios]


def logistic_path_fit(design, Cs, penalty, l1_ratio, tol, max_iter, record):
    """``[(coef, intercept, n_iter), ...]`` along the increasing ``Cs``
    (decreasing penalties), warm-started: by :func:`bcd.path` for the L1
    penalty alone (the intercept, when fitted, has L1 weight 0), else by one
    warm-started solve per C."""
    strengths = [logistic_strengths(penalty, C, l1_ratio) for C in Cs]
    l1s = np.array([s[0] for s in strengths])
    l2s = np.array([s[1] for s in strengths])
    if compiled_logistic_applies(design, record, l1s, l2s):
        return compiled_logistic_path(design, l1s, l2s, tol, max_iter, record)
    if np.all(l2s == 0) and np.all(l1s > 0) and np.all(np.diff(l1s) < 0):
        problem = design.problem(1.0, 0.0)   # the L1 weights are scaled by each 1/C
        result = record.path(problem, l1s, max_iter, design.kkt_tol(tol))
        return [(*design.model(x), solve_passes(problem, r)) for x, r in zip(result.coefs,
                                                                              result.results)]
    models, x0 = [], None
    for l1, l2 in strengths:
        before = record.n_passes
        coef, intercept, result = design.fit(record, l1, l2, tol, max_iter, x0)
        models.append((coef, intercept, record.n_passes - before))
        x0 = result.x
    return models


#: the logistic methods whose compiled path is the same kind of method
#: (Newton steps; the automatic configuration chooses them for these problems)
COMPILED_LOGISTIC_METHODS = ("auto", "lbfgs", "newton-cg", "newton-cholesky")


def compiled_logistic_applies(design, record, l1s, l2s):
    """Whether a fold's logistic path may run in compiled calls
    (:class:`bcd.core.enetpath.LogisticPath`): two classes, a Newton-type
    or automatic method, no ``solver_options``, ``verbose`` or
    ``max_time``, and a penalty at every C (without one, the minimizer
    need not exist)."""
    return (not design.multinomial and record.method in COMPILED_LOGISTIC_METHODS
            and not record.options and record.deadline is None
            and bool(np.all((l1s > 0) | (l2s > 0))))


def compiled_logistic_path(design, l1s, l2s, tol, max_iter, record, x0=None):
    """:func:`logistic_path_fit` in one compiled call per C: proximal Newton
    steps with inner coordinate descent, warm-started (from the problem's
    variable ``x0``, default 0), each solve stopped by the test of
    :func:`bcd.solve` (the KKT residual at most ``design.kkt_tol(tol)``)."""
    path = LogisticPath(design.A, (design.y_idx == 1).astype(np.float64),
                        sample_weight=design.sample_weight, penalized=design.penalized)
    if x0 is not None:
        path.set_coef(x0)
    kkt_tol = design.kkt_tol(tol)
    models = []
    for l1, l2 in zip(l1s, l2s):
        opt, steps, status = path.solve(l1, l2, kkt_tol, int(max_iter))
        record.n_passes += int(steps)
        record.n_iter += int(steps)
        if status != "converged":
            record.failures.append(CompiledPathFailure(
                opt, kkt_tol, steps, status=status, what="optimality measure"))
        coef, intercept = design.model(path.coef)
        models.append((coef, intercept, int(steps)))
    return models


def _logistic_fold(estimator, X, y, y_idx, classes, sw, train, test, Cs, penalty, l1_ratios,
                   scorer, fold):
    """One fold of :class:`LogisticRegressionCV`: for every l1_ratio the path
    over ``Cs`` on the training rows, scored on the held-out rows.  Returns
    ``(paths, scores, n_iter, failures)`` with shapes (n_Cs, n_l1_ratios,
    width, n_dof), (n_Cs, n_l1_ratios) and (n_Cs, n_l1_ratios)."""
    # a training fold without some class is fitted with every class, as in
    # scikit-learn: the penalty keeps the model of the absent class finite
    design = LogisticDesign(_rows(X, train), y_idx[train], classes.size,
                            None if sw is None else sw[train], estimator.fit_intercept,
                            liblinear_bias(estimator))
    X_test, y_test = _rows(X, test), y[test]
    n_dof = X.shape[1] + int(estimator.fit_intercept)
    paths = np.zeros((Cs.size, len(l1_ratios), design.width, n_dof))
    scores = np.empty((Cs.size, len(l1_ratios)))
    n_iter = np.zeros((Cs.size, len(l1_ratios)), dtype=np.int64)
    failures = []
    for k, l1_ratio in enumerate(l1_ratios):
        record = estimator._record(penalty)
        models = logistic_path_fit(design, Cs, penalty, l1_ratio, estimator.tol,
                                   estimator.max_iter, record)
        failures += record.failures
        for j, (coef, intercept, iters) in enumerate(models):
            paths[j, k, :, :X.shape[1]] = coef
            if estimator.fit_intercept:
                paths[j, k, :, -1] = intercept
            n_iter[j, k] = iters
            if scorer.is_accuracy:
                scores[j, k] = scorer.accuracy(classes, coef, intercept, X_test, y_test)
                continue
            model = _fold_model(classes, X.shape[1], coef, intercept, X.dtype)
            # the scorer adds the held-out sample weights (see _WeightedScorer)
            scores[j, k] = scorer(model, X_test, y_test)
    return paths, scores, n_iter, failures


def _fold_model(classes, n_features, coef, intercept, dtype):
    """A fitted :class:`LogisticRegression` with the given model, for the scorer."""
    model = LogisticRegression()
    model.classes_ = classes
    model.coef_ = coef.astype(dtype)
    model.intercept_ = intercept.astype(dtype)
    model.n_features_in_ = n_features
    model.n_iter_ = np.array([1])
    return model


def resolve_cv_penalty(penalty, l1_ratios):
    """scikit-learn's (>= 1.8) choice of the penalty of
    :class:`LogisticRegressionCV`: ``(name, l1_ratios or None)``."""
    if isinstance(l1_ratios, str) and l1_ratios == "warn":
        warn_user("The default value for l1_ratios will change from None to (0.0,) in "
                  "scikit-learn 1.10. To avoid this warning, explicitly set a value, "
                  "e.g. l1_ratios=(0,).", FutureWarning)
        l1_ratios = None
    elif l1_ratios is None:
        warn_user("'l1_ratios=None' was deprecated in scikit-learn 1.8 and will trigger an "
                  "error in 1.10. Use an array-like with values in [0, 1] instead.",
                  FutureWarning)
    else:
        l1_ratios = list(np.asarray(l1_ratios, dtype=object).ravel())
    if isinstance(penalty, str) and penalty == "deprecated":
        if l1_ratios is None or np.all(np.asarray(l1_ratios, dtype=float) == 0):
            name = "l2"
        elif np.all(np.asarray(l1_ratios, dtype=float) == 1):
            name = "l1"
        else:
            name = "elasticnet"
    else:
        warn_user("'penalty' was deprecated in scikit-learn 1.8 and will be removed in "
                  "1.10. To avoid this warning, leave 'penalty' set to its default value "
                  "and use 'l1_ratios' and 'Cs' instead.", FutureWarning)
        name = penalty
    if name == "elasticnet":
        if (l1_ratios is None or len(l1_ratios) == 0
                or any(not isinstance(r, numbers.Number) or r < 0 or r > 1
                       for r in l1_ratios)):
            raise ValueError(f"l1_ratios must be an array-like of numbers between 0 and 1; "
                             f"got (l1_ratios={l1_ratios!r})")
    elif l1_ratios is not None and not (isinstance(penalty, str) and penalty == "deprecated"):
        warn_user(f"l1_ratios parameter is only used when penalty is 'elasticnet'. Got "
                  f"(penalty={name})", UserWarning)
    return name, l1_ratios


class LogisticRegressionCV(SparseCoefMixin, LogisticClassifierMixin, BCDEstimator):
    r"""Logistic regression with ``C`` (and ``l1_ratio``) chosen by
    cross-validation.

    Each training fold is fitted along the grid ``Cs`` (from the smallest C,
    the strongest penalty, with warm starts; with two classes and the
    automatic or a Newton-type solver, proximal Newton steps with inner
    coordinate descent in one compiled call per C) for every ``l1_ratio``, the pair with the best mean score on the
    held-out folds is kept and, with ``refit``, the model is refitted with it
    on all the data, warm-started from the mean of the folds' models (from zero with
    ``solver="liblinear"``, which has no warm start in scikit-learn).  The
    folds run in parallel through joblib when ``n_jobs`` asks for it.  The
    objective, its scaling and the mapping of ``solver`` and ``dual`` to bcd
    methods are those of :class:`LogisticRegression`.

    Parameters
    ----------
    Cs : int or array-like, default=10
        The grid of C, or its size: ``Cs`` values geometrically spaced from
        1e-4 to 1e4.
    l1_ratios : array-like of float in [0, 1], default="warn"
        The grid of L1 shares (scikit-learn >= 1.8): all 0 is the L2
        penalty, all 1 the L1 penalty, otherwise the elastic net.  The
        default warns (FutureWarning) and means ``None``, the L2 penalty
        without the l1_ratio dimension in the fitted attributes.
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.
    cv : int, cross-validation generator or iterable, default=None
        Folds, as in scikit-learn (None: 5-fold ``StratifiedKFold``).  Every
        training set must contain every class.
    dual : bool, default=False
        Solve the L2-penalized problems through their duals.
    penalty : {"l1", "l2", "elasticnet"} or None, default="deprecated"
        Deprecated in scikit-learn 1.8 (FutureWarning when given): use
        ``l1_ratios``.
    scoring : str or callable, default="warn"
        Score of the held-out folds, as in scikit-learn; the default warns
        (FutureWarning) and means None, the accuracy.  The held-out samples'
        weights are passed to it.
    solver : str, default="auto"
        The method of every solve: "auto", "lbfgs", "liblinear", "newton-cg",
        "newton-cholesky", "sag" or "saga", mapped as in
        :class:`LogisticRegression`.
    tol : float, default=1e-4
        Tolerance of every solve (>= 0), as in :class:`LogisticRegression`.
    max_iter : int, default=1000
        Maximum number of passes per solve, as in :class:`LogisticRegression`.
    class_weight : dict or "balanced", default=None
        Weights of the classes, multiplied into the sample weights
        (``"balanced"``: computed on the whole ``y``).
    n_jobs : int, default=None
        Number of folds fitted in parallel by joblib (None: one, in this
        process).
    verbose : int, default=0
        Print the solver's progress when positive.
    refit : bool, default=True
        Refit on all the data at the best (C, l1_ratio); without, the model
        is the mean of the folds' models at each fold's best pair.
    intercept_scaling : float, default=1.0
        With ``solver="liblinear"``: the value of the penalized synthetic
        feature that carries the intercept, as in :class:`LogisticRegression`;
        no effect with the other solvers.
    random_state : int, RandomState instance or None, default=None
        Seed of the random coordinate orders.
    use_legacy_attributes : bool, default="warn"
        scikit-learn's layout of the fitted attributes: True (the default,
        with a FutureWarning) gives ``scores_`` and ``coefs_paths_`` as dicts
        per class and ``C_`` as an array; False gives arrays and floats
        (scikit-learn >= 1.10).
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve`.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit``: the folds share
        it (each solve gets what remains), no fold starts after it (the
        penalty is then chosen on the folds evaluated, with a
        ``ConvergenceWarning``), and the final fit gets what is left.
        Ctrl-C raises ``KeyboardInterrupt`` within a second, and the
        estimator is left as it was.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    Cs_ : ndarray of shape (n_Cs,)
        The grid, increasing.
    l1_ratios_ : ndarray of shape (n_l1_ratios,)
        The grid of l1_ratios (``[None]`` when not given).
    scores_ : dict or ndarray
        Legacy: a dict from each class (``classes_[1]`` alone for two
        classes) to the scores, of shape (n_folds, n_Cs) or (n_folds, n_Cs,
        n_l1_ratios) when ``l1_ratios`` is given.  Otherwise an array of
        shape (n_folds, n_l1_ratios, n_Cs).
    coefs_paths_ : dict or ndarray
        Legacy: a dict from each class to the folds' models, of shape
        (n_folds, n_Cs, n_dof) or (n_folds, n_Cs, n_l1_ratios, n_dof)
        (``n_dof``: n_features plus 1 with an intercept, last).  Otherwise
        an array of shape (n_folds, n_l1_ratios, n_Cs, n_classes, n_dof).
    C_ : ndarray of shape (n_classes,) or (1,), or float
        The chosen C (legacy: one per class, all equal; else a float).
    l1_ratio_ : ndarray of shape (n_classes,) or (1,), or float
        The chosen l1_ratio, likewise.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients of the final model (float64: the data are fitted in
        float64 whatever their dtype, as in scikit-learn).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts of the final model.
    n_iter_ : ndarray
        Iterations (passes, as in :class:`LogisticRegression`) of every solve: legacy shape (1, n_folds, n_Cs) or (1,
        n_folds, n_Cs, n_l1_ratios), else (n_folds, n_l1_ratios, n_Cs).
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
    >>> model = LogisticRegressionCV(Cs=5, cv=4, l1_ratios=(0.0,), scoring="accuracy",
    ...                              use_legacy_attributes=False).fit(X, y)
    >>> model.Cs_
    array([1.e-04, 1.e-02, 1.e+00, 1.e+02, 1.e+04])
    >>> model.scores_.shape, bool(model.score(X, y) > 0.8)
    ((4, 1, 5), True)
    """

    # with metadata routing, score's sample_weight goes to the scorer (where
    # it requests them), not to the estimator itself: as in scikit-learn
    __metadata_request__score = {"sample_weight": metadata_routing.UNUSED}

    _parameter_constraints = {
        "Cs": [Interval(numbers.Integral, 1, None, closed="left"), "array-like"],
        "l1_ratios": ["array-like", None, StrOptions({"warn"})],
        "fit_intercept": ["boolean"],
        "cv": ["cv_object"],
        "dual": ["boolean"],
        "penalty": [StrOptions(set(PENALTIES) | {"deprecated"}), None],
        "scoring": [str, callable, None, StrOptions({"warn"})],
        "solver": [StrOptions(set(SOLVERS))],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "n_jobs": [None, numbers.Integral],
        "verbose": ["verbose"],
        "refit": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "use_legacy_attributes": ["boolean", StrOptions({"warn"})],
        "solver_options": [dict, None],
    }

    def __init__(self, *, Cs=10, l1_ratios="warn", fit_intercept=True, cv=None, dual=False,
                 penalty="deprecated", scoring="warn", solver="auto", tol=1e-4, max_iter=1000,
                 class_weight=None, n_jobs=None, verbose=0, refit=True, intercept_scaling=1.0,
                 random_state=None, use_legacy_attributes="warn", solver_options=None,
                 max_time=None):
        self.Cs = Cs
        self.l1_ratios = l1_ratios
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.dual = dual
        self.penalty = penalty
        self.scoring = scoring
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.refit = refit
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state
        self.use_legacy_attributes = use_legacy_attributes
        self.solver_options = solver_options
        self.max_time = max_time

    def _grid(self):
        if isinstance(self.Cs, numbers.Integral):
            return np.logspace(-4, 4, int(self.Cs))
        Cs = np.asarray(self.Cs, dtype=np.float64).ravel()
        if Cs.size == 0 or np.any(np.isnan(Cs)) or np.any(Cs <= 0):
            raise ValueError("Cs must be a positive integer or a non-empty array of positive "
                             "numbers.")
        return np.sort(Cs)

    def _record(self, penalty):
        return SolveRecord(self, verbose_options(self.solver_options, self.verbose),
                           method=logistic_method(self.solver, self.dual, penalty),
                           random_state=self._seed, deadline=self._fit_deadline)

    def _scoring(self):
        if isinstance(self.scoring, str) and self.scoring == "warn":
            return None
        return self.scoring

    def _scorer(self):
        scoring = self._scoring()
        return get_scorer("accuracy" if scoring is None else scoring)

    def _get_scorer(self):
        """The scorer of ``scoring`` (accuracy by default), under
        scikit-learn's name for it."""
        return self._scorer()

    @_interrupt.records
    def fit(self, X, y, sample_weight=None, **params):
        """Choose C (and l1_ratio) by cross-validation and refit on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples' losses, also passed to the
            scoring of the held-out folds.
        **params : dict
            ``groups`` for a group-aware ``cv`` splitter; as in scikit-learn,
            only with metadata routing enabled
            (``sklearn.set_config(enable_metadata_routing=True)``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        if routing_enabled():
            # scikit-learn's metadata routing: groups to the splitter, the
            # sample weights to the scorer only where it requests them
            from sklearn.utils.metadata_routing import process_routing
            routed = process_routing(self, "fit", sample_weight=sample_weight, **params)
            groups = routed.splitter.split.get("groups")
            score_weight = routed.scorer.score.get("sample_weight")
        else:
            groups = check_fit_params(self, params)
            score_weight = sample_weight
        penalty, l1_ratios = resolve_cv_penalty(self.penalty, self.l1_ratios)
        check_solver(self.solver, penalty, self.dual)
        if isinstance(self.scoring, str) and self.scoring == "warn":
            warn_user("The default value of the parameter 'scoring' will change from None, "
                      "i.e. accuracy, to 'neg_log_loss' in scikit-learn 1.11. To silence "
                      "this warning, explicitly set the scoring parameter.", FutureWarning)
        legacy = self.use_legacy_attributes
        if isinstance(legacy, str):
            warn_user(f"The fitted attributes of {type(self).__name__} will be simplified "
                      f"in scikit-learn 1.10. Set use_legacy_attributes=False to enable the "
                      f"new behavior now, or True to keep the legacy one. The default value "
                      f"of use_legacy_attributes will change from True to False in "
                      f"scikit-learn 1.10.", FutureWarning)
            legacy = True
        if penalty is None:
            penalty, Cs = "l2", np.array([np.inf])
        else:
            Cs = self._grid()
        self._seed = check_random_state_seed(self.random_state)
        self._fit_deadline = fit_deadline(self.max_time)
        # float64 whatever the data, as scikit-learn's LogisticRegressionCV
        X, y, classes, y_idx, sw_given = validate_classification(self, X, y, sample_weight,
                                                                 CV_SPARSE_FORMATS,
                                                                 dtype=(np.float64,))
        sw = class_sample_weight(self.class_weight, classes, y_idx, sw_given)
        score_weight = None if score_weight is None else check_sample_weight(score_weight, X)
        ratios = [None] if l1_ratios is None else [float(r) for r in l1_ratios]
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y, groups))
        scorer = scorer_with_labels(self._scorer(), classes)
        # the held-out scores weigh the samples by sample_weight, as scikit-learn's
        # (with metadata routing: where the scorer requests them)
        jobs = (delayed(_logistic_fold)(self, X, y, y_idx, classes, sw, train, test, Cs,
                                        penalty, ratios,
                                        _WeightedScorer(scorer, score_weight, test),
                                        f)
                for f, (train, test) in enumerate(folds))
        out = run_folds(self, jobs)
        paths = np.array([o[0] for o in out])        # (folds, Cs, ratios, width, dof)
        scores = np.array([o[1] for o in out])       # (folds, Cs, ratios)
        n_iter = np.array([o[2] for o in out])       # (folds, Cs, ratios)
        record = self._record(penalty)
        for o in out:
            record.failures += o[3]
        n_features = X.shape[1]
        width = paths.shape[3]
        if self.refit:
            total = scores.sum(axis=0)
            j, k = np.unravel_index(np.argmax(total), total.shape)
            C, l1_ratio = float(Cs[j]), ratios[k]
            start = paths[:, j, k].mean(axis=0)      # (width, dof)
            design = LogisticDesign(X, y_idx, classes.size, sw, self.fit_intercept,
                                    liblinear_bias(self))
            x0 = design.start(start[:, :n_features],
                              start[:, -1] if self.fit_intercept else np.zeros(width))
            if self.solver == "liblinear":
                # liblinear has no warm start: its refit starts from zero, as
                # in scikit-learn, and equals LogisticRegression's fit
                x0 = None
            l1, l2 = logistic_strengths(penalty, C, l1_ratio)
            if self.solver != "liblinear" and compiled_logistic_applies(
                    design, record, np.array([l1]), np.array([l2])):
                # the refit as the folds' solves: the same method and test
                coef, intercept, _ = compiled_logistic_path(
                    design, np.array([l1]), np.array([l2]), self.tol, self.max_iter, record,
                    x0)[0]
            else:
                coef, intercept, _ = design.fit(record, l1, l2, self.tol, self.max_iter, x0)
            C_, l1_ratio_ = C, l1_ratio
        else:
            flat = scores.reshape(len(out), -1)
            best = np.unravel_index(np.argmax(flat, axis=1), scores.shape[1:])
            W = np.mean([paths[f, best[0][f], best[1][f]] for f in range(len(out))], axis=0)
            coef = W[:, :n_features]
            intercept = W[:, -1] if self.fit_intercept else np.zeros(width)
            C_ = float(np.mean(Cs[best[0]]))
            l1_ratio_ = (float(np.mean(np.asarray(ratios)[best[1]])) if penalty == "elasticnet"
                         else 0.0)
        record.warn()
        # NaN (0 iterations) for the folds max_time skipped
        paths, scores = pad_folds(paths, len(folds)), pad_folds(scores, len(folds))
        n_iter = pad_folds(n_iter, len(folds), fill=0)
        self.classes_ = classes
        self.Cs_ = Cs
        self.l1_ratios_ = np.asarray(ratios)
        self.coef_ = np.asarray(coef).astype(X.dtype)
        self.intercept_ = np.asarray(intercept).astype(X.dtype)
        self._set_path_attributes(paths, scores, n_iter, C_, l1_ratio_, l1_ratios, legacy,
                                  penalty)
        return self

    def _set_path_attributes(self, paths, scores, n_iter, C, l1_ratio, l1_ratios, legacy,
                             penalty):
        """``scores_``, ``coefs_paths_``, ``n_iter_``, ``C_`` and ``l1_ratio_``
        in scikit-learn's layouts."""
        classes = self.classes_
        binary = classes.size == 2
        keys = classes[1:] if binary else classes
        n_keys = len(keys)
        if legacy:
            squeeze = l1_ratios is None
            path_of = [paths[:, :, :, c, :] for c in range(paths.shape[3])]
            if squeeze:
                path_of = [p[:, :, 0, :] for p in path_of]
                sc, it = scores[:, :, 0], n_iter[:, :, 0]
            else:
                sc, it = scores, n_iter
            self.coefs_paths_ = dict(zip(keys, path_of))
            self.scores_ = {k: sc.copy() for k in keys}
            self.n_iter_ = it[None]
            self.C_ = np.full(n_keys, C)
            self.l1_ratio_ = np.full(n_keys, np.nan if l1_ratio is None else l1_ratio,
                                     dtype=object if l1_ratio is None else np.float64)
            if l1_ratio is None:
                self.l1_ratio_ = np.array([None] * n_keys)
        else:
            # (folds, Cs, ratios, width, dof) -> (folds, ratios, Cs, width, dof)
            self.coefs_paths_ = np.swapaxes(paths, 1, 2)
            self.scores_ = np.swapaxes(scores, 1, 2)
            self.n_iter_ = np.swapaxes(n_iter, 1, 2)
            self.C_ = float(C)
            if l1_ratio is None:
                l1_ratio = 1.0 if penalty == "l1" else 0.0
            self.l1_ratio_ = float(l1_ratio)

    def get_metadata_routing(self):
        """The metadata routing of the estimator, as scikit-learn's: ``fit``
        routes ``groups`` (and other metadata) to the ``cv`` splitter and to
        the scorer of the held-out folds, ``score`` to the scorer.

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRouter
        """
        from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping
        return (MetadataRouter(owner=self)
                .add_self_request(self)
                .add(splitter=self.cv,
                     method_mapping=MethodMapping().add(caller="fit", callee="split"))
                .add(scorer=self._get_scorer(),
                     method_mapping=MethodMapping().add(caller="score", callee="score")
                     .add(caller="fit", callee="score")))

    def score(self, X, y, sample_weight=None, **score_params):
        """The ``scoring`` of the model on ``(X, y)`` (accuracy by default).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights (with metadata routing enabled: passed to the
            scorer only when it requests them, else a TypeError).
        **score_params : dict
            Further metadata of the scorer; only with metadata routing
            enabled (``sklearn.set_config(enable_metadata_routing=True)``).

        Returns
        -------
        float
            The score.
        """
        if routing_enabled():
            from sklearn.utils.metadata_routing import process_routing
            if sample_weight is not None:
                score_params["sample_weight"] = sample_weight
            kwargs = process_routing(self, "score", **score_params).scorer.score
        else:
            check_fit_params(self, score_params, method="score")
            kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        return self._scorer()(self, X, y, **kwargs)


def scorer_with_labels(scorer, classes):
    """``scorer`` told every class: a held-out fold may lack some, and
    scores such as the Brier score or the log-loss need the labels then
    (``labels=classes``, and ``pos_label`` the second class of two), as
    scikit-learn's LogisticRegressionCV does for score functions that take
    them; other scorers unchanged."""
    import inspect
    from sklearn.metrics import make_scorer
    func = getattr(scorer, "_score_func", None)
    if func is None:
        return scorer
    params = inspect.signature(func).parameters
    if "labels" not in params:
        return scorer
    kwargs = dict(getattr(scorer, "_kwargs", {}))
    kwargs["labels"] = classes
    if len(classes) <= 2 and "pos_label" in params:
        kwargs["pos_label"] = classes[-1]
    return make_scorer(func, greater_is_better=scorer._sign == 1,
                       response_method=scorer._response_method, **kwargs)


class _WeightedScorer:
    """A scorer called with the held-out samples' weights, when there are any."""

    def __init__(self, scorer, sample_weight, test):
        self.scorer = scorer
        self.weights = None if sample_weight is None else sample_weight[test]
        # scikit-learn's accuracy scorer as it is, computed here without the
        # checks and wrappers of a scorer call (see accuracy)
        self.is_accuracy = (getattr(scorer, "_score_func", None) is accuracy_score
                            and not getattr(scorer, "_kwargs", None)
                            and getattr(scorer, "_sign", None) == 1
                            and getattr(scorer, "_response_method", None) == "predict")

    def accuracy(self, classes, coef, intercept, X, y):
        """The accuracy of the linear model on ``(X, y)``, as the scorer
        computes it through ``LogisticRegression.predict``: the class of the
        positive decision (two classes) or of the largest one, the decisions
        computed in the dtype of ``X``."""
        coef = np.asarray(coef).astype(X.dtype)
        scores = np.asarray(safe_sparse_dot(X, coef.T, dense_output=True)) \
            + np.asarray(intercept).astype(X.dtype)
        if scores.shape[1] == 1:
            pred = classes[(scores[:, 0] > 0).astype(np.intp)]
        else:
            pred = classes[np.argmax(scores, axis=1)]
        return float(np.average(pred == y, weights=self.weights))

    def __call__(self, model, X, y, **kwargs):
        if self.weights is not None:
            kwargs["sample_weight"] = self.weights
        return self.scorer(model, X, y, **kwargs)
