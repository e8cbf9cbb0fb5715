"""The table of :class:`~bcd.gp.GPRegressor`'s hyperparameter optimizers.

One row per value of ``optimizer``: the function that learns the
hyperparameters (None: they are kept as given), whether it splits the data
into folds (which ``cv`` and the number of tasks depend on), and how the
final weights alpha = (K + noise I)^-1 y are computed once the
hyperparameters are known.  :class:`~bcd.gp.GPRegressor` reads this table
and compares no optimizer names; adding an optimizer is one row here and its
fit function (see ``docs/extending.md``).

>>> from bcd.gp.optimizers import OPTIMIZERS
>>> list(OPTIMIZERS)
[None, 'ml', 'cv', 'cv_admm']
>>> OPTIMIZERS["cv"].folds
True
"""
import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import scipy.linalg

from .problem import GaussianProcess, admissible_noise


@dataclass(frozen=True)
class Optimizer:
    """A row of :data:`OPTIMIZERS`.

    Attributes
    ----------
    name : str or None
        The value of ``GPRegressor(optimizer=...)``.
    fit : callable or None
        ``fit(space, X, y, *, cv, scheme, n_restarts, rng, executor,
        options, tol, progress, candidates, control)`` returns the summary dict of the
        learned hyperparameters (with ``"theta"``, ``"history"`` and
        ``"lml"`` or ``"cv_mse"``); None keeps the given ones.
    folds : bool
        Whether ``fit`` splits the data by ``cv`` (one task per start and
        fold, and ``cv`` checked against the number of samples).
    concurrent_tasks : callable or None
        ``concurrent_tasks(n_samples, n_tasks)``: how many of the tasks may
        run at once in this process (their memory), or a ValueError when
        none fits; None: all of them.
    weights : callable
        ``weights(estimator, X, y, problem, hyper, space, tol, options,
        control)`` returns the :class:`Weights` of the fitted model
        (``control``, a :class:`~bcd.gp.hyper.common.Control`, holds what
        remains of the fit's ``max_time``).
    """
    name: Optional[str]
    fit: Optional[Callable]
    folds: bool
    weights: Callable
    concurrent_tasks: Optional[Callable] = None


@dataclass
class Weights:
    """The outcome of a row's ``weights``: the problem whose solution alpha
    is (it changes when the hyperparameters are rescaled), alpha, the
    iterations, bcd's Result (None without a solve) and the Cholesky factor
    of K + noise I when one was computed and kept."""
    problem: GaussianProcess
    alpha: np.ndarray
    n_iter: int
    result: object = None
    chol: object = None


# ------------------------------------------------------------------ fit functions

def _fit_ml(space, X, y, *, cv, scheme, n_restarts, rng, executor, options, tol, progress,
            candidates, control):
    from .hyper import fit_ml
    return fit_ml(space, X, y, n_restarts, rng, executor, progress, candidates=candidates,
                  control=control)


def _fit_cv(space, X, y, *, cv, scheme, n_restarts, rng, executor, options, tol, progress,
            candidates, control):
    from .hyper import fit_cv
    return fit_cv(space, X, y, cv, scheme, n_restarts, rng, executor, progress=progress,
                  candidates=candidates, control=control)


def _fit_cv_admm(space, X, y, *, cv, scheme, n_restarts, rng, executor, options, tol,
                 progress, candidates, control):
    from .hyper import fit_cv_admm
    scale = max(1e-300, float(np.max(np.abs(y))))
    return fit_cv_admm(space, X, y, cv, scheme, n_restarts, rng, executor, options,
                       min(tol, 1e-3 * scale), progress, candidates=candidates,
                       control=control)


def _ml_tasks(n_samples, n_tasks):
    from .hyper.ml import ml_plan
    return ml_plan(n_samples, n_tasks)[1]


# ------------------------------------------------------------------ final weights

def _positive_or_none(seconds):
    return None if seconds is None else max(seconds, 1e-6)


def solve_weights(est, X, y, problem, hyper, space, tol, options, control, x0=None):
    """alpha by :func:`bcd.solve` with the estimator's rule and options
    (variable blocks, exact updates), within what remains of ``max_time``,
    from ``x0`` when given."""
    from .._solve import solve

    result = solve(problem, rule=est.rule, blocks="variable", block_size=est.block_size,
                   update="exact", tol=tol, max_iter=est.max_iter,
                   max_time=_positive_or_none(control.remaining()),
                   random_state=est.random_state, x0=x0,
                   verbose=est.verbose, **options)
    return Weights(problem, result.x, result.n_iter, result)


def ml_weights(est, X, y, problem, hyper, space, tol, options, control):
    """alpha = C^-1 y as the marginal likelihood computed it at the learned
    hyperparameters.  The exact method's alpha needs no further work (a new
    factorization when the noise had to be raised to the admissible
    minimum, or, under a deadline, a GBCD solve within what remains of it);
    the estimates' alpha, a conjugate-gradient solution, starts a
    :func:`solve_weights` run that brings it to ``tol``."""
    alpha = hyper.get("alpha")
    same = alpha is not None and problem.noise == space.unpack(hyper["theta"])[1]
    if hyper.get("method", "exact") != "exact" or (not same and
                                                   control.remaining() is not None):
        return solve_weights(est, X, y, problem, hyper, space, tol, options, control,
                             x0=alpha if same else None)
    if not same:
        alpha = dense_solve(problem, problem.y, control)
    return Weights(problem, np.asarray(alpha, dtype=np.float64), hyper["n_iter"])


def dense_factor(problem, control=None):
    """The upper Cholesky factor U of K + noise I (U^T U), Fortran-ordered,
    factored by panels (:mod:`bcd.core._dense`); raises
    :class:`~bcd.gp.hyper.common.Stopped` when ``control`` says stop and
    ``numpy.linalg.LinAlgError`` when the matrix is not positive definite."""
    from ..core._dense import cholesky
    from .hyper.common import Stopped

    U = problem.kernel_matrix()                      # a new Fortran-ordered array
    U[np.diag_indices(U.shape[0])] += problem.noise
    # the final weights are computed whatever remains of max_time: only
    # Ctrl-C stops them
    info = cholesky(U, cancel=None if control is None else control.flag)
    if info < 0:
        raise Stopped("interrupted")
    if info > 0:
        raise np.linalg.LinAlgError(f"K + noise I is not positive definite (leading minor "
                                    f"{info}).")
    return U


def dense_solve(problem, b, control=None):
    """(K + noise I)^-1 b through :func:`dense_factor`."""
    U = dense_factor(problem, control)
    return scipy.linalg.lapack.dpotrs(U, np.asarray(b, dtype=np.float64), lower=0)[0]


def ml_scale(space, v, hyper, y, alpha):
    """The maximum likelihood scale of C = K + noise I along the learned
    hyperparameters' scale direction v (C(theta + t v) = e^t C(theta)): for
    C' = c C, log p(y) is largest at c = y^T C^-1 y / n = y^T alpha / n.
    Moves theta by log c along v (within the bounds) and returns (kernel,
    noise, alpha / c, c); the predictive mean is unchanged."""
    theta = hyper["theta"]
    t = math.log(max(float(y @ alpha), 1e-300) / y.shape[0])
    moving = v != 0
    lo = (space.bounds[moving, 0] - theta[moving]) / v[moving]
    hi = (space.bounds[moving, 1] - theta[moving]) / v[moving]
    t = min(max(t, float(np.max(np.minimum(lo, hi)))), float(np.min(np.maximum(lo, hi))))
    hyper["theta"] = space.clip(theta + t * v)
    kernel, noise = space.unpack(hyper["theta"])
    return kernel, admissible_noise(kernel, noise), alpha / math.exp(t), math.exp(t)


def rescaled_solve_weights(est, X, y, problem, hyper, space, tol, options, control):
    """:func:`solve_weights`, then the scale of K + noise I that the
    cross-validation error cannot see set by maximum likelihood
    (:func:`ml_scale`), where the learned hyperparameters have a scale
    direction."""
    weights = solve_weights(est, X, y, problem, hyper, space, tol, options, control)
    v = space.scale_direction()
    if v is not None:
        kernel, noise, alpha, hyper["scale"] = ml_scale(space, v, hyper, problem.y,
                                                        weights.alpha)
        weights.problem = GaussianProcess(X, y, kernel, noise,
                                          cache_size=est.cache_size, n_threads=est.n_threads)
        weights.alpha = alpha
    return weights


#: optimizer name -> its row
OPTIMIZERS = {
    None: Optimizer(None, None, folds=False, weights=solve_weights),
    "ml": Optimizer("ml", _fit_ml, folds=False, weights=ml_weights,
                    concurrent_tasks=_ml_tasks),
    "cv": Optimizer("cv", _fit_cv, folds=True, weights=rescaled_solve_weights),
    "cv_admm": Optimizer("cv_admm", _fit_cv_admm, folds=True, weights=solve_weights),
}


def describe(names=None):
    """``None, 'ml', 'cv' or 'cv_admm'``: the names for error messages."""
    names = list(OPTIMIZERS) if names is None else list(names)
    text = [repr(n) for n in names]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " or " + text[-1]
