"""Sparse quadratics on graphs: the message-passing solve and the
forest-structured block strategies of Section 5 (Figure 6 of the paper).

* ``TreeSolve``: ``bcd.tree_solve`` on a random tree (each node joined to
  a uniformly chosen earlier node; worst case for memory locality), with
  its peak memory.
* ``ForestIterations``: iterations each strategy needs on datasets D
  (50 x 50 lattice) and E (two moons, 5-NN graph) to bring the residual
  ``||Qx - c||_inf`` below ``1e-8 ||c||_inf`` (lower is better), with
  exact updates; ``General`` is GS with variable blocks of
  ``floor(n^(1/3))`` coordinates and a dense exact solve.
* ``LatticeLabelPropagation``: wall time of label propagation on a 300 x 300
  lattice (4% labelled, weights 1e4) to the same relative residual.

Rows g (tree solve against ``spsolve``) and h (label propagation on a
1000 x 1000 lattice against ``spsolve``, CG and pyamg) of
``asv_benches/compare.py`` are ``compare_tree_solve`` and
``compare_label_propagation``; ``TreeSolveVsSpsolve`` and
``LabelPropagationVsPeers`` report their ratios to asv, row h on a
500 x 500 lattice (the full size takes about 40 s per run).
"""
import functools

import numpy as np
import scipy.sparse as sp

import bcd

from .common import (NO_CHECKS, RowTrack, fmt_time, format_options, median, quiet, ratio_row,
                     require, timed)

STRATEGIES = {
    "greedy_tree": dict(rule="gs", blocks="tree"),
    "random_tree": dict(rule="random", blocks="tree"),
    "red_black": dict(rule="cyclic", blocks="coloring", vertex_order="natural"),
    "tree_partition_natural": dict(rule="cyclic", blocks="forest_partition",
                                   vertex_order="natural"),
    "tree_partition_random": dict(rule="cyclic", blocks="forest_partition", vertex_order="random"),
    "tree_partition_lipschitz": dict(rule="cyclic", blocks="forest_partition",
                                     vertex_order="lipschitz"),
    "general": dict(rule="gs", blocks="variable"),
}
RELATIVE_TOL = 1e-8


def random_tree_system(n, seed=0):
    """A random tree's weighted Laplacian plus the identity, and a right-hand side."""
    rng = np.random.default_rng(seed)
    parent = (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)
    W = sp.coo_matrix((rng.uniform(0.5, 2.0, n - 1), (np.arange(1, n), parent)),
                      shape=(n, n)).tocsr()
    W = W + W.T
    Q = (sp.diags(np.asarray(W.sum(axis=1)).ravel() + 1.0) - W).tocsc()
    return Q, rng.standard_normal(n)


@functools.lru_cache(maxsize=None)
def graph_problem(name):
    """Label propagation on dataset D or E of the paper."""
    W, labels = bcd.datasets.make_paper_dataset(name, random_state=1)
    return bcd.LabelPropagation(W, labels)


@functools.lru_cache(maxsize=None)
def lattice_problem(side, fraction=0.04, weight=1e4, seed=0):
    rng = np.random.RandomState(seed)
    n = side * side
    labels = np.full(n, np.nan)
    known = rng.choice(n, int(fraction * n), replace=False)
    labels[known] = rng.randn(known.size) * 10.0
    return bcd.LabelPropagation(bcd.datasets.make_lattice_graph(side, side, weight), labels)


def strategy_options(strategy, problem):
    options = dict(STRATEGIES[strategy], update="exact")
    if strategy == "general":
        options["block_size"] = int(np.floor(problem.n_coordinates ** (1.0 / 3.0) + 1e-9))
    return options


class TreeSolve:
    params = [[10**4, 10**5, 10**6]]
    param_names = ["n"]

    def setup(self, n):
        self.Q, self.c = random_tree_system(n)

    def time_tree_solve(self, n):
        bcd.tree_solve(self.Q, self.c)

    def peakmem_tree_solve(self, n):
        bcd.tree_solve(self.Q, self.c)


class ForestIterations:
    params = [["D", "E"], list(STRATEGIES)]
    param_names = ["dataset", "strategy"]
    unit = "iterations"

    def setup(self, dataset, strategy):
        quiet()
        self.problem = graph_problem(dataset)
        self.options = strategy_options(strategy, self.problem)
        self.tol = RELATIVE_TOL * float(np.max(np.abs(self.problem.c)))

    def track_iterations_to_1e_8(self, dataset, strategy):
        result = bcd.solve(self.problem, max_iter=20000, tol=self.tol, check_every=1,
                           random_state=0, **self.options)
        return result.n_iter if result.converged else float("nan")


class LatticeLabelPropagation:
    params = [["tree_partition_natural", "greedy_tree", "red_black"]]
    param_names = ["strategy"]
    timeout = 300

    def setup(self, strategy):
        quiet()
        self.problem = lattice_problem(300)
        self.options = strategy_options(strategy, self.problem)
        self.tol = RELATIVE_TOL * float(np.max(np.abs(self.problem.c)))

    def time_to_1e_8(self, strategy):
        bcd.solve(self.problem, max_iter=100000, tol=self.tol, random_state=0, **self.options)


# --------------------------------------------------------------------------- g. tree solve

def compare_tree_solve(repeats, n=10**6, target=20.0):
    """Row g: ``bcd.tree_solve`` on a random tree of 10^6 nodes (node i > 0
    joined to a uniformly chosen earlier node: a numbering with no memory
    locality), Q = weighted Laplacian + I, against
    ``scipy.sparse.linalg.spsolve`` on the same system; input validation
    included.  Target spsolve / bcd >= 20.
    """
    from scipy.sparse.linalg import spsolve

    Q, c = random_tree_system(n)
    bcd.tree_solve(Q, c)                            # warm-up
    ours, theirs = [], []
    for _ in range(repeats):
        t, x = timed(bcd.tree_solve, Q, c)
        ours.append(t)
    for _ in range(min(repeats, 3)):                # about 1.5 s each
        t, x_ref = timed(spsolve, Q, c)
        theirs.append(t)
    err = np.linalg.norm(x - x_ref) / np.linalg.norm(x_ref)
    assert err < 1e-10, f"tree_solve differs from spsolve: relative error {err:.2e}"
    mine, ref = median(ours), median(theirs)
    return ratio_row(f"g. tree solve, random tree of {n:.0e} nodes: spsolve / bcd", mine, ref,
                     ref / mine, f">= {target:g}x", digits=1,
                     note=f"relative difference of the solutions {err:.1e}; validation included")


# --------------------------------------------------------------------------- h. label propagation

LP_SIDE = 1000
LP_RTOL = 1e-8


#: the explicit configuration of row h: the forest partition in natural
#: order, cycled, exact message-passing updates
LP_EXPLICIT = dict(rule="cyclic", blocks="forest_partition", vertex_order="natural",
                   update="exact")


def _bcd_label_propagation(problem, options, every=20):
    """``bcd.solve`` with ``options`` (none: the default configuration)
    until ||Qx - c|| <= 1e-8 ||c||, tested by a callback every ``every``
    iterations (its cost is part of the time)."""
    Q, c = problem.Q, problem.c
    c_norm = np.linalg.norm(c)
    stopped = []

    def residual_test(info):
        if np.linalg.norm(Q @ info.x - c) <= LP_RTOL * c_norm:
            stopped.append(info.iteration)
            return True
        return False

    elapsed, result = timed(bcd.solve, problem, tol=0.0, check_every=NO_CHECKS,
                            max_iter=100000, callback=residual_test, callback_every=every,
                            **options)
    assert stopped, f"the solve with {options or 'the defaults'} did not reach the residual"
    return elapsed, result


def _label_propagation_peers(Q, c):
    """(name, solve(), target of bcd / it) of the solvers row h compares with,
    pyamg's only if it is installed."""
    from scipy.sparse.linalg import cg, spsolve

    peers = [("CG", lambda: cg(Q, c, rtol=LP_RTOL, maxiter=100000)[0], 2.0),
             ("spsolve", lambda: spsolve(Q.tocsc(), c), 1.0)]
    try:
        import pyamg
    except ImportError:
        return peers
    # smoothed aggregation, set-up included, default V-cycle iteration
    peers.insert(1, ("pyamg SA", lambda: pyamg.smoothed_aggregation_solver(Q).solve(
        c, tol=LP_RTOL), 1.0))
    return peers


def compare_label_propagation(repeats, side=LP_SIDE, peers=None):
    """Row h: label propagation on a ``side`` x ``side`` lattice (1000 in
    the report; 4% of the nodes labelled, weights 1e4) to ``||Qx - c|| <=
    1e-8 ||c||``: ``bcd.solve`` with its default configuration (and, in the
    note, the explicit ``LP_EXPLICIT``: the forest partition, natural
    order, cycled, exact message-passing updates, without extrapolation;
    the residual is tested by a callback every 20 iterations and its cost
    is included) against ``spsolve``, CG
    (``rtol=1e-8``) and pyamg's smoothed aggregation (set-up included).
    Targets: faster than spsolve and pyamg, within 2x of CG.  One row per
    peer, or only those named in ``peers``.
    """
    problem = lattice_problem(side)
    Q, c = sp.csr_matrix(problem.Q), problem.c
    c_norm = np.linalg.norm(c)

    def relres(x):
        return np.linalg.norm(Q @ x - c) / c_norm

    mine, note = {}, f"{side}^2 lattice, 4% labelled, weights 1e4, to ||Qx - c|| <= 1e-8 ||c||"
    for kind, options in (("default", {}), ("explicit", LP_EXPLICIT)):
        ours = []
        for _ in range(max(1, min(repeats, 3))):
            t, result = _bcd_label_propagation(problem, options)
            ours.append(t)
        mine[kind] = median(ours)
        chosen = bcd.core.auto.configuration(result.options)
        note += (f"; bcd {kind} ({format_options(chosen)}): {fmt_time(mine[kind])}, "
                 f"{result.n_iter} iterations, residual {relres(result.x):.1e}")
    references = _label_propagation_peers(Q, c)
    if all(name != "pyamg SA" for name, _, _ in references):
        note += "; pyamg not installed"
    rows = []
    for name, run, target in references:
        if peers is not None and name not in peers:
            continue
        times = []
        for _ in range(1 if name == "spsolve" else max(1, min(repeats, 3))):
            t, x = timed(run)
            times.append(t)
        ref = median(times)
        rows.append(ratio_row(f"h. label propagation: bcd default / {name}", mine["default"],
                              ref, mine["default"] / ref, f"<= {target:g}x",
                              note=(note if not rows else "") + f"; {name} residual "
                              f"{relres(x):.1e}; bcd explicit / {name}: "
                              f"{mine['explicit'] / ref:.2f}x"))
    return rows


#: the rows of compare.py in this module: (progress title, run(repeats) -> Row(s))
STEPS = [
    ("g. tree solve vs spsolve, random tree of 10^6 nodes", compare_tree_solve),
    ("h. label propagation on a 1000 x 1000 lattice vs spsolve, CG and pyamg",
     compare_label_propagation),
]


# --------------------------------------------------------------------------- rows as asv tracks

class TreeSolveVsSpsolve(RowTrack):
    """Row g: spsolve / bcd time on a random tree of 10^6 nodes (target >= 20)."""

    def track_spsolve_ratio(self):
        return compare_tree_solve(self.repeats).figure


class LabelPropagationVsPeers(RowTrack):
    """Row h at a reduced size, a 500 x 500 lattice: bcd / peer time to
    ||Qx - c|| <= 1e-8 ||c|| (targets: <= 2 for CG, <= 1 for the others)."""

    params = [["CG", "pyamg SA", "spsolve"]]
    param_names = ["peer"]
    side = 500

    def setup(self, peer):
        super().setup(peer)
        if peer == "pyamg SA":
            require("pyamg")

    def track_time_ratio(self, peer):
        (row,) = compare_label_propagation(self.repeats, side=self.side, peers=(peer,))
        return row.figure
