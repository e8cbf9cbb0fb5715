"""Selection rules, by name.

Each rule is a factory ``f(ctx)`` returning a compiled selector, where
``ctx`` (a :class:`RuleContext`) carries the problem, its kernel, the units
of the block strategy and the rule options.  ``RULES`` maps names to
``(factory, needs the full gradient)``; ``TREE_RULES`` does the same for
forests grown every iteration (``blocks="tree"``).
"""
import numpy as np

from ._forest import TreeSelector

from ._select import (CyclicSelector, GreedySelector, LipschitzSelector,
                      MaxImprovementSelector, QuadraticGreedySelector, RandomSelector,
                      SparseQuadraticSelector)

GSD_DIAGONALS = ("lipschitz", "lipschitz_tau", "sirt")
GSQ_METHODS = ("iht", "omp")


class RuleContext:
    """What a rule factory may use."""

    def __init__(self, problem, kernel, units, blocks, block_size, seed, gsd_diagonal="lipschitz",
                 gsq_method="iht", gsq_iterations=10, graph=None, mi_candidates=60):
        self.problem = problem
        self.kernel = kernel
        self.units = units
        self.blocks = blocks
        self.block_size = block_size
        self.seed = seed
        self.gsd_diagonal = gsd_diagonal
        self.gsq_method = gsq_method
        self.gsq_iterations = gsq_iterations
        self.graph = graph
        self.mi_candidates = mi_candidates

    @property
    def n(self):
        return self.units.unit_of.shape[0]


def _cyclic(ctx):
    u = ctx.units
    # fixed blocks are cycled in order; variable blocks are chunks of a fresh
    # random permutation every pass (Table 1 of the paper)
    return CyclicSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed,
                          ctx.blocks == "variable")


def _random(ctx):
    u = ctx.units
    return RandomSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed)


def _lipschitz(ctx):
    u = ctx.units
    return LipschitzSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed)


def _greedy(ctx, coord_weight, unit_scale):
    u = ctx.units
    return GreedySelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed, u.unit_of,
                          np.ascontiguousarray(coord_weight, dtype=np.float64),
                          np.ascontiguousarray(unit_scale, dtype=np.float64))


def _safe_inverse(v):
    out = np.zeros_like(v, dtype=np.float64)
    pos = v > 0
    out[pos] = 1.0 / v[pos]
    return out


def _diagonal(ctx, kind):
    """The D_i of the GSD rule (Section 4.1)."""
    L = np.asarray(ctx.kernel.lipschitz)
    if kind == "lipschitz":
        return L
    if kind == "lipschitz_tau":
        return L * max(1, ctx.units.max_block)
    return ctx.problem._sirt_diagonal()


def _gs(ctx):
    return _greedy(ctx, np.ones(ctx.n), np.ones(ctx.units.n_units))


def _gsl(ctx):
    if ctx.blocks == "fixed":
        # ||g_b||^2 / L_b (eq. 12)
        return _greedy(ctx, np.ones(ctx.n), _safe_inverse(ctx.units.lipschitz))
    # variable blocks: the tractable GSD rule with SIRT diagonals (eq. 23)
    return _greedy(ctx, _safe_inverse(_diagonal(ctx, "sirt")), np.ones(ctx.units.n_units))


def _gsd(ctx):
    # sum_{i in b} g_i^2 / D_i (eqs. 17 and 22)
    return _greedy(ctx, _safe_inverse(_diagonal(ctx, ctx.gsd_diagonal)),
                   np.ones(ctx.units.n_units))


def _gsq(ctx):
    u = ctx.units
    if ctx.blocks == "fixed":
        # exact: g_b.T H_b^+ g_b with H_b^+ stored per block (eq. 16)
        inverses, ptr = [], [0]
        for blk in u.blocks():
            H = ctx.kernel.get_block_matrix(blk)
            if H is None:
                raise ValueError(f"rule 'gsq' needs block curvature bounds H_b, which "
                                 f"{type(ctx.problem).__name__} does not provide.")
            Hi = np.linalg.pinv(H, hermitian=True)
            inverses.append(Hi.ravel())
            ptr.append(ptr[-1] + Hi.size)
        return QuadraticGreedySelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed,
                                       u.unit_of, np.concatenate(inverses),
                                       np.asarray(ptr, dtype=np.int64))
    if not ctx.problem._has_hessian_bound:
        raise ValueError(f"rule 'gsq' with variable blocks needs products with a Hessian "
                         f"bound M of the whole problem, which {type(ctx.problem).__name__} "
                         f"does not provide; use fixed blocks or rule 'gsd'.")
    return SparseQuadraticSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed,
                                   u.unit_of, ctx.gsq_method, ctx.gsq_iterations,
                                   np.asarray(ctx.kernel.lipschitz))


def _max_improvement(ctx):
    # Bo and Sminchisescu's greedy approximation of the MI rule (GBCD)
    if ctx.blocks != "variable":
        raise ValueError("rule 'gbcd' ('mi') builds its block one coordinate at a time: use "
                         "blocks='variable'.")
    if ctx.kernel.get_hessian_entries([0], [0]) is None:
        raise ValueError(f"rule 'gbcd' ('mi') needs Hessian entries of a quadratic "
                         f"objective, which {type(ctx.problem).__name__} does not provide; "
                         f"it is available for GaussianProcess, Quadratic and "
                         f"LabelPropagation.")
    u = ctx.units
    return MaxImprovementSelector(u.ptr, u.coords, u.lipschitz, u.per_iteration, ctx.seed,
                                  ctx.mi_candidates)


#: name -> (factory, needs the full gradient)
RULES = {
    "cyclic": (_cyclic, False),
    "random": (_random, False),
    "lipschitz": (_lipschitz, False),
    "gs": (_gs, True),
    "gsl": (_gsl, True),
    "gsd": (_gsd, True),
    "gsq": (_gsq, True),
    "gbcd": (_max_improvement, True),
    "mi": (_max_improvement, True),
}

#: rules that grow their own block and default to large ones
MI_RULES = ("gbcd", "mi")


def _tree(ctx, weight, randomize=False):
    return TreeSelector(ctx.graph, ctx.units.coords,
                        np.ascontiguousarray(weight, dtype=np.float64), randomize, ctx.seed)


def _gs_tree(ctx):
    return _tree(ctx, np.ones(ctx.n))


def _gsd_tree(ctx):
    return _tree(ctx, _safe_inverse(_diagonal(ctx, ctx.gsd_diagonal)))


def _random_tree(ctx):
    return _tree(ctx, np.zeros(ctx.n), randomize=True)


#: forests grown every iteration (Section 5.6): nodes are tried in decreasing
#: order of |grad_i f| ("gs"), of |grad_i f| / sqrt(D_i) ("gsd"), or randomly
TREE_RULES = {
    "gs": (_gs_tree, True),
    "gsd": (_gsd_tree, True),
    "random": (_random_tree, False),
}

#: rules over a fixed partition into forests: all but "gsq", whose exact
#: form would store a dense inverse of every (large) block, and the
#: maximum-improvement rules, which build their own blocks
FOREST_PARTITION_RULES = tuple(r for r in RULES if r not in ("gsq",) + MI_RULES)


def rules_for(blocks):
    """The rule table valid with block strategy ``blocks``."""
    if blocks == "tree":
        return TREE_RULES
    if blocks in ("forest_partition", "coloring"):
        return {r: RULES[r] for r in FOREST_PARTITION_RULES}
    return RULES
