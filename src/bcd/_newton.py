"""A Newton outer loop with coordinate descent inside (formulation="newton").

For a linear model F(x) = sum_i s_i phi(a_i^T x) + 1/2 sum_j r_j x_j^2 + g(x),
each outer iteration builds the quadratic model of the smooth part at x_k,

    q(x) = 1/2 sum_i D_i (a_i^T x - t_i)^2 + 1/2 sum_j r_j x_j^2 + g(x),

with D_i = s_i phi''(a_i^T x_k) and the working response t_i = a_i^T x_k -
phi'(a_i^T x_k) / phi''(a_i^T x_k) (iteratively reweighted least squares:
the model agrees with F to second order at x_k).  It is a weighted
:class:`bcd.LeastSquares` problem with the same ridge weights and penalty,
solved by :func:`bcd.solve` with its automatic configuration, warm-started
at x_k, to a tolerance that shrinks with the outer optimality (a forcing
sequence; through the dual, whose test is the duality gap, a gap small
enough to bound the model's gradient by it).  A backtracking search along
d = x_model - x_k on F itself
(Armijo on the model's predicted decrease, as in newGLMNET and glmnet)
gives x_(k+1).  The search evaluates F from the margins A x_k and A d, so
each trial costs O(n_samples + n_features).  When no step decreases F (near
the solution the decrease can drown in the rounding of the model, whose
working responses lose digits where phi'' is small), the solve finishes with
the automatic configuration of the primal problem, warm-started.

A problem offers this through the capability ``"quadratic_model"`` and the
methods ``_loss_derivatives(z)`` (the per-sample s_i phi' and s_i phi'' at
the margins z) and ``_margin_loss(z)`` (sum_i s_i phi(z_i)).
"""
import time

import numpy as np

from .core import auto
from .core.assembly import TABLES
from .problems import LeastSquares

#: Armijo constant of the search: accept when F falls by this fraction of
#: the model's predicted decrease
ARMIJO = 1e-4
#: step shrink factor of the search, and the most halvings
SHRINK = 0.5
MAX_HALVINGS = 40
#: the inner tolerance: this fraction of the outer optimality, and at most
#: its square root times it (superlinear forcing)
FORCING = 0.1


def check_newton(problem):
    """Raise ValueError unless ``problem`` has a quadratic model."""
    if "quadratic_model" not in problem.capabilities:
        raise ValueError(f"formulation='newton' needs a linear model whose loss has a "
                         f"second derivative (LeastSquares, Logistic, Poisson, LinearSVM with "
                         f"the squared hinge); {type(problem).__name__} has none.")


def _optimality(problem, x):
    g = problem.gradient(x)
    if problem.penalty is None:
        return float(np.max(np.abs(g), initial=0.0)), g
    return problem.penalty.optimality(x, g), g


def _penalty_value(problem, x):
    return 0.0 if problem.penalty is None else float(problem.penalty.value(x))


def _objective(problem, z, x):
    """F at x from its margins z = A x."""
    return problem._margin_loss(z) + 0.5 * float(x @ (problem.l2 * x)) \
        + _penalty_value(problem, x)


def run_newton(problem, tol, max_iter, max_time, x0, random_state, solve, callback=None):
    """``(x, status, n_iter, optimality, inner_passes)``: Newton steps on
    the quadratic models of ``problem`` until the optimality measure (the
    gradient's inf-norm, or the KKT residual with a penalty) is at most
    ``tol``; status is one of "converged", "max_iter", "max_time",
    "interrupted" (Ctrl-C, in the model's solve or between steps),
    "diverged" and "stalled" (no step decreased F).

    ``solve`` is :func:`bcd.solve`, which solves the models (passed in by
    it: this driver sits below the entry point that dispatches to it).
    ``callback(k, x, F)``, if given, is called after each step ``k`` (from
    1) with the iterate and its objective; True stops (status "callback")."""
    check_newton(problem)
    t0 = time.perf_counter()
    n = problem.n_coordinates
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=np.float64)
    A = problem.A
    z = np.asarray(A @ x, dtype=np.float64).ravel()
    F = _objective(problem, z, x)
    opt, grad = _optimality(problem, x)
    first = opt
    status, k, inner = "max_iter", 0, 0
    try:
        while True:
            if not (np.isfinite(F) and np.isfinite(opt)):
                status = "diverged"
                break
            if opt <= tol:
                status = "converged"
                break
            if k >= max_iter:
                break
            left = None
            if max_time is not None:
                left = max_time - (time.perf_counter() - t0)
                if left <= 0.0:
                    status = "max_time"
                    break
            d1, d2 = problem._loss_derivatives(z)
            live = d2 > 0.0
            weights = np.where(live, d2, 0.0)
            if not np.any(weights > 0.0):
                status = "stalled"
                break
            target = np.where(live, z - d1 / np.where(live, d2, 1.0), 0.0)
            model = LeastSquares(A, target, l2=problem.l2, penalty=problem.penalty,
                                 sample_weight=weights)
            inner_tol = max(FORCING * opt * min(1.0, np.sqrt(opt / first)), 0.25 * tol)
            config, _ = auto.choose(model, TABLES)
            if config.get("formulation") == "dual":
                # the dual stops on the gap g >= q(x) - q*, and ||grad q||^2 <=
                # 2 L q(x) - q* for the largest curvature L <= sum_j L_j: a gap of
                # inner_tol^2 / (2 sum_j L_j) bounds the model's gradient by inner_tol
                inner_tol = inner_tol ** 2 / (2.0 * float(np.sum(model.lipschitz)))
            result = solve(model, x0=x, tol=inner_tol, max_time=left, random_state=random_state,
                           warn=False)
            inner += result.n_iter
            if result.status in ("interrupted", "max_time"):
                # Ctrl-C or the deadline inside the model's solve: stop the whole
                # call at the current iterate (the model's unfinished step is
                # dropped)
                status = result.status
                break
            d = np.asarray(result.x, dtype=np.float64) - x
            zd = np.asarray(A @ d, dtype=np.float64).ravel()
            # predicted decrease: grad^T d + g(x + d) - g(x) (<= 0 for a model descent)
            delta = float(grad @ d) + _penalty_value(problem, x + d) - _penalty_value(problem, x)
            if not delta < 0.0:
                status = "stalled"
                break
            step, accepted = 1.0, False
            for _ in range(MAX_HALVINGS):
                F_new = _objective(problem, z + step * zd, x + step * d)
                if F_new <= F + ARMIJO * step * delta:
                    accepted = True
                    break
                step *= SHRINK
            if not accepted:
                # near the solution the decrease can drown in the rounding of F:
                # take the model's step if it lowers the optimality measure
                opt_new, grad_new = _optimality(problem, x + d)
                if not opt_new < opt:
                    status = "stalled"
                    break
                x, z, k = x + d, z + zd, k + 1
                F = _objective(problem, z, x)
                opt, grad = opt_new, grad_new
            else:
                x = x + step * d
                z = z + step * zd
                F = F_new
                k += 1
                opt, grad = _optimality(problem, x)
            if callback is not None and callback(k, x, F):
                status = "callback"
                break
    except KeyboardInterrupt:
        # Ctrl-C in the Python part of a step (building the model, the
        # search): the last accepted iterate, with its own certificate
        status = "interrupted"
        opt, grad = _optimality(problem, x)
    if status == "stalled" and (max_time is None or time.perf_counter() - t0 < max_time):
        # the model's steps drown in rounding (its working responses lose
        # digits where phi'' is small): finish on the problem itself
        left = None if max_time is None else max(max_time - (time.perf_counter() - t0), 1e-9)
        result = solve(problem, formulation="primal", x0=x, tol=tol, max_time=left,
                       random_state=random_state, warn=False)
        inner += result.n_iter
        if result.objective <= F or result.optimality < opt:
            x, opt = np.asarray(result.x, dtype=np.float64), result.optimality
            status = result.status
        elif result.status in ("interrupted", "max_time"):
            status = result.status
    return x, status, k, opt, inner
