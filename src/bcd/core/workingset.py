"""Working sets: an outer loop that solves a sequence of restricted problems.

For a penalized problem most coordinates are at a kink of g at the
solution (zero for L1, at a bound for a box), so block coordinate descent
spends most of its work confirming that they stay there.  The outer loop
of :func:`run` instead

1. recomputes the state from x and scores every coordinate by its
   optimality measure, the distance of ``-grad_i f(x)`` to the
   subdifferential of ``g_i`` at ``x_i`` (the GS-q measure of the paper);
   the largest score is the global KKT residual, and the loop stops when it
   is at most ``tol`` (or, for problems with a duality gap and a
   ``gap_tol``, when the gap is at most ``gap_tol``);
2. takes as working set the generalized support (coordinates where g is
   differentiable: non-zero for L1, strictly inside a box) and the
   highest-scoring other coordinates, ``max(p0, 2 |support|)`` in all, so
   the set doubles while the support fills it;
3. runs the configured block coordinate descent (any rule and update, on
   fixed or variable blocks of the working set) until the optimality
   measure on the working set is at most ``INNER_FRACTION`` times its value
   at the start (the global one, unless screened coordinates hold it), with
   Anderson extrapolation when the rule has it.

With ``screening`` on a problem that provides safe screening (gap safe
rules for the Lasso, :meth:`bcd.LeastSquares.safe_zeros`), coordinates
proven zero at the solution are set to zero and never enter a working set.

Every round of the outer loop counts toward ``max_iter``: a round whose
inner run makes no block update is charged one iteration, so the loop ends
within ``max_iter`` rounds whatever happens.  An inner run that meets its
target without a single update says that its own evaluation of the
optimality measure on the working set is below ``INNER_FRACTION`` times the
outer one at the same iterate: the two differ by rounding alone, so the
measure is at the floating-point floor of its computation and ``tol`` is
below it.  The solve then ends as converged at the attainable accuracy,
with a note (``WorkingSetInfo.floor``).
"""
import time

import numpy as np

from . import _engine
from ._extrapolate import CyAnderson

#: smallest working set
INITIAL_SIZE = 100
#: the inner solve stops at this fraction of the outer optimality measure
INNER_FRACTION = 0.3
#: passes over the working set between inner stopping tests
INNER_CHECK_PASSES = 5

_STATUS = {name: code for code, name in _engine.STATUS_NAMES.items()}


class WorkingSetInfo:
    """What the outer loop did: ``sizes`` of the working sets, ``n_screened``
    coordinates discarded by safe screening, ``duality_gap`` at the end
    (None when the problem has none), ``gap_converged`` whether the gap test
    stopped the solve, the ``n_iter`` and ``loop_time`` of the inner runs so
    far, ``charged`` the iterations counted toward ``max_iter`` (``n_iter``
    plus one per round without an update) and ``floor``: the optimality
    measure at which rounding stopped the solve (None unless it did)."""

    __slots__ = ("sizes", "n_screened", "duality_gap", "gap_converged", "n_iter", "loop_time",
                 "charged", "floor")

    def __init__(self):
        self.sizes = []
        self.n_screened = 0
        self.duality_gap = None
        self.gap_converged = False
        self.n_iter = 0
        self.loop_time = 0.0
        self.charged = 0
        self.floor = None


def run(parts, problem, *, max_iter, tol, max_time=0.0, callback=None, callback_every=1,
        progress=None, monitor=None, extrapolation=0, working_set=True, screening=False,
        gap_tol=None):
    """Solve ``problem`` from the current iterate of ``parts`` (an
    :class:`~bcd.core.assembly.Assembly`) with working sets.

    Returns ``(outcome, info)``: an :class:`bcd.core._engine.Outcome` whose
    history holds the outer stopping tests, and a :class:`WorkingSetInfo`.
    """
    state = parts.state
    info = WorkingSetInfo()
    hist = ([], [], [], [])
    if monitor is not None:
        monitor.begin(state)
    try:
        status, opt, obj, block = _outer_loop(
            parts, problem, info, hist, max_iter=max_iter, tol=tol, max_time=max_time,
            callback=callback, callback_every=callback_every, progress=progress,
            monitor=monitor, extrapolation=extrapolation, screening=screening,
            gap_tol=gap_tol)
    except KeyboardInterrupt:
        # Ctrl-C between two inner runs: stop at the current iterate, as
        # the engine does within one
        status, block = "interrupted", None
        opt, obj = (hist[2][-1] if hist[2] else np.nan), state.get_objective()
    history = [np.asarray(c, dtype=float) for c in hist]
    outcome = _engine.Outcome(info.n_iter, _STATUS[status], opt, obj, history, info.loop_time,
                              block)
    return outcome, info


def _outer_loop(parts, problem, info, hist, *, max_iter, tol, max_time, callback,
                callback_every, progress, monitor, extrapolation, screening, gap_tol):
    """The loop of :func:`run`: records the outer tests in ``hist`` and the
    inner runs' iterations and time in ``info``; returns ``(status,
    optimality, objective, indefinite block or None)``."""
    t0 = time.perf_counter()
    state = parts.state
    n = problem.n_coordinates
    active = np.asarray(state.lipschitz) > 0
    screened = np.zeros(n, dtype=bool)
    can_screen = screening and "duality_gap" in problem.capabilities
    wants_gap = can_screen or gap_tol is not None
    anderson = CyAnderson(extrapolation) if extrapolation else None
    inner_progress = None
    if progress is not None:
        def inner_progress(it, obj, ws_opt, _t):
            progress.show(progress.format(it, obj, ws_opt) + " on the working set")
    status = None
    while True:
        scores, smooth, grad = state.kkt_scores()
        opt = float(scores.max()) if n else 0.0
        obj = state.get_objective()
        elapsed = time.perf_counter() - t0
        it = info.n_iter
        for column, value in zip(hist, (it, obj, opt, elapsed)):
            column.append(value)
        if progress is not None:
            progress(it, obj, opt)
        if not (np.isfinite(opt) and np.isfinite(obj)):
            status = "diverged"
            break
        zeros = None
        if wants_gap:
            info.duality_gap, zeros = problem.safe_zeros(state, grad)
            if gap_tol is not None and info.duality_gap is None:
                raise ValueError(f"gap_tol needs a duality gap, which {type(problem).__name__}"
                                 f" with {problem.penalty!r} does not have (the Lasso: "
                                 f"L1 with positive weights and l2 = 0).")
        if opt <= tol:
            status = "converged"
            break
        if gap_tol is not None and info.duality_gap is not None and info.duality_gap <= gap_tol:
            status = "converged"
            info.gap_converged = True
            break
        if status is not None:                   # the inner run stopped the solve
            break
        if info.charged >= max_iter:
            status = "max_iter"
            break
        if max_time and elapsed >= max_time:
            status = "max_time"
            break
        if can_screen and zeros is not None:
            fresh = zeros & ~screened
            screened |= zeros
            x = state.get_x()
            moved = np.flatnonzero(fresh & (x != 0.0))
            if moved.size:
                # proven zero at the solution: put them there once
                x[moved] = 0.0
                state.set_x(x)
                if monitor is not None:
                    monitor.observe(state, moved, it)
                continue
        info.n_screened = int(np.count_nonzero(screened))

        candidates = active & ~screened
        support = smooth & candidates
        size = max(INITIAL_SIZE, 2 * int(np.count_nonzero(support)))
        priority = np.where(candidates, scores, -1.0)
        priority[support] = np.inf
        eligible = int(np.count_nonzero(priority > 0))
        size = min(size, eligible)
        if size == 0:
            # every violation is on a coordinate that cannot move
            status = "stalled"
            break
        ws = np.sort(np.argpartition(-priority, size - 1)[:size]).astype(np.int32)
        ws_opt = float(scores[ws].max())
        if ws_opt == 0.0:
            # the set is optimal: what remains is on coordinates proven zero
            # at the solution (already there), up to rounding
            status = "stalled"
            break
        info.sizes.append(size)
        parts.restrict(ws)
        remaining = 0.0
        if max_time:
            remaining = max(max_time - (time.perf_counter() - t0), 1e-9)
        out = parts.run(max_iter - info.charged, INNER_FRACTION * ws_opt, remaining,
                        INNER_CHECK_PASSES * parts.pass_length, callback, callback_every,
                        inner_progress, monitor, scope=ws, extrapolation=anderson,
                        first_iteration=it)
        info.n_iter += out.n_iter
        info.charged += max(out.n_iter, 1)
        info.loop_time += out.loop_time
        name = out.status_name
        if name == "converged" and out.n_iter == 0:
            # the inner run's measure at this very iterate is below a
            # fraction of the outer one: they differ by rounding, and no
            # update can bring the measure below tol (see the module notes)
            info.floor = opt
            status = "converged"
            break
        if name in ("interrupted", "indefinite", "diverged"):
            # stop at once, with the inner run's values
            for column, value in zip(hist, (info.n_iter, out.objective, out.optimality,
                                            time.perf_counter() - t0)):
                column.append(value)
            return name, out.optimality, out.objective, out.block
        if name in ("callback", "stalled", "max_time"):
            # certify the iterate once more, then stop with this status
            status = name
    return status, opt, obj, None
