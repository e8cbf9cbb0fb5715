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
        options, tol, progress, candidates)`` returns the summary dict of the
        learned hyperparameters (with ``"theta"``, ``"history"`` and
        ``"lml"`` or ``"cv_mse"``); None keeps the given ones.
    folds : bool
        Whether ``fit`` splits the data by ``cv`` (one task per start and
        fold, and ``cv`` checked against the number of samples).
    weights : callable
        ``weights(estimator, X, y, problem, hyper, space, tol, options)`` returns
        the :class:`Weights` of the fitted model.
    """
    name: Optional[str]
    fit: Optional[Callable]
    folds: bool
    weights: Callable


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
            candidates):
    from .hyper import fit_ml
    return fit_ml(space, X, y, n_restarts, rng, executor, progress, candidates=candidates)


def _fit_cv(space, X, y, *, cv, scheme, n_restarts, rng, executor, options, tol, progress,
            candidates):
    from .hyper import fit_cv
    return fit_cv(space, X, y, cv, scheme, n_restarts, rng, executor, progress=progress,
                  candidates=candidates)


def _fit_cv_admm(space, X, y, *, cv, scheme, n_restarts, rng, executor, options, tol,
                 progress, candidates):
    from .hyper import fit_cv_admm
    scale = max(1e-300, float(np.max(np.abs(y))))
    return fit_cv_admm(space, X, y, cv, scheme, n_restarts, rng, executor, options,
                       min(tol, 1e-3 * scale), progress, candidates=candidates)


# ------------------------------------------------------------------ final weights

def solve_weights(est, X, y, problem, hyper, space, tol, options):
    """alpha by :func:`bcd.solve` with the estimator's rule and options
    (variable blocks, exact updates)."""
    from .._solve import solve

    result = solve(problem, rule=est.rule, blocks="variable", block_size=est.block_size,
                   update="exact", tol=tol, max_iter=est.max_iter,
                   random_state=est.random_state, verbose=est.verbose, **options)
    return Weights(problem, result.x, result.n_iter, result)


def cholesky_weights(est, X, y, problem, hyper, space, tol, options):
    """alpha from a Cholesky factorization of K + noise I, exact like the
    marginal likelihood computed the same way; the factor is kept for the
    predictive variances when it fits ``max_dense_bytes``."""
    n = problem.n_coordinates
    chol = scipy.linalg.cho_factor(problem.kernel_matrix() + problem.noise * np.eye(n),
                                   lower=False, overwrite_a=True)
    alpha = scipy.linalg.cho_solve(chol, problem.y)
    if 8.0 * n ** 2 > est.max_dense_bytes:
        chol = None
    return Weights(problem, alpha, hyper["n_iter"], None, chol)


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


def rescaled_solve_weights(est, X, y, problem, hyper, space, tol, options):
    """:func:`solve_weights`, then the scale of K + noise I that the
    cross-validation error cannot see set by maximum likelihood
    (:func:`ml_scale`), where the learned hyperparameters have a scale
    direction."""
    weights = solve_weights(est, X, y, problem, hyper, space, tol, options)
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
    "ml": Optimizer("ml", _fit_ml, folds=False, weights=cholesky_weights),
    "cv": Optimizer("cv", _fit_cv, folds=True, weights=rescaled_solve_weights),
    "cv_admm": Optimizer("cv_admm", _fit_cv_admm, folds=True, weights=solve_weights),
}


def describe(names=None):
    """``None, 'ml', 'cv' or 'cv_admm'``: the names for error messages."""
    names = list(OPTIMIZERS) if names is None else list(names)
    text = [repr(n) for n in names]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " or " + text[-1]
