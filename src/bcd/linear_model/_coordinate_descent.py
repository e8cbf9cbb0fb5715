r"""Penalized least squares: :class:`ElasticNet`, :class:`Lasso` and
:class:`NonNegativeLinearRegression`.

All three minimize, with scikit-learn's scaling,

.. math::
    \frac{1}{2 n} \sum_i s_i (y_i - x_i^T w - w_0)^2
    + \alpha \rho \|w\|_1 + \frac{\alpha (1 - \rho)}{2} \|w\|_2^2

(sample weights ``s`` rescaled to sum to ``n``), which is the objective of
:class:`bcd.LeastSquares` divided by ``n``: the problem solved has the L1
weight ``n alpha rho`` and the ridge weight ``n alpha (1 - rho)``.
"""
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from ..penalties import L1, Box
from ..problems import LeastSquares
from ._dask import DaskClientMixin, fit_distributed, is_dask_array, map_rows
from ._base import (SPARSE_FORMATS, BCDEstimator, LinearPredictorMixin, SolveRecord,
                    SparseCoefMixin, check_sample_weight, dense_coef, design_matrix,
                    validate_data)

#: at most this many warm-started re-solves, each with a KKT tolerance ten
#: times smaller, when a solve meets its KKT tolerance before the duality gap
#: reaches scikit-learn's test
GAP_REFINEMENTS = 4


def least_squares_strengths(alpha, l1_ratio, n_samples):
    """The L1 and ridge weights of the summed objective for scikit-learn's
    ``alpha`` and ``l1_ratio`` (per-sample objective)."""
    return n_samples * alpha * l1_ratio, n_samples * alpha * (1.0 - l1_ratio)


def _largest(X):
    """max |X_ij| of a dense or sparse matrix."""
    values = X.data if sp.issparse(X) else X
    return float(np.max(np.abs(values), initial=0.0))


class LeastSquaresDesign:
    """The data of a penalized least-squares fit, prepared once for any
    number of penalty strengths.

    With an intercept, dense ``X`` is centered (a copy, with the weighted
    means) so that the intercept drops out of the problem and the duality gap
    and its screening apply; sparse ``X`` gets a column of ones for the
    intercept instead, unpenalized (two columns, +1 and -1, whose non-negative
    coordinates make a free intercept when the coefficients are constrained
    non-negative by an L1 penalty).  ``X`` is never densified, and never
    modified unless ``overwrite`` (the estimators' ``copy_X=False``) allows
    it: a dense Fortran-ordered float64 ``X`` is then centered in place
    instead of in a copy (as scikit-learn does), which saves a copy of it.

    ``sample_weight`` must already sum to ``n_samples`` (or be None).
    """

    def __init__(self, X, y, sample_weight, fit_intercept, positive, overwrite=False):
        self.n_samples, self.n_features = X.shape
        self.sample_weight = sample_weight
        self.positive = bool(positive)
        self.fit_intercept = bool(fit_intercept)
        sw = np.ones(self.n_samples) if sample_weight is None else sample_weight
        y = np.asarray(y, dtype=np.float64)
        self.y_mean = float(np.average(y, weights=sw)) if fit_intercept else 0.0
        self.b = y - self.y_mean
        self.X = X
        # the column means taken out of X itself (copy_X=False), which the
        # residual adds back; None: X is the caller's data as given
        self._x_shift = None
        self.centered = fit_intercept and not sp.issparse(X)
        if self.centered:
            with np.errstate(over="ignore", invalid="ignore"):
                self.x_mean = np.asarray(np.average(X, axis=0, weights=sw), dtype=np.float64)
            in_place = (overwrite and isinstance(X, np.ndarray) and X.dtype == np.float64
                        and X.flags.f_contiguous and X.flags.writeable)
            A = X if in_place else np.array(X, dtype=np.float64, order="F")
            if in_place:
                self._x_shift = self.x_mean
            with np.errstate(over="ignore", invalid="ignore"):
                A -= self.x_mean
            if not (np.all(np.isfinite(self.x_mean)) and np.all(np.isfinite(A))):
                raise ValueError(f"X is too large: centering it to fit the intercept "
                                 f"overflows float64 (largest |X| = {_largest(X):.3e}); "
                                 f"rescale X, for example to unit standard deviation.")
            self.A, self.target = A, self.b
        elif fit_intercept:
            self.x_mean = None
            # built for the number of intercept columns (see matrix)
            self.A, self.target = None, y
        else:
            self.x_mean = None
            self.A, self.target = design_matrix(X, fit_intercept=False), y
        self._matrices = {}
        # ||X_c^T S y_c||_inf, the KKT residual of w = 0 with the best intercept
        # (X^T S y_c = X_c^T S y_c since y_c has weighted mean 0)
        with np.errstate(over="ignore", invalid="ignore"):
            corr = np.asarray(X.T @ (sw * self.b), dtype=np.float64).ravel()
            self.y_energy = float(np.sum(sw * self.b ** 2))
        self.correlations = corr
        self.scale = float(np.max(np.abs(corr), initial=0.0))
        if not (np.isfinite(self.y_energy) and np.isfinite(self.scale)):
            what = "the sum of squares of y" if not np.isfinite(self.y_energy) else "X^T y"
            raise ValueError(f"{what} overflows float64 (largest |y| = "
                             f"{np.max(np.abs(y), initial=0.0):.3e}, largest |X| = "
                             f"{_largest(X):.3e}): rescale y and X, for example to unit "
                             f"standard deviation.")
        self._sw = sw

    def _extra_columns(self, l1):
        """Intercept columns of the sparse design: 2 (+1, -1) when the
        coefficients are constrained non-negative by an L1 penalty, else 1."""
        if not self.fit_intercept or self.centered:
            return 0
        return 2 if (self.positive and l1 > 0) else 1

    def matrix(self, l1):
        k = self._extra_columns(l1)
        if self.centered or not self.fit_intercept:
            return self.A
        if k not in self._matrices:
            self._matrices[k] = design_matrix(self.X, k)
        return self._matrices[k]

    def problem(self, l1, l2):
        """The :class:`bcd.LeastSquares` problem for the summed weights ``l1``, ``l2``."""
        d = self.n_features
        k = self._extra_columns(l1)
        penalized = np.r_[np.ones(d), np.zeros(k)]
        if l1 > 0:
            lam = l1 if k == 0 else l1 * penalized
            penalty = L1(lam, positive=self.positive)
        elif self.positive:
            penalty = Box(np.where(penalized > 0, 0.0, -np.inf), np.inf) if k else Box(0.0)
        else:
            penalty = None
        ridge = float(l2) if (k == 0 or l2 == 0) else l2 * penalized
        kwargs = {}
        if self.sample_weight is not None:
            kwargs["sample_weight"] = self.sample_weight
        return LeastSquares(self.matrix(l1), self.target, l2=ridge, penalty=penalty, **kwargs)

    def start(self, coef, intercept, l1):
        """The problem's variable for a model (warm start), made feasible."""
        coef = np.asarray(coef, dtype=np.float64).ravel()
        if self.positive:
            coef = np.maximum(coef, 0.0)
        k = self._extra_columns(l1)
        if k == 0:
            return coef
        b = float(intercept)
        return np.r_[coef, b] if k == 1 else np.r_[coef, max(b, 0.0), max(-b, 0.0)]

    def model(self, x, l1):
        """``(coef, intercept)`` of the problem's solution ``x``."""
        x = np.asarray(x, dtype=np.float64)
        d = self.n_features
        coef = x[:d].copy()
        k = self._extra_columns(l1)
        if self.centered:
            intercept = self.y_mean - float(self.x_mean @ coef)
        elif k == 0:
            intercept = 0.0
        elif k == 1:
            intercept = float(x[d])
        else:
            intercept = float(x[d] - x[d + 1])
        return coef, intercept

    def residual(self, coef, intercept):
        """y - X coef - intercept."""
        y = self.b + self.y_mean
        fitted = np.asarray(self.X @ coef).ravel()
        if self._x_shift is not None:
            fitted = fitted + float(self._x_shift @ coef)
        return y - fitted - intercept

    def objective(self, coef, intercept, l1, l2):
        """The summed objective of the model."""
        r = self.residual(coef, intercept)
        return (0.5 * float(np.sum(self._sw * r * r)) + l1 * float(np.abs(coef).sum())
                + 0.5 * l2 * float(coef @ coef))

    def duality_gap(self, coef, intercept, l1, l2):
        r"""A duality gap of the summed objective at the model, or None when
        ``l1 = 0``.

        The elastic net is the Lasso of the rows :math:`\sqrt{s_i} x_i`
        stacked over :math:`\sqrt{l_2} I` with targets :math:`\sqrt{s_i}
        y_i` and zeros; its dual point is the residual of the intercept-free
        problem (with an intercept: the weighted-centred residual, which is
        orthogonal to the intercept column), scaled into the feasible set
        :math:`\|X^T S \theta - l_2 w\|_\infty \le l_1` (the positive part
        only for non-negative coefficients).  The primal value is taken at
        the model itself, so the gap bounds its suboptimality.
        """
        if not l1 > 0:
            return None
        sw = self._sw
        r = self.residual(coef, intercept)
        theta = r - float(np.average(r, weights=sw)) if self.fit_intercept else r
        corr = np.asarray(self.X.T @ (sw * theta), dtype=np.float64).ravel() - l2 * coef
        drive = float(np.max(corr if self.positive else np.abs(corr), initial=0.0))
        kappa = max(1.0, drive / l1)
        primal = self.objective(coef, intercept, l1, l2)
        # D = 1/2 ||b~||^2 - 1/2 ||b~ - nu||^2 with nu = (S^1/2 theta, -sqrt(l2) w) / kappa
        gap_y = self.b - theta / kappa
        dual = 0.5 * self.y_energy - 0.5 * float(np.sum(sw * gap_y * gap_y)) \
            - 0.5 * l2 * float(coef @ coef) / kappa ** 2
        return max(primal - dual, 0.0)      # >= 0 up to rounding

    def has_solver_gap(self, l1, l2):
        """Whether :func:`bcd.solve` computes a duality gap for the problem
        (and can stop on ``gap_tol``)."""
        return l1 > 0 and l2 == 0 and self._extra_columns(l1) == 0

    def fit(self, record, l1, l2, tol, max_iter, x0=None):
        """Solve at the summed weights ``l1``, ``l2`` and return
        ``(coef, intercept, gap, problem)``.

        The KKT tolerance is ``tol * ||X_c^T S y_c||_inf`` and, where the
        duality gap is defined, the fit goes on (warm-started, with a KKT
        tolerance ten times smaller each time) until the gap is at most
        ``tol * sum_i s_i (y_i - ybar)^2``: scikit-learn's test."""
        if self.scale == 0.0:
            # X_c^T S y_c = 0: w = 0 with the mean as intercept is optimal
            coef = np.zeros(self.n_features)
            return coef, self.y_mean, (0.0 if l1 > 0 else None), None
        drive = float(np.max(self.correlations)) if self.positive else self.scale
        if l1 > 0 and drive <= l1:
            # alpha >= alpha_max: w = 0 with the mean as intercept meets the
            # optimality conditions exactly (|X_c^T S y_c| <= l1; the ridge
            # term vanishes at 0), so no solve is needed
            coef = np.zeros(self.n_features)
            return coef, self.y_mean, self.duality_gap(coef, self.y_mean, l1, l2), None
        problem = self.problem(l1, l2)
        kkt_tol = tol * self.scale
        gap_target = tol * self.y_energy
        extra = {}
        if self.has_solver_gap(l1, l2) and record.working_sets:
            extra["gap_tol"] = gap_target
        result = record.solve(problem, x0, max_iter, kkt_tol, **extra)
        coef, intercept = self.model(result.x, l1)
        gap = self.duality_gap(coef, intercept, l1, l2)
        rounds = 0
        while (gap is not None and gap > gap_target and result.converged
               and rounds < GAP_REFINEMENTS):
            kkt_tol /= 10.0
            rounds += 1
            result = record.solve(problem, result.x, max_iter, kkt_tol)
            coef, intercept = self.model(result.x, l1)
            gap = self.duality_gap(coef, intercept, l1, l2)
        return coef, intercept, gap, problem


def check_gram(gram, X, sample_weight, fit_intercept):
    """Check a Gram matrix given as ``precompute`` against ``X``, as
    scikit-learn does, though bcd does not use it (its automatic
    configuration forms the Gram blocks it needs from ``X``).

    With an intercept and columns whose (weighted) means are not 0, the
    given matrix is not the Gram matrix of the centered ``X`` that the fit
    works with: a UserWarning says so and the matrix is ignored.  Otherwise
    its shape must be (n_features, n_features) and one entry, that of the
    middle column and the next, must match ``X^T S X`` (``S``: the sample
    weights, rescaled to sum to ``n_samples``) to a relative 1e-7 (1e-4 in
    float32) and absolute 1e-5: a ValueError says that it is wrong."""
    n, d = X.shape
    sw = np.ones(n) if sample_weight is None else sample_weight
    if fit_intercept:
        mean = np.asarray(X.T @ sw, dtype=np.float64).ravel() / np.sum(sw)
        if not np.allclose(mean, 0.0):
            warnings.warn("Gram matrix was provided but X was centered to fit intercept: "
                          "recomputing Gram matrix (bcd forms the Gram blocks of the "
                          "centered X that it needs; the matrix given is not used).",
                          UserWarning, stacklevel=3)
            return
    gram = np.asarray(gram)
    if gram.shape != (d, d):
        raise ValueError(f"precompute, a Gram matrix, must have the shape (n_features, "
                         f"n_features) = {(d, d)}; got {gram.shape}.")
    f1 = d // 2
    f2 = min(f1 + 1, d - 1)
    cols = X[:, [f1, f2]]
    cols = np.asarray(cols.toarray() if sp.issparse(cols) else cols, dtype=np.float64)
    expected = float(np.sum(sw * cols[:, 0] * cols[:, 1]))
    actual = float(gram[f1, f2])
    rtol = 1e-4 if np.float32 in (gram.dtype, X.dtype) else 1e-7
    if not np.isclose(expected, actual, rtol=rtol, atol=1e-5):
        raise ValueError(f"Gram matrix passed in via 'precompute' parameter did not pass "
                         f"validation when a single element was checked - please check that "
                         f"it was computed properly. For element ({f1},{f2}) we computed "
                         f"{expected} but the user-supplied value was {actual}.")


class _PenalizedLeastSquares(SparseCoefMixin, RegressorMixin, LinearPredictorMixin,
                             BCDEstimator):
    """Common fit of the least-squares estimators."""

    _parameter_constraints = {
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "precompute": ["boolean", "array-like"],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "copy_X": ["boolean"],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "selection": [StrOptions({"cyclic", "random"})],
        "solver_options": [dict, None],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def _strengths(self):
        """``(alpha, l1_ratio, positive)``."""
        raise NotImplementedError

    def fit(self, X, y, sample_weight=None, check_input=True):
        """Fit the model by block coordinate descent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets; each column of a 2-D ``y`` is fitted on its own.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, rescaled internally to sum to
            ``n_samples`` as scikit-learn does.
        check_input : bool, default=True
            False promises, as in scikit-learn, that a dense ``X`` is
            already a Fortran-ordered (column-major) float64 or float32
            array, the layout the solver works on, so that nothing needs
            converting: a ValueError is raised otherwise, as scikit-learn's
            solver raises one, except with ``sample_weight``, where
            scikit-learn works on a rescaled copy of ``X`` and accepts any
            layout.  The other checks run whatever its value (they cost
            little next to the solve).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        if is_dask_array(X):
            alpha, l1_ratio, positive = self._strengths()
            if positive:
                raise ValueError(f"{type(self).__name__} with positive=True does not fit dask "
                                 f"arrays.")
            l1, l2 = least_squares_strengths(alpha, l1_ratio, X.shape[0])
            coef, intercept, result = fit_distributed(self, X, y, sample_weight, "squared",
                                                      l1, l2, self.tol, self.max_iter)
            self.coef_ = coef
            self.intercept_ = np.float64(intercept)
            self.dual_gap_ = result.duality_gap / X.shape[0]
            self.n_iter_ = result.n_rounds
            return self
        if not check_input and sample_weight is None and isinstance(X, np.ndarray) and not (
                X.dtype in (np.float64, np.float32) and X.flags.f_contiguous):
            raise ValueError(f"check_input=False: X must be a Fortran-ordered (column-major) "
                             f"float64 or float32 array, which is used without conversion; "
                             f"got a {'C-ordered ' if X.flags.c_contiguous else ''}"
                             f"{X.dtype} array. Pass check_input=True to have it converted.")
        X, y = validate_data(self, X, y, accept_sparse=SPARSE_FORMATS,
                             dtype=[np.float64, np.float32], y_numeric=True,
                             multi_output=True)
        sw = check_sample_weight(sample_weight, X)
        n = X.shape[0]
        if sw is not None:
            sw = sw * (n / np.sum(sw))
        gram = getattr(self, "precompute", False)
        if not isinstance(gram, (bool, str)) and gram is not None:
            check_gram(gram, X, sw, self.fit_intercept)
        alpha, l1_ratio, positive = self._strengths()
        if alpha == 0 and type(self).__name__ != "NonNegativeLinearRegression":
            warnings.warn("With alpha=0, this algorithm does not converge well. You are "
                          "advised to use the LinearRegression estimator", UserWarning,
                          stacklevel=2)
        l1, l2 = least_squares_strengths(alpha, l1_ratio, n)
        y = np.asarray(y)
        single = y.ndim == 1
        Y = y.reshape(n, -1)
        n_targets = Y.shape[1]
        previous = getattr(self, "coef_", None) if self.warm_start else None
        if previous is not None:
            previous = dense_coef(previous).reshape(-1, X.shape[1]) \
                if np.size(dense_coef(previous)) == n_targets * X.shape[1] else None
            intercepts = np.broadcast_to(
                np.asarray(getattr(self, "intercept_", 0.0), dtype=np.float64).ravel()
                if self.fit_intercept else 0.0, (n_targets,)) \
                if previous is not None and np.size(getattr(self, "intercept_", 0.0)) in (
                    1, n_targets) else None
            if intercepts is None:
                previous = None
        record = SolveRecord(self, self.solver_options,
                             method=getattr(self, "selection", "cyclic"),
                             random_state=getattr(self, "random_state", None))
        coefs = np.empty((n_targets, X.shape[1]))
        intercepts_out = np.empty(n_targets)
        gaps, n_iters = [], []
        for t in range(n_targets):
            # copy_X=False lets a single target's fit center X in place
            design = LeastSquaresDesign(X, Y[:, t], sw, self.fit_intercept, positive,
                                        overwrite=not getattr(self, "copy_X", True)
                                        and n_targets == 1)
            x0 = None
            if previous is not None:
                x0 = design.start(previous[t], intercepts[t], l1)
            before = record.n_passes
            coef, intercept, gap, _ = design.fit(record, l1, l2, self.tol, self.max_iter, x0)
            coefs[t], intercepts_out[t] = coef, intercept
            gaps.append(None if gap is None else gap / n)
            n_iters.append(record.n_passes - before)
        record.warn()
        dtype = X.dtype
        if not self.fit_intercept:
            intercepts_out[:] = 0.0
        if single:
            self.coef_ = coefs[0].astype(dtype)
            self.intercept_ = dtype.type(intercepts_out[0])
            self.dual_gap_ = gaps[0]
            self.n_iter_ = n_iters[0]
        else:
            self.coef_ = coefs.astype(dtype)
            self.intercept_ = intercepts_out.astype(dtype)
            self.dual_gap_ = np.array([np.nan if g is None else g for g in gaps])
            self.n_iter_ = n_iters
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class ElasticNet(DaskClientMixin, _PenalizedLeastSquares):
    r"""Linear regression with combined L1 and L2 penalties, fitted by block
    coordinate descent.

    Minimizes, as scikit-learn's ``ElasticNet`` does,

    .. math::
        \frac{1}{2 n} \sum_i s_i (y_i - x_i^T w - w_0)^2
        + \alpha \rho \|w\|_1 + \frac{\alpha (1 - \rho)}{2} \|w\|_2^2

    with ``rho = l1_ratio``, the intercept :math:`w_0` unpenalized and the
    sample weights ``s`` rescaled to sum to ``n``.  The problem is a
    :class:`bcd.LeastSquares` with the L1 weight ``n alpha rho`` and the ridge
    weight ``n alpha (1 - rho)``, solved by :func:`bcd.solve` with its
    automatic configuration.

    Parameters
    ----------
    alpha : float, default=1.0
        Overall penalty strength (>= 0).
    l1_ratio : float, default=0.5
        Share of the L1 penalty, in [0, 1].
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.  Dense data are centered (a copy);
        sparse data get an unpenalized column of ones and are never
        densified.
    positive : bool, default=False
        Constrain the coefficients (not the intercept) to be non-negative.
    max_iter : int, default=1000
        Maximum number of passes over the coordinates: :func:`bcd.solve` runs
        at most ``max_iter * n_coordinates`` block updates (0: the starting
        point, with a ConvergenceWarning).
    tol : float, default=1e-4
        Tolerance (>= 0; 0 runs to ``max_iter`` or the rounding floor).  The solver stops when the KKT residual of the summed
        objective is at most ``tol * ||X_c^T S y_c||_inf`` (``X_c``, ``y_c``:
        centered when fitting an intercept; ``S``: the sample weights), the
        residual of ``w = 0`` scaled by ``tol``; where ``l1_ratio > 0`` it
        continues until the duality gap is at most ``tol * sum_i s_i (y_i -
        ybar)^2``, scikit-learn's test (``dual_gap_`` is the gap divided
        by ``n``).
    warm_start : bool, default=False
        Start from the current ``coef_`` and ``intercept_`` (fitted or set
        by hand) when their shapes fit.
    precompute : bool or array-like, default=False
        Accepted for compatibility; bcd decides itself when to form Gram
        blocks (its automatic configuration), so a Gram matrix given here is
        not used.  It is checked as scikit-learn checks it: a ValueError
        when its shape or one sampled entry disagrees with ``X``, a
        UserWarning (and nothing checked) when ``fit_intercept`` centers
        ``X``, whose Gram matrix then differs from the one given.
    copy_X : bool, default=True
        True: ``X`` is never modified (dense data are centered in a copy).
        False, as in scikit-learn, allows ``X`` to be overwritten: with
        ``fit_intercept`` and one target, a dense Fortran-ordered float64
        ``X`` (one used without conversion) is centered in place, which
        saves a copy of it; other data are still copied.
    random_state : int, RandomState instance or None, default=None
        Seed of the random order with ``selection="random"`` (None: a fixed
        seed, so that fits are reproducible).
    selection : {"cyclic", "random"}, default="cyclic"
        ``"cyclic"``: bcd's automatic configuration (coordinate descent in
        order or greedy, on working sets, with gap safe screening).
        ``"random"``: coordinate descent on all the coordinates in random
        order (``rule="random"``), as scikit-learn's.
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve` (for example ``rule``
        or ``verbose``); ``tol`` and ``max_iter`` given here replace the values
        derived from the estimator's.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs), or None for no limit.  When it runs out the fit stops
        and keeps the best state reached, with a ``ConvergenceWarning``
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
        Coefficients (a CSR matrix after :meth:`sparsify`).
    intercept_ : float or ndarray of shape (n_targets,)
        Intercept (0 without ``fit_intercept``).
    dual_gap_ : float, None or ndarray of shape (n_targets,)
        Duality gap of the per-sample objective at the solution (None when
        ``l1_ratio = 0``).
    n_iter_ : int or list of int
        Passes over the coordinates made by the solver (its block updates
        times their size over the number of coordinates, rounded up; 0 when
        the start already meets the tolerance; one per target for a 2-D
        ``y``).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    Lasso : The L1 penalty alone.
    NonNegativeLinearRegression : Least squares with non-negative coefficients.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import ElasticNet
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 5))
    >>> y = X @ np.array([1.0, -2.0, 0.0, 0.0, 3.0]) + 0.5
    >>> model = ElasticNet(alpha=0.1, l1_ratio=0.7).fit(X, y)
    >>> model.coef_.round(2)
    array([ 0.83, -1.85,  0.  ,  0.  ,  2.89])
    >>> round(float(model.intercept_), 2)
    0.51
    """

    _parameter_constraints = {
        **_PenalizedLeastSquares._parameter_constraints,
        "l1_ratio": [Interval(numbers.Real, 0, 1, closed="both")],
        "positive": ["boolean"],
        "client": "no_validation",
    }

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, fit_intercept=True, precompute=False,
                 max_iter=1000, copy_X=True, tol=1e-4, warm_start=False, positive=False,
                 random_state=None, selection="cyclic", solver_options=None, max_time=None,
                 client=None):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.copy_X = copy_X
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.solver_options = solver_options
        self.max_time = max_time
        self.client = client

    def _strengths(self):
        return float(self.alpha), float(self.l1_ratio), bool(self.positive)


class Lasso(DaskClientMixin, _PenalizedLeastSquares):
    r"""Linear regression with an L1 penalty, fitted by block coordinate descent.

    Minimizes, as scikit-learn's ``Lasso`` does,

    .. math::
        \frac{1}{2 n} \sum_i s_i (y_i - x_i^T w - w_0)^2 + \alpha \|w\|_1

    with the intercept :math:`w_0` unpenalized and the sample weights ``s``
    rescaled to sum to ``n``: a :class:`bcd.LeastSquares` problem with the
    penalty ``bcd.L1(n * alpha)``, solved by :func:`bcd.solve` with its
    automatic configuration (coordinate descent on working sets with gap safe
    screening and extrapolation).

    Parameters
    ----------
    alpha : float, default=1.0
        Penalty strength (>= 0).
    fit_intercept : bool, default=True
        Fit an unpenalized intercept.  Dense data are centered (a copy);
        sparse data get an unpenalized column of ones and are never
        densified.
    positive : bool, default=False
        Constrain the coefficients (not the intercept) to be non-negative.
    max_iter : int, default=1000
        Maximum number of passes over the coordinates: :func:`bcd.solve` runs
        at most ``max_iter * n_coordinates`` block updates (0: the starting
        point, with a ConvergenceWarning).
    tol : float, default=1e-4
        Tolerance (>= 0), with scikit-learn's test: the fit ends when the duality
        gap of the summed objective is at most ``tol * sum_i s_i (y_i -
        ybar)^2`` (``ybar`` = 0 without an intercept).  The solver itself
        stops at that gap or when the KKT residual is at most ``tol *
        ||X_c^T S y_c||_inf`` (the residual of ``w = 0``; ``X_c``, ``y_c``
        centered with an intercept, ``S`` the sample weights); in the latter
        case the gap is checked and the solve resumed, with a KKT tolerance
        ten times smaller each time (at most four times), until it passes.
    warm_start : bool, default=False
        Start from the current ``coef_`` and ``intercept_`` (fitted or set
        by hand) when their shapes fit.
    precompute : bool or array-like, default=False
        Accepted for compatibility; bcd decides itself when to form Gram
        blocks (its automatic configuration), so a Gram matrix given here is
        not used.  It is checked as scikit-learn checks it: a ValueError
        when its shape or one sampled entry disagrees with ``X``, a
        UserWarning (and nothing checked) when ``fit_intercept`` centers
        ``X``, whose Gram matrix then differs from the one given.
    copy_X : bool, default=True
        True: ``X`` is never modified (dense data are centered in a copy).
        False, as in scikit-learn, allows ``X`` to be overwritten: with
        ``fit_intercept`` and one target, a dense Fortran-ordered float64
        ``X`` (one used without conversion) is centered in place, which
        saves a copy of it; other data are still copied.
    random_state : int, RandomState instance or None, default=None
        Seed of the random order with ``selection="random"`` (None: a fixed
        seed, so that fits are reproducible).
    selection : {"cyclic", "random"}, default="cyclic"
        ``"cyclic"``: bcd's automatic configuration (coordinate descent in
        order or greedy, on working sets, with gap safe screening).
        ``"random"``: coordinate descent on all the coordinates in random
        order (``rule="random"``), as scikit-learn's.
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve`; ``tol`` and
        ``max_iter`` given here replace the values derived from the
        estimator's.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs), or None for no limit.  When it runs out the fit stops
        and keeps the best state reached, with a ``ConvergenceWarning``
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
        Coefficients (a CSR matrix after :meth:`sparsify`).
    intercept_ : float or ndarray of shape (n_targets,)
        Intercept (0 without ``fit_intercept``).
    dual_gap_ : float, None or ndarray of shape (n_targets,)
        Duality gap of the per-sample objective at the solution (None when
        ``alpha = 0``).
    n_iter_ : int or list of int
        Passes over the coordinates made by the solver (its block updates
        times their size over the number of coordinates, rounded up; 0 when
        the start already meets the tolerance; one per target for a 2-D
        ``y``).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    LassoCV : The Lasso with ``alpha`` chosen by cross-validation.
    ElasticNet : L1 and L2 penalties.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import Lasso
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 5))
    >>> y = X @ np.array([1.0, -2.0, 0.0, 0.0, 3.0]) + 0.5
    >>> model = Lasso(alpha=0.1).fit(X, y)
    >>> model.coef_.round(2)
    array([ 0.82, -1.88,  0.  ,  0.  ,  2.93])
    >>> model.predict(X[:2]).round(2)
    array([-0.72, -5.36])
    """

    _parameter_constraints = {
        **_PenalizedLeastSquares._parameter_constraints,
        "positive": ["boolean"],
        "client": "no_validation",
    }

    def __init__(self, alpha=1.0, *, fit_intercept=True, precompute=False, copy_X=True,
                 max_iter=1000, tol=1e-4, warm_start=False, positive=False, random_state=None,
                 selection="cyclic", solver_options=None, max_time=None,
                 client=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive
        self.random_state = random_state
        self.selection = selection
        self.solver_options = solver_options
        self.max_time = max_time
        self.client = client

    def _strengths(self):
        return float(self.alpha), 1.0, bool(self.positive)


class NonNegativeLinearRegression(_PenalizedLeastSquares):
    r"""Non-negative least squares, optionally with an L1 penalty, fitted by
    block coordinate descent.

    Minimizes

    .. math::
        \frac{1}{2 n} \sum_i s_i (y_i - x_i^T w - w_0)^2 + \alpha \|w\|_1
        \quad \text{subject to } w \ge 0,

    the intercept :math:`w_0` being free and unpenalized.  With ``alpha = 0``
    (the default) this is plain non-negative least squares (the problem of
    :func:`scipy.optimize.nnls`, with an intercept), solved as
    :class:`bcd.LeastSquares` with ``bcd.NonNegative()``; with ``alpha > 0``
    it is scikit-learn's ``Lasso(positive=True)``.

    Parameters
    ----------
    alpha : float, default=0.0
        L1 penalty strength (>= 0).
    fit_intercept : bool, default=True
        Fit a free intercept.  Dense data are centered (a copy); sparse
        data get a column of ones and are never densified.
    max_iter : int, default=1000
        Maximum number of passes over the coordinates: :func:`bcd.solve` runs
        at most ``max_iter * n_coordinates`` block updates.
    tol : float, default=1e-4
        Tolerance: the solver stops when the KKT residual of the summed
        objective is at most ``tol * ||X_c^T S y_c||_inf`` (centered data,
        sample weights ``S``); with ``alpha > 0`` it continues until the
        duality gap is at most ``tol * sum_i s_i (y_i - ybar)^2`` as in
        :class:`Lasso`.
    warm_start : bool, default=False
        Start from the previous solution when refitting.
    solver_options : dict, default=None
        Further keyword arguments of :func:`bcd.solve`.
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs), or None for no limit.  When it runs out the fit stops
        and keeps the best state reached, with a ``ConvergenceWarning``
        saying so; Ctrl-C ends a fit of several solves with
        ``KeyboardInterrupt`` at once, and the estimator is left as it was.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Non-negative coefficients.
    intercept_ : float
        Intercept (0 without ``fit_intercept``).
    dual_gap_ : float or None
        Duality gap of the per-sample objective (None when ``alpha = 0``).
    n_iter_ : int or list of int
        Passes over the coordinates made by the solver (its block updates
        times their size over the number of coordinates, rounded up; 0 when
        the start already meets the tolerance; one per target for a 2-D
        ``y``).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import NonNegativeLinearRegression
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    >>> y = np.array([2.0, -1.0, 1.0, 3.0])
    >>> model = NonNegativeLinearRegression(fit_intercept=False, tol=1e-8).fit(X, y)
    >>> model.coef_.round(4)
    array([1.5, 0. ])
    """

    def __init__(self, alpha=0.0, *, fit_intercept=True, max_iter=1000, tol=1e-4,
                 warm_start=False, solver_options=None, max_time=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.max_time = max_time

    def _strengths(self):
        return float(self.alpha), 1.0, True
