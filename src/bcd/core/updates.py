"""Block updates: the table ``UPDATES`` of their specs and their builders.

Each builder takes a :class:`bcd.core.assembly.Context` and returns a
compiled update.  Forest-structured block strategies solve their blocks
themselves (their spec's ``solve``): on a forest of a quadratic the block
Hessian is Q_bb, so the exact, matrix and Newton updates listed for them
are all that linear-time message-passing solve.
"""
import numpy as np

from ._update import (CyExactUpdate, CyGradientUpdate, CyHomotopyUpdate, CyLineSearchUpdate,
                      CyMatrixUpdate, CyNewtonUpdate, CyProxNewtonUpdate, CyQuasiNewtonUpdate,
                      CyTwoMetricUpdate)
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


#: the quasi-Newton update scales its initial model by the coordinates'
#: Lipschitz constants where these spread over more than this factor
LBFGS_SCALE_SPREAD = 100.0


#: ``newton_after="auto"``: quasi-Newton steps before Newton's, this many
#: times the cost of a Newton step (its Hessian) in quasi-Newton steps,
#: taken as 1 + |b| / 32 (measured on dense data, 100-500 coordinates)...
NEWTON_AFTER_STEPS = 6
#: ...and at most this many (so that an iteration limit of 100, scikit-
#: learn's, leaves room for the Newton steps)
NEWTON_AFTER_MAX = 50


def newton_budget(block_size):
    """The quasi-Newton steps of ``newton_after="auto"`` for blocks of
    ``block_size`` coordinates."""
    return min(int(NEWTON_AFTER_STEPS * (1 + block_size / 32)), NEWTON_AFTER_MAX)


def _lbfgs(ctx):
    # a diagonal initial model where the coordinates' scales differ widely
    # (columns over orders of magnitude); with near-equal scales the static
    # bounds L_i, which ignore how the curvature changes, cost iterations
    scaled = False
    caps = ctx.problem.capabilities
    if "lipschitz" in caps:
        L = np.asarray(ctx.problem.lipschitz, dtype=np.float64)
        L = L[L > 0]
        scaled = L.size > 0 and float(L.max()) > LBFGS_SCALE_SPREAD * float(L.min())
    after = ctx.options["newton_after"]
    if isinstance(after, int) and "block_hessian" not in caps:
        raise ValueError(f"newton_after needs a problem with block Hessians (Newton steps); "
                         f"{type(ctx.problem).__name__} has none: give newton_after=None "
                         f"or 'auto'.")
    if isinstance(after, str):
        size = ctx.options.get("block_size") or ctx.problem.n_coordinates
        after = newton_budget(min(size, ctx.problem.n_coordinates)) \
            if "block_hessian" in caps else 0
    return CyQuasiNewtonUpdate(scaled, newton_after=after or 0)


def _check_newton_after(value):
    if value is None or (isinstance(value, str) and value == "auto"):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 1:
        raise ValueError(f"newton_after must be None, 'auto' or an integer >= 1, got "
                         f"{value!r}.")
    return int(value)


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
    "lbfgs": Spec("update", "lbfgs", _lbfgs, needs(penalty=None), _PLAIN,
                  options=(Option("newton_after", None,
                                  "quasi-Newton steps on a block before Newton steps (None: "
                                  "never; 'auto': a budget of a few Newton steps' cost)",
                                  check=_check_newton_after, kind='int, "auto" or None',
                                  text="""With update "lbfgs": after this many steps
                  on one block, block Newton steps instead (problems with a block
                  Hessian).  ``"auto"``: ``6 (1 + |b| / 32)`` steps, about the cost of
                  six Newton steps, and at most 50, which bounds the time lost on an
                  ill-conditioned problem; None (default): never."""),),
                  doc="-B_b^-1 grad_b f with the limited-memory BFGS model B_b of the block "
                      "Hessian and an Armijo search"),
    "exact": Spec("update", "exact", _exact, needs(["quadratic", "hessian_bound"], penalty=None),
                  _ALL, block_matrix=True, doc="the block minimizer of a quadratic"),
    "two_metric": Spec("update", "two_metric", _two_metric,
                       needs(["block_hessian"], penalty=["orthant"], smooth=False), _PLAIN,
                       doc="two-metric projection"),
    "homotopy": Spec("update", "homotopy", _homotopy,
                     needs(["quadratic", "block_hessian"], penalty=["path"], smooth=False),
                     _PLAIN, doc="the exact block minimizer along a piecewise-linear path"),
})
