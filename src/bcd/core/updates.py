"""Block updates, by name.

``UPDATES`` maps names to factories ``f(problem, kernel, units, lipschitz)``
returning a compiled update; a factory raises ``ValueError`` when the problem
lacks what the update needs.
"""
from ..penalties import L1, Box
from ._forest import ForestUpdate
from ._update import (ExactUpdate, GradientUpdate, LineSearchUpdate, MatrixUpdate,
                      HomotopyUpdate, NewtonUpdate, ProxNewtonUpdate, TwoMetricUpdate)

LIPSCHITZ = ("bound", "estimate")


def _gradient(problem, kernel, units, lipschitz):
    return GradientUpdate(lipschitz == "estimate", units.n_units, kernel.n)


def _linesearch(problem, kernel, units, lipschitz):
    return LineSearchUpdate()


def _needs_bound(name, problem, kernel, units):
    if units.n_units and kernel.get_block_matrix(units.blocks()[0][:1]) is None:
        raise ValueError(f"update {name!r} needs block curvature bounds H_b, which "
                         f"{type(problem).__name__} does not provide.")


def _matrix(problem, kernel, units, lipschitz):
    _needs_bound("matrix", problem, kernel, units)
    return MatrixUpdate()


def _newton(problem, kernel, units, lipschitz):
    # with a penalty: proximal Newton (eq. 38), solved exactly on the block
    return ProxNewtonUpdate() if problem.penalty is not None else NewtonUpdate()


def _two_metric(problem, kernel, units, lipschitz):
    if problem.penalty is None:
        raise ValueError("update 'two_metric' (two-metric projection) is for problems with a "
                         "penalty; without one use 'newton'.")
    return TwoMetricUpdate()


def _exact(problem, kernel, units, lipschitz):
    if not kernel.is_quadratic:
        raise ValueError(f"update 'exact' needs a quadratic objective; "
                         f"{type(problem).__name__} is not quadratic. Use 'newton' or 'matrix'.")
    _needs_bound("exact", problem, kernel, units)
    return ExactUpdate()


def _homotopy(problem, kernel, units, lipschitz):
    if not isinstance(problem.penalty, (L1, Box)) or not kernel.is_quadratic:
        raise ValueError("update 'homotopy' computes the exact block minimizer of a quadratic "
                         "f with an L1 penalty or box constraints: it needs LeastSquares or "
                         "Quadratic with penalty=bcd.L1(...), bcd.NonNegative() or "
                         "bcd.Box(...); otherwise use 'two_metric' or 'newton'.")
    return HomotopyUpdate()


#: name -> factory
UPDATES = {
    "gradient": _gradient,
    "linesearch": _linesearch,
    "matrix": _matrix,
    "newton": _newton,
    "exact": _exact,
    "two_metric": _two_metric,
    "homotopy": _homotopy,
}

#: updates available with a penalty: proximal gradient, proximal Newton and
#: two-metric projection
PENALIZED_UPDATES = ("gradient", "newton", "two_metric", "homotopy")


#: updates on forest-structured blocks: for the quadratics that expose their
#: graph the block Hessian is Q_bb, so all three are the message-passing solve
FOREST_UPDATES = ("exact", "matrix", "newton")


def forest_update(graph, units):
    return ForestUpdate(graph, units.ptr)
