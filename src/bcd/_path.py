"""Regularization paths: solutions along a decreasing grid of L1 weights."""
import copy
import time

import numpy as np

from . import _interrupt
from ._result import ConvergenceWarning, warn_user
from .penalties import L1
from ._validation import check_scalar
from .problems import Problem

#: default grid: this many values ...
N_LAMBDAS = 100
#: ... from lambda_max down to lambda_max * EPS
EPS = 1e-3


class PathResult:
    """Outcome of :func:`bcd.path`.

    Attributes
    ----------
    lambdas : ndarray of shape (n_lambdas,)
        The grid values solved, decreasing: the whole grid, or its first
        values when the path was stopped (see ``status``).
    status : str
        ``"complete"`` (every grid value solved), ``"interrupted"`` (Ctrl-C:
        the values solved so far, the last one stopped where the signal
        found it) or ``"max_time"`` (the overall ``max_time`` ran out: the
        values solved before, the last one stopped by the deadline).
    message : str
        The status in words.
    grid : ndarray
        The whole grid asked for.
    coefs : ndarray of shape (n_lambdas, n_coordinates)
        The solution at every grid value.
    objectives, optimality : ndarray of shape (n_lambdas,)
        F(x) and the KKT residual at every solution.
    duality_gaps : ndarray of shape (n_lambdas,)
        The duality gap where the problem has one (NaN elsewhere).
    n_iter : ndarray of int, shape (n_lambdas,)
        Block updates per grid value.
    times : ndarray of shape (n_lambdas,)
        Wall-clock seconds per grid value.
    converged : ndarray of bool, shape (n_lambdas,)
    results : list of Result
        The full result of every solve.
    lambda_max : float
        The smallest lambda at which 0 is a solution (infinite when
        coordinates without L1 weight must move, as an intercept does;
        then ``lambdas`` must be given).
    """

    def __init__(self, lambdas, results, times, lambda_max, status="complete"):
        self.grid = lambdas
        self.lambdas = lambdas[:len(results)]
        self.status = status
        self.message = {
            "complete": "Solved at every grid value.",
            "interrupted": f"Interrupted (KeyboardInterrupt) at grid value {len(results)} of "
                           f"{len(lambdas)}: the values solved so far, the last one stopped "
                           f"at its current iterate.",
            "max_time": f"Stopped: reached max_time at grid value {len(results)} of "
                        f"{len(lambdas)}.",
        }[status]
        self.results = results
        self.coefs = np.array([r.x for r in results]).reshape(len(results), -1)
        self.objectives = np.array([r.objective for r in results])
        self.optimality = np.array([r.optimality for r in results])
        self.duality_gaps = np.array([np.nan if r.duality_gap is None else r.duality_gap
                                      for r in results])
        self.n_iter = np.array([r.n_iter for r in results], dtype=np.int64)
        self.times = np.asarray(times, dtype=np.float64)
        self.converged = np.array([r.converged for r in results], dtype=bool)
        self.lambda_max = lambda_max

    def __repr__(self):
        return (f"PathResult(n_lambdas={len(self.lambdas)}, converged={int(self.converged.sum())}"
                f"/{len(self.lambdas)}, time={self.times.sum():.3g}s, status={self.status!r})")


def lambda_max(problem):
    """The smallest lambda for which x = 0 minimizes f + lambda * g, with g
    the problem's L1 penalty at lambda = 1 (its weights ``w_i``):
    ``max_i |grad_i f(0)| / w_i`` (``-grad_i f(0)`` with ``positive``).

    Parameters
    ----------
    problem : bcd.problems.Problem
        A problem with an L1 penalty (:class:`bcd.L1`, optionally with
        ``positive=True``).  A scalar weight only marks the penalty as L1
        (its value is not used); an array of weights is kept relative.
        Coordinates of weight 0 are unpenalized and must have a zero
        gradient at 0.

    Returns
    -------
    float
        The value; every L1 weight ``lambda * w_i`` with ``lambda`` at
        least this value has the solution x = 0.

    Raises
    ------
    ValueError
        If the problem has no L1 penalty, or an unpenalized coordinate has a
        non-zero gradient at 0 (lambda_max is then infinite).

    Examples
    --------
    >>> import numpy as np, bcd
    >>> A = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> bcd.lambda_max(bcd.LeastSquares(A, [3.0, 1.0], penalty=bcd.L1(1.0)))  # max |A^T b|
    3.0
    """
    pen = _check_l1(problem)
    grad = np.asarray(problem.gradient(np.zeros(problem.n_coordinates)), dtype=np.float64)
    weights = _weights(pen, problem.n_coordinates)
    drive = -grad if pen.positive else np.abs(grad)
    free = weights == 0
    if np.any(free & (drive != 0)):
        raise ValueError("lambda_max is infinite: a coordinate without L1 weight has a "
                         "non-zero gradient at 0.")
    ratio = np.where(free, 0.0, drive / np.where(free, 1.0, weights))
    return max(float(np.max(ratio, initial=0.0)), 0.0)


@_interrupt.records
def path(problem, lambdas=None, *, screening=True, **solve_options):
    """Solve ``problem`` along a decreasing grid of L1 weights, warm-starting
    each solve from the previous solution.

    Parameters
    ----------
    problem : bcd.problems.Problem
        A problem with an L1 penalty (``bcd.L1``, optionally with
        ``positive=True``).  Its weights, if an array, are kept relative: at
        grid value lambda the penalty is ``lambda * w_i |x_i|`` with ``w`` the
        penalty's ``lam`` (a scalar ``lam`` only marks the problem as
        L1-penalized; its value is not used).  The problem is not modified.
    lambdas : array-like, optional
        Positive, finite, decreasing grid.  Default: 100 values, geometric,
        from :func:`lambda_max` down to ``lambda_max / 1000``.
    screening : bool, default=True
        Safe screening where the problem has it (gap safe rules for the
        Lasso), within each solve on working sets (see :func:`bcd.solve`).
    **solve_options
        Passed to :func:`bcd.solve` for every grid value (``x0`` starts the
        first), except ``max_time``, which is the time limit of the whole
        path: each grid value is solved with the time that remains.

    Returns
    -------
    PathResult
        With ``status`` ``"complete"``, or ``"interrupted"`` / ``"max_time"``
        when Ctrl-C or the deadline stopped the path: it then holds the grid
        values solved so far (the last one stopped where it was, as
        :func:`bcd.solve` stops), and a ``ConvergenceWarning`` says so
        (unless ``warn=False``).  The path never goes on to the next grid
        value after Ctrl-C.

    Raises
    ------
    KeyboardInterrupt
        When Ctrl-C comes before the first grid value has an iterate (in
        the set-up of its solve).

    Examples
    --------
    >>> import numpy as np, bcd
    >>> A, b = bcd.datasets.make_paper_dataset("A", n_samples=50, n_features=200)
    >>> result = bcd.path(bcd.LeastSquares(A, b, penalty=bcd.L1(1.0)),
    ...                   np.geomspace(1e4, 1e3, 5))
    >>> result.coefs.shape, bool(result.converged.all())
    ((5, 200), True)
    >>> np.count_nonzero(result.coefs, axis=1).tolist()   # the support grows along the path
    [3, 5, 8, 14, 25]
    """
    from ._solve import solve

    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a bcd problem instance, got {type(problem).__name__}.")
    pen = _check_l1(problem)
    n = problem.n_coordinates
    if lambdas is None:
        lmax = lambda_max(problem)
        if lmax <= 0:
            raise ValueError("lambda_max is 0 (x = 0 is optimal for every lambda); give "
                             "lambdas explicitly.")
        grid = np.geomspace(lmax, lmax * EPS, N_LAMBDAS)
    else:
        grid = _check_grid(lambdas)
        try:
            lmax = lambda_max(problem)
        except ValueError:
            # unpenalized coordinates that must move: 0 is never a solution
            lmax = np.inf
    weights = _weights(pen, n)
    if not isinstance(screening, (bool, np.bool_)):
        raise TypeError(f"screening must be True or False, got {screening!r}.")
    x = solve_options.pop("x0", None)
    max_time = solve_options.pop("max_time", None)
    if max_time is not None and not (isinstance(max_time, (int, float, np.floating))
                                     and max_time == np.inf):
        max_time = check_scalar(max_time, "max_time", low=0.0, low_inclusive=False)
    deadline = None if max_time is None or max_time == np.inf else \
        time.perf_counter() + max_time
    results, times = [], []
    status = "complete"
    overhead = 0.0      # seconds of a solve outside its iteration loop, as last measured
    try:
        for lam in grid:
            start = time.perf_counter()
            if deadline is not None:
                if start + overhead >= deadline and results:
                    status = "max_time"
                    break
                # the solve's max_time holds for its iteration loop: leave
                # the time of its set-up and its final evaluation
                solve_options["max_time"] = max(deadline - start - overhead, 1e-9)
            point = copy.copy(problem)
            point._set_penalty(L1(lam * weights, positive=pen.positive))
            result = solve(point, x0=x, screening=bool(screening), **solve_options)
            times.append(time.perf_counter() - start)
            overhead = max(times[-1] - result.iteration_time, 0.0)
            results.append(result)
            x = result.x
            if result.status in ("interrupted", "max_time"):
                status = result.status
                break
    except KeyboardInterrupt:
        # Ctrl-C in the Python part of a solve (its set-up or report): stop
        # with the values solved so far
        if not results:
            raise
        status = "interrupted"
    if deadline is not None and status == "complete" and len(results) < grid.size:
        status = "max_time"
    out = PathResult(grid, results, times, lmax, status)
    if status != "complete" and solve_options.get("warn", True):
        warn_user(f"path: {out.message}", ConvergenceWarning)
    return out


def _check_l1(problem):
    pen = problem.penalty
    if not isinstance(pen, L1):
        raise ValueError(f"path needs a problem with an L1 penalty (penalty=bcd.L1(...)); "
                         f"{type(problem).__name__} has penalty {pen!r}.")
    return pen


def _weights(pen, n):
    lam = np.asarray(pen.lam, dtype=np.float64)
    return np.ones(n) if lam.ndim == 0 else lam.copy()


def _check_grid(lambdas):
    try:
        grid = np.array(lambdas, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"lambdas must be a 1-d array of numbers, got {lambdas!r}.") from None
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(f"lambdas must be a non-empty 1-d array, got shape {grid.shape}.")
    if np.any(np.isnan(grid)) or not np.all(np.isfinite(grid)):
        raise ValueError("lambdas contains NaN or infinity.")
    if np.any(grid <= 0):
        raise ValueError(f"lambdas must be positive, got minimum {grid.min()!r}.")
    if np.any(np.diff(grid) > 0):
        raise ValueError("lambdas must be decreasing (largest first): warm starts follow the "
                         "grid from sparse to dense solutions.")
    return grid
