r"""Linear support vector classification: :class:`LinearSVC`.

The estimator minimizes, for each binary problem, scikit-learn's (that is,
liblinear's) objective

.. math::
    \tfrac12 \|\tilde w\|_2^2 + C \sum_i c_i\, \phi(y_i \tilde x_i^T \tilde w)
    \quad\text{or}\quad
    \|\tilde w\|_1 + C \sum_i c_i\, \phi(y_i \tilde x_i^T \tilde w)

with the hinge or squared hinge :math:`\phi`, the labels ``y_i`` in {-1, +1},
the per-sample weights ``c_i`` (sample weight times class weight) and, with an
intercept, :math:`\tilde x_i = (x_i, \text{intercept\_scaling})`: the
intercept is a coefficient like the others, penalized, as in liblinear.
Divided by ``C``, this is :class:`bcd.LinearSVM` on the matrix with that
extra column, with ``l2 = 1 / C`` (``penalty="l2"``) or
``penalty=bcd.L1(1 / C)`` and ``l2 = 0`` (``penalty="l1"``).
"""
import inspect
import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight

from ..penalties import L1
from ..problems import LinearSVM
from ._base import BCDEstimator, SolveRecord, svc_design
from ._dask import (DaskClientMixin, binary_labels, class_weighted, fit_distributed,
                    fit_penalized_intercept, is_dask_array, resolve_client)
from ._logistic import LinearClassifierMixin, validate_classification

#: at most this many solves per binary problem (each with a smaller
#: tolerance than the last) until the duality gap meets ``tol``
GAP_ROUNDS = 8
#: through the dual (squared hinge), a solve starts from the last when its
#: gap was at most this fraction of the objective, else from 0
WARM_GAP = 1e-3
#: a duality gap at most this fraction of the objective is rounding (the
#: dual solver's own floor is 1e-13 times |P| + |D|): the rounds stop there
#: whatever ``tol``
GAP_FLOOR = 1e-12


def svc_formulation(penalty, loss, dual):
    """The ``formulation`` of :func:`bcd.solve` for the estimator's
    ``penalty``, ``loss`` and ``dual``; ValueError for the combinations
    that scikit-learn's ``LinearSVC`` refuses."""
    dual = "auto" if isinstance(dual, str) else bool(dual)
    if penalty == "l1" and loss == "hinge":
        raise ValueError("penalty='l1' is not supported with loss='hinge' (as in scikit-learn): "
                         "use penalty='l1' with loss='squared_hinge', or penalty='l2'.")
    if penalty == "l1":
        if dual is True:
            raise ValueError("penalty='l1' (with loss='squared_hinge') has no dual formulation: "
                             "dual=True is not supported; use dual=False or dual='auto'.")
        return "primal" if dual is False else "auto"
    if loss == "hinge":
        if dual is False:
            raise ValueError("loss='hinge' is solved through its dual only: dual=False is not "
                             "supported with penalty='l2' and loss='hinge'; use dual=True or "
                             "dual='auto'.")
        return "dual"
    return {True: "dual", False: "primal"}.get(dual, "auto")


def class_weights(class_weight, classes, y, sample_weight):
    """The weight of each class, as scikit-learn computes it (``"balanced"``:
    ``n / (n_classes * count)``, with the counts weighted by
    ``sample_weight`` where scikit-learn does so)."""
    if class_weight is None:
        return np.ones(classes.size)
    kwargs = {}
    if sample_weight is not None and \
            "sample_weight" in inspect.signature(compute_class_weight).parameters:
        kwargs["sample_weight"] = sample_weight
    return np.asarray(compute_class_weight(class_weight, classes=classes, y=y, **kwargs),
                      dtype=np.float64)


def binary_weights(y_idx, positive, weights, sample_weight, one_vs_rest):
    """The sample weights of the binary problem of class ``positive``: the
    sample weight times the class weight of its class, except that one
    versus the rest (three classes or more), as in liblinear, the samples of
    the other classes keep their sample weight only.  None when all are 1."""
    if one_vs_rest:
        c = np.where(y_idx == positive, weights[positive], 1.0)
    else:
        c = weights[y_idx]
    if sample_weight is not None:
        c = c * sample_weight
    return None if np.all(c == 1.0) else c


def squared_hinge_gap(problem, x, l1):
    r"""``(gap, objective)`` of :class:`bcd.LinearSVM` with the squared hinge
    at ``x``: the duality gap of the dual point :math:`\alpha_i = 2 s_i
    \max(0, 1 - y_i a_i^T x)` (the dual solution at the primal solution),
    which bounds ``F(x) - F*``.

    The dual is :math:`D(\alpha) = \sum_i (\alpha_i - \alpha_i^2 / (4 s_i))
    - \tfrac12 \sum_j v_j^2 / l_{2,j}` with :math:`v = A^T (y \circ
    \alpha)`, or with the L1 weight ``l1`` instead of the ridge, the same
    sum without the quadratic term under the constraint
    :math:`\|v\|_\infty \le l1`, met by scaling :math:`\alpha` down."""
    s = problem.sample_weight if problem.sample_weight is not None \
        else np.ones(problem.n_samples)
    t = problem.y
    z = np.asarray(problem.A @ x, dtype=np.float64).ravel()
    alpha = 2.0 * s * np.maximum(0.0, 1.0 - t * z)
    v = np.asarray(problem.A.T @ (t * alpha), dtype=np.float64).ravel()
    if l1 > 0:
        largest = float(np.max(np.abs(v), initial=0.0))
        if largest > l1:
            alpha *= l1 / largest
        quadratic = 0.0
    else:
        ridge = np.broadcast_to(np.asarray(problem.l2, dtype=np.float64), v.shape)
        quadratic = 0.5 * float(v @ (v / ridge))
    live = s > 0
    a = alpha[live]
    dual = float(np.sum(a - 0.25 * a * a / s[live])) - quadratic
    primal = problem.objective(x)
    return primal - dual, primal


class SVCBinary:
    """One binary problem of a fit: its :class:`bcd.LinearSVM` and its
    solve to the relative duality gap ``tol``."""

    def __init__(self, A, labels, sample_weight, loss, penalty, C):
        self.l1 = 1.0 / C if penalty == "l1" else 0.0
        self.l2 = 1.0 / C if penalty == "l2" else 0.0
        self.problem = LinearSVM(A, labels, loss=loss, l2=self.l2,
                                 penalty=L1(self.l1) if self.l1 > 0 else None,
                                 sample_weight=sample_weight)

    def certify(self, result):
        """``(gap, objective)`` of a result: the dual's own gap, or the gap
        of the dual point matched to ``result.x`` (squared hinge)."""
        if result.options.get("formulation") == "dual":
            return float(result.duality_gap), float(result.objective)
        return squared_hinge_gap(self.problem, np.asarray(result.x, dtype=np.float64), self.l1)

    def first_tolerance(self, tol, dual):
        """The solver's tolerance of the first solve: through the dual, the
        gap relative to the objective, ``tol`` (with ``tol_mode="relative"``);
        in the primal, the KKT tolerance that bounds
        ``F(x) - F*`` by about ``tol * F(0)`` (``F(0)``: the sum of the
        sample weights)."""
        problem = self.problem
        # phi(0) = 1 for both losses
        f0 = float(np.sum(problem.sample_weight)) if problem.sample_weight is not None \
            else float(problem.n_samples)
        if dual:
            return tol              # the gap relative to the objective (tol_mode)
        if self.l1 > 0:
            # relative to the gradient at 0, as liblinear's primal test
            g = problem.gradient(np.zeros(problem.n_coordinates))
            scale = float(np.max(np.abs(g), initial=0.0))
            return tol * (scale if scale > 0 else f0)
        # F(x) - F* <= ||grad F(x)||^2 / (2 l2) <= n kkt^2 / (2 l2)
        return float(np.sqrt(2.0 * self.l2 * tol * f0 / problem.n_coordinates))

    def fit(self, record, tol, max_iter, options):
        """Solve until the duality gap is at most ``tol`` times the objective:
        ``(x, results)``."""
        dual = record.dual(self.problem)
        inner = self.first_tolerance(tol, dual)
        if dual:
            options = dict(options, tol_mode="relative")
        x = start = None
        results = []
        last_gap = np.inf
        for _ in range(GAP_ROUNDS):
            result = record.solve(self.problem, start, max_iter, inner, **options)
            results.append(result)
            x = result.x
            gap, objective = self.certify(result)
            # the primal solves start from the last; the dual ones from the dual
            # point that bcd.solve matches to the primal start, which for the
            # squared hinge is the dual solution at the primal one, but only
            # as good as the start (for the hinge, every sample inside the
            # margin at its bound): from 0 unless the last was accurate
            if not dual or (self.problem.loss == "squared_hinge"
                            and gap <= WARM_GAP * abs(objective)):
                start = x
            else:
                start = None
            target = tol * objective
            # done, or failed, or at the rounding floor, or no longer improving
            if not result.converged or gap <= target or gap <= GAP_FLOOR * abs(objective) \
                    or gap >= last_gap:
                break
            last_gap = gap
            if dual:
                inner *= 0.5 * min(1.0, target / gap)
            else:
                shrink = target / gap if self.l1 > 0 else np.sqrt(target / gap)
                inner *= min(0.5, max(1e-3, 0.5 * shrink))
        return np.asarray(x, dtype=np.float64), results


class LinearSVC(DaskClientMixin, LinearClassifierMixin, BCDEstimator):
    r"""Linear support vector classification, fitted by block coordinate
    descent (dual coordinate ascent for the L2 penalty, as liblinear).

    Minimizes, as scikit-learn's ``LinearSVC`` does (one binary problem per
    class, one versus the rest, or a single one for two classes),

    .. math::
        r(\tilde w) + C \sum_i c_i\, \phi(y_i \tilde x_i^T \tilde w)

    with :math:`\phi(u) = \max(0, 1 - u)^2` (``"squared_hinge"``) or
    :math:`\max(0, 1 - u)` (``"hinge"``), ``r`` the squared norm
    :math:`\|\tilde w\|_2^2 / 2` (``"l2"``) or :math:`\|\tilde w\|_1`
    (``"l1"``), the labels :math:`y_i = \pm 1` and the weights :math:`c_i`
    (sample weight times class weight).  **The intercept is penalized**, as
    in scikit-learn (liblinear): with ``fit_intercept``, :math:`\tilde x_i =
    (x_i, s)` with ``s = intercept_scaling`` and :math:`\tilde w = (w,
    b / s)`, so that the intercept ``b`` pays ``r(b / s)`` like a
    coefficient; a larger ``intercept_scaling`` weakens its penalty.  The
    solutions are those of scikit-learn's ``LinearSVC`` with the same
    parameters.  Divided by ``C``, the objective is :class:`bcd.LinearSVM`
    on the matrix with that extra column, with ``l2 = 1 / C`` (``"l2"``) or
    ``penalty=bcd.L1(1 / C)`` (``"l1"``), solved by :func:`bcd.solve`.

    Parameters
    ----------
    penalty : {"l2", "l1"}, default="l2"
        The penalty ``r``; ``"l1"`` gives sparse coefficients and needs
        ``loss="squared_hinge"``.
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        The loss :math:`\phi`; ``"hinge"`` needs ``penalty="l2"`` and the
        dual.
    dual : "auto" or bool, default="auto"
        The formulation :func:`bcd.solve` runs on: True: the dual
        (``formulation="dual"``, coordinate ascent over the samples; not
        with ``penalty="l1"``), False: the primal (``formulation="primal"``,
        not with ``loss="hinge"``), ``"auto"``: the dual for the hinge loss,
        otherwise the automatic configuration's choice (recorded in
        ``result_.options``): for the L2 penalty the dual on wide data
        (fewer samples than features, beyond a few hundred features), as
        scikit-learn's ``"auto"``, and Newton steps on the primal otherwise.
        Coordinate ascent in the dual is slow on tall data (many more
        samples than features), liblinear's as well.
    tol : float, default=1e-4
        Relative accuracy of each binary problem's objective: its fit ends
        when the duality gap, which bounds the objective's distance to the
        optimum, is at most ``tol`` times the objective, so that the
        objective is within a factor ``1 + tol`` of the optimum's.  Through
        the dual the gap is the solver's own; in the primal it is the gap of
        the dual point matched to the primal one.  The first solve aims at
        ``tol`` times the objective at 0, ``F(0)`` (``C`` times the sum of
        the weights ``c_i``): through the dual, its stopping test is the gap ``tol *
        F(0)``; in the primal, a KKT tolerance that bounds ``F(x) - F*`` by
        about that (with the L1 penalty, ``tol`` times the largest partial
        derivative at 0, liblinear's scale).  While the gap misses ``tol``
        times the objective, the problem is solved again with a smaller
        tolerance (at most eight solves; the primal ones, and the dual ones
        of the squared hinge once accurate to 1e-3, warm-started).  This
        differs from liblinear's tests (the spread of the dual's projected
        gradient, or the gradient norm relative to its value at 0), which
        do not bound the objective's accuracy: at the default ``tol``,
        liblinear is often more accurate, and sometimes less.
    C : float, default=1.0
        Inverse of the regularization strength (> 0): the weight of the
        loss.
    multi_class : {"ovr"}, default="ovr"
        One binary problem per class, the class against the rest.
        scikit-learn's ``"crammer_singer"`` is not supported.
    fit_intercept : bool, default=True
        Fit an intercept, as an extra feature of value ``intercept_scaling``
        whose coefficient is penalized like the others (scikit-learn's
        objective).  Sparse data are never densified.
    intercept_scaling : float, default=1
        Value of the intercept feature (> 0); the intercept is
        ``intercept_scaling`` times its coefficient.
    class_weight : dict, "balanced" or None, default=None
        Multiplies the weight of the samples of each class, as in
        scikit-learn: ``{label: weight}``, or ``"balanced"`` for
        ``n_samples / (n_classes * count)`` (counts weighted by
        ``sample_weight`` in the scikit-learn versions that do so).  With
        three classes or more, as liblinear, each one-versus-rest problem
        weights the samples of its class only.
    verbose : int, default=0
        Progress output of :func:`bcd.solve` (``verbose=1`` or ``2``).
    random_state : int, RandomState instance or None, default=None
        Seed of the solver's random sample order (the dual visits the
        samples in a fresh random permutation every pass).  None uses a
        fixed seed, so fits are reproducible; the minimizer does not depend
        on it.
    max_iter : int, default=1000
        Maximum number of passes of each solve: over the samples through
        the dual, over the coordinates in the primal (``max_iter *
        n_coordinates`` block updates).
    max_time : float, default=None
        Wall-clock limit in seconds for the whole ``fit`` (every solve it
        runs: one per class), or None for no limit.  When it runs out
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
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients (one row for two classes: those of ``classes_[1]``).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts, ``intercept_scaling`` times the coefficient of the
        intercept feature (zeros without ``fit_intercept``).
    n_iter_ : int
        The largest, over the binary problems, of the solver's iterations
        (over its solves): passes over the samples through the dual, block
        updates in the primal.
    result_ : bcd.Result or list
        The :class:`bcd.Result` of the last solve of the binary problem
        (a list with one per class for three classes or more).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    LogisticRegression : The log-loss, with an unpenalized intercept.

    Examples
    --------
    >>> import numpy as np
    >>> from bcd.linear_model import LinearSVC
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [3.0, 1.0],
    ...               [0.5, 3.0], [2.5, 0.0]])
    >>> y = np.array([0, 0, 1, 1, 0, 1])
    >>> model = LinearSVC(C=10.0).fit(X, y)
    >>> model.predict(X)
    array([0, 0, 1, 1, 0, 1])
    >>> model.coef_.round(3), model.intercept_.round(3)
    (array([[1.335, 0.213]]), array([-2.243]))
    >>> model.decision_function(X[:2]).round(3)
    array([-2.031, -0.802])
    """

    _parameter_constraints = {
        "penalty": [StrOptions({"l1", "l2"})],
        "loss": [StrOptions({"hinge", "squared_hinge"})],
        "dual": ["boolean", StrOptions({"auto"})],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "multi_class": [StrOptions({"ovr", "crammer_singer"})],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
        "class_weight": [None, dict, StrOptions({"balanced"})],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "max_time": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "client": "no_validation",
    }

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0,
                 multi_class="ovr", fit_intercept=True, intercept_scaling=1, class_weight=None,
                 verbose=0, random_state=None, max_iter=1000, max_time=None,
                 client=None):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.max_time = max_time
        self.client = client

    def fit(self, X, y, sample_weight=None):
        """Fit the model by block coordinate descent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; sparse input is never densified.
        y : array-like of shape (n_samples,)
            Class labels (two classes or more).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the samples' losses (liblinear's
            per-sample ``C``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        if self.multi_class != "ovr":
            raise ValueError(f"multi_class={self.multi_class!r} is not supported: LinearSVC "
                             f"fits one binary problem per class, multi_class='ovr'.")
        formulation = svc_formulation(self.penalty, self.loss, self.dual)
        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)
        X, y, classes, y_idx, sw = validate_classification(self, X, y, sample_weight)
        weights = class_weights(self.class_weight, classes, y, sw)
        A = svc_design(X, self.fit_intercept, float(self.intercept_scaling))
        one_vs_rest = classes.size > 2
        positives = range(classes.size) if one_vs_rest else [1]
        options = {}
        if self.random_state is not None:
            options["random_state"] = self.random_state
        if self.verbose:
            options["verbose"] = min(int(self.verbose), 2)
        record = SolveRecord(self, {"formulation": formulation})
        d = X.shape[1]
        coef = np.zeros((len(positives), d))
        intercept = np.zeros(len(positives))
        n_iter = []
        results = []
        rows = None
        for row, k in enumerate(positives):
            labels = (y_idx == k).astype(np.float64)
            binary = SVCBinary(A, labels, binary_weights(y_idx, k, weights, sw, one_vs_rest),
                               self.loss, self.penalty, float(self.C))
            # the problems have the same matrix: the row-major copy of it that
            # the dual makes (cached on the problem) is made once for all
            if rows is None:
                rows = binary.problem.__dict__.setdefault("_dual_rows", {})
            else:
                binary.problem.__dict__["_dual_rows"] = rows
            x, solves = binary.fit(record, float(self.tol), self.max_iter, options)
            coef[row] = x[:d]
            if self.fit_intercept:
                intercept[row] = float(self.intercept_scaling) * x[d]
            n_iter.append(sum(r.n_iter for r in solves))
            results.append(solves[-1])
        record.warn()
        self.classes_ = classes
        self.coef_ = coef.astype(X.dtype)
        self.intercept_ = intercept.astype(X.dtype)
        self.n_iter_ = int(max(n_iter))
        self.result_ = results if one_vs_rest else results[0]
        return self

    def _fit_dask(self, X, y, sample_weight):
        """``fit`` on a dask array through :func:`bcd.distributed.solve`
        (CoCoA+): two classes, ``penalty="l2"``; the penalized intercept is
        a last column of ``intercept_scaling``, as in memory."""
        if self.penalty != "l2":
            raise ValueError(f"LinearSVC on a dask array fits penalty='l2'; got "
                             f"penalty={self.penalty!r}.")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {X.shape}.")
        if len(X.chunks[1]) != 1:
            X = X.rechunk({1: -1})
        client = resolve_client(self.client)
        classes, labels, y = binary_labels(self, X, y, client)
        sample_weight = class_weighted(self.class_weight, classes, y, sample_weight, client)
        args = (self, X, labels, sample_weight, self.loss, 0.0, 1.0 / float(self.C), self.tol,
                self.max_iter)
        if self.fit_intercept:
            coef, intercept, result = fit_penalized_intercept(*args, self.intercept_scaling,
                                                              client=client)
        else:
            coef, intercept, result = fit_distributed(*args, fit_intercept=False,
                                                      client=client)
        self.classes_ = classes
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])
        self.n_iter_ = int(result.n_rounds)
        self.result_ = result
        return self
