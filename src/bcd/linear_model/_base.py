"""Shared parts of the estimators: input validation, the design matrix with an
intercept column, the call to :func:`bcd.solve` and linear predictions."""
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
#: the seed of the solves (random rules), unless solver_options give one
RANDOM_STATE = 0


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
    """

    def __init__(self, estimator, solver_options):
        self.name = type(estimator).__name__
        self.options = solver_kwargs(solver_options)
        self.failures = []
        self.n_iter = 0
        self.interrupted = False
        self.timed_out = False
        max_time = getattr(estimator, "max_time", None)
        if isinstance(max_time, (int, float, np.floating)) and max_time == np.inf:
            max_time = None                 # no limit
        if max_time is not None:
            max_time = check_scalar(max_time, "max_time", low=0.0, low_inclusive=False)
        self.max_time = max_time
        self.deadline = None if max_time is None else time.perf_counter() + max_time
        self.overhead = 0.0
        # the automatic configuration of the problems with a duality gap works on
        # working sets, which can stop on gap_tol; an explicit one may not
        explicit = any(self.options.get(k, "auto") != "auto" for k in configuration_options())
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

    def dual(self, problem):
        """Whether ``problem`` will be solved through its dual, whose
        ``max_iter`` counts passes over the samples."""
        formulation = self.options.get("formulation", "auto")
        if formulation != "auto" or self.explicit:
            return formulation == "dual"
        config, _ = auto.choose(problem, TABLES)
        return config.get("formulation") == "dual"

    def _options(self, problem, max_iter, tol, extra):
        options = dict(tol=float(tol), random_state=RANDOM_STATE)
        if max_iter is not None:
            # passes over the data: over the samples for the dual, else over
            # the coordinates
            options["max_iter"] = int(max_iter) * (
                1 if self.dual(problem) else int(problem.n_coordinates))
        options.update(extra)
        options.update(self.options)
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
        self._note(result)
        return result

    def _note(self, result):
        self.interrupted = self.interrupted or result.status == "interrupted"
        self.timed_out = self.timed_out or (result.status == "max_time" and self.expired)
        self.n_iter += result.n_iter
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
            self._note(r)
        self.interrupted = self.interrupted or result.status == "interrupted"
        self.timed_out = self.timed_out or result.status == "max_time"
        return result

    def warn(self):
        """Issue one ``ConvergenceWarning`` if any solve did not converge."""
        count = len(self.failures)
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
        what = "The solver" if count == 1 else f"{count} solves"
        warnings.warn(f"{self.name}: {what} did not converge ({result.status}: "
                      f"{result.message}).  Increase max_iter, loosen tol or scale the "
                      f"data.", ConvergenceWarning, stacklevel=3)


class LinearPredictorMixin:
    """``decision`` = X @ coef_.T + intercept_ for the fitted linear model."""

    def _decision(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=SPARSE_FORMATS, reset=False,
                          dtype=[np.float64, np.float32])
        return safe_sparse_dot(X, np.asarray(self.coef_).T, dense_output=True) + self.intercept_


class BCDEstimator(BaseEstimator):
    """Base of the estimators: scikit-learn tags for sparse input."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
