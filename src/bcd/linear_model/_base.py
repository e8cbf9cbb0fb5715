"""Shared parts of the estimators: input validation, the design matrix with an
intercept column, the call to :func:`bcd.solve` and linear predictions."""
import numbers
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._path import path
from ..core import auto
from ..core.assembly import TABLES, configuration_options
from .._solve import solve

from .._sklearn import validate_data
from .._validation import check_scalar, check_solver_options

#: the sparse formats accepted by ``fit`` and ``predict``
SPARSE_FORMATS = ["csr", "csc", "coo"]
#: the options of bcd.solve that the estimators set themselves
RESERVED_OPTIONS = ("x0", "warn")
#: options of bcd.solve that give an explicit configuration instead of the
#: automatic one (derived from the spec tables; the solves read the tables
#: as they are then, rules registered since included)
CONFIGURATION_OPTIONS = configuration_options()
#: the seed of the solves (random rules), unless solver_options or the
#: estimator's random_state give one
RANDOM_STATE = 0

#: scikit-learn's algorithm names (``solver``, ``selection``) and the options
#: of :func:`bcd.solve` that give the closest bcd method.  A method that does
#: not apply to a problem (the dual of an L1-penalized or unregularized
#: problem, Newton steps on a loss without a quadratic model) falls back to
#: the automatic configuration (see :func:`method_options`).
METHODS = {
    "auto": {},
    # quasi-Newton and Newton methods: Newton steps with inner coordinate descent
    "lbfgs": {"formulation": "newton"},
    "newton-cg": {"formulation": "newton"},
    "newton-cholesky": {"formulation": "newton"},
    # liblinear: dual coordinate ascent for the L2 dual (dual=True); its
    # primal solvers (dual=False) are Newton methods (trust-region Newton for
    # L2, newGLMNET for L1)
    "liblinear": {"formulation": "dual"},
    "liblinear-primal": {"formulation": "newton"},
    # stochastic average gradients: primal coordinate descent in random
    # order, one coordinate at a time
    "sag": {"formulation": "primal", "rule": "random", "block_size": 1},
    "saga": {"formulation": "primal", "rule": "random", "block_size": 1},
    # coordinate descent orders (``selection``)
    "cyclic": {},
    "random": {"formulation": "primal", "rule": "random", "block_size": 1},
}


def method_options(name, problem):
    """The options of :func:`bcd.solve` for the scikit-learn algorithm
    ``name`` (a key of :data:`METHODS`) on ``problem``: empty (the
    automatic configuration) where the method does not apply."""
    options = METHODS[name]
    formulation = options.get("formulation")
    if formulation == "newton" and "quadratic_model" not in problem.capabilities:
        return {}
    if formulation == "dual":
        from ..problems.dual import check_dual
        try:
            check_dual(problem)
        except ValueError:
            return {}
    return dict(options)


def check_random_state_seed(random_state):
    """An integer seed for :func:`bcd.solve` from scikit-learn's
    ``random_state`` (None: the fixed default, so fits are reproducible)."""
    if random_state is None:
        return RANDOM_STATE
    if isinstance(random_state, (numbers.Integral, np.integer)):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max))
    raise ValueError(f"random_state must be None, an int, a numpy RandomState or Generator; "
                     f"got {random_state!r}.")


def check_class_weight(class_weight, classes):
    """A ValueError unless ``class_weight`` is "balanced" or a dict whose
    labels are all among ``classes``."""
    if isinstance(class_weight, dict):
        unknown = [k for k in class_weight if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"class_weight has labels {unknown!r} that are not classes of y "
                             f"(classes: {classes.tolist()!r}).")
    elif not (isinstance(class_weight, str) and class_weight == "balanced"):
        raise ValueError(f"class_weight must be None, a dict or 'balanced', got "
                         f"{class_weight!r}.")


def class_sample_weight(class_weight, classes, y_idx, sample_weight):
    """The sample weights with scikit-learn's ``class_weight`` folded in
    (None, a dict from label to weight, or "balanced"); None when both are
    None."""
    if class_weight is None:
        return sample_weight
    from sklearn.utils.class_weight import compute_class_weight
    check_class_weight(class_weight, classes)
    y = classes[y_idx]
    per_class = compute_class_weight(class_weight, classes=classes, y=y,
                                     sample_weight=sample_weight)
    weights = np.asarray(per_class, dtype=np.float64)[y_idx]
    if sample_weight is not None:
        weights = weights * sample_weight
    return weights


def check_sample_weight(sample_weight, X):
    """Sample weights as a float64 array (None stays None), checked by
    scikit-learn: length n_samples, finite, non-negative."""
    if sample_weight is None:
        return None
    sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if np.any(sw < 0):
        raise ValueError("Negative values in data passed to sample_weight.")
    if not np.any(sw > 0):
        raise ValueError("sample_weight must have at least one positive entry.")
    return np.array(sw, dtype=np.float64)      # a copy: the caller's array is never touched


def weighted_sum(sample_weight, n_samples):
    return float(n_samples) if sample_weight is None else float(np.sum(sample_weight))


def design_matrix(X, n_intercept_columns=1, fit_intercept=True):
    """The matrix the problem is built on: ``X`` as float64, with
    ``n_intercept_columns`` extra columns when ``fit_intercept``: a column of
    ones, and for two a column of minus ones after it (an intercept written as
    the difference of two non-negative coordinates).

    Sparse input stays sparse (a CSC matrix: the extra columns are appended
    as sparse columns, which copies ``X`` but never densifies it); dense input
    becomes a new Fortran-ordered float64 array.  ``X`` is never modified."""
    n = X.shape[0]
    if not fit_intercept:
        return X if sp.issparse(X) else np.asfortranarray(X, dtype=np.float64)
    signs = [1.0, -1.0][:n_intercept_columns]
    if sp.issparse(X):
        extra = sp.csc_matrix(np.tile(np.asarray(signs), (n, 1)))
        A = sp.hstack([sp.csc_matrix(X, dtype=np.float64), extra], format="csc")
        A.sort_indices()
        return A
    d = X.shape[1]
    A = np.empty((n, d + len(signs)), dtype=np.float64, order="F")
    A[:, :d] = X
    for k, sign in enumerate(signs):
        A[:, d + k] = sign
    return A


def solver_kwargs(solver_options):
    """``solver_options`` checked: a dict of options of :func:`bcd.solve`
    other than those the estimators set themselves."""
    return check_solver_options(solver_options, RESERVED_OPTIONS,
                                "the estimator sets it (use warm_start=True to start from "
                                "the previous solution)")


def solve_passes(problem, result):
    """The iterations of a solve as ``max_iter`` counts them: passes over
    the samples (dual), Newton steps, or passes over the coordinates (block
    updates over the number of blocks of their size that cover the
    coordinates, rounded up)."""
    if result.options.get("formulation") in ("dual", "newton"):
        return int(result.n_iter)
    size = result.options.get("block_size")
    size = int(size) if isinstance(size, (int, np.integer)) and size > 0 else 1
    n = max(1, int(problem.n_coordinates))
    return -(-int(result.n_iter) // -(-n // min(size, n)))


def svc_design(X, fit_intercept, intercept_scaling):
    """The problem's matrix: ``X`` (sparse stays sparse) with, when fitting
    an intercept, a last column of value ``intercept_scaling``."""
    A = design_matrix(X, 1, fit_intercept)
    if fit_intercept and intercept_scaling != 1:
        if sp.issparse(A):
            # design_matrix's CSC matrix: the last column is the data's tail
            A.data[A.indptr[-2]:A.indptr[-1]] = intercept_scaling
        else:
            A[:, -1] = intercept_scaling
    return A


def fit_deadline(max_time):
    """The ``time.perf_counter`` time at which a fit started now with
    ``max_time`` seconds must end (None or inf: no limit)."""
    if isinstance(max_time, (int, float, np.floating)) and max_time == np.inf:
        return None
    if max_time is None:
        return None
    return time.perf_counter() + check_scalar(max_time, "max_time", low=0.0,
                                              low_inclusive=False)


class SolveRecord:
    """The solves of one ``fit``: runs :func:`bcd.solve` with the estimator's
    options, silencing the solver's own convergence warnings, and issues a
    single scikit-learn ``ConvergenceWarning`` at the end of the fit if a
    solve stopped before reaching its tolerance.

    Ctrl-C and the estimator's ``max_time`` hold for the whole fit:

    * a solve stopped by Ctrl-C ends a fit of one solve with a warning
      saying it was interrupted (the model is the iterate reached); a fit
      that asks for another solve after it gets ``KeyboardInterrupt``
      instead (one-vs-rest classes, several targets, refinements, the folds
      of a cross-validation), and the estimator is left as it was;
    * ``max_time`` (the estimator's parameter, in seconds) is the deadline
      of the whole fit: each solve gets the time that remains (or, past the
      deadline, one stopping test and about one iteration, so that the fit
      still returns a model); ``expired`` tells a fit of several solves to
      stop starting new ones.

    ``method`` is a key of :data:`METHODS` (scikit-learn's ``solver`` or
    ``selection``), ``random_state`` the estimator's; ``deadline`` (a time
    of ``time.perf_counter``) replaces the one ``max_time`` would set, so
    that the records of a fit's folds share one.
    """

    def __init__(self, estimator, solver_options, method="auto", random_state=None,
                 deadline=None):
        self.name = type(estimator).__name__
        self.options = solver_kwargs(solver_options)
        self.method = method
        self.seed = check_random_state_seed(random_state)
        self.failures = []
        self.n_iter = 0
        self.n_passes = 0
        self.interrupted = False
        self.timed_out = False
        self.max_time = getattr(estimator, "max_time", None)
        self.deadline = fit_deadline(self.max_time)
        if deadline is not None:
            self.deadline = deadline        # a cross-validation's: one for all its folds
        self.overhead = 0.0
        # the automatic configuration of the problems with a duality gap works on
        # working sets, which can stop on gap_tol; an explicit one may not
        static = dict(METHODS[method], **self.options)
        explicit = any(static.get(k, "auto") != "auto" for k in configuration_options())
        self.explicit = explicit
        working = self.options.get("working_set", "auto")
        self.working_sets = working is True or (not explicit and working == "auto")

    @property
    def expired(self):
        """Whether the fit's ``max_time`` has run out."""
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def _check_interrupted(self):
        if self.interrupted:
            # Ctrl-C stopped an earlier solve of this fit: the user wants out,
            # not the next target, class, fold or refinement
            raise KeyboardInterrupt(f"{self.name}.fit was interrupted during a solve; the "
                                    f"estimator is left as it was before the fit.")

    def configuration(self, problem, options):
        """The configuration ``problem`` will be solved with: ``options``
        where they fix one, else that of the automatic choice."""
        formulation = options.get("formulation", "auto")
        explicit = any(options.get(k, "auto") != "auto" for k in configuration_options())
        if formulation != "auto" or explicit:
            return options
        config, _ = auto.choose(problem, TABLES)
        return config

    def formulation(self, problem, options):
        """The formulation ``problem`` will be solved by: "dual" (whose
        ``max_iter`` counts passes over the samples), "newton" (Newton
        steps) or "primal"."""
        return self.configuration(problem, options).get("formulation", "primal")

    def dual(self, problem):
        """Whether ``problem`` will be solved through its dual."""
        options = dict(method_options(self.method, problem), **self.options)
        return self.formulation(problem, options) == "dual"

    def _options(self, problem, max_iter, tol, extra):
        options = dict(tol=float(tol), random_state=self.seed)
        options.update(method_options(self.method, problem))
        options.update(extra)
        options.update(self.options)
        hooks = extra.get("callback") is not None
        if hooks or (max_iter is not None and "max_iter" not in self.options):
            # passes over the data: over the samples for the dual, Newton
            # steps for Newton, else passes over the coordinates, as many
            # block updates as there are blocks of the configuration's size
            # (one update of a block of all the coordinates is one pass)
            config = self.configuration(problem, options)
            formulation = config.get("formulation", "primal")
            per_pass = 1
            if formulation not in ("dual", "newton"):
                size = config.get("block_size")
                size = int(size) if isinstance(size, (int, np.integer)) and size > 0 else 1
                n = max(1, int(problem.n_coordinates))
                per_pass = -(-n // min(size, n))
            if max_iter is not None and "max_iter" not in self.options:
                options["max_iter"] = int(max_iter) * per_pass
            if hooks and formulation == "dual":
                # the estimator's per-iteration hooks (scikit-learn's
                # callbacks): the dual's own loop calls none
                del options["callback"]
            elif hooks:
                options.setdefault("callback_every", per_pass)       # once per pass
        if self.deadline is not None:
            # the solve's max_time holds for its iteration loop: leave the
            # time of its set-up and final evaluation, as last measured
            remaining = max(self.deadline - time.perf_counter() - self.overhead, 1e-9)
            given = options.get("max_time")
            options["max_time"] = remaining if given is None else min(given, remaining)
        return options

    def solve(self, problem, x0, max_iter, tol, **extra):
        """One call of :func:`bcd.solve`: at most ``max_iter`` passes over the
        coordinates (``max_iter * n_coordinates`` block updates; None: the
        default of :func:`bcd.solve`) and the KKT tolerance ``tol``;
        ``solver_options`` override both."""
        self._check_interrupted()
        options = self._options(problem, max_iter, tol, extra)
        if x0 is None:
            x0 = np.zeros(problem.n_coordinates)
        # failures are collected and reported by warn(); warn=False, not
        # warnings.catch_warnings, which is not thread-safe
        start = time.perf_counter()
        result = solve(problem, x0=x0, warn=False, **options)
        self.overhead = max(time.perf_counter() - start - result.iteration_time, 0.0)
        self._note(problem, result)
        return result

    def _note(self, problem, result):
        self.interrupted = self.interrupted or result.status == "interrupted"
        self.timed_out = self.timed_out or (result.status == "max_time" and self.expired)
        self._count(problem, result)
        if not result.converged and result.status != "callback":
            self.failures.append(result)

    def path(self, problem, lambdas, max_iter, tol, **extra):
        """:func:`bcd.path` over the decreasing L1 weights ``lambdas`` from 0,
        each solve with the options of :meth:`solve` (the path shares the
        fit's ``max_time``); returns the ``bcd.PathResult``, which holds the
        values solved before Ctrl-C or the deadline stopped it."""
        self._check_interrupted()
        options = self._options(problem, max_iter, tol, extra)
        try:
            result = path(problem, lambdas, x0=np.zeros(problem.n_coordinates), warn=False,
                          **options)
        except KeyboardInterrupt:
            self.interrupted = True
            raise
        for r in result.results:
            self._note(problem, r)
        if result.status == "interrupted" and \
                not any(r.status == "interrupted" for r in result.results):
            # Ctrl-C in the Python part of a solve stopped the path without
            # an interrupted solve: the path itself is the failure, so that
            # the caller (a CV fold, see run_folds) sees the interruption
            self.failures.append(result)
        self.interrupted = self.interrupted or result.status == "interrupted"
        self.timed_out = self.timed_out or result.status == "max_time"
        return result

    def _count(self, problem, result):
        """Add a solve's block updates to ``n_iter`` and its passes (over the
        coordinates, over the samples for the dual, Newton steps) to
        ``n_passes``."""
        self.n_iter += int(result.n_iter)
        self.n_passes += solve_passes(problem, result)

    def warn(self):
        """Issue one ``ConvergenceWarning`` if any solve did not converge."""
        if self.interrupted:
            warnings.warn(f"{self.name}: the fit was interrupted (Ctrl-C) during its last "
                          f"solve; the model is the iterate reached, which is not "
                          f"converged.", ConvergenceWarning, stacklevel=3)
            return
        if self.timed_out:
            warnings.warn(f"{self.name}: the fit reached max_time = {self.max_time:g} s; the "
                          f"model is the best state reached by then, not converged.",
                          ConvergenceWarning, stacklevel=3)
            return
        if not self.failures:
            return
        result = self.failures[-1]
        count = len(self.failures)
        what = "The solver" if count == 1 else f"{count} solves"
        reached = (" Objective did not converge. You might want to increase the number of "
                   "iterations. The max_iter was reached which means the coef_ did not "
                   "converge." if result.status == "max_iter" else "")
        if result.status == "max_iter":
            # the words of scikit-learn's solver where bcd ran the same kind
            # of method: liblinear's dual coordinate ascent, Newton steps
            formulation = result.options.get("formulation")
            if self.method in ("liblinear", "liblinear-primal") and formulation in (
                    "dual", "newton"):
                reached += (" Liblinear failed to converge, increase the number of "
                            "iterations.")
            elif formulation == "newton":
                reached += (f" Newton solver did not converge after {int(result.n_iter)} "
                            f"iterations.")
            if self.method in ("lbfgs", "newton-cg"):
                # scikit-learn's words for its solver of that name, which
                # bcd runs as the method above
                steps = "Newton steps" if formulation == "newton" else "coordinate descent"
                reached += (f" {self.method} failed to converge (bcd runs {steps} for "
                            f"solver='{self.method}'). Increase the number of iterations.")
        warnings.warn(f"{self.name}: {what} did not converge ({result.status}: "
                      f"{result.message}).{reached}  Increase max_iter, loosen tol or scale "
                      f"the data.", ConvergenceWarning, stacklevel=3)


class LinearPredictorMixin:
    """``decision`` = X @ coef_.T + intercept_ for the fitted linear model."""

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=SPARSE_FORMATS, reset=False,
                          dtype=[np.float64, np.float32])
        coef = self.coef_
        if sp.issparse(coef):
            out = np.asarray(safe_sparse_dot(X, coef.T, dense_output=True))
            # a sparsified 1-D coef_ is a row: one output
            return (out.ravel() if np.ndim(self.intercept_) == 0 else out) + self.intercept_
        return safe_sparse_dot(X, np.asarray(coef).T, dense_output=True) + self.intercept_


class BCDEstimator(BaseEstimator):
    """Base of the estimators: scikit-learn tags for sparse input."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class SparseCoefMixin:
    """``sparsify()`` and ``densify()`` of a fitted ``coef_``, as in
    scikit-learn: a CSR matrix saves memory and prediction time when most
    coefficients are zero (an L1 penalty); predictions are unchanged."""

    def densify(self):
        """Store ``coef_`` as a dense array (the default after ``fit``).

        Returns
        -------
        self : object
            The estimator.
        """
        check_is_fitted(self, "coef_")
        if sp.issparse(self.coef_):
            self.coef_ = self.coef_.toarray()
        return self

    def sparsify(self):
        """Store ``coef_`` as a ``scipy.sparse`` CSR matrix.

        Returns
        -------
        self : object
            The estimator.

        Examples
        --------
        >>> import numpy as np
        >>> from bcd.linear_model import LogisticRegression
        >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0]])
        >>> model = LogisticRegression(l1_ratio=1.0, C=1.0).fit(X, [0, 0, 1, 1])
        >>> model.sparsify().coef_.format
        'csr'
        """
        check_is_fitted(self, "coef_")
        self.coef_ = sp.csr_matrix(self.coef_)
        return self


def dense_coef(coef):
    """A fitted ``coef_`` as an ndarray (after ``sparsify``: densified)."""
    return coef.toarray() if sp.issparse(coef) else np.asarray(coef)


def routing_enabled():
    """Whether scikit-learn's metadata routing is enabled."""
    from sklearn import get_config
    return bool(get_config().get("enable_metadata_routing", False))


def check_fit_params(estimator, params, method="fit"):
    """``groups`` from the extra arguments of a CV estimator's ``fit``, as
    scikit-learn allows them: only with metadata routing enabled
    (``sklearn.set_config(enable_metadata_routing=True)``)."""
    if not params:
        return None
    from sklearn import get_config
    if not get_config().get("enable_metadata_routing", False):
        raise ValueError(f"Passing extra keyword arguments to {type(estimator).__name__}.{method} "
                         f"is only supported if enable_metadata_routing=True, which you can "
                         f"set using `sklearn.set_config`. Got {sorted(params)}.")
    params = dict(params)
    groups = params.pop("groups", None)
    if params:
        raise TypeError(f"{type(estimator).__name__}.fit got unexpected arguments "
                        f"{sorted(params)}; it takes sample_weight and groups.")
    return groups


def verbose_options(solver_options, verbose):
    """``solver_options`` with ``verbose`` of :func:`bcd.solve` set from the
    estimator's ``verbose`` (unless given there)."""
    if not verbose:
        return solver_options
    options = dict(solver_options or {})
    options.setdefault("verbose", int(verbose))
    return options
