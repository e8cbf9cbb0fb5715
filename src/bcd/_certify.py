"""Certificates of the array the user receives.

The engine iterates in float64 whatever the problem's dtype, and the result
is cast to it.  For float32 problems the cast moves x by up to half a unit
in the last place of float32 (about 6e-8 relative), which can raise the
optimality measure and the duality gap far above what the float64 iterate
had.  :func:`certify_returned` recomputes them at the returned array, so
that ``converged``, ``optimality``, ``objective`` and ``duality_gap``
describe it, and says in the status and message when that array cannot meet
``tol``.
"""
import warnings

import numpy as np

from ._result import ConvergenceWarning


class Certificate:
    """What :class:`bcd.Result` reports about its ``x`` (None: the array
    given to :func:`certify_returned`)."""

    __slots__ = ("objective", "optimality", "duality_gap", "status", "message", "converged",
                 "x")

    def __init__(self, objective, optimality, duality_gap, status, message, converged,
                 x=None):
        self.objective = objective
        self.optimality = optimality
        self.duality_gap = duality_gap
        self.status = status
        self.message = message
        self.converged = converged
        self.x = x


def _inside_bounds(penalty, x_out):
    """``x_out`` with the entries that rounding put outside the bounds of a
    box penalty moved one unit in the last place inwards (a copy; the array
    itself when none is outside)."""
    lower, upper = getattr(penalty, "lower", None), getattr(penalty, "upper", None)
    if lower is None or upper is None:
        return x_out
    n = x_out.shape[0]
    lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), (n,))
    hi = np.broadcast_to(np.asarray(upper, dtype=np.float64), (n,))
    wide = np.asarray(x_out, dtype=np.float64)
    above, below = wide > hi, wide < lo
    if not (above.any() or below.any()):
        return x_out
    x_out = x_out.copy()
    x_out[above] = np.nextafter(x_out[above], x_out.dtype.type(-np.inf))
    x_out[below] = np.nextafter(x_out[below], x_out.dtype.type(np.inf))
    return x_out


def certify_returned(problem, x, x_out, cert, *, tol, state=None, gap_tol=None,
                     gap_converged=False, gap_test=False, warn=True):
    """The :class:`Certificate` of the returned ``x_out`` (the float64
    iterate ``x`` cast to the problem's dtype), given ``cert``, that of ``x``.
    Its ``x`` is the array to return: ``x_out``, or a copy with the entries
    that the cast put outside a box moved back inside.

    Unchanged when the cast is exact (float64 problems).  Otherwise the
    objective, the optimality measure and the duality gap are recomputed at
    ``x_out`` (on the compiled ``state`` when given, which is then left at
    ``x_out``; else with the problem's NumPy oracles), and a solve that
    converged in float64 stays converged only if ``x_out`` meets the same
    test (``tol``, or ``gap_tol`` when the gap stopped it; a solve stopped
    at the rounding floor of its measure keeps that floor as its target;
    ``gap_test``: the solve's optimality measure is its duality gap, as for
    ``formulation="dual"``).
    If it does not, the status becomes ``"stalled"``, the message says
    why, and a ``ConvergenceWarning`` is issued when ``warn``.
    """
    if cert.status == "diverged" or x_out.dtype == np.float64:
        return cert
    # a bound that the dtype cannot represent: the cast may round x just
    # outside the box, where F is infinite; one unit inwards puts it back
    x_out = _inside_bounds(problem.penalty, x_out)
    x_cast = np.asarray(x_out, dtype=np.float64)
    if np.array_equal(x_cast, x):
        return Certificate(cert.objective, cert.optimality, cert.duality_gap, cert.status,
                           cert.message, cert.converged, x_out)
    gap = cert.duality_gap
    with np.errstate(all="ignore"):
        if state is not None:
            state.set_x(x_cast)
            scores, _, _ = state.kkt_scores()       # recomputes the state at x_cast
            optimality = float(scores.max()) if scores.size else 0.0
            objective = float(state.get_objective())
            if gap is not None:
                gap = problem.duality_gap(x_cast, state)
        else:
            objective = float(problem.objective(x_cast))
            grad = np.asarray(problem.gradient(x_cast), dtype=np.float64).reshape(-1)
            if problem.penalty is None:
                optimality = float(np.max(np.abs(grad), initial=0.0))
            else:
                optimality = problem.penalty.optimality(x_cast, grad)
            if gap is not None:
                # P(x) - D(alpha) at the same dual point: only P moves
                gap = max(float(gap) + objective - float(cert.objective), 0.0)
    status, message, converged = cert.status, cert.message, cert.converged
    if converged:
        if gap_converged and gap is not None and gap_tol is not None:
            held, measure, target, what = gap <= gap_tol, gap, gap_tol, "duality gap"
        elif gap_test and gap is not None:
            # the drivers whose test is the gap (formulation="dual")
            target = max(tol, float(cert.duality_gap))
            held, measure, what = gap <= target, gap, "duality gap"
        else:
            target = max(tol, float(cert.optimality))
            held, measure, what = optimality <= target, optimality, "optimality measure"
        if not np.isfinite(measure) or not held:
            status, converged = "stalled", False
            message = (f"Stopped: the float64 iterate met the test, but x rounded to "
                       f"{x_out.dtype} has {what} {measure:.3e} > {target:.3e}: no "
                       f"{x_out.dtype} array near the solution may meet it.  Solve with "
                       f"float64 data, or use a tolerance of at least {measure:.1e}.")
            if warn:
                warnings.warn(message, ConvergenceWarning, stacklevel=4)
    if gap_test and gap is not None and state is None:
        optimality = gap
    return Certificate(objective, optimality, gap, status, message, converged, x_out)
