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
    """What :class:`bcd.Result` reports about its ``x``."""

    __slots__ = ("objective", "optimality", "duality_gap", "status", "message", "converged")

    def __init__(self, objective, optimality, duality_gap, status, message, converged):
        self.objective = objective
        self.optimality = optimality
        self.duality_gap = duality_gap
        self.status = status
        self.message = message
        self.converged = converged


def certify_returned(problem, x, x_out, cert, *, tol, state=None, gap_tol=None,
                     gap_converged=False, warn=True):
    """The :class:`Certificate` of the returned ``x_out`` (the float64
    iterate ``x`` cast to the problem's dtype), given ``cert``, that of ``x``.

    Unchanged when the cast is exact (float64 problems).  Otherwise the
    objective, the optimality measure and the duality gap are recomputed at
    ``x_out`` (on the compiled ``state`` when given, which is then left at
    ``x_out``; else with the problem's NumPy oracles), and a solve that
    converged in float64 stays converged only if ``x_out`` meets the same
    test (``tol``, or ``gap_tol`` when the gap stopped it; a solve stopped
    at the rounding floor of its measure keeps that floor as its target).
    If it does not, the status becomes ``"stalled"``, the message says
    why, and a ``ConvergenceWarning`` is issued when ``warn``.
    """
    if cert.status == "diverged" or x_out.dtype == np.float64:
        return cert
    x_cast = np.asarray(x_out, dtype=np.float64)
    if np.array_equal(x_cast, x):
        return cert
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
        elif cert.optimality == cert.duality_gap and gap is not None:
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
    if cert.optimality == cert.duality_gap and gap is not None and state is None:
        optimality = gap
    return Certificate(objective, optimality, gap, status, message, converged)
