"""The Fenchel dual of an L2-regularized linear model, solved by coordinate
ascent over the samples.

For P(w) = sum_i s_i phi(a_i^T w; t_i) + 1/2 sum_j r_j w_j^2 with every
r_j > 0, the dual has one variable per sample (per sample and class for the
multinomial model), and the primal point of a dual point is
w = R^{-1} A^T beta, kept up to date by every coordinate step.  On wide data
(fewer samples than features) the dual has fewer, better-conditioned
coordinates than the primal; this is the method of liblinear's dual solvers
(Hsieh et al., 2008; Yu, Huang and Lin, 2011).

A problem offers its dual through the capability ``"dual"`` and the method
``_dual_loss()``, which returns ``(loss, target, weights)`` for the compiled
loops of :mod:`bcd.problems._dual` (see there for the losses and the
stopping test).  :func:`solve_dual` runs them and returns the primal
solution with its certificates; :func:`bcd.solve` calls it for
``formulation="dual"``.
"""
import dataclasses
import time

import numpy as np
import scipy.sparse as sp

from ..core.auto import register_formulation
from ._dual import GAP_ROUNDING, linear_dual, logistic_dual_value

#: bcd rule names and the sample orders they select in the dual
DUAL_RULES = {"cyclic": "cyclic", "random": "random", "gs": "greedy"}

#: how often a solve whose loops converged, but whose returned x misses tol
#: by rounding, continues at a ten times smaller tolerance
REFINEMENTS = 3

#: the logit at which a logistic dual variable starts: alpha_i = s_i
#: sigmoid(START_LOGIT), small, so that w starts near 0
START_LOGIT = -8.0


@dataclasses.dataclass
class DualOutcome:
    """What :func:`solve_dual` returns."""
    x: np.ndarray            #: the primal solution w (float64)
    dual: np.ndarray         #: the dual variables alpha (one per sample)
    status: str
    n_epochs: int
    duality_gap: float       #: the stopping measure (see linear_dual)
    n_tests: int
    objective: float = None  #: F(x), when computed


def check_dual(problem):
    """Raise ValueError unless ``problem`` has a dual (an L2-regularized loss
    with l2 > 0 on every coordinate and no penalty)."""
    name = type(problem).__name__
    if "dual" not in problem.capabilities:
        raise ValueError(f"formulation='dual' needs a problem with a dual formulation "
                         f"(LeastSquares, Logistic, Multinomial, LinearSVM); {name} has none.")
    if problem.penalty is not None:
        raise ValueError(f"formulation='dual' solves L2-regularized problems without a "
                         f"penalty; {name} has penalty={problem.penalty!r}.  Use "
                         f"formulation='primal'.")
    free = _unpenalized(problem)
    if free.size > problem._dual_unpenalized or free.size == problem.n_coordinates:
        allowed = (" but at most one (an intercept, minimized as a block of its own)"
                   if problem._dual_unpenalized else "")
        raise ValueError(f"formulation='dual' needs l2 > 0 on every coordinate{allowed} (the "
                         f"dual of {name} exists only with a strictly convex L2 term); got "
                         f"l2 = 0 on {free.size} of {problem.n_coordinates} coordinates.  Use "
                         f"formulation='primal'.")


def _unpenalized(problem):
    """The coordinates with l2 = 0."""
    return np.flatnonzero(np.broadcast_to(np.asarray(problem.l2), (problem.n_coordinates,))
                          == 0.0)


def has_dual(problem):
    """Whether :func:`check_dual` accepts ``problem``."""
    try:
        check_dual(problem)
    except ValueError:
        return False
    return True


#: the automatic configuration's dual rows apply where the dual does
register_formulation("dual", has_dual)


def dual_rows(problem, free=None):
    """The rows of ``problem.A`` for the compiled loops without the column
    ``free`` (None: all columns), cached on the problem (a transient
    attribute: a C-ordered copy of dense data, the CSR form of sparse
    data)."""
    cache = problem.__dict__.setdefault("_dual_rows", {})
    rows = cache.get(free)
    if rows is None:
        A = problem.A
        if free is not None:
            keep = np.delete(np.arange(A.shape[1]), free)
            A = A[:, keep]
        if sp.issparse(A):
            R = sp.csr_matrix(A)
            R.sort_indices()
            rows = ("csr", np.ascontiguousarray(R.indptr, dtype=np.int32),
                    np.ascontiguousarray(R.indices, dtype=np.int32),
                    np.ascontiguousarray(R.data, dtype=np.float64), A.shape[1])
        else:
            rows = ("dense", np.ascontiguousarray(A, dtype=np.float64))
        cache[free] = rows
    return rows


def _ridge(problem, free):
    r = np.broadcast_to(np.asarray(problem.l2, dtype=np.float64), (problem.n_coordinates,))
    if free is not None:
        r = np.delete(r, free)
    if np.all(r == r[0]):
        return np.array([float(r[0])])
    return np.ascontiguousarray(r)


def _signed(loss, target, alpha, weights):
    """beta, the signed dual variables, from the state of the loops."""
    if loss == "squared":
        return alpha
    if loss == "logistic":
        return target * weights * _sigmoid(alpha)
    return target * alpha


def _sigmoid(u):
    return np.exp(-np.logaddexp(0.0, -u))


def _start(loss, target, weights, problem, x0):
    """The dual variables the loops start from: for least squares and the
    logistic loss the dual point matched to the primal ``x0`` where one is
    given (alpha_i = -s_i phi'(a_i^T x0)), else small (alpha = 0; for the
    logistic loss logits START_LOGIT).  The hinge losses always start at 0:
    their matched point puts every sample inside the margin at its bound,
    whose primal point R^{-1} A^T beta can be far worse than x0."""
    m = target.shape[0]
    if x0 is None or not np.any(x0) or loss in ("hinge", "squared_hinge"):
        if loss == "logistic":
            return np.full(m, START_LOGIT)
        return np.zeros(m)
    z = np.asarray(problem.A @ x0).ravel()
    if loss == "squared":
        return target - z
    if loss == "logistic":
        # alpha = s sigmoid(-t z): the logit is -t z, bounded away from the ends
        return np.clip(-target * z, -30.0, 30.0)


def dual_value(loss, target, alpha, weights, beta, ridge, A, mu=None, col0=None):
    """D(alpha), computed with NumPy from the dual variables alone (for the
    rows a_i - col0_i mu when ``mu`` is given)."""
    v = np.asarray(A.T @ beta).ravel()
    if mu is not None:
        v = v - float(beta @ col0) * mu
    quad = 0.5 * float(v @ (v / ridge))
    live = weights > 0
    if loss == "squared":
        a, s = alpha[live], weights[live]
        return float(a @ target[live] - 0.5 * np.sum(a * a / s)) - quad
    if loss == "logistic":
        return logistic_dual_value(alpha, weights) - quad
    if loss == "hinge":
        return float(np.sum(alpha)) - quad
    a, s = alpha[live], weights[live]
    return float(np.sum(a - 0.25 * a * a / s)) - quad


def solve_dual(problem, tol, max_epochs, max_time, rule, random_state, x0=None,
               shrinking=True, extrapolation=0, relative=False):
    """Solve ``problem`` through its dual; see the module docstring.

    ``rule``: a key of ``DUAL_RULES``; ``max_epochs``: passes over the
    samples; ``max_time``: seconds (None: no limit); ``relative``: stop
    when the gap is at most ``tol`` times the objective instead of ``tol``."""
    check_dual(problem)
    if rule not in DUAL_RULES:
        raise ValueError(f"rule must be one of {sorted(DUAL_RULES)} with formulation='dual', "
                         f"got {rule!r}.")
    if hasattr(problem, "_solve_dual"):          # a problem with its own dual loops
        if relative:
            # its loops test the gradient: scaled by the objective at 0
            scale = abs(problem.objective(np.zeros(problem.n_coordinates)))
            tol = tol * (scale if np.isfinite(scale) and scale > 0.0 else 1.0)
        return _own_dual(problem, tol, max_epochs, max_time, rule, random_state, x0)
    loss, target, weights = problem._dual_loss()
    target = np.ascontiguousarray(target, dtype=np.float64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    free = _unpenalized(problem)
    free = int(free[0]) if free.size else None
    ridge = _ridge(problem, free)
    rows = dual_rows(problem, free)
    A = problem.A
    col0 = mu = None
    if free is not None:
        col0 = np.asarray(A[:, [free]].todense() if sp.issparse(A) else A[:, free],
                          dtype=np.float64).ravel()
        A = A[:, np.delete(np.arange(A.shape[1]), free)]
        norm = float((weights * col0) @ col0)
        if norm > 0.0:
            # center the rows (implicitly) along the column: a_i - col0_i mu
            # with sum_i s_i col0_i (a_i - col0_i mu) = 0, which decouples the
            # intercept from w (for a column of ones: the weighted mean)
            mu = np.asarray((weights * col0) @ A, dtype=np.float64).ravel() / norm
    alpha = _start(loss, target, weights, problem, x0)
    alpha[weights == 0] = START_LOGIT if loss == "logistic" else 0.0
    c = 0.0 if free is None or x0 is None else float(x0[free])
    rs = np.random.RandomState(_seed(random_state))
    full_ridge = np.broadcast_to(ridge, (A.shape[1],))
    t0 = time.perf_counter()
    epochs = n_tests = 0
    loop_tol = float(tol)
    for _ in range(REFINEMENTS + 1):
        # the loops keep w = R^{-1} A^T beta from here (recomputed: no drift)
        beta = _signed(loss, target, alpha, weights)
        w = np.zeros(A.shape[1]) if not np.any(beta) else \
            np.ascontiguousarray(np.asarray(A.T @ beta, dtype=np.float64).ravel() / ridge)
        left = None if max_time is None else max(max_time - (time.perf_counter() - t0), 1e-9)
        status, done, _, _, tests, c = linear_dual(
            rows, target, weights, ridge, loss, alpha, w, loop_tol, int(max_epochs - epochs),
            float(left or 0.0), DUAL_RULES[rule], int(rs.randint(0, 2**31)), bool(shrinking),
            int(extrapolation), None if free is None else (col0, c, mu), bool(relative))
        epochs += done
        n_tests += tests
        beta = _signed(loss, target, alpha, weights)
        x = w if free is None else np.insert(w, free, c)
        with np.errstate(all="ignore"):
            primal = problem.objective(x)
            if free is None:
                dual_obj = dual_value(loss, target, alpha, weights, beta, full_ridge, A)
            else:
                # the dual of the problem with the intercept fixed at c: rows
                # centered along col0, margins shifted by col0 c', c' = c + mu^T w
                shift = 0.0 if mu is None else float(mu @ w)
                dual_obj = dual_value(loss, target, alpha, weights, beta, full_ridge, A,
                                      mu, col0) - float(beta @ (col0 * (c + shift)))
            # the certificate of the returned x, recomputed from it
            gap = primal - dual_obj
            if free is not None and loss != "hinge":
                # with the intercept's promised decrease (see linear_dual; the
                # hinge's piecewise-linear c is minimized exactly there)
                z = np.asarray(problem.A @ x).ravel()
                d1, d2 = problem._loss_derivatives(z)
                h, curv = float(col0 @ d1), float(col0 ** 2 @ d2)
                gap += h * h / (2.0 * curv) if curv > 0 else (0.0 if h == 0 else np.inf)
        if not np.isfinite(gap):
            status = "diverged"
        floor = GAP_ROUNDING * (abs(primal) + abs(dual_obj))
        wanted = tol * abs(primal) if relative else tol
        if status != "converged" or gap <= max(wanted, floor):
            break
        # converged on the loops' state, not quite at the returned x (rounding
        # of the incremental w): continue to a tighter tolerance
        loop_tol *= 0.1
        if epochs >= max_epochs:
            status = "max_iter"
            break
    else:
        status = "max_iter" if gap > max(wanted, floor) else status
    dual = weights * _sigmoid(alpha) if loss == "logistic" else alpha.copy()
    return DualOutcome(x, dual, status, epochs, float(gap), n_tests, float(primal))


def _own_dual(problem, tol, max_epochs, max_time, rule, random_state, x0):
    """:func:`solve_dual` for a problem with dual loops of its own (the
    multinomial model: its ``_solve_dual``, which stops when the gradient's
    inf-norm reaches tol, a stricter test than the gap's there), started
    from the dual point matched to ``x0`` (the softmax of its scores)."""
    p0 = None
    if x0 is not None and np.any(x0):
        scores = np.asarray(problem.A @ problem.coef(x0))
        p0 = np.exp(scores - np.logaddexp.reduce(scores, axis=1, keepdims=True))
    x, P, epochs, status, _, gap = problem._solve_dual(
        tol, max_epochs, max_time, DUAL_RULES[rule], random_state, p0)
    if status == "converged" and gap > tol:
        status = "max_iter" if epochs >= max_epochs else status
    x = np.asarray(x, dtype=np.float64)
    return DualOutcome(x, P, status, epochs, float(gap), 0, problem.objective(x))


def _seed(random_state):
    """Two 32-bit words for the loops' generator from a ``random_state``."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31))
    return np.random.RandomState(random_state).randint(0, 2**31)
