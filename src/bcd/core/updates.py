"""Block updates: the table ``UPDATES`` of their specs and their builders.

Each builder takes a :class:`bcd.core.assembly.Context` and returns a
compiled update.  Forest-structured block strategies solve their blocks
themselves (their spec's ``solve``): on a forest of a quadratic the block
Hessian is Q_bb, so the exact, matrix and Newton updates listed for them
are all that linear-time message-passing solve.
"""
from ._update import (CyExactUpdate, CyGradientUpdate, CyHomotopyUpdate, CyLineSearchUpdate,
                      CyMatrixUpdate, CyNewtonUpdate, CyProxNewtonUpdate, CyTwoMetricUpdate)
from .specs import Option, Spec, SpecTable, needs


def _gradient(ctx):
    return CyGradientUpdate(ctx.options["lipschitz"] == "estimate", ctx.units.n_units,
                            ctx.problem.n_coordinates)


def _linesearch(ctx):
    return CyLineSearchUpdate("lipschitz" in ctx.problem.capabilities)


def _matrix(ctx):
    return CyMatrixUpdate()


def _newton(ctx):
    # with a penalty: proximal Newton (eq. 38), solved exactly on the block
    return CyProxNewtonUpdate() if ctx.problem.penalty is not None else CyNewtonUpdate()


def _exact(ctx):
    return CyExactUpdate()


def _two_metric(ctx):
    return CyTwoMetricUpdate()


def _homotopy(ctx):
    return CyHomotopyUpdate()


def _default_lipschitz(capabilities):
    # the bound where the problem has one, else the running estimate
    return "bound" if "lipschitz" in capabilities else "estimate"


_PLAIN = frozenset({"fixed", "variable"})
_ALL = frozenset({"fixed", "variable", "tree", "forest_partition", "coloring"})

#: name -> Spec
UPDATES = SpecTable({
    "gradient": Spec(
        "update", "gradient", _gradient, needs(penalty=["prox"]), _PLAIN,
        options=(Option("lipschitz", _default_lipschitz,
                        "step size: the curvature bound's L_b, or a running estimate",
                        choices={"bound": needs(["lipschitz"], penalty=["prox"]),
                                 "estimate": needs(penalty=None)},
                        text="""Step size of the gradient update.  ``"bound"``:
        ``L_b`` is the largest eigenvalue of the block's curvature bound.
        ``"estimate"``: a running estimate that starts at 1 and doubles until the
        step decreases f by ``||grad_b f||^2 / (2 L_b)`` (kept per block for fixed
        blocks, per coordinate for variable blocks).  Default ``"bound"``, and
        ``"estimate"`` for problems without Lipschitz constants (such as
        :class:`bcd.Poisson`)."""),),
        # L_b of a variable block is computed from its curvature bound
        block_matrix=lambda blocks, options: (blocks == "variable"
                                              and options["lipschitz"] == "bound"),
        doc="x_b -= grad_b f / L_b (with a penalty: the proximal gradient step)"),
    "linesearch": Spec("update", "linesearch", _linesearch, needs(penalty=None), _PLAIN,
                       doc="-grad_b f with an Armijo backtracking search"),
    "matrix": Spec("update", "matrix", _matrix, needs(["hessian_bound"], penalty=None), _ALL,
                   block_matrix=True,
                   doc="x_b -= H_b^-1 grad_b f with the curvature bound H_b"),
    "newton": Spec("update", "newton", _newton, needs(["block_hessian"], penalty=["slope"]),
                   _ALL, block_matrix=True,
                   doc="block Newton with a line search (with a penalty: proximal Newton)"),
    "exact": Spec("update", "exact", _exact, needs(["quadratic", "hessian_bound"], penalty=None),
                  _ALL, block_matrix=True, doc="the block minimizer of a quadratic"),
    "two_metric": Spec("update", "two_metric", _two_metric,
                       needs(["block_hessian"], penalty=["orthant"], smooth=False), _PLAIN,
                       doc="two-metric projection"),
    "homotopy": Spec("update", "homotopy", _homotopy,
                     needs(["quadratic", "block_hessian"], penalty=["path"], smooth=False),
                     _PLAIN, doc="the exact block minimizer along a piecewise-linear path"),
})
