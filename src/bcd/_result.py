"""Solver results."""
import sys
import warnings

import numpy as np


def warn_user(message, category=UserWarning):
    """``warnings.warn`` pointing at the first caller outside the bcd
    package, however deep in bcd (and its wrappers) the warning arises."""
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and frame.f_globals.get("__name__", "").split(".")[0] == "bcd":
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


class ConvergenceWarning(UserWarning):
    """Raised when a solve stops before its optimality test passes."""


class History:
    """Values recorded at every stopping test of a run.

    Attributes
    ----------
    iteration : ndarray of int
        Iteration counts (0 is the starting point).
    objective : ndarray
        Objective values f(x_k).
    optimality : ndarray
        Optimality measures at those iterations (see :class:`Result`).
    time : ndarray
        Seconds since the start of the iteration loop.
    """

    __slots__ = ("iteration", "objective", "optimality", "time")

    def __init__(self, iteration, objective, optimality, time):
        self.iteration = np.asarray(iteration, dtype=np.int64)
        self.objective = np.asarray(objective, dtype=np.float64)
        self.optimality = np.asarray(optimality, dtype=np.float64)
        self.time = np.asarray(time, dtype=np.float64)

    def __reduce__(self):
        # explicit, so that every pickle protocol (0 and 1 included, which
        # cannot pickle a class with __slots__ by themselves) rebuilds it
        return (History, (self.iteration, self.objective, self.optimality, self.time))

    def __len__(self):
        return self.iteration.shape[0]

    def __getitem__(self, i):
        return (int(self.iteration[i]), float(self.objective[i]),
                float(self.optimality[i]), float(self.time[i]))

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return f"History({len(self)} records)"


class Result:
    """Outcome of :func:`bcd.solve`.

    Attributes
    ----------
    x : ndarray of shape (n_coordinates,)
        Final iterate, in the problem's dtype (for multi-class problems use
        the problem's ``coef`` to reshape it).
    objective : float
        F(x) = f(x) + g(x) at the final iterate (g: the problem's penalty,
        if any).
    optimality : float
        ``||grad f(x)||_inf`` at the final iterate, recomputed exactly (not
        from incrementally updated state); with a penalty g, the largest
        distance of ``-grad_i f(x)`` to the subdifferential of g_i at x_i
        (zero exactly at a solution).  It is measured on the objective as
        documented by the problem, without any 1/n scaling.
    duality_gap : float or None
        For least squares with an L1 penalty (l2 = 0, all weights
        positive): P(x) - D(theta) >= F(x) - F*, with theta the residual
        b - Ax scaled into the dual feasible set.  With
        ``formulation="dual"``: P(x) - D(alpha) >= F(x) - F* at the dual
        variables ``dual`` (with one unpenalized coordinate, the gap with
        that coordinate fixed plus the decrease that minimizing over it
        promises, which tracks F(x) - F* without bounding it strictly); it
        is then also ``optimality``.  None otherwise.
    dual : ndarray or None
        With ``formulation="dual"``: the dual variables at the solution,
        one per sample (n_samples x n_classes for :class:`bcd.Multinomial`):
        alpha_i = -s_i phi'(a_i^T x) at the optimum (the residual b - Ax for
        least squares).  None otherwise.
    active_set_iteration : int or None
        With a penalty: the last iteration that changed the support or a
        sign (for boxes: which bound a coordinate sits on); from then on the
        iterates stayed on one manifold.  None without a penalty.
    support_iteration : int or None
        With ``target_support``: the first iteration whose iterate had that
        support (None if it never did).
    n_iter : int
        Number of block updates performed.
    converged : bool
        True when ``optimality <= tol``, and when the solve reached the
        attainable accuracy: a working-set solve whose tol is below the
        rounding floor of its optimality measure (two evaluations at the
        same x differ by more than tol) ends converged there, with
        ``message`` saying so.
    status : str
        One of ``"converged"``, ``"max_iter"``, ``"max_time"``,
        ``"callback"``, ``"stalled"``, ``"diverged"`` (a non-finite
        objective or optimality) and ``"interrupted"`` (Ctrl-C or another
        signal).
    message : str
        Why the solver stopped, in words.
    history : History
        Objective, optimality and time at every stopping test.
    time : float
        Wall-clock seconds of the solve from the first to the last
        optimality evaluation (both included).
    iteration_time : float
        Seconds spent in the iterations proper: ``time`` without the initial
        and final exact optimality evaluations.  ``iteration_time / n_iter``
        is the cost of one iteration.
    options : dict
        The resolved solver options (rule, blocks, update, ...).
    """

    def __init__(self, x, objective, optimality, n_iter, converged, status, message,
                 history, time, options, iteration_time=0.0, duality_gap=None,
                 active_set_iteration=None, support_iteration=None, dual=None):
        self.duality_gap = duality_gap
        self.dual = dual
        self.active_set_iteration = active_set_iteration
        self.support_iteration = support_iteration
        self.x = x
        self.objective = objective
        self.optimality = optimality
        self.n_iter = n_iter
        self.converged = converged
        self.status = status
        self.message = message
        self.history = history
        self.time = time
        self.iteration_time = iteration_time
        self.options = options

    def __repr__(self):
        return (f"Result(converged={self.converged}, n_iter={self.n_iter}, "
                f"objective={self.objective:.10g}, optimality={self.optimality:.3e}, "
                f"status={self.status!r})")
