"""Selection rules: the table ``RULES`` of their specs and their builders.

Each builder takes a :class:`bcd.core.assembly.Context` and returns a
compiled selector.  Adding a rule means writing its selector (a
``CySelector`` subclass in ``_select.pyx``), a builder here and one
:class:`~bcd.core.specs.Spec` entry in ``RULES``.
"""
import dataclasses

import numpy as np

from ._forest import CyTreeSelector
from ._select import (CyCyclicSelector, CyGreedySelector, CyLipschitzSelector,
                      CyMaxImprovementSelector, CyQuadraticGreedySelector, CyRandomSelector,
                      CySparseQuadraticSelector)
from .specs import Option, Spec, SpecTable, integer_at_least, needs

#: rounds of iterative hard thresholding of the variable-block GSQ rule
GSQ_ITERATIONS = 10


def _cyclic(ctx):
    u = ctx.units
    # fixed blocks are cycled in order; variable blocks are chunks of a fresh
    # random permutation every pass (Table 1 of the paper)
    return CyCyclicSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed,
                            ctx.blocks == "variable")


def _random(ctx):
    if ctx.blocks == "tree":
        return _tree(ctx, np.zeros(ctx.n), randomize=True)
    u = ctx.units
    return CyRandomSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed)


def _lipschitz(ctx):
    u = ctx.units
    return CyLipschitzSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed)


def _greedy(ctx, coord_weight, unit_scale):
    if ctx.blocks == "tree":
        return _tree(ctx, coord_weight)
    u = ctx.units
    return CyGreedySelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed, u.unit_of,
                            np.ascontiguousarray(coord_weight, dtype=np.float64),
                            np.ascontiguousarray(unit_scale, dtype=np.float64))


def _tree(ctx, weight, randomize=False):
    # forests grown every iteration (Section 5.6): nodes are tried in
    # decreasing order of g_i^2 w_i, or randomly
    return CyTreeSelector(ctx.graph, ctx.units.coords,
                          np.ascontiguousarray(weight, dtype=np.float64), randomize, ctx.seed)


def safe_inverse(v):
    """1 / v where v > 0, else 0."""
    out = np.zeros_like(v, dtype=np.float64)
    pos = v > 0
    out[pos] = 1.0 / v[pos]
    return out


def _diagonal(ctx, kind):
    """The D_i of the GSD rule (Section 4.1)."""
    L = np.asarray(ctx.state.lipschitz)
    if kind == "lipschitz":
        return L
    if kind == "lipschitz_tau":
        return L * max(1, ctx.units.max_block)
    return ctx.problem.sirt_diagonal()


def _gs(ctx):
    return _greedy(ctx, np.ones(ctx.n), np.ones(ctx.units.n_units))


def _gsl(ctx):
    if ctx.blocks == "fixed":
        # ||g_b||^2 / L_b (eq. 12)
        return _greedy(ctx, np.ones(ctx.n), safe_inverse(ctx.units.lipschitz))
    # other blocks: the tractable GSD rule with SIRT diagonals (eq. 23)
    return _greedy(ctx, safe_inverse(_diagonal(ctx, "sirt")), np.ones(ctx.units.n_units))


def _gsd(ctx):
    # sum_{i in b} g_i^2 / D_i (eqs. 17 and 22)
    return _greedy(ctx, safe_inverse(_diagonal(ctx, ctx.options["gsd_diagonal"])),
                   np.ones(ctx.units.n_units))


def _gsq(ctx):
    u = ctx.units
    if ctx.blocks == "fixed":
        # exact: g_b.T H_b^+ g_b with H_b^+ stored per block (eq. 16)
        inverses, ptr = [], [0]
        for blk in u.blocks():
            Hi = np.linalg.pinv(ctx.state.get_block_matrix(blk), hermitian=True)
            inverses.append(Hi.ravel())
            ptr.append(ptr[-1] + Hi.size)
        return CyQuadraticGreedySelector(u.ptr, u.coords, u.lipschitz, u.per_iteration,
                                         ctx.seed, u.unit_of, np.concatenate(inverses),
                                         np.asarray(ptr, dtype=np.int64))
    return CySparseQuadraticSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed,
                                     u.unit_of, ctx.options["gsq_method"], GSQ_ITERATIONS,
                                     np.asarray(ctx.state.lipschitz))


def _max_improvement(ctx):
    # Bo and Sminchisescu's greedy approximation of the MI rule (GBCD)
    u = ctx.units
    return CyMaxImprovementSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed,
                                    ctx.options["mi_candidates"], ctx.options["mi_refresh"] or 0)


_NOT_TREE = frozenset({"fixed", "variable", "forest_partition", "coloring"})
_ALL = _NOT_TREE | {"tree"}

_GSD_DIAGONAL = Option(
    "gsd_diagonal", "lipschitz",
    "D_i of the GSD rule: L_i, L_i * tau, or the SIRT row sums of the curvature bound",
    choices={"lipschitz": needs(["lipschitz"]), "lipschitz_tau": needs(["lipschitz"]),
             "sirt": needs(["sirt_diagonal"])},
    text="""``D_i`` of the GSD rule: ``L_i``; ``L_i * tau`` (the variant with a
    proven progress bound; it selects the same blocks when all have size
    tau); or the row sums ``sum_j |M_ij|`` of the Hessian bound M (SIRT).""")

#: name -> Spec.  ``blocks``: the strategies a rule works with; ``gradient``:
#: the rule reads the full gradient, which is then kept up to date.
RULES = SpecTable({
    "cyclic": Spec("rule", "cyclic", _cyclic, needs(), _NOT_TREE,
                   options=(Option("extrapolation", 0,
                                   "Anderson extrapolation of the last K passes, K "
                                   "(0: none)",
                                   check=integer_at_least("extrapolation", 0), auto=True,
                                   text="""With rule "cyclic": Anderson extrapolation of
                   the last K passes over the blocks (of the working set), taken
                   when it lowers the objective; 0 turns it off.  ``"auto"``: as
                   the automatic configuration chooses, else 0."""),),
                   doc="blocks in turn (variable blocks: a fresh permutation every pass)"),
    "random": Spec("rule", "random", _random, needs(), _ALL,
                   doc="uniformly random blocks (trees: grown in random order)"),
    "lipschitz": Spec("rule", "lipschitz", _lipschitz, needs(["lipschitz"]), _NOT_TREE,
                      doc="blocks sampled with probability proportional to L_b"),
    "gs": Spec("rule", "gs", _gs, needs(), _ALL, gradient=True,
               doc="Gauss-Southwell: the largest gradient (with a penalty, GS-q)"),
    "gsl": Spec("rule", "gsl", _gsl,
                needs(["lipschitz"], with_blocks={b: ["sirt_diagonal"] for b in _NOT_TREE - {"fixed"}}), _NOT_TREE,
                gradient=True, doc="Gauss-Southwell-Lipschitz: ||g_b||^2 / L_b"),
    "gsd": Spec("rule", "gsd", _gsd, needs(), _ALL, gradient=True, options=(_GSD_DIAGONAL,),
                doc="Gauss-Southwell-diagonal: sum g_i^2 / D_i"),
    "gsq": Spec("rule", "gsq", _gsq,
                needs(penalty=None, with_blocks={"fixed": ["hessian_bound"],
                                                 "variable": ["bound_products"]}),
                frozenset({"fixed", "variable"}), gradient=True,
                options=(Option("gsq_method", "iht",
                                "approximation of the variable-block GSQ rule",
                                choices={"iht": needs(), "omp": needs()},
                                blocks=frozenset({"variable"}),
                                text="""Approximation of the GSQ rule for variable
                blocks: 10 iterations of iterative hard thresholding, or
                orthogonal matching pursuit."""),),
                doc="Gauss-Southwell-quadratic: g_b^T H_b^-1 g_b"),
    "gbcd": Spec("rule", "gbcd", _max_improvement, needs(["hessian_entries"], penalty=None),
                 frozenset({"variable"}), gradient=True,
                 options=(Option("mi_candidates", 30, "random candidates per added coordinate",
                                 check=integer_at_least("mi_candidates", 1),
                                 text="""Random candidates examined for each coordinate
                 added to a block by rule "gbcd" (kappa; at least the number of
                 coordinates makes every choice exact).  Bo and Sminchisescu used
                 60; 30 takes about 12% more blocks to reach tol 1e-4 and half the
                 work per block, and was faster on every system measured (Gaussian
                 processes of 10,000-100,000 points on 2 threads)."""),
                          Option("mi_refresh", None,
                                 "candidates drawn afresh per added coordinate, the "
                                 "best-scoring others kept (None: all, Bo and "
                                 "Sminchisescu's rule)",
                                 check=integer_at_least("mi_refresh", 1, none=True),
                                 text="""For rule "gbcd": how many of the
                 ``mi_candidates`` are drawn afresh for each added coordinate; the
                 best-scoring others stay candidates, and their rows of the Hessian
                 need only the entries of the coordinates added since.  Default:
                 all of them, Bo and Sminchisescu's rule."""),),
                 default_block_size=lambda n: min(500, n), default_tol=1e-4,
                 doc="greedy maximum improvement (Bo and Sminchisescu)"),
})
RULES["mi"] = dataclasses.replace(RULES["gbcd"], name="mi", alias_of="gbcd")
